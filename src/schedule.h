/*
 * schedule.h -- the scheduling strategies behind one small interface (crew_config.scheduler):
 * where a submitted task is queued, and where a thread looking for work takes one.
 *
 * Each strategy is one file that fills a crew__sched_ops table and owns its state: what it
 * keeps for the pool (crew__sched.state, its own type, filled by its init) and for each worker
 * (the worker record's crew__sched_local area, cast to its own type). No other file sees a
 * strategy's fields; the rest of crew asks the table (has a sleeping worker work it could
 * take: has_work_for; where a task's mark is: mark_at).
 *   sched_shared.c       SHARED: one priority queue under one lock.
 *   sched_multiqueue.c   SHARED_LOCKFREE: a MultiQueue of try-locked priority queues.
 *   sched_per_worker.c   PER_WORKER: one priority queue per worker, fed round-robin.
 *   sched_steal.c        STEAL (default): a Chase-Lev deque per worker, external submission
 *                        slots and an injection queue; steal_join.h, its join interface (what a
 *                        join on a worker offers on its own deque and takes back, inline).
 *   tests/sched_simple.c "simple", for the tests only (CREW_SCHEDULER=simple; not in crew.h,
 *                        and only in the library the tests link: CREW_TEST_HOOKS,
 *                        CMakeLists.txt): one priority queue under one mutex, without group
 *                        lists. It shows what the interface asks of a strategy, and that
 *                        adding one is one file and one line in crew__sched_resolve's table.
 * schedule.c resolves the strategy a configuration names, and holds what every strategy shares:
 * the crew__sched_* calls the rest of crew makes (the takes for helpers check the pause; each
 * finds the calling thread's worker record once, then calls the table; those made once or
 * more per task are inline, in sched_calls.h), cancelling, and crew_diagnose's view. No other
 * file asks which strategy runs. The queues themselves are lq.h's and deque.h's.
 *
 * A take says what it did in the caller's crew__take_ctx: a lost race that may hide a task
 * (retry), and tasks it put (back) where other threads take them (pushed_back), for which the
 * caller wakes sleepers once it holds no lock (crew__wake_pushed_back). The context also
 * carries what the take may do (may_batch).
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
#include "lq.h"

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

/* A worker's own queue, as its strategy keeps it (crew__sched_ops.own): a locked queue
 * or a deque (the other NULL), and how crew_diagnose names it. */
typedef struct crew__sched_queue {
    crew__lq *lq;
    crew__deque *deque;
    const char *what; /* "the deque of worker", ... */
} crew__sched_queue;

/* Where a strategy keeps each worker's own queue (crew__sched_ops.own), in the worker's
 * crew__sched_local area: a description, not a function, since the monitored path counts the
 * queues on every submission, where an indirect call per worker cost instructions. */
typedef struct crew__sched_own {
    const char *what; /* "the deque of worker", ...; NULL: the workers keep no queue */
    unsigned at;      /* the byte in the area where the queue (or a pointer to it) is */
    bool deque;       /* a crew__deque, else a crew__lq */
    bool by_pointer;  /* the area holds a pointer to the queue, not the queue itself */
} crew__sched_own;

/* A take's context, owned by its caller (a thread's dispatch loop, a sleeper's last look):
 * what the take may do, and what it did. */
struct crew__frame; /* worker.h */

typedef struct crew__take_ctx {
    /* Out: a lost race may have hidden a task (the caller clears it). First: the deques'
     * steal writes it through a pointer, which is then the context's own address. */
    bool retry;
    /* In: the caller runs no task of the pool (a worker between tasks, its own loop), so the
     * take may move a batch of tasks into the worker's own queue; a thread inside a task (a
     * waiter that helps) takes one at a time. */
    bool may_batch;
    /* Out (a worker's take with may_batch): the task returned came from the worker's shared
     * batch (STEAL: steal_batch.h), which may hold more; the caller's loop then runs the
     * batch's next tasks (worker_batch.c) before its next take. Set only, never cleared, by
     * the take: the caller clears it. */
    bool batch;
    /* Out, added to: tasks the take put (back) where other threads take them. The caller wakes
     * sleepers for them once it holds no lock (crew__wake_pushed_back), at the latest
     * before it runs the task taken, sleeps or stops looking. */
    size_t pushed_back;
} crew__take_ctx;

