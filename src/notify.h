/*
 * notify.h -- completion callbacks (notify.c); crew_notify itself is public (crew.h).
 */
#ifndef CREW_NOTIFY_H
#define CREW_NOTIFY_H

#include "base.h"

/* Queue a list of crew_notify callbacks (crew_submit nodes linked by crew_private_.gnext,
 * already counted in pending) whose group has finished. pool is the crew_pool (a void * to fit
 * crew__slotmap.on_notify). */
void crew__notify_queue(void *pool, crew_task *list);

#endif /* CREW_NOTIFY_H */
