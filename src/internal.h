/*
 * internal.h -- the structures shared by crew's source files, and their crew__ functions,
 * grouped under the name of the file that defines them.
 *
 * Locking, in one place:
 *   - pool->lock (a mutex) guards the task queue, each group's list of queued tasks and its
 *     waiter count, the slot map's free list, the counters in struct crew_pool marked "lock",
 *     the worker states' transitions, and every sleep and wake-up (all condition variables use
 *     it, so a check-then-sleep can never miss a wake-up).
 *   - pool->resize_lock serialises crew_resize and the joining of workers in crew_shutdown; it
 *     protects the workers array. Lock order: resize_lock before lock.
 *   - Atomics exist where a value is read without the lock: a group's state (crew_wait's fast
 *     path), the slot map's chunk table, worker states, the requested size and the queue length
 *     an idle worker polls while it spins.
 */
#ifndef CREW_INTERNAL_H
#define CREW_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crew.h"

/* A waiter runs tasks outside its own group only while fewer task frames than this are on its
 * stack, so helping cannot nest unrelated tasks until the stack overflows. */
#define CREW__HELP_DEPTH_MAX 8u

/* crew_task.crew_flags_ bits. */
#define CREW__TASK_NODE 1u    /* the pool allocated this task (crew_submit): recycle it */
#define CREW__TASK_STAMPED 2u /* timed (monitoring or autosize): crew_private_.reserved =
                                 submitted (ns), .spare = accepted - submitted (ns, saturated at
                                 2^32 - 1) */
#define CREW__TASK_COUNTED 4u /* submitted while monitoring was on: counted in the statistics */

/* crew_pool.timing bits. */
#define CREW__TIMING_MONITOR 1u  /* monitoring is on */
#define CREW__TIMING_AUTOSIZE 2u /* an autosize controller runs */

#define crew__unused(x) ((void)(x))

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
void crew__prioq_remove(crew__prioq *q, crew_task *t); /* t must be queued */
void crew__prioq_free(crew__prioq *q);

/* ---------------------------------------------------------------------------------------------
 * group.c: the slot map of groups (seed 000 §III-D). A slot holds a generation counter and the
 * number of open (accepted, unfinished) tasks, packed in one 64-bit word so one atomic load
 * tells a waiter both. Slots live in chunks of doubling size that never move, so a reader can
 * find a slot without the lock; slot 0 is never issued (it is CREW_HANDLE_NONE).
 * ------------------------------------------------------------------------------------------- */
#define CREW__SLOT_CHUNK0 64u /* slots in chunk 0; chunk k holds CREW__SLOT_CHUNK0 << k */
#define CREW__SLOT_CHUNKS 27u /* enough chunks for 2^32 slots */

typedef struct crew__slot {
    /* gen << 32 | open. Written under pool->lock; read without it by crew_wait (acquire): see
     * group.c for the orders. */
    _Atomic uint64_t state;
    /* Set (relaxed, under the lock) before the decrement that lets open reach 0, so a reader
     * that acquires open == 0 sees it. */
    atomic_uint cancelled;
    crew_task *queued;  /* lock: newest queued task of the group, linked by crew_private_.gnext */
    uint32_t next_free; /* lock: free list link */
    uint32_t waiters;   /* lock: threads sleeping in a wait for this group */
} crew__slot;

typedef struct crew__slotmap {
    /* Chunk k; published with release after it is initialised, read with acquire. */
    crew__slot *_Atomic chunk[CREW__SLOT_CHUNKS];
    /* Slots issued so far plus one (slot 0). Stored with release after the chunk that holds the
     * new slot is published; loaded with acquire by validators, so slot < issued implies the
     * chunk pointer is visible. */
    _Atomic uint32_t issued;
    uint32_t free_head; /* lock: first free slot, 0 = none */
} crew__slotmap;

#define crew__gen_of(state) ((uint32_t)((state) >> 32))
#define crew__open_of(state) ((uint32_t)(state))

crew__slot *crew__slot_at(crew__slotmap *m, uint32_t slot);
/* Is slot one this map has issued? (Lock-free.) */
bool crew__slot_valid(crew__slotmap *m, uint32_t slot);
/* Open a new group of n tasks. Lock held. OUT: *h. CREW_OK or CREW_ENOMEM. */
int crew__group_open(crew__slotmap *m, uint32_t n, crew_handle *h);
/* Add n tasks to an open group. Lock held. CREW_OK, CREW_ESTALE or CREW_ERANGE. */
int crew__group_add(crew__slotmap *m, crew_handle h, uint32_t n);
/* Undo a successful crew__group_open (abandon) or crew__group_add (n tasks) whose tasks could
 * not be queued after all. Lock held, and held since the open or add. */
void crew__group_abandon(crew__slotmap *m, uint32_t slot);
void crew__group_unadd(crew__slotmap *m, uint32_t slot, uint32_t n);
/* One task of slot finished or was dropped. Lock held. Returns true if the group finished
 * (its open count reached 0). */
