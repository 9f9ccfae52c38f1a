/*
 * schedule.h -- the scheduling strategies behind one small interface (crew_config.scheduler):
 * where a submitted task is queued, and where a thread looking for work takes one.
 *
 * Each strategy is one file that fills a crew__sched_ops table:
 *   sched_shared.c       SHARED: one priority queue under one lock.
 *   sched_multiqueue.c   SHARED_LOCKFREE: a MultiQueue of try-locked priority queues.
 *   sched_per_worker.c   PER_WORKER: one priority queue per worker, fed round-robin.
 *   sched_steal.c        STEAL (default): a Chase-Lev deque per worker, external submission
 *                        slots and an injection queue.
 * sched.c resolves the strategy a configuration names, and holds what every strategy shares:
 * the crew__sched_* calls the rest of crew makes (the takes for helpers check the pause; each
 * finds the calling thread's worker record once, then calls the table), cancelling, and
 * crew_diagnose's view. No other file asks which strategy runs (worker.c's wake-up only looks
 * at whether a worker has a queue of its own). The queues themselves are lq.h's and deque.h's.
 *
 * A thread that finds nothing may sleep (ec.h). It can miss no task because every push stores
 * the queue's new length (or the deque's bottom) before the pusher's eventcount fence, and the
 * sleeper tries every queue once more after its own.
 */
#ifndef CREW_SCHEDULE_H
#define CREW_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "deque.h"
#include "lock.h"
#include "lq.h"

/* STEAL: an external submission slot, a deque whose owner side is locked (sched_steal.c). */
#define CREW__EXT_SLOTS 8u
typedef struct crew__ext {
    crew__spinlock lock; /* serialises push and pop (the owner side) */
    crew__deque deque;   /* thieves steal without the lock */
    /* Batch claims in progress (crew__deque_steal_batch's protocol with the owner's
     * crew__deque_take_unless: seq_cst increment, release decrement, acquire read). */
    atomic_uint claimers;
} crew__ext;

/* One queue as crew_diagnose sees it. */
typedef struct crew__queue_view {
    const char *what; /* "the shared queue", "worker", "the blocking queue", ... */
    int index;        /* the worker or slot number, or -1 */
    size_t n;         /* tasks queued (exact for locked queues, an estimate for deques) */
    /* Locked queues: the acceptance time (ns) of the oldest timed task found at the front of
     * each priority level, 0 if none is timed. */
    uint64_t oldest;
    crew__deque *deque; /* a deque: no task's clock can be read safely, see diagnose.c */
} crew__queue_view;
typedef void (*crew__queue_visitor)(void *ctx, const crew__queue_view *v);

/*
 * A strategy. self is the calling thread's worker record if it is a worker of the pool, else
 * NULL. "Take" functions return NULL when they found nothing, and set *retry when a lost race
 * may have hidden a task. Entries marked optional may be NULL.
 */
typedef struct crew__sched_ops {
    const char *name; /* as CREW_SCHEDULER spells it */
    const char *what; /* in words, for crew_diagnose */
    bool any_worker;  /* any worker can take any queued task (the pool's lookers: pool.h) */
    int (*init)(crew_pool *p, const crew_config *cfg, unsigned threads); /* CREW_OK, ENOMEM */
    void (*free)(crew_pool *p); /* also after a failed init */
    /* Optional: a worker record's own queue (made once per record, freed with the pool), and
     * opened or closed to pushes as its thread starts or fails to start. */
    int (*worker_init)(crew_pool *p, crew__worker *w);
    void (*worker_free)(crew_pool *p, crew__worker *w);
    void (*worker_open)(crew__worker *w, bool open);
    /* Queue t[0..n), all or nothing: CREW_OK, CREW_ENOMEM, or CREW_ESHUTDOWN when no queue
     * takes pushes. */
    int (*push)(crew_pool *p, crew__worker *self, crew_task *t, size_t n);
    /* Optional: queue one crew_submit task (no flags; group slot, 0 for none) without a node,
     * by value: CREW_OK or CREW_ENOMEM. Without it, crew_submit gives the task a node. */
    int (*push_value)(crew_pool *p, crew__worker *self, crew_fn fn, void *arg, uint32_t priority,
                      uint32_t slot);
    crew_task *(*take)(crew_pool *p, crew__worker *self, bool *retry);
    /* A queued task of group slot, newest first (STEAL: or one this thread pushed after
     * mark, its own descendants). */
    crew_task *(*take_group)(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark);
    /* take_group takes a worker's own descendants above a mark: the bottom of its deque when
     * the task began (crew__sched_mark; false: the mark is always 0). */
    bool marks;
    /* Put a taken task back, in front: CREW_OK, or CREW_ENOMEM (then the caller runs it). */
    int (*requeue)(crew_pool *p, crew__worker *self, crew_task *t);
    /* Optional: w leaves; move its queued tasks where others find them (*moved: how many).
     * CREW_OK, or CREW_ENOMEM: w must stay and work, and must run *orphan (if set) itself. */
    int (*worker_exit)(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan);
    /* The task a helper would take next, from any queue (cancelling, a full queue dropping
     * its oldest), or NULL. */
    crew_task *(*take_any)(crew_pool *p);
    /* A queued task of group slot from the queues that can give one up from their middle
     * (the locked ones; deques cannot), or NULL: crew_cancel. */
    crew_task *(*take_locked_group)(crew_pool *p, uint32_t slot);
    size_t (*queued)(crew_pool *p); /* tasks queued, an estimate while busy */
    void (*visit)(crew_pool *p, crew__queue_visitor fn, void *ctx); /* crew_diagnose */
} crew__sched_ops;

