/*
 * array.h -- arrays of tasks queued as a few runners (array.c): crew_enqueue_tasks of a long
 * array costs one pending add, one push and one wake-up check for the whole array, and each
 * task then costs its run, not a queue entry of its own. submit.c decides when an array goes
 * this way, counts the tasks in their group and the tasks and the runners in pending (a group
 * finishes with its last task, whatever its runners still queued); a dropped runner is the
 * array kind's (kind.h).
 */
#ifndef CREW_ARRAY_H
#define CREW_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

/* Shortest array queued through runners: a shorter one (a fork of a few tasks, skynet's ten)
 * gives each task a queue entry of its own, where every thread can steal it at once. Only
 * arrays of priority 0 (the highest) go through runners: a runner runs its array's tasks
 * without looking for more urgent work between them, which only priority 0 may. */
#define CREW__ARRAY_MIN 32u

typedef struct crew__array crew__array;

/* How many runners an array of n tasks gets (at least 1, at most n): one per thread that can
 * run tasks at once (the workers and a helping caller). */
size_t crew__array_runners(crew_pool *p, size_t n);
/* A record for t[0..n), all of priority 0, with its m runners (tasks of priority 0,
 * crew__array_tasks), or NULL when out of memory (the caller then queues the tasks one by
 * one). Freed by the last runner to end or be dropped. */
crew__array *crew__array_new(crew_pool *p, crew_task *t, size_t n, size_t m);
/* The group of the array's tasks (its slot index and generation; {0, 0}: none), given to the
 * record and its runners before they are queued. */
void crew__array_set_group(crew__array *a, crew_handle group);
/* The group of runner arg's array, as crew__array_set_group gave it: the group of the frame the
 * runner runs in (worker.c). Once the array's tasks have all ended its slot may belong to a
 * later group; whatever reads that slot's marks for it compares their generation with this. */
crew_handle crew__array_group(void *arg);
/* Its runners, to be queued now (m contiguous tasks); its tasks count as queued from here on
 * (crew_stats.queued). */
crew_task *crew__array_tasks(crew__array *a);
/* Free a record none of whose runners was queued (the push failed, or was never tried). */
void crew__array_free(crew__array *a);
/* The function of a runner (arg: its record): claims the array's tasks a chunk at a time and
 * runs them, until none is left. The array kind's row (kind.h, array.c) recognises runners by
 * it; the run path, by their flag (CREW__TASK_RUNNER). */
void crew__array_run(void *arg);
/* One turn of a runner that a thread helping while it waits took and its wait does not cover
 * whole (worker.c's run_runner, in a frame made for the runner): claims and runs
 * chunks until the array's claims have moved on by 64 tasks (one chunk, but for the small ones
 * near its end). Returns true if the runner ended (as crew__array_run), false if tasks are
 * left: the runner then keeps its unit and its record, and the caller queues it again, so that
 * a waiter whose wait is over is not kept until the whole array is claimed. */
bool crew__array_step(void *arg);
/* A queued runner of record arg, taken from the queues by the caller, whose array has nothing
 * left to claim: ended here (its record released; not its unit of pending, which the caller
 * ends) and true; else false and the caller still has the runner to run or queue again. */
bool crew__array_end_if_done(void *arg);

#endif /* CREW_ARRAY_H */
