/*
 * config.c -- crew_config: its defaults, and the checks crew_create makes of it, each failure
 * with its detail (crew_last_error).
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "autosize.h"
#include "config.h"
#include "schedule.h"

void crew_config_init(crew_config *cfg) {
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->threads = 0;
    cfg->monitoring = 0;
    cfg->stack_size = 0;
    cfg->name = "crew";
    cfg->spin = CREW_SPIN_AUTO;
    cfg->scheduler = CREW_SCHED_DEFAULT;
    cfg->lock = CREW_LOCK_MUTEX;
    cfg->max_blocking = 64;
    cfg->blocking_idle_ms = 10000;
    cfg->queue_capacity = 0;
    cfg->full_policy = CREW_FULL_BLOCK;
}

/* Validate and copy crew_config.hooks (NULL: none). CREW_OK or CREW_EINVAL. The CPU list is
 * still the caller's here; crew_create copies it. */
static int copy_hooks(crew_hooks *out, const crew_hooks *in) {
    memset(out, 0, sizeof *out);
    if (!in)
        return CREW_OK;
    if (in->size < offsetof(crew_hooks, cpus)) /* older than the first version */
        return crew__fail(CREW_EINVAL,
                          "crew_create: crew_config.hooks->size is %zu; set it to "
                          "sizeof(crew_hooks) (at least %zu)",
                          in->size, offsetof(crew_hooks, cpus));
    memcpy(out, in, in->size < sizeof *out ? in->size : sizeof *out);
    out->size = sizeof *out;
    if ((out->cpus == NULL) != (out->ncpus == 0))
        return crew__fail(CREW_EINVAL,
                          "crew_create: crew_hooks.cpus is %s but ncpus is %zu; give both or "
                          "neither",
                          out->cpus ? "set" : "NULL", out->ncpus);
    if (!out->cpus)
        return CREW_OK;
#if defined(__linux__)
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return crew__fail(CREW_EINVAL,
                          "crew_create: crew_hooks.cpus: sched_getaffinity failed (%s), so the "
                          "CPUs cannot be checked",
                          strerror(errno));
    for (size_t i = 0; i < out->ncpus; i++)
        if (out->cpus[i] < 0 || out->cpus[i] >= CPU_SETSIZE || !CPU_ISSET(out->cpus[i], &allowed))
            return crew__fail(CREW_EINVAL,
                              "crew_create: crew_hooks.cpus[%zu] is %d, not a CPU this process "
                              "may run on (sched_getaffinity)",
                              i, out->cpus[i]);
    return CREW_OK;
#else
    return crew__fail(CREW_EINVAL, "crew_create: crew_hooks.cpus: this system has no thread "
                                   "affinity"); /* no affinity on this system */
#endif
}

/* crew_config.<field> is value, over the largest value it accepts, max: the failure, its detail
 * "<accepted> (<max>)<rest>" saying what the field accepts. */
static int over_max(const char *field, unsigned value, const char *accepted, unsigned max,
                    const char *rest) {
    return crew__fail(CREW_EINVAL, "crew_create: crew_config.%s is %u; %s (%u)%s", field, value,
                      accepted, max, rest);
}

int crew__config_check(const crew_config *cfg, const crew__sched_ops **sched_out,
                       int *sched_kind, crew_hooks *hooks) {
    const crew__sched_ops *sched = crew__sched_resolve(cfg->scheduler, sched_kind);
    if (cfg->threads > CREW_MAX_THREADS)
        return over_max("threads", cfg->threads, "at most CREW_MAX_THREADS", CREW_MAX_THREADS,
                        ", or 0 for one per CPU the pool may use");
    if (crew__autosize_check(cfg) != CREW_OK)
        return CREW_EINVAL; /* with its detail */
    if (!sched)
        return over_max("scheduler", cfg->scheduler,
                        "accepted: CREW_SCHED_DEFAULT (0) to CREW_SCHED_PER_WORKER",
                        CREW_SCHED_PER_WORKER, "");
    if (cfg->lock > CREW_LOCK_SPIN)
        return over_max("lock", cfg->lock, "accepted: CREW_LOCK_MUTEX (0) or CREW_LOCK_SPIN",
                        CREW_LOCK_SPIN, "");
    if (cfg->max_blocking > CREW_MAX_THREADS)
        return over_max("max_blocking", cfg->max_blocking, "at most CREW_MAX_THREADS",
                        CREW_MAX_THREADS, ", or 0 for the default");
    if (cfg->full_policy > CREW_FULL_DROP_OLDEST)
        return over_max("full_policy", cfg->full_policy,
                        "accepted: CREW_FULL_BLOCK (0) to CREW_FULL_DROP_OLDEST",
                        CREW_FULL_DROP_OLDEST, "");
#ifdef CREW_NO_MONITORING
    if (cfg->monitoring || cfg->autosize != CREW_AUTOSIZE_OFF)
        return crew__fail(CREW_ENOTSUP,
                          "crew_create: crew_config.%s needs monitoring, which this build leaves "
                          "out (CREW_MONITORING=OFF)",
                          cfg->monitoring ? "monitoring" : "autosize");
#endif
    if (copy_hooks(hooks, cfg->hooks) != CREW_OK)
        return CREW_EINVAL; /* with its detail */
    if (hooks->cpus) { /* our own copy: workers started later (crew_resize) read it */
        int *cpus = malloc(hooks->ncpus * sizeof *cpus);
        if (!cpus)
            return crew__fail(CREW_ENOMEM, "crew_create: out of memory for the CPU list");
        memcpy(cpus, hooks->cpus, hooks->ncpus * sizeof *cpus);
        hooks->cpus = cpus;
    }
    *sched_out = sched;
    return CREW_OK;
}
