/*
 * internal.h -- the structures shared by crew's source files, and their crew__ functions,
 * grouped under the name of the file that defines them.
 *
 * Locking, in one place. The hot path (submit, take, run, finish) takes no pool-wide lock:
 *   - Each queue has its own lock (sched.c: crew__lq, a mutex or a spinlock per
 *     crew_config.lock); STEAL's deques take none (deque.c). Lock order: pool->lock, then a
 *     queue lock; several queue locks only in address order (sched.c, push_spread).
 *   - Groups finish with atomics alone (group.c); pending work is an atomic count.
 *   - pool->lock (a mutex) guards sleeping and waking (every condition variable uses it), the
 *     worker states' transitions, the counters marked "lock" below, and monitoring's records.
 *     Every sleep is an eventcount's (ec.h): a thread that is about to sleep prepares (counts
 *     itself and fences) and then looks for work once more; a thread that makes work available
 *     (or finishes a group, or the last pending task) asks crew__ec_sleepers and takes the lock
 *     only if someone sleeps. So no wake-up is lost, and a busy pool makes no system call.
 *   - pool->resize_lock serialises crew_resize and the joining of workers in crew_shutdown; it
 *     protects the worker records' thread fields. Lock order: resize_lock before lock.
 */
#ifndef CREW_INTERNAL_H
#define CREW_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crew.h"
#include "ec.h"
#include "lock.h"

/* A waiter runs tasks outside its own group only while fewer task frames than this are on its
 * stack, so helping cannot nest unrelated tasks until the stack overflows. */
#define CREW__HELP_DEPTH_MAX 8u

/* crew_task.crew_flags_ bits. */
#define CREW__TASK_NODE 1u    /* the pool allocated this task (crew_submit): recycle it */
#define CREW__TASK_STAMPED 2u /* timed (monitoring or autosize): crew_private_.reserved =
                                 submitted (ns), .spare = accepted - submitted (ns, saturated at
                                 2^32 - 1) */
#define CREW__TASK_COUNTED 4u /* submitted while monitoring was on: counted in the statistics */
#define CREW__TASK_BOUNDED 8u /* counted in pool->admitted (the bounded queue) until it starts */
#define CREW__TASK_DEADLINE 16u /* a crew__node with a start-by time (crew_submit_deadline) */

/* A crew_submit task: the pool's own memory (submit.c), with room for a start-by time. */
typedef struct crew__node {
    crew_task task; /* first: a crew_task * of a node points at its crew__node */
    uint64_t start_by; /* CREW__TASK_DEADLINE: drop it if it has not started by then (ns) */
} crew__node;

/* crew_pool.timing bits. */
#define CREW__TIMING_MONITOR 1u  /* monitoring is on */
#define CREW__TIMING_AUTOSIZE 2u /* an autosize controller runs */
#define CREW__TIMING_FORKED 4u   /* set in a forked child: sends crew_submit off its fast path */

#define crew__unused(x) ((void)(x))

/* Thread-local variables of the library: the initial-exec model, so that reading one is a single
 * %fs-relative load rather than a call to __tls_get_addr (the default for code compiled as
 * position-independent). crew's few words fit in the static TLS that the C library reserves
 * for libraries loaded later with dlopen. */
#define CREW__TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* The pause between two polls of an idle thread (crew_config.spin counts the polls). Pausing
 * only: yielding in the second half of the spin was measured slower (fork-join on 2 cores with
 * 3 threads: about 1.8 us a round against 0.9-1.9 us; a sched_yield costs about a microsecond). */
static inline void crew__spin_pause(void) {
    for (int k = 0; k < 16; k++)
        crew__cpu_relax();
}

/* A worker takes this many units of pool->pending at a time as credit (worker.c). */
#define CREW__CREDIT_BATCH 64u

/* Debug-yield (liburcu's DEBUG_YIELD): built with CREW_DEBUG_YIELD, the points marked with
 * crew__debug_yield() give up the processor at random (one time in four), to shake out races
 * in tests; otherwise they compile to nothing. */
#ifdef CREW_DEBUG_YIELD
void crew__debug_yield(void);
#else
#define crew__debug_yield() ((void)0)
#endif

/* ---------------------------------------------------------------------------------------------
 * prioq.c: the priority queue, a binary min-heap of priority levels, each a FIFO of tasks.
 * ------------------------------------------------------------------------------------------- */
typedef struct crew__level {
    crew_task *head;            /* oldest task of this priority */
    crew_task *tail;            /* newest task of this priority */
    struct crew__level *chain;  /* next level in the same hash bucket, or in the free list */
    uint32_t priority;          /* the key */
    uint32_t index;             /* position in crew__prioq.heap */
} crew__level;

typedef struct crew__prioq {
    crew__level **heap;    /* min-heap of the non-empty levels, by priority */
    uint32_t nlevels;      /* levels in the heap */
    uint32_t heap_cap;     /* allocated heap entries */
    crew__level **buckets; /* hash table: priority -> level */
    uint32_t nbuckets;     /* a power of two, or 0 before first use */
    crew__level *free;     /* recycled levels */
    size_t n;              /* queued tasks */
} crew__prioq;

