/*
 * lq.c -- a priority queue under a lock (lq.h says what it is for and who uses it).
 */
#include <stdlib.h>

#include "lq.h"

int crew__lq_init(crew__lq *q, crew__slotmap *slots, bool spin, bool groups) {
    q->q = (crew__prioq){0};
    crew__atomic_init(&q->n, 0);
    crew__atomic_init(&q->top, UINT32_MAX);
    q->slots = slots;
    q->groups = groups;
    q->closed = false;
    return crew__lock_init(&q->lock, spin) == 0 ? CREW_OK : CREW_ENOMEM;
}

void crew__lq_free(crew__lq *q) {
    crew__prioq_free(&q->q);
    crew__lock_destroy(&q->lock);
}

/* Mirror the length and best priority for lock-free readers. Lock held. */
static inline void publish(crew__lq *q) {
    /* Relaxed: hints read without the lock; a reader that must not miss a task (a thread about
     * to sleep) orders its read with the eventcount's fence against the pusher's (ec.h). */
    crew__store_relaxed(&q->n, q->q.n);
    crew__store_relaxed(&q->top, crew__prioq_top(&q->q));
}

/* Link t into its group's list of queued tasks (queues with group lists). Lock held. */
static void group_link(crew__lq *q, crew_task *t) {
    uint32_t slot = t->crew_private_.slot;
    t->crew_private_.gprev = NULL;
    t->crew_private_.gnext = NULL;
    if (slot == 0)
        return;
    crew__slot *sl = crew__slot_at(q->slots, slot);
    t->crew_private_.gnext = sl->queued;
    if (sl->queued)
        sl->queued->crew_private_.gprev = t;
    sl->queued = t;
}

static void group_unlink(crew__lq *q, crew_task *t) {
    uint32_t slot = t->crew_private_.slot;
    if (slot == 0)
        return;
    crew_task *prev = t->crew_private_.gprev, *next = t->crew_private_.gnext;
    if (prev)
        prev->crew_private_.gnext = next;
    else
        crew__slot_at(q->slots, slot)->queued = next;
    if (next)
        next->crew_private_.gprev = prev;
}

/* Queues without group lists count, per group, the tasks they hold (crew__slot.scattered), so
 * a waiter searches them only when its group has a task queued there. */
static inline void scatter(crew__lq *q, const crew_task *t, int d) {
    uint32_t slot = t->crew_private_.slot;
    if (slot != 0) /* relaxed: a count ordered by the queue's lock and the sleep protocol */
        crew__fetch_add_relaxed(&crew__slot_at(q->slots, slot)->scattered, (unsigned)d);
}

/* t was queued in q (lock held): now it is in its group's books. */
static inline void track(crew__lq *q, crew_task *t) {
    if (q->groups)
        group_link(q, t);
    else
        scatter(q, t, 1);
}

static void remove_locked(crew__lq *q, crew_task *t) {
    crew__prioq_remove(&q->q, t);
    if (q->groups)
        group_unlink(q, t);
    else
        scatter(q, t, -1);
}

static crew_task *pop_locked(crew__lq *q) {
    crew_task *t = q->q.nlevels ? q->q.heap[0]->head : NULL;
    if (t)
        remove_locked(q, t);
    return t;
}

int crew__lq_push_n(crew__lq *q, crew_task *t, size_t n) {
    crew__lock_acquire(&q->lock);
    if (q->closed) {
        crew__lock_release(&q->lock);
        return CREW_ESHUTDOWN;
    }
    for (size_t i = 0; i < n; i++) {
        if (crew__prioq_push(&q->q, &t[i]) != CREW_OK) {
            while (i-- > 0)
                remove_locked(q, &t[i]);
            crew__lock_release(&q->lock);
            return CREW_ENOMEM;
        }
        track(q, &t[i]);
    }
    publish(q);
    crew__lock_release(&q->lock);
    return CREW_OK;
}

static int cmp_lq(const void *a, const void *b) {
    const crew__lq *x = *(crew__lq *const *)a, *y = *(crew__lq *const *)b;
    return x < y ? -1 : x > y;
}

