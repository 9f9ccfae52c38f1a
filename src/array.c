/*
 * array.c -- arrays of tasks queued as a few runners: the fast path of crew_enqueue_tasks for a
 * long array (submit.c decides when; array.h).
 *
 * A long array is not queued task by task. Its record holds the caller's tasks, the index of
 * the first one not yet claimed (next), and m runners: crew's own tasks of priority 0 (arrays
 * of other or mixed priorities go task by task: array.h), one per thread that can run at once
 * (crew__array_runners), queued with one push and one wake-up check. A runner claims a chunk of
 * the array with one fetch-and-add on next (guided: a share of what is left, at most CHUNK) and
 * runs its tasks in index order, until nothing is left; a runner that finds nothing left ends
 * at once. Every index is claimed once, so every task runs once; the tasks are claimed in
 * array order, and a task queued after the array by the same thread is taken after the array's
 * runners, as it was taken after the array's own entries. The tasks run in the runner's frame
 * (made for the runner by worker.c, named here after the array's group: crew__array_group),
 * renewing only its start mark per task, and end in their group and in pending once per chunk.
 *
 * The group counts the tasks, not the runners: it finishes when the array's last task ends
 * (runs, or is dropped), as a group of tasks queued one by one does, even while a runner with
 * nothing left to claim still waits in a queue (behind a busy worker's task, or on a paused
 * pool). Each runner counts in pending only, from the submission until it has run or been
 * dropped, so a closing pool's workers and crew_shutdown wait for it, and its record is freed
 * (see refs) before the pool is; a lane's runners count the same way (lane.c). A runner's task
 * still names the group's slot (crew_private_.slot), so that a waiter for the group finds it
 * among its group's tasks and runs it to its end (worker.c); once the group has finished that
 * slot may belong to a later group, whose state says nothing of the runner: the run path hands
 * runners to run_runner (worker.c) before it reads a slot, run_runner takes the group's handle
 * (recorded at the submission) from here, and a dropped runner ends in pending only (the array
 * kind's row: outside_group, kind.h). A runner that a later group's waiter or crew_cancel
 * meets under the same slot finds nothing left to claim and ends, or is dropped, with no
 * effect on any group. Runners are queued by address (never as a take's copy, so never given
 * a node): every thread that takes one sees its flag.
 *
 * What stops a runner between two tasks:
 *   - a pause, or (a worker) resize marking it: the unstarted rest of its chunk and the
 *     unclaimed rest of the array go back to the queues as separate tasks, in front and in
 *     order (the strategy's requeue, as a task taken just as a pause began goes back), and
 *     threads are woken for them; without memory to put one back, the runner runs it;
 *   - a cancelling shutdown (checked per task): the unstarted rest of its chunk and the
 *     unclaimed rest of the array are dropped, each task reported (crew__task_dropped);
 *   - a runner still queued that is dropped (a cancelling shutdown, its group's crew_cancel)
 *     drops the unclaimed rest the same way (the array kind's drop, kind.h).
 * A cancelled group's tasks are dropped one by one as they come up, as from a deque.
 * The record is freed by the last of its runners to end or be dropped (refs): never by a
 * task's end, since a runner may still be queued then; the caller's tasks (t) are read only
 * under a claim, so never after the group has finished. A thread that helps while it waits
 * runs a runner its wait does not cover whole (another group's) a turn at a time
 * (crew__array_step), queueing it again in between (worker.c), so that its wait is not held up
 * by the rest of the array.
 */
#include <stdlib.h>

#include "array.h"
#include "atomic.h"
#include "chunks.h"
#include "debug.h"
#include "group.h"
#include "kind.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "wake.h"
#include "worker.h"

#define CHUNK 64u /* most tasks a runner claims at a time */