int crew__prioq_push(crew__prioq *q, crew_task *t); /* CREW_OK, or CREW_ENOMEM and no change */
crew_task *crew__prioq_pop(crew__prioq *q);         /* highest priority, oldest; NULL if empty */
int crew__prioq_push_front(crew__prioq *q, crew_task *t); /* first of its priority */
/* The newest queued task of group slot (a search of every level), or NULL. */
crew_task *crew__prioq_find_newest(const crew__prioq *q, uint32_t slot);
uint32_t crew__prioq_top(const crew__prioq *q); /* best priority queued, UINT32_MAX if empty */
void crew__prioq_remove(crew__prioq *q, crew_task *t); /* t must be queued */
void crew__prioq_free(crew__prioq *q);
/* The earliest acceptance time (ns) of the timed tasks (CREW__TASK_STAMPED) nearest the front
 * of each level (each level is FIFO, so its first timed task is its oldest timed one; at most
 * CREW__PRIOQ_LOOK tasks are looked at per level); 0 if none was found. */
#define CREW__PRIOQ_LOOK 64u
uint64_t crew__prioq_oldest(const crew__prioq *q);

/* ---------------------------------------------------------------------------------------------
 * group.c: the slot map of groups (seed 000 §III-D). A slot holds a generation counter and the
 * number of open (accepted, unfinished) tasks, packed in one 64-bit word so one atomic load
 * tells a waiter both. Slots live in chunks of doubling size that never move, so a reader can
 * find a slot without the lock; slot 0 is never issued (it is CREW_HANDLE_NONE).
 * ------------------------------------------------------------------------------------------- */
#define CREW__SLOT_CHUNK0 64u /* slots in chunk 0; chunk k holds CREW__SLOT_CHUNK0 << k */
#define CREW__SLOT_CHUNKS 27u /* enough chunks for 2^32 slots */

typedef struct crew__slot {
    /* gen << 32 | open, changed with atomic read-modify-writes; see group.c for the orders. */
    _Atomic uint64_t state;
    /* The generation of the last group of this slot that was cancelled (crew_cancel, or a
     * shutdown that dropped its tasks); 0 = none (0 is never a group's generation). Written
     * with release (crew__group_done) or compare-and-swap (crew__group_cancel, which must not
     * erase a later group's mark); set before the decrement that lets open reach 0, so a
     * waiter that acquires the group's end sees it; workers read it relaxed before running a
     * task of the group (promptly, not at the instant crew_cancel returns). Naming the generation, not just "cancelled", keeps a late
     * crew_cancel from touching a later group that reuses the slot (a cancelled group's own slot
     * is never reused: crew__group_done). */
    _Atomic uint32_t cancelled_gen;
    /* The generation of the last group of this slot that lost a task (dropped by crew_cancel,
     * a cancelling shutdown, a full queue's drop-oldest, or its start-by time): its crew_wait
     * reports CREW_ECANCELED, or CREW_EEXPIRED if every task it lost was late (dropped_gen
     * and cancelled_gen do not name it). Only the group's own dropped tasks write it, with
     * release, before their decrement; unlike cancelled_gen it drops nothing more (one task
     * lost to a full queue does not cancel the rest of its group). */
    _Atomic uint32_t lost_gen;
    /* The same, for tasks lost other than to their start-by time; written like lost_gen, just
     * before it. */
    _Atomic uint32_t dropped_gen;
    /* Central queue's lock: newest task of the group queued there, linked by
     * crew_private_.gnext (sched.c). */
    crew_task *queued;
    /* Free list link (relaxed: ordered by the free list head's CAS, group.c). */
    _Atomic uint32_t next_free;
    /* Threads asleep in a wait for this group (ec.h); notified when it finishes or gets work. */
    crew__ec waiters;
    /* Tasks of the group queued in queues that keep no group lists (PER_WORKER, the MultiQueue);
     * relaxed, changed under those queues' locks (sched.c). */
    atomic_uint scattered;
} crew__slot;

typedef struct crew__slotmap {
    /* Chunk k; published with release after it is initialised, read with acquire. */
    crew__slot *_Atomic chunk[CREW__SLOT_CHUNKS];
    /* Slots issued so far plus one (slot 0). Stored with release after the chunk that holds the
     * new slot is published; loaded with acquire by validators, so slot < issued implies the
     * chunk pointer is visible. */
    _Atomic uint32_t issued;
    /* Free slots, a Treiber stack: tag << 32 | first slot (0 = none); the tag counts pops, so a
     * slot popped and pushed back between another thread's read and its CAS cannot fool it. */
    _Atomic uint64_t free_head;
    pthread_mutex_t grow_lock; /* new slots and chunks */
} crew__slotmap;

#define crew__gen_of(state) ((uint32_t)((state) >> 32))
#define crew__open_of(state) ((uint32_t)(state))

crew__slot *crew__slot_at(crew__slotmap *m, uint32_t slot);
/* Is slot one this map has issued? (Lock-free.) */
bool crew__slot_valid(crew__slotmap *m, uint32_t slot);
/* Could this map have issued h? Its slot must be one it issued, and its generation not 0,
 * which no group ever gets (group.c skips it); CREW_HANDLE_NONE is not a group. */
static inline bool crew__handle_valid(crew__slotmap *m, crew_handle h) {
    return h.slot != 0 && h.gen != 0 && crew__slot_valid(m, h.slot);
}
/* Free slots kept by one worker (no shared line touched to open and free its groups). */
#define CREW__SLOT_CACHE 64u
typedef struct crew__slot_cache {
    unsigned n;
    uint32_t slot[CREW__SLOT_CACHE];
} crew__slot_cache;

/* Open a new group of n tasks, taking the slot from cache if it has one (cache: the calling
 * worker's, or NULL). OUT: *h. CREW_OK or CREW_ENOMEM. */
int crew__group_open(crew__slotmap *m, uint32_t n, crew_handle *h, crew__slot_cache *cache);
/* Add n tasks to an open group. CREW_OK, CREW_ESTALE or CREW_ERANGE. */
int crew__group_add(crew__slotmap *m, crew_handle h, uint32_t n);
/* Undo a successful crew__group_open whose tasks could not be queued (the handle was never
 * handed out). */
