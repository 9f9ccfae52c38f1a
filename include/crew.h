/*
 * crew.h -- the public interface of crew, a thread pool for C11 and POSIX threads.
 *
 * crew keeps a set of worker threads and runs tasks on them: a task is a function pointer, an
 * argument and a priority (0 is highest, first-in-first-out among equals). Tasks may be gathered
 * in groups; a caller waits for a group, or for the whole pool, and runs queued tasks itself while
 * it waits, so waiting inside a task (nested parallelism) never deadlocks.
 *
 * This header is plain C11 and compiles unchanged as C++. Every function that can fail returns
 * CREW_OK (0) or a negative CREW_E* code; crew_strerror() explains a code in words, and
 * crew_last_error() the calling thread's last failure in detail (which argument, which limit).
 *
 * Who may call what, concurrently:
 *   - crew_submit, crew_enqueue_*, crew_wait, crew_wait_all (and their _timed forms),
 *     crew_notify, crew_size and crew_resize may be called from any thread, including from
 *     inside a running task, at the same time.
 *   - crew_shutdown may run concurrently with all of the above (they then fail with
 *     CREW_ESHUTDOWN or report cancellation); it must not be called from a task of the same pool.
 *   - crew_destroy must be the last call on a pool: no other call on it may be in progress or
 *     follow it.
 *
 * Calls from callbacks (re-entrancy). crew runs code of yours in six places: a task's
 * function; a completion callback (crew_notify), run as a task; crew_hooks.on_start and
 * on_stop, on each pool thread as it starts and stops; crew_hooks.on_drop, on the thread that
 * drops a task; and in crew.hpp the pool's on_error handler, inside the task whose exception it
 * reports. What each public call on the SAME pool does when made from one of them:
 *
 *     call on the pool               task, on_drop, on_error    on_start, on_stop
 *     crew_submit*, crew_enqueue_*   allowed                    allowed
 *     crew_timer_start, _stop        allowed (6)                allowed
 *     crew_wait                      allowed (1)                allowed
 *     crew_wait_timed                allowed (1)                allowed
 *     crew_enqueue_tasks_wait        allowed                    allowed
 *     crew_wait_all                  CREW_EDEADLK               allowed (it helps)
 *     crew_wait_all_timed            CREW_EDEADLK               allowed (8)
 *     crew_cancel, crew_cancelled    allowed                    allowed
 *     crew_current_group             allowed                    allowed
 *     crew_lane_create, _submit      allowed                    allowed
 *     crew_lane_barrier              allowed (5)                allowed
 *     crew_lane_destroy              allowed (3)                allowed (it helps)
 *     crew_graph_create, _run, _run_n, _dump_dot
 *                                    allowed                    allowed
 *     crew_graph_add*, _precede, _remove_edge, _name_node, _node_lane, _node_start_within,
 *     crew_graph_destroy             allowed (7)                allowed
 *     crew_notify                    allowed (4)                allowed
 *     crew_resize, crew_size         allowed                    allowed
 *     crew_pause, _resume, _paused   allowed (2)                allowed (2)
 *     crew_stats_*, crew_set_monitoring, crew_diagnose*, crew_trace_*
 *                                    allowed                    allowed
 *     crew_parallel_*                allowed                    allowed
 *     crew_join                      allowed                    allowed
 *     crew_shutdown, crew_destroy    CREW_EDEADLK               CREW_EDEADLK
 *
 *   allowed: the call returns, with the results its own documentation lists (during a
 *     shutdown, submissions and crew_resize return CREW_ESHUTDOWN, from on_stop too); every
 *     task it accepts runs exactly once or is dropped and handed to on_drop.
 *   (1) crew_wait on the group of the task that is running (or being dropped) returns
 *     CREW_EDEADLK when it would otherwise sleep: that group cannot finish before the caller;
 *     so does crew_wait_timed, when it would otherwise sleep or give up (a poll included).
 *   (2) crew_pause from a callback is allowed, but a wait that follows it needs a crew_resume
 *     from another thread (see crew_pause).
 *   (3) CREW_EDEADLK from a task of that lane itself (or on_drop for one); from any other task
 *     it waits for the lane's tasks, running queued tasks meanwhile.
 *   (4) crew_notify's callback is a task of no group: the "task" column applies to it, and in
 *     it crew_wait on the group it was registered on returns at once. A task may register a
 *     callback on its own group (it runs after the task returns). During a shutdown,
 *     crew_notify returns CREW_ESHUTDOWN, as submissions do, also from a callback.
 *   (5) A task of a lane that waits (crew_wait) for a barrier of the same lane submitted after
 *     it, or for a task behind such a barrier, waits for ever: the barrier starts only once
 *     that task has finished.
 *   (6) crew_timer_stop from the timer's own function returns at once (see there).
 *   (7) CREW_EBUSY on a graph with a run in progress, which includes a node's own graph when
 *     called from that node (or from on_drop for one): a graph changes only between runs.
 *   (8) With a time-out (not 0, not UINT64_MAX) it runs no task (see "Timed waits" below): on a
 *     thread of the pool it waits for the other threads, and times out if they cannot finish.
 *   on_drop runs as a task of the dropped task's group would: before the group finishes (so a
 *     waiter cannot free task_arg under it), after the task has given back its place in a
 *     bounded queue (so it may submit into the queue that dropped it, which may drop another
 *     task and call on_drop again, nested). on_start runs before the thread becomes a worker,
 *     on_stop after it has stopped being one: calls from them act as calls from any other
 *     thread of the program (a crew_wait_all there runs queued tasks like any caller).
 *   Calls on another pool follow that pool's documentation as from any thread (a task of pool
 *   a may wait for pool b, or shut it down); only cycles of waits between pools are yours to
 *   avoid.
 *
 * Environment: crew reads CREW_SCHEDULER (see enum crew_scheduler) and CREW_AUTOSIZE_DEBUG (set:
 * the automatic sizing controller prints its decisions on stderr); neither can make a call fail.
 *
 * fork(): a child process gets a copy of the pool's memory but none of its threads, and locks
 * that those threads held stay locked. So in the child every call on a pool created before the
 * fork returns CREW_EFORKED (never hangs), crew_destroy included: it frees nothing, since the
 * memory is the parent's copy, reclaimed when the child exits or execs. The two calls that
 * return no code answer from that copy: crew_size the size the parent had asked for, and
 * crew_paused 1 (nothing runs); the parallel primitives do the work in the caller. The parent's
 * pools are unaffected. A pool created in the child works normally.
 *
 * Memory of a task: a crew_task passed to crew_enqueue_task(s) belongs to the caller, but the pool
 * uses it (its private fields) from the moment it is accepted until its function starts. The
 * caller must keep it alive and untouched until then; once the function has started, the pool no
 * longer reads or writes the struct, so the function itself may free or reuse it.
 */
#ifndef CREW_H
#define CREW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the functions the shared library exports (everything else in it is hidden). The static
 * library is compiled with CREW_STATIC defined, which makes CREW_EXPORT empty: its names are
 * hidden too, so a shared object that links libcrew.a exports none of them (the program that
 * links it still calls them). A program that includes this header never needs CREW_STATIC. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(CREW_STATIC)
#define CREW_EXPORT __attribute__((visibility("default")))
#else
#define CREW_EXPORT
#endif

/* ---------------------------------------------------------------------------------------------
 * Errors. One list generates the codes, crew_strerror() and crew_err_name().
 * ------------------------------------------------------------------------------------------- */
#define CREW_ERRNO_MAP(X)                                                                        \
    X(EINVAL, -1, "invalid argument (a NULL pointer, a zero count, a thread count out of range, "  \
                  "or a handle this pool never issued)")                                         \
    X(ENOMEM, -2, "out of memory")                                                               \
    X(ESHUTDOWN, -3, "the pool is shutting down or shut down and accepts no more tasks")         \
    X(ESTALE, -4, "the group has already finished; nothing of it is left to cancel")             \
    X(ECANCELED, -5, "some tasks were cancelled (dropped without running) by crew_cancel or a "   \
                     "shutdown")                                                                  \
    X(EDEADLK, -6, "the call would wait for the calling task itself and could never return")     \
    X(EAGAIN, -7, "the system refused to create a worker thread")                                \
    X(ERANGE, -8, "too many tasks: a group holds at most 4294967295 unfinished tasks")        \
    X(EIO, -9, "writing the output failed")                                                     \
    X(EFULL, -10, "the pool's queue is full (crew_config.queue_capacity) and the full-queue "     \
                  "policy or the call does not wait for room")                                  \
    X(ETIMEDOUT, -11, "the time limit passed first: a timed wait's group or pool had not "      \
                      "finished (it goes on), or the queue had no room for the tasks")          \
    X(ENOTSUP, -12, "this build of crew leaves the feature out (monitoring, automatic sizing "   \
                    "and tracing: built with CREW_MONITORING=OFF)")                             \
    X(EEXPIRED, -13, "some tasks were dropped without running because no thread could start "   \
                     "them by their start-by time (crew_submit_deadline)")                      \
    X(EFORKED, -14, "the pool belongs to the parent process: it was created before fork(), and "  \
                    "its threads do not exist in this child (create a new pool here)")           \
    X(EBUSY, -15, "the object is in use: a task graph cannot be changed or destroyed while a "   \
                  "run of it is in progress, nor by two calls at once")

/* Success. */
#define CREW_OK 0
#define CREW_ERRNO_ENUM_(name, value, text) CREW_##name = (value),
enum crew_errno { CREW_ERRNO_MAP(CREW_ERRNO_ENUM_) CREW_ERRNO_LAST_ = -16 };
#undef CREW_ERRNO_ENUM_

/* A sentence explaining err ("success" for CREW_OK, "unknown error" for anything else). */
CREW_EXPORT const char *crew_strerror(int err);
/* The code's name without prefix: "EINVAL", "OK", or "UNKNOWN". */
CREW_EXPORT const char *crew_err_name(int err);
/* The calling thread's detail of its last failed crew call (one that returned a negative
 * CREW_E* code, crew_create included), naming the function and what was wrong, for example
 * "crew_resize: threads is 0; a pool needs at least 1"; "" if no crew call has failed on this
 * thread yet. In the manner of dlerror() and sqlite3_errmsg(), but like errno successful calls
 * leave it unchanged, so read it right after the failure. Per thread: another thread's failure
 * never changes it (a task that this thread runs while it waits in crew_wait, crew_wait_all or a
 * crew_parallel_* call is code on this thread: its failed calls count). Never NULL; the text is
 * valid until this thread's next failing crew call, and is at most 255 characters. */
CREW_EXPORT const char *crew_last_error(void);

/* ---------------------------------------------------------------------------------------------
 * Types.
 * ------------------------------------------------------------------------------------------- */

/* A pool. Opaque; created by crew_create, freed by crew_destroy. */
typedef struct crew_pool crew_pool;

/* The function a task runs. */
typedef void (*crew_fn)(void *arg);

/*
 * A group of tasks, by value. slot names an entry of the pool's slot map, gen the generation of
 * that entry, so a handle to a finished group never aliases a later group that reuses the slot.
 * Generations run from 1 to 2^28 - 1, then start at 1 again: a handle is recognised as stale
 * (finished: crew_wait answers at once, crew_cancel CREW_ESTALE, a submission through it opens a
 * new group) for as long as its slot has served fewer than 2^28 - 1 (268,435,455) later groups.
 * One slot serves at most about 10^7 groups a second (a loop that opens a group and waits for it,
 * on one thread), so that is at least about 27 s; a handle kept longer than that, then used,
 * names a later group of its slot with a chance of about 1 in 2^28 (if that group is open, a
 * wait waits for it and a crew_cancel cancels it). Use a handle while its group may be open, and
 * drop it once a wait has returned. The top 8 bits of slot name the pool that issued the handle:
 * a handle given to another pool is refused with CREW_EINVAL. Pools alive at the same time are
 * told apart, up to 255 of them; with more, two may share a name, and a handle of one may then
 * pass for a finished group of the other. A pool has at most 2^24 - 1 slots (groups open at once,
 * plus those that keep a loss for crew_wait: see there): beyond, opening a group fails with
 * CREW_ENOMEM. Treat both fields as opaque.
 */
typedef struct crew_handle {
    uint32_t slot; /* the pool's name and a slot map index; 0 = no group */
    uint32_t gen;  /* generation of the slot when the group opened */
} crew_handle;

/* "No group yet": passing a handle with this value opens a new group and stores its handle. */
#ifdef __cplusplus
#define CREW_HANDLE_NONE (crew_handle{0, 0})
#else
#define CREW_HANDLE_NONE ((crew_handle){0, 0})
#endif

