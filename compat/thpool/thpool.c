/*
 * thpool.c -- Pithikos' C-Thread-Pool API (thpool.h) over a crew pool.
 *
 * Each job travels as a small heap node holding a crew_task (queued with crew_enqueue_task, so
 * crew makes no copy of its own) and the user's function and argument. The node's task runs
 * job_run, a trampoline that counts the job as working, calls the user's function, frees the
 * node and counts the job as done. So the memory in use is bounded by the jobs queued and
 * running, and every node is freed by the trampoline, including the nodes of jobs that
 * thpool_destroy drops (see there).
 *
 * Jobs run on the pool's worker threads only, never on a thread calling thpool_wait: a pool of
 * n threads runs at most n jobs at once, as the original does (programs use a 1-thread pool to
 * serialise access to something that is not thread-safe). That is why thpool_wait does not use
 * crew_wait_all, whose caller helps by running queued jobs: this layer counts its own jobs
 * (pending) and thpool_wait sleeps on its own condition variable until the count is 0.
 *
 * Exported names are the original's (thpool_*); everything else is static.
 */
#include "thpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "crew.h"

/* The header maps thpool_init to thpool_init_debug for programs compiled with THPOOL_DEBUG;
 * this file defines both. Compiling the library itself with THPOOL_DEBUG makes thpool_init
 * print too, as compiling the original's thpool.c with it does. */
#undef thpool_init
#ifdef THPOOL_DEBUG
#define LIBRARY_DEBUG true
#else
#define LIBRARY_DEBUG false
#endif

/* The shared library exports only the API (the library is compiled with hidden visibility). */
#if defined(__GNUC__) || defined(__clang__)
#define THPOOL_API __attribute__((visibility("default")))
#else
#define THPOOL_API
#endif

THPOOL_API threadpool thpool_init(int num_threads);
THPOOL_API threadpool thpool_init_debug(int num_threads);

struct thpool_ {
    crew_pool *pool;
    /* Threads that run jobs: num_threads, or 0 for the original's pool without threads (a
     * count <= 0), whose crew pool stays paused (its one worker never runs a job). */
    int threads;
    /* Jobs running the user's function now (thpool_num_threads_working). */
    atomic_int working;
    /* Set by thpool_destroy: new work is refused, and queued jobs are dropped (see there). */
    atomic_bool closing;
    /* Jobs added and not yet finished or dropped; thpool_wait waits for 0 on idle. The job that
     * brings it to 0 takes idle_lock to broadcast, so a waiter that saw it nonzero under the
     * lock cannot miss the wake-up. */
    atomic_long pending;
    pthread_mutex_t idle_lock;
    pthread_cond_t idle;
};

/* One job. task must stay first-class crew memory until job_run starts (crew.h, "Memory of a
 * task"); from then on the node is ours to free. */
struct job {
    crew_task task;
    struct thpool_ *tp;
    void (*fn)(void *);
    void *arg;
};

/* The pool whose job the calling thread is running (NULL outside jobs): thpool_wait and
 * thpool_destroy called from a job of their own pool must not wait for themselves. A job may
 * run a job of another pool only through that pool's threads, but the slot is saved and
 * restored around each job anyway. */
static _Thread_local struct thpool_ *current_pool;

/* A job finished or was dropped: the last one wakes the waiters. */
static void job_done(struct thpool_ *tp) {
    if (atomic_fetch_sub(&tp->pending, 1) == 1) {
        pthread_mutex_lock(&tp->idle_lock);
        pthread_cond_broadcast(&tp->idle);
        pthread_mutex_unlock(&tp->idle_lock);
    }
}

static void job_run(void *arg) {
    struct job *j = arg;
    struct thpool_ *tp = j->tp;
    void (*fn)(void *) = j->fn;
    void *fn_arg = j->arg;
    /* crew no longer touches the task (its function has started): free the node first, so a job
     * that never returns (exits the thread, say) leaks nothing of ours. */
    free(j);
    /* A pool being destroyed drops its queued jobs: crew drains them through here and we skip
     * the user's function. Relaxed would do for the flag alone; seq_cst keeps it simple. */
    if (!atomic_load(&tp->closing)) {
        struct thpool_ *outer = current_pool;
        current_pool = tp;
        atomic_fetch_add(&tp->working, 1);
        fn(fn_arg);
        atomic_fetch_sub(&tp->working, 1);
        current_pool = outer;
    }
    /* Before returning: thpool_destroy frees tp only after every job_run has returned. */
    job_done(tp);
}

