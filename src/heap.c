/*
 * heap.c -- the due heap (heap.h): where delayed tasks and periodic timers' runs wait for their
 * time, 4-ary on the algorithm of heap.h, each entry's index kept in its task. timer.c says
 * why a heap and not a timing wheel, and holds its lock around every call.
 */
#include <stdlib.h>

#include "heap.h"

/* Earlier due time first, then the earlier entry (sequence numbers compared modulo 2^32). */
static inline bool before(const void *a, const void *b) {
    const crew__tent *x = a, *y = b;
    return x->when < y->when || (x->when == y->when && (int32_t)(x->seq - y->seq) < 0);
}
static inline void placed(void *e, size_t i) {
    ((crew__tent *)e)->task->crew_private_.spare = (uint32_t)i;
}
/* 4-ary: each level a quarter as deep as a binary heap's, and a node's children on one cache
 * line (fewer misses when a million entries do not fit in the cache). */
static const crew__heap_kind kind = {sizeof(crew__tent), 4, before, placed};

int crew__theap_reserve(crew__theap *h, size_t need) {
    if (need <= h->cap)
        return CREW_OK;
    if (need > UINT32_MAX) /* indices are kept in 32 bits */
        return CREW_ENOMEM;
    size_t cap = h->cap ? h->cap : 64;
    while (cap < need)
        cap *= 2;
    crew__tent *e = realloc(h->e, cap * sizeof *e);
    if (!e)
        return CREW_ENOMEM;
    h->e = e;
    h->cap = cap;
    return CREW_OK;
}

bool crew__theap_insert(crew__theap *h, crew_task *t, uint64_t when, uint32_t slot) {
    crew__assert(h->n < h->cap);
    crew__tent e = {when, h->seq++, slot, t};
    crew__heap_sift_up(&kind, h->e, h->n++, &e);
    return h->e[0].task == t;
}

void crew__theap_shrink(crew__theap *h, size_t keep) {
    size_t cap = h->cap;
    while (cap > 1024 && h->n < cap / 4 && keep < cap / 2)
        cap /= 2;
    if (cap == h->cap)
        return;
    crew__tent *e = realloc(h->e, cap * sizeof *e);
    if (e) {
        h->e = e;
        h->cap = cap;
    }
}

void crew__theap_remove_at(crew__theap *h, size_t i) {
    crew__assert(i < h->n);
    crew__tent last = h->e[--h->n];
    if (i != h->n)
        crew__heap_fix(&kind, h->e, h->n, i, &last);
}

void crew__theap_filter(crew__theap *h, bool (*out)(void *ctx, const crew__tent *e), void *ctx) {
    size_t kept = 0;
    for (size_t i = 0; i < h->n; i++)
        if (!out(ctx, &h->e[i]))
            h->e[kept++] = h->e[i];
    if (kept == h->n)
        return;
    h->n = kept;
    crew__heap_build(&kind, h->e, kept);
}

void crew__theap_free(crew__theap *h) {
    free(h->e);
    *h = (crew__theap){0};
}
