/*
 * modules.c -- the pool's life (modules.h): its modules in the one order that crew_create,
 * crew_shutdown and crew_destroy walk, each row the steps of one module's life (its state is
 * its own type, behind its own header), and the walks.
 */
#include <stdlib.h>

#include "autosize.h"
#include "blocking.h"
#include "graph.h"
#include "modules.h"
#include "nodes.h"
#include "notify.h"
#include "pool.h"
#include "stats.h"
#include "timer.h"
#include "trace.h"
#include "wake.h"

/* The steps of the pool's life that are not a subsystem's own: its locks, its group slot map,
 * the bounded queue (the sleepers it lends), and the strategy's part of the shutdown. */
static int lock_init(crew_pool *p) {
    return pthread_mutex_init(&p->lock, NULL) == 0 ? CREW_OK : CREW_ENOMEM;
}
static void lock_free(crew_pool *p) { pthread_mutex_destroy(&p->lock); }
static int resize_lock_init(crew_pool *p) {
    return pthread_mutex_init(&p->resize_lock, NULL) == 0 ? CREW_OK : CREW_ENOMEM;
}
static void resize_lock_free(crew_pool *p) { pthread_mutex_destroy(&p->resize_lock); }
static int groups_init(crew_pool *p) {
    if (crew__slotmap_init(&p->groups) != CREW_OK)
        return CREW_ENOMEM;
    p->groups.on_notify = crew__notify_queue; /* a finished group's callbacks (notify.c) */
    p->groups.owner = p;
    return CREW_OK;
}
static void groups_free(crew_pool *p) { crew__slotmap_free(&p->groups); }
static int bounded_init(crew_pool *p, const crew_config *cfg) {
    return crew__bounded_init(&p->bounded, cfg);
}
static void bounded_free(crew_pool *p) { crew__bounded_free(&p->bounded); }
/* The strategy's queues for the pool's first size (crew_create sets target to it first). A
 * strategy that fails part-way leaves its free to undo what it made. */
static int sched_init(crew_pool *p, const crew_config *cfg) {
    int rc = crew__sched_init(p, cfg, crew__load_relaxed(&p->target)); /* relaxed: not shared */
    if (rc != CREW_OK)
        crew__sched_free(p);
    return rc;
}
static void sched_close(crew_pool *p, int how) {
    if (how == CREW_CANCEL) /* a paused pool stays paused until its queues are empty */
        crew__sched_cancel_all(p);
}
static void blocking_close(crew_pool *p, int how) {
    if (how == CREW_CANCEL)
        crew__blocking_cancel_all(p);
}
static void blocking_resume_locked(crew_pool *p) {
    if (p->blocking)
        crew__blocking_wake_all_locked(p);
}

/* One module of the pool: the steps of its life, each NULL if it has none. */
typedef struct module {
    const char *name; /* for the reader and a debugger */
    /* crew_create: make its state (one of the two, or neither). CREW_OK, or CREW_ENOMEM with
     * nothing left made (free is for what init made whole). */
    int (*init)(crew_pool *p);
    int (*init_cfg)(crew_pool *p, const crew_config *cfg); /* cfg: crew_create's, checked */
    const char *nomem; /* crew_create's detail when init fails */
    int (*start)(crew_pool *p); /* crew_create, once the workers run: CREW_OK or an error */
    void (*closing)(crew_pool *p, int how); /* crew_shutdown, before the state changes */
    void (*close)(crew_pool *p, int how);   /* crew_shutdown, once the pool is closing */
    void (*resume_locked)(crew_pool *p);    /* pool->lock held: the pool was unpaused */
    void (*stop)(crew_pool *p);             /* crew_shutdown, once nothing is pending */
    void (*free)(crew_pool *p);             /* crew_destroy, or a crew_create undone */
} module;

#define NOMEM_LOCKS "crew_create: out of memory for the pool's workers or locks"
#define NOMEM_QUEUES                                                                             \
    "crew_create: out of memory for the pool's queues, registry or sizing controller"

/* The pool's modules, in the order crew_create makes them. crew_shutdown walks each of its
 * phases in reverse, so its effects come in this order: closing: the timers'; close: the
 * timers', the strategy's sweep, the blocking queue's; resume_locked: the blocking threads';
 * stop: the timer thread, the workers' wake-up, the blocking threads, the controller (then
 * pool.c joins the workers). crew_destroy frees in reverse: the trace first (a trace still
 * running names the threads' tasks), the monitoring blocks before the worker records they are
 * found through, the records before the strategy's state, the registry before the nodes. */
