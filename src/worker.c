/*
 * worker.c -- the worker loop, running and finishing a task.
 *
 * DESIGN. Workers find work themselves: each loops taking a task from the scheduler (schedule.c),
 * running it, and counting it finished, with no pool-wide lock on the way. A worker that finds
 * nothing polls a while (crew_config.spin), then sleeps (on its own futex word, ec.h).
 *
 * Sleeping without losing a wake-up, and without a system call while the pool is busy, is the
 * eventcount's (ec.h): a worker sleeps through crew__ec_wait on pool->work (under pool->lock),
 * whose last look for work is this file's last_look; whoever makes work visible (a queue's
 * length, a deque's bottom) notifies through wake.c (crew__wake_work), which takes the lock
 * only if someone sleeps. A task's end is counted by pending.c's crew__tasks_finished (a group
 * ended: its slot's waiters, and only they, are woken); the other notifiers are wake.c's
 * (queued tasks, a quiet pool, state changes) and bounded.c's (a place in the bounded queue).
 * A busy pool reads the counts and finds 0.
 *
 * A worker leaves its loop when resize has marked it, or when the pool is closing and no
 * accepted task is left anywhere (so every worker helps drain a closing pool). A worker
 * re-checks its state after each take and puts the task back if resize marked it meanwhile,
 * so "after crew_resize returns, at most N workers start a task" holds without a lock on the
 * hot path. On leaving it hands its queued tasks to the others (the strategy's worker_exit).
 *
 * The thread-local frame chain records which pools' tasks run on this thread and how deeply
 * they are nested, for EDEADLK checks and the helping depth bound in wait.c.
 */
#include <stdio.h>

#include "array.h"
#include "atomic.h"
#include "autosize.h"
#include "debug.h"
#include "dispatch.h"
#include "kind.h"
#include "nodes.h"
#include "pending.h"
#include "pool.h"
#include "run_plain.h"
#include "sched_calls.h"
#include "idle.h"
#include "stats.h"
#include "timer.h"
#include "trace.h"
#include "wait.h"
#include "wake.h"
#include "worker.h"

CREW__TLS crew__frame *crew__tls_frame;
CREW__TLS crew__worker *crew__tls_worker;

bool crew__in_task_of(const crew_pool *p) {
    for (const crew__frame *f = crew__tls_frame; f; f = f->up)
        if (f->pool == p)
            return true;
    return false;
}

bool crew__in_group(const crew_pool *p, crew_handle g) {
    for (const crew__frame *f = crew__tls_frame; f; f = f->up)
        if (f->pool == p && f->group.slot == crew__slot_index(g.slot) && f->group.gen == g.gen)
            return true;
    return false;
}

/* The calling thread's innermost task, as the frame chain records it (crew.h). */
crew_handle crew_current_group(void) {
    const crew__frame *f = crew__tls_frame;
    if (!f || f->group.slot == 0)
        return CREW_HANDLE_NONE;
    return crew__handle_public(&f->pool->groups, f->group);
}

int crew_cancelled(void) {
    const crew__frame *f = crew__tls_frame;
    if (!f)
        return 0;
    crew_pool *p = f->pool;
    if (crew__cancelling(p)) /* relaxed: see crew_pool */
        return 1;
    return f->group.slot != 0 &&
           crew__slot_cancelled(crew__slot_at(&p->groups, f->group.slot), f->group.gen);
}

/* A task of a cancelled group reached a thread: it is dropped instead of run, wherever it was
 * queued (a deque cannot give up a task from its middle, so crew_cancel leaves those for here).
 * Out of line: cancelling is rare. */
static __attribute__((noinline, cold)) void drop_cancelled(crew_pool *p, crew_task *t) {
    crew__task_dropped(p, t, false);
}

static inline __attribute__((always_inline)) bool call(crew_pool *p, crew__worker *self,
                                                       crew_task *t, uint32_t *slot_out) {
    return crew__call_in(p, self, t, slot_out, NULL);
}

