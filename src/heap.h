/*
 * heap.h -- crew's heaps: the one implicit d-ary min-heap algorithm (inline, below) that both
 * of them use, and the heap of due entries (heap.c) where delayed tasks and periodic timers
 * wait for their time (timer.c). The priority queue's heap of levels (prioq.c) is the other.
 *
 * THE ALGORITHM. A heap is an array of elements of one size, each before its d children
 * (Williams' binary heap, d-ary as in Johnson's generalisation: a 4-ary heap is half as deep as
 * a binary one, and a node's children share a cache line). A heap kind (crew__heap_kind) says
 * an element's size, d, which of two elements comes first (less), and what to do when an
 * element lands at an index (placed: both heaps note the index in the element's object, so
 * that any element can be removed in O(log n)). Elements move by the hole technique: the one
 * being placed is kept aside (e) while the others move up or down past it, so a sift writes
 * each slot once. The functions are always inlined and every caller passes a constant kind,
 * so the compiler turns size, d, less and placed into plain code: no call, no memcpy, as in a
 * heap written for its element type.
 *
 * THE DUE HEAP (heap.c). A 4-ary heap of crew__tent, ordered by due time and then submission
 * order, each entry's index kept in its task (crew_private_.spare), with its memory: it grows
 * by doubling and gives memory back once three quarters empty. Not thread-safe: timer.c holds
 * its lock around every call.
 */
#ifndef CREW_HEAP_H
#define CREW_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base.h"
#include "debug.h"

/* ---- the algorithm ---- */

/* What a heap holds and how it orders it (a constant of its user's). */
typedef struct crew__heap_kind {
    size_t size;                                /* bytes per element, at most 32 */
    size_t d;                                   /* children per node, at least 2 */
    bool (*less)(const void *a, const void *b); /* a comes before b */
    void (*placed)(void *e, size_t i);          /* element e now stands at index i */
} crew__heap_kind;

#define CREW__HEAP_INLINE static inline __attribute__((always_inline))

CREW__HEAP_INLINE void *crew__heap_at(const crew__heap_kind *k, void *base, size_t i) {
    return (unsigned char *)base + i * k->size;
}
CREW__HEAP_INLINE void crew__heap_put(const crew__heap_kind *k, void *base, size_t i,
                                      const void *e) {
    void *at = crew__heap_at(k, base, i);
    memcpy(at, e, k->size);
    k->placed(at, i);
}

/* Place e at hole i, moving it up past the ancestors it comes before. */
CREW__HEAP_INLINE void crew__heap_sift_up(const crew__heap_kind *k, void *base, size_t i,
                                          const void *e) {
    for (size_t up; i > 0 && k->less(e, crew__heap_at(k, base, up = (i - 1) / k->d)); i = up)
        crew__heap_put(k, base, i, crew__heap_at(k, base, up));
    crew__heap_put(k, base, i, e);
}

/* Place e at hole i of a heap of n elements, moving it down past the children that come
 * before it (the first of them each time). */
CREW__HEAP_INLINE void crew__heap_sift_down(const crew__heap_kind *k, void *base, size_t n,
                                            size_t i, const void *e) {
    for (;;) {
        size_t c = k->d * i + 1, best = c;
        if (c >= n)
            break;
        for (size_t j = c + 1; j < c + k->d && j < n; j++)
            if (k->less(crew__heap_at(k, base, j), crew__heap_at(k, base, best)))
                best = j;
        void *b = crew__heap_at(k, base, best);
        if (!k->less(b, e))
            break;
        crew__heap_put(k, base, i, b);
        i = best;
    }
    crew__heap_put(k, base, i, e);
}

/* Place e at hole i of a heap of n elements (i < n), where an element was taken out: up if it
 * comes before i's parent, else down. */
CREW__HEAP_INLINE void crew__heap_fix(const crew__heap_kind *k, void *base, size_t n, size_t i,
                                      const void *e) {
    if (i > 0 && k->less(e, crew__heap_at(k, base, (i - 1) / k->d)))
        crew__heap_sift_up(k, base, i, e);
    else
        crew__heap_sift_down(k, base, n, i, e);
}

/* Make a heap of any n elements (Floyd's bottom-up construction, O(n)); every element is
 * placed at its final index. */
CREW__HEAP_INLINE void crew__heap_build(const crew__heap_kind *k, void *base, size_t n) {
    _Alignas(16) unsigned char e[32];
    crew__assert(k->size <= sizeof e);
    for (size_t i = n; i-- > 0;) {
        memcpy(e, crew__heap_at(k, base, i), k->size);
        crew__heap_sift_down(k, base, n, i, e);
    }
    for (size_t i = 0; i < n; i++) /* the sifts placed only the elements they moved */
        k->placed(crew__heap_at(k, base, i), i);
}

/* ---- the due heap (heap.c) ---- */

/* One entry of the due heap: a due time, a sequence number (first-in-first-out among equal due
 * times, compared modulo 2^32), the group slot of a delayed task (0: none, or a periodic
 * timer's run: crew_cancel compares it without touching the task), and the task: a delayed
 * task's node, or a periodic timer's run (fn crew__timer_run). The entry's index is kept in
 * the task (crew_private_.spare, free while the task is in no queue), so that removing it is
 * O(log n). */
typedef struct crew__tent {
    uint64_t when;
    uint32_t seq;
    uint32_t slot;
    crew_task *task;
} crew__tent;

typedef struct crew__theap {
    crew__tent *e; /* a 4-ary min-heap on (when, seq) */
    size_t n, cap; /* entries, room */
    uint32_t seq;  /* the next entry's sequence number */
} crew__theap;

/* Room for need entries: CREW_OK or CREW_ENOMEM (then nothing changed). */
int crew__theap_reserve(crew__theap *h, size_t need);
/* Insert task t due at when (room reserved). Returns true if it is the new top. */
bool crew__theap_insert(crew__theap *h, crew_task *t, uint64_t when, uint32_t slot);
/* Take out entry i. */
void crew__theap_remove_at(crew__theap *h, size_t i);
/* Take out every entry for which out(ctx, entry) holds, in one pass, O(n) however many go;
 * the heap is left as it was when none goes. */
void crew__theap_filter(crew__theap *h, bool (*out)(void *ctx, const crew__tent *e), void *ctx);
/* After entries were taken out: give memory back once three quarters of the room are free,
 * keeping room for keep entries (the user's promise: a timer's rearm inserts without
 * allocating). */
void crew__theap_shrink(crew__theap *h, size_t keep);
void crew__theap_free(crew__theap *h);

#endif /* CREW_HEAP_H */
