/*
 * config.h -- crew_config's checks (config.c); crew_config_init itself is public (crew.h).
 */
#ifndef CREW_CONFIG_H
#define CREW_CONFIG_H

#include "base.h"
#include "schedule.h"

/* Check crew_create's configuration (each failure with its detail). OUT: the strategy and its
 * kind, and the hooks, copied (with their own CPU list, to free with the pool). CREW_OK,
 * CREW_EINVAL, CREW_ENOTSUP or CREW_ENOMEM. */
int crew__config_check(const crew_config *cfg, const crew__sched_ops **sched, int *sched_kind,
                       crew_hooks *hooks);

#endif /* CREW_CONFIG_H */
