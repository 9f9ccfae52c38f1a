/*
 * submit.h -- accepting tasks (submit.c): what the other modules call besides the public API.
 */
#ifndef CREW_SUBMIT_H
#define CREW_SUBMIT_H

#include <stddef.h>

#include "base.h"

/* crew_enqueue_tasks that never waits for room in a bounded queue (CREW_EFULL instead): the
 * parallel primitives' helper tasks. */
int crew__enqueue_helpers(crew_pool *p, crew_task *t, size_t n, crew_handle *group);

#endif /* CREW_SUBMIT_H */
