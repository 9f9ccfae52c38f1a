/*
 * parallel.c -- parallel for, reduce and filter on a pool (the primitives BOLSTER runs on its
 * pool, Jendersie et al., §I).
 *
 * One engine serves all three: a loop over chunk indices 0..nchunks-1 handed out by an atomic
 * counter (dynamic self-scheduling, like OpenMP's schedule(dynamic)). The caller spawns one
 * "runner" task per worker into a fresh group, runs the same loop itself, then waits for the
 * group: crew_wait helps with the runners still queued (they find the counter exhausted and
 * return at once), so the primitives work inside tasks and on a busy or 1-thread pool. Memory is
 * O(workers), whatever the range: a chunk is an index, not a task.
 *
 * Small loops stay on the caller: it runs the first chunk before involving anyone, and if the
 * whole loop at that rate would take less than INLINE_NS, it finishes alone, so a loop over ten
 * elements costs what a plain loop does, not a wake-up.
 */
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "pool.h"
#include "submit.h"
#include "wait.h"

#define CHUNKS_PER_THREAD 8     /* automatic grain: this many chunks per participant */
#define INLINE_NS 20000         /* loops estimated shorter than this run on the caller alone: about
                                   what waking a sleeping worker costs (tens of microseconds) */
#define MAX_REDUCE_CHUNKS 65536 /* partial results kept by crew_parallel_reduce */

typedef struct loop {
    size_t begin, end, grain, nchunks;
    /* Next chunk to hand out. Relaxed: the counter only divides work; the chunks' effects are
     * published to the caller by the group wait (task completion release, wait acquire). */
    atomic_size_t next;
    void (*chunk)(struct loop *l, size_t index, size_t begin, size_t end);
    void *ctx; /* the primitive's own state */
} loop;

/* Claim and run one chunk; false when none is left. */
static bool run_one(loop *l) {
    size_t i = crew__fetch_add_relaxed(&l->next, 1);
    if (i >= l->nchunks)
        return false;
    size_t b = l->begin + i * l->grain;
    size_t e = l->end - b > l->grain ? b + l->grain : l->end;
    l->chunk(l, i, b, e);
    return true;
}

static void run_chunks(loop *l) {
    while (run_one(l))
        ;
}

static void runner(void *arg) { run_chunks(arg); }

static size_t auto_grain(crew_pool *p, size_t n) {
    size_t parts = (size_t)(crew_size(p) + 1) * CHUNKS_PER_THREAD;
    size_t g = (n + parts - 1) / parts;
    return g ? g : 1;
}

/* Run l over its chunks with the pool's help; the caller takes part. */
static int run_loop(crew_pool *p, loop *l) {
    size_t n = l->end - l->begin;
    l->nchunks = n / l->grain + (n % l->grain != 0);
    crew__atomic_init(&l->next, 0);
    uint64_t t0 = crew__now_ns();
    run_one(l); /* the first chunk, timed, before anyone else is involved */
    uint64_t first = crew__now_ns() - t0;
    if (l->nchunks <= 1 || first * (l->nchunks - 1) < INLINE_NS) {
        run_chunks(l); /* too little work to be worth a wake-up */
        return CREW_OK;
    }
    unsigned workers = crew_size(p);
    size_t helpers = l->nchunks - 2 < workers ? l->nchunks - 2 : workers; /* one chunk is done */
    if (helpers == 0) {
        run_chunks(l);
        return CREW_OK;
    }
    crew_task tasks[64];
    crew_task *t = helpers <= 64 ? tasks : malloc(helpers * sizeof *t);
    if (!t) { /* no memory for helpers: the caller does the rest alone */
        run_chunks(l);
        return CREW_OK;
    }
    memset(t, 0, helpers * sizeof *t);
    for (size_t i = 0; i < helpers; i++) {
        t[i].fn = runner;
        t[i].arg = l;
    }
    crew_handle g = CREW_HANDLE_NONE;
    /* Helpers are an offer, never a wait: a full bounded queue refuses them at once (the
     * caller would otherwise wait for room before running a chunk). */
    int rc = crew__enqueue_helpers(p, t, helpers, &g);
    run_chunks(l); /* with or without helpers: the caller alone finishes the loop */
    if (rc == CREW_OK) {
        /* OK, or helpers dropped (cancelled, expired): none is needed. The loop succeeds either
         * way, so crew_wait's failure must not change the caller's crew_last_error. */
        char saved[CREW__ERROR_SAVE];
        crew__error_save(saved, sizeof saved);
        if (crew_wait(p, g) < 0)
            crew__error_restore(saved);
    }
    if (t != tasks)
        free(t);
    /* Queueing the helpers may fail (pool shutting down or full, no memory, a parent's pool in
     * a forked child); the caller has done every chunk itself then, so the loop is complete
     * either way, and once crew_wait returns no helper is still inside one. */
    return CREW_OK;
}