struct crew__array {
    crew_pool *p;
    crew_task *t;  /* the caller's tasks */
    size_t n;
    crew_handle group; /* their group (slot index and generation), {0, 0} for none */
    /* The claims of the tasks' indices (chunks.h; relaxed: the tasks' fields reach a runner
     * through the queue that handed it the runner, pushed after they were written). */
    _Alignas(64) crew__chunks next;
    /* Runners not yet ended or dropped. Seq_cst decrement: the last one frees the record
     * after every other runner's last read of it. */
    _Atomic size_t refs;
    size_t m;
    bool counted; /* in crew_pool.array_unclaimed (crew__array_tasks) */
    crew_task runners[]; /* m of them */
};

#if defined(CREW_ASSERT) && CREW_ASSERT
/* The records not yet freed, for the tests (the checked library only). Relaxed: a count that
 * orders nothing. */
static _Atomic size_t arrays_live;
#define LIVE(d) crew__fetch_add_relaxed(&arrays_live, (size_t)(d))
size_t crew__test_arrays_live(void);
size_t crew__test_arrays_live(void) { return crew__load_relaxed(&arrays_live); }
#else
#define LIVE(d) ((void)0)
#endif

size_t crew__array_runners(crew_pool *p, size_t n) {
    size_t m = (size_t)crew__nworkers(p) + 1; /* the workers and a helping caller */
    return m < n ? m : n;
}

crew__array *crew__array_new(crew_pool *p, crew_task *t, size_t n, size_t m) {
    crew__array *a = malloc(sizeof *a + m * sizeof(crew_task));
    if (!a)
        return NULL;
    LIVE(1);
    a->p = p;
    a->t = t;
    a->n = n;
    a->group = (crew_handle){0, 0};
    a->m = m;
    a->counted = false;
    crew__chunks_init(&a->next);
    crew__atomic_init(&a->refs, m);
    for (size_t i = 0; i < m; i++) {
        crew_task *r = &a->runners[i];
        *r = (crew_task){.fn = crew__array_run, .arg = a, .crew_flags_ = CREW__TASK_RUNNER};
    }
    return a;
}

void crew__array_set_group(crew__array *a, crew_handle group) {
    a->group = group;
    for (size_t i = 0; i < a->m; i++)
        a->runners[i].crew_private_.slot = group.slot;
}

crew_handle crew__array_group(void *arg) { return ((crew__array *)arg)->group; }

crew_task *crew__array_tasks(crew__array *a) {
    /* Relaxed: a statistic (struct crew_pool); counted before the runners are queued. Less
     * the m runners, which the queues count until each is taken (runner_left). */
    crew__fetch_add_relaxed(&a->p->array_unclaimed, a->n - a->m);
    a->counted = true;
    return a->runners;
}

void crew__array_free(crew__array *a) {
    if (a->counted) /* relaxed: a statistic */
        crew__fetch_sub_relaxed(&a->p->array_unclaimed, a->n - a->m);
    LIVE(-1);
    free(a);
}

/* A runner left the queues (it started, or was dropped): the queues no longer count it, so
 * array_unclaimed takes back the unit crew__array_tasks took off for it. Relaxed: a
 * statistic. */
static inline void runner_left(crew__array *a) {
    crew__fetch_add_relaxed(&a->p->array_unclaimed, (size_t)1);
}

/* A runner is done with a: the last one frees it. */
static void release(crew__array *a) {
    if (crew__fetch_sub_seq_cst(&a->refs, (size_t)1) == 1) { /* seq_cst: see refs */
        LIVE(-1);
        free(a);
    }
}

/* The claim of k tasks, for crew_stats.queued. Relaxed: a statistic (struct crew_pool). */
static inline void claimed(crew__array *a, size_t k) {
    crew__fetch_sub_relaxed(&a->p->array_unclaimed, k);
}

/* Claim every index still unclaimed: the first of them (n or more if none). */
static size_t claim_rest(crew__array *a) {
    size_t rest = crew__chunks_claim_rest(&a->next, a->n);
    if (rest < a->n)
        claimed(a, a->n - rest);
    return rest;
}