/*
 * A task. The caller fills fn, arg and priority; the rest is the pool's bookkeeping while the
 * task is queued (no allocation per task). See "Memory of a task" above.
 */
typedef struct crew_task {
    crew_fn fn;        /* the function to run; must not be NULL */
    void *arg;         /* passed to fn as is */
    uint32_t priority; /* 0 = highest; equal priorities run first-in-first-out */
    uint32_t crew_flags_; /* private */
    struct crew_task_private_ {  /* private: do not read or write */
        struct crew_task *gnext; /* private: group list link */
        struct crew_task *gprev; /* private: group list link */
        struct crew_task *qnext; /* private: queue list link */
        struct crew_task *qprev; /* private: queue list link */
        void *level;             /* private: queue level */
        uint64_t reserved;       /* private: reserved */
        uint32_t slot;           /* private: group slot */
        uint32_t spare;          /* private: reserved */
    } crew_private_;
} crew_task;

/* Largest thread count crew_create and crew_resize accept. */
#define CREW_MAX_THREADS 4096u

/* A pool's CPUs, counted once by crew_create for the thread that calls it: the CPUs in that
 * thread's affinity mask (sched_getaffinity: taskset, a container's cpuset; the pool's threads
 * inherit it), only those listed in crew_hooks.cpus when the pool is pinned, and at most the
 * cgroup v2 CPU quota (cpu.max, quota / period rounded up; none if it cannot be read); the
 * online CPUs where the mask cannot be asked. At least 1, at most CREW_MAX_THREADS. The default
 * size (crew_config.threads 0), CREW_SPIN_AUTO, CREW_SCHED_SHARED_LOCKFREE's queue count and
 * CREW_AUTOSIZE_BALANCE's "threads than CPUs" all use this count. */

/* crew_config.spin's default: an idle worker (or a waiter) polls for work 64 times before it
 * sleeps while the pool's awake workers (those not asleep) are no more than the pool's CPUs
 * (above), and sleeps at once while they are more, since each poll would then take CPU time from a
 * thread that still has a task. Decided as each idle stretch begins, from counts the pool keeps
 * anyway (no system call); callers that wait, other pools' and other processes' threads are not
 * counted, and a worker blocked inside its task counts as awake. A worker also sleeps at once
 * while a thread outside the pool runs rounds of crew_enqueue_tasks_wait whose own tasks take
 * under about a microsecond: that thread runs such rounds alone faster than it could hand a
 * task to another CPU and see it end there, and a polling worker would take its tasks. */
#define CREW_SPIN_AUTO 0xFFFFFFFFu

/* Settings for crew_create. Always start from crew_config_init(), then change fields. */
typedef struct crew_config {
    unsigned threads;  /* worker threads; 0 = one per CPU of the pool's (default 0; counted
                          as described above CREW_SPIN_AUTO: the affinity mask, the quota) */
    int monitoring;    /* collect statistics from the start (default 0; see crew_stats_get and
                          crew_set_monitoring) */
    size_t stack_size; /* worker stack size in bytes; 0 = the system default (default 0) */
    const char *name;  /* thread name prefix, at most 6 characters are used (default "crew"):
                          workers are named "<name>-<pool id>-w<index>" */
    unsigned spin;     /* how many times an idle worker (or a waiter) polls for work before
                          it sleeps, 16 pause instructions apart (0 = sleep at once, and the
                          timer thread does not poll before a due time: see "Time"), always;
                          or CREW_SPIN_AUTO (the default): 64 or 0, as the pool's awake
                          threads fit its CPUs or not (see CREW_SPIN_AUTO) */
    /* Automatic sizing (see enum crew_autosize): the pool stays within [min_threads,
     * max_threads]; `threads` is the starting size (clamped into that range). */
    unsigned autosize;       /* CREW_AUTOSIZE_OFF (default), _AIT or _BALANCE */
    unsigned min_threads;    /* lower bound, at least 1 (default 1) */
    unsigned max_threads;    /* upper bound; required when autosize is on (default 0) */
    unsigned autosize_cycle; /* AIT: completed tasks per cycle, K (default 5, Xu & Bode) */
    unsigned autosize_stride; /* AIT: threads added or removed per step (default 2, Xu & Bode) */
    unsigned autosize_period_ms; /* BALANCE: how often it decides (default 100) */
    unsigned scheduler; /* enum crew_scheduler (default CREW_SCHED_DEFAULT: work stealing) */
    unsigned lock;      /* enum crew_lock: the lock of the shared queues (default mutex) */
    /* Blocking tasks (CREW_TASK_BLOCKING) run on extra threads, made when needed, never on the
     * workers: at most max_blocking at once (default 64, at most CREW_MAX_THREADS); one that
     * has been idle for blocking_idle_ms (default 10000) exits. */
    unsigned max_blocking;
    unsigned blocking_idle_ms;
    /* The bounded queue: at most queue_capacity tasks wait to start (default 0: unbounded);
     * what a submission that finds it full does: enum crew_full_policy (default block). */
    unsigned queue_capacity;
    unsigned full_policy;
    /* Calls on each pool thread as it starts and stops, and CPU affinity (default NULL: none;
     * see struct crew_hooks). crew_create copies it. */
    const struct crew_hooks *hooks;
    void *crew_reserved_[1]; /* private: room for later settings without changing the size */
} crew_config;

/*
 * Hooks for a pool's threads (crew_config.hooks), for thread-local setup: allocators, RNG
 * seeds, pinning. Versioned by size: set size to sizeof(crew_hooks).
 *   on_start(index, arg)  first thing on a new thread, before it runs any task;
 *   on_stop(index, arg)   last thing before it exits (shrunk by crew_resize, or shutdown).
 * index is the worker's index (0..CREW_MAX_THREADS-1; a worker restarted after a shrink gets
 * its old index again); blocking threads (CREW_TASK_BLOCKING) get CREW_MAX_THREADS + their own
 * index. Any of the functions may be NULL. What they may call on the pool: the re-entrancy
 * table at the top of this file (crew_shutdown and crew_destroy return CREW_EDEADLK there).
 * The first threads start inside crew_create, before it writes *out, and with automatic sizing
 * a thread may even stop (on_stop) before crew_create returns: a hook must not read the
 * variable crew_create writes; one that needs the pool gets it through arg, published with the
 * caller's own synchronisation (e.g. an atomic store after crew_create returns).
 * CPU affinity: with cpus non-NULL, worker i runs on cpus[i % ncpus] only and blocking
 * threads on any of cpus; every cpu must be one the process may run on, or crew_create fails
 * with CREW_EINVAL.
 */
typedef struct crew_hooks {
    size_t size; /* sizeof(crew_hooks) as the caller compiled it */
    void (*on_start)(unsigned index, void *arg);
    void (*on_stop)(unsigned index, void *arg);
    void *arg;
    const int *cpus; /* CPU numbers (NULL: no affinity) */
    size_t ncpus;    /* how many; at least 1 when cpus is set */
    /* A task dropped without running (crew_cancel, crew_shutdown with CREW_CANCEL, a full
     * queue dropping its oldest) is handed here, fn and task_arg as submitted, on the thread
     * that drops it, so whoever owns task_arg can free it. May be NULL. */
    void (*on_drop)(crew_fn fn, void *task_arg, void *arg);
} crew_hooks;

/*
 * How tasks reach threads (docs/design.md compares them; every one runs the whole test suite).
 *   CREW_SCHED_DEFAULT         CREW_SCHED_STEAL, unless the environment variable CREW_SCHEDULER
 *                              names another (steal, shared, lockfree, per-worker): a switch for
 *                              experiments and tests without recompiling. Any other value is
 *                              ignored (the default is used), with one line on stderr, once per
 *                              process, naming the variable, its value and the accepted values.
 *   CREW_SCHED_STEAL           a work-stealing deque per worker (Chase-Lev) and a priority
 *                              injection queue for submissions from outside the pool's tasks.
 *                              Priorities order the injection queue; a worker takes a queued
 *                              task of strictly higher priority before its own next task.
 *   CREW_SCHED_SHARED          one priority queue under one lock (crew_config.lock): strict
 *                              priority order, FIFO among equal priorities.
 *   CREW_SCHED_SHARED_LOCKFREE a MultiQueue (relaxed priority queue of Rihani et al., SPAA 2015):
 *                              no thread waits on a lock; priority order is approximate.
 *   CREW_SCHED_PER_WORKER      one priority queue per worker, fed round-robin, no stealing.
 */
enum crew_scheduler {
    CREW_SCHED_DEFAULT = 0,
    CREW_SCHED_STEAL = 1,
    CREW_SCHED_SHARED = 2,
    CREW_SCHED_SHARED_LOCKFREE = 3,
    CREW_SCHED_PER_WORKER = 4
};

/*
 * What a submission does when the bounded queue (crew_config.queue_capacity) is full:
 *   CREW_FULL_BLOCK        wait for room (the default; crew_submit_timed bounds the wait,
 *                          crew_try_submit never waits); a shutdown ends the wait with
 *                          CREW_ESHUTDOWN.
 *   CREW_FULL_FAIL         return CREW_EFULL at once.
 *   CREW_FULL_CALLER_RUNS  run the tasks in the submitting thread, now (back-pressure that
 *                          slows the producer by exactly the work it adds).
 *   CREW_FULL_DROP_OLDEST  drop the task that would start next to make room; it is reported
 *                          as cancelled (its group's crew_wait returns CREW_ECANCELED, and
 *                          on_drop gets it) and counted in crew_stats.cancelled; crew_wait_all
 *                          is not affected (the policy chose the drop).
 * A call with more tasks than the capacity fails with CREW_EFULL under every policy.
 * Blocking tasks (CREW_TASK_BLOCKING) are not counted: they wait in their own queue.
 */
enum crew_full_policy {
    CREW_FULL_BLOCK = 0,
    CREW_FULL_FAIL = 1,
    CREW_FULL_CALLER_RUNS = 2,
    CREW_FULL_DROP_OLDEST = 3
};

/* The lock of the shared queues: a pthread mutex, or a spinlock that yields after a short spin
 * (Li & Hu's option; better when queue operations are short and threads <= cores). */
enum crew_lock { CREW_LOCK_MUTEX = 0, CREW_LOCK_SPIN = 1 };

/*
 * Automatic pool sizing, run by a controller thread off the hot path, through the same lazy
 * resizing as crew_resize (docs/autosize.md explains both controllers).
 *   CREW_AUTOSIZE_AIT      Xu & Bode's dynamicThreadPool (Fig. 9) as written: every K completed
 *                          tasks, compare the average idle (queue) time with the two previous
 *                          cycles' and move the size by `stride`.
 *   CREW_AUTOSIZE_BALANCE  crew's controller: sizes for the demand (no backlog: shrink towards
 *                          the tasks actually running), grows while there is a backlog and idle
 *                          CPU (blocking tasks), probes downward when the CPU is saturated with
 *                          more threads than cores, and keeps a move only if throughput rose.
 */
enum crew_autosize { CREW_AUTOSIZE_OFF = 0, CREW_AUTOSIZE_AIT = 1, CREW_AUTOSIZE_BALANCE = 2 };

/* How crew_shutdown treats tasks that are still queued. */
enum crew_shutdown_how {
    CREW_DRAIN = 0, /* run every accepted task, then stop */
    CREW_CANCEL = 1 /* drop queued tasks (reported as cancelled); running ones finish */
};

/* ---------------------------------------------------------------------------------------------
 * Lifecycle.
 * ------------------------------------------------------------------------------------------- */

/* Fill cfg with the defaults listed in struct crew_config. */
CREW_EXPORT void crew_config_init(crew_config *cfg);

/*
 * Create a pool and start its workers. cfg NULL means defaults.
 * OUT: *out, the new pool (set only on success).
 * Errors: EINVAL (out NULL, threads > CREW_MAX_THREADS, an unknown scheduler or lock, a
 * stack_size the system refuses; with autosize: an unknown controller, max_threads 0 or above
 * CREW_MAX_THREADS, min_threads > max_threads), ENOMEM, EAGAIN (a thread
 * could not be created; every thread already started is stopped again and nothing leaks),
 * ENOTSUP (monitoring or autosize asked of a build made with CREW_MONITORING=OFF). Bad hooks
 * (size too small, cpus NULL with ncpus > 0 or the reverse, a cpu the process may not use):
 * EINVAL.
 */
