/*
 * queue.c -- the pool's task queue: one priority queue shared by all workers (seed 000 §III-B),
 * plus, for every group, a list of its queued tasks, newest first, so that a thread waiting for
 * the group can take the group's own work (crew_wait's help order) without searching.
 *
 * A queued task sits in the heap and, if it has a group, in that group's list; taking it removes
 * it from both. Every function here runs with pool->lock held.
 */
#include "atomic.h"
#include "internal.h"

void crew__queue_push_locked(crew_pool *p, crew_task *t, uint32_t slot) {
    t->crew_private_.seq = p->next_seq++;
    t->crew_private_.slot = slot;
    t->crew_private_.prev = NULL;
    t->crew_private_.next = NULL;
    if (slot != 0) {
        crew__slot *sl = crew__slot_at(&p->groups, slot);
        t->crew_private_.next = sl->queued;
        if (sl->queued)
            sl->queued->crew_private_.prev = t;
        sl->queued = t;
    }
    crew__heap_push(&p->heap, t);
    /* Relaxed: a hint for spinning workers, who take the lock before they trust it. */
    crew__store_relaxed(&p->queued, p->heap.n);
}

/* Take t out of its group's list. */
static void unlink_from_group(crew_pool *p, crew_task *t) {
    uint32_t slot = t->crew_private_.slot;
    if (slot == 0)
        return;
    crew_task *prev = t->crew_private_.prev, *next = t->crew_private_.next;
    if (prev)
        prev->crew_private_.next = next;
    else
        crew__slot_at(&p->groups, slot)->queued = next;
    if (next)
        next->crew_private_.prev = prev;
}

crew_task *crew__queue_take_locked(crew_pool *p) {
    crew_task *t = crew__heap_pop(&p->heap);
    if (t) {
        unlink_from_group(p, t);
        crew__store_relaxed(&p->queued, p->heap.n); /* relaxed: a hint, as above */
    }
    return t;
}

crew_task *crew__queue_take_group_locked(crew_pool *p, uint32_t slot) {
    crew_task *t = crew__slot_at(&p->groups, slot)->queued;
    if (t) {
        crew__heap_remove(&p->heap, t);
        unlink_from_group(p, t);
        crew__store_relaxed(&p->queued, p->heap.n); /* relaxed: a hint, as above */
    }
    return t;
}

void crew__queue_cancel_all_locked(crew_pool *p) {
    crew_task *t;
    while ((t = crew__queue_take_locked(p)) != NULL) {
        uint32_t slot = t->crew_private_.slot;
        if (t->crew_flags_ & CREW__TASK_NODE)
            crew__node_release_locked(p, t);
        p->cancelled_any = true;
        crew__task_finished_locked(p, slot, true);
    }
}
