/*
 * deque.h -- the Chase-Lev work-stealing deque (deque.c), for STEAL's workers and external slots.
 */
#ifndef CREW_DEQUE_H
#define CREW_DEQUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
int crew__deque_push_ptrs(crew__deque *d, crew_task *const *v, size_t n); /* *v[0..n) */
/* Owner: make room for n more tasks now, so a later push of at most n cannot fail. */
int crew__deque_reserve(crew__deque *d, size_t n);
crew_task *crew__deque_take(crew__deque *d); /* owner: the newest task, or NULL */
/* Anyone: the oldest task, or NULL; *contended is set when a race was lost. */
crew_task *crew__deque_steal(crew__deque *d, bool *contended);
size_t crew__deque_size(crew__deque *d); /* an estimate (relaxed loads) */
int64_t crew__deque_top(crew__deque *d);  /* the index of the oldest task (relaxed) */

#endif /* CREW_DEQUE_H */
