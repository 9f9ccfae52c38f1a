/*
 * threadpool.c -- mbrossard's threadpool API (threadpool.h) over a crew pool.
 *
 * The original's fixed-size queue is crew's bounded queue: queue_capacity = queue_size with the
 * CREW_FULL_FAIL policy, so a full queue is reported at once (threadpool_queue_full) instead of
 * blocking the caller.
 *
 * Tasks run on the pool's worker threads only, as in the original: a pool of n threads never
 * runs more than n tasks at once, a graceful threadpool_destroy included. crew_shutdown's caller
 * helps drain the queue, so the graceful destroy first waits, without helping, until this
 * layer's count of unfinished tasks (pending) is 0. Counting needs a trampoline, so each task
 * travels as a small heap node holding a crew_task (queued with crew_enqueue_task, so crew makes
 * no copy of its own) and the user's function and argument; the trampoline frees the node.
 * An immediate destroy drains the queue through the trampolines too, which then skip the user's
 * function: that frees the nodes of the tasks it drops.
 *
 * threadpool_add racing threadpool_destroy. The original's add reads the pool under its mutex,
 * which its destroy takes again before freeing the pool, so an add made while the destroy runs
 * (one that returns threadpool_shutdown, say) is ordered before the free. Here each add counts
 * itself in `adding` for its whole call; the destroy sets ADD_CLOSED in the same word, and from
 * then on an add leaves under idle_lock (the last one out broadcasts idle), so the destroy,
 * waiting under idle_lock for the count to reach 0 right before it frees the pool, frees it
 * after every add that came in time has left. While the pool is open an add leaves with one
 * compare-and-swap, no lock. The destroy waits for the adds in flight before it waits for the
 * pending tasks too, so that no task can be accepted after it has seen the queue empty.
 *
 * Exported names are the original's (threadpool_*); everything else is static.
 */
#include "threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "crew.h"

/* The shared library exports only the API (the library is compiled with hidden visibility). */
#if defined(__GNUC__) || defined(__clang__)
#define THREADPOOL_API __attribute__((visibility("default")))
#else
#define THREADPOOL_API
#endif

enum { OPEN, GRACEFUL, IMMEDIATE }; /* threadpool_t.closing */

/* threadpool_t.adding: the adds in progress (the low bits), and ADD_CLOSED once the destroy has
 * begun (see the top of this file). */
#define ADD_CLOSED (1ul << (sizeof(unsigned long) * 8 - 1))

struct threadpool_t {
    crew_pool *pool;
    /* Set when threadpool_destroy begins: adds get threadpool_shutdown from then on (crew would
     * report a full queue first), and IMMEDIATE makes the trampoline skip queued tasks. */
    atomic_int closing;
    /* Tasks added and not yet finished or dropped; a graceful destroy waits for 0 on idle. The
     * task that brings it to 0 takes idle_lock to broadcast, so a waiter that saw it nonzero
     * under the lock cannot miss the wake-up. */
    atomic_long pending;
    /* threadpool_add calls in progress, and ADD_CLOSED (see the top of this file). Once
     * ADD_CLOSED is set, it changes only under idle_lock. */
    atomic_ulong adding;
    pthread_mutex_t idle_lock;
    pthread_cond_t idle; /* pending reached 0, or adding's count did after ADD_CLOSED */
};

/* One task. task must stay first-class crew memory until task_run starts (crew.h, "Memory of a
 * task"); from then on the node is ours to free. */
struct node {
    crew_task task;
    threadpool_t *tp;
    void (*fn)(void *);
    void *arg;
};

/* The pool whose task the calling thread is running (NULL outside tasks): threadpool_destroy from
 * a task of its own pool must not wait for (nor join) itself. Saved and restored around each
 * task, in case a pool's task runs inside another's. */
static _Thread_local threadpool_t *current_pool;

static void task_done(threadpool_t *tp) {
    if (atomic_fetch_sub(&tp->pending, 1) == 1) {
        pthread_mutex_lock(&tp->idle_lock);
        pthread_cond_broadcast(&tp->idle);
        pthread_mutex_unlock(&tp->idle_lock);
    }
}

static void task_run(void *arg) {
    struct node *n = arg;
    threadpool_t *tp = n->tp;
    void (*fn)(void *) = n->fn;
    void *fn_arg = n->arg;
    free(n); /* crew no longer reads the task once its function has started */
    if (atomic_load(&tp->closing) != IMMEDIATE) {
        threadpool_t *outer = current_pool;
        current_pool = tp;
        fn(fn_arg);
        current_pool = outer;
    }
    /* Before returning: threadpool_destroy frees tp only after every task_run has returned. */
    task_done(tp);
}