CREW_EXPORT int crew_create(crew_pool **out, const crew_config *cfg);

/*
 * Stop accepting tasks and stop the workers. From the moment it begins, submissions fail with
 * CREW_ESHUTDOWN. how = CREW_DRAIN runs every accepted task first; CREW_CANCEL drops the queued
 * ones, and each group that lost a task then reports CREW_ECANCELED (kept as crew_wait says):
 * no queued task starts on a thread once that thread has seen the shutdown begin (so a task
 * that returns when crew_cancelled() turns true frees its thread for no queued task).
 * Returns once no task of the pool is running and every worker has exited.
 * Calling it again, or concurrently, is harmless; a CREW_CANCEL during a CREW_DRAIN in progress
 * drops what is still queued. Errors: EINVAL (p NULL or how unknown), EDEADLK (called from a
 * task of this pool, or from a callback: see the re-entrancy table).
 */
CREW_EXPORT int crew_shutdown(crew_pool *p, int how);

/*
 * Shut down with CREW_DRAIN if that has not happened, then free everything. NULL is a no-op.
 * Errors: EDEADLK (called from a task of this pool or a callback, as crew_shutdown; nothing is
 * freed).
 */
CREW_EXPORT int crew_destroy(crew_pool *p);

/*
 * Change the number of workers, lazily (Jendersie et al., §III-E). Shrinking marks surplus workers,
 * which finish their current task and exit; growing revives marked workers before creating new
 * ones. Once it returns, at most `threads` workers will start a new task; the one exception is a
 * marked worker whose current task is inside crew_wait: it still runs queued tasks of the group it
 * waits for (taking them away could deadlock), but nothing else. May be called from a task. Errors:
 * EINVAL (p NULL, threads 0 or > CREW_MAX_THREADS), ESHUTDOWN, EAGAIN (a new thread could not be
 * created: the pool keeps the workers it has, and crew_size() tells how many), ENOMEM (no memory
 * for a new worker's record: likewise).
 */
CREW_EXPORT int crew_resize(crew_pool *p, unsigned threads);

/* The number of workers last requested (by crew_create or crew_resize); 0 for NULL. */
CREW_EXPORT unsigned crew_size(const crew_pool *p);

/*
 * Pause the pool: its threads (workers, blocking threads, and callers helping in crew_wait)
 * finish the task they are running and take no new one until crew_resume. Submissions still
 * queue. A task submitted after crew_pause returned (by the same thread, or by one that knows it
 * returned) does not start before crew_resume; a task queued before may still start if a thread
 * took it just as the pause began. (Exceptions: under CREW_FULL_CALLER_RUNS a submitter that
 * finds the queue full runs its task itself, paused or not; and a thread that took a task as the
 * pause began and finds no memory to put it back runs it.) Putting a task back may move it ahead
 * of tasks queued after it. crew_wait and crew_wait_all on a paused pool wait for the
 * resume (so calling them from the only thread that would resume it never returns).
 * crew_shutdown resumes a paused pool (draining needs its threads). Pausing twice is the same as
 * once. Safe with concurrent resize, submissions and shutdown. Errors: EINVAL (p NULL),
 * ESHUTDOWN (the pool is shutting down).
 */
CREW_EXPORT int crew_pause(crew_pool *p);
/* Resume a paused pool (a pool that is not paused is left as it is). Errors: EINVAL (p NULL). */
CREW_EXPORT int crew_resume(crew_pool *p);
/* 1 if the pool is paused, else 0 (also for NULL). */
CREW_EXPORT int crew_paused(const crew_pool *p);

/* ---------------------------------------------------------------------------------------------
 * Submitting tasks.
 *
 * Every call of this section, of the time section and of the lanes is a shorthand for one call
 * of the general form, crew_submit_with or crew_enqueue_with (after the lanes), which takes
 * every choice (priority, flags, due time, start-by time, how long to wait for room, lane) in
 * one crew_submit_options; learn that one, or the shorthand that fits.
 *
 * group may be NULL (no group). If *group is CREW_HANDLE_NONE, a new group opens and its handle
 * is stored in *group; otherwise the tasks join that group. The rule for a group that has
 * finished (its tasks so far have all ended, as can happen between two single submissions):
 * the tasks open a new group in its place, and its handle is stored in *group. So *group always
 * names the group of the tasks just submitted, and one crew_wait(p, *group) after a loop of
 * single submissions through it waits for every task of the loop (the earlier groups had
 * finished before the later ones opened). If the finished group lost tasks (a full queue's
 * CREW_FULL_DROP_OLDEST, a start-by time) and no wait has reported it yet, the new group carries
 * the loss on: its crew_wait answers CREW_ECANCELED or CREW_EEXPIRED too, so the loss is never
 * hidden from the wait that covers the lost task. A cancelled group takes no more tasks
 * (CREW_ECANCELED), before it finished and after, until a wait has reported its cancel. Once a
 * wait has returned a group's loss (CREW_ECANCELED, CREW_EEXPIRED), the next submission through
 * the variable opens a clean group: one expired or cancelled request does not mark the
 * requests that follow it. A handle of a generation its slot never reached is refused
 * (CREW_EINVAL) as forged. Handles are values: copies of the old handle keep naming the old,
 * finished group, and threads that each submit through their own copy of one handle may each
 * open a group of their own once it has finished; a group gains tasks from several threads
 * safely while it is open, for instance from its own tasks, which keep it open while they run.
 * The handle variable belongs to the caller: do not share one *group between threads that
 * submit at the same time.
 *
 * All-or-nothing: on error no task of the call was accepted. Errors: EINVAL (NULL pool, task array
 * or fn; n 0; a handle this pool never issued, such as another pool's or one of generation 0;
 * unknown flags), ESHUTDOWN, ECANCELED (the group was cancelled), ENOMEM, ERANGE; EAGAIN
 * (CREW_TASK_BLOCKING tasks, when no blocking thread runs and none could be created); with a
 * bounded queue also EFULL (more tasks than the capacity, policy CREW_FULL_FAIL, or
 * crew_try_submit) and, from crew_submit_timed only (and the general form's room_by_ns),
 * ETIMEDOUT.
 * ------------------------------------------------------------------------------------------- */

/* Queue fn(arg) with a priority. The pool keeps its own copy of the task. */
CREW_EXPORT int crew_submit(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                            crew_handle *group);

/* Queue one caller-owned task. */
CREW_EXPORT int crew_enqueue_task(crew_pool *p, crew_task *t, crew_handle *group);

/*
 * Queue n caller-owned tasks; with a group, all n join it atomically. A long array of tasks of
 * priority 0 may be queued as a few tasks of the pool's own ("runners", one per thread that can
 * run tasks), each running the array's tasks in turn, in array order. The group still finishes
 * when the last of its tasks ends (crew_wait, a poll with crew_wait_timed and crew_notify see
 * it then), even while a runner left with nothing to run is still queued, behind a busy worker
 * or on a paused pool. Such a runner counts as accepted until a thread takes it, where no
 * group is concerned: crew_wait_all and a draining crew_shutdown wait for it (they help, so it
 * ends as soon as they take it), and crew_wait_all_timed with a poll may report it unfinished.
 */
CREW_EXPORT int crew_enqueue_tasks(crew_pool *p, crew_task *t, size_t n, crew_handle *group);

/*
 * Task flags for the _ex variants (crew_task's layout is fixed, so flags travel with the call).
 *   CREW_TASK_BLOCKING  the task blocks (I/O, sleeps, locks held long): it runs on one of the
 *                       pool's blocking threads (crew_config.max_blocking), never on a worker,
 *                       so it cannot hold up short tasks (Li & Hu, §V-B). Blocking tasks start
 *                       in priority order among themselves; waiters do not run them, except a
 *                       blocking thread that waits (in a blocking task, its on_start or an
 *                       on_drop): it runs queued blocking tasks itself, so waits for blocking
 *                       tasks made on the blocking threads end even with every one of them
 *                       waiting.
 */
#define CREW_TASK_BLOCKING 1u

/* crew_submit and crew_enqueue_tasks with flags (0 or CREW_TASK_BLOCKING). */
CREW_EXPORT int crew_submit_ex(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                               unsigned flags, crew_handle *group);
CREW_EXPORT int crew_enqueue_tasks_ex(crew_pool *p, crew_task *t, size_t n, crew_handle *group,
                                      unsigned flags);

/* crew_submit that never waits for room in a full bounded queue: CREW_EFULL instead (whatever
 * the full-queue policy). Without a bounded queue it is crew_submit. */
CREW_EXPORT int crew_try_submit(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                                crew_handle *group);

/* crew_submit that waits at most timeout_ms for room in a full bounded queue (policy
 * CREW_FULL_BLOCK), then gives up with CREW_ETIMEDOUT. Other policies act as in crew_submit. */
CREW_EXPORT int crew_submit_timed(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                                  crew_handle *group, unsigned timeout_ms);

/*
 * Deadlines: a task that must start by a given time or not at all (a request whose answer is
 * useless late). start_by_ns is on crew_now_ns()'s clock (CLOCK_MONOTONIC, so it also matches
 * std::chrono::steady_clock on Linux); 0 means no deadline. A thread that comes to the task
 * after start_by_ns drops it instead of running it: crew_hooks.on_drop gets it, monitoring
 * counts it in crew_stats.expired, and its group's crew_wait returns CREW_EEXPIRED (or
 * CREW_ECANCELED if the group also lost tasks to cancellation). The check is made when a thread
 * takes the task, so the drop (and a waiter's answer) comes when the task reaches the front,
 * not at the deadline itself. A task that has started always runs to its end. crew_wait_all is
 * not affected. flags and errors as for crew_submit_ex.
 */
CREW_EXPORT int crew_submit_deadline(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                                     unsigned flags, uint64_t start_by_ns, crew_handle *group);
/* The clock of start-by times: CLOCK_MONOTONIC, in nanoseconds. */
CREW_EXPORT uint64_t crew_now_ns(void);

/* ---------------------------------------------------------------------------------------------
 * Time: delayed tasks and periodic timers (Java's ScheduledThreadPoolExecutor, libdispatch's
 * dispatch_after). Times are on crew_now_ns()'s clock; a delay is "not before": a task or a run
 * starts at its due time or later (when a thread is free), never earlier.
 *
 * How they wait: in one heap per pool, watched by one thread of the pool's (made at the first
 * delayed task or timer) that sleeps until the nearest due time and, when it comes, queues what
 * is due through the pool's ordinary queues, where it runs on the workers like any task (in
 * priority order among the queued tasks). That thread runs no code of yours, but for on_drop
 * when there is no memory to queue what is due (see "Drops" below). On Linux its timed sleeps
 * have no timer slack (by default a thread's timed sleep may end up to 50 us late; that thread
 * sets its own slack to the least, 1 ns, and never changes a thread of yours), and it wakes a
 * little before the due time, by how late its recent wake-ups came (their median, at most
 * 50 us), to poll the rest: it polls as the pool's idle threads may (not with crew_config.spin
 * 0, nor under CREW_SPIN_AUTO while the awake workers outnumber the CPUs: it then sleeps to the
 * due time). Waiting costs no CPU but those polls, however many wait and however far off; a
 * pending delayed task costs its task node and 24 bytes, a timer
 * about 200 bytes on 64-bit Linux (its record, 184, in a 192-byte allocation, and a 24-byte
 * entry in the heap while it waits).
 *
 * Interplay:
 *   - Groups and waits: a delayed task counts in its group and in the pool's pending tasks from
 *     its submission on, so crew_wait and crew_wait_all wait for it (and a draining shutdown:
 *     see below). A periodic timer belongs to no group and counts in crew_wait_all only while
 *     a run of it is queued or running.
 *   - crew_cancel of its group drops a delayed task not yet due at once (handed to on_drop, the
 *     group's crew_wait returns CREW_ECANCELED); one already due is dropped as any queued task.
 *   - Monitoring and the timeline: a delayed task or a timer's run counts as submitted (and its
 *     queue time starts) when it is due, not before; in a trace (crew_trace_start) each run is
 *     a task named by the timer's or the task's function, from the time a thread started it.
 *     crew_diagnose lists the delayed tasks and timers waiting, and the next one due.
 *   - crew_pause: what comes due while the pool is paused is queued and runs at the resume. A
 *     periodic timer has at most one run queued, so it runs once at the resume, not once per
 *     missed period, then goes on by its flag (below).
 *   - crew_resize: timers do not depend on the number of workers (down to one).
 *   - crew_shutdown: from its start no timer runs again (a run in progress finishes; a queued
 *     run is dropped by CREW_CANCEL and handed to on_drop with the timer's fn and arg, run by
 *     CREW_DRAIN), and new delayed tasks and timers are refused (CREW_ESHUTDOWN). Delayed tasks
 *     not yet due: CREW_DRAIN runs each at its due time (the shutdown waits for them, as for
 *     every accepted task; cancel them first if you do not want to wait), CREW_CANCEL drops
 *     them at once (on_drop, CREW_ECANCELED; crew_wait_all returns CREW_ECANCELED). The timers
 *     themselves stay allocated until crew_timer_stop (allowed after crew_shutdown) or
 *     crew_destroy, which frees those not stopped (crew_timer_stop after it is not allowed).
 *   - Drops: a delayed task or a timer's run, once due, is queued as any task, so a full
 *     queue's CREW_FULL_DROP_OLDEST may drop it to make room for another, although it takes no
 *     place in the bounded queue itself. Queued, it can also be dropped by a cancelling
 *     shutdown, or right away when there is no memory to queue it (then the pool's timer
 *     thread calls on_drop). A dropped timer's run is handed to on_drop with the timer's fn and
 *     arg; but for the shutdown, the timer then goes on to its next run (not before its next
 *     period: no memory does not make it spin).
 *   - fork(): in the child, the parent's pools are unusable (see the top of this file): these
 *     calls return CREW_EFORKED, and the parent's timers never fire there.
 *   - Re-entrancy: a task or a timer's function may submit delayed tasks, start timers, stop
 *     any timer (its own too: see crew_timer_stop) and wait for groups (as any task: crew_wait
 *     runs queued tasks meanwhile).
 * ------------------------------------------------------------------------------------------- */