bool crew__group_done(crew__slotmap *m, uint32_t slot, bool dropped);
/* The group's status without the lock: 1 = still open, CREW_OK = finished, CREW_ECANCELED. */
int crew__group_status(crew__slotmap *m, crew_handle h);
void crew__slotmap_free(crew__slotmap *m);

/* ---------------------------------------------------------------------------------------------
 * stats.c: monitoring. One block per recording thread; all recording happens under pool->lock.
 * ------------------------------------------------------------------------------------------- */
#define CREW__HIST_BUCKETS 496u /* 16 exact buckets, then 8 per power of two up to 2^63 */

typedef struct crew__hist {
    uint64_t n;                      /* samples */
    uint64_t sum;                    /* their total, for the mean */
    uint64_t max;                    /* the largest */
    uint64_t b[CREW__HIST_BUCKETS];  /* counts per log-linear bucket */
} crew__hist;

typedef struct crew__tstats {
    uint64_t submitted, completed, cancelled, rejected; /* tasks, as in crew_stats */
    uint64_t busy_ns, waiting_ns, tasks, stolen;        /* this thread, as in crew_thread_stats */
    crew__hist response, idle, processing, turnaround;  /* as in crew_stats */
} crew__tstats;

uint64_t crew__now_ns(void);
void crew__hist_add(crew__hist *h, uint64_t v, uint64_t weight);
/* The calling thread's block (allocated on first use; NULL if memory ran out). Lock held. */
struct crew__tstats *crew__stats_block_locked(crew_pool *p);
void crew__stats_submitted_locked(crew_pool *p, size_t n, uint64_t submitted, uint64_t accepted);
void crew__stats_rejected_locked(crew_pool *p, size_t n);
void crew__stats_cancelled_locked(crew_pool *p);
void crew__stats_done_locked(crew_pool *p, uint64_t submitted, uint64_t accepted,
                             uint64_t started, uint64_t finished);
void crew__stats_waited_locked(crew_pool *p, uint64_t ns);
void crew__stats_free(crew_pool *p);

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
} crew__balance_in;

typedef struct crew__balance_state {
    unsigned best_size; /* the size with the best throughput in this regime (0 = none yet) */
    double best_x;      /* that throughput, refreshed while at best_size */
    int dir;            /* the last probe: +1 grew, -1 shrank, 0 none */
    unsigned down_step; /* threads removed per downward probe (0 = not set) */
    unsigned hold;      /* periods left before probing again */
    unsigned settle;    /* periods to skip after a resize */
} crew__balance_state;

typedef struct crew__autosize {
    unsigned mode, min, max;  /* settings (fixed) */
    unsigned cycle, stride;   /* AIT settings (fixed) */
    unsigned period_ms;       /* BALANCE setting (fixed) */
    pthread_t thread;         /* the controller */
    bool started, joined;     /* join_lock */
    pthread_mutex_t join_lock; /* one crew_shutdown joins the controller */
    pthread_cond_t cv;        /* the controller sleeps here, with pool->lock */
    bool stop;                /* lock: the controller must exit */
    uint64_t completed;       /* lock: timed tasks finished */
    uint64_t busy_ns;         /* lock: their processing time */
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
void crew__autosize_sample_locked(crew_pool *p, uint64_t idle_ns, uint64_t processing_ns);
void crew__autosize_stop(crew_pool *p); /* joins the controller; safe to call twice */
void crew__autosize_free(crew_pool *p);

/* ---------------------------------------------------------------------------------------------
 * pool.c: lifecycle, resize, shutdown.
 * ------------------------------------------------------------------------------------------- */
enum crew__pool_state { CREW__OPEN = 0, CREW__CLOSING = 1 };

enum crew__worker_state {
    CREW__W_RUNNING = 0, /* takes tasks */
    CREW__W_MARKED = 1,  /* resize asked it to exit after its current task; may be revived */
    CREW__W_EXITED = 2   /* left its loop; the thread is ready to be joined */
};

typedef struct crew__worker {
    crew_pool *pool;  /* owner */
    pthread_t thread; /* valid when started */
    unsigned index;   /* position in pool->workers, for the thread name */
    /* Transitions happen under pool->lock with compare-and-swap (seed 000 §III-E); relaxed
     * suffices because the lock orders them; lock-free readers only count. */
    _Atomic int state;
    bool started; /* resize_lock: thread was created */
    bool joined;  /* resize_lock: thread was joined */
    crew__tstats *stats; /* lock: monitoring block, allocated on first use */
} crew__worker;

struct crew_pool {
    /* Settings, fixed after crew_create. */
    unsigned id;        /* process-unique number, for thread names */
    char name[8];       /* thread name prefix */
    size_t stack_size;  /* 0 = default */
    unsigned spin;      /* polls before sleeping */
    /* Are tasks timed, and why: CREW__TIMING_MONITOR (statistics, crew_set_monitoring) and
     * CREW__TIMING_AUTOSIZE (the controller's inputs), one word so that the untimed hot path
     * tests one value. Read without the lock (relaxed: a task submitted while it changes is
     * simply timed or not). */
    atomic_uint timing;

    pthread_mutex_t lock;    /* see the top of this file */
    pthread_cond_t work_cv;  /* idle workers sleep here */
    pthread_cond_t wait_cv;  /* waiting callers sleep here */
    pthread_cond_t quiet_cv; /* crew_shutdown waits here for pending to reach 0 */

    crew__prioq queue;         /* lock: queued tasks */
    _Atomic size_t queued;     /* queue.n, stored (relaxed) under the lock for spinning workers */
    size_t pending;            /* lock: accepted tasks not yet finished nor dropped */
    unsigned sleeping_workers; /* lock: workers in cond_wait on work_cv */
    unsigned sleeping_helpers; /* lock: waiters asleep that may take any task when one comes */
    unsigned sleeping_all;     /* lock: threads asleep in crew_wait_all */
    unsigned closers;          /* lock: threads asleep in crew_shutdown */
    int state;                 /* lock: enum crew__pool_state */
    bool cancelled_any;        /* lock: a shutdown dropped tasks */
    crew_task *free_nodes;     /* lock: recycled crew_submit tasks */
    void *node_chunks;         /* lock: list of allocated chunks of nodes, freed on destroy */

    crew__slotmap groups; /* groups (slot map) */

    crew__autosize *autosize; /* the sizing controller, NULL when off (fixed after create) */
    crew__tstats *outside;   /* lock: monitoring block of threads that are not workers */
    uint64_t stats_epoch_ns; /* lock: crew_create or the last crew_stats_reset */
    size_t queued_peak;      /* lock: most tasks queued at once (while monitoring) */
    unsigned threads_peak;   /* lock: most running workers at once */

    pthread_mutex_t resize_lock; /* see the top of this file */
    crew__worker **workers;      /* resize_lock: every worker ever started, not yet reused */
    unsigned nworkers;           /* resize_lock: entries used in workers */
    unsigned cap_workers;        /* resize_lock: entries allocated in workers */
    /* The size last requested; written under resize_lock, read anywhere (relaxed: a plain
     * number, nothing is published through it). */
    atomic_uint target;
};

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
} crew__frame;

