/*
 * wait.h -- helping waits (wait.c).
 */
#ifndef CREW_WAIT_H
#define CREW_WAIT_H

#include "atomic.h"
#include "base.h"
#include "ec.h"

/* Run queued tasks, or sleep, until pending is 0. */
void crew__help_until_quiet(crew_pool *p);
/* The same until *flag is true, for a thread of the pool (a task or a hook) that waits for
 * something only the pool's tasks bring about (crew_lane_destroy). Whoever sets the flag does
 * so with release, holding pool->lock, then wakes ec's sleepers (a broadcast of pool->wait_cv,
 * as for a group's waiters): the sleeper reads it with acquire under that lock after counting
 * itself on ec. */
void crew__help_until(crew_pool *p, const atomic_bool *flag, crew__ec *ec);

#endif /* CREW_WAIT_H */
