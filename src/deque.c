/*
 * deque.c -- the work-stealing deque of Chase and Lev (SPAA 2005), with the C11 memory orders
 * of Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory
 * Models" (PPoPP 2013, Fig. 1).
 *
 * The owner pushes and takes at the bottom (LIFO: the newest task, still warm in its cache);
 * thieves steal at the top (FIFO: the oldest, usually the biggest piece of a divide-and-conquer
 * tree). The only contention is on the last task, settled by a compare-and-swap on top.
 *
 * Three changes to the paper:
 *   - every store to bottom is a release store (the paper uses a release fence before push's
 *     relaxed store and relaxed stores in take). A thief that reads bottom then synchronises
 *     with the owner's latest store whichever operation made it, so the task's fields, written
 *     before the push by the owner, are visible; and ThreadSanitizer, which does not model
 *     fences, sees the same happens-before edge. On x86 and with ARMv8's stlr this costs nothing
 *     over the paper's version.
 *   - the array grows before a batch push rather than one slot at a time, so a push of n tasks
 *     either fits or fails with nothing pushed (submission is all-or-nothing).
 *   - a place holds a task by address or by value (function, argument, group slot and
 *     priority: three words, deque.h), so that crew_submit needs no node for its task. A thief
 *     reads the three words before its claim (the CAS on top) and keeps them only if the claim
 *     succeeds. The owner writes a place again only after its task is gone: a thief claimed it
 *     (the owner's acquire load of top saw the claim, so the thief's reads happen before the
 *     rewrite), or the owner took it itself, and then no thief's claim of it succeeds (the
 *     protocol's exclusion; a thief that reads the new bottom reads the new task whole). So a
 *     successful thief never sees a torn task. The owner's own take reads its place after its
 *     claim; only it writes places.
 * Arrays that a grow replaces stay allocated until the deque is freed, because a thief may
 * still be reading from one (the paper leaves reclamation open; the waste is at most the size of
 * the live array, since sizes double).
 */
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "deque.h"

#define DEQUE_MIN_LOG 8 /* 256 tasks to start */
#define COPY_RUN 64     /* places copied at a time when the array grows (1.5 KiB) */

/* A new array of 2^log places, left unwritten: a place is read only between top and bottom,
 * where a push or a grow wrote it first. */
static crew__deque_array *array_new(unsigned log) {
    size_t n = (size_t)1 << log;
    crew__deque_array *a = malloc(sizeof *a + n * sizeof a->slot[0]);
    if (!a)
        return NULL;
    a->mask = n - 1;
    a->older = NULL;
    return a;
}

int crew__deque_init(crew__deque *d) {
    crew__deque_array *a = array_new(DEQUE_MIN_LOG);
    if (!a)
        return CREW_ENOMEM;
    crew__atomic_init(&d->top, 0);
    crew__atomic_init(&d->bottom, 0);
    crew__atomic_init(&d->array, a);
    return CREW_OK;
}

void crew__deque_free(crew__deque *d) {
    crew__deque_array *a = crew__load_relaxed(&d->array);
    while (a) {
        crew__deque_array *older = a->older;
        free(a);
        a = older;
    }
    crew__store_relaxed(&d->array, NULL);
}

/* Entries, relaxed: the owner's writes are published by its release store of bottom (or of the
 * array), and a thief's reads come before its claim (see the file comment). */
static inline void entry_put(crew__deque_entry *e, crew_fn fn, void *arg, uint64_t aux) {
    crew__store_relaxed(&e->fn, fn);
    crew__store_relaxed(&e->arg, arg);
    crew__store_relaxed(&e->aux, aux);
}
static inline crew_task *entry_get(crew__deque_entry *e, crew_task *buf) {
    return crew__deque_task(crew__load_relaxed(&e->fn), crew__load_relaxed(&e->arg),
                            crew__load_relaxed(&e->aux), buf);
}

/* Owner only: make room for n more tasks (top is t, bottom b). */
static crew__deque_array *grow(crew__deque *d, crew__deque_array *a, int64_t t, int64_t b,
                               size_t need);

static inline crew__deque_array *reserve(crew__deque *d, crew__deque_array *a, int64_t t,
                                         int64_t b, size_t n) {
    size_t need = (size_t)(b - t) + n;
    return need <= a->mask + 1 ? a : grow(d, a, t, b, need);
}

static __attribute__((noinline)) crew__deque_array *grow(crew__deque *d, crew__deque_array *a,
                                                         int64_t t, int64_t b, size_t need) {
    unsigned log = DEQUE_MIN_LOG;
    while (((size_t)1 << log) < need)
        log++;
    crew__deque_array *g = array_new(log);
    if (!g)
        return NULL;
    /* The owner copies its own, published, entries in runs that wrap in neither array (the old
     * one wraps at a multiple of its size, the new one, a multiple of the old, only there too),
     * of at most COPY_RUN places: glibc copies longer runs with `rep movsb`, which callgrind
     * counts as one instruction per byte (bench/instr.sh). Plain copies: thieves only read the
     * old places, and nobody reads the new ones before the release below. */
    for (int64_t i = t, end; i < b; i = end) {
        end = (int64_t)((size_t)i | a->mask) + 1;
        if (end > b)
            end = b;
        if (end - i > COPY_RUN)
            end = i + COPY_RUN;
        memcpy((void *)&g->slot[(size_t)i & g->mask], (const void *)&a->slot[(size_t)i & a->mask],
               (size_t)(end - i) * sizeof a->slot[0]);
    }
    g->older = a;
    /* Release: a thief that loads the new array (acquire, in steal) sees the copied slots. */
    crew__store_release(&d->array, g);
    return g;
}

