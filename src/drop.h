/*
 * drop.h -- a task that is not run (drop.c): dropped by a cancel, a cancelling shutdown or a
 * full queue, or expired past its start-by time. Counted, reported to on_drop (or handed to
 * its kind, kind.h), and ended in its group and in pending, as a run would end it.
 */
#ifndef CREW_DROP_H
#define CREW_DROP_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"

/* A queued task is dropped: count and report it, never run it. by_shutdown: a cancelling
 * shutdown drops it (crew_wait_all reports those, crew.h); else its group was cancelled, or a
 * full queue dropped its oldest (reported to the group, on_drop and crew_stats only). */
void crew__task_dropped(crew_pool *p, crew_task *t, bool by_shutdown);
/* A task with a start-by time (CREW__TASK_DEADLINE) came up too late: dropped as expired. */
void crew__task_expired(crew_pool *p, crew_task *t);
/* Work accepted on behalf of group slot was never started, though no task of it was queued: a
 * graph run's node (graph.c). Reported as a dropped task is (on_drop(fn, arg), the group's
 * loss, a cancelling shutdown's loss for crew_wait_all), by a task of the group that is still
 * running (the group is open). */
void crew__not_started(crew_pool *p, uint32_t slot, crew_fn fn, void *arg, bool by_shutdown);
/* on_drop(fn, arg), if the pool has one, for a dropped task of group slot, in a frame of its
 * own (drop.c): for a kind whose drop reports another fn and arg than the task's (a timer's). */
void crew__on_drop(crew_pool *p, uint32_t slot, crew_fn fn, void *arg);

#endif /* CREW_DROP_H */