/* A task of run_timed's whose group was cancelled: its place in the bounded queue is already
 * given back. */
static void drop_timed(crew_pool *p, crew_task *t) {
    t->crew_flags_ &= ~CREW__TASK_BOUNDED;
    drop_cancelled(p, t);
}

/* crew__run for a timed task (monitoring, autosize or a trace), one that held a place in the
 * bounded queue or one with a start-by time: the same, between two clock readings. Kept out of
 * line so that other tasks pay only the test of their flags. Under a trace (trace.h) the task
 * is recorded on this thread's ring; its fields are read for that before it runs. */
static __attribute__((noinline, cold)) void run_timed(crew_pool *p, crew_task *t) {
    uint32_t flags = t->crew_flags_;
    if ((flags & CREW__TASK_DEADLINE) && crew__now_ns() > ((crew__node *)t)->start_by) {
        crew__task_expired(p, t); /* too late to start: dropped, group told */
        return;
    }
    if (flags & CREW__TASK_BOUNDED)
        crew__bounded_release(p); /* it starts: its place is free */
    uint32_t slot;
    if (!(flags & CREW__TASK_STAMPED)) {
        if (call(p, crew__self(p), t, &slot))
            crew__tasks_finished(p, slot, 1, CREW__RAN);
        else
            drop_timed(p, t);
        return;
    }
    uint64_t submitted = crew__task_submitted_ns(t);
    uint64_t accepted = submitted + crew__task_response_ns(t);
    crew__trace_task tt;
    bool traced = __builtin_expect(crew__tracing(p), 0) && crew__trace_task_begin(p, t, &tt);
    uint64_t started = crew__now_ns();
    /* crew_diagnose sees the outermost task a pool thread runs (not those it helps with while
     * that task waits). */
    crew__busy *busy = crew__tls_busy;
    if (busy && (busy->pool != p || crew__load_relaxed(&busy->fn) != 0)) /* relaxed: our own */
        busy = NULL;
    if (busy)
        crew__busy_begin(busy, crew__kind_fn_of(t), started); /* a timer: its own fn */
    bool ran = call(p, crew__self(p), t, &slot);
    if (busy)
        crew__busy_end(busy);
    if (!ran) {
        drop_timed(p, t);
        return;
    }
    uint64_t finished = crew__now_ns();
    if (traced)
        crew__trace_task_end(p, &tt, started, finished);
    /* NULL if out of memory (the sample is lost), or if nothing is counted (only a trace) */
    crew__tstats *s =
        (flags & CREW__TASK_COUNTED) || p->autosize ? crew__stats_block(p) : NULL;
    if (s && (flags & CREW__TASK_COUNTED))
        crew__stats_done(s, submitted, accepted, started, finished);
    if (s && p->autosize)
        crew__stats_timed(p, s, started - accepted, finished - started, finished);
    if (p->autosize)
        crew__autosize_sample(p, started - accepted);
    crew__tasks_finished(p, slot, 1, CREW__RAN);
}

/* Does a thread that runs array runner t with `whole` (worker.h: CREW__RUNNERS_WHOLE, a group
 * slot, or CREW__RUNNERS_TURNS) run it to its end? */
static inline bool runs_whole(const crew_task *t, uint32_t whole) {
    return whole == CREW__RUNNERS_WHOLE || t->crew_private_.slot == whole;
}

/* A thread that is no worker of p ran an array's runner of group slot to its end while it
 * helps (a waiter: its count *finished): the array's other runners, queued where the same take
 * finds them, would otherwise wait (each with its record and a unit of pending) behind busy
 * workers long after the group finished: one pile per array for a thread that queues arrays
 * and waits for them in a loop. It takes them while the newest task of the slot is a runner
 * with nothing left to claim (at most m - 1 takes), and ends each in pending (in *finished, as
 * a runner that ran); anything else it took goes back in front, as crew__sched_cancel_group
 * puts back a later group's task. The group's end was visible before: only this waiter's
 * return waits for these takes. */
