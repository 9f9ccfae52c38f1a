/*
 * drop.c -- a task that is not run: dropped (crew_cancel of its group, a cancelling shutdown,
 * a full queue's CREW_FULL_DROP_OLDEST, no memory to queue it) or expired (its start-by time
 * passed). Whoever finds such a task calls here; the task's kind (kind.h) says what its drop
 * means where it differs from a plain task's.
 *
 * A dropped task gives back its place in the bounded queue and its node, is counted in the
 * statistics, reported to on_drop (a special kind instead does its own: a lane's runner drops
 * its lane's tasks, an array's runner its unclaimed tasks, a join's half goes back to its
 * caller, a timer's run reports the timer's fn and arg), and then ends in its group and in
 * pending like a task that ran, so that its waiters see it end (a kind outside its group, an
 * array's runner, in pending only). crew_cancel is here too (at the end): it drops what the
 * queues can give up at once, and the rest is dropped here as it comes up.
 */
#include "drop.h"

#include "bounded.h"
#include "kind.h"
#include "nodes.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "stats.h"
#include "worker.h"

void crew__on_drop(crew_pool *p, uint32_t slot, crew_fn fn, void *arg) {
    if (!p->hooks.on_drop)
        return;
    crew__frame frame = {p, crew__tls_frame, crew__tls_frame ? crew__tls_frame->depth + 1 : 1,
                         {slot, 0}, crew__sched_mark(p, crew__self(p))};
    if (slot != 0) { /* the group is open: the task is unfinished. Relaxed: as in worker.c */
        crew__slot *sl = crew__slot_at(&p->groups, slot);
        frame.group.gen = crew__gen_of(crew__load_relaxed(&sl->state));
    }
    crew__tls_frame = &frame;
    p->hooks.on_drop(fn, arg, p->hooks.arg);
    crew__tls_frame = frame.up;
}

/* Drop t of kind k (never run it): give back its place in the bounded queue and its node,
 * count it, hand it to on_drop or its kind, then end it in its group and in pending. The place
 * and the node go back before on_drop, so that an on_drop that submits finds the pool as if t
 * were gone (it would otherwise wait for a place t still held); t is not read after that.
 * on_drop runs in a frame of its own, as a task of t's group would: calls that would wait for
 * t itself (crew_wait_all, crew_wait on t's group, crew_shutdown, crew_destroy) return
 * CREW_EDEADLK instead of hanging, and t's group has not finished yet, so a waiter cannot free
 * task_arg under on_drop. */
static void drop(crew_pool *p, crew_task *t, const crew__kind *k, enum crew__end how,
                 bool by_shutdown) {
    uint32_t slot = t->crew_private_.slot, flags = t->crew_flags_;
    crew_fn fn = t->fn;
    void *arg = t->arg;
    if (k && k->not_lost)
        how = CREW__RAN; /* not lost: a join's caller runs it, an array's tasks count apart */
    if (k && k->outside_group)
        slot = 0; /* no unit of its group: its slot may be a later group's (kind.h) */
    if (flags & CREW__TASK_BOUNDED)
        crew__bounded_release(p);
    if ((flags & CREW__TASK_COUNTED) && how != CREW__RAN)
        crew__stats_dropped(p, how);
    if (flags & CREW__TASK_NODE)
        crew__node_release(p, t);
    if (k && how == CREW__EXPIRED && k->expired)
        k->expired(p, arg, slot);
    else if (k && k->dropped)
        k->dropped(p, arg, slot, by_shutdown);
    else
        crew__on_drop(p, slot, fn, arg);
    crew__tasks_finished(p, slot, 1, how);
}

void crew__task_dropped(crew_pool *p, crew_task *t, bool by_shutdown) {
    const crew__kind *k = crew__kind_of(t);
    /* Relaxed: see struct crew_pool. A kind that is no task lost (kind.h) loses none here. */
    if (by_shutdown && !(k && k->not_lost))
        crew__store_relaxed(&p->shutdown_dropped, true);
    drop(p, t, k, CREW__LOST, by_shutdown);
}

void crew__not_started(crew_pool *p, uint32_t slot, crew_fn fn, void *arg, bool by_shutdown) {
    if (by_shutdown) /* relaxed: see struct crew_pool */
        crew__store_relaxed(&p->shutdown_dropped, true);
    if (slot != 0)
        crew__group_lost(&p->groups, slot);
    crew__on_drop(p, slot, fn, arg);
}

void crew__task_expired(crew_pool *p, crew_task *t) {
    drop(p, t, crew__kind_of(t), CREW__EXPIRED, false); /* too late to start: group told */
}

/* crew_cancel: the group stops taking tasks, and its queued ones are dropped (here, as they
 * come up). */
int crew_cancel(crew_pool *p, crew_handle group) {
    if (!p || !crew__handle_valid(&p->groups, group))
        return crew__fail_handle(CREW_EINVAL, "crew_cancel", p, group);
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_cancel: " CREW__FORKED_DETAIL);
    int rc = crew__group_cancel(&p->groups, group);
    if (rc != CREW_OK && !crew__gen_issued(crew__slot_at(&p->groups, crew__slot_index(group.slot)),
                                           group.gen))
        return crew__fail_handle(CREW_EINVAL, "crew_cancel", p, group);
    if (rc != CREW_OK) /* CREW_ESTALE: it finished */
        return crew__fail(rc, "crew_cancel: the group {%u, %u} has already finished; nothing is "
                              "left to cancel",
                          group.slot, group.gen);
    /* Queued tasks that queues can give up go now; those in deques when they come up. */
    crew__sched_cancel_group(p, crew__slot_index(group.slot), group.gen);
    return CREW_OK;
}
