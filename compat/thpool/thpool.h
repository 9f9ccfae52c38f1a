/*
 * thpool.h -- the public interface of Pithikos' C-Thread-Pool ("thpool"), provided by crew.
 *
 * A drop-in replacement: a program written for C-Thread-Pool compiles against this header
 * unchanged and links with libcrew_thpool and libcrew instead of compiling thpool.c. The names
 * below are the original's, without a crew_ prefix, on purpose: relinking is all a user does.
 * Everything else in the library is static or prefixed crew_compat_. No crew type appears here.
 *
 * Written from the original's documented interface (its header comments and README), then
 * checked against its code and its own test suite (compat/README.md says how to run that suite
 * against this library). Behaviour, function by function; "choice" marks what the original
 * leaves undefined (it would crash or hang) and "difference" what a program can tell apart:
 *
 *   thpool_init(n)    starts n worker threads (all running when it returns) and returns the pool,
 *                     or NULL on error. As in the original, n <= 0 gives a pool without threads:
 *                     work can be added but never runs (thpool_wait then waits for ever), and
 *                     thpool_destroy frees it. Difference: n > 4096 is an error (NULL), so is a
 *                     failure to allocate or to create a thread (nothing leaks, and the
 *                     original's message goes to stderr), where the original would hang.
 *                     Compiled with THPOOL_DEBUG (-DTHPOOL_DEBUG, as the original's tests do),
 *                     it prints the original's "THPOOL_DEBUG: Created thread N in pool" line per
 *                     thread on stdout: the macro below makes the program call thpool_init_debug.
 *   thpool_add_work   queues function_p(arg_p); 0 on success, -1 on error. Errors: pool or
 *                     function_p NULL (choice), no memory (with the original's message on
 *                     stderr), and (choice) a pool being destroyed (a job that adds work while
 *                     thpool_destroy runs gets -1). Work may be added while the pool is paused;
 *                     it waits for thpool_resume. Order (choice): jobs added from outside the
 *                     pool start first-in first-out; a job added by a running job may start
 *                     before older ones (crew's work stealing runs a thread's newest job next).
 *                     Set the environment variable CREW_SCHEDULER=shared for strict FIFO
 *                     everywhere.
 *   thpool_wait       returns once every job added before and during the call has finished:
 *                     the queue is empty and no thread works. The calling thread only waits
 *                     (it sleeps, without the original's polling): jobs run on the pool's
 *                     threads alone, so a pool of n threads never runs more than n jobs at once.
 *                     On a paused pool it waits for the resume. Choice: called from a job of the
 *                     same pool it returns at once (the original waits for itself for ever).
 *   thpool_pause      stops the threads taking jobs. Difference: a job that is already running
 *                     runs to its end (the original pauses threads mid-job with a signal); no
 *                     job starts after thpool_pause returns, except one a thread took at the
 *                     very instant of the call. Pausing a paused pool does nothing.
 *   thpool_resume     lets a paused pool run again; on a pool that is not paused it does nothing.
 *                     Difference: it resumes this pool only (the original's flag is global).
 *   thpool_destroy    jobs still queued are dropped without running; jobs running finish; then
 *                     the threads exit and all memory is freed. It returns only then. On a
 *                     paused pool it resumes the threads so the running jobs can finish.
 *                     Choice: called from a job of the same pool it does nothing (destroying
 *                     the pool under its own running job cannot work). The pool must not be
 *                     used after, nor during, the call (except by its running jobs, see above).
 *   thpool_num_threads_working
 *                     the number of jobs running at the moment of the call (one per working
 *                     thread), never more than the pool's threads; 0 for NULL (choice).
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

/* The original prints its debug lines when it is compiled with THPOOL_DEBUG, which programs pass
 * on their own command line together with thpool.c. This library is compiled already, so a
 * program compiled with THPOOL_DEBUG calls the variant that prints them. */
#ifdef THPOOL_DEBUG
#define thpool_init thpool_init_debug
#endif

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
