/*
 * parallel.c -- parallel for, reduce and filter on a pool (the primitives BOLSTER runs on its
 * pool, Jendersie et al., §I).
 *
 * All three split their range into the same grid of chunks (grain elements each; a chunk is an
 * index, not a task, so memory is O(1) in the range for a loop, O(chunks) for a reduction's
 * partials and a filter's counts) and run each chunk exactly once through one engine:
 *
 *   - counter: a loop over chunk indices handed out by an atomic counter (dynamic
 *     self-scheduling, like OpenMP's schedule(dynamic)), run by the caller and by "runners"
 *     that it offers to the pool's threads, one per worker. A runner that starts late finds
 *     the counter exhausted and returns at once, so a thread that is preempted or busy
 *     elsewhere holds up at most the one chunk it runs. The runners are offered by crew_join
 *     where the strategy has an offer without a group (CREW_SCHED_STEAL; CREW__PAR_OFFER): a
 *     binary tree of joins, half of the runners in each offer, so an offer nobody took comes
 *     back for a push and a pop, and the caller waits only for runners another thread took.
 *     Elsewhere they are tasks in a group of their own (CREW__PAR_COUNTER, where a join would
 *     cost a group per offer): the caller queues them, runs the loop itself, then waits for
 *     the group (crew_wait helps with the runners still queued).
 *   - split (CREW__PAR_SPLIT, measured, not the default, and only in the library the tests and
 *     the benchmarks link, CREW_TEST_HOOKS): lazy binary splitting (Tzannes,
 *     Caragea, Barua and Vishkin, "Lazy Binary-Splitting: A Run-Time Adaptive Work-Stealing
 *     Scheduler", PPoPP 2010) on crew_join. A thread runs the chunks of its range one by one,
 *     and before each it looks whether its deque is empty; if so (other threads took
 *     everything it offered, so they want work), it splits what is left in two and crew_joins
 *     the halves: it keeps the first, offers the second. The look is one relaxed load: since
 *     thieves take a deque's oldest entries first, the deque is empty exactly when the newest
 *     offer, the sibling of the range being run, was taken (its `taken` flag); a range a thief
 *     took starts on an empty deque, so it splits at once. Its weakness on a loaded machine:
 *     the range a thread is running is nobody else's to take, so a preempted thread holds up
 *     the rest of its range, where the counter's runner holds up one chunk (docs/benchmarks.md
 *     has the measurements behind the choice).
 *
 * Either way the caller takes part and finishes alone what nobody took, so the primitives work
 * inside tasks and on a busy, shut down or 1-thread pool. The grid depends only on the range, the
 * grain and the pool size, never on the engine or the timing, so a reduction's result is the
 * same bit for bit under every engine.
 *
 * Small loops stay on the caller: it runs the first chunk before involving anyone, and if the
 * whole loop at that rate would take less than INLINE_NS, it finishes alone, so a loop over ten
 * elements costs what a plain loop does, not a wake-up.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "chunks.h"
#include "parallel.h"
#include "pool.h"
#include "sched_calls.h"
#include "clock.h"
#include "submit.h"
#include "wait.h"

#define CHUNKS_PER_THREAD 8     /* automatic grain: this many chunks per participant */
#define INLINE_NS 20000         /* loops estimated shorter than this run on the caller alone: about
                                   what waking a sleeping worker costs (tens of microseconds) */
#define MAX_REDUCE_CHUNKS 65536 /* partial results kept by crew_parallel_reduce */

typedef struct loop {
    size_t begin, end, grain, nchunks;
    /* The claims of chunk indices (the counter's runners; chunks.h, one at a time). Relaxed:
     * the counter only divides work; the chunks' effects are published to the caller by the
     * group wait (task completion release, wait acquire), or by crew_join (the half's release
     * of its record's over, the caller's acquire). */
    crew__chunks next;
    void (*chunk)(struct loop *l, size_t index, size_t begin, size_t end);
    void *ctx; /* the primitive's own state */
} loop;

/* Run chunk i. */
static inline void run_chunk(loop *l, size_t i) {
    size_t b = l->begin + i * l->grain;
    size_t e = l->end - b > l->grain ? b + l->grain : l->end;
    l->chunk(l, i, b, e);
}

/* Claim and run one chunk; false when none is left. */
static bool run_one(loop *l) {
    size_t i, end;
    if (!crew__chunks_claim(&l->next, l->nchunks, 1, &i, &end))
        return false;
    run_chunk(l, i);
    return true;
}

static void run_chunks(loop *l) {
    while (run_one(l))
        ;
}

static void runner(void *arg) { run_chunks(arg); }

static size_t auto_grain(crew_pool *p, size_t n) {
    size_t parts = (size_t)(crew_size(p) + 1) * CHUNKS_PER_THREAD;
    size_t g = n / parts + (n % parts != 0); /* n + parts - 1 would wrap near SIZE_MAX */
    return g ? g : 1;
}

/* ---- the split engine: lazy binary splitting on crew_join ----
 * Measured, not the default: only in the library the tests and the benchmarks link, where
 * crew__parallel_engine chooses it (CREW_TEST_HOOKS: CMakeLists.txt). */
#if defined(CREW_TEST_HOOKS) && CREW_TEST_HOOKS

