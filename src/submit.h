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

#endif /* CREW_SUBMIT_H */
