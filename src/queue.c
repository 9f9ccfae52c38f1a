/*
 * queue.c -- the pool's task queue: one priority queue shared by all workers (seed 000 §III-B,
 * prioq.c), plus, for every group, a list of its queued tasks, newest first, so that a thread
 * waiting for the group can take the group's own work (crew_wait's help order) without searching.
 *
 * A queued task sits in the priority queue and, if it has a group, in that group's list; taking
 * it removes it from both. Every function here runs with pool->lock held.
 */
#include "atomic.h"
#include "internal.h"

static inline void publish_length(crew_pool *p) {
    /* Relaxed: a hint for spinning workers, who take the lock before they trust it. */
    crew__store_relaxed(&p->queued, p->queue.n);
}

int crew__queue_push_locked(crew_pool *p, crew_task *t, uint32_t slot) {
    int rc = crew__prioq_push(&p->queue, t);
    if (rc != CREW_OK)
        return rc;
    t->crew_private_.slot = slot;
    t->crew_private_.gprev = NULL;
    t->crew_private_.gnext = NULL;
    if (slot != 0) {
        crew__slot *sl = crew__slot_at(&p->groups, slot);
        t->crew_private_.gnext = sl->queued;
        if (sl->queued)
            sl->queued->crew_private_.gprev = t;
        sl->queued = t;
    }
    publish_length(p);
    return CREW_OK;
}

void crew__queue_remove_locked(crew_pool *p, crew_task *t) {
    crew__prioq_remove(&p->queue, t);
    uint32_t slot = t->crew_private_.slot;
    if (slot != 0) {
        crew_task *prev = t->crew_private_.gprev, *next = t->crew_private_.gnext;
        if (prev)
            prev->crew_private_.gnext = next;
        else
            crew__slot_at(&p->groups, slot)->queued = next;
        if (next)
            next->crew_private_.gprev = prev;
    }
    publish_length(p);
}

crew_task *crew__queue_take_locked(crew_pool *p) {
    crew__level *top = p->queue.nlevels ? p->queue.heap[0] : NULL;
    crew_task *t = top ? top->head : NULL;
    if (t)
        crew__queue_remove_locked(p, t);
    return t;
}

crew_task *crew__queue_take_group_locked(crew_pool *p, uint32_t slot) {
    crew_task *t = crew__slot_at(&p->groups, slot)->queued;
    if (t)
        crew__queue_remove_locked(p, t);
    return t;
}

void crew__queue_cancel_all_locked(crew_pool *p) {
    crew_task *t;
    while ((t = crew__queue_take_locked(p)) != NULL) {
        uint32_t slot = t->crew_private_.slot;
        if (t->crew_flags_ & CREW__TASK_COUNTED)
            crew__stats_cancelled_locked(p);
        if (t->crew_flags_ & CREW__TASK_NODE)
            crew__node_release_locked(p, t);
        p->cancelled_any = true;
        crew__task_finished_locked(p, slot, true);
    }
}
