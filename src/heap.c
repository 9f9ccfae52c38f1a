/*
 * heap.c -- an implicit binary min-heap of tasks (seed 000 §III-B: "a generic priority queue
 * utilizing an implicit heap"), ordered by priority and then by submission sequence, so equal
 * priorities leave first-in-first-out. Each task records its index (crew_private_.index) so a
 * waiter can pull a queued task of its own group out of the middle in O(log n).
 * Not thread-safe: the caller holds the queue's lock.
 */
#include <stdlib.h>

#include "internal.h"

static inline bool before(const crew_task *a, const crew_task *b) {
    if (a->priority != b->priority)
        return a->priority < b->priority;
    return a->crew_private_.seq < b->crew_private_.seq;
}

static inline void place(crew__heap *h, size_t i, crew_task *t) {
    h->a[i] = t;
    t->crew_private_.index = (uint32_t)i;
}

static void sift_up(crew__heap *h, size_t i, crew_task *t) {
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(t, h->a[parent]))
            break;
        place(h, i, h->a[parent]);
        i = parent;
    }
    place(h, i, t);
}

static void sift_down(crew__heap *h, size_t i, crew_task *t) {
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->n)
            break;
        if (child + 1 < h->n && before(h->a[child + 1], h->a[child]))
            child++;
        if (!before(h->a[child], t))
            break;
        place(h, i, h->a[child]);
        i = child;
    }
    place(h, i, t);
}

int crew__heap_reserve(crew__heap *h, size_t extra) {
    if (extra > UINT32_MAX || h->n + extra > UINT32_MAX)
        return CREW_ERANGE; /* positions are stored in 32 bits */
    if (h->n + extra <= h->cap)
        return CREW_OK;
    size_t cap = h->cap ? h->cap : 256;
    while (cap < h->n + extra)
        cap *= 2;
    crew_task **a = realloc(h->a, cap * sizeof *a);
    if (!a)
        return CREW_ENOMEM;
    h->a = a;
    h->cap = cap;
    return CREW_OK;
}

void crew__heap_push(crew__heap *h, crew_task *t) {
    sift_up(h, h->n++, t);
}

crew_task *crew__heap_pop(crew__heap *h) {
    if (h->n == 0)
        return NULL;
    crew_task *top = h->a[0];
    crew_task *last = h->a[--h->n];
    if (h->n > 0)
        sift_down(h, 0, last);
    return top;
}

void crew__heap_remove(crew__heap *h, crew_task *t) {
    size_t i = t->crew_private_.index;
    crew_task *last = h->a[--h->n];
    if (i == h->n)
        return; /* t was the last entry */
    /* The last entry takes t's place and moves whichever way restores the order. */
    if (i > 0 && before(last, h->a[(i - 1) / 2]))
        sift_up(h, i, last);
    else
        sift_down(h, i, last);
}

void crew__heap_free(crew__heap *h) {
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}