void crew__group_abandon(crew__slotmap *m, uint32_t slot, crew__slot_cache *cache);
/* How tasks left their group (crew__group_done, crew__tasks_finished). */
enum crew__end {
    CREW__RAN = 0,    /* ran, or were never queued after all */
    CREW__LOST = 1,   /* dropped: crew_cancel, a cancelling shutdown, a full queue */
    CREW__EXPIRED = 2 /* dropped: their start-by time passed */
};
/* n tasks of slot ended as `how` says. Returns true if the group finished (its open count
 * reached 0). */
bool crew__group_done(crew__slotmap *m, uint32_t slot, uint32_t n, enum crew__end how,
                      crew__slot_cache *cache);
/* Cancel an open group: its tasks not yet started will be dropped. CREW_OK or CREW_ESTALE. */
int crew__group_cancel(crew__slotmap *m, crew_handle h);
/* The group's status without the lock: 1 = still open, CREW_OK = finished, CREW_ECANCELED,
 * CREW_EEXPIRED. */
int crew__group_status(crew__slotmap *m, crew_handle h);
/* The same, given the slot (a waiter looks it up once). A group that lost tasks keeps its slot
 * (crew__group_done), so it stays CREW_ECANCELED. */
static inline int crew__slot_status(crew__slot *sl, uint32_t gen) {
    /* Acquire: pairs with the releases in crew__group_done; a finished answer happens-after
     * every task of the group. */
    uint64_t st = crew__load_acquire(&sl->state);
    if (crew__gen_of(st) == gen && crew__open_of(st) != 0)
        return 1;
    /* Relaxed: written before the release that ended the group (see crew__slot). */
    bool cancelled = crew__load_relaxed(&sl->cancelled_gen) == gen;
    if (crew__load_relaxed(&sl->lost_gen) != gen && !cancelled)
        return CREW_OK; /* the common case first: two loads, as without deadlines */
    return cancelled || crew__load_relaxed(&sl->dropped_gen) == gen
               ? CREW_ECANCELED
               : CREW_EEXPIRED;
}
/* Is the open group of slot, generation gen, cancelled? */
static inline bool crew__slot_cancelled(crew__slot *sl, uint32_t gen) {
    return crew__load_relaxed(&sl->cancelled_gen) == gen; /* see above */
}
int crew__slotmap_init(crew__slotmap *m); /* CREW_OK or CREW_ENOMEM */
void crew__slotmap_free(crew__slotmap *m);

/* ---------------------------------------------------------------------------------------------
 * stats.c: monitoring. One block per recording thread (a worker's own, or a stripe shared by
 * the threads that are not workers); no lock on the recording path.
 * ------------------------------------------------------------------------------------------- */
#define CREW__HIST_BUCKETS 496u /* 16 exact buckets, then 8 per power of two up to 2^63 */
#define CREW__STATS_STRIPES 8u  /* blocks shared by threads that are not workers */
#define CREW__PEAK_SAMPLE 8u    /* the queue's peak is measured at one submission in this many */

/* Every counter below is relaxed (stats.c says why). */
typedef struct crew__hist {
    _Atomic uint64_t n;                     /* samples */
    _Atomic uint64_t sum;                   /* their total, for the mean */
    _Atomic uint64_t max;                   /* the largest */
    _Atomic uint64_t b[CREW__HIST_BUCKETS]; /* counts per log-linear bucket */
} crew__hist;

typedef struct crew__tstats {
    bool shared; /* written by several threads (read-modify-writes), else by its owner only */
    /* Owned blocks: the reset epoch the block counts for (release/acquire, stats.c). */
    _Atomic uint64_t epoch;
    /* The controller's inputs (autosize), never reset: timed tasks finished, their run time
     * and queue time, and (workers' blocks) the thread's context switches: waits and
     * preemptions. */
    _Atomic uint64_t timed, timed_busy_ns, timed_wait_ns, waits, preemptions;
    /* From here to the end, what crew_stats_reset clears. */
    _Atomic uint64_t submitted, completed, cancelled, rejected, expired; /* as in crew_stats */
    _Atomic uint64_t busy_ns, waiting_ns, tasks; /* this thread, as in crew_thread_stats */
    crew__hist response, idle, processing, turnaround; /* as in crew_stats */
} crew__tstats;

uint64_t crew__now_ns(void);
/* The calling thread's block (allocated on first use; NULL if memory ran out). */
struct crew__tstats *crew__stats_block(crew_pool *p);
void crew__stats_submitted(crew_pool *p, size_t n, uint64_t submitted, uint64_t accepted);
void crew__stats_rejected(crew_pool *p, size_t n);
void crew__stats_dropped(crew_pool *p, enum crew__end how); /* CREW__LOST or CREW__EXPIRED */
void crew__stats_done(struct crew__tstats *s, uint64_t submitted, uint64_t accepted,
                      uint64_t started, uint64_t finished);
/* A timed task waited wait_ns in the queue, ran for processing_ns and finished at now
 * (autosize's inputs). */
void crew__stats_timed(crew_pool *p, struct crew__tstats *s, uint64_t wait_ns,
                       uint64_t processing_ns, uint64_t now);
void crew__stats_waited(crew_pool *p, uint64_t ns);
/* The controller's inputs summed over every block. */
typedef struct crew__timed_sum {
    uint64_t tasks, busy_ns, wait_ns, waits, preemptions;
} crew__timed_sum;
void crew__stats_timed_sum(crew_pool *p, crew__timed_sum *sum);
void crew__stats_free(crew_pool *p);
/* A small number for the calling thread, the same in every pool (spreads threads over
 * stripes and external slots). */