/* Owner: push n tasks by address, t[i] or *v[i] (one of t and v is NULL), or (n == 1, both
 * NULL) the task fn, arg, aux by value; all or nothing. */
static int push(crew__deque *d, crew_task *t, crew_task *const *v, size_t n, crew_fn fn,
                void *arg, uint64_t aux) {
    /* Relaxed: bottom is written only by the owner (this thread). */
    int64_t b = crew__load_relaxed(&d->bottom);
    /* Acquire: pairs with the thieves' CAS on top, so slots they freed are ours to reuse. */
    int64_t top = crew__load_acquire(&d->top);
    crew__deque_array *a = reserve(d, crew__load_relaxed(&d->array), top, b, n);
    if (!a)
        return CREW_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        crew__deque_entry *e = &a->slot[(size_t)(b + (int64_t)i) & a->mask];
        if (t || v)
            entry_put(e, NULL, t ? &t[i] : v[i], 0);
        else
            entry_put(e, fn, arg, aux);
    }
    /* Release: the tasks (and their slots) are visible to a thief that reads the new bottom. */
    crew__store_release(&d->bottom, b + (int64_t)n);
    return CREW_OK;
}

int crew__deque_push(crew__deque *d, crew_task *t, size_t n) {
    return push(d, t, NULL, n, NULL, NULL, 0);
}

int crew__deque_push_slow(crew__deque *d, crew_fn fn, void *arg, uint64_t aux) {
    if (!fn) /* by address */
        return push(d, arg, NULL, 1, NULL, NULL, 0);
    return push(d, NULL, NULL, 1, fn, arg, aux);
}

int crew__deque_reserve(crew__deque *d, size_t n) {
    /* Relaxed bottom: the owner's own; acquire top: as in push. */
    return reserve(d, crew__load_relaxed(&d->array), crew__load_acquire(&d->top),
                   crew__load_relaxed(&d->bottom), n)
               ? CREW_OK
               : CREW_ENOMEM;
}

int crew__deque_push_ptrs(crew__deque *d, crew_task *const *v, size_t n) {
    return push(d, NULL, v, n, NULL, NULL, 0);
}

crew_task *crew__deque_take_claim(crew__deque *d, crew_task *buf) {
    /* Relaxed: the owner's own bottom and array. */
    int64_t b = crew__load_relaxed(&d->bottom) - 1;
    crew__deque_array *a = crew__load_relaxed(&d->array);
    /* Release, then a full fence: the claim on slot b must be globally ordered before we read
     * top, or a thief and the owner could both take the last task (the paper's seq_cst fence). */
#ifdef CREW__TSAN /* the same order without a fence, which TSan does not model (atomic.h) */
    crew__exchange_seq_cst(&d->bottom, b);
    int64_t t = crew__load_seq_cst(&d->top);
#else
    crew__store_release(&d->bottom, b);
    crew__fence_seq_cst();
    int64_t t = crew__load_relaxed(&d->top); /* relaxed: ordered by the fence */
#endif
    if (t > b) {                             /* empty: undo the claim */
        crew__store_release(&d->bottom, b + 1); /* release: see the file comment */
        return NULL;
    }
    if (t == b) {
        /* The last task: race the thieves for it. Seq_cst on success (the paper's order);
         * relaxed on failure, since we then return nothing. */
        bool won = crew__cas_seq_cst(&d->top, &t, t + 1);
        crew__store_release(&d->bottom, b + 1); /* release: see the file comment */
        if (!won)
            return NULL;
    }
    /* Ours now: no thief reads a place at or past top, and only the owner writes. */
    return entry_get(&a->slot[(size_t)b & a->mask], buf);
}

crew_task *crew__deque_steal(crew__deque *d, crew_task *buf, bool *contended) {
    /* Acquire, full fence, acquire: the paper's orders for reading top before bottom. */
#ifdef CREW__TSAN /* the same order without a fence, which TSan does not model (atomic.h) */
    int64_t t = crew__load_seq_cst(&d->top);
    int64_t b = crew__load_seq_cst(&d->bottom);
#else
    int64_t t = crew__load_acquire(&d->top);
    crew__fence_seq_cst();
    int64_t b = crew__load_acquire(&d->bottom);
#endif
    if (t >= b)
        return NULL;
    /* Acquire (the paper's consume): the array and its slots as the owner published them. The
     * entry is read before the claim (after it, the owner may reuse the place), and copied
     * into buf only if the claim succeeds: a lost race leaves buf as it was. */
    crew__deque_array *a = crew__load_acquire(&d->array);
    crew__deque_entry *e = &a->slot[(size_t)t & a->mask];
    crew_fn fn = crew__load_relaxed(&e->fn);
    void *arg = crew__load_relaxed(&e->arg);
    uint64_t aux = crew__load_relaxed(&e->aux);
    /* Seq_cst on success (the paper's order); a failed race means another thread took it. */
    if (!crew__cas_seq_cst(&d->top, &t, t + 1)) {
        *contended = true;
        return NULL;
    }
    return crew__deque_task(fn, arg, aux, buf);
}

int64_t crew__deque_top(crew__deque *d) {
    return crew__load_relaxed(&d->top); /* relaxed: a diagnostic's look; top never decreases */
}