static void drop_range(crew_pool *p, crew_task *t, size_t from, size_t to, bool by_shutdown) {
    for (size_t i = from; i < to; i++)
        crew__task_dropped(p, &t[i], by_shutdown);
}

/* Put t back in front of its queue, or run it without memory to do so (a pause is then late
 * for it, as for any task taken as the pause began). Returns 1 if it went back. */
static size_t put_back(crew_pool *p, crew_task *t) {
    if (crew__sched_requeue(p, t) == CREW_OK)
        return 1;
    crew__run(p, t);
    return 0;
}

/* A pause or a resize stops the runner before task `from` of its chunk [from, to): that rest
 * and the array's unclaimed rest go back to the queues as separate tasks, the last first so
 * that the first is in front; threads are woken for them. */
static __attribute__((noinline, cold)) void give_back(crew__array *a, size_t from, size_t to) {
    crew_pool *p = a->p;
    size_t rest = claim_rest(a), back = 0;
    for (size_t i = a->n; i > rest; i--)
        back += put_back(p, &a->t[i - 1]);
    for (size_t i = to; i > from; i--)
        back += put_back(p, &a->t[i - 1]);
    if (back)
        crew__wake_work(p, back, a->group.slot);
}

/* Should the runner stop before its next task? A cancelling shutdown, a pause, or resize
 * marking the worker. Relaxed: as the checks after a take (a cancelling shutdown's and a pause's
 * bits: see struct crew_pool.halt; crew__held_back, worker.c's look at its state). */
static inline bool must_stop(crew_pool *p, crew__worker *self) {
    return __builtin_expect(crew__halted(p), 0) ||
           (self && __builtin_expect(crew__load_relaxed(&self->state) != CREW__W_RUNNING, 0));
}

/* The runner stopped before task `from` of its chunk [from, to) (must_stop): under a
 * cancelling shutdown that rest and the array's unclaimed rest are dropped, each reported, as
 * a deque's tasks are when a worker comes to them; else they go back (give_back). */
static __attribute__((noinline, cold)) void stop_at(crew__array *a, size_t from, size_t to) {
    crew_pool *p = a->p;
    /* Relaxed: see struct crew_pool. */
    if (!crew__cancelling(p)) {
        give_back(a, from, to);
        return;
    }
    drop_range(p, a->t, from, to, true);
    size_t rest = claim_rest(a);
    if (rest < a->n)
        drop_range(p, a->t, rest, a->n, true);
}

/* Run the array's tasks [i, end) in the runner's own frame (the caller's crew__tls_frame, set
 * up for the runner by worker.c: the same pool and group as every task of the array): per
 * task only its start mark is renewed, and a task of a cancelled group is dropped instead. The
 * tasks that ran end in their group and in pending together, at the end: until then their own
 * units keep both above 0, so the group cannot finish before the chunk's last task has
 * returned (a dropped task ends at once, with its own unit). Returns the index it stopped at:
 * end, or the first task a cancelling shutdown, a pause or a resize kept from starting
 * (must_stop). */
static inline size_t run_chunk(crew__array *a, crew__worker *self, crew__frame *f, size_t i,
                               size_t end) {
    crew_pool *p = a->p;
    crew_task *t = a->t;
    uint32_t slot = a->group.slot;
    /* The group is open: the claim [i, end) holds unfinished tasks of it. */
    crew__slot *sl = slot ? crew__slot_at(&p->groups, slot) : NULL;
    size_t ran = 0;
    for (; i < end; i++) {
        if (must_stop(p, self))
            break;
        if (sl && __builtin_expect(crew__slot_cancelled(sl, f->group.gen), 0)) {
            crew__task_dropped(p, &t[i], false); /* its group was cancelled */
            continue;
        }
        crew_fn fn = t[i].fn; /* read before it starts: then t[i] is the caller's again */
        void *arg = t[i].arg;
        f->mark = crew__sched_mark(p, self);
        crew__debug_yield();
        fn(arg);
        crew__debug_yield();
        ran++;
    }
    if (ran)
        crew__tasks_finished(p, slot, ran, CREW__RAN);
    return i;
}

