/*
 * run_plain.h -- crew__run_helping's common case inlined into a helping waiter's loop (wait.c):
 * a task of no group with none of the rare kinds' flags (timed, bounded, start-by, an array's
 * runner, a node to recycle, a completion callback, a lane's barrier, a blocking task). It does
 * what run_task_in (worker.c) does for such a task, and nothing else: the frame's group and
 * mark, the call under the frame, and the count (the worker's credit, or the waiter's
 * *finished). Every other task goes to crew__run_helping, out of line.
 */
#ifndef CREW_RUN_PLAIN_H
#define CREW_RUN_PLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "base.h"
#include "pending.h"
#include "sched_calls.h"
#include "worker.h"

/* Run t as crew__run_helping(p, self, t, finished, top, whole) would, if it is plain (no flag
 * but CREW__TASK_COPY, group slot 0): returns true. Else runs nothing: false. finished: the
 * waiter's count (non-NULL); top: its frame (pool, up and depth set). */
static inline __attribute__((always_inline)) bool
crew__run_plain_helping(crew_pool *p, crew__worker *self, crew_task *t, size_t *finished,
                        crew__frame *top) {
    if (__builtin_expect((t->crew_flags_ & ~CREW__TASK_COPY) != 0 || t->crew_private_.slot != 0,
                         0))
        return false;
    crew_fn fn = t->fn;
    void *arg = t->arg;
    top->group = (crew_handle){0, 0};
    top->mark = crew__sched_mark(p, self);
    crew__debug_yield();
    crew__tls_frame = top;
    fn(arg);
    crew__tls_frame = top->up;
    crew__debug_yield();
    crew__end_plain(p, self, finished); /* as run_task_in ends a task of no group */
    return true;
}

#endif /* CREW_RUN_PLAIN_H */