/* ---- for ---- */

typedef struct {
    crew_range_fn fn;
    void *arg;
} for_ctx;

static void for_chunk(loop *l, size_t index, size_t b, size_t e) {
    (void)index;
    for_ctx *c = l->ctx;
    c->fn(b, e, c->arg);
}

int crew_parallel_for(crew_pool *p, size_t begin, size_t end, size_t grain, crew_range_fn fn,
                      void *arg) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_parallel_for: the pool is NULL");
    if (!fn)
        return crew__fail(CREW_EINVAL, "crew_parallel_for: fn is NULL");
    if (begin > end)
        return crew__fail(CREW_EINVAL, "crew_parallel_for: begin (%zu) is after end (%zu)", begin,
                          end);
    if (begin == end)
        return CREW_OK;
    for_ctx c = {fn, arg};
    loop l = {.begin = begin, .end = end, .grain = grain ? grain : auto_grain(p, end - begin),
              .chunk = for_chunk, .ctx = &c};
    return run_loop(p, &l);
}

/* ---- reduce ---- */

typedef struct {
    crew_fold_fn fold;
    void *arg;
    unsigned char *partials; /* nchunks accumulators of size bytes, each starting as identity */
    size_t size;
} reduce_ctx;

static void reduce_chunk(loop *l, size_t index, size_t b, size_t e) {
    reduce_ctx *c = l->ctx;
    c->fold(b, e, c->partials + index * c->size, c->arg);
}

int crew_parallel_reduce(crew_pool *p, size_t begin, size_t end, size_t grain, void *result,
                         size_t size, crew_fold_fn fold, crew_combine_fn combine, void *arg) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_parallel_reduce: the pool is NULL");
    if (!result)
        return crew__fail(CREW_EINVAL, "crew_parallel_reduce: result is NULL");
    if (size == 0)
        return crew__fail(CREW_EINVAL, "crew_parallel_reduce: size is 0; give the result's size "
                                       "in bytes");
    if (!fold || !combine)
        return crew__fail(CREW_EINVAL, "crew_parallel_reduce: %s is NULL",
                          !fold ? "fold" : "combine");
    if (begin > end)
        return crew__fail(CREW_EINVAL, "crew_parallel_reduce: begin (%zu) is after end (%zu)",
                          begin, end);
    if (begin == end)
        return CREW_OK;
    size_t n = end - begin;
    if (grain == 0)
        grain = auto_grain(p, n);
    if (n / grain >= MAX_REDUCE_CHUNKS) /* keep the partials bounded: raise the grain */
        grain = n / MAX_REDUCE_CHUNKS + 1;
    size_t nchunks = n / grain + (n % grain != 0);
    unsigned char *partials = NULL;
    if (nchunks > SIZE_MAX / size || !(partials = malloc(nchunks * size)))
        return crew__fail(CREW_ENOMEM,
                          "crew_parallel_reduce: out of memory for %zu partial results of %zu "
                          "bytes",
                          nchunks, size);
    for (size_t i = 0; i < nchunks; i++)
        memcpy(partials + i * size, result, size);
    reduce_ctx c = {fold, arg, partials, size};
    loop l = {.begin = begin, .end = end, .grain = grain, .chunk = reduce_chunk, .ctx = &c};
    int rc = run_loop(p, &l);
    if (rc == CREW_OK)
        for (size_t i = 0; i < nchunks; i++) /* in index order: deterministic */
            combine(result, partials + i * size, arg);
    free(partials);
    return rc;
}

