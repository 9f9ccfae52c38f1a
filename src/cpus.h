/*
 * cpus.h -- how many CPUs a pool's threads may run on (cpus.c): the one count behind the
 * default size, the sizing controller, the MultiQueue's queue count and CREW_SPIN_AUTO.
 */
#ifndef CREW_CPUS_H
#define CREW_CPUS_H

#include "crew.h"

/* The CPUs a pool created now by the calling thread may use, counted once by crew_create and
 * kept in crew_pool.cpus: those in the calling thread's affinity mask (sched_getaffinity, any
 * number of CPUs), only the ones listed in h->cpus when h lists some (h may be NULL: none; each
 * CPU counted once), at most the cgroup v2 CPU quota rounded up (crew__cpus_quota). Where the
 * mask cannot be asked, the online CPUs. At least 1, at most CREW_MAX_THREADS. */
unsigned crew__cpus_count(const crew_hooks *h);

/* The cgroup v2 CPU quota of the cgroup at `path` (as /proc/self/cgroup gives it, e.g.
 * "/user.slice/x") under the cgroup2 mount `root`: the smallest of ceil(quota / period) over
 * its cpu.max and its ancestors' up to root's own, or 0 for no quota (no such file, unreadable,
 * "max"). Reads only files; crew__cpus_count finds root and path. */
unsigned crew__cpus_quota(const char *root, const char *path);

/* One cpu.max's text ("max 100000", "150000 100000"): ceil(quota / period), or 0 for no quota
 * or text it does not understand. */
unsigned crew__cpus_quota_parse(const char *text);

#endif /* CREW_CPUS_H */
