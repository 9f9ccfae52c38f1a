/*
 * heap.c -- an implicit binary min-heap of tasks (seed 000 §III-B: "a generic priority queue
 * utilizing an implicit heap"), ordered by priority and then by submission sequence, so equal
 * priorities leave first-in-first-out.
 *
 * Entries carry their keys (priority, sequence) next to the task pointer, so sifting compares
 * within the array instead of chasing pointers into tasks scattered over memory. Each task
 * records its index (crew_private_.index) so a waiter can pull a queued task of its own group out
 * of the middle in O(log n). Pop uses the bottom-up variant (the hole descends along the smaller
 * children to a leaf, then the last entry rises from there), which needs about half the
 * comparisons of the textbook sift-down because the last entry usually belongs near the bottom.
 * Not thread-safe: the caller holds the queue's lock.
 */
#include <stdlib.h>

#include "internal.h"

static inline bool before(const crew__heap_entry *a, const crew__heap_entry *b) {
    if (a->priority != b->priority)
        return a->priority < b->priority;
    return a->seq < b->seq;
}

static inline void place(crew__heap *h, size_t i, crew__heap_entry e) {
    h->a[i] = e;
    e.task->crew_private_.index = (uint32_t)i;
}

static void sift_up(crew__heap *h, size_t i, crew__heap_entry e) {
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&e, &h->a[parent]))
            break;
        place(h, i, h->a[parent]);
        i = parent;
    }
    place(h, i, e);
}

static void sift_down(crew__heap *h, size_t i, crew__heap_entry e) {
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->n)
            break;
        if (child + 1 < h->n && before(&h->a[child + 1], &h->a[child]))
            child++;
        if (!before(&h->a[child], &e))
            break;
        place(h, i, h->a[child]);
        i = child;
    }
    place(h, i, e);
}

/* Fill the hole at i with e: move the hole down to a leaf along the smaller children, then let e
 * rise from there. */
static void fill_bottom_up(crew__heap *h, size_t i, crew__heap_entry e) {
    size_t child;
    while ((child = 2 * i + 1) < h->n) {
        if (child + 1 < h->n && before(&h->a[child + 1], &h->a[child]))
            child++;
        place(h, i, h->a[child]);
        i = child;
    }
    sift_up(h, i, e);
}

int crew__heap_reserve(crew__heap *h, size_t extra) {
    if (extra > UINT32_MAX || h->n + extra > UINT32_MAX)
        return CREW_ERANGE; /* positions are stored in 32 bits */
    if (h->n + extra <= h->cap)
        return CREW_OK;
    size_t cap = h->cap ? h->cap : 256;
    while (cap < h->n + extra)
        cap *= 2;
    crew__heap_entry *a = realloc(h->a, cap * sizeof *a);
    if (!a)
        return CREW_ENOMEM;
    h->a = a;
    h->cap = cap;
    return CREW_OK;
}

void crew__heap_push(crew__heap *h, crew_task *t) {
    crew__heap_entry e = {t->crew_private_.seq, t->priority, t};
    sift_up(h, h->n++, e);
}

crew_task *crew__heap_pop(crew__heap *h) {
    if (h->n == 0)
        return NULL;
    crew_task *top = h->a[0].task;
    crew__heap_entry last = h->a[--h->n];
    if (h->n > 0)
        fill_bottom_up(h, 0, last);
    return top;
}

void crew__heap_remove(crew__heap *h, crew_task *t) {
    size_t i = t->crew_private_.index;
    crew__heap_entry last = h->a[--h->n];
    if (i == h->n)
        return; /* t was the last entry */
    /* The last entry takes t's place and moves whichever way restores the order. */
    if (i > 0 && before(&last, &h->a[(i - 1) / 2]))
        sift_up(h, i, last);
    else
        sift_down(h, i, last);
}

void crew__heap_free(crew__heap *h) {
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}
