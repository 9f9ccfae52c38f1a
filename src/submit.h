/*
 * submit.h -- accepting tasks (submit.c): what the other modules call besides the public API.
 */
#ifndef CREW_SUBMIT_H
#define CREW_SUBMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "base.h"

/* crew_enqueue_tasks that never waits for room in a bounded queue (CREW_EFULL instead): the
 * parallel primitives' helper tasks. */
int crew__enqueue_helpers(crew_pool *p, crew_task *t, size_t n, crew_handle *group);
/* A lane's submission: crew_lane_barrier's (barrier true: the task is flagged
 * CREW__TASK_BARRIER for lane.c); crew_lane_submit is the same with barrier false, inlined by
 * hand. who: the public call, for the details of a failure. */
int crew__lane_submit(crew_lane *l, crew_fn fn, void *arg, crew_handle *group, bool barrier,
                      const char *who);

/* A task of a kind's own (graph.c: a graph run's first task) submitted as crew_submit would,
 * with its checks and its detail under the name who. */
int crew__submit_as(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle *group,
                    const char *who);
/* From a running task of group h (local handle, {0, 0}: none; the group is open, since that
 * task is unfinished): one more task of that group, queued as crew_submit queues one (counted
 * in the group and in pending, pushed through the strategy, a thread woken). No bounded queue,
 * no timing, no detail: CREW_OK, or CREW_ECANCELED (the group was cancelled), CREW_ESHUTDOWN
 * (the pool is closing), CREW_ERANGE or CREW_ENOMEM, with nothing queued (graph.c then runs
 * the task itself, or reports it). */
int crew__submit_in_group(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle h);
/* The same with a start-by time (ns, crew_now_ns's clock; 0: none), after which the task is
 * dropped as expired (crew__task_expired: its kind's expired row), and through lane l (NULL:
 * none), as crew_submit_with's options would; the pool's state is not looked at (the caller's
 * task keeps a draining pool's workers). CREW_OK, or CREW_ECANCELED, CREW_ERANGE, CREW_ENOMEM,
 * CREW_EFORKED (in a forked child) with nothing queued. */
int crew__submit_in_group_opts(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                               crew_handle h, uint64_t start_by, crew_lane *l);

/* The timer thread (timer.c): a delayed task, or a timer's run, is due: stamp it if tasks are
 * timed now, count it in pending if count (a timer's run; a delayed task was counted when it
 * was submitted), push it to the scheduler (or the blocking threads' queue) and wake a thread
 * for it. CREW_OK, or the push's error (the caller drops the task, which ends its count). */
int crew__fire(crew_pool *p, crew_task *t, bool count);

#endif /* CREW_SUBMIT_H */
