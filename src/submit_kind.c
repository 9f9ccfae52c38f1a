/*
 * submit_kind.c -- the submissions a task kind makes from inside a running task of the pool (a
 * graph run's successors, graph_run.c): one more task of a group known to be open, queued as
 * crew_submit queues one (or as crew_submit_with queues one with a lane or a start-by time),
 * without the bounded queue's admission, timing or a detail text. The public calls' core is
 * submit.c's.
 */
#include "atomic.h"
#include "group.h"
#include "lane.h"
#include "nodes.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "submit.h"
#include "wake.h"

int crew__submit_in_group(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle h) {
    uint32_t slot = crew__slot_index(h.slot);
    if (slot != 0) {
        int rc = crew__group_add(&p->groups, h, 1);
        if (rc != CREW_OK)
            return rc == CREW_ESTALE ? CREW_ECANCELED : rc; /* open: ESTALE cannot happen */
    }
    crew__worker *self = crew__self(p);
    crew__pending_add(p, self, 1); /* then the seq_cst load of the state: see submit.c enqueue */
    int rc = crew__load_seq_cst(&p->state) == CREW__OPEN
                 ? crew__sched_push_value(p, self, fn, arg, priority, slot)
                 : CREW_ESHUTDOWN;
    if (rc != CREW_OK) {
        crew__tasks_finished(p, slot, 1, CREW__RAN); /* never queued: the group stays open */
        return rc;
    }
    crew__wake_work(p, 1, slot);
    return CREW_OK;
}

int crew__submit_in_group_opts(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                               crew_handle h, uint64_t start_by, crew_lane *lane) {
    /* A forked child (a node forked and the child went on): no lock of the parent's threads
     * (a lane's, the pool's in the wake-up) is taken; the run stops, as on any refusal. */
    if (__builtin_expect(crew__forked(p), 0))
        return CREW_EFORKED;
    uint32_t slot = crew__slot_index(h.slot);
    crew_task *t = crew__node_of(p, fn, arg, priority, slot);
    if (!t)
        return CREW_ENOMEM;
    if (start_by != 0) {
        ((crew__node *)t)->start_by = start_by;
        t->crew_flags_ |= CREW__TASK_DEADLINE;
    }
    if (slot != 0) {
        int rc = crew__group_add(&p->groups, h, 1);
        if (rc != CREW_OK) {
            crew__node_release(p, t);
            return rc == CREW_ESTALE ? CREW_ECANCELED : rc; /* open: ESTALE cannot happen */
        }
    }
    /* No look at the pool's state: the caller's task holds a unit of pending, so a draining
     * pool's workers stay until this task has run (or been dropped, if the shutdown cancels). */
    crew__pending_add(p, crew__self(p), 1);
    if (lane) {
        if (crew__lane_push(lane, t))
            crew__lane_start(lane);
        return CREW_OK;
    }
    int rc = crew__sched_push(p, t, 1);
    if (rc != CREW_OK) {
        crew__node_release(p, t);
        crew__tasks_finished(p, slot, 1, CREW__RAN); /* never queued: the group stays open */
        return rc;
    }
    crew__wake_work(p, 1, slot);
    return CREW_OK;
}