static threadpool init(int num_threads, bool debug) {
    /* The original treats a negative count as 0, and makes a pool without threads: work can be
     * added but never runs (thpool_wait then waits for ever), thpool_destroy frees it. */
    if (num_threads < 0)
        num_threads = 0;
    if ((unsigned)num_threads > CREW_MAX_THREADS)
        return NULL;
    struct thpool_ *tp = calloc(1, sizeof *tp);
    if (!tp) {
        fprintf(stderr, "thpool_init(): Could not allocate memory for thread pool\n");
        return NULL;
    }
    tp->threads = num_threads;
    atomic_init(&tp->working, 0);
    atomic_init(&tp->closing, false);
    atomic_init(&tp->pending, 0);
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
    cfg.threads = num_threads > 0 ? (unsigned)num_threads : 1u;
    cfg.name = "thpool"; /* workers show up as thpool-<id>-w<i> in top and debuggers */
    if (crew_create(&tp->pool, &cfg) != CREW_OK) {
        fprintf(stderr, "thpool_init(): Could not allocate memory for threads\n");
        pthread_cond_destroy(&tp->idle);
        pthread_mutex_destroy(&tp->idle_lock);
        free(tp);
        return NULL;
    }
    if (num_threads == 0)
        (void)crew_pause(tp->pool); /* nothing is queued yet, so nothing ever runs */
    /* The original's THPOOL_DEBUG build prints one line per thread it creates. */
    for (int n = 0; debug && n < num_threads; n++)
        printf("THPOOL_DEBUG: Created thread %d in pool \n", n);
    return tp;
}

THPOOL_API threadpool thpool_init(int num_threads) { return init(num_threads, LIBRARY_DEBUG); }

THPOOL_API threadpool thpool_init_debug(int num_threads) { return init(num_threads, true); }

THPOOL_API int thpool_add_work(threadpool tp, void (*function_p)(void *), void *arg_p) {
    if (!tp || !function_p)
        return -1;
    if (atomic_load(&tp->closing))
        return -1;
    struct job *j = calloc(1, sizeof *j);
    if (!j) {
        fprintf(stderr, "thpool_add_work(): Could not allocate memory for new job\n");
        return -1;
    }
    j->task.fn = job_run;
    j->task.arg = j;
    j->task.priority = 0;
    j->tp = tp;
    j->fn = function_p;
    j->arg = arg_p;
    /* Counted before it can run (and finish), so a concurrent thpool_wait sees it. */
    atomic_fetch_add(&tp->pending, 1);
    if (crew_enqueue_task(tp->pool, &j->task, NULL) != CREW_OK) {
        /* Not accepted (shutting down, out of memory): the node is still ours. */
        free(j);
        job_done(tp);
        return -1;
    }
    return 0;
}

THPOOL_API void thpool_wait(threadpool tp) {
    if (!tp || current_pool == tp)
        return;
    /* The caller only sleeps: the pool's threads run the jobs (see the top of this file). A
     * paused pool keeps it waiting until thpool_resume, as in the original. */
    pthread_mutex_lock(&tp->idle_lock);
    while (atomic_load(&tp->pending) != 0)
        pthread_cond_wait(&tp->idle, &tp->idle_lock);
    pthread_mutex_unlock(&tp->idle_lock);
}

THPOOL_API void thpool_pause(threadpool tp) {
    /* The only error besides NULL is a pool being destroyed, which resumes itself anyway. */
    if (tp && tp->threads > 0)
        (void)crew_pause(tp->pool);
}

THPOOL_API void thpool_resume(threadpool tp) {
    if (tp && tp->threads > 0) /* a pool without threads stays without */
        (void)crew_resume(tp->pool);
}

THPOOL_API void thpool_destroy(threadpool tp) {
    if (!tp || current_pool == tp)
        return;
    /* Refuse new work and make the trampoline skip queued jobs. crew_destroy then drains the
     * queue through the trampolines (freeing every node: nothing to track here; the thread
     * calling it may run some of them, which only free their nodes), waits for the jobs that are
     * running, and joins the threads; it resumes a paused pool first. Draining rather than crew's
     * CREW_CANCEL is what frees the nodes of dropped jobs. */
    atomic_store(&tp->closing, true);
    int rc = crew_destroy(tp->pool);
    if (rc != CREW_OK) /* EDEADLK only, and current_pool already ruled that out */
        abort();
    pthread_cond_destroy(&tp->idle);
    pthread_mutex_destroy(&tp->idle_lock);
    free(tp);
}

THPOOL_API int thpool_num_threads_working(threadpool tp) {
    if (!tp)
        return 0;
    return atomic_load(&tp->working);
}