/* A range of chunks [lo, hi) offered by one crew_join, on the stack of its caller. */
typedef struct span {
    loop *l;
    crew_pool *p;
    size_t lo, hi;
    /* The taken flag of the offer below this one on the offering thread's deque (NULL: none),
     * for the thread that runs this span if it is the offering thread (taken back). */
    const atomic_bool *below;
    pthread_t by; /* the offering thread */
    /* Set when another thread starts the span: the offerer's deque is empty from here down.
     * Relaxed: a hint for the splitting decision; the chunks' effects are published by
     * crew_join (the half's release of its record's over, the caller's acquire). */
    atomic_bool taken;
} span;

static void run_span(crew_pool *p, loop *l, size_t lo, size_t hi, const atomic_bool *below);

static void first_half(void *arg) {
    span *s = arg;
    run_span(s->p, s->l, s->lo, s->hi, s->below);
}

static void second_half(void *arg) {
    span *s = arg;
    const atomic_bool *below = s->below;
    if (!pthread_equal(pthread_self(), s->by)) {
        crew__store_relaxed(&s->taken, true); /* relaxed: a hint (see span.taken) */
        below = NULL; /* a thief's deque is empty: split at once */
    }
    run_span(s->p, s->l, s->lo, s->hi, below);
}

/* Run chunks [lo, hi) on this thread; below: the taken flag of this thread's newest offer
 * still pending under this range, NULL if none. Splits while the deque is empty (below NULL or
 * taken), else runs the next chunk. Depth: at most log2 of the chunks, one crew_join a level. */
static void run_span(crew_pool *p, loop *l, size_t lo, size_t hi, const atomic_bool *below) {
    while (lo < hi) {
        /* Relaxed: a hint; a stale false only delays a split by one chunk. */
        if (hi - lo >= 2 && (!below || crew__load_relaxed(below))) {
            size_t mid = lo + (hi - lo) / 2;
            span second = {.l = l, .p = p, .lo = mid, .hi = hi, .below = below,
                           .by = pthread_self()};
            crew__atomic_init(&second.taken, false);
            span first = {.l = l, .p = p, .lo = lo, .hi = mid, .below = &second.taken};
            /* CREW_OK once both halves ran (only NULL arguments fail, and none is). */
            (void)crew_join(p, first_half, &first, second_half, &second);
            return;
        }
        run_chunk(l, lo++);
    }
}
#endif /* CREW_TEST_HOOKS: the split engine */

/* ---- the counter's runners offered by crew_join (CREW__PAR_OFFER) ---- */

/* k runners of loop l, the calling thread one of them. */
typedef struct runners {
    crew_pool *p;
    loop *l;
    size_t k;
} runners;

static void run_runners(void *arg) {
    runners *r = arg;
    if (r->k <= 1) {
        run_chunks(r->l);
        return;
    }
    /* Offer half of the others as one half (thieves take the oldest, largest offer first), keep
     * the rest; a runner taken back finds the counter exhausted and returns at once. */
    runners mine = {r->p, r->l, r->k - r->k / 2}, theirs = {r->p, r->l, r->k / 2};
    (void)crew_join(r->p, run_runners, &mine, run_runners, &theirs); /* CREW_OK: no NULLs */
}

/* Which engine runs the loops (crew__parallel_engine, for the tests and the benchmarks only:
 * CREW_TEST_HOOKS); relaxed: a setting, nothing else is published through it. */
#if defined(CREW_TEST_HOOKS) && CREW_TEST_HOOKS
static atomic_int engine_choice = CREW__PAR_AUTO;

void crew__parallel_engine(int engine) { crew__store_relaxed(&engine_choice, engine); }
#endif

/* The engine for a loop on p: CREW__PAR_COUNTER, _OFFER, or (chosen by crew__parallel_engine)
 * _SPLIT. A forked child uses the counter, whose helpers the child's pool refuses at once: the
 * caller does the work. */
static int engine_for(crew_pool *p) {
    if (crew__forked(p))
        return CREW__PAR_COUNTER;
#if defined(CREW_TEST_HOOKS) && CREW_TEST_HOOKS
    int e = crew__load_relaxed(&engine_choice); /* relaxed: see engine_choice */
    if (e != CREW__PAR_AUTO)
        return e;
#endif
    return crew__sched_has_offer(p) ? CREW__PAR_OFFER : CREW__PAR_COUNTER;
}

/* Run l over its chunks with the pool's help; the caller takes part. */
static int run_loop(crew_pool *p, loop *l) {
    size_t n = l->end - l->begin;
    l->nchunks = n / l->grain + (n % l->grain != 0);
    crew__chunks_init(&l->next);
    uint64_t t0 = crew__now_ns();
    run_one(l); /* the first chunk, timed, before anyone else is involved */
    uint64_t first = crew__now_ns() - t0;
    if (l->nchunks <= 1 || first * (l->nchunks - 1) < INLINE_NS) {
        run_chunks(l); /* too little work to be worth a wake-up */
        return CREW_OK;
    }
    int engine = engine_for(p);
#if defined(CREW_TEST_HOOKS) && CREW_TEST_HOOKS
    if (engine == CREW__PAR_SPLIT) { /* chunk 0 is done; the counter is not used from here on */
        run_span(p, l, 1, l->nchunks, NULL);
        return CREW_OK;
    }
#endif
    unsigned workers = crew_size(p);
    size_t helpers = l->nchunks - 2 < workers ? l->nchunks - 2 : workers; /* one chunk is done */
    if (helpers == 0) {
        run_chunks(l);
        return CREW_OK;
    }
    if (engine == CREW__PAR_OFFER) { /* the caller and its helpers: helpers + 1 runners */
        runners all = {p, l, helpers + 1};
        run_runners(&all);
        return CREW_OK; /* every runner has returned: no chunk is left or running */
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
