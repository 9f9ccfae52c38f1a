/*
 * pool.h -- a pool and its workers (pool.c: lifecycle, resize, shutdown): struct crew_pool,
 * built from the state of every subsystem, and struct crew__worker.
 *
 * Locking, in one place. The hot path (submit, take, run, finish) takes no pool-wide lock:
 *   - Each queue has its own lock (lq.h: crew__lq, a mutex or a spinlock per
 *     crew_config.lock); STEAL's deques take none (deque.c). Lock order: pool->lock, then a
 *     queue lock; several queue locks only in address order (crew__lq_push_spread).
 *   - Groups finish with atomics alone (group.c); pending work is an atomic count.
 *   - pool->lock (a mutex) guards sleeping and waking (the lock of every eventcount of the
 *     pool), the worker states' transitions, the counters marked "lock" below, and monitoring's
 *     records. Every sleep is an eventcount's (ec.h): a thread about to sleep calls
 *     crew__ec_wait, which counts it, fences and looks for its event once more before it
 *     sleeps; a thread that makes work available (or finishes a group, or the last pending
 *     task) calls crew__ec_notify, which takes the lock only if someone sleeps. So no wake-up
 *     is lost, and a busy pool makes no system call.
 *   - pool->resize_lock serialises crew_resize and crew_shutdown's claims of the workers to
 *     join (the joins themselves are made without it, crew__join_each); it protects the
 *     worker records' thread fields. Lock order: resize_lock before lock.
 */
#ifndef CREW_POOL_H
#define CREW_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "autosize.h"
#include "base.h"
#include "blocking.h"
#include "bounded.h"
#include "debug.h"
#include "deque.h"
#include "diagnose.h"
#include "ec.h"
#include "group.h"
#include "lq.h"
#include "schedule.h"
#include "stats.h"
#include "timer.h"
#include "trace.h"
#include "worker.h"

enum crew__pool_state {
    CREW__OPEN = 0,
    CREW__CLOSING = 1,
    CREW__FORKED = 2 /* this process is a child forked after the pool was made (nodes.c) */
};

enum crew__worker_state {
    CREW__W_RUNNING = 0, /* takes tasks */
    CREW__W_MARKED = 1,  /* resize asked it to exit after its current task; may be revived */
    CREW__W_EXITED = 2   /* left its loop (it may still be in on_stop: joinable once gone) */
};

typedef struct crew__worker {
    crew_pool *pool;  /* owner */
    pthread_t thread; /* valid when started */
    unsigned index;   /* position in pool->workers, for the thread name */
    /* Transitions happen under pool->lock with compare-and-swap (Jendersie et al., §III-E);
     * relaxed suffices because the lock orders them; lock-free readers take it as a hint, and a
     * worker re-checks its own state after taking a task (worker.c). */
    _Atomic int state;
    bool started; /* resize_lock: thread was created */
    bool joined;  /* resize_lock: thread was joined, or claimed by crew_shutdown to join */
    /* The thread has returned from on_stop and touches nothing more: joining it waits for
     * nothing else. Stored with release by the thread, loaded with acquire by reap_exited. */
    _Atomic bool gone;
    /* Its sleep on pool->work (node data: this record); its own (crew__ec_sleeper_own). */
    crew__ec_sleeper sleeper;
    /* Monitoring block, allocated by the worker on first use (release: stats.c). */
    crew__tstats *_Atomic stats;
    /* Tasks this worker stole; written by the worker only, read by statistics (relaxed). */
    _Atomic uint64_t stolen;
    uint64_t stolen_base; /* stats_lock: stolen at the last crew_stats_reset */
    crew__slot_cache slots; /* owner: free group slots cached by this worker */
    crew__node_list nodes; /* owner: free crew_submit nodes cached by this worker */
    /* Units of pool->pending this worker holds but no task uses (pending.h says how): written
     * by the owner only (relaxed), read relaxed by crew_stats_get. */
    _Atomic size_t credit;
    /* The strategy's part of this worker (STEAL: its deque; PER_WORKER: its queue), of a type
     * only the strategy's file knows (schedule.h). */
    crew__sched_local sched;
    crew__busy busy;   /* its task now, for crew_diagnose */
} crew__worker;