/* Queue fn(arg) to become runnable delay_ns from now; priority and group as for crew_submit.
 * Errors as crew_submit's (EINVAL, ESHUTDOWN, ECANCELED, ENOMEM, ERANGE, EFORKED), and EAGAIN
 * (the pool's timer thread could not be created); never EFULL: a delayed task takes no place in
 * the bounded queue, neither while it waits nor once it is due. */
CREW_EXPORT int crew_submit_after(crew_pool *p, uint64_t delay_ns, crew_fn fn, void *arg,
                                  uint32_t priority, crew_handle *group);
/* The same, runnable at when_ns (crew_now_ns()'s clock; a time already past: at once). */
CREW_EXPORT int crew_submit_at(crew_pool *p, uint64_t when_ns, crew_fn fn, void *arg,
                               uint32_t priority, crew_handle *group);
/* crew_submit_at with flags (0 or CREW_TASK_BLOCKING: it then runs on a blocking thread) and a
 * start-by time (0: none), as crew_submit_deadline: a task no thread has started by
 * start_by_ns is dropped and reported as expired (CREW_EEXPIRED). A delayed task with a
 * deadline: crew_submit_at_ex(p, crew_now_ns() + delay, fn, arg, prio, 0, start_by, &g).
 * Errors: also EINVAL for start_by_ns not after when_ns (a task reaches a thread only after
 * its due time, so it could never start in time). */
CREW_EXPORT int crew_submit_at_ex(crew_pool *p, uint64_t when_ns, crew_fn fn, void *arg,
                                  uint32_t priority, unsigned flags, uint64_t start_by_ns,
                                  crew_handle *group);

/* A periodic timer. Opaque; made by crew_timer_start, freed by crew_timer_stop. */
typedef struct crew_timer crew_timer;
#define CREW_TIMER_FIXED_RATE 0u  /* runs at first_ns + k * period_ns */
#define CREW_TIMER_FIXED_DELAY 1u /* the next run starts period_ns after the previous one ended */

/*
 * Run fn(arg) first_ns from now, then every period_ns (period_ns 0: once only; the timer then
 * stays idle until crew_timer_stop frees it). Runs are tasks of no group at priority 0, on the
 * workers. Two runs of one timer never overlap: the next run is planned when the previous one
 * has returned. CREW_TIMER_FIXED_RATE: the next run is due at the first point of the grid
 * (first_ns + k * period_ns from the start call) after the start of the run that just ended;
 * a run that took longer than that is followed right away (queued at once), and the periods
 * missed meanwhile are skipped, not queued; a run that started late (a busy or paused pool)
 * is followed by the next grid point, not by catch-up runs. CREW_TIMER_FIXED_DELAY: each run
 * is due period_ns after the previous one's end, so there is nothing to miss.
 * OUT: *out (set only on success, and before the first run can start, so fn may read it, e.g.
 * to stop its own timer). Errors: EINVAL (p, fn or out NULL, flags not one of the two),
 * ESHUTDOWN, ENOMEM, EAGAIN (no timer thread), EFORKED.
 */
CREW_EXPORT int crew_timer_start(crew_pool *p, uint64_t first_ns, uint64_t period_ns,
                                 unsigned flags, crew_fn fn, void *arg, crew_timer **out);
/*
 * Stop t and free it: returns once no run of t is in progress or will start (waiting for a run
 * in progress on another thread to return). Called from inside t's own function, it returns at
 * once: that run finishes, no other starts, and t is freed when the run returns. A run that
 * was queued and had not started never starts. A stop that waits for a run that is itself
 * waiting (directly or not) for the stopping thread never returns: do not stop a timer from a
 * task its function waits for. NULL is a no-op. After it returns t must not be used; at most
 * one crew_timer_stop per timer. A run that is dropped (see "Drops" above) hands the timer's
 * fn and arg to crew_hooks.on_drop, and counts as a run in progress meanwhile: a stop from
 * another thread waits for that on_drop to return, one from inside it returns at once. on_drop
 * must not free such an arg: after a full queue's or a failed queueing's drop the timer goes
 * on with it. Errors: EINVAL (t is already being stopped, from inside its run), EFORKED
 * (nothing is freed).
 */
CREW_EXPORT int crew_timer_stop(crew_timer *t);

/* ---------------------------------------------------------------------------------------------
 * Lanes: serial and bounded-concurrency queues of tasks on a shared pool (a strand, as in Asio;
 * Kudu's serial thread-pool tokens). A lane's tasks start in submission order, and at most
 * max_concurrency of them run at once, on the pool's threads; with max_concurrency 1 (a strand)
 * each task starts after the previous one has finished, so they need no lock among
 * themselves. An idle lane holds no thread and no task (48 bytes): one per connection, for
 * hundreds of thousands of connections, is fine.
 *
 * Fairness: a lane with work has up to max_concurrency runners, ordinary tasks of the pool;
 * each runs at most 16 of the lane's tasks, then, if more wait, queues itself again behind the
 * pool's other queued tasks. So busy lanes, and the pool's other tasks, take turns.
 *
 * A lane's task is a task of the pool in every other respect: it joins its group (a group that
 * counts it from crew_lane_submit on, so crew_wait waits for it), runs in the group's frame
 * (crew_cancelled, EDEADLK checks), is counted in the statistics, in crew_wait_all and in a
 * draining crew_shutdown. Differences: it has no priority (its runner has priority 0); it waits
 * in its lane, not in the bounded queue, so crew_config.queue_capacity does not limit lanes
 * (the runners take no place either); crew_cancel drops a lane's task of the cancelled group
 * when its turn comes, not at once (as for tasks in the work-stealing deques: the runner drops
 * it instead of running it, reporting it to on_drop; crew_wait on the group returns
 * CREW_ECANCELED once the tasks of the lane before it are done); crew_pause stops a lane
 * between two of its tasks; a cancelling crew_shutdown drops the tasks waiting in lanes, each
 * handed to on_drop, while a lane task already running finishes. A full queue's
 * CREW_FULL_DROP_OLDEST that picks a lane's queued runner drops the tasks waiting in that lane
 * with it (each reported as cancelled). Lane tasks are not blocking tasks: they run on the
 * workers, so a task that blocks holds a worker, as any task does. In crew_stats, a lane's
 * queued runner counts in queued, and the tasks waiting in lanes count in running (they are
 * accepted and unfinished, but in no queue of the pool).
 *
 * A task of a lane that waits (crew_wait) for a later task of the same lane waits for ever if
 * the lane has no free place to start it (always, for a strand), or if it is a barrier or comes
 * after one (a barrier starts only once the waiting task has ended): it is waiting for itself.
 * ------------------------------------------------------------------------------------------- */

/* A lane. Opaque; created by crew_lane_create, freed by crew_lane_destroy. */
typedef struct crew_lane crew_lane;

/*
 * Create a lane on p that runs at most max_concurrency of its tasks at once (1: a strand).
 * OUT: *out (set only on success). Errors: EINVAL (p or out NULL, max_concurrency 0),
 * ESHUTDOWN (p is shutting down), ENOMEM. Callable from anywhere, tasks and callbacks included.
 */
CREW_EXPORT int crew_lane_create(crew_pool *p, unsigned max_concurrency, crew_lane **out);

/*
 * Queue fn(arg) on lane l; group as for crew_submit (CREW_HANDLE_NONE opens a group). Several
 * threads may submit to one lane at once; the lane's tasks start in the order their
 * crew_lane_submit calls took them (one thread's submissions in its own order). Errors as
 * crew_submit's (EINVAL: l or fn NULL, or a bad handle; ESHUTDOWN, ECANCELED, ENOMEM,
 * ERANGE); never EFULL (see above). All-or-nothing.
 */
CREW_EXPORT int crew_lane_submit(crew_lane *l, crew_fn fn, void *arg, crew_handle *group);

/*
 * Queue a barrier on lane l (libdispatch's dispatch_barrier_async): fn(arg) starts only after
 * every task submitted to l before it has finished (or been dropped), runs alone, and no task
 * submitted after it starts before it has finished. So a lane of concurrency N with barriers
 * is a readers-writer queue: plain tasks are the readers, up to N at once; barriers the
 * writers. On a lane of concurrency 1 (a strand) a barrier is the same as a plain task.
 * "Before" is the order the submissions took, as for crew_lane_submit. A barrier is a task of
 * the lane, and of its group, in every other respect, as crew_lane_submit's tasks (see
 * "Lanes" above): group as for crew_submit; crew_cancel of its group drops it when its turn
 * comes (the tasks after it then start as after a barrier that ran); crew_pause holds it as a
 * lane task; a cancelling crew_shutdown drops it with the lane's other waiting tasks, each
 * reported to on_drop; a draining one runs it in its place. While a barrier waits for earlier
 * tasks, later plain tasks wait behind it (no reader overtakes a waiting writer). Errors as
 * crew_lane_submit's.
 */
CREW_EXPORT int crew_lane_barrier(crew_lane *l, crew_fn fn, void *arg, crew_handle *group);

/*
 * Wait until every task submitted to l has finished (or been dropped), then free l. From a
 * task of the pool, or its on_start or on_stop, the caller runs queued tasks of the pool while
 * it waits (as crew_wait does). On a paused pool it waits for crew_resume, as crew_wait does.
 * No crew_lane_submit on l may be in progress or follow. NULL is a no-op. May be called after
 * crew_shutdown of its pool has returned (it returns at once: every runner of the lane, also one
 * queued by a submission racing the shutdown, has run or been dropped), not after crew_destroy.
 * Errors:
 * EDEADLK (called from one of l's own tasks, or from on_drop for one of them: l cannot be idle
 * before this call returns; nothing is freed), EBUSY (a node of a task graph runs in l:
 * crew_graph_node_lane; set its lane to NULL or destroy its graph first; nothing is freed),
 * ENOMEM (nothing is freed).
 */
CREW_EXPORT int crew_lane_destroy(crew_lane *l);