/* The strategy's own part of each worker record (struct crew__worker), which its file casts to
 * its own type (checked there with crew__sched_local_fits): a fixed area in the record rather
 * than a pointer to one, since STEAL's deque is read by every push and take of its worker, and
 * a pointer would cost a dependent load each time. Sized for STEAL's deque (two lines: top and
 * bottom, each on its own) and its shared batch (steal_batch.h: thirteen lines), plus a line
 * to spare. */
#define CREW__SCHED_LOCAL_SIZE 1024u
typedef struct crew__sched_local {
    _Alignas(64) unsigned char bytes[CREW__SCHED_LOCAL_SIZE];
} crew__sched_local;
#define crew__sched_local_fits(type)                                                             \
    _Static_assert(sizeof(type) <= CREW__SCHED_LOCAL_SIZE && _Alignof(type) <= 64,               \
                   #type " must fit crew__sched_local")

/* push_values' answer for tasks it cannot hold by value (no error code is positive). */
#define CREW__SCHED_DECLINED 1

/*
 * A strategy. self is the calling thread's worker record if it is a worker of the pool, else
 * NULL. "Take" functions return NULL when they found nothing, and report in *tc (see
 * crew__take_ctx). Entries marked optional may be NULL.
 */
typedef struct crew__sched_ops {
    const char *name; /* as CREW_SCHEDULER spells it */
    const char *what; /* in words, for crew_diagnose */
    bool any_worker;  /* any worker can take any queued task (the pool's lookers: pool.h) */
    /* The strategy's pool-level state, its own type in p->sched.state: state_size bytes, and
     * state_more's (optional: a flexible array's, for this configuration and threads), which
     * schedule.c allocates (aligned to 64, zeroed) before init and frees after free. init fills
     * them: CREW_OK or CREW_ENOMEM. free (optional) undoes what init made, also after a failed
     * init (which leaves a count of what it made, or flags, in the state). */
    size_t state_size;
    size_t (*state_more)(crew_pool *p, const crew_config *cfg, unsigned threads);
    int (*init)(crew_pool *p, const crew_config *cfg, unsigned threads);
    void (*free)(crew_pool *p);
    /* Optional: a worker record's part (w->sched, crew__sched_local: made once per record,
     * freed with the pool), and opened or closed to pushes as its thread starts or fails to
     * start. */
    int (*worker_init)(crew_pool *p, crew__worker *w);
    void (*worker_free)(crew_pool *p, crew__worker *w);
    void (*worker_open)(crew__worker *w, bool open);
    /* Optional: may sleeping worker w take a task queued now (a hint, read under pool->lock
     * when choosing whom to wake)? Without it, any worker can take any queued task. */
    bool (*has_work_for)(crew_pool *p, crew__worker *w);
    /* Queue t[0..n), all or nothing: CREW_OK, CREW_ENOMEM, or CREW_ESHUTDOWN when no queue
     * takes pushes. */
    int (*push)(crew_pool *p, crew__worker *self, crew_task *t, size_t n);
    /* Optional: queue one crew_submit task (no flags; group slot, 0 for none) without a node,
     * by value: CREW_OK or CREW_ENOMEM. Without it, crew_submit gives the task a node. */
    int (*push_value)(crew_pool *p, crew__worker *self, crew_fn fn, void *arg, uint32_t priority,
                      uint32_t slot);
    /* Optional: queue t[0..n) (fn checked, of group slot; prio: their priorities or-ed) by
     * value, all or nothing, without writing t, which the queues then no longer refer to:
     * CREW_OK, CREW_ENOMEM, or CREW__SCHED_DECLINED (nothing done: queue them with push). */
    int (*push_values)(crew_pool *p, crew__worker *self, const crew_task *t, size_t n,
                       uint32_t slot, uint32_t prio);
    crew_task *(*take)(crew_pool *p, crew__worker *self, crew__take_ctx *tc);
    /* With a take that sets tc->batch (STEAL: its shared batch, worker_batch.c): after the task
     * that take returned, worker w's loop runs the batch's next tasks through this, in frame
     * (the loop's), once per batch: it returns a task it took but did not run (the loop runs
     * it as taken, then calls again), or NULL (the batch is done, or w has other work). */
    crew_task *(*run_batch)(crew_pool *p, crew__worker *w, struct crew__frame *frame);
    /* A queued task of group slot, newest first (STEAL: or one this thread pushed after
     * mark, its own descendants; with slot 0, only those). */
    crew_task *(*take_group)(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark,
                             crew__take_ctx *tc);
    /* Where take_group's mark is: a worker's mark when a task begins (crew__sched_mark) is the
     * _Atomic int64_t at byte mark_at of its crew__sched_local area (STEAL: its deque's bottom:
     * the task's own descendants sit above it), read relaxed by the worker itself. 0 (left
     * out): no marks, the mark is always 0; so a mark is never first in the area. An offset,
     * not a function: it is read as every task starts, where an indirect call cost
     * instructions a task. */
    unsigned mark_at;
    /* Optional: a join's offer (crew_join, join.c): queue fn(arg) (priority 0, no group) by
     * value where the calling thread finds it first (STEAL: the top of its worker's deque, or
     * of its external slot): take_group with slot 0 and *mark (OUT) gives back what was
     * queued there after the offer, newest first, the offered task last. CREW_OK, or an error
     * (CREW_ENOTSUP: no such place for this thread; CREW_ENOMEM) and nothing queued: join.c
     * then queues it in a group of its own. Without it, every join opens a group. */
    int (*offer)(crew_pool *p, crew__worker *self, crew_fn fn, void *arg, int64_t *mark);
    /* With offer: take the offered task back if it is still the newest above mark: 1 (gone
     * from the queue: the caller runs it), 0 (nothing lies above mark: another thread took
     * it; or the take gave way to a batch claim in progress, and the task may still be there:
     * the caller's wait looks again), -1 (other tasks lie on top of it, left there). */
    int (*take_back)(crew_pool *p, crew__worker *self, int64_t mark, crew_fn fn, void *arg);
    /* With offer: a worker's crew__sched_local area is the work-stealing strategy's
     * crew__steal_local, whose join interface (steal_join.h) makes the offer and take_back of
     * the worker itself inline, in join.c and sched_calls.h (a flag, not a function: an
     * indirect call on both sides of every join cost a fifth of a join's instructions). STEAL
     * only. */
    bool own_deque;
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
    /* Optional: the tasks in the pool's queues, not the workers' own (an estimate while busy),
     * and those queues shown to crew_diagnose's visitor. */
    size_t (*queued)(crew_pool *p);
    void (*visit)(crew_pool *p, crew__queue_visitor fn, void *ctx);
    /* Optional: where each worker's own queue is, if it keeps one: schedule.c walks the
     * workers for the count of queued tasks and for crew_diagnose. */
    crew__sched_own own;
} crew__sched_ops;

extern const crew__sched_ops crew__sched_shared, crew__sched_multiqueue,
    crew__sched_per_worker, crew__sched_steal;
extern const crew__sched_ops crew__sched_simple; /* the tests' library only (CREW_TEST_HOOKS) */

/* The strategy in struct crew_pool. */
typedef struct crew__sched {
    const crew__sched_ops *ops; /* fixed */
    int kind;                   /* fixed: enum crew_scheduler, resolved (simple: -1) */
    bool lock_spin;             /* fixed: queue locks are spinlocks */
    /* ops->own_deque, except in a child forked after the pool was made, where the fork handler
     * clears it (nodes.c, the child's only thread): a join's one test of its fast path, since
     * it tells also that the process has not forked (crew__sched_join_own). */
    bool own_deque;
    /* STEAL's external submission slots (steal_ext.h; set by its init once they are all
     * ready), which crew_submit from a thread outside the pool pushes into inline
     * (crew__sched_push_value); NULL under the other strategies, and in a forked child (the
     * fork handler clears it, as own_deque). */
    struct crew__ext_slot *ext;
    /* Fixed after init: the strategy's own state, of a type only its file knows (schedule.c
     * allocates it, the strategy's init fills it), or NULL. */
    void *state;
} crew__sched;

/* Helpers the strategies share (schedule.c, sched_shared.c). */
/* SHARED's queue and STEAL's injection queue: a priority queue with group lists (lq.h) under
 * the lock crew_config.lock names. CREW_OK or CREW_ENOMEM. */
int crew__sched_central_init(crew_pool *p, crew__lq *q);
/* Show one locked queue, or one deque, to crew_diagnose's visitor. */
void crew__sched_visit_lq(crew__lq *q, const char *what, int index, crew__queue_visitor fn,
                          void *ctx);
void crew__sched_visit_deque(crew__deque *d, const char *what, int index,
                             crew__queue_visitor fn, void *ctx);

/* The strategy a configuration names (CREW_SCHED_DEFAULT resolved through the environment
 * variable CREW_SCHEDULER; a value it does not know is reported once on stderr and the default
 * used), or NULL for a scheduler number out of range. OUT: *kind. */
const crew__sched_ops *crew__sched_resolve(unsigned scheduler, int *kind);
/* p runs under ops (kind: crew__sched_resolve's), chosen by crew_create before any thread of p
 * runs. */
void crew__sched_select(crew_pool *p, const crew__sched_ops *ops, int kind);
/* p's process is a child forked after p was made (the fork handler, its only thread): joins
 * take their checked path, which finds the pool forked (sched_calls.h). */
void crew__sched_forked(crew_pool *p);
/* The pool's strategy in words (crew_diagnose). */
const char *crew__sched_what(const crew_pool *p);

/* The calls the rest of crew makes (schedule.c), for the calling thread. */
int crew__sched_init(crew_pool *p, const crew_config *cfg, unsigned threads);
void crew__sched_free(crew_pool *p);
int crew__sched_worker_init(crew_pool *p, crew__worker *w);
void crew__sched_worker_free(crew_pool *p, crew__worker *w);
/* A (re)started worker's queue takes pushes (open), or a worker whose thread could not start
 * leaves its tasks to helpers (closed). */
void crew__sched_worker_open(crew_pool *p, crew__worker *w, bool open);
/* crew__sched_push, crew__sched_take, crew__sched_take_group, crew__sched_mark and the pause's
 * check after a take: inline, in sched_calls.h. */
int crew__sched_requeue(crew_pool *p, crew_task *t);
int crew__sched_worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan);
size_t crew__sched_queued(crew_pool *p); /* every queue's tasks, blocking ones included */
/* Are tasks queued that a worker can take (the blocking threads' queue not counted; an
 * estimate while busy)? */
bool crew__sched_any_queued(crew_pool *p);
/* Drop the queued tasks of group {slot, gen} from the queues that can give them up (under
 * their locks); the rest are dropped by crew__run when they come up. Returns how many. */
size_t crew__sched_cancel_group(crew_pool *p, uint32_t slot, uint32_t gen);
size_t crew__sched_cancel_all(crew_pool *p); /* drop every queued task; returns how many */
crew_task *crew__sched_take_any(crew_pool *p); /* the task a helper would take next, or NULL */
/* crew__held_back's slow half (sched_calls.h): t, taken as a cancelling shutdown began, is
 * dropped as the shutdown's sweep drops it (a completion callback excepted: it runs); taken as
 * a pause began, it goes back in front of its queue (counted in *pushed_back). True if held
 * back, false if it may run after all. */
bool crew__hold_back(crew_pool *p, crew_task *t, size_t *pushed_back);
/* Call fn for every queue of p, the blocking tasks' too (locked queues under their lock,
 * briefly). */
void crew__sched_visit(crew_pool *p, crew__queue_visitor fn, void *ctx);

#endif /* CREW_SCHEDULE_H */