static __attribute__((noinline, cold)) void end_leftovers(crew_pool *p, uint32_t slot,
                                                          size_t *finished) {
    crew__take_ctx tc = {.may_batch = false};
    crew_task *t;
    while ((t = crew__sched_take_group_as(p, NULL, slot, 0, &tc)) != NULL) {
        if (!(t->crew_flags_ & CREW__TASK_RUNNER) || !crew__array_end_if_done(t->arg)) {
            if (crew__sched_requeue(p, t) == CREW_OK)
                tc.pushed_back++;
            else
                crew__run_helping(p, NULL, t, finished, NULL, CREW__RUNNERS_WHOLE);
            break;
        }
        ++*finished;
    }
    if (tc.pushed_back)
        crew__wake_pushed_back(p, &tc.pushed_back);
}

/* An array's runner (array.c) that this thread took: it runs to its end if whole says so
 * (worker.h), else one turn (crew__array_step), after which it is queued again (in front, a
 * thread woken for it), so that a waiter whose wait does not cover the runner's whole array (a
 * runner of another group, helping generally) goes back to its wait, which may be over,
 * instead of running until the whole array is claimed; without memory to go back it runs to its
 * end. A runner holds no unit of its group, which may have finished, its slot passed to a later
 * group (array.c): its frame names the array's group as the record holds it, never as the
 * slot's state says, and it ends in pending only, as a task of no group does. A runner of a
 * cancelled group is dropped (its kind drops the unclaimed rest). Out of line: once per runner,
 * not per task. The frame as crew__call_in's (run_plain.h; top: see there). */
static __attribute__((noinline)) void run_runner(crew_pool *p, crew__worker *self, crew_task *t,
                                                 size_t *finished, crew__frame *top,
                                                 uint32_t whole) {
    crew__assert(!(t->crew_flags_ & CREW__TASK_NODE)); /* queued by address, never kept */
    void *arg = t->arg;
    crew_handle group = crew__array_group(arg);
    /* Relaxed, as in crew__call_in; a later group's mark names another generation. */
    if (group.slot != 0 &&
        crew__slot_cancelled(crew__slot_at(&p->groups, group.slot), group.gen)) {
        drop_cancelled(p, t);
        return;
    }
    crew__frame own, *frame = top ? top : &own;
    if (!top) {
        frame->pool = p;
        frame->up = crew__tls_frame;
        frame->depth = crew__tls_frame ? crew__tls_frame->depth + 1 : 1;
    }
    frame->group = group;
    frame->mark = crew__sched_mark(p, self);
    crew__debug_yield();
    crew__tls_frame = frame;
    bool ended = true;
    if (runs_whole(t, whole))
        crew__array_run(arg);
    else
        ended = crew__array_step(arg);
    crew__tls_frame = frame->up;
    crew__debug_yield();
    if (!ended) {
        /* t is the runner's own entry in its record, which its unfinished runner keeps. The
         * array may have nothing left by now (a full turn may end just so, or another runner
         * took the rest), its group finished and the slot passed on: the wake-up may name a
         * later group's slot, a spurious wake at worst. */
        if (crew__sched_requeue(p, t) == CREW_OK) {
            crew__wake_work(p, 1, group.slot);
            return;
        }
        crew__tls_frame = frame;
        crew__array_run(arg); /* no memory to queue it again: to its end */
        crew__tls_frame = frame->up;
    }
    if (!self && finished && group.slot != 0)
        end_leftovers(p, group.slot, finished);
    crew__end_plain(p, self, finished); /* its unit, as a task of no group's */
}

/* crew__run's body, inlined into the worker's loop as well: run t on this thread, whose worker
 * record for p is self (crew__self), and count it finished. A task of no group is counted in
 * self's credit on a worker, or in *finished on a thread that helps while it waits (finished
 * non-NULL: the waiter returns them to pending itself, see wait.c); otherwise at once. whole:
 * which array runners run to their end (worker.h). */