/* ---- filter ---- */

typedef struct {
    const unsigned char *in;
    unsigned char *out;
    size_t elem_size;
    crew_pred_fn keep;
    void *arg;
    unsigned char *flags; /* pass 1: keep() per element */
    size_t *counts;       /* pass 1: kept per chunk; then exclusive prefix sums */
} filter_ctx;

static void count_chunk(loop *l, size_t index, size_t b, size_t e) {
    filter_ctx *c = l->ctx;
    size_t kept = 0;
    for (size_t i = b; i < e; i++)
        kept += c->flags[i] = c->keep(c->in + i * c->elem_size, c->arg) != 0;
    c->counts[index] = kept;
}

/* Copy the kept elements of [b, e) to dst; SIZE is a constant in the common cases, so memcpy
 * becomes one load and one store. */
#define COPY_KEPT(SIZE)                                                                          \
    for (size_t i = b; i < e; i++)                                                               \
        if (c->flags[i]) {                                                                       \
            memcpy(dst, c->in + i * (SIZE), (SIZE));                                             \
            dst += (SIZE);                                                                       \
        }

static void copy_chunk(loop *l, size_t index, size_t b, size_t e) {
    filter_ctx *c = l->ctx;
    unsigned char *dst = c->out + c->counts[index] * c->elem_size;
    switch (c->elem_size) {
    case 4:
        COPY_KEPT(4);
        break;
    case 8:
        COPY_KEPT(8);
        break;
    case 16:
        COPY_KEPT(16);
        break;
    default:
        COPY_KEPT(c->elem_size);
    }
}

int crew_parallel_filter(crew_pool *p, const void *in, size_t n, size_t elem_size, void *out,
                         size_t *out_n, crew_pred_fn keep, void *arg) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_parallel_filter: the pool is NULL");
    if ((!in && n) || (!out && n))
        return crew__fail(CREW_EINVAL, "crew_parallel_filter: %s is NULL but n is %zu",
                          !in ? "in" : "out", n);
    if (!out_n)
        return crew__fail(CREW_EINVAL, "crew_parallel_filter: out_n is NULL");
    if (elem_size == 0)
        return crew__fail(CREW_EINVAL, "crew_parallel_filter: elem_size is 0; give an "
                                       "element's size in bytes");
    if (!keep)
        return crew__fail(CREW_EINVAL, "crew_parallel_filter: keep is NULL");
    *out_n = 0;
    if (n == 0)
        return CREW_OK;
    size_t grain = auto_grain(p, n);
    size_t nchunks = n / grain + (n % grain != 0);
    filter_ctx c = {in, out, elem_size, keep, arg, malloc(n), malloc(nchunks * sizeof(size_t))};
    int rc = CREW_ENOMEM;
    if (c.flags && c.counts) {
        loop l = {.begin = 0, .end = n, .grain = grain, .chunk = count_chunk, .ctx = &c};
        rc = run_loop(p, &l);
        size_t total = 0;
        for (size_t i = 0; rc == CREW_OK && i < nchunks; i++) { /* exclusive prefix sums */
            size_t k = c.counts[i];
            c.counts[i] = total;
            total += k;
        }
        if (rc == CREW_OK) {
            loop l2 = {.begin = 0, .end = n, .grain = grain, .chunk = copy_chunk, .ctx = &c};
            rc = run_loop(p, &l2);
            *out_n = total;
        }
    }
    free(c.flags);
    free(c.counts);
    if (rc == CREW_ENOMEM)
        return crew__fail(rc, "crew_parallel_filter: out of memory for the flags of %zu "
                              "elements",
                          n);
    return rc;
}
