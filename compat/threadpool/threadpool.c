/*
 * threadpool.c -- mbrossard's threadpool API (threadpool.h) over a crew pool.
 *
 * The original's fixed-size queue is crew's bounded queue: queue_capacity = queue_size with the
 * CREW_FULL_FAIL policy, so a full queue is reported at once (threadpool_queue_full) instead of
 * blocking the caller. Tasks go in with crew_submit, which keeps its own copy of the function and
 * argument, so this layer allocates nothing per task and needs no trampoline: a cancelling
 * shutdown (immediate destroy) frees the copies of the tasks it drops.
 *
 * Exported names are the original's (threadpool_*); everything else is static.
 */
#include "threadpool.h"

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

struct threadpool_t {
    crew_pool *pool;
    /* Set when threadpool_destroy begins. crew reports a full queue before a shutdown, so a task
     * adding work during the destroy would see threadpool_queue_full for ever (the queue of an
     * immediate destroy is not emptied until that very task returns): the flag makes it
     * threadpool_shutdown, as the original's users expect. */
    atomic_bool closing;
};

THREADPOOL_API threadpool_t *threadpool_create(int thread_count, int queue_size, int flags) {
    (void)flags; /* unused, as documented by the original */
    if (thread_count <= 0 || thread_count > MAX_THREADS || queue_size <= 0 ||
        queue_size > MAX_QUEUE)
        return NULL;
    threadpool_t *tp = malloc(sizeof *tp);
    if (!tp)
        return NULL;
    atomic_init(&tp->closing, false);
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = (unsigned)thread_count;
    cfg.queue_capacity = (unsigned)queue_size;
    cfg.full_policy = CREW_FULL_FAIL;
    cfg.name = "tpool"; /* workers show up as tpool-<id>-w<i> in top and debuggers */
    if (crew_create(&tp->pool, &cfg) != CREW_OK) {
        free(tp);
        return NULL;
    }
    return tp;
}

THREADPOOL_API int threadpool_add(threadpool_t *tp, void (*routine)(void *), void *arg,
                                  int flags) {
    (void)flags; /* unused, as documented by the original */
    if (!tp || !routine)
        return threadpool_invalid;
    if (atomic_load(&tp->closing))
        return threadpool_shutdown;
    switch (crew_submit(tp->pool, routine, arg, 0, NULL)) {
    case CREW_OK:
        return 0;
    case CREW_EFULL:
    case CREW_ENOMEM: /* no room for the task, in the queue or in memory: the same to a caller */
        return atomic_load(&tp->closing) ? threadpool_shutdown : threadpool_queue_full;
    case CREW_ESHUTDOWN:
        return threadpool_shutdown;
    default: /* EINVAL only, and the arguments were checked above */
        return threadpool_invalid;
    }
}

THREADPOOL_API int threadpool_destroy(threadpool_t *tp, int flags) {
    if (!tp)
        return threadpool_invalid;
    /* Graceful: run what is queued. Immediate: drop it (crew frees the dropped copies); either
     * way crew_shutdown returns once the running tasks have finished and the threads exited. */
    int how = (flags & threadpool_graceful) ? CREW_DRAIN : CREW_CANCEL;
    /* Before the shutdown, which waits for the running tasks: one of them may be adding work. */
    atomic_store(&tp->closing, true);
    int rc = crew_shutdown(tp->pool, how);
    if (rc == CREW_EDEADLK) {
        /* From a task of this pool: it cannot wait for itself. Nothing happened (crew checks
         * this first), so the pool takes work again; an add racing with this misuse may have
         * been refused with threadpool_shutdown meanwhile. */
        atomic_store(&tp->closing, false);
        return threadpool_thread_failure;
    }
    if (rc != CREW_OK)
        return threadpool_invalid;
    rc = crew_destroy(tp->pool);
    if (rc != CREW_OK) /* EDEADLK, ruled out above */
        return threadpool_thread_failure;
    free(tp);
    return 0;
}
