/*
 * lq.h -- a priority queue under a lock: the queue of every strategy that is not a deque (the
 * SHARED queue, STEAL's injection queue, each PER_WORKER queue, each MultiQueue queue, the
 * blocking tasks' queue).
 *
 * A crew__lq is a prioq.c heap of FIFO levels under a crew__lock (a mutex or a spinlock, as
 * crew_config.lock says), with its length and best priority mirrored in relaxed atomics so that
 * empty queues are skipped without the lock. It also lets a waiter find its own group's tasks:
 * a queue made with group lists (the central queue of SHARED and STEAL) links each group's
 * queued tasks through crew_private_.gnext/gprev from the group's slot, so the group's newest
 * task is found in O(1); the other queues count per group how many of its tasks they hold
 * (crew__slot.scattered), and search their levels only for a group that has some.
 *
 * Every function takes the queue's lock itself, except those named _locked. Several queue
 * locks are taken together only by crew__lq_push_spread, in address order.
 */
#ifndef CREW_LQ_H
#define CREW_LQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "crew.h"
#include "group.h"
#include "lock.h"
#include "prioq.h"

typedef struct crew__lq {
    _Alignas(64) crew__lock lock;
    crew__prioq q; /* lock */
    /* q.n and the best queued priority (UINT32_MAX if none), stored under the lock and read
     * without it (relaxed): hints, except where a sleeper orders its read with the eventcount's
     * fence against the pusher's (ec.h). */
    _Atomic size_t n;
    _Atomic uint32_t top;
    crew__slotmap *slots; /* fixed: the pool's groups, for group lists and scattered counts */
    bool groups;          /* fixed: keeps each group's list of queued tasks */
    bool closed;          /* lock: a PER_WORKER queue whose worker exited takes no pushes */
} crew__lq;

/* CREW_OK or CREW_ENOMEM. spin: a spinlock rather than a mutex. */
int crew__lq_init(crew__lq *q, crew__slotmap *slots, bool spin, bool groups);
void crew__lq_free(crew__lq *q);

/* Tasks queued: a hint (relaxed), exact under the lock. */
static inline size_t crew__lq_len(crew__lq *q) { return crew__load_relaxed(&q->n); }
/* The best queued priority, UINT32_MAX if none: a hint (relaxed). */
static inline uint32_t crew__lq_top(crew__lq *q) { return crew__load_relaxed(&q->top); }

/* Push t[0..n), all or nothing: CREW_OK, CREW_ENOMEM, or CREW_ESHUTDOWN if q is closed. */
int crew__lq_push_n(crew__lq *q, crew_task *t, size_t n);
/* Push t[0..n) spread in contiguous slices over the m distinct queues q[] (1 <= m <=
 * CREW__LQ_SPREAD_MAX; q[] is sorted in place), all or nothing; closed queues are skipped.
 * CREW_OK, CREW_ENOMEM or CREW_ESHUTDOWN (every target closed). */
#define CREW__LQ_SPREAD_MAX 64u
int crew__lq_push_spread(crew__lq **q, unsigned m, crew_task *t, size_t n);
/* The best task (highest priority, oldest), or NULL. */
crew_task *crew__lq_take(crew__lq *q);
/* The same, but NULL at once if the lock is held (the MultiQueue's try-lock). */
crew_task *crew__lq_try_take(crew__lq *q);
/* The newest queued task of group slot, or NULL. */
crew_task *crew__lq_take_group(crew__lq *q, uint32_t slot);
/* Put back a task taken from a queue, first of its priority: CREW_OK, or CREW_ENOMEM if its
 * level had gone and could not be made again (the caller then runs the task instead). */
int crew__lq_requeue(crew__lq *q, crew_task *t);
/* Open or close q to pushes (PER_WORKER: a worker's queue while it runs). */
void crew__lq_set_closed(crew__lq *q, bool closed);

/* Take a batch of the best tasks into out[] (oldest first), all of one priority: at least one
 * if any is queued, and at most max and half of what is queued. Returns how many. */
size_t crew__lq_take_batch(crew__lq *q, crew_task **out, size_t max);

/* Does a queue without group lists hold tasks of group slot? (A hint.) */
static inline bool crew__lq_scattered(crew__slotmap *slots, uint32_t slot) {
    return crew__load_relaxed(&crew__slot_at(slots, slot)->scattered) != 0; /* relaxed: a hint */
}

#endif /* CREW_LQ_H */