/* ---------------------------------------------------------------------------------------------
 * Task graphs: tasks with dependencies ("run C after A and B"), built once and run many times.
 *
 * A graph belongs to a pool. Its nodes are numbered from 0 in the order they were added; an
 * edge before -> after makes after wait for before. A run (crew_graph_run) starts every node
 * without a predecessor, and each other node once all its predecessors have finished, each
 * node exactly once per run (a node in a loop once per turn of the loop). Ready nodes are
 * ordered by priority as other tasks are (0 highest); of the nodes that one node makes ready,
 * the one of highest priority (the first linked, on a tie) runs next on the same thread
 * without going through a queue, the others are queued; so a chain runs as a loop.
 *
 * A condition node (crew_graph_add_condition) returns the index, among its successors in the
 * order they were linked, of the one successor to start; any other value starts none. Its
 * edges do not count as dependencies: the chosen successor starts at once, whatever its other
 * predecessors (so a loop is a condition node with an edge back to an earlier node), and a
 * cycle closed by a condition's edge is allowed; a cycle of plain edges is refused when the
 * graph is run (CREW_EINVAL, crew_last_error naming the nodes on it).
 *
 * Runs. The run's tasks join *group as crew_submit's do (CREW_HANDLE_NONE opens a group, whose
 * handle is stored in *group), so crew_wait, crew_wait_timed and crew_notify on the group
 * wait for the whole run, and crew_cancel on it starts no further node of the run: every node
 * of the run that has not started is reported to crew_hooks.on_drop (a condition node with
 * its function converted to crew_fn, never called so), before the group finishes, and the
 * wait returns CREW_ECANCELED. A cancelled run reports every node that did not run in it, also
 * those that a condition would not have chosen. A cancelling crew_shutdown does the same for
 * every run; a draining one runs every run to its end (crew_wait_all waits for runs too). With
 * monitoring on, a run counts in crew_stats as one task (its first task, which starts the
 * nodes without a predecessor) and, at the end of each repetition, as its nodes: each node
 * that started counts once in .submitted and .completed (however often a loop ran it), each
 * node reported to on_drop once in .submitted and .cancelled (a node that no condition chose
 * in a run that was not stopped counts nowhere); so .cancelled never exceeds .submitted.
 * A run of a graph allocates at most one block of 16 bytes per node (kept for the next run), and
 * the same graph may be run again, or from several threads at once: each run has its own
 * state and its own group. Nodes are tasks of the pool in every other respect: they may wait
 * (crew_wait, crew_join, a run of another graph) and help meanwhile, run in their group's
 * frame, are seen by crew_pause (a node made ready while the pool is paused waits for
 * crew_resume), and take no place in a bounded queue (crew_config.queue_capacity), as lane
 * tasks do not; the run's first task does (a full queue's CREW_FULL_DROP_OLDEST that drops a
 * queued node drops it as crew_cancel would: it, and the nodes that would have followed it,
 * are reported to on_drop when the rest of the run has ended).
 *
 * Seeing a run: a trace (crew_trace_start) shows each node's turns, named after the node
 * (crew_graph_name_node), with an arrow for each edge taken; crew_diagnose lists the runs in
 * progress with the nodes ready but not started and those waiting, for which predecessor.
 *
 * A node may run in a lane (crew_graph_node_lane), which bounds how many of the lane's tasks
 * and nodes run at once, and may have a start-by time (crew_graph_node_start_within), past which
 * it is dropped as expired and its run stopped. Such a node always goes through a queue; the
 * others pay nothing for the two settings.
 *
 * Building (crew_graph_add*, crew_graph_precede, crew_graph_remove_edge,
 * crew_graph_name_node, crew_graph_node_lane, crew_graph_node_start_within) and destroying may
 * not overlap a run or each other: such a call fails with CREW_EBUSY and changes nothing. A
 * failed call changes nothing. Building is from one thread at a time; runs from any.
 * ------------------------------------------------------------------------------------------- */

/* A task graph. Opaque; created by crew_graph_create, freed by crew_graph_destroy. */
typedef struct crew_graph crew_graph;
/* A node's number in its graph, from 0 (numbers of different graphs cannot be told apart: a
 * number beyond the graph's nodes is refused). */
typedef uint32_t crew_node;
/* No node: what a failed crew_graph_add leaves in *out. */
#define CREW_NODE_NONE UINT32_MAX

/*
 * Create an empty graph on p. OUT: *out (NULL on failure). Errors: EINVAL (p or out NULL),
 * EFORKED, ENOMEM.
 */
CREW_EXPORT int crew_graph_create(crew_pool *p, crew_graph **out);

/*
 * Add a node that runs fn(arg) with the given priority. OUT: *out, its number (out may be NULL;
 * CREW_NODE_NONE on failure). Errors: EINVAL (g or fn NULL), EBUSY (a run is in progress, or
 * another call changes the graph), ERANGE (2147483646 nodes already), ENOMEM.
 */
CREW_EXPORT int crew_graph_add(crew_graph *g, crew_fn fn, void *arg, uint32_t priority,
                               crew_node *out);
/* A condition node: fn returns the index, among the node's successors in the order they were
 * linked, of the one successor to start; any other value starts none. Its edges may close a
 * cycle (a loop). Errors as crew_graph_add's. */
CREW_EXPORT int crew_graph_add_condition(crew_graph *g, uint32_t (*fn)(void *arg), void *arg,
                                         uint32_t priority, crew_node *out);
/*
 * Add a node that runs the whole graph child as its body: one run of child (crew_graph_run,
 * in a group of its own) and a wait for it (crew_wait: the thread helps meanwhile), so the
 * nodes after this one start once every node of that child run has finished. A child run that
 * cannot start (a cycle in child, a shutdown refusing it, no memory) or that ends cancelled or
 * with lost nodes cancels this graph's run (its unstarted nodes go to on_drop, its wait
 * returns CREW_ECANCELED). Cancelling this graph's run starts no further node of it, but a
 * child run already started runs to its end. A draining crew_shutdown refuses new runs: a
 * child not started before it cannot start, and cancels the run as above. on_drop reports
 * such a node unstarted with crew's own function and child as its argument. child may be a
 * node of several graphs, and several times of one; it may be changed between runs (each
 * run of it uses it as it is then), and may be of another pool. OUT: *out as crew_graph_add's.
 * Errors: EINVAL (g or child NULL, child == g, or child runs g through its own nodes, however
 * deep: each would run the other for ever), EBUSY (g has a run in progress or is being
 * changed), ERANGE, ENOMEM. While g exists, crew_graph_destroy(child) answers CREW_EBUSY:
 * destroy g first. The check for a cycle of graphs holds no graph: building or running child
 * meanwhile is not refused for it. EFORKED.
 */
CREW_EXPORT int crew_graph_add_graph(crew_graph *g, crew_graph *child, uint32_t priority,
                                     crew_node *out);
/*
 * Add the edge before -> after: after starts once before has finished (or, if before is a
 * condition node, when before chooses it). Two edges between the same nodes count twice.
 * Errors: EINVAL (g NULL; a node number that is not one of g's; before == after), EBUSY,
 * ERANGE (2147483647 edges already), ENOMEM.
 */
CREW_EXPORT int crew_graph_precede(crew_graph *g, crew_node before, crew_node after);
/*
 * Remove the oldest edge before -> after (a condition's later successors move down one
 * index). Errors: EINVAL (g NULL, a bad node number, no such edge), EBUSY, ENOMEM.
 */
CREW_EXPORT int crew_graph_remove_edge(crew_graph *g, crew_node before, crew_node after);

/*
 * Name node `node` of g, for the timeline (its turns' events in a trace) and crew_diagnose:
 * name is copied (at most CREW_GRAPH_NAME_MAX bytes); NULL gives the node back its default
 * name, "node N". A change of the graph (not during a run) that keeps its successor lists
 * built. Errors: EINVAL (g NULL; a node number that is not one of g's; name empty or longer
 * than CREW_GRAPH_NAME_MAX), EBUSY (a run is in progress, or another call changes the graph),
 * ENOMEM (the old name stays).
 */
CREW_EXPORT int crew_graph_name_node(crew_graph *g, crew_node node, const char *name);
#define CREW_GRAPH_NAME_MAX 255

/*
 * Run node `node` of g in lane (crew_lane_create; NULL: in none, the default): each turn of
 * the node is queued on the lane as crew_lane_submit queues a task, in the run's group, so at
 * most the lane's max_concurrency of its tasks run at once, counting nodes of every graph and
 * run and the lane's other tasks; the node takes its turn in the lane's order, always through
 * the lane's queue (never straight after its predecessor). The lane must be of g's pool. While
 * the node has it, the lane is held: crew_lane_destroy answers CREW_EBUSY until the node's
 * lane is set to NULL or g is destroyed (so: g, or its nodes' lanes, before the lane, and the
 * lane before its pool's crew_destroy). A node that the lane drops (its group cancelled, a
 * cancelling shutdown) is reported as a cancelled run's nodes are. Setting it again replaces
 * the lane. A change of the graph (not during a run) that keeps its successor lists built. Errors:
 * EINVAL (g NULL; a node number that is not one of g's; a lane of another pool), EBUSY (a run
 * is in progress, or another call changes the graph), ENOMEM (nothing changed).
 */
CREW_EXPORT int crew_graph_node_lane(crew_graph *g, crew_node node, crew_lane *lane);
/*
 * Give node `node` of g a start-by time: ns nanoseconds after the start of its run (of its
 * repetition, each repetition of crew_graph_run_n counting from its own start); 0 removes it.
 * A turn of the node that has not started by then is dropped as expired, as a task of
 * crew_submit_deadline is: it never runs, and its run stops as a cancelled one does: no node
 * of it starts from a queue after that (a node running meanwhile may still start the next of
 * its chain on its own thread), no repetition follows, every node of the repetition that did
 * not start (the expired one included) is reported to crew_hooks.on_drop, once each, and a
 * wait on the run's group returns CREW_EEXPIRED (CREW_ECANCELED if the run was also cancelled
 * or its pool shut down cancelling). The node always goes through a queue (so the time is
 * checked when a thread takes it, as for crew_submit_deadline), in its lane if it has one.
 * With monitoring on, the nodes it leaves unstarted count in crew_stats as cancelled ones.
 * A change of the graph (not during a run) that keeps its successor lists built. Errors:
 * EINVAL (g NULL; a node number that is not one of g's), EBUSY (a run is in progress, or
 * another call changes the graph), ENOMEM (nothing changed).
 */
CREW_EXPORT int crew_graph_node_start_within(crew_graph *g, crew_node node, uint64_t ns);

/* Starts one run of the whole graph; its tasks join *group as crew_submit's do, so crew_wait,
 * crew_wait_timed, crew_notify and crew_cancel work on a run. The first run after a change
 * builds the successor lists (then, and only then, paid). Errors: EINVAL (g NULL, a bad
 * handle, a cycle no condition closes: crew_last_error names its nodes; nodes but none
 * without a predecessor, counting a condition's edges: a loop with no way in), EBUSY (another call
 * is changing the graph), ERANGE (a node with more than 1073741823 successors), and
 * crew_submit's (ESHUTDOWN, ECANCELED, EFULL, ENOMEM, ERANGE, EFORKED): on an error no node
 * runs. */
CREW_EXPORT int crew_graph_run(crew_graph *g, crew_handle *group);
/* One run of n repetitions of the graph, one after the other (the next starts when every node
 * of the previous one has finished), as one run: crew_cancel stops it, reporting the nodes of
 * the repetition it stopped in that did not run. Errors as crew_graph_run's; EINVAL for n 0. */
CREW_EXPORT int crew_graph_run_n(crew_graph *g, uint64_t n, crew_handle *group);
/* Write the graph to out in Graphviz's DOT language: a node labelled with its name
 * (crew_graph_name_node; '"' and '\\' escaped, a line end as \\n) or else its number, a
 * condition node as a diamond ("3?", "name?") whose edges are dashed and labelled with their
 * index. May be called
 * during runs. Errors: EINVAL (g or out NULL, a cycle is no error here), EBUSY (a change in
 * progress), ENOMEM, EIO (writing failed). */
CREW_EXPORT int crew_graph_dump_dot(crew_graph *g, FILE *out);
/* Free g, and let go of its nodes' lanes (crew_graph_node_lane). NULL is a no-op. Errors:
 * EBUSY (a run is in progress: wait for its group first; or another call changes the graph;
 * or g is a node of another graph, crew_graph_add_graph: destroy that graph first;
 * crew_last_error says which; nothing is freed), EFORKED (in a child process, a graph made
 * before the fork: it frees nothing, never hangs). May be called after its pool's
 * crew_shutdown or crew_destroy (it touches nothing of the pool). */
CREW_EXPORT int crew_graph_destroy(crew_graph *g);

