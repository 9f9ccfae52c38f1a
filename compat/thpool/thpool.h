/*
 * thpool.h -- the public interface of Pithikos' C-Thread-Pool ("thpool"), provided by crew.
 *
 * A drop-in replacement: a program written for C-Thread-Pool compiles against this header
 * unchanged and links with libcrew_thpool and libcrew instead of compiling thpool.c. The names
 * below are the original's, without a crew_ prefix, on purpose: relinking is all a user does.
 * Everything else in the library is static or prefixed crew_compat_. No crew type appears here.
 *
 * Written from the original's documented interface (its header comments and README), not its
 * code. Behaviour, function by function, including the choices made where the original's
 * documentation says nothing (marked "choice"):
 *
 *   thpool_init(n)    starts n worker threads (all running when it returns) and returns the pool,
 *                     or NULL on error. Choice: n < 1 or n > 4096 is an error (NULL), so is a
 *                     failure to allocate or to create a thread (nothing leaks).
 *   thpool_add_work   queues function_p(arg_p); 0 on success, -1 on error. Errors: pool or
 *                     function_p NULL (choice), no memory, and (choice) a pool being destroyed
 *                     (a job that adds work while thpool_destroy runs gets -1). Work may be
 *                     added while the pool is paused; it waits for thpool_resume.
 *                     Order (choice): jobs added from outside the pool start first-in
 *                     first-out; a job added by a running job may start before older ones
 *                     (crew's work stealing runs a thread's newest job next). Set the environment
 *                     variable CREW_SCHEDULER=shared for strict FIFO everywhere.
 *   thpool_wait       returns once every job added before and during the call has finished:
 *                     the queue is empty and no thread works. Difference: no polling; the
 *                     calling thread runs queued jobs itself while it waits (crew's helping
 *                     wait), which saves it a wake-up per batch. On a paused pool it runs
 *                     nothing and waits for the resume. Choice: called from a job of the same
 *                     pool it returns at once (it would otherwise wait for itself forever).
 *   thpool_pause      stops the threads taking jobs. Difference: a job that is already running
 *                     runs to its end (the original pauses threads mid-job with a signal); no
 *                     job starts after thpool_pause returns, except one a thread took at the
 *                     very instant of the call. Pausing a paused pool does nothing.
 *   thpool_resume     lets a paused pool run again; on a pool that is not paused it does nothing.
 *   thpool_destroy    jobs still queued are dropped without running; jobs running finish; then
 *                     the threads exit and all memory is freed. It returns only then. On a
 *                     paused pool it resumes the threads so the running jobs can finish.
 *                     Choice: called from a job of the same pool it does nothing (destroying
 *                     the pool under its own running job cannot work). The pool must not be
 *                     used after, nor during, the call (except by its running jobs, see above).
 *   thpool_num_threads_working
 *                     the number of jobs running at the moment of the call (one per working
 *                     thread), 0 for NULL (choice). A thread helping in thpool_wait counts while
 *                     it runs a job, so the figure can exceed num_threads by the waiters.
 *   A NULL pool: thpool_wait, thpool_pause, thpool_resume and thpool_destroy do nothing.
 *
 * Thread safety: every function may be called from any thread, and from inside jobs, at the same
 * time, except thpool_destroy, which must be the last call on the pool (as in the original).
 */
#ifndef _THPOOL_
#define _THPOOL_

#ifdef __cplusplus
extern "C" {
#endif

/* A pool, as the original declares it: a pointer to an opaque struct. */
typedef struct thpool_ *threadpool;

/* Create a pool of num_threads threads. NULL on error (see above). */
threadpool thpool_init(int num_threads);

/* Queue function_p(arg_p). 0 on success, -1 on error. */
int thpool_add_work(threadpool, void (*function_p)(void *), void *arg_p);

/* Wait until the queue is empty and no job runs. */
void thpool_wait(threadpool);

/* Stop starting jobs (running ones finish); jobs can still be added. */
void thpool_pause(threadpool);

/* Start jobs again after thpool_pause. */
void thpool_resume(threadpool);

/* Drop queued jobs, let running ones finish, stop the threads and free the pool. */
void thpool_destroy(threadpool);

/* How many threads are running a job now. */
int thpool_num_threads_working(threadpool);

#ifdef __cplusplus
}
#endif

#endif /* _THPOOL_ */