unsigned crew__thread_number(void);

/* ---------------------------------------------------------------------------------------------
 * autosize.c: the sizing controllers and their thread.
 * ------------------------------------------------------------------------------------------- */
typedef struct crew__ait_state {
    double pre;        /* preAIT (ns) */
    double prepre;     /* prepreAIT (ns) */
    unsigned pre_size; /* prePoolSize */
} crew__ait_state;

typedef struct crew__balance_in {
    double period_s;    /* length of the measured period */
    uint64_t completed; /* tasks finished in it */
    double busy;        /* average number of tasks running */
    double cpu;         /* cores' worth of CPU the process used */
    size_t queued;      /* tasks queued at the end of it */
    unsigned size;      /* pool size now */
    unsigned cores;     /* online cores */
    /* Of the workers' context switches in the period, the share that were preemptions (the
     * thread wanted the CPU) rather than waits (it blocked): near 1 when the tasks are
     * CPU-bound and threads outnumber cores; negative when not measured. */
    double preempted;
    /* The tasks' average time in the queue over their average run time (negative: not
     * measured). Large when tasks wait for a thread, as bursts do in a pool that looks idle on
     * average. */
    double wait_ratio;
} crew__balance_in;

typedef struct crew__balance_state {
    unsigned best_size; /* the size with the best throughput in this regime (0 = none yet) */
    double best_x;      /* that throughput, refreshed while at best_size */
    int dir;            /* the last probe: +1 grew, -1 shrank, 0 none */
    unsigned down_step; /* threads removed per downward probe (0 = not set) */
    unsigned hold;      /* periods left before probing again */
    bool hold_blocked;  /* the hold began while the workers mostly waited (tasks blocked) */
    unsigned fails;     /* probes undone in a row in this regime (each doubles the hold) */
    bool probed_one;    /* this regime tried one thread more than the cores */
    double probe_wait;  /* > 0: the last move grew the pool for waiting tasks, at this ratio */
    unsigned probe_from; /* the size before that move */
    unsigned calm;       /* periods in a row in which tasks hardly waited */
    unsigned settle;    /* periods to skip after a resize */
    unsigned judge_left; /* periods still to measure before judging the last move */
    double acc_done, acc_s; /* completions and seconds measured so far for that judgement */
} crew__balance_state;

typedef struct crew__autosize {
    unsigned mode, min, max;  /* settings (fixed) */
    unsigned cycle, stride;   /* AIT settings (fixed) */
    unsigned period_ms;       /* BALANCE setting (fixed) */
    pthread_t thread;         /* the controller */
    bool started, joined;     /* join_lock */
    pthread_mutex_t join_lock; /* one crew_shutdown joins the controller */
    pthread_mutex_t lock;     /* the fields marked "lock" below */
    pthread_cond_t cv;        /* the controller sleeps here, with lock */
    bool stop;                /* lock: the controller must exit */
    uint64_t cycle_idle_ns;   /* lock: idle time summed over the current AIT cycle */
    unsigned cycle_count;     /* lock: tasks in the current AIT cycle */
    uint64_t cycles_done;     /* lock: AIT cycles completed */
    double last_ait_ns;       /* lock: the last cycle's average idle time */
    uint64_t resizes;         /* lock: resizes made */
} crew__autosize;

/* Seed 001 Fig. 9 as written: the next pool size after a cycle whose average idle time is
 * ait (clamped into [min, max]). */
unsigned crew__ait_step(crew__ait_state *s, double ait, unsigned size, unsigned stride,
                        unsigned min, unsigned max);
/* crew's controller: the next pool size after one measured period. */
unsigned crew__balance_step(crew__balance_state *s, const crew__balance_in *in, unsigned min,
                            unsigned max);
int crew__autosize_check(const crew_config *cfg);             /* CREW_OK or CREW_EINVAL */
int crew__autosize_start(crew_pool *p, const crew_config *cfg); /* starts the controller */
/* A timed task finished after waiting idle_ns in the queue (AIT's cycle; no-op for BALANCE). */
void crew__autosize_sample(crew_pool *p, uint64_t idle_ns);
void crew__autosize_stop(crew_pool *p); /* joins the controller; safe to call twice */
void crew__autosize_free(crew_pool *p);

/* ---------------------------------------------------------------------------------------------
 * pool.c: lifecycle, resize, shutdown.
 * ------------------------------------------------------------------------------------------- */
enum crew__pool_state {
    CREW__OPEN = 0,
    CREW__CLOSING = 1,
    CREW__FORKED = 2 /* this process is a child forked after the pool was made (submit.c) */
};

enum crew__worker_state {
    CREW__W_RUNNING = 0, /* takes tasks */
    CREW__W_MARKED = 1,  /* resize asked it to exit after its current task; may be revived */
    CREW__W_EXITED = 2   /* left its loop; the thread is ready to be joined */
};

/* deque.c: the Chase-Lev work-stealing deque (STEAL). */
typedef struct crew__deque_array {
    size_t mask;                       /* slots - 1; slots is a power of two */
    struct crew__deque_array *older;   /* the array this one replaced (freed with the deque) */
    crew_task *_Atomic slot[];         /* relaxed: published through bottom (see deque.c) */
} crew__deque_array;

