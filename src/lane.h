/*
 * lane.h -- lanes (lane.c): serial and bounded-concurrency queues of tasks on a shared pool.
 * submit.c accepts a lane's task (group, pending count, statistics, as for any task) and hands
 * it to the lane here; a dropped runner is the lane kind's (kind.h).
 */
#ifndef CREW_LANE_H
#define CREW_LANE_H

#include "base.h"

/* A runner runs at most this many of its lane's tasks, then, if more wait, queues itself again
 * behind the pool's other tasks (the fairness rule: round robin through the pool's queue). */
#define CREW__LANE_BATCH 16u

/* Append accepted task t (already counted in its group and in pending) to lane l. Returns true
 * if the lane needs one more runner: the caller then calls crew__lane_start once the
 * submission's bookkeeping is done (the lane counts that runner already). */
bool crew__lane_push(crew_lane *l, crew_task *t);
/* Start the runner that crew__lane_push asked for: a task queued on the pool or, without
 * memory for one, this thread runs the lane's tasks itself. */
void crew__lane_start(crew_lane *l);
/* The pool of l. */
crew_pool *crew__lane_pool(const crew_lane *l);
/* A graph node runs in l from now on (crew_graph_node_lane), or no longer: while any does,
 * crew_lane_destroy answers CREW_EBUSY. */
void crew__lane_hold(crew_lane *l);
void crew__lane_let_go(crew_lane *l);
/* The function of a runner task (arg: its lane): the lane kind's row (kind.h, lane.c)
 * recognises runners by it; a dropped runner drops its lane's waiting tasks. */
void crew__lane_runner(void *arg);

#endif /* CREW_LANE_H */
