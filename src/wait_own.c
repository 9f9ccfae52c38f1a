/*
 * wait_own.c -- the helping wait's first steps for a worker with a deque of its own (the
 * default strategy, sched_steal.c) that waits for a group its task has just filled: the tasks
 * it queued itself run here, one after another, before wait.c's general loop (which finishes
 * the wait). A task that queues an array and waits for it (crew_enqueue_tasks, then crew_wait)
 * so costs about what crew_enqueue_tasks_wait does. The same for any other waiter (a thread
 * outside the pool, a worker of another strategy): the tasks of its group that the strategy's
 * group take finds (crew__wait_group_first). Out of wait.c, whose general loop they precede,
 * as calls of their own (never inlined there: the rare case of a wait).
 */
#include "atomic.h"
#include "group.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "steal_join.h"
#include "trace.h"
#include "wake.h"
#include "wait.h"
#include "worker.h"

/* A cancelled group's task, a flagged one or another group's, that the own-group loop took: run
 * the general way (out of line: rare). Returns whether group (sl) is open still: once it ended,
 * its slot may hold a later group, whose tasks (and cancel) that loop must not take as its. */
static __attribute__((noinline)) bool own_other(crew_pool *p, crew__worker *self, crew_task *t,
                                                crew_handle group, crew__slot *sl) {
    crew__run_helping(p, self, t, NULL, NULL, group.slot);
    return crew__slot_status(sl, group.gen) == 1;
}

/* The helping wait's first steps for a worker with a deque of its own (the default strategy)
 * that waits for group (sl its slot): the tasks on top of that deque, above mark (those it
 * queued itself, as a task that queues an array and waits for it does), newest first, run here
 * one after another in one frame, without the general loop's looks between them, and the plain
 * ones of the group ended in it together once none is left, or before any other task runs
 * here (one decrement of the group's count and of pending: the group ends no later for it, as a
 * task of the group runs on this thread the whole time, but for the one look that finds no
 * more). Stops on a pause, a resize's mark, a cancelling shutdown, a trace, or the group's end
 * (own_other); other tasks go the general way (own_other). Then wait_loop finishes the wait. */
void crew__wait_own_first(crew_pool *p, crew__worker *self, struct crew__steal_local *own,
                          crew_handle group, crew__slot *sl, int64_t mark) {
    crew__frame *up = crew__tls_frame;
    crew__frame f = {.pool = p, .up = up, .group = group, .depth = up ? up->depth + 1 : 1};
    size_t ran = 0;
    crew_task buf, *t;
    /* Relaxed: paused and cancelling, see struct crew_pool; the worker's own state. */
    while (!crew__load_relaxed(&p->paused) && !crew__load_relaxed(&p->cancelling) &&
           crew__load_relaxed(&self->state) == CREW__W_RUNNING && !crew__tracing(p) &&
           (t = crew__steal_take_above(own, mark, &buf)) != NULL) {
        /* A plain task (by address, no flag, or by value, a copy): no node, timed or kind. */
        if (__builtin_expect((t->crew_flags_ & ~CREW__TASK_COPY) != 0 ||
                                 t->crew_private_.slot != group.slot ||
                                 crew__slot_cancelled(sl, group.gen),
                             0)) {
            if (ran) /* ended first: that task may wait for the group */
                crew__tasks_finished(p, group.slot, ran, CREW__RAN);
            ran = 0;
            if (!own_other(p, self, t, group, sl))
                return; /* ran is 0 */
            continue;
        }
        crew_fn fn = t->fn; /* read before it starts: then t is its owner's again */
        void *arg = t->arg;
        f.mark = crew__sched_mark(p, self);
        crew__debug_yield();
        crew__tls_frame = &f;
        fn(arg);
        crew__tls_frame = up;
        crew__debug_yield();
        ran++;
    }
    if (ran)
        crew__tasks_finished(p, group.slot, ran, CREW__RAN);
}


/* crew__wait_own_first for a waiter without a deque of its own (self NULL: a thread outside the
 * pool; or a worker of a strategy other than STEAL): the tasks of group that the strategy's group
 * take finds (crew__sched_take_group_as, as wait.c's loop takes them first: under STEAL, from
 * outside, the newest task of the thread's external slot if it is of group), run here one
 * after another in one frame, the plain ones of the group ended in it together once the take
 * finds none, or before any other task runs here, as crew__wait_own_first ends them. A task
 * that is not plain, not of group, or of a cancelled group goes the general way (own_other);
 * one that a pause or a cancelling shutdown holds back (crew__held_back) goes back, and the
 * loop stops; so do a trace and a worker's mark. Then wait_loop finishes the wait. */
void crew__wait_group_first(crew_pool *p, crew__worker *self, crew_handle group, crew__slot *sl,
                            int64_t mark) {
    crew__frame *up = crew__tls_frame;
    crew__frame f = {.pool = p, .up = up, .group = group, .depth = up ? up->depth + 1 : 1};
    size_t ran = 0;
    crew__take_ctx tc = {.may_batch = false}; /* a waiter claims no batch (wait.c) */
    crew_task *t;
    /* Relaxed: the worker's own state. */
    while ((!self || crew__load_relaxed(&self->state) == CREW__W_RUNNING) && !crew__tracing(p) &&
           (t = crew__sched_take_group_as(p, self, group.slot, mark, &tc)) != NULL) {
        if (crew__held_back(p, t, &tc.pushed_back))
            break; /* a pause or a cancelling shutdown: the general loop decides */
        if (__builtin_expect(tc.pushed_back != 0, 0)) /* the take put tasks back: wake */
            crew__wake_pushed_back(p, &tc.pushed_back);
        if (__builtin_expect((t->crew_flags_ & ~CREW__TASK_COPY) != 0 ||
                                 t->crew_private_.slot != group.slot ||
                                 crew__slot_cancelled(sl, group.gen),
                             0)) {
            if (ran) /* ended first: that task may wait for the group */
                crew__tasks_finished(p, group.slot, ran, CREW__RAN);
            ran = 0;
            if (!own_other(p, self, t, group, sl))
                break; /* ran is 0 */
            continue;
        }
        crew_fn fn = t->fn; /* read before it starts: a copy the next take may overwrite */
        void *arg = t->arg;
        f.mark = crew__sched_mark(p, self);
        crew__debug_yield();
        crew__tls_frame = &f;
        fn(arg);
        crew__tls_frame = up;
        crew__debug_yield();
        ran++;
    }
    if (ran)
        crew__tasks_finished(p, group.slot, ran, CREW__RAN);
    if (tc.pushed_back)
        crew__wake_pushed_back(p, &tc.pushed_back);
}
