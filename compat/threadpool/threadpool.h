/*
 * threadpool.h -- the public interface of Mathias Brossard's threadpool, provided by crew.
 *
 * A drop-in replacement: a program written for mbrossard/threadpool compiles against this header
 * unchanged and links with libcrew_threadpool and libcrew instead of compiling threadpool.c. The
 * names below are the original's, without a crew_ prefix, on purpose: relinking is all a user
 * does. Everything else in the library is static or prefixed crew_compat_. No crew type appears
 * here.
 *
 * Written from the original's documented interface (its header comments and README), then
 * checked against its code and its own tests (compat/README.md says how to run them against this
 * library). Behaviour, including the choices made where the original leaves it undefined
 * ("choice"):
 *
 *   threadpool_create(thread_count, queue_size, flags)
 *       starts thread_count worker threads (all of them, before it returns) with a queue of
 *       queue_size tasks, and returns the pool, or NULL if thread_count is outside
 *       1..CREW_MAX_THREADS (4096), queue_size is 0 or less, or memory or a thread could not be
 *       had (nothing leaks). flags is unused, as in the original. Choice: MAX_THREADS and
 *       MAX_QUEUE are not checked by the library, since the original checks the values of the
 *       header it is compiled with, which is the program's own copy (some raise MAX_THREADS):
 *       a program that wants them enforced checks them before the call.
 *       The queue holds exactly queue_size tasks waiting to start (tasks running are not
 *       counted), as in the original's code (an old README of it says one slot is reserved to
 *       tell a full queue; none is, there or here).
 *   threadpool_add(pool, routine, arg, flags)
 *       queues routine(arg); returns 0, or:
 *         threadpool_invalid     pool or routine NULL
 *         threadpool_queue_full  queue_size tasks are waiting already (it never blocks); also,
 *                                choice, when memory for the task could not be had (try again
 *                                later, as for a full queue)
 *         threadpool_shutdown    threadpool_destroy has begun (a task adding work while the pool
 *                                is being destroyed gets this)
 *       flags is unused, as in the original. Order: tasks added from outside the pool start
 *       first-in first-out; a task added by a running task may start before older ones (crew's
 *       work stealing runs a thread's newest task next). Set the environment variable
 *       CREW_SCHEDULER=shared for strict FIFO everywhere.
 *   threadpool_destroy(pool, flags)
 *       stops accepting tasks, then with threadpool_graceful in flags runs every queued task;
 *       without it (flags 0) drops the queued tasks unrun. Either way the running tasks finish,
 *       the threads exit and everything is freed before it returns 0. The thread calling it
 *       only waits: the pool's threads run the queued tasks, so a pool of n threads never runs
 *       more than n tasks at once, during a graceful destroy too.
 *       Errors: threadpool_invalid (pool NULL; nothing happens); choice: threadpool_thread_failure
 *       when called from a task of the same pool (the pool cannot join the thread running the
 *       call; nothing happens and the pool stays usable). Bits of flags other than
 *       threadpool_graceful are ignored. It must be the last call on the pool from outside its
 *       tasks: a second threadpool_destroy, or any call after it, uses freed memory (as in the
 *       original).
 *
 * threadpool_lock_failure is never returned (crew's locks do not fail); it is kept so that code
 * testing for it compiles.
 *
 * Thread safety: threadpool_add may be called from any thread and from inside tasks, at the same
 * time; threadpool_destroy must be the last call on a pool. An add made while threadpool_destroy
 * runs returns threadpool_shutdown (or is accepted, if it began before) and is race-free: the
 * destroy frees the pool only after it has left, as the original's mutex orders the two.
 */
#ifndef _THREADPOOL_H_
#define _THREADPOOL_H_

#ifdef __cplusplus
extern "C" {
#endif

/* The original's limits on the thread count and queue size, kept for programs that use them
 * (threadpool_create itself accepts up to CREW_MAX_THREADS threads and any positive queue
 * size: see above). */
#define MAX_THREADS 64
#define MAX_QUEUE 65536

typedef struct threadpool_t threadpool_t;

/* Error codes: threadpool_add and threadpool_destroy return 0 or one of these. */
typedef enum {
    threadpool_invalid = -1,
    threadpool_lock_failure = -2,
    threadpool_queue_full = -3,
    threadpool_shutdown = -4,
    threadpool_thread_failure = -5
} threadpool_error_t;

/* Flags of threadpool_destroy. */
typedef enum {
    threadpool_graceful = 1 /* run the queued tasks before stopping */
} threadpool_destroy_flags_t;

/* Create a pool of thread_count threads and a queue of queue_size tasks; NULL on error. */
threadpool_t *threadpool_create(int thread_count, int queue_size, int flags);

/* Queue routine(arg): 0 or a threadpool_error_t. */
int threadpool_add(threadpool_t *pool, void (*routine)(void *), void *arg, int flags);

/* Stop and free the pool (flags: 0 or threadpool_graceful): 0 or a threadpool_error_t. */
int threadpool_destroy(threadpool_t *pool, int flags);

#ifdef __cplusplus
}
#endif

#endif /* _THREADPOOL_H_ */