struct crew_pool {
    /* Settings, fixed after crew_create. */
    unsigned id;        /* process-unique number, for thread names */
    uint64_t serial;    /* never reused within the process (nodes.c's node caches) */
    char name[8];       /* thread name prefix */
    size_t stack_size;  /* 0 = default */
    unsigned spin;      /* polls before sleeping, or CREW_SPIN_AUTO (spin.h) */
    unsigned cpus;      /* CPUs its threads may run on, for CREW_SPIN_AUTO (crew__spin_cpus) */
    /* Are tasks timed, and why: CREW__TIMING_MONITOR (statistics, crew_set_monitoring),
     * CREW__TIMING_AUTOSIZE (the controller's inputs) and CREW__TIMING_TRACE (a task timeline,
     * trace.h), one word so that the untimed hot path tests one value. Read without the lock
     * (relaxed: a task submitted while it changes is simply timed or not). */
    atomic_uint timing;

    crew__sched sched; /* the scheduling strategy and its queues (schedule.h) */

    /* Read on every submission or take, written rarely: kept on the lines of the settings,
     * away from the counters below that submitters write on every task (when pending shared a
     * line with paused, each submission's increment took that line from the workers, who read
     * paused on every take, and back). */
    /* CREW__OPEN or CREW__CLOSING; written under lock (seq_cst), read anywhere: submitters
     * re-check it after counting themselves in pending (submit.c). */
    atomic_int state;
    /* crew_pause: every taker (worker, helping waiter, blocking thread) finds no work. Written
     * under lock; read relaxed by takers, since a sleeper's last look and crew_resume's wake-up
     * both happen under lock, and a spinning taker only needs to see it eventually. Read again
     * (relaxed) after each take, before the task runs (crew__held_by_pause): a task pushed after
     * crew_pause returned was taken with acquire, so that read sees the pause (coherence). */
    atomic_bool paused;
    /* crew_shutdown(CREW_CANCEL) began: crew_cancelled() tells running tasks (relaxed: a hint
     * they poll). */
    atomic_bool cancelling;

    /* Written by submitters on every task: a cache line of their own (the padding on both sides
     * keeps any other field off it in an allocation aligned to 16 bytes, as calloc's is). */
    char pad_submit_[64];
    /* Accepted tasks not yet finished nor dropped. Seq_cst read-modify-writes: the decrement
     * to 0 is the event that quiet's sleepers look for (ec.h). */
    _Atomic size_t pending;
    char pad_submit_end_[64 - sizeof(size_t)];

    /* Eventcounts (ec.h), all slept on under lock: workers (node data: the worker record) and
     * waiters that would take any task (node data: NULL), notified by whoever queues tasks
     * (work); threads waiting for pending to reach 0 (quiet; notified by the decrement to 0);
     * and every helping waiter, whatever it waits for (waiting; notified of state changes:
     * resume, resize, shutdown; and when tasks are handed over or a blocking task finds no
     * idle thread). */
    crew__ec work;
    crew__ec quiet;
    crew__ec waiting;
    /* Callers of crew_join whose offered half another thread took, waiting for it to end or
     * come back (join.c; node data: the record's over flag): whoever ends or hands back a
     * half wakes only the sleeper of its record. */
    crew__ec joined;
    /* Workers awake and looking for a task: from a look that found nothing to a task or a sleep,
     * and from being woken (the waker counts them in) to their first task or sleep. With one in
     * sight a submission wakes nobody (crew__notify_work, wake.h): the looker's next look, or
     * its last one before it sleeps, finds the task, since it leaves the count before its fence
     * and that last look, and the submitter reads the count after its push and fence (Dekker's
     * pattern, as in ec.h). A looker that finds a task hands the look on: if it was the last
     * and tasks are still queued, it wakes a sleeper (worker.c). Seq_cst read-modify-writes and
     * loads. Only for strategies whose workers can take any queued task
     * (crew__sched_ops.any_worker). */
    _Atomic unsigned lookers;
    /* A cancelling shutdown dropped tasks: crew_wait_all's CREW_ECANCELED (relaxed: set
     * before the dropped task ends in pending, which crew_wait_all waits for). */
    atomic_bool shutdown_dropped;

