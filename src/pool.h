/*
 * pool.h -- a pool (pool.c): struct crew_pool and its life (crew_create walks modules.c's
 * ordered list of modules forward, crew_shutdown and crew_destroy in reverse). Hot state is
 * embedded (the strategy, the group slot map, pending, the eventcounts, the bounded queue);
 * each cold subsystem's state is its own type behind its own header, made by its module, and
 * only its pointer is here. Include this header only where the pool's fields are read.
 *
 * Locking. The hot path (submit, take, run, finish) takes no pool-wide lock: each queue has its
 * own (lq.h: a mutex or a spinlock per crew_config.lock; STEAL's deques take none), groups
 * finish with atomics (group.c), pending is an atomic count (pending.h). Lock order:
 * resize_lock, then lock, then a queue lock (several only in address order). pool->lock guards
 * sleeping and waking (the lock of every eventcount of the pool: a sleeper counts itself, fences
 * and looks once more, a waker takes the lock only if someone sleeps, ec.h), the worker states'
 * transitions, the fields marked "lock", and monitoring's records. resize_lock serialises
 * crew_resize and crew_shutdown's claims of the workers to join (joined without it) and guards
 * the worker records' thread fields.
 */
#ifndef CREW_POOL_H
#define CREW_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "bounded.h" /* embedded: its capacity is tested on every submission */
#include "ec.h"
#include "group.h"
#include "schedule.h"
#include "thread.h" /* crew__joins */
#include "worker.h" /* the worker record */

/* The cold subsystems' states, each behind its own header and made by its module (pool.c). */
typedef struct crew__autosize crew__autosize;     /* autosize.h */
typedef struct crew__blocking crew__blocking;     /* blocking.h */
typedef struct crew__diag crew__diag;             /* diagnose.h */
typedef struct crew__pool_stats crew__pool_stats; /* stats.h */
typedef struct crew__timers crew__timers;         /* timer.h */
typedef struct crew__trace crew__trace;           /* trace.h */
typedef struct crew__graphs crew__graphs;         /* graph_seen.c */
struct crew__nodes;                               /* nodes.c */

enum crew__pool_state {
    CREW__OPEN = 0,
    CREW__CLOSING = 1,
    CREW__FORKED = 2 /* this process is a child forked after the pool was made (nodes.c) */
};
struct crew_pool {
    /* Settings, fixed after crew_create. */
    unsigned id;       /* process-unique number, for thread names */
    uint64_t serial;   /* never reused within the process (nodes.c's node caches) */
    char name[8];      /* thread name prefix */
    size_t stack_size; /* 0 = default */
    unsigned spin;     /* polls before sleeping, or CREW_SPIN_AUTO (idle.h) */
    unsigned cpus;     /* CPUs its threads may run on (crew__cpus_count, cpus.h) */
    /* Why tasks are timed (CREW__TIMING_*, base.h), one word so that the untimed hot path tests
     * one value. Relaxed: a task submitted while it changes is simply timed or not. */
    atomic_uint timing;
    crew__sched sched; /* the scheduling strategy and its queues (schedule.h) */
    /* Read on every submission or take, written rarely: on the settings' lines, away from
     * pending (when they shared a line, each submission took it from the workers). */
    /* CREW__OPEN or CREW__CLOSING: written under lock (seq_cst), read anywhere: submitters
     * re-check it after counting themselves in pending (submit.c). */
    atomic_int state;
    /* Why threads start no task (CREW__HALT_*): crew_pause (takers find no work; the bit is
     * read before each take and again after it, crew__held_back, since a task pushed after
     * crew_pause was taken with acquire) and a cancelling shutdown (set before its sweep,
     * never cleared: crew_cancelled, and after each take). One byte, so that the check after
     * every take is one load. Written under lock (read-modify-writes, relaxed); read relaxed
     * anywhere (a sleeper's last look and crew_resume's wake-up are both under lock; a thread
     * that saw the cancel bit sees it on every later look, by coherence, so it starts no
     * queued task after). */
    _Atomic unsigned char halt;

    /* Written by submitters on every task: a cache line of its own (16-byte aligned calloc). */
    char pad_submit_[64];
    /* Accepted tasks not yet finished nor dropped (pending.h). Seq_cst read-modify-writes: the
     * decrement to 0 is the event that quiet's sleepers look for (ec.h). */
    _Atomic size_t pending;
    char pad_submit_end_[64 - sizeof(size_t)];