/* ---------------------------------------------------------------------------------------------
 * The general form of a submission: crew_submit_with for one task, crew_enqueue_with for an
 * array of caller-owned tasks, both with a crew_submit_options. Every other submission call is
 * a shorthand for one call of it, kept for brevity and for the programs that use it:
 *
 *     shorthand                                    options it sets (others left 0)
 *     crew_submit(p, fn, arg, prio, g)             priority = prio
 *     crew_submit_ex(..., prio, flags, g)          priority, flags
 *     crew_try_submit(p, fn, arg, prio, g)         priority, flags = CREW_SUBMIT_NO_WAIT
 *     crew_submit_timed(..., prio, g, ms)          priority, room_by_ns = crew_now_ns() + ms * 1e6
 *     crew_submit_deadline(..., prio, flags, s, g) priority, flags, start_by_ns = s
 *     crew_submit_after(p, d, fn, arg, prio, g)    priority, when_ns = crew_now_ns() + d
 *     crew_submit_at(p, w, fn, arg, prio, g)       priority, when_ns = w (w 0: 1, long past)
 *     crew_submit_at_ex(p, w, ..., flags, s, g)    priority, flags, when_ns = w, start_by_ns = s
 *     crew_lane_submit(l, fn, arg, g)              lane = l (p is l's pool)
 *     crew_lane_barrier(l, fn, arg, g)             lane = l, flags = CREW_SUBMIT_BARRIER
 *     crew_enqueue_task(s)(p, t, n, g)             none
 *     crew_enqueue_tasks_ex(p, t, n, g, flags)     flags
 *
 * One convention for every time in crew_submit_options: an instant on crew_now_ns()'s clock,
 * in nanoseconds (for a delay d from now, write crew_now_ns() + d), and 0 for "none".
 * ------------------------------------------------------------------------------------------- */

/* Flags of crew_submit_options.flags, besides CREW_TASK_BLOCKING (above):
 *   CREW_SUBMIT_NO_WAIT  never wait for room in a full bounded queue: CREW_EFULL at once,
 *                        whatever the full-queue policy (what crew_try_submit does).
 *   CREW_SUBMIT_BARRIER  the task is a barrier of its lane (crew_lane_barrier); needs lane. */
#define CREW_SUBMIT_NO_WAIT 2u
#define CREW_SUBMIT_BARRIER 4u

/*
 * How to submit. Versioned by its size: set size to sizeof(crew_submit_options), most simply
 * by starting from CREW_SUBMIT_OPTIONS_INIT, so that a program built against this header keeps
 * working with a later crew whose options have grown. Every other member left 0 takes its
 * default, and a NULL options pointer means all defaults: priority 0, no flags, runnable now,
 * no start-by time, waiting for room in a full bounded queue as the pool's full-queue policy
 * says, no lane.
 */
typedef struct crew_submit_options {
    size_t size;          /* sizeof(crew_submit_options): set by CREW_SUBMIT_OPTIONS_INIT */
    uint32_t priority;    /* 0 = highest; equal priorities run first-in-first-out. One task
                             only: an array's tasks carry their own (crew_task.priority) */
    unsigned flags;       /* CREW_TASK_BLOCKING, CREW_SUBMIT_NO_WAIT, CREW_SUBMIT_BARRIER */
    uint64_t when_ns;     /* due time: runnable from then on, as crew_submit_at; 0 = now. One
                             task only; a due time takes no place in a bounded queue */
    uint64_t start_by_ns; /* start-by time: dropped as expired if no thread has started it by
                             then, as crew_submit_deadline; 0 = none. One task only; after
                             when_ns if both are set */
    uint64_t room_by_ns;  /* a full bounded queue (policy CREW_FULL_BLOCK): wait for room until
                             then at most, then fail with CREW_ETIMEDOUT, as crew_submit_timed;
                             0 = as long as it takes. Not with CREW_SUBMIT_NO_WAIT */
    crew_lane *lane;      /* the lane of p the task joins (crew_lane_submit); NULL = none. One
                             task only, with no priority, due time, start-by time nor
                             CREW_TASK_BLOCKING (a lane orders its own tasks) */
} crew_submit_options;

/* Options with size set and every default: crew_submit_options o = CREW_SUBMIT_OPTIONS_INIT; */
#define CREW_SUBMIT_OPTIONS_INIT {sizeof(crew_submit_options), 0, 0, 0, 0, 0, NULL}

/*
 * Queue fn(arg) as opts says (NULL: all defaults, which is crew_submit at priority 0); group
 * as for crew_submit. All-or-nothing; callable from anywhere, as crew_submit. CREW_SUBMIT_NO_WAIT
 * and room_by_ns concern only tasks that take a place in the bounded queue: not a lane's, a
 * delayed one's nor a blocking one's. Errors: those of the shorthand that does the same (see
 * above: crew_submit's, ETIMEDOUT with room_by_ns, EAGAIN with when_ns or CREW_TASK_BLOCKING),
 * and EINVAL for bad options: size not sizeof(crew_submit_options) (a larger size is accepted
 * if the members this crew does not know are 0), an unknown flag, start_by_ns not after
 * when_ns, room_by_ns with CREW_SUBMIT_NO_WAIT, CREW_SUBMIT_BARRIER without a lane, a lane of
 * another pool, a lane with a priority, a due time, a start-by time or CREW_TASK_BLOCKING.
 * crew_last_error() names the member at fault.
 */
CREW_EXPORT int crew_submit_with(crew_pool *p, crew_fn fn, void *arg,
                                 const crew_submit_options *opts, crew_handle *group);

/*
 * Queue n caller-owned tasks as opts says (NULL: all defaults, which is crew_enqueue_tasks);
 * with a group, all n join it atomically; each task's priority is its crew_task.priority. The
 * options that apply: flags CREW_TASK_BLOCKING and CREW_SUBMIT_NO_WAIT, room_by_ns. Errors:
 * crew_enqueue_tasks_ex's, ETIMEDOUT with room_by_ns, and EINVAL for bad options as
 * crew_submit_with's, also for a member that only a single task takes (priority, when_ns,
 * start_by_ns, lane, CREW_SUBMIT_BARRIER): submit such tasks one by one with crew_submit_with.
 */
CREW_EXPORT int crew_enqueue_with(crew_pool *p, crew_task *t, size_t n,
                                  const crew_submit_options *opts, crew_handle *group);

/* ---------------------------------------------------------------------------------------------
 * Waiting. The caller helps: while it waits it runs queued tasks itself, first those of the
 * awaited group (newest first, which keeps nested spawn-and-wait shallow), then, unless it is
 * already nested too deep in tasks it took while waiting, any queued task (highest priority,
 * oldest first). A successful wait happens-after everything the awaited tasks did; a timed
 * wait that gives up (CREW_ETIMEDOUT) orders nothing.
 *
 * Timed waits (crew_wait_timed, crew_wait_all_timed, and crew.hpp's wait_for / wait_until over
 * them) do not help. With a time-out other than 0 and UINT64_MAX, they run no task at all: the
 * caller only sleeps until the group (or the pool) is done or the time-out passes, so it
 * returns as late after its time-out as the system wakes a timed sleeper (its timer slack and
 * scheduling: well under a millisecond unless the machine is overloaded), whatever the length
 * of the tasks queued or running, and it is never late by a task: the only task that can still
 * be running on the caller's thread is one the caller itself was already in when it called.
 * Why: a thread cannot stop a task it took once the time passes, and no task's length is known
 * before it ends, so a timed wait that helped would be as late as the longest task it happened
 * to take (an event loop or a request handler with a budget needs the budget kept). This is
 * what dispatch_group_wait, std::future::wait_for and Java's Future.get(timeout) do too. The
 * cost: the caller's thread does not run the awaited tasks, so they need another thread. From
 * inside a task, a timed wait for tasks that only its own thread could run (the pool's only
 * worker, every worker waiting so, or a blocking task waiting for blocking tasks with every
 * blocking thread busy) times out rather than deadlocking or running them; wait without a
 * time-out (crew_wait), which helps, when the caller should run them. A time-out of 0 polls
 * (runs nothing, does not sleep); UINT64_MAX, or one so long that its end lies beyond
 * crew_now_ns()'s range, is no time-out: exactly the untimed wait, which helps.
 * crew_submit_timed's wait for room in a bounded queue also only sleeps and runs no queued
 * task (under CREW_FULL_CALLER_RUNS, and from a task of the pool, where waiting for room could
 * wait for itself, the submitter runs the tasks it submits instead of waiting, as crew_submit
 * does).
 * ------------------------------------------------------------------------------------------- */

/*
 * Queue n tasks as a new group and return once all have finished. Returns CREW_OK, or
 * CREW_ECANCELED if a shutdown or a full queue (CREW_FULL_DROP_OLDEST) dropped some of them.
 * Other errors as for crew_enqueue_tasks.
 * Tasks all of priority 0, on a pool that is not paused, monitored, traced or bounded, under
 * the default work stealing, take a shorter way, with no group, however many they are: the
 * caller runs t[0] at once, offers the others to the pool's threads as crew_join offers a half
 * (up to 8 one by one; more split in halves, the upper half offered as one piece that a thread
 * taking it splits the same way, as a parallel loop's range is split), and runs itself those
 * nobody took. No memory is allocated. They count as accepted tasks all the same
 * (crew_wait_all and a draining crew_shutdown wait for them); a pause that begins during the
 * call does not stop the caller from running those it holds; those it holds when a cancelling
 * crew_shutdown begins go to on_drop instead (CREW_ECANCELED). Other calls (a priority other
 * than 0, or such a pool or strategy) take the long way: crew_enqueue_tasks into a new group,
 * then crew_wait.
 */
CREW_EXPORT int crew_enqueue_tasks_wait(crew_pool *p, crew_task *t, size_t n);

/*
 * Wait until the group has finished. A handle to a group that finished earlier (its slot may be
 * reused since) returns CREW_OK at once. Returns CREW_ECANCELED if the group was cancelled
 * (crew_cancel) or lost tasks to a shutdown or a full queue, and CREW_EEXPIRED if it lost tasks
 * only to their deadlines (crew_submit_deadline).
 * How long that answer is kept: until a wait has reported it, and after that until 256 more
 * losses of the pool have been reported and no wait on the group is in progress; then the
 * group's slot is reused, and a wait that begins later on a copy of the old handle answers
 * CREW_OK, as for any finished group. A wait reports the loss when crew_wait or
 * crew_wait_timed returns it, through any copy of the handle and from any thread (not only the
 * thread or the variable that submitted the tasks); so does a submission through a handle
 * variable whose group finished with a loss no wait had reported: the new group carries the
 * loss on (see "Submitting tasks"), and its wait is the one that returns it. A wait that was
 * in progress when the group ended (asleep in it, or helping) always answers the group's
 * result, however many losses are reported meanwhile. A loss that no wait reports is kept until
 * crew_destroy (about 64 bytes each); a completion callback's run does not report it (a
 * callback that is the group's only consumer may call crew_wait on the group inside fn: that
 * returns the result at once and reports it). Why: handles are plain values, so the pool cannot
 * tell when the last copy is dropped, and keeping every loss for the pool's life made a server
 * that puts deadlines on its requests grow without bound; the 256 let a second wait on the
 * handle, or waits of several threads at once, all get the answer. Errors: EINVAL (p NULL,
 * group CREW_HANDLE_NONE, a handle of another pool or a slot this pool never issued, generation
 * 0, which no group gets, or a generation its slot never reached), EDEADLK (a task of the group,
 * running on this thread, is the caller or one of its callers: the group cannot finish while it
 * waits; found when the wait would otherwise sleep, so the caller may first have helped with
 * other queued tasks of the group).
 * A worker of the pool under the default work stealing (a task that queued tasks into a new
 * group and waits for it, as spawn-and-wait code does) first runs, newest first and one after
 * another, the tasks it queued itself that still lie on top of its own queue, and ends those of
 * the group in it together; only then does it look further, as above.
 */
CREW_EXPORT int crew_wait(crew_pool *p, crew_handle group);

/*
 * crew_wait with a time-out (dispatch_group_wait with a time, std::future::wait_for): a wait
 * for the group, under the same re-entrancy rules (from inside a task too, nested), that gives
 * up with CREW_ETIMEDOUT once timeout_ns nanoseconds have passed and the group has still not
 * finished. Unlike crew_wait it does not help: it runs no task (see "Timed waits" above). The
 * group is left as it was: its tasks go on, and it can be waited for again (timed or not),
 * cancelled, or given more tasks.
 *   - timeout_ns 0 is a poll: the group's answer if it has finished, else CREW_ETIMEDOUT at
 *     once; it runs no task (nor does it sleep).
 *   - timeout_ns UINT64_MAX means no limit: exactly crew_wait, which helps (so does a time-out
 *     so long that its end lies beyond crew_now_ns()'s range).
 *   - The time is crew_now_ns()'s (CLOCK_MONOTONIC). The caller sleeps until the group
 *     finishes or the time-out, whichever comes first, and returns shortly after its time-out:
 *     as late as the system wakes a timed sleeper (its timer slack and scheduling: well under a
 *     millisecond unless the machine is overloaded), whatever tasks the pool holds.
 *   - From a task of the pool: the group's tasks must run on other threads; a group that only
 *     this thread could run (a one-thread pool) times out.
 *   - A cancelled group's tasks that crew_cancel could not take out of their queue are dropped
 *     when a thread comes to them (this wait drops none), so until then it times out too.
 * Returns CREW_OK, CREW_ECANCELED or CREW_EEXPIRED as crew_wait does when the group finishes
 * in time (also when it finished just as the time-out passed), CREW_ETIMEDOUT otherwise.
 * Errors as crew_wait's: EINVAL (p NULL, a bad handle), EDEADLK (a task of the group, running
 * on this thread, is the caller or one of its callers; also for a poll), EFORKED.
 */