    pthread_mutex_t lock;    /* see the top of this file */

    crew__bounded bounded; /* the bounded queue (bounded.h) */

    crew__blocking *blocking; /* blocking tasks (fixed after create) */

    struct crew__nodes *nodes; /* crew_submit's task nodes (nodes.c) */

    crew__slotmap groups; /* groups (slot map) */

    crew__autosize *autosize; /* the sizing controller, NULL when off (fixed after create) */
    crew_hooks hooks; /* crew_config.hooks, copied (fixed after create; zero: none) */
    crew__pool_stats stats; /* monitoring (stats.h) */
    crew__diag diag;        /* stall diagnostics (diagnose.h) */
    crew__trace trace;      /* the task timeline (trace.h) */
    crew__timers timers;    /* delayed tasks and periodic timers, and their thread (timer.h) */

    pthread_mutex_t resize_lock; /* see the top of this file */
    crew__joins joins;           /* resize_lock: crew_shutdown calls joining workers now */
    /* Every worker record ever made (CREW_MAX_THREADS entries), never freed before the pool:
     * entries below nworkers are set, and thieves and round-robin read them without a lock.
     * Relaxed entries, published by nworkers' release store (made under resize_lock). */
    crew__worker *_Atomic *workers;
    _Atomic unsigned nworkers;
    /* The size last requested; written under resize_lock, read anywhere (relaxed: a plain
     * number, nothing is published through it). */
    atomic_uint target;
    /* Tasks of long arrays not yet claimed by a runner, less their runners still queued (the
     * queues count those), for crew_stats.queued (array.c): read with crew__sched_queued the sum
     * counts each unclaimed task once and no runner; alone it may wrap below 0 (stats.c). Added
     * as an array is queued, taken off a chunk at a time. Relaxed: a statistic. */
    _Atomic size_t array_unclaimed;
};

/* Is this process a child forked after p was made? (Set by nodes.c's fork handler; relaxed:
 * the handler runs in the child's only thread before any other code of the child.) */
static inline bool crew__forked(crew_pool *p) {
    return crew__load_relaxed(&p->state) == CREW__FORKED;
}

/* Worker records, lock-free: how many exist (acquire: pairs with the release in pool.c's
 * free_record, so every record below the count is initialised), and record i. */
static inline unsigned crew__nworkers(crew_pool *p) {
    return crew__load_acquire(&p->nworkers);
}
static inline crew__worker *crew__worker_at(crew_pool *p, unsigned i) {
    /* Relaxed: published by nworkers' release store. */
    return crew__load_relaxed(&p->workers[i]);
}

/* The calling thread's worker record if it is a worker of p, else NULL: the one answer to "is
 * this thread a worker of p?". */
static inline crew__worker *crew__self(const crew_pool *p) {
    crew__worker *w = crew__tls_worker;
    return w && w->pool == p ? w : NULL;
}
/* pool.c helpers shared with the other subsystems. */
unsigned crew__online_cores(void); /* at least 1, at most CREW_MAX_THREADS */
/* pthread_create with every signal blocked in the new thread (signals belong to the
 * application's own threads). Returns pthread_create's result. */
int crew__spawn(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
unsigned crew__running_workers_locked(crew_pool *p); /* workers RUNNING now; lock held */
/* A pool thread starts (its CPU affinity, then crew_hooks.on_start) or stops (on_stop).
 * index: the worker's, or CREW_MAX_THREADS + a blocking thread's. */
void crew__thread_start(crew_pool *p, unsigned index);
void crew__thread_stop(crew_pool *p, unsigned index);
/* The pool whose on_start or on_stop hook runs on this thread now, else NULL. */
extern CREW__TLS const crew_pool *crew__tls_hook;

#endif /* CREW_POOL_H */