typedef struct crew__deque {
    /* The next task to steal; thieves advance it with seq_cst CAS (deque.c). */
    _Alignas(64) _Atomic int64_t top;
    /* One past the newest task; written only by the owner, with release stores (deque.c). */
    _Alignas(64) _Atomic int64_t bottom;
    /* The current array; release-published by the owner when it grows, acquired by thieves. */
    crew__deque_array *_Atomic array;
    /* crew_diagnose's last look (pool->diag_lock): the top it saw with tasks queued, and since
     * when it has seen that top (0: nothing queued then). */
    int64_t seen_top;
    uint64_t seen_since;
} crew__deque;

int crew__deque_init(crew__deque *d);
void crew__deque_free(crew__deque *d);
/* Owner: push t[0..n) (all or nothing: CREW_OK or CREW_ENOMEM). */
int crew__deque_push(crew__deque *d, crew_task *t, size_t n);
int crew__deque_push_ptrs(crew__deque *d, crew_task *const *v, size_t n); /* *v[0..n) */
/* Owner: make room for n more tasks now, so a later push of at most n cannot fail. */
int crew__deque_reserve(crew__deque *d, size_t n);
crew_task *crew__deque_take(crew__deque *d); /* owner: the newest task, or NULL */
/* Anyone: the oldest task, or NULL; *contended is set when a race was lost. */
crew_task *crew__deque_steal(crew__deque *d, bool *contended);
size_t crew__deque_size(crew__deque *d); /* an estimate (relaxed loads) */
int64_t crew__deque_top(crew__deque *d);  /* the index of the oldest task (relaxed) */

/* sched.c: a priority queue under a lock. */
typedef struct crew__lq {
    _Alignas(64) crew__lock lock;
    crew__prioq q; /* lock */
    /* q.n and the best queued priority (UINT32_MAX if none), stored under the lock and read
     * without it (relaxed): hints, except where a sleeper orders its read with a fence. */
    _Atomic size_t n;
    _Atomic uint32_t top;
    bool groups; /* fixed: keeps each group's list of queued tasks (the central queue) */
    bool closed; /* lock: a PER_WORKER queue whose worker exited takes no pushes */
} crew__lq;

/* submit.c: free crew_submit nodes cached by one thread (a worker's, or a producer's). */
typedef struct crew__node_list {
    crew_task *head; /* linked by crew_private_.gnext */
    unsigned n;
} crew__node_list;

/* sched.c: an external submission slot (STEAL): a deque whose owner side is locked. */
#define CREW__EXT_SLOTS 8u
typedef struct crew__ext {
    crew__lock lock;    /* serialises push and pop (the owner side) */
    crew__deque deque;  /* thieves steal without the lock */
} crew__ext;

/* diagnose.c: the outermost task a pool thread runs now, for crew_diagnose (monitoring only).
 * A seqlock: the owner makes seq odd, writes fn and since, makes it even; every field is
 * relaxed, ordered by release and acquire fences (diagnose.c). */
typedef struct crew__busy {
    crew_pool *pool;           /* fixed: the pool the thread belongs to */
    _Atomic uint32_t seq;      /* even: fn and since agree */
    _Atomic uintptr_t fn;      /* the task's function, 0 = none */
    _Atomic uint64_t since;    /* when it started (crew__now_ns) */
} crew__busy;
/* This thread's record: a worker's or a blocking thread's, NULL for other threads. */
extern CREW__TLS crew__busy *crew__tls_busy;
void crew__busy_begin(crew__busy *b, crew_fn fn, uint64_t started); /* the owner only */
void crew__busy_end(crew__busy *b);                                 /* the owner only */

/* diagnose.c: a thread asleep in crew_wait, crew_wait_all or waiting for room in the bounded
 * queue, listed in pool->blocked (under pool->lock) while it sleeps. */
enum crew__blocked_kind { CREW__BLOCKED_WAIT = 0, CREW__BLOCKED_WAIT_ALL = 1, CREW__BLOCKED_ROOM = 2 };
typedef struct crew__blocked {
    struct crew__blocked *next, *prev; /* lock */
    uint64_t since;                    /* its first sleep in this call (0 before it) */
    int kind;                          /* enum crew__blocked_kind */
    crew_handle group;                 /* WAIT: the group */
    size_t n;                          /* ROOM: the tasks it needs room for */
} crew__blocked;
/* List b in p->blocked before a sleep, stamping its first sleep; lock held. */
void crew__blocked_add(crew_pool *p, crew__blocked *b);
void crew__blocked_remove(crew_pool *p, crew__blocked *b); /* after the sleep; lock held */

typedef struct crew__worker {
    crew_pool *pool;  /* owner */
    pthread_t thread; /* valid when started */
    unsigned index;   /* position in pool->workers, for the thread name */
    /* Transitions happen under pool->lock with compare-and-swap (seed 000 §III-E); relaxed
     * suffices because the lock orders them; lock-free readers take it as a hint, and a worker
     * re-checks its own state after taking a task (worker.c). */
    _Atomic int state;
    bool started; /* resize_lock: thread was created */
    bool joined;  /* resize_lock: thread was joined, or claimed by crew_shutdown to join */
    /* The thread has returned from on_stop and touches nothing more: joining it waits for
     * nothing else. Stored with release by the thread, loaded with acquire by reap_exited. */
    _Atomic bool gone;
    crew__ec_waiter waiter; /* its sleep on pool->work (cv: its own cv) */
    pthread_cond_t cv; /* the worker sleeps here, with pool->lock */
    /* Monitoring block, allocated by the worker on first use (release: stats.c). */
    crew__tstats *_Atomic stats;
    /* Tasks this worker stole; written by the worker only, read by statistics (relaxed). */
    _Atomic uint64_t stolen;
    uint64_t stolen_base; /* stats_lock: stolen at the last crew_stats_reset */
    crew__slot_cache slots; /* owner: free group slots cached by this worker */
    crew__node_list nodes; /* owner: free crew_submit nodes cached by this worker */
    /* Owner: units of pool->pending this worker holds but no task uses (always >= 0). A task
     * the worker submits takes a unit from here (taking CREW__CREDIT_BATCH more from pending
     * when none is left), a task it finishes gives its unit back here, and the worker returns
     * the surplus above 2 x CREW__CREDIT_BATCH, and everything whenever it runs out of work.
     * So pending never reads 0 while a task is unfinished (it counts every task plus the
     * credit), it is exact when every worker is idle, and spawn-and-wait on a worker touches
     * the shared count once per CREW__CREDIT_BATCH tasks at most (worker.c). Written by the
     * owner only (relaxed load and store, no read-modify-write); crew_stats_get reads it
     * (relaxed) to tell running tasks from credit. */
    _Atomic size_t credit;
    crew__deque deque; /* STEAL: this worker's tasks */
    crew__lq *queue;   /* PER_WORKER: this worker's queue */
    crew__busy busy;   /* its task now, for crew_diagnose */
} crew__worker;