THREADPOOL_API threadpool_t *threadpool_create(int thread_count, int queue_size, int flags) {
    (void)flags; /* unused, as documented by the original */
    /* The original checks MAX_THREADS and MAX_QUEUE of the header it is compiled with, which
     * is the program's own copy (caio raises MAX_THREADS to 128). A library compiled once cannot
     * see that copy, so it refuses only what crew itself cannot do: the program's own limits are
     * its to check (see threadpool.h). */
    if (thread_count <= 0 || (unsigned)thread_count > CREW_MAX_THREADS || queue_size <= 0)
        return NULL;
    threadpool_t *tp = malloc(sizeof *tp);
    if (!tp)
        return NULL;
    atomic_init(&tp->closing, OPEN);
    atomic_init(&tp->pending, 0);
    atomic_init(&tp->adding, 0);
    if (pthread_mutex_init(&tp->idle_lock, NULL) != 0) {
        free(tp);
        return NULL;
    }
    if (pthread_cond_init(&tp->idle, NULL) != 0) {
        pthread_mutex_destroy(&tp->idle_lock);
        free(tp);
        return NULL;
    }
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = (unsigned)thread_count;
    cfg.queue_capacity = (unsigned)queue_size;
    cfg.full_policy = CREW_FULL_FAIL;
    cfg.name = "tpool"; /* workers show up as tpool-<id>-w<i> in top and debuggers */
    if (crew_create(&tp->pool, &cfg) != CREW_OK) {
        pthread_cond_destroy(&tp->idle);
        pthread_mutex_destroy(&tp->idle_lock);
        free(tp);
        return NULL;
    }
    return tp;
}

/* An add ends: count it out of tp->adding. While the pool is open, with a compare-and-swap;
 * once the destroy has set ADD_CLOSED, under idle_lock, whose unlock is this call's last touch
 * of tp (the destroy frees tp only after it has seen the count at 0 under that lock). Returns
 * rc. */
static int add_leave(threadpool_t *tp, int rc) {
    unsigned long cur = atomic_load(&tp->adding);
    while (!(cur & ADD_CLOSED))
        if (atomic_compare_exchange_weak(&tp->adding, &cur, cur - 1))
            return rc;
    pthread_mutex_lock(&tp->idle_lock);
    if (atomic_fetch_sub(&tp->adding, 1) == (ADD_CLOSED | 1))
        pthread_cond_broadcast(&tp->idle);
    pthread_mutex_unlock(&tp->idle_lock);
    return rc;
}

/* threadpool_add once counted in tp->adding. */
static int add_counted(threadpool_t *tp, void (*routine)(void *), void *arg) {
    if (atomic_load(&tp->closing) != OPEN)
        return threadpool_shutdown;
    struct node *n = calloc(1, sizeof *n);
    if (!n) /* no room for the task, in memory rather than in the queue: the same to a caller */
        return threadpool_queue_full;
    n->task.fn = task_run;
    n->task.arg = n;
    n->tp = tp;
    n->fn = routine;
    n->arg = arg;
    /* Counted before it can run (and finish), so a concurrent graceful destroy sees it. */
    atomic_fetch_add(&tp->pending, 1);
    int rc = crew_enqueue_task(tp->pool, &n->task, NULL);
    if (rc == CREW_OK)
        return 0;
    free(n); /* not accepted: the node is still ours */
    task_done(tp);
    switch (rc) {
    case CREW_EFULL:
    case CREW_ENOMEM:
        return atomic_load(&tp->closing) != OPEN ? threadpool_shutdown : threadpool_queue_full;
    case CREW_ESHUTDOWN:
        return threadpool_shutdown;
    default: /* EINVAL only, and the arguments were checked above */
        return threadpool_invalid;
    }
}

THREADPOOL_API int threadpool_add(threadpool_t *tp, void (*routine)(void *), void *arg,
                                  int flags) {
    (void)flags; /* unused, as documented by the original */
    if (!tp || !routine)
        return threadpool_invalid;
    atomic_fetch_add(&tp->adding, 1);
    return add_leave(tp, add_counted(tp, routine, arg));
}

/* The destroy waits, under idle_lock, until no add is in progress and, if graceful, no task is
 * pending. ADD_CLOSED is set: adds count themselves out under this lock. */
static void wait_quiet(threadpool_t *tp, bool for_tasks) {
    pthread_mutex_lock(&tp->idle_lock);
    while (atomic_load(&tp->adding) != ADD_CLOSED ||
           (for_tasks && atomic_load(&tp->pending) != 0))
        pthread_cond_wait(&tp->idle, &tp->idle_lock);
    pthread_mutex_unlock(&tp->idle_lock);
}

THREADPOOL_API int threadpool_destroy(threadpool_t *tp, int flags) {
    if (!tp)
        return threadpool_invalid;
    if (current_pool == tp) /* a task of this pool cannot join its own thread: nothing happens */
        return threadpool_thread_failure;
    bool graceful = (flags & threadpool_graceful) != 0;
    /* Before waiting: a running task may be adding work. */
    atomic_store(&tp->closing, graceful ? GRACEFUL : IMMEDIATE);
    pthread_mutex_lock(&tp->idle_lock);
    atomic_fetch_or(&tp->adding, ADD_CLOSED); /* from now on adds leave under idle_lock */
    pthread_mutex_unlock(&tp->idle_lock);
    /* The adds in flight finish (accepted or refused), then, if graceful, the workers run what
     * is queued; this thread only waits (see the top of this file). */
    wait_quiet(tp, graceful);
    /* Graceful: nothing is left to run. Immediate: the queued tasks drain through task_run,
     * which skips them (the caller may run some of those, which only free their nodes). Either
     * way it returns once the running tasks have finished and the threads exited. */
    int rc = crew_destroy(tp->pool);
    if (rc != CREW_OK) /* EDEADLK, ruled out above */
        return threadpool_thread_failure;
    wait_quiet(tp, false); /* the adds that came meanwhile (refused) have left */
    pthread_cond_destroy(&tp->idle);
    pthread_mutex_destroy(&tp->idle_lock);
    free(tp);
    return 0;
}