CREW_EXPORT int crew_wait_timed(crew_pool *p, crew_handle group, uint64_t timeout_ns);

/*
 * Wait until every accepted task has finished or been dropped (while other threads keep
 * submitting, this may not return). Returns CREW_ECANCELED if a cancelling shutdown ever dropped
 * tasks of this pool (and from then on, every time). Tasks dropped otherwise, by crew_cancel, by
 * a full queue (CREW_FULL_DROP_OLDEST) or for their start-by time, do not change its answer:
 * they are reported to their group's crew_wait, to on_drop and in crew_stats.
 * Errors: EINVAL (p NULL), EDEADLK (called from a task of this pool).
 */
CREW_EXPORT int crew_wait_all(crew_pool *p);

/*
 * crew_wait_all with a time-out, which does not help: the caller runs no task and sleeps until
 * no accepted task is unfinished, giving up with CREW_ETIMEDOUT once timeout_ns nanoseconds
 * have passed first (as late as crew_wait_timed: see "Timed waits" above); the tasks go on.
 * timeout_ns 0 polls (CREW_OK if no accepted task is unfinished now, else CREW_ETIMEDOUT),
 * UINT64_MAX waits without limit, helping, exactly as crew_wait_all. Returns
 * CREW_OK or CREW_ECANCELED as crew_wait_all does, or CREW_ETIMEDOUT. Errors: EINVAL (p NULL),
 * EDEADLK (called from a task of this pool), EFORKED.
 */
CREW_EXPORT int crew_wait_all_timed(crew_pool *p, uint64_t timeout_ns);

/*
 * Completion callback: run fn(arg) once the group has finished, however it finished (every task
 * ran, or some were cancelled or expired), exactly once, as a task of no group at the highest
 * priority, on a thread that runs the pool's tasks (a worker, or a caller helping in a wait, as
 * any task), never inside crew_notify itself. In fn, crew_wait on the group returns at once
 * with the group's result (CREW_OK, CREW_ECANCELED or CREW_EEXPIRED), and everything the
 * group's tasks did happens-before fn (if the group lost tasks and other waits have reported
 * it and many more losses since, see crew_wait: fn's wait then answers CREW_OK). The callback's
 * run does not count as a wait that reports a loss: call crew_wait on the group in fn to report
 * it, or the group's slot is kept until crew_destroy (crew_wait says how long a loss is kept).
 * For a group that has already finished (its handle may
 * be stale: its slot reused since) fn is queued at once. Several callbacks on one group all run,
 * in no guaranteed order. Nothing is allocated per group, one crew_submit node per callback.
 * A callback is an accepted task from its registration on: crew_wait_all and crew_shutdown
 * (drain or cancel) wait for it, so crew_destroy never frees the pool under a running callback.
 * It is never dropped: a cancelling shutdown runs the callbacks of the groups it ends, and a
 * full queue (CREW_FULL_DROP_OLDEST) that comes to one runs it in the submitting thread instead
 * (the one case where fn runs on a thread that is not helping). On a paused pool it waits for
 * crew_resume, as a task. Not counted nor timed in crew_stats (crew_stats.running may include
 * callbacks whose group is still open). Tasks submitted through a handle variable after its
 * group finished form a new group (see "Submitting tasks"): the callback does not wait for them.
 * Errors: EINVAL (p or fn NULL, group CREW_HANDLE_NONE, a handle of another pool or a slot this
 * pool never issued, generation 0, or a generation never reached; as crew_wait),
 * ESHUTDOWN (the pool is shutting down: fn will not run), ENOMEM. May be called from any thread
 * and from every callback, fn included (see the re-entrancy table).
 */
CREW_EXPORT int crew_notify(crew_pool *p, crew_handle group, crew_fn fn, void *arg);

/*
 * Cancel a group: its tasks that have not started are dropped, never run, wherever they are
 * queued (those in a worker's deque when the worker comes to them), and counted in
 * crew_stats.cancelled (a delayed task dropped before it was due is not: it counts in the
 * statistics only from its due time on); tasks already running finish (they can poll
 * crew_cancelled() to stop early). crew_wait on the group then returns CREW_ECANCELED once its
 * running tasks end (kept as crew_wait says), and adding tasks to it fails with CREW_ECANCELED.
 * Promptly, not instantly: a task a thread took just as crew_cancel ran may still start. Other
 * groups, and crew_wait_all, are unaffected. A cancel racing the group's natural end is
 * all-or-nothing: either it takes effect (CREW_OK, and the group's wait answers
 * CREW_ECANCELED) or the group had ended first (CREW_ESTALE, and the wait answers as it would
 * have without the cancel); never CREW_OK with a wait that answers CREW_OK.
 * Errors: EINVAL (p NULL, group CREW_HANDLE_NONE, another pool's or never issued), ESTALE (the
 * group has already finished: nothing to cancel).
 */
CREW_EXPORT int crew_cancel(crew_pool *p, crew_handle group);
/* From inside a task: 1 if its group was cancelled or its pool is shutting down with
 * CREW_CANCEL (stop early if you can), else 0 (also outside any task). */
CREW_EXPORT int crew_cancelled(void);
/* From inside a task (or on_drop): the group of the innermost task running on the calling
 * thread, as its submitter's handle names it (a graph node: its run's group); CREW_HANDLE_NONE
 * for a task of no group, and outside any task. Never fails. */
CREW_EXPORT crew_handle crew_current_group(void);

/* ---------------------------------------------------------------------------------------------
 * Monitoring (Jendersie et al., §III-F; Xu & Bode, §2). Off by default, and then free: no clock
 * is read and nothing is counted. When on, every task accepted from then on is timed:
 *   submitted  the submitting call began        accepted  the pool queued it
 *   started    a thread began running it        finished  its function returned
 * giving response (submitted -> accepted), idle (accepted -> started, the time in the queue),
 * processing (started -> finished) and turnaround (submitted -> finished) times. Counters and
 * histograms live with each thread and are summed when read. Times are in nanoseconds;
 * percentiles come from log-spaced buckets (within 12.5%).
 * ------------------------------------------------------------------------------------------- */

/* A latency distribution. */
typedef struct crew_latency {
    uint64_t count;  /* samples */
    double mean_ns;  /* average */
    uint64_t p50_ns; /* median */
    uint64_t p90_ns; /* 90th percentile */
    uint64_t p99_ns; /* 99th percentile */
    uint64_t max_ns; /* largest sample */
} crew_latency;

/* Pool statistics (Jendersie et al., Table IV; Xu & Bode, Table 2). Versioned by size: set size
 * to sizeof(crew_stats) before calling crew_stats_get; fields a later version adds go at the
 * end. */
typedef struct crew_stats {
    size_t size;            /* IN: sizeof(crew_stats) as the caller compiled it */
    int monitoring;         /* whether statistics are being collected now */
    uint64_t uptime_ns;     /* working time: since crew_create or the last crew_stats_reset */
    uint64_t submitted;     /* tasks accepted while monitoring was on */
    uint64_t completed;     /* of those, finished */
    uint64_t cancelled;     /* of those, dropped unrun: by a cancelling shutdown, crew_cancel or a
                             * full queue (CREW_FULL_DROP_OLDEST); not those in expired. A
                             * graph run's nodes count here and in submitted and completed
                             * (see "Task graphs") */
    uint64_t rejected;      /* submissions refused (shut down, stale group, no memory, ...) */
    uint64_t queued;        /* tasks queued now: a sum over the queues taken while tasks move
                               between them, so an estimate while busy; with a bounded queue
                               never above its capacity plus the queued blocking tasks */
    uint64_t queued_peak;   /* most tasks queued at once (sampled at submissions, as queued) */
    uint64_t running;       /* tasks running now */
    uint32_t threads;       /* workers now (running, not marked to exit) */
    uint32_t threads_peak;  /* most workers at once */
    double throughput;      /* completed per second of uptime */
    crew_latency response;  /* submitted -> accepted */
    crew_latency idle;      /* accepted -> started: Jendersie et al.'s "avg wait time" */
    crew_latency processing; /* started -> finished */
    crew_latency turnaround; /* submitted -> finished: Jendersie et al.'s "avg complete time" */
    /* Added after the first version (read it only if size covers it): */
    uint64_t expired; /* of the tasks accepted, dropped because their start-by time passed
                         (crew_submit_deadline); not counted in cancelled */
} crew_stats;

/* One worker's statistics (Jendersie et al., Table III). */
typedef struct crew_thread_stats {
    unsigned index;      /* the worker's number (its thread name ends in -w<index>) */
    int state;           /* 0 running, 1 marked by resize to exit, 2 exited */
    uint64_t waiting_ns; /* time spent without a task (spinning or asleep) */
    uint64_t busy_ns;    /* time spent running tasks */
    uint64_t tasks;      /* tasks run */
    uint64_t stolen;     /* tasks taken from another worker's queue (0 with one shared queue) */
} crew_thread_stats;

/* Turn monitoring on (1) or off (0) on a live pool; safe at any time. Tasks accepted while it
 * was off are not counted or timed. Errors: EINVAL (p NULL), ENOTSUP (turning it on in a build
 * made with CREW_MONITORING=OFF). */
CREW_EXPORT int crew_set_monitoring(crew_pool *p, int on);
/* Fill *out (out->size set by the caller). Errors: EINVAL (p or out NULL, out->size too small),
 * ENOMEM. */
CREW_EXPORT int crew_stats_get(crew_pool *p, crew_stats *out);
/* Per-worker statistics: up to cap entries. OUT: *n, the number of workers (may exceed cap).
 * Errors: EINVAL (p or n NULL, or out NULL with cap > 0). */
CREW_EXPORT int crew_stats_threads(crew_pool *p, crew_thread_stats *out, size_t cap, size_t *n);
/* Zero the counters and histograms and restart the uptime clock. Errors: EINVAL (p NULL). */
CREW_EXPORT int crew_stats_reset(crew_pool *p);
/* Write the pool and per-worker statistics as one JSON object, for tools and plots.
 * Errors: EINVAL (p or f NULL), ENOMEM, EIO (writing failed). */
CREW_EXPORT int crew_stats_write_json(crew_pool *p, FILE *f);

/*
 * Stall diagnostics: write to f (NULL: write nothing, only count) what looks stuck, and return
 * how many findings there were (0: none), or a negative CREW_E* code. It reports
 *   - pool threads (workers and blocking threads) that have run one task for busy_ms or longer:
 *     the thread, the task's function and for how long (monitoring must be on, or automatic
 *     sizing, for tasks to be timed). A function reads "0x55d0c0a831b9 (symbol+0x0,
 *     /path/to/object+0x31b9)": its address; its symbol when the dynamic linker knows it
 *     (exported, or the program linked with -rdynamic; else left out, as for a static
 *     function); and always the executable or shared object that holds it with the offset in
 *     it, which `addr2line -f -e /path/to/object 0x31b9` turns into the function's name and
 *     source line (given debugging information), with no -rdynamic needed;
 *   - queues whose oldest task has waited queued_ms or longer: for the locked queues, from the
 *     tasks' own timestamps (monitoring on when they were submitted); for the work-stealing
 *     deques, whose tasks cannot be read safely by another thread, by comparing with the
 *     previous crew_diagnose call: a deque whose oldest task has not moved since then is
 *     reported with "at least" that long (so call it periodically, e.g. from a watchdog);
 *   - threads blocked for blocked_ms or longer: submitters waiting for room in the bounded
 *     queue, and callers asleep in crew_wait (with the group), crew_wait_all or crew_join.
 * The first line names the pool and its state. Then, not counted as findings, what waits in
 * time (crew_submit_after, crew_timer_start): the delayed tasks and timers pending, the next
 * one due, and each timer (up to 16) with its function, period, state and next run; and every
 * task graph run in progress (up to 8, then how many more): its nodes started, those ready but
 * not started (queued), and those still waiting, each with the first predecessor it waits for
 * ("not started", or "started, not finished"; a node and its predecessor by number and, when
 * named, crew_graph_name_node's name), up to 10 per list, then how many more. Safe at any
 * time from any thread, also from a task. Errors: EINVAL (p NULL), EIO (writing failed).
 */