/* sched.c: a crew__lq by itself. */
int crew__lq_init(crew__lq *q, bool spin, bool groups);
void crew__lq_free(crew__lq *q);
int crew__lq_push_n(crew_pool *p, crew__lq *q, crew_task *t, size_t n); /* all or nothing */
crew_task *crew__lq_take(crew_pool *p, crew__lq *q);

/* blocking.c: the blocking tasks' queue and threads. */
struct crew__bthread;
typedef struct crew__blocking {
    crew__lq *queue;     /* blocking tasks waiting for a thread */
    unsigned max;        /* fixed: crew_config.max_blocking */
    unsigned idle_ms;    /* fixed: crew_config.blocking_idle_ms */
    unsigned running;    /* lock: blocking threads alive */
    crew__ec idle;       /* of those, asleep waiting for a task (ec.h, used under lock only) */
    unsigned peak;       /* lock: most alive at once */
    bool stop;           /* lock: crew_shutdown: exit */
    struct crew__bthread **threads; /* lock: thread records, reused after their thread exits */
    unsigned nthreads, cap;         /* lock */
} crew__blocking;

int crew__blocking_init(crew_pool *p, const crew_config *cfg);
void crew__blocking_free(crew_pool *p);
/* Queue t[0..n) as blocking tasks: CREW_OK, CREW_ENOMEM, or CREW_EAGAIN (no thread at all). */
int crew__blocking_push(crew_pool *p, crew_task *t, size_t n);
size_t crew__blocking_cancel_all(crew_pool *p);
size_t crew__blocking_queued(crew_pool *p);
/* crew_diagnose: call fn for the busy record of every blocking thread alive; lock held. */
void crew__blocking_visit_locked(crew_pool *p, void (*fn)(void *ctx, unsigned index,
                                                          crew__busy *b), void *ctx);
void crew__blocking_wake_all_locked(crew_pool *p); /* idle blocking threads look again */
void crew__blocking_stop(crew_pool *p); /* every accepted task finished: stop and join */

/* The scheduling strategy's interface (sched.c). "Take" functions return NULL when they found
 * nothing; *retry is set when a lost race may have hidden a task. */
int crew__sched_init(crew_pool *p, const crew_config *cfg, unsigned threads);
void crew__sched_free(crew_pool *p);
int crew__sched_worker_init(crew_pool *p, crew__worker *w);
void crew__sched_worker_free(crew_pool *p, crew__worker *w);
void crew__sched_worker_open(crew__worker *w); /* a (re)started worker's queue takes pushes */
/* Queue t[0..n) (crew_private_.slot set), all or nothing: CREW_OK, CREW_ENOMEM, or
 * CREW_ESHUTDOWN when no queue takes pushes. */
int crew__sched_push(crew_pool *p, crew_task *t, size_t n);
crew_task *crew__sched_take(crew_pool *p, bool *retry); /* any task, for this thread */
/* A task of group slot, newest first (or, for STEAL, a task this thread pushed after mark).
 * general: the caller may take any task anyway; strategies without per-group lists then skip
 * their search, which costs the length of every queue. */
crew_task *crew__sched_take_group(crew_pool *p, uint32_t slot, int64_t mark, bool general);
int64_t crew__sched_mark(crew_pool *p); /* this thread's mark for crew__sched_take_group */
/* Put a taken task back, in front: CREW_OK, or CREW_ENOMEM (then the caller runs it). */
int crew__sched_requeue(crew_pool *p, crew_task *t);
/* w leaves: move its queued tasks where others find them (*moved: how many). CREW_OK, or
 * CREW_ENOMEM: w must stay and work, and must run *orphan (if set) itself. */
int crew__sched_worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan);
size_t crew__sched_queued(crew_pool *p);     /* tasks queued (an estimate while busy) */
/* Drop the queued tasks of group {slot, gen} from the queues that can give them up (under
 * their locks); the rest are dropped by crew__run when they come up. Returns how many. */
size_t crew__sched_cancel_group(crew_pool *p, uint32_t slot, uint32_t gen);
size_t crew__sched_cancel_all(crew_pool *p); /* drop every queued task; returns how many */
crew_task *crew__sched_take_any(crew_pool *p); /* the task a helper would take next, or NULL */
/* One queue as crew_diagnose sees it. */
typedef struct crew__queue_view {
    const char *what;  /* "the shared queue", "worker", "the blocking queue", ... */
    int index;         /* the worker or slot number, or -1 */
    size_t n;          /* tasks queued (exact for locked queues, an estimate for deques) */
    /* Locked queues: the acceptance time (ns) of the oldest timed task found at the front of
     * each priority level, 0 if none is timed. */
    uint64_t oldest;
    crew__deque *deque; /* a deque: no task's clock can be read safely, see diagnose.c */
} crew__queue_view;
/* Call fn for every queue of p (locked queues under their lock, briefly). */
void crew__sched_visit(crew_pool *p, void (*fn)(void *ctx, const crew__queue_view *v), void *ctx);

