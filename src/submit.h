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

/* The timer thread (timer.c): a delayed task, or a timer's run, is due: stamp it if tasks are
 * timed now, count it in pending if count (a timer's run; a delayed task was counted when it
 * was submitted), push it to the scheduler (or the blocking threads' queue) and wake a thread
 * for it. CREW_OK, or the push's error (the caller drops the task, which ends its count). */
int crew__fire(crew_pool *p, crew_task *t, bool count);

#endif /* CREW_SUBMIT_H */
