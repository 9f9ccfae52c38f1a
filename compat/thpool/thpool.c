/*
 * thpool.c -- Pithikos' C-Thread-Pool API (thpool.h) over a crew pool.
 *
 * Each job travels as a small heap node holding a crew_task (queued with crew_enqueue_task, so
 * crew makes no copy of its own) and the user's function and argument. The node's task runs
 * job_run, a trampoline that counts the job as working, calls the user's function, and frees the
 * node. So the memory in use is bounded by the jobs queued and running, and every node is freed
 * by the trampoline, including the nodes of jobs that thpool_destroy drops (see there).
 *
 * Exported names are the original's (thpool_*); everything else is static.
 */
#include "thpool.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "crew.h"

/* The shared library exports only the API (the library is compiled with hidden visibility). */
#if defined(__GNUC__) || defined(__clang__)
#define THPOOL_API __attribute__((visibility("default")))
#else
#define THPOOL_API
#endif

struct thpool_ {
    crew_pool *pool;
    /* Jobs running the user's function now (thpool_num_threads_working). */
    atomic_int working;
    /* Set by thpool_destroy: new work is refused, and queued jobs are dropped (see there). */
    atomic_bool closing;
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
 * thpool_destroy called from a job of their own pool must not wait for themselves. Jobs nest (a
 * thread in thpool_wait runs queued jobs, possibly of another pool), so the slot is saved and
 * restored around each job. */
static _Thread_local struct thpool_ *current_pool;

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
}

THPOOL_API threadpool thpool_init(int num_threads) {
    if (num_threads < 1 || (unsigned)num_threads > CREW_MAX_THREADS)
        return NULL;
    struct thpool_ *tp = calloc(1, sizeof *tp);
    if (!tp)
        return NULL;
    atomic_init(&tp->working, 0);
    atomic_init(&tp->closing, false);
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = (unsigned)num_threads;
    cfg.name = "thpool"; /* workers show up as thpool-<id>-w<i> in top and debuggers */
    if (crew_create(&tp->pool, &cfg) != CREW_OK) {
        free(tp);
        return NULL;
    }
    return tp;
}

THPOOL_API int thpool_add_work(threadpool tp, void (*function_p)(void *), void *arg_p) {
    if (!tp || !function_p)
        return -1;
    if (atomic_load(&tp->closing))
        return -1;
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return -1;
    j->task.fn = job_run;
    j->task.arg = j;
    j->task.priority = 0;
    j->tp = tp;
    j->fn = function_p;
    j->arg = arg_p;
    if (crew_enqueue_task(tp->pool, &j->task, NULL) != CREW_OK) {
        /* Not accepted (shutting down, out of memory): the node is still ours. */
        free(j);
        return -1;
    }
    return 0;
}

THPOOL_API void thpool_wait(threadpool tp) {
    if (!tp || current_pool == tp)
        return;
    /* crew's helping wait: the caller runs queued jobs itself instead of sleeping until the
     * workers are done, so "add a batch, wait" costs no wake-up of the caller (compat/README.md
     * has the figures). It waits through a pause. Its errors: EDEADLK, ruled out above, and
     * ECANCELED, impossible since this layer never cancels (thpool_destroy drains). */
    (void)crew_wait_all(tp->pool);
}

THPOOL_API void thpool_pause(threadpool tp) {
    /* The only error besides NULL is a pool being destroyed, which resumes itself anyway. */
    if (tp)
        (void)crew_pause(tp->pool);
}

THPOOL_API void thpool_resume(threadpool tp) {
    if (tp)
        (void)crew_resume(tp->pool);
}

THPOOL_API void thpool_destroy(threadpool tp) {
    if (!tp || current_pool == tp)
        return;
    /* Refuse new work and make the trampoline skip queued jobs. crew_destroy then drains the
     * queue through the trampolines (freeing every node: nothing to track here), waits for the
     * jobs that are running, and joins the threads; it resumes a paused pool first. Draining
     * rather than crew's CREW_CANCEL is what frees the nodes of dropped jobs. */
    atomic_store(&tp->closing, true);
    int rc = crew_destroy(tp->pool);
    if (rc != CREW_OK) /* EDEADLK only, and current_pool already ruled that out */
        abort();
    free(tp);
}

THPOOL_API int thpool_num_threads_working(threadpool tp) {
    if (!tp)
        return 0;
    return atomic_load(&tp->working);
}