CREW_EXPORT int crew_diagnose_ex(crew_pool *p, FILE *f, unsigned busy_ms, unsigned queued_ms,
                                 unsigned blocked_ms);
/* crew_diagnose_ex with every limit at CREW_DIAGNOSE_DEFAULT_MS. */
#define CREW_DIAGNOSE_DEFAULT_MS 1000u
CREW_EXPORT int crew_diagnose(crew_pool *p, FILE *f);

/* ---------------------------------------------------------------------------------------------
 * Task timeline ("what did my pool do?"): record, on each thread, when every task ran, when the
 * thread waited in crew_wait or crew_wait_all (running queued tasks meanwhile: "help"), and when
 * it slept, and write it as Chrome Trace Event Format JSON, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open (docs/trace.md).
 *
 * Recorded: the tasks submitted while the trace runs (one accepted earlier, or a task run by a
 * forked child, is not), each as a complete event named by its function's symbol when the
 * dynamic linker knows it (else its address), in category "task" (run from a pool thread's
 * loop) or "help" (run by a waiting thread: a caller in crew_wait or crew_wait_all, or a task
 * that waits), with its group ("slot/gen" of its crew_handle, "0/0": none) and, under the
 * work-stealing strategy, whether the worker stole it ("stolen": 1; always 0 under the other
 * strategies, and the first task a worker runs in a trace may count a steal made before it);
 * waits ("crew_wait", "crew_wait_all": the waits that did not return at once), and sleeps (a
 * worker idle, or a waiter, asleep). Dropped tasks (cancelled, expired) are not recorded.
 * Times: "ts" and "dur" in microseconds from crew_trace_start.
 *
 * Task graphs: a run started while the trace runs (crew_graph_run, every repetition of a
 * crew_graph_run_n) records each node's turn as a complete event of category "graph", named
 * after the node (crew_graph_name_node; else "node N"), with args "node" and "run" (the run's
 * number in the trace); nested in the event of the task that ran it. Each edge the node took
 * (every successor of a plain node, the chosen one of a condition node) is a pair of flow
 * events of category "graph", name "edge", one "id": "ph": "s" in the node's event, "ph": "f"
 * with "bp": "e" in the event of the successor's first turn of the same run that started after
 * the node ended, both at the middle of their event; Perfetto and chrome://tracing draw the
 * pair as an arrow. otherData's "graph_edges" counts the pairs. An edge whose successor's turn
 * was not recorded (it did not run, or its event was dropped) has no arrow.
 *
 * Cost: none while no trace runs. While one runs, tasks are timed as under monitoring (two clock
 * readings each) and each thread appends to a ring of its own, without a lock; a ring holds
 * events_per_thread events (48 bytes each), allocated at the thread's first event and
 * freed by crew_trace_stop. When a ring is full its oldest events are dropped (overwritten) and
 * counted: "dropped_events" in the JSON's otherData, and crew_trace_stop_ex's *dropped. A
 * traced graph run's node takes one event and one per edge it took.
 * One trace at a time per pool. crew_destroy of a pool that is being traced writes the trace
 * first, as crew_trace_stop would (a failure to write is not reported).
 * ------------------------------------------------------------------------------------------- */

/* Start a trace of p, to be written to path (created or truncated now, so that a bad path fails
 * here) by crew_trace_stop; each thread keeps its last 65536 events. Works on a running pool.
 * Errors: EINVAL (p or path NULL, path empty, or p already being traced), EIO (path cannot be
 * opened for writing; crew_last_error() says why), ENOTSUP (a build made with
 * CREW_MONITORING=OFF, which has no timed path for tasks), EFORKED. */
CREW_EXPORT int crew_trace_start(crew_pool *p, const char *path);
/* crew_trace_start keeping events_per_thread events per thread (0: the default, 65536; at most
 * 16777216, else EINVAL). */
CREW_EXPORT int crew_trace_start_ex(crew_pool *p, const char *path, size_t events_per_thread);
/* End the trace: stop recording (a task still running is not recorded), write the file and
 * close it, free the rings' events. Errors: EINVAL (p NULL, or p not being traced), EIO
 * (writing or closing the file failed; the trace is over all the same), EFORKED. */
CREW_EXPORT int crew_trace_stop(crew_pool *p);
/* crew_trace_stop that also returns how many events were written and how many were dropped
 * because a thread's ring was full (or its memory could not be allocated). Either pointer may
 * be NULL. Errors as for crew_trace_stop (with EIO both counts are still set). */
CREW_EXPORT int crew_trace_stop_ex(crew_pool *p, uint64_t *events, uint64_t *dropped);

/* ---------------------------------------------------------------------------------------------
 * Parallel primitives (BOLSTER runs parallel loops and filters on a pool: Jendersie et al.). The
 * caller takes part, and they nest: a primitive called from a task of the same pool works, on any
 * number of threads. grain is the smallest number of elements handed out at once; 0 picks one
 * from the range and the pool size. All return CREW_OK or an error (EINVAL for NULL pool or
 * functions or begin > end; ENOMEM from crew_parallel_reduce and crew_parallel_filter when
 * their partial results find no memory, before any element is touched); the functions' effects
 * happen-before the return. The pool's threads are offered a share of the work, never waited
 * for: on a pool that is shut down, busy or full (a bounded queue without room), or in a forked
 * child the parent's, the caller does the work itself. Under work stealing (the default) the
 * share is offered as crew_join offers its half (no group, no task counted by crew_stats, never
 * handed to on_drop), so on a paused pool the caller does the work and returns without waiting
 * for crew_resume; under the other strategies the share is helper tasks in a group of their
 * own, which a paused pool holds until crew_resume (the call returns after it), and which a
 * cancelling shutdown may drop (on_drop sees them; the loop completes all the same). The
 * functions may run on a pool thread, or on the caller as part of such an offer, so calls on
 * the same pool from inside them follow the "task" column of the table at the top
 * (crew_wait_all, crew_shutdown and crew_destroy may answer CREW_EDEADLK), from any caller.
 * ------------------------------------------------------------------------------------------- */

/* Called with a sub-range [begin, end) of the loop. */
typedef void (*crew_range_fn)(size_t begin, size_t end, void *arg);

/* Run fn over [begin, end) in chunks, in parallel. Chunks are handed out dynamically, so uneven
 * costs balance; memory use does not grow with the range. */
CREW_EXPORT int crew_parallel_for(crew_pool *p, size_t begin, size_t end, size_t grain,
                                  crew_range_fn fn, void *arg);

/* Fold [begin, end) into the accumulator acc (size bytes, as given to crew_parallel_reduce). */
typedef void (*crew_fold_fn)(size_t begin, size_t end, void *acc, void *arg);
/* acc = acc (+) other, for an associative (+). */
typedef void (*crew_combine_fn)(void *acc, const void *other, void *arg);

/*
 * Reduce [begin, end). On entry *result (size bytes) holds the identity element; every chunk
 * folds into its own copy of it, and the chunks' partial results are combined in index order,
 * so the result is deterministic (the same split for the same range, grain and pool size):
 * floating-point sums do not change from run to run. At most 65,536 chunks (a larger count
 * raises the grain). Errors: also EINVAL for size 0 or NULL result.
 */
CREW_EXPORT int crew_parallel_reduce(crew_pool *p, size_t begin, size_t end, size_t grain,
                                     void *result, size_t size, crew_fold_fn fold,
                                     crew_combine_fn combine, void *arg);

/* Keep an element? Non-zero keeps it. */
typedef int (*crew_pred_fn)(const void *elem, void *arg);

/*
 * Stable parallel filter: copy the n elements of in (elem_size bytes each) for which keep()
 * returns non-zero to out, in their input order. out must have room for n elements and must not
 * overlap in. keep() is called exactly once per element. OUT: *out_n, the number kept.
 */
CREW_EXPORT int crew_parallel_filter(crew_pool *p, const void *in, size_t n, size_t elem_size,
                                     void *out, size_t *out_n, crew_pred_fn keep, void *arg);

/* ---------------------------------------------------------------------------------------------
 * Join: spawn-and-wait without a group, for a caller that owns the frame (fork-join, divide and
 * conquer: fib, quicksort, tree walks). crew_join(p, fa, a, fb, b) runs fa(a) and fb(b),
 * possibly in parallel, and returns when both have returned: it offers fb(b) to the pool's
 * other threads, runs fa(a) itself, then takes fb(b) back and runs it too unless another thread
 * took it meanwhile; only then does it wait, running other queued tasks while it does (as
 * crew_wait does). No group, no handle, no allocation: on a worker under CREW_SCHED_STEAL an
 * offer nobody takes costs a push and a pop on the worker's own deque. Both halves' effects
 * happen-before the return.
 *
 * What it may and may not do:
 *   - Either half may call crew_join again, nested as deeply as the stack allows (each level
 *     costs the caller one frame of crew_join and its functions', nothing on the heap), and
 *     may submit, wait for groups, use lanes and the parallel primitives.
 *   - Every half runs exactly once, on some thread, before crew_join returns; none is ever
 *     dropped. A thread that took fb but may not run it (a cancelling crew_shutdown, a full
 *     queue's CREW_FULL_DROP_OLDEST, crew_pause, a worker that crew_resize stops) hands it
 *     back, and the caller runs it itself. So on_drop never sees a half, and crew_wait_all
 *     reports no loss for one.
 *   - A half belongs to no group of its own: crew_cancelled() inside it answers as on the
 *     thread that runs it. A half run by the caller (fa, and fb taken back) answers as the
 *     caller would (inside a task, for that task's group as well); fb run by another thread,
 *     and either half on a thread outside the pool, answer only for a cancelling shutdown.
 *   - A half runs as part of a task of the pool wherever it runs: on a thread outside the
 *     pool too, calls from inside a half answer as from a task in the table above
 *     (crew_wait_all, crew_shutdown and crew_destroy: CREW_EDEADLK, since crew_join still
 *     uses the pool after fa returns; a submission to a full CREW_FULL_BLOCK queue runs the
 *     tasks on the caller).
 *   - fa and fb must return normally: a C++ exception, longjmp or thread exit that leaves a
 *     half skips the rest of the call while the other half may still be queued or running
 *     with its record on the caller's stack, which corrupts memory. C++ callers use
 *     crew::join (crew.hpp), which catches an exception in either half and rethrows it after
 *     both ran.
 *   - From any thread: a task of the pool, a callback, or a thread outside the pool (which
 *     offers fb in its external submission slot, under the slot's lock). Under a strategy
 *     other than the default's work stealing, fb goes into a group of its own and the caller
 *     waits for it as crew_wait does (slower, same contract): there, on a pool that is
 *     shutting down or shut down, or whose bounded queue has no room, both halves run on the
 *     caller, one after the other; in a forked child they do under every strategy. A caller
 *     never waits for a half nobody took, so joins work on a one-thread pool as on any.
 *   - Under crew_pause, on the fast path the caller still runs its own halves (one nobody
 *     took, or one that a thread took as the pause began and handed back); it waits for
 *     crew_resume only when its offer went through a group (as crew_wait does), or when tasks
 *     it queued itself after the offer lie on top of it.
 *   - From a lane's task, the halves belong to that task: they are not tasks of the lane and
 *     may run on other threads at the same time as each other (not as the lane's other
 *     tasks, which still wait for the task that called crew_join to end).
 *   - Halves are part of the call, not tasks of their own: crew_stats does not count them, a
 *     bounded queue does not hold them, and crew_wait_all (which waits for tasks) counts a
 *     half only while another thread runs it; a draining crew_shutdown ends after every half
 *     another thread took. (Through a group, fb is a submission like crew_submit's, counted
 *     and admitted as one; a full queue then leaves both halves to the caller.)
 *   - A half must not wait for the other half by other means (a lock held across the call,
 *     a flag the other sets): nothing promises that they run at the same time.
 * Errors: EINVAL (p, fa or fb NULL; nothing runs). Otherwise CREW_OK, always after both ran.
 * ------------------------------------------------------------------------------------------- */

/* Run fa(a) and fb(b), possibly in parallel, and return when both have returned. */
CREW_EXPORT int crew_join(crew_pool *p, crew_fn fa, void *a, crew_fn fb, void *b);

#ifdef __cplusplus
}
#endif

#endif /* CREW_H */
