/*
 * deque.h -- the Chase-Lev work-stealing deque (deque.c), for STEAL's workers and external slots.
 */
#ifndef CREW_DEQUE_H
#define CREW_DEQUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "crew.h"

typedef struct crew__deque_array {
    size_t mask;                       /* slots - 1; slots is a power of two */
    struct crew__deque_array *older;   /* the array this one replaced (freed with the deque) */
    crew_task *_Atomic slot[];         /* relaxed: published through bottom (see deque.c) */
} crew__deque_array;

typedef struct crew__deque {
    /* The next task to steal; thieves advance it with seq_cst CAS (deque.c). */
    _Alignas(64) _Atomic int64_t top;
    /* One past the newest task; written only by the owner, with release stores (deque.c). */
    _Alignas(64) _Atomic int64_t bottom;
    /* The current array; release-published by the owner when it grows, acquired by thieves. */
    crew__deque_array *_Atomic array;
} crew__deque;

int crew__deque_init(crew__deque *d);
void crew__deque_free(crew__deque *d);
/* Owner: push t[0..n) (all or nothing: CREW_OK or CREW_ENOMEM). */
int crew__deque_push(crew__deque *d, crew_task *t, size_t n);
/* Owner: push one task; inlined, since it is on every submission's path. The array is full
 * only when the deque has never held this many tasks: then the general push grows it. The
 * memory orders are push's in deque.c (relaxed bottom and array: the owner's own; acquire top:
 * the slots thieves freed are ours; release bottom: publishes the task). */
static inline int crew__deque_push1(crew__deque *d, crew_task *t) {
    int64_t b = crew__load_relaxed(&d->bottom);
    int64_t top = crew__load_acquire(&d->top);
    crew__deque_array *a = crew__load_relaxed(&d->array);
    if (__builtin_expect((size_t)(b - top) > a->mask, 0))
        return crew__deque_push(d, t, 1);
    crew__store_relaxed(&a->slot[(size_t)b & a->mask], t);
    crew__store_release(&d->bottom, b + 1);
    return CREW_OK;
}
int crew__deque_push_ptrs(crew__deque *d, crew_task *const *v, size_t n); /* *v[0..n) */
/* Owner: make room for n more tasks now, so a later push of at most n cannot fail. */
int crew__deque_reserve(crew__deque *d, size_t n);
crew_task *crew__deque_take_claim(crew__deque *d); /* crew__deque_take's claim (deque.c) */
/* Owner: the newest task, or NULL. Inlined: an empty deque needs no claim and no fence. Top
 * never decreases and only the owner moves bottom, so a top at or past bottom, however stale
 * (relaxed), proves it empty; a stale lower top takes the claim. Most takes of a worker fed
 * from outside find its own deque empty. */
static inline crew_task *crew__deque_take(crew__deque *d) {
    if (crew__load_relaxed(&d->top) >= crew__load_relaxed(&d->bottom))
        return NULL;
    return crew__deque_take_claim(d);
}
/* Anyone: the oldest task, or NULL; *contended is set when a race was lost. */
crew_task *crew__deque_steal(crew__deque *d, bool *contended);
/* An estimate (relaxed loads; callers that must not miss a task order it with a fence first);
 * inlined, since thieves test every deque with it before they try a steal. */
static inline size_t crew__deque_size(crew__deque *d) {
    int64_t b = crew__load_relaxed(&d->bottom);
    int64_t t = crew__load_relaxed(&d->top);
    return b > t ? (size_t)(b - t) : 0;
}
int64_t crew__deque_top(crew__deque *d);  /* the index of the oldest task (relaxed) */

#endif /* CREW_DEQUE_H */
