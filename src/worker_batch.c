/*
 * worker_batch.c -- a worker running its shared batch (work stealing: the share of an external
 * slot's backlog that its take claimed, steal_batch.h, sched_steal.c's claim_batch) from its
 * loop, one task after the other without a take and without the dispatch loop's steps between
 * them.
 *
 * DESIGN. Each task is claimed from the batch's shared index as any other thread claims it
 * (crew__steal_batch_claim: a compare-and-swap), one at a time, just before it runs: what the
 * worker has not started stays where idle workers, helping waiters and a cancelling shutdown
 * take it. A plain task (held by value, of no group) claimed while nothing is to be checked
 * runs here under the loop's frame, entered once for the run, and ends as the loop's run ends a
 * plain task (crew__end_plain: its unit back in the worker's credit at once, so that pending
 * less the queued tasks and the credit counts the tasks running, crew_stats.running, even while
 * a later task of the batch blocks). Anything else comes
 * back to the worker loop's run (worker.c's worker_run) as a taken task, with every check a
 * taken task gets: a task by address or of a group, or any task once resize has marked the
 * worker, a pause or a cancelling shutdown began (crew__held_back), or a test hooks the takes.
 * The checks of the worker's state and of the halt byte come after the claim, as after a take.
 * The run ends when the batch is empty, or when the worker's own deque holds a task (one a task
 * of the batch pushed: the loop's take runs it first, newest first, and comes back here).
 */
#include "atomic.h"
#include "pending.h"
#include "pool.h"
#include "steal_join.h"
#include "worker.h"

/* The task crew__batch_run hands back, copied (a plain thread-local: this thread's). Valid until
 * its next run: by then the task has started (crew__run copies what it needs first) or gone
 * back. */
static CREW__TLS crew_task handed;

crew_task *crew__batch_run(crew_pool *p, crew__worker *w, crew__frame *frame) {
    crew__steal_local *own = crew__steal_local_of(w);
    crew__deque *d = &own->deque;
    crew_task *t = NULL;
    frame->group = (crew_handle){0, 0};
    crew__tls_frame = frame; /* the plain tasks' frame (as crew__call_in enters it per task) */
    for (;;) {
        /* Relaxed: w's own deque, as crew__deque_take's first look. */
        int64_t bottom = crew__load_relaxed(&d->bottom);
        if (crew__load_relaxed(&d->top) < bottom)
            break;
        crew_fn fn;
        void *arg;
        uint64_t aux;
        if (!crew__steal_batch_claim(&own->batch, &fn, &arg, &aux))
            break;
        /* After the claim, as after a take (worker.c's worker_run). Relaxed: w's own state
         * (resize marks it under the lock); the halt byte, as crew__held_back reads it. */
        if (__builtin_expect(fn == NULL || aux != 0 ||
                                 crew__load_relaxed(&w->state) != CREW__W_RUNNING ||
                                 crew__halted(p) || CREW__TEST_AFTER_TAKE_SET,
                             0)) {
            t = crew__deque_task(fn, arg, aux, &handed);
            break;
        }
        frame->mark = bottom; /* crew__sched_mark: STEAL's (only w moves it) */
        crew__debug_yield();
        fn(arg);
        crew__debug_yield();
        crew__end_plain(p, w, NULL); /* its end, at once (see the file comment) */
    }
    crew__tls_frame = frame->up;
    return t;
}