/* The innermost running task on this thread, NULL outside tasks. */
extern _Thread_local crew__frame *crew__tls_frame;
/* The worker this thread is, NULL for other threads. */
extern _Thread_local crew__worker *crew__tls_worker;

void *crew__worker_main(void *arg);
/* Name the calling thread "<pool name>-<pool id>-<role>" (cut to what the system keeps). */
void crew__name_thread(const crew_pool *p, const char *role);
/* Is a task of p running on this thread (anywhere on its stack)? */
bool crew__in_task_of(const crew_pool *p);
/* Is a task of group g of p running on this thread (anywhere on its stack)? */
bool crew__in_group(const crew_pool *p, crew_handle g);
/* Run a task taken from the queue with crew__queue_take*; lock held on entry and on return,
 * released while the function runs. */
void crew__run_locked(crew_pool *p, crew_task *t);
/* Wake threads that can run n newly queued tasks (of group slot, 0 for none). Lock held. */
void crew__wake_locked(crew_pool *p, size_t n, uint32_t slot);
/* A task of group slot (0 = none) finished, or was dropped: count it, wake whoever waits for it.
 * Lock held. */
void crew__task_finished_locked(crew_pool *p, uint32_t slot, bool dropped);

/* ---------------------------------------------------------------------------------------------
 * wait.c: helping waits.
 * ------------------------------------------------------------------------------------------- */
/* Run queued tasks, or sleep, until pending is 0. Lock held. closing: called by crew_shutdown. */
void crew__help_until_quiet_locked(crew_pool *p, bool closing);

/* ---------------------------------------------------------------------------------------------
 * queue.c: the shared priority queue with a list of queued tasks per group. Lock held for all.
 * ------------------------------------------------------------------------------------------- */
/* Queue t as a task of group slot (0 = none): CREW_OK, or CREW_ENOMEM and nothing changed. */
int crew__queue_push_locked(crew_pool *p, crew_task *t, uint32_t slot);
void crew__queue_remove_locked(crew_pool *p, crew_task *t);      /* take a queued task back */
crew_task *crew__queue_take_locked(crew_pool *p);                /* highest, oldest; or NULL */
crew_task *crew__queue_take_group_locked(crew_pool *p, uint32_t slot); /* newest of the group */
void crew__queue_cancel_all_locked(crew_pool *p);                /* drop everything queued */

/* ---------------------------------------------------------------------------------------------
 * submit.c: nodes for crew_submit.
 * ------------------------------------------------------------------------------------------- */
crew_task *crew__node_get_locked(crew_pool *p); /* NULL when out of memory */
void crew__node_release_locked(crew_pool *p, crew_task *t);
void crew__nodes_free(crew_pool *p);

#endif /* CREW_INTERNAL_H */