static inline __attribute__((always_inline)) void run_task_in(crew_pool *p, crew__worker *self,
                                                              crew_task *t, size_t *finished,
                                                              crew__frame *top, uint32_t whole) {
    /* One test of the flags for the rare kinds: a timed task, and an array's runner, which
     * runs to its end unless whole says a turn (both out of line; no test of fn per task). */
    uint32_t flags = t->crew_flags_;
    if (__builtin_expect((flags & (CREW__TASK_STAMPED | CREW__TASK_BOUNDED | CREW__TASK_DEADLINE |
                                   CREW__TASK_RUNNER)) != 0,
                         0)) {
        if (!(flags & CREW__TASK_RUNNER))
            run_timed(p, t);
        else
            run_runner(p, self, t, finished, top, whole);
        return;
    }
    uint32_t slot;
    if (__builtin_expect(!crew__call_in(p, self, t, &slot, top), 0)) {
        drop_cancelled(p, t);
        return;
    }
    if (__builtin_expect(slot == 0, 1))
        crew__end_plain(p, self, finished); /* the common end, inline */
    else
        crew__tasks_finished(p, slot, 1, CREW__RAN);
}

static inline __attribute__((always_inline)) void run_task(crew_pool *p, crew__worker *self,
                                                           crew_task *t, size_t *finished,
                                                           uint32_t whole) {
    run_task_in(p, self, t, finished, NULL, whole);
}

void crew__run(crew_pool *p, crew_task *t) {
    run_task(p, crew__self(p), t, NULL, CREW__RUNNERS_WHOLE);
}

void crew__run_helping(crew_pool *p, crew__worker *self, crew_task *t, size_t *finished,
                       crew__frame *top, uint32_t whole) {
    run_task_in(p, self, t, finished, top, whole);
}

void crew__name_thread(const crew_pool *p, const char *role) {
#if defined(__linux__)
    char name[16]; /* Linux keeps 15 characters */
    if (snprintf(name, sizeof name, "%s-%u-%s", p->name, p->id, role) < 0)
        return; /* a longer name is cut short, on purpose */
    pthread_setname_np(pthread_self(), name);
#else
    crew__unused(p);
    crew__unused(role);
#endif
}

/* Should w leave its loop? When resize marked it, or when the pool is closing and no accepted
 * task is left (until then it helps drain, and sleeps between tasks like any worker).
 * Seq_cst loads: the pool's state and pending count (see struct crew_pool). */
static inline bool must_leave(crew_pool *p, crew__worker *w) {
    /* Relaxed: the worker's own state; transitions happen under the lock. */
    return crew__load_relaxed(&w->state) != CREW__W_RUNNING ||
           (crew__load_seq_cst(&p->state) != CREW__OPEN && crew__load_seq_cst(&p->pending) == 0);
}

/* The worker's last look before it sleeps (crew__ec_wait, lock held): none if it must leave;
 * else a task, or a lost race (retry). */
typedef struct last_look_ctx {
    crew_pool *p;
    crew__worker *w;
    crew_task *t;
    crew__take_ctx tc; /* the takes' inputs and outputs (schedule.h) */
    bool slept;        /* the look found nothing: it sleeps */
    uint64_t watch;    /* the look found nothing and made it the watcher for this long, ns */
    uint64_t slept_at; /* under a trace: when it went to sleep, for the timeline */
} last_look_ctx;

static bool last_look(void *ctx) {
    last_look_ctx *c = ctx;
    if (must_leave(c->p, c->w))
        return true;
    c->t = crew__sched_take(c->p, &c->tc);
    if (c->t || c->tc.retry)
        return true;
    crew__debug_yield(); /* lock held: lets others pile up behind the sleeper */
    if (__builtin_expect((c->watch = crew__wake_watch_claim(c->p)) != 0, 0))
        return true; /* sleep_for_work sleeps again, timed */
    c->slept = true;
    if (__builtin_expect(crew__tracing(c->p), 0) && c->slept_at == 0) /* a trace records it */
        c->slept_at = crew__now_ns();
    return false;
}

