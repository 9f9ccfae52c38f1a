/*
 * deque.c -- the work-stealing deque of Chase and Lev (SPAA 2005), with the C11 memory orders
 * of Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory
 * Models" (PPoPP 2013, Fig. 1).
 *
 * The owner pushes and takes at the bottom (LIFO: the newest task, still warm in its cache);
 * thieves steal at the top (FIFO: the oldest, usually the biggest piece of a divide-and-conquer
 * tree). The only contention is on the last task, settled by a compare-and-swap on top.
 *
 * Five changes to the paper:
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
 *   - the owner reads top only when the deque looks full by its last read (top_seen, deque.h):
 *     top only grows, so the room that shows is real, and that read was an acquire whose
 *     claims the rewrite still happens after.
 *   - thieves may claim several tasks with one CAS (crew__deque_steal_batch), on a deque whose
 *     owner takes only with crew__deque_take_unless.
 * Arrays that a grow replaces stay allocated until the deque is freed, because a thief may
 * still be reading from one (the paper leaves reclamation open; the waste is at most the size of
 * the live array, since sizes double).
 */
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "atomic.h"
#include "deque.h"

#define DEQUE_MIN_LOG 8 /* 256 tasks to start */
#define HUGE_BYTES ((size_t)2 << 20) /* a huge page (x86-64, arm64 with 4 KiB pages) */
#define COPY_RUN 64     /* places copied at a time when the array grows (1.5 KiB) */

/* A new array of 2^log places, left unwritten: a place is read only between top and bottom,
 * where a push or a grow wrote it first. */