static const module modules[] = {
    {.name = "lock", .init = lock_init, .nomem = NOMEM_LOCKS, .free = lock_free},
    {.name = "resize_lock", .init = resize_lock_init, .nomem = NOMEM_LOCKS,
     .free = resize_lock_free},
    {.name = "groups", .init = groups_init, .nomem = NOMEM_LOCKS, .free = groups_free},
    {.name = "nodes", .init = crew__nodes_init, .nomem = NOMEM_LOCKS, .free = crew__nodes_free},
    /* No thread gives nodes back to the pool once it is unregistered. */
    {.name = "registry", .init = crew__nodes_register, .nomem = NOMEM_QUEUES,
     .free = crew__nodes_unregister},
    {.name = "bounded", .init_cfg = bounded_init, .nomem = NOMEM_QUEUES, .free = bounded_free},
    /* Stopped last, before resize_lock: the controller may be inside crew_resize. */
    {.name = "autosize", .init_cfg = crew__autosize_init, .nomem = NOMEM_QUEUES,
     .start = crew__autosize_start, .stop = crew__autosize_stop, .free = crew__autosize_free},
    {.name = "blocking", .init_cfg = crew__blocking_init, .nomem = NOMEM_QUEUES,
     .close = blocking_close, .resume_locked = blocking_resume_locked,
     .stop = crew__blocking_stop, .free = crew__blocking_free},
    {.name = "sched", .init_cfg = sched_init, .nomem = NOMEM_QUEUES, .close = sched_close,
     .free = crew__sched_free},
    /* Stopped once nothing is pending: sleeping workers wake up and leave (joined last). */
    {.name = "workers", .init = crew__workers_init, .nomem = NOMEM_LOCKS, .stop = crew__wake_all,
     .free = crew__workers_free},
    {.name = "stats", .init = crew__stats_init, .nomem = NOMEM_LOCKS, .free = crew__stats_free},
    {.name = "diagnose", .init = crew__diagnose_init, .nomem = NOMEM_LOCKS,
     .free = crew__diagnose_free},
    /* No timer fires once closing (before the state changes, or the timer thread could queue a
     * run once the workers, seeing the pool closing with nothing pending, have left); no
     * periodic timer runs again once closed, and a cancelling shutdown drops the delayed tasks
     * (before the queues' sweep, so what the timer thread queued before is swept too); the
     * timer thread stops once nothing waits in its heap (each counted in pending). */
    {.name = "timers", .init = crew__timers_init, .nomem = NOMEM_LOCKS,
     .closing = crew__timers_closing, .close = crew__timers_close, .stop = crew__timers_stop,
     .free = crew__timers_free},
    {.name = "trace", .init = crew__trace_init, .nomem = NOMEM_LOCKS, .free = crew__trace_free},
    /* Let go first: a graph may outlive the pool (it holds the registry, not the pool). */
    {.name = "graphs", .init = crew__graphs_init, .nomem = NOMEM_LOCKS,
     .free = crew__graphs_free},
};
#define NMODULES (sizeof modules / sizeof modules[0])

/* Free what the first `made` modules made, last first, then the pool itself. */
static void unmake(crew_pool *p, size_t made) {
    while (made-- > 0)
        if (modules[made].free)
            modules[made].free(p);
    free((void *)p->hooks.cpus);
    free(p);
}

int crew__modules_init(crew_pool *p, const crew_config *cfg) {
    for (size_t i = 0; i < NMODULES; i++) {
        const module *m = &modules[i];
        if ((m->init ? m->init(p) : m->init_cfg ? m->init_cfg(p, cfg) : CREW_OK) != CREW_OK) {
            unmake(p, i);
            return crew__fail(CREW_ENOMEM, "%s",
                              m->nomem ? m->nomem : "crew_create: out of memory");
        }
    }
    return CREW_OK;
}

int crew__modules_start(crew_pool *p) {
    int rc = CREW_OK;
    for (size_t i = 0; rc == CREW_OK && i < NMODULES; i++)
        if (modules[i].start)
            rc = modules[i].start(p);
    return rc;
}

void crew__modules_closing(crew_pool *p, int how) {
    for (size_t i = NMODULES; i-- > 0;)
        if (modules[i].closing)
            modules[i].closing(p, how);
}

void crew__modules_close(crew_pool *p, int how) {
    for (size_t i = NMODULES; i-- > 0;)
        if (modules[i].close)
            modules[i].close(p, how);
}

void crew__modules_resume_locked(crew_pool *p) {
    for (size_t i = NMODULES; i-- > 0;)
        if (modules[i].resume_locked)
            modules[i].resume_locked(p);
}

void crew__modules_stop(crew_pool *p) {
    for (size_t i = NMODULES; i-- > 0;)
        if (modules[i].stop) {
            modules[i].stop(p);
            crew__debug_yield();
        }
}

void crew__modules_free(crew_pool *p) { unmake(p, NMODULES); }