/* The worker's sleep on pool->work (ec.h): a last look for work, then sleep (timed, if that
 * look made it the watcher of deferred offers, wake.h; it resigns as it wakes). Returns a
 * task found on the last look, or NULL after waking up (*woken_out: chosen by
 * crew__wake_locked, which counted it among the lookers); *slept false when it did not sleep
 * (a task found, a race lost, or it must leave); *watched true when it was the watcher. */
static crew_task *sleep_for_work(crew_pool *p, crew__worker *w, bool *woken_out, bool *slept,
                                 bool *watched) {
    last_look_ctx c = {p, w, NULL, {.may_batch = true}, false, 0, 0}; /* runs no task */
    pthread_mutex_lock(&p->lock);
    enum crew__ec_end end = crew__ec_wait(&w->sleeper, &p->lock, last_look, &c, NULL);
    while (__builtin_expect(c.watch != 0, 0)) { /* the watcher of deferred offers (wake.h) */
        struct timespec until = crew__timespec_of(crew__now_ns() + c.watch);
        end = crew__ec_wait(&w->sleeper, &p->lock, last_look, &c, &until);
        crew__wake_watch_resign(p);
        c.watch = 0;
        *watched = true;
        if (end == CREW__EC_TIMEDOUT) /* looks once more here, not in the polls; may watch */
            end = crew__ec_wait(&w->sleeper, &p->lock, last_look, &c, NULL);
    }
    if (__builtin_expect(c.slept_at != 0, 0))
        crew__trace_span(p, CREW__TR_SLEEP, CREW_HANDLE_NONE, c.slept_at);
    pthread_mutex_unlock(&p->lock);
    *slept = c.slept;
    *woken_out = end == CREW__EC_WOKEN;
    if (c.tc.pushed_back) /* the last look put a task back: wake someone for it */
        crew__wake_pushed_back(p, &c.tc.pushed_back);
    return c.t;
}

/* Leave the loop if must_leave still holds under the lock (where resize revives workers):
 * hand over the queued tasks and become EXITED. Returns false if w must go on working. */
static bool try_exit(crew_pool *p, crew__worker *w) {
    crew_task *orphan = NULL;
    size_t moved = 0;
    pthread_mutex_lock(&p->lock);
    bool leave = must_leave(p, w) && crew__sched_worker_exit(p, w, &moved, &orphan) == CREW_OK;
    if (moved != 0)
        crew__wake_handed_over_locked(p, moved);
    /* Relaxed: under the lock, like every transition. Crew_resize may revive a marked worker
     * only while it is still MARKED, so after this it no longer can. */
    if (leave)
        crew__store_relaxed(&w->state, CREW__W_EXITED);
    pthread_mutex_unlock(&p->lock);
    if (orphan) /* its tasks had nowhere to go (out of memory): run this one, try again later */
        crew__run(p, orphan);
    return leave;
}

/* The last looker has stopped looking: wake a sleeping worker if tasks a worker can take are
 * queued (not the blocking queue's). After a seq_cst decrement of lookers: see stop_looking. */
static void hand_on(crew_pool *p) {
    if (crew__ec_sleepers(&p->work) && crew__sched_any_queued(p))
        crew__wake(p, 1, 0);
}

/* The worker's dispatch policy (dispatch.h). */
typedef struct worker_ctx {
    crew_pool *p;
    crew__worker *w;
    uint64_t idle_since; /* monitoring: when this worker ran out of work, or 0 */
    bool looking;        /* counted in p->lookers */
    bool watched;        /* it was the watcher: no polls in its next idle stretch (wake.h) */
    /* The frame of the task the loop runs (crew__call_in): pool, up and depth set once. */
    crew__frame frame;
} worker_ctx;