    /* Eventcounts (ec.h), slept on under lock: work (workers, node data: the record; waiters
     * that take any task, NULL), notified by whoever queues tasks; quiet, by pending's fall to
     * 0; waiting (every helping waiter), by state changes, hand-overs, and a blocking task
     * finding no idle thread; joined (crew_join's callers whose half another thread took, node
     * data: the record's over flag), by whoever ends or hands back that half (join.c). */
    crew__ec work, quiet, waiting, joined;
    /* Workers awake and looking for a task (wake.h's crew__wake_work: with one in sight a
     * submission wakes nobody, Dekker's pattern as in ec.h). Seq_cst read-modify-writes and
     * loads. Only for strategies whose workers can take any task (crew__sched_ops.any_worker). */
    _Atomic unsigned lookers;
    /* The deferred wake-up's watcher (wake.h): CREW__WATCHING while a sleeping worker watches
     * for deferred offers, CREW__WATCH_WANTED once a caller deferred (or wanted to) since the
     * watcher last looked, CREW__WATCH_TINY with it if that caller's rounds are tiny (idle
     * workers then do not poll: read relaxed, a hint). Every write is a read-modify-write (the
     * claim's first relaxed read is a guess its CAS checks), so release sequences are
     * unbroken: a caller's release fetch_or (after its offers' pushes), the watcher's relaxed claim under the lock, and its
     * acquire fetch_and on resigning, which so sees every offer a caller deferred to it. */
    _Atomic unsigned watch;
    /* A cancelling shutdown dropped tasks: crew_wait_all's CREW_ECANCELED (relaxed: set before
     * the dropped task ends in pending, which crew_wait_all waits for). */
    atomic_bool shutdown_dropped;
    pthread_mutex_t lock; /* see the top of this file */

    crew__bounded bounded;     /* the bounded queue (bounded.h) */
    crew__blocking *blocking;  /* blocking tasks (fixed after create) */
    struct crew__nodes *nodes; /* crew_submit's task nodes (nodes.c) */
    crew__slotmap groups;      /* groups (slot map) */
    crew__autosize *autosize;  /* the sizing controller, NULL when off (fixed after create) */
    crew_hooks hooks;          /* crew_config.hooks, copied (fixed after create; zero: none) */
    crew__pool_stats *stats;   /* monitoring */
    crew__diag *diag;          /* stall diagnostics */
    crew__trace *trace;        /* the task timeline */
    crew__graphs *graphs;      /* the registry of its task graphs (graph_seen.c) */
    crew__timers *timers;      /* delayed tasks and periodic timers, and their thread */

    pthread_mutex_t resize_lock; /* see the top of this file */
    crew__joins joins;           /* resize_lock: crew_shutdown calls joining workers now */
    /* Every worker record ever made (CREW_MAX_THREADS entries), freed with the pool: entries
     * below nworkers are set (relaxed entries, published by nworkers' release store). */
    crew__worker *_Atomic *workers;
    _Atomic unsigned nworkers;
    atomic_uint target; /* the size last requested: resize_lock to write; relaxed (a number) */
    /* Tasks of long arrays not yet claimed by a runner, less their runners still queued, for
     * crew_stats.queued (array.c; alone it may wrap below 0). Relaxed: a statistic. */
    _Atomic size_t array_unclaimed;
};

/* Is this process a child forked after p was made? (Relaxed: nodes.c's fork handler sets it in
 * the child's only thread before any other code of the child.) */
/* Bits of crew_pool.halt. */
enum { CREW__HALT_PAUSED = 1u, CREW__HALT_CANCELLING = 2u };

/* Is the pool paused (crew_pause, or a forked child's pools)? Relaxed: see crew_pool.halt. */
static inline bool crew__paused(const crew_pool *p) {
    return crew__load_relaxed(&((crew_pool *)p)->halt) & CREW__HALT_PAUSED;
}
/* Has a cancelling shutdown begun? Relaxed: see crew_pool.halt. */
static inline bool crew__cancelling(const crew_pool *p) {
    return crew__load_relaxed(&((crew_pool *)p)->halt) & CREW__HALT_CANCELLING;
}
/* Either of the two: may no task start here now (one load)? Relaxed: see crew_pool.halt. */
static inline bool crew__halted(const crew_pool *p) {
    return crew__load_relaxed(&((crew_pool *)p)->halt) != 0;
}

static inline bool crew__forked(crew_pool *p) {
    return crew__load_relaxed(&p->state) == CREW__FORKED;
}
/* The first checks of a public call on p (who: its name), before any of its other arguments:
 * p is not NULL, and this process made it. CREW_OK, or the failure with its detail. */
static inline int crew__pool_check(crew_pool *p, const char *who) {
    if (!p)
        return crew__fail(CREW_EINVAL, "%s: the pool is NULL", who);
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "%s: " CREW__FORKED_DETAIL, who);
    return CREW_OK;
}
/* Worker records, lock-free: how many exist (acquire: pairs with the release in pool.c's
 * free_record, so every record below the count is initialised), and record i. */
static inline unsigned crew__nworkers(crew_pool *p) {
    return crew__load_acquire(&p->nworkers);
}
static inline crew__worker *crew__worker_at(crew_pool *p, unsigned i) {
    return crew__load_relaxed(&p->workers[i]); /* relaxed: published by nworkers' release */
}
/* The calling thread's worker record if it is a worker of p, else NULL. */
static inline crew__worker *crew__self(const crew_pool *p) {
    crew__worker *w = crew__tls_worker;
    return w && w->pool == p ? w : NULL;
}

/* pool.c's, for the blocking threads (lock held): the workers RUNNING now. */
unsigned crew__running_workers_locked(crew_pool *p);

#endif /* CREW_POOL_H */