/* All or nothing by holding every target's lock at once, taken in address order (so two such
 * pushes cannot deadlock, and single-queue operations take one lock at a time): no other thread
 * sees any of the tasks until all are in, so a failure part-way can take them all back. */
int crew__lq_push_spread(crew__lq **q, unsigned m, crew_task *t, size_t n) {
    size_t pushed[CREW__LQ_SPREAD_MAX] = {0}; /* tasks queued in q[i], from t + first[i] */
    size_t first[CREW__LQ_SPREAD_MAX] = {0};
    qsort(q, m, sizeof *q, cmp_lq);
    for (unsigned i = 0; i < m; i++)
        crew__lock_acquire(&q[i]->lock);
    unsigned open = 0;
    for (unsigned i = 0; i < m; i++)
        open += !q[i]->closed;
    int rc = open ? CREW_OK : CREW_ESHUTDOWN;
    size_t done = 0, slices = open < n ? open : n;
    for (unsigned i = 0, s = 0; i < m && rc == CREW_OK && done < n; i++) {
        if (q[i]->closed)
            continue;
        size_t len = n / slices + (s++ < n % slices);
        first[i] = done;
        for (; pushed[i] < len; pushed[i]++) {
            if (crew__prioq_push(&q[i]->q, &t[done + pushed[i]]) != CREW_OK) {
                rc = CREW_ENOMEM;
                break;
            }
            track(q[i], &t[done + pushed[i]]);
        }
        done += pushed[i];
    }
    for (unsigned i = m; i-- > 0;) {
        if (rc != CREW_OK) /* nobody saw them: take them all back */
            for (size_t k = 0; k < pushed[i]; k++)
                remove_locked(q[i], &t[first[i] + k]);
        publish(q[i]);
        crew__lock_release(&q[i]->lock);
    }
    return rc;
}

crew_task *crew__lq_take(crew__lq *q) {
    if (crew__lq_len(q) == 0)
        return NULL;
    crew__lock_acquire(&q->lock);
    crew_task *t = pop_locked(q);
    if (t)
        publish(q);
    crew__lock_release(&q->lock);
    return t;
}

crew_task *crew__lq_try_take(crew__lq *q) {
    if (crew__lq_len(q) == 0 || !crew__lock_try(&q->lock))
        return NULL;
    crew_task *t = pop_locked(q);
    if (t)
        publish(q);
    crew__lock_release(&q->lock);
    return t;
}

crew_task *crew__lq_take_group(crew__lq *q, uint32_t slot) {
    if (crew__lq_len(q) == 0)
        return NULL;
    crew__lock_acquire(&q->lock);
    crew_task *t = q->groups ? crew__slot_at(q->slots, slot)->queued
                             : crew__prioq_find_newest(&q->q, slot);
    if (t) {
        remove_locked(q, t);
        publish(q);
    }
    crew__lock_release(&q->lock);
    return t;
}

int crew__lq_requeue(crew__lq *q, crew_task *t) {
    crew__lock_acquire(&q->lock);
    int rc = crew__prioq_push_front(&q->q, t);
    if (rc == CREW_OK) {
        track(q, t);
        publish(q);
    }
    crew__lock_release(&q->lock);
    return rc;
}

void crew__lq_set_closed(crew__lq *q, bool closed) {
    crew__lock_acquire(&q->lock);
    q->closed = closed;
    crew__lock_release(&q->lock);
}

size_t crew__lq_take_batch(crew__lq *q, crew_task **out, size_t max) {
    size_t n = 0;
    crew__lock_acquire(&q->lock);
    if (max > q->q.n / 2) /* at most half of what is queued: leave some for the others */
        max = q->q.n / 2;
    if (q->q.nlevels) {
        uint32_t prio = crew__prioq_top(&q->q);
        do
            out[n++] = pop_locked(q);
        while (n < max && q->q.nlevels && crew__prioq_top(&q->q) == prio);
        publish(q);
    }
    crew__lock_release(&q->lock);
    return n;
}