extern const crew__sched_ops crew__sched_shared, crew__sched_multiqueue,
    crew__sched_per_worker, crew__sched_steal;

/* The strategy's state in struct crew_pool (the strategy's file fills what it uses). */
typedef struct crew__sched {
    const crew__sched_ops *ops; /* fixed */
    int kind;                   /* fixed: enum crew_scheduler, resolved */
    bool lock_spin;             /* fixed: queue locks are spinlocks */
    crew__lq *central;          /* SHARED's queue, STEAL's injection queue; else NULL */
    crew__ext *ext;             /* STEAL: the external submission slots, else NULL */
    unsigned ext_ready;         /* STEAL: how many of them are initialised */
    crew__lq *mq;               /* SHARED_LOCKFREE: the MultiQueue's queues */
    unsigned nmq;               /* how many */
} crew__sched;

/* Helpers the strategies share (sched.c, sched_shared.c). */
int crew__sched_central_init(crew_pool *p, bool spin); /* SHARED's and STEAL's central queue */
void crew__sched_central_free(crew_pool *p);
/* Show one locked queue, or one deque, to crew_diagnose's visitor. */
void crew__sched_visit_lq(crew__lq *q, const char *what, int index, crew__queue_visitor fn,
                          void *ctx);
void crew__sched_visit_deque(crew__deque *d, const char *what, int index,
                             crew__queue_visitor fn, void *ctx);

/* The strategy a configuration names (CREW_SCHED_DEFAULT resolved through the environment
 * variable CREW_SCHEDULER; a value it does not know is reported once on stderr and the default
 * used), or NULL for a scheduler number out of range. OUT: *kind. */
const crew__sched_ops *crew__sched_resolve(unsigned scheduler, int *kind);
/* The pool's strategy in words (crew_diagnose). */
const char *crew__sched_what(const crew_pool *p);

/* The calls the rest of crew makes (sched.c), for the calling thread. */
int crew__sched_init(crew_pool *p, const crew_config *cfg, unsigned threads);
void crew__sched_free(crew_pool *p);
int crew__sched_worker_init(crew_pool *p, crew__worker *w);
void crew__sched_worker_free(crew_pool *p, crew__worker *w);
/* A (re)started worker's queue takes pushes (open), or a worker whose thread could not start
 * leaves its tasks to helpers (closed). */
void crew__sched_worker_open(crew_pool *p, crew__worker *w, bool open);
/* crew__sched_push, crew__sched_take, crew__sched_take_group and crew__sched_mark: inline, in
 * pool.h. */
int crew__sched_requeue(crew_pool *p, crew_task *t);
int crew__sched_worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan);
size_t crew__sched_queued(crew_pool *p); /* every queue's tasks, blocking ones included */
/* Drop the queued tasks of group {slot, gen} from the queues that can give them up (under
 * their locks); the rest are dropped by crew__run when they come up. Returns how many. */
size_t crew__sched_cancel_group(crew_pool *p, uint32_t slot, uint32_t gen);
size_t crew__sched_cancel_all(crew_pool *p); /* drop every queued task; returns how many */
crew_task *crew__sched_take_any(crew_pool *p); /* the task a helper would take next, or NULL */
/* Call fn for every queue of p, the blocking tasks' too (locked queues under their lock,
 * briefly). */
void crew__sched_visit(crew_pool *p, crew__queue_visitor fn, void *ctx);

#endif /* CREW_SCHEDULE_H */
