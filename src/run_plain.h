/*
 * run_plain.h -- crew__run_helping's common case inlined into a helping waiter's loop (wait.c):
 * a task of no group with none of the rare kinds' flags (timed, bounded, start-by, an array's
 * runner, a completion callback, a lane's barrier, a blocking task), held by value or in a node
 * (recycled before the call). It does what run_task_in (worker.c) does for such a task, and
 * nothing else: the frame's group and mark, the call under the frame (crew__call_in, the
 * call's one home, which worker.c uses too), and the count (the worker's credit, or the
 * waiter's *finished). Every other task goes to crew__run_helping, out of line.
 */
#ifndef CREW_RUN_PLAIN_H
#define CREW_RUN_PLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "base.h"
#include "group.h"
#include "nodes.h"
#include "pending.h"
#include "sched_calls.h"
#include "worker.h"

/* What running a task needs with or without monitoring, the one home of a task's call (the
 * worker's run_task_in, worker.c, and crew__run_plain_helping below): copy what is needed from
 * t (from here on its memory belongs to its owner again), and run the function in a new frame.
 * OUT: the task's group slot. Returns false, running nothing and keeping t, if its group was
 * cancelled. top: a frame made once by a loop (the worker's worker_ctx.frame: its pool, no
 * frame below, depth 1; a helping waiter's waiter_ctx.frame, wait.c), in which only the group
 * and the mark change per task; NULL elsewhere (a frame on the stack, above the thread's
 * current one). */
static inline __attribute__((always_inline)) bool crew__call_in(crew_pool *p, crew__worker *self,
                                                               crew_task *t,
                                                               uint32_t *slot_out,
                                                               crew__frame *top) {
    crew_fn fn = t->fn;
    void *arg = t->arg;
    uint32_t slot = t->crew_private_.slot;
    *slot_out = slot;
    crew__frame own, *frame = top ? top : &own;
    if (!top) {
        frame->pool = p;
        frame->up = crew__tls_frame;
        frame->depth = crew__tls_frame ? crew__tls_frame->depth + 1 : 1;
    }
    frame->group = (crew_handle){slot, 0};
    frame->mark = crew__sched_mark(p, self);
    if (slot != 0) {
        /* The group is open (this task is unfinished), so its generation is current. Relaxed:
         * the queue that handed us the task ordered the group's opening before it. */
        crew__slot *sl = crew__slot_at(&p->groups, slot);
        frame->group.gen = crew__gen_of(crew__load_relaxed(&sl->state));
        if (__builtin_expect(crew__slot_cancelled(sl, frame->group.gen), 0))
            return false; /* its group was cancelled: the caller drops it */
    }
    if (t->crew_flags_ & CREW__TASK_NODE)
        crew__node_release(p, t);
    crew__debug_yield();

    crew__tls_frame = frame;
    fn(arg);
    crew__tls_frame = frame->up;
    crew__debug_yield();
    return true;
}
/* crew__run_plain_helping's run, for a task the caller knows is plain: no group; no node to
 * release either if value (a constant: a task held by value, whose tests of the node then fold
 * away, as the slot's do; the compiler is told so, as it does not know t's fields). */
static inline __attribute__((always_inline)) void
crew__run_plain_now(crew_pool *p, crew__worker *self, crew_task *t, size_t *finished,
                    crew__frame *top, bool value) {
    crew__assert(t->crew_private_.slot == 0 && (!value || !(t->crew_flags_ & CREW__TASK_NODE)));
    if (t->crew_private_.slot != 0 || (value && (t->crew_flags_ & CREW__TASK_NODE)))
        __builtin_unreachable();
    uint32_t slot;
    (void)crew__call_in(p, self, t, &slot, top); /* slot 0: never cancelled; a node released */
    crew__end_plain(p, self, finished); /* as run_task_in ends a task of no group */
}
/* Run t as crew__run_helping(p, self, t, finished, top, whole) would, if it is plain (no flag
 * but CREW__TASK_COPY or CREW__TASK_NODE, group slot 0): returns true. Else runs nothing:
 * false. finished: the waiter's count (non-NULL); top: its frame (pool, up and depth set). */
static inline __attribute__((always_inline)) bool
crew__run_plain_helping(crew_pool *p, crew__worker *self, crew_task *t, size_t *finished,
                        crew__frame *top) {
    if (__builtin_expect((t->crew_flags_ & ~(CREW__TASK_COPY | CREW__TASK_NODE)) != 0 ||
                             t->crew_private_.slot != 0,
                         0))
        return false;
    crew__run_plain_now(p, self, t, finished, top, false);
    return true;
}

#endif /* CREW_RUN_PLAIN_H */