static crew__deque_array *array_new(unsigned log) {
    size_t n = (size_t)1 << log;
    size_t bytes = sizeof(crew__deque_array) + n * sizeof(crew__deque_entry);
    crew__deque_array *a;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* A big array (a backlog of a producer's hundreds of thousands of tasks) in huge pages: it
     * is written once, place after place, as it fills, and in 4 KiB pages each first write of a
     * page was a page fault: a pool's first backlog cost its producer twice the time of the
     * next ones (6,000 faults, half its time, on a 2-core VM). Aligned to a huge page and
     * advised so, rounded up to whole huge pages; but where the places alone fill whole huge
     * pages (2^18 places or more, 24 bytes each), the header's 16 bytes past them would take a
     * huge page of their own (2 MiB resident once the last place is written): then only the
     * places' huge pages are asked and advised, and those 16 bytes lie in a small page after
     * them. posix_memalign, not aligned_alloc, which may refuse a size that is not a multiple
     * of its alignment. Any failure just leaves small pages (malloc's, if the aligned block
     * was refused). */
    a = NULL;
    if (bytes >= HUGE_BYTES) {
        size_t whole = (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
        size_t advised = whole;
        if (bytes - (bytes & ~(HUGE_BYTES - 1)) <= sizeof(crew__deque_array))
            whole = bytes, advised = bytes & ~(HUGE_BYTES - 1);
        void *block;
        if (posix_memalign(&block, HUGE_BYTES, whole) == 0) {
            a = block;
            (void)madvise(a, advised, MADV_HUGEPAGE);
        }
    }
    if (!a)
#endif
        a = malloc(bytes);
    if (!a)
        return NULL;
    a->mask = n - 1;
    crew__assert((n & a->mask) == 0); /* a power of two: an index wraps with the mask */
    a->older = NULL;
    return a;
}

int crew__deque_init(crew__deque *d) {
    crew__deque_array *a = array_new(DEQUE_MIN_LOG);
    if (!a)
        return CREW_ENOMEM;
    crew__atomic_init(&d->top, 0);
    crew__atomic_init(&d->bottom, 0);
    d->top_seen = 0;
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
static inline void entry_copy(crew__deque_entry *to, const crew__deque_entry *from) {
    entry_put(to, crew__load_relaxed(&from->fn), crew__load_relaxed(&from->arg),
              crew__load_relaxed(&from->aux));
}

/* Owner only: make room for n more tasks (top is t, bottom b). */
static crew__deque_array *grow(crew__deque *d, crew__deque_array *a, int64_t t, int64_t b,
                               size_t need);

static inline crew__deque_array *reserve(crew__deque *d, crew__deque_array *a, int64_t t,
                                         int64_t b, size_t n) {
    crew__assert(t <= b); /* the owner's look: top never passes bottom between its operations */
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
    d->top_seen = top;
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

/* Places e[0..n) := t[0..n) by value, of group slot (entry_put's orders). */
static inline void put_values(crew__deque_entry *e, const crew_task *t, size_t n, uint32_t slot) {
    for (const crew_task *end = t + n; t < end; t++, e++) {
        crew__assert(t->fn != NULL); /* fn NULL is a task by address (deque.h) */
        entry_put(e, t->fn, t->arg, crew__deque_aux(slot, t->priority));
    }
}

int crew__deque_push_values(crew__deque *d, const crew_task *t, size_t n, uint32_t slot) {
    /* Relaxed bottom and array: the owner's own. Top is read (acquire, as in push) only when n
     * more may not fit by the last look at it (top_seen: see crew__deque_room_at). */
    int64_t b = crew__load_relaxed(&d->bottom);
    crew__deque_array *a = crew__load_relaxed(&d->array);
    crew__assert(d->top_seen <= b);
    if (__builtin_expect((size_t)(b - d->top_seen) + n > a->mask + 1, 0)) {
        int64_t top = crew__load_acquire(&d->top);
        d->top_seen = top;
        if (!(a = reserve(d, a, top, b, n)))
            return CREW_ENOMEM;
    }
    /* Places b .. b + n - 1: up to the array's end, then from its start. */
    size_t at = (size_t)b & a->mask, first = a->mask + 1 - at;
    first = first < n ? first : n;
    put_values(&a->slot[at], t, first, slot);
    put_values(a->slot, t + first, n - first, slot);
    /* Release: the tasks are visible to a thief that reads the new bottom. */
    crew__store_release(&d->bottom, b + (int64_t)n);
    return CREW_OK;
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

/* The owner's take; with claimers (non-NULL), one that gives way to batch claims in progress
 * (see crew__deque_steal_batch): crew__deque_take_newest (deque.h). */
static inline crew_task *take_claim(crew__deque *d, crew_task *buf, atomic_uint *claimers) {
    return crew__deque_take_newest(d, buf, claimers);
}

crew_task *crew__deque_take_claim(crew__deque *d, crew_task *buf) {
    return take_claim(d, buf, NULL);
}

crew_task *crew__deque_take_unless(crew__deque *d, crew_task *buf, atomic_uint *claimers) {
    if (crew__load_relaxed(&d->top) >= crew__load_relaxed(&d->bottom))
        return NULL; /* empty: see crew__deque_take */
    return take_claim(d, buf, claimers);
}

/* Why a claim of n places is safe. The owner's takes: the claimer counts itself in claimers
 * before it reads top and bottom, the owner lowers bottom before it reads claimers (each
 * followed by a full fence, or all seq_cst under TSan), so in their single order either the
 * owner sees the count and gives way (crew__deque_take_unless undoes its take), or the claimer
 * reads the lowered bottom and claims below it; the count is left only after the claim, whose
 * compare-and-swap a later take's read of top sees. The owner's pushes: the places [t, t + n)
 * read here are below the bottom read after top, so published; the owner writes a place again
 * only once top has passed it (push's acquire of top, then or earlier: top_seen), and top is
 * still t when the compare-and-swap succeeds (it only grows), so none was rewritten before the
 * claim; a replaced array is never written again. Other thieves: the same compare-and-swap
 * orders every claim. */
/* Claim places [t, t + n) of the victim's array into out[0..n), n at most max: the places are
 * read before the claim (as a steal reads its one), and the batch ends before a place holding
 * stop, unless that place is the first. */
size_t crew__deque_steal_batch(crew__deque *d, crew__deque_entry *out, size_t max,
                               crew_fn stop, atomic_uint *claimers, bool *contended) {
    /* Seq_cst read-modify-write (a full barrier): the claimer's half of the protocol above. */
    crew__fetch_add_seq_cst(claimers, 1u);
    int64_t t, b = crew__deque_thief_look(d, &t);
    if (t >= b) {
        crew__fetch_sub_release(claimers, 1u); /* release: after everything read above */
        return 0;
    }
    size_t n = (size_t)(b - t) < max ? (size_t)(b - t) : max;
    crew__deque_array *a = crew__load_acquire(&d->array); /* acquire: as in steal */
    /* The first place always; a later one unless its function is stop (deque.h), tested in a
     * loop of its own so that a claim without stop copies as it did before there was one. */
    size_t i = 0;
    if (stop) {
        for (; i < n; i++) {
            crew__deque_entry *e = &a->slot[(size_t)(t + (int64_t)i) & a->mask];
            crew_fn fn = crew__load_relaxed(&e->fn);
            if (fn == stop && i > 0)
                break; /* the batch ends before it */
            entry_put(&out[i], fn, crew__load_relaxed(&e->arg), crew__load_relaxed(&e->aux));
        }
        n = i;
    } else {
        for (; i < n; i++)
            entry_copy(&out[i], &a->slot[(size_t)(t + (int64_t)i) & a->mask]);
    }
    crew__debug_yield(); /* tests: widen the window an owner's take could hit */
    /* Seq_cst on success, as in steal. */
    bool won = crew__cas_seq_cst(&d->top, &t, t + (int64_t)n);
    crew__fetch_sub_release(claimers, 1u); /* release: after the claim */
    if (!won) {
        *contended = true;
        return 0;
    }
    return n;
}

int64_t crew__deque_top(crew__deque *d) {
    return crew__load_relaxed(&d->top); /* relaxed: a diagnostic's look; top never decreases */
}