/* The worker stops looking: it found a task, or it leaves without a last look. It leaves the
 * lookers, and if it was the last one while tasks are queued and workers sleep, it wakes one
 * (which becomes a looker): a burst that one looker's submitters left to it does not wait
 * behind the task it took, nor for a worker that leaves. The decrement, the eventcount's fence,
 * then the look at the queues: a submitter that saw this looker (and woke nobody) pushed before
 * its own fence, so either it saw the count at 0 and woke someone, or this look sees its task
 * (pool.h). A worker about to sleep leaves the count first (leave_lookers), and hands on only
 * if it then does not sleep (its last look found a task, or lost a race, or it must leave): a
 * last look that finds nothing proves no task was left to it, and a hand-on there would wake
 * sleepers in turn for ever while a paused pool holds tasks. */
static bool leave_lookers(worker_ctx *c) { /* true: it was the last looker */
    c->looking = false;
    return crew__fetch_sub_seq_cst(&c->p->lookers, 1u) == 1; /* seq_cst: see crew_pool.lookers */
}

static __attribute__((noinline)) void stop_looking(worker_ctx *c) {
    if (leave_lookers(c))
        hand_on(c->p);
}

static crew_task *worker_take(void *ctx, crew__take_ctx *tc) {
    worker_ctx *c = ctx;
    crew_task *t = crew__sched_take_as(c->p, c->w, tc); /* c->w: crew__self(c->p) */
    if (__builtin_expect(c->looking, 0)) {
        if (t)
            stop_looking(c);
    } else if (!t && crew__sched_any_worker(c->p)) {
        c->looking = true;
        crew__fetch_add_seq_cst(&c->p->lookers, 1u); /* seq_cst: see crew_pool.lookers */
    }
    return t;
}

/* Out of work: give the credit back, leave if resize marked it or the pool is closing and
 * drained; note when the idle time began. */
static bool worker_idle(void *ctx) {
    worker_ctx *c = ctx;
    crew__flush_finished(c->p, c->w);
    if (must_leave(c->p, c->w) && try_exit(c->p, c->w))
        return true;
    /* Relaxed: see struct crew_pool. */
    if (!c->idle_since && (crew__load_relaxed(&c->p->timing) & CREW__TIMING_MONITOR))
        c->idle_since = crew__now_ns();
    return false;
}

static crew_task *worker_sleep(void *ctx, crew__take_ctx *tc, bool *stop) {
    crew__unused(stop);
    worker_ctx *c = ctx;
    if (tc->pushed_back) /* not from a worker's takes, which put back only with a task */
        crew__wake_pushed_back(c->p, &tc->pushed_back);
    bool last = c->looking && leave_lookers(c), woken, slept, watched = false;
    crew_task *t = sleep_for_work(c->p, c->w, &woken, &slept, &watched);
    c->watched |= watched;
    /* A burst left to it may hold more than the one task it took; a watcher not woken (no
     * looker) that took a task or leaves may leave a round's deferred offers to nobody. */
    if ((last && !slept) || (watched && !woken))
        hand_on(c->p);
    if (woken) /* the waker counted it in */
        c->looking = true;
    return t;
}

#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (worker.h): so that a test can hold the window before the check open. */
void (*crew__test_after_take)(crew_task *t);
#endif

/* Resize marked worker c->w after it took t: put t back in front and leave (try_exit's answer:
 * 1 left, 0 must go on), or -1 if there was no memory to put it back (then it runs t). t's
 * group is read before t goes back: its waiter may take only its group's tasks (at its helping
 * depth), and t was in no queue when it looked, so the wake-up names the group. Out of line:
 * rare. */
static __attribute__((noinline, cold)) int put_back_marked(worker_ctx *c, crew_task *t,
                                                            crew__take_ctx *tc) {
    crew_pool *p = c->p;
    uint32_t slot = t->crew_private_.slot;
    if (!crew__kind_hand_back(p, t)) { /* else its kind's own way back: a join's half */
        if (crew__sched_requeue(p, t) != CREW_OK)
            return -1;
        crew__wake_work(p, 1, slot); /* t itself */
    }
    crew__wake_pushed_back(p, &tc->pushed_back); /* whatever the take put back */
    crew__flush_finished(p, c->w);
    return try_exit(p, c->w);
}

