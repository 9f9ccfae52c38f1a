/*
 * idle.h -- how long an idle thread polls for work before it sleeps (idle.c): crew_config.spin
 * as the user set it, or under CREW_SPIN_AUTO a number that depends on whether the pool's awake
 * threads outnumber the CPUs they may run on.
 */
#ifndef CREW_IDLE_H
#define CREW_IDLE_H

#include <stdbool.h>

#include "crew.h"

/* The polls of CREW_SPIN_AUTO while every awake thread has a CPU (crew_config.spin's old
 * default: about 25 us of pauses and looks on this kind of machine). */
#define CREW__IDLE_POLLS 64u

/* CREW_SPIN_AUTO: the polls of an idle stretch that begins now, for a worker of p or a caller
 * waiting on p: CREW__IDLE_POLLS while p's awake workers are no more than its CPUs, else 0. */
unsigned crew__idle_polls(crew_pool *p);
/* The threads asleep on p->work now (workers, and waiters that may take any task): the guess
 * crew__idle_polls reads, for tests. */
unsigned crew__idle_asleep(crew_pool *p);

#endif /* CREW_IDLE_H */
