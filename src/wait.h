/*
 * wait.h -- helping waits (wait.c).
 */
#ifndef CREW_WAIT_H
#define CREW_WAIT_H

#include "base.h"

/* Run queued tasks, or sleep, until pending is 0. */
void crew__help_until_quiet(crew_pool *p);

#endif /* CREW_WAIT_H */