struct crew_pool {
    /* Settings, fixed after crew_create. */
    unsigned id;        /* process-unique number, for thread names */
    uint64_t serial;    /* never reused within the process (submit.c's node caches) */
    char name[8];       /* thread name prefix */
    size_t stack_size;  /* 0 = default */
    unsigned spin;      /* polls before sleeping */
    int sched;          /* enum crew_scheduler, resolved (never CREW_SCHED_DEFAULT) */
    bool lock_spin;     /* queue locks are spinlocks */
    /* Are tasks timed, and why: CREW__TIMING_MONITOR (statistics, crew_set_monitoring) and
     * CREW__TIMING_AUTOSIZE (the controller's inputs), one word so that the untimed hot path
     * tests one value. Read without the lock (relaxed: a task submitted while it changes is
     * simply timed or not). */
    atomic_uint timing;

    /* The scheduler's queues (sched.c). */
    crew__lq *central;  /* SHARED's queue, STEAL's injection queue; else NULL */
    crew__ext *ext;     /* STEAL: external submission slots (CREW__EXT_SLOTS), else NULL */
    unsigned next;      /* external slots initialised */
    crew__lq *mq;       /* SHARED_LOCKFREE: the MultiQueue's queues */
    unsigned nmq;       /* how many */

    /* Read on every submission or take, written rarely: kept on the lines of the settings,
     * away from the counters below that submitters write on every task (when pending shared a
     * line with paused, each submission's increment took that line from the workers, who read
     * paused on every take, and back). */
    /* CREW__OPEN or CREW__CLOSING; written under lock (seq_cst), read anywhere: submitters
     * re-check it after counting themselves in pending (submit.c). */
    atomic_int state;
    /* crew_pause: every taker (worker, helping waiter, blocking thread) finds no work. Written
     * under lock; read relaxed by takers, since a sleeper's last look and crew_resume's wake-up
     * both happen under lock, and a spinning taker only needs to see it eventually. */
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
    atomic_uint rr;     /* PER_WORKER: round-robin position (relaxed: spreads, orders nothing) */
    char pad_submit_end_[64 - sizeof(size_t) - sizeof(unsigned)];

    /* Eventcounts (ec.h), all slept on under lock: workers and waiters that would take any task
     * (work; notified by whoever queues tasks), and threads waiting for pending to reach 0
     * (quiet; notified by the decrement to 0). */
    crew__ec work;
    crew__ec quiet;
    atomic_bool cancelled_any; /* a shutdown dropped tasks (relaxed: read after joining) */

    pthread_mutex_t lock;    /* see the top of this file */
    pthread_cond_t wait_cv;  /* waiting callers sleep here */
    unsigned sleeping_workers; /* lock: workers asleep on their cv */
    unsigned sleeping_helpers; /* lock: waiters asleep that may take any task when one comes */

    /* The bounded queue (crew_config.queue_capacity, 0 = none; fixed). admitted counts the
     * queued tasks that hold a place (CREW__TASK_BOUNDED); seq_cst read-modify-writes, since a
     * task that starts frees a place, the event room's sleepers look for (ec.h). */
    size_t capacity;
    unsigned full_policy;
    _Atomic size_t admitted;
    crew__ec room;              /* submitters asleep waiting for room (ec.h) */
    pthread_cond_t space_cv;    /* they sleep here, with lock (CLOCK_MONOTONIC) */

    crew__blocking *blocking; /* blocking tasks (fixed after create) */

    crew__lock node_lock;  /* free_nodes and node_chunks */
    crew_task *free_nodes; /* node_lock: recycled crew_submit tasks */
    void *node_chunks;     /* node_lock: list of allocated chunks of nodes, freed on destroy */

    crew__slotmap groups; /* groups (slot map) */

    crew__autosize *autosize; /* the sizing controller, NULL when off (fixed after create) */
    crew_hooks hooks; /* crew_config.hooks, copied (fixed after create; zero: none) */
    /* Monitoring (stats.c). Blocks of the threads that are not workers, allocated on first
     * use (published by compare-and-swap). */
    crew__tstats *_Atomic outside[CREW__STATS_STRIPES];
    pthread_mutex_t stats_lock; /* serialises readers and resets */
    _Atomic uint64_t stats_epoch; /* bumped by crew_stats_reset (relaxed: see stats.c) */
    uint64_t stats_epoch_ns;      /* stats_lock: crew_create or the last crew_stats_reset */
    _Atomic size_t queued_peak; /* most tasks queued at once, sampled (relaxed: a statistic) */
    unsigned threads_peak;   /* lock: most running workers at once */

    crew__blocked *blocked;     /* lock: threads asleep in a wait or for room (diagnose.c) */
    pthread_mutex_t diag_lock;  /* serialises crew_diagnose (the deques' seen_* fields) */