/* One claim of the runner: claims a chunk and runs it. Returns true if the runner must end
 * (nothing left, a cancelling shutdown, or a stop that disposed of the rest), false if it may
 * claim again. */
static inline bool step(crew__array *a, crew__worker *self, crew__frame *f) {
    crew_pool *p = a->p;
    size_t n = a->n;
    size_t k = crew__chunks_guided(&a->next, n, a->m, CHUNK); /* 0: nothing left */
    if (k == 0)
        return true;
    /* Relaxed: see struct crew_pool (a cancelling shutdown sets it before its sweep). */
    if (__builtin_expect(crew__cancelling(p), 0)) {
        size_t rest = claim_rest(a);
        if (rest < n)
            drop_range(p, a->t, rest, n, true);
        return true;
    }
    size_t i, end;
    if (!crew__chunks_claim(&a->next, n, k, &i, &end))
        return true;
    claimed(a, end - i);
    size_t stopped = run_chunk(a, self, f, i, end);
    if (__builtin_expect(stopped != end, 0)) {
        stop_at(a, stopped, end);
        return true;
    }
    return false;
}

void crew__array_run(void *arg) {
    crew__array *a = arg;
    crew_pool *p = a->p;
    crew__worker *self = crew__self(p);
    crew__frame *f = crew__tls_frame; /* the runner's, made by worker.c */
    crew__assert(f && f->pool == p && f->group.slot == a->group.slot &&
                 f->group.gen == a->group.gen);
    runner_left(a);
    while (!step(a, self, f))
        ;
    release(a);
}

bool crew__array_step(void *arg) {
    crew__array *a = arg;
    crew_pool *p = a->p;
    crew__frame *f = crew__tls_frame; /* the runner's, made by worker.c */
    crew__assert(f && f->pool == p && f->group.slot == a->group.slot &&
                 f->group.gen == a->group.gen);
    runner_left(a);
    crew__worker *self = crew__self(p);
    /* At least CHUNK tasks' worth of claims per turn (the guided chunks shrink to 1 near the
     * end), so that queueing it again costs little per task. */
    for (size_t from = crew__chunks_at(&a->next);;) {
        if (step(a, self, f)) {
            release(a);
            return true;
        }
        if (crew__chunks_at(&a->next) - from >= CHUNK)
            break;
    }
    /* Queued again by the caller: the queues count it again. Relaxed: a statistic. */
    crew__fetch_sub_relaxed(&p->array_unclaimed, (size_t)1);
    return false;
}

bool crew__array_end_if_done(void *arg) {
    crew__array *a = arg;
    /* A hint (chunks.h), but the claims only grow: at n or past it, nothing is left for good. */
    if (crew__chunks_at(&a->next) < a->n)
        return false;
    runner_left(a);
    release(a); /* as the runner would end if it ran: nothing to claim */
    return true;
}

/* The array kind's drop (kind.h): a queued runner of record arg was dropped (by_shutdown: a
 * cancelling shutdown; else its group's crew_cancel): the array's unclaimed tasks are dropped
 * with it, each reported as any dropped task (crew__task_dropped). The runner's own unit is no
 * loss (its tasks are counted one by one). */
static void dropped(crew_pool *p, void *arg, uint32_t slot, bool by_shutdown) {
    crew__unused(slot);
    crew__array *a = arg;
    runner_left(a);
    size_t rest = claim_rest(a);
    if (rest < a->n)
        drop_range(p, a->t, rest, a->n, by_shutdown);
    release(a);
}

const crew__kind crew__array_kind = {
    .fn = crew__array_run,
    .name = "array runner",
    .not_lost = true,     /* its tasks are counted one by one */
    .outside_group = true, /* the group counts its tasks, not it: see the top of this file */
    .dropped = dropped,
};