static bool worker_run(void *ctx, crew_task *t, crew__take_ctx *tc) {
    worker_ctx *c = ctx;
    crew_pool *p = c->p;
again:
#if defined(CREW_ASSERT) && CREW_ASSERT
    if (crew__test_after_take)
        crew__test_after_take(t);
#endif
    /* Relaxed: resize marks under the lock; re-checking after the take is what bounds the
     * workers that start tasks once crew_resize has returned. */
    if (__builtin_expect(crew__load_relaxed(&c->w->state) != CREW__W_RUNNING, 0)) {
        int left = put_back_marked(c, t, tc);
        if (left >= 0)
            return left;
    }
    if (crew__held_back(p, t, &tc->pushed_back))
        return false;
    if (c->idle_since) {
        crew__stats_waited(p, crew__now_ns() - c->idle_since);
        c->idle_since = 0;
    }
    /* Whoever runs a task first wakes a sleeper for the tasks it put back while taking this
     * one (schedule.h); here no lock is held. */
    if (__builtin_expect(tc->pushed_back != 0, 0))
        crew__wake_pushed_back(p, &tc->pushed_back);
    run_task_in(p, c->w, t, NULL, &c->frame, CREW__RUNNERS_WHOLE);
    if (tc->batch) { /* t came from a batch the take claimed: its next tasks (run_batch) */
        tc->batch = false;
        crew__assert(p->sched.ops->run_batch != NULL);
        if ((t = p->sched.ops->run_batch(p, c->w, &c->frame)) != NULL) {
            tc->batch = true; /* a task of the batch, to run as taken, and then the rest */
            goto again;
        }
    }
    return false;
}

/* CREW_SPIN_AUTO's polls for a worker (idle.h); none right after it watched, nor while a
 * caller runs tiny rounds (wake.h: TINY ROUNDS). */
static unsigned worker_polls(void *ctx) {
    worker_ctx *c = ctx;
    bool watched = c->watched;
    c->watched = false;
    return watched || crew__wake_rounds_tiny(c->p) ? 0 : crew__idle_polls(c->p);
}

static const crew__policy worker_policy = {.take = worker_take,
                                           .idle = worker_idle,
                                           .sleep = worker_sleep,
                                           .run = worker_run,
                                           .polls = worker_polls};

void *crew__worker_main(void *arg) {
    crew__worker *w = arg;
    crew_pool *p = w->pool;
    char role[16];
    snprintf(role, sizeof role, "w%u", w->index);
    crew__name_thread(p, role);
    /* The hooks run while this thread is not yet (on_start) or no longer (on_stop) the worker:
     * whatever they call on the pool, they call as an outside thread would, so nothing they do
     * uses the worker's credit, caches or queue (a submission from on_stop took credit that a
     * worker that has left never returned, and pending never reached 0 again). */
    crew__thread_start(p, w->index);
    crew__tls_worker = w;
    crew__tls_busy = &w->busy;

    /* The loop's frame: nothing below it (the loop runs outside any task). */
    worker_ctx ctx = {p, w, 0, false, false, {p, NULL, 1, {0, 0}, 0}};
    crew__take_ctx tc = {.may_batch = true}; /* between tasks: a take may claim a batch */
    crew__dispatch(&worker_policy, &ctx, &tc, p->spin);
    if (ctx.looking)
        stop_looking(&ctx);
    if (tc.pushed_back)
        crew__wake_pushed_back(p, &tc.pushed_back);
    crew__flush_finished(p, w); /* nothing may stay in credit: see crew__worker */
    crew__tls_busy = NULL;
    crew__tls_worker = NULL;
    unsigned index = w->index;
    crew__thread_stop(p, index);
    /* Release: on_stop is over, so joining this thread no longer waits for anything a hook
     * does; pairs with the acquire in pool.c's reap_exited. w is not touched after this. */
    crew__store_release(&w->gone, true);
    return NULL;
}