    pthread_mutex_t resize_lock; /* see the top of this file */
    unsigned joins;              /* resize_lock: crew_shutdown calls joining workers now */
    pthread_cond_t join_cv;      /* they wait here for each other's joins, with resize_lock */
    /* Every worker record ever made (CREW_MAX_THREADS entries), never freed before the pool:
     * entries below nworkers are set, and thieves and round-robin read them without a lock.
     * Relaxed entries, published by nworkers' release store (made under resize_lock). */
    crew__worker *_Atomic *workers;
    _Atomic unsigned nworkers;
    /* The size last requested; written under resize_lock, read anywhere (relaxed: a plain
     * number, nothing is published through it). */
    atomic_uint target;
};

/* Is this process a child forked after p was made? (Set by submit.c's fork handler; relaxed:
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

/* pool.c helpers shared with the other subsystems. */
unsigned crew__online_cores(void); /* at least 1, at most CREW_MAX_THREADS */
/* pthread_create with every signal blocked in the new thread (signals belong to the
 * application's own threads). Returns pthread_create's result. */
int crew__spawn(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
unsigned crew__running_workers_locked(crew_pool *p); /* workers RUNNING now; lock held */

/* ---------------------------------------------------------------------------------------------
 * worker.c: the worker loop, running a task, completion and wake-ups.
 * ------------------------------------------------------------------------------------------- */

/* A task running on this thread; frames chain through the stack when a waiting task helps. */
typedef struct crew__frame {
    crew_pool *pool;         /* whose task this is */
    struct crew__frame *up;  /* the frame below, or NULL */
    unsigned depth;          /* frames on the stack, this one included */
    crew_handle group;       /* the task's own group, {0, 0} if none */
    int64_t mark;            /* crew__sched_mark when the task started */
} crew__frame;

/* The innermost running task on this thread, NULL outside tasks. */
extern CREW__TLS crew__frame *crew__tls_frame;
/* The worker this thread is, NULL for other threads. */
extern CREW__TLS crew__worker *crew__tls_worker;

void *crew__worker_main(void *arg);
/* A pool thread starts (its CPU affinity, then crew_hooks.on_start) or stops (on_stop).
 * index: the worker's, or CREW_MAX_THREADS + a blocking thread's. */
void crew__thread_start(crew_pool *p, unsigned index);
void crew__thread_stop(crew_pool *p, unsigned index);
/* Name the calling thread "<pool name>-<pool id>-<role>" (cut to what the system keeps). */
void crew__name_thread(const crew_pool *p, const char *role);
/* The pool whose on_start or on_stop hook runs on this thread now, else NULL (pool.c). */
extern CREW__TLS const crew_pool *crew__tls_hook;
/* Is a task of p running on this thread (anywhere on its stack)? */
bool crew__in_task_of(const crew_pool *p);
/* Is a task of group g of p running on this thread (anywhere on its stack)? */
bool crew__in_group(const crew_pool *p, crew_handle g);
/* Run a task taken with crew__sched_take*, then count it finished. */
void crew__run(crew_pool *p, crew_task *t);
/* n tasks of group slot (0 = none) were just queued: wake whoever can run them. */
void crew__notify_work(crew_pool *p, size_t n, uint32_t slot);
/* Wake every sleeper of p (state changes: resize, shutdown). */
void crew__notify_all(crew_pool *p);
/* Wake every sleeping worker and waiter (lock held). */
void crew__wake_all_locked(crew_pool *p);
/* A queued task is dropped: count and report it, never run it. by_pool: a shutdown that
 * cancels or a full queue that drops its oldest (crew_wait_all reports those); else its group
 * was cancelled. */
void crew__task_dropped(crew_pool *p, crew_task *t, bool by_pool);
/* n tasks of group slot (0 = none) ended as `how` says, or were never queued after all
 * (CREW__RAN): count them and wake whoever waits for them. */
void crew__tasks_finished(crew_pool *p, uint32_t slot, size_t n, enum crew__end how);
/* Tasks this thread pushed back into a queue while taking one (sched.c). crew__run wakes a
 * sleeper for them before it runs the task taken; a taker that ends up sleeping instead calls
 * crew__notify_pushed_back itself once it holds no lock. */
extern CREW__TLS size_t crew__tls_pushed_back;
void crew__notify_pushed_back(crew_pool *p);
/* A task that held a place in the bounded queue started or was dropped: free the place. */
void crew__admit_release(crew_pool *p);
/* Count n newly accepted tasks in pending (from the calling worker's credit if it is one). */
void crew__pending_add(crew_pool *p, size_t n);
/* Return the calling worker's credit to pending now (see crew__worker). */
void crew__flush_finished(crew_pool *p, crew__worker *w);
/* pool->lock held: wake up to n sleeping workers that can run newly queued work, and the
 * waiters that could help (or whose group slot got work). */
void crew__wake_locked(crew_pool *p, size_t n, uint32_t slot);

/* ---------------------------------------------------------------------------------------------
 * wait.c: helping waits.
 * ------------------------------------------------------------------------------------------- */
/* Run queued tasks, or sleep, until pending is 0. */
void crew__help_until_quiet(crew_pool *p);

/* ---------------------------------------------------------------------------------------------
 * submit.c: nodes for crew_submit.
 * ------------------------------------------------------------------------------------------- */
crew_task *crew__node_get(crew_pool *p); /* NULL when out of memory */
/* crew_enqueue_tasks that never waits for room in a bounded queue (CREW_EFULL instead): the
 * parallel primitives' helper tasks. */
int crew__enqueue_helpers(crew_pool *p, crew_task *t, size_t n, crew_handle *group);
void crew__node_release(crew_pool *p, crew_task *t);
void crew__nodes_free(crew_pool *p);
int crew__nodes_register(crew_pool *p);  /* list p as alive (for threads' node caches) */
void crew__nodes_unregister(crew_pool *p); /* before its nodes are freed */

#endif /* CREW_INTERNAL_H */
