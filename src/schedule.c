/*
 * schedule.c -- the calls the rest of crew makes to the scheduling strategy (schedule.h): which
 * strategy a configuration names, the pause and the calling thread's worker record checked
 * once per call, then the strategy's table; and what every strategy shares: cancelling a
 * group's queued tasks or all of them, the count of queued tasks, crew_diagnose's view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocking.h"
#include "kind.h"
#include "nodes.h"
#include "notify.h"
#include "pool.h"
#include "sched_calls.h"
#include "schedule.h"
#include "timer.h"
#include "wake.h"
#include "worker.h"

/* An environment variable must never turn a working program into a broken one: a value
 * CREW_SCHEDULER does not know is reported once per process (as libgomp reports a bad
 * OMP_SCHEDULE) and the default is used. */
static void warn_unknown(const char *value) {
    static atomic_bool warned; /* relaxed: at most a second line if two pools race */
    if (crew__load_relaxed(&warned))
        return;
    crew__store_relaxed(&warned, true);
    fprintf(stderr,
            "crew: CREW_SCHEDULER=%s is not a scheduler (steal, shared, lockfree, per-worker); "
            "using the default, steal\n",
            value);
}

const crew__sched_ops *crew__sched_resolve(unsigned scheduler, int *kind) {
    static const struct {
        int kind;
        const crew__sched_ops *ops;
    } table[] = {{CREW_SCHED_STEAL, &crew__sched_steal},
                 {CREW_SCHED_SHARED, &crew__sched_shared},
                 {CREW_SCHED_SHARED_LOCKFREE, &crew__sched_multiqueue},
                 {CREW_SCHED_PER_WORKER, &crew__sched_per_worker},
#if defined(CREW_TEST_HOOKS) && CREW_TEST_HOOKS
                 /* For the tests only (their library, CMakeLists.txt): through the
                  * environment. */
                 {-1, &crew__sched_simple},
#endif
    };
    const size_t n = sizeof table / sizeof table[0];
    if (scheduler > CREW_SCHED_PER_WORKER)
        return NULL;
    int want = scheduler == CREW_SCHED_DEFAULT ? CREW_SCHED_STEAL : (int)scheduler;
    const char *env = scheduler == CREW_SCHED_DEFAULT ? getenv("CREW_SCHEDULER") : NULL;
    if (env && *env) {
        size_t i = 0;
        while (i < n && strcmp(env, table[i].ops->name) != 0)
            i++;
        if (i < n)
            want = table[i].kind;
        else
            warn_unknown(env);
    }
    for (size_t i = 0; i < n; i++)
        if (table[i].kind == want) {
            *kind = want;
            return table[i].ops;
        }
    return NULL;
}

void crew__sched_select(crew_pool *p, const crew__sched_ops *ops, int kind) {
    p->sched.ops = ops;
    p->sched.own_deque = ops->own_deque;
    p->sched.kind = kind;
}

void crew__sched_forked(crew_pool *p) {
    p->sched.own_deque = false;
    p->sched.ext = NULL;
}

const char *crew__sched_what(const crew_pool *p) { return p->sched.ops->what; }

int crew__sched_init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    const crew__sched_ops *ops = p->sched.ops;
    p->sched.lock_spin = cfg->lock == CREW_LOCK_SPIN;
    size_t size = ops->state_size + (ops->state_more ? ops->state_more(p, cfg, threads) : 0);
    size = (size + 63) & ~(size_t)63; /* a multiple of the alignment, as aligned_alloc asks */
    void *s = aligned_alloc(64, size);
    if (!s)
        return CREW_ENOMEM;
    memset(s, 0, size);
    p->sched.state = s;
    return ops->init(p, cfg, threads);
}

void crew__sched_free(crew_pool *p) {
    if (!p->sched.state)
        return;
    if (p->sched.ops->free)
        p->sched.ops->free(p);
    p->sched.ext = NULL;
    free(p->sched.state);
    p->sched.state = NULL;
}

int crew__sched_worker_init(crew_pool *p, crew__worker *w) {
    return p->sched.ops->worker_init ? p->sched.ops->worker_init(p, w) : CREW_OK;
}

void crew__sched_worker_free(crew_pool *p, crew__worker *w) {
    if (p->sched.ops->worker_free)
        p->sched.ops->worker_free(p, w);
}

void crew__sched_worker_open(crew_pool *p, crew__worker *w, bool open) {
    if (p->sched.ops->worker_open)
        p->sched.ops->worker_open(w, open);
}

int crew__sched_requeue(crew_pool *p, crew_task *t) {
    crew_task *q = crew__task_keep(p, t); /* a take's copy needs a node */
    if (!q)
        return CREW_ENOMEM;
    int rc = p->sched.ops->requeue(p, crew__self(p), q);
    if (rc != CREW_OK && q != t)
        crew__node_release(p, q);
    return rc;
}

int crew__sched_worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan) {
    *moved = 0;
    *orphan = NULL;
    return p->sched.ops->worker_exit ? p->sched.ops->worker_exit(p, w, moved, orphan) : CREW_OK;
}

/* Worker w's own queue, where its strategy keeps it (ops->own.what non-NULL). */
static inline crew__sched_queue own_queue(const crew__sched_own *own, crew__worker *w) {
    void *at = w->sched.bytes + own->at;
    if (own->by_pointer)
        at = *(void **)at;
    return own->deque ? (crew__sched_queue){.deque = at, .what = own->what}
                      : (crew__sched_queue){.lq = at, .what = own->what};
}

/* The tasks queued that a worker can take: in the pool's queues, and in each worker's own. */
static size_t worker_tasks_queued(crew_pool *p) {
    const crew__sched_ops *ops = p->sched.ops;
    size_t n = ops->queued ? ops->queued(p) : 0;
    if (ops->own.what)
        for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++) {
            crew__sched_queue q = own_queue(&ops->own, crew__worker_at(p, i));
            n += q.lq ? crew__lq_len(q.lq) : crew__deque_size(q.deque);
        }
    return n;
}

size_t crew__sched_queued(crew_pool *p) {
    size_t n = worker_tasks_queued(p);
    if (p->blocking)
        n += crew__lq_len(p->blocking->queue);
    return n;
}

bool crew__sched_any_queued(crew_pool *p) { return worker_tasks_queued(p) != 0; }

crew_task *crew__sched_take_any(crew_pool *p) { return p->sched.ops->take_any(p); }

bool crew__hold_back(crew_pool *p, crew_task *t, size_t *pushed_back) {
    /* Relaxed: see crew_pool.halt. A completion callback is never dropped (as in
     * crew__sched_cancel_all below). */
    if (crew__cancelling(p) && !(t->crew_flags_ & CREW__TASK_NOTIFY)) {
        crew__task_dropped(p, t, true);
        return true;
    }
    if (!crew__paused(p)) /* relaxed: see crew_pool */
        return false;
    if (crew__kind_hand_back(p, t)) /* its kind's own way back (kind.h): a join's half */
        return true;
    /* In front of the queue it came from (a blocking task: the blocking threads' queue), where
     * crew_cancel finds it and crew_resume's wake-up makes it run first. Without memory to put
     * it back, it runs: the pause is then late for this one task. */
    bool blocking = t->crew_flags_ & CREW__TASK_BLOCKING;
    if ((blocking ? crew__lq_requeue(p->blocking->queue, t) : crew__sched_requeue(p, t)) != 0)
        return false;
    /* A crew_resume may have come between the look and the put-back, its wake-ups already
     * spent, and this thread may leave (a resize): wake a thread for the task. */
    if (blocking) {
        pthread_mutex_lock(&p->lock);
        crew__blocking_wake_all_locked(p);
        pthread_mutex_unlock(&p->lock);
    } else {
        ++*pushed_back;
        crew__wake_pushed_back(p, pushed_back);
    }
    return true;
}

/* A queued task of group slot from the queues under locks (not the deques: crew__run drops
 * those when they come up), or NULL. */
static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    crew_task *t = p->blocking ? crew__blocking_take_group(p, slot) : NULL;
    return t ? t : p->sched.ops->take_locked_group(p, slot);
}

#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (the checked library the tests link, debug.h): called by crew_cancel between its
 * sweep of the timer heap and its sweep of the queues, so that a test can hold that window
 * open while the timer thread fires. */
void (*crew__test_cancel_between)(void);
#endif

size_t crew__sched_cancel_group(crew_pool *p, uint32_t slot, uint32_t gen) {
    /* The delayed tasks not due yet first: a task fires under timers.lock, so one that fired
     * before this sweep of the heap is in a queue already when the queues' sweep comes; the
     * other order would miss one fired between the two sweeps (dropped late, when a thread
     * reached it). */
    size_t n = crew__timers_cancel_group(p, slot, gen), put_back = 0;
#if defined(CREW_ASSERT) && CREW_ASSERT
    if (crew__test_cancel_between)
        crew__test_cancel_between();
#endif
    crew_task *t;
    while ((t = take_locked_group(p, slot)) != NULL) {
        /* A queued task's group is open, so the slot's generation is its group's: if it moved
         * on, the cancelled group has ended and this task belongs to the slot's next group.
         * Not so for an array's runner left with nothing to claim (array.c): the cancel of the
         * slot's next group may sweep one of an earlier group, harmlessly (outside the group,
         * the array kind's row: it counts in pending only).
         * Relaxed: the queue's lock ordered the task's group opening before our take. */
        if (crew__gen_of(crew__load_relaxed(&crew__slot_at(&p->groups, slot)->state)) != gen) {
            if (crew__sched_requeue(p, t) == CREW_OK)
                put_back++;
            else
                crew__run(p, t); /* no memory to put it back: run it here */
            break;
        }
        crew__task_dropped(p, t, false);
        n++;
    }
    if (put_back) /* a task of the slot's next group: its waiters may take only it */
        crew__wake_work(p, put_back, slot);
    return n;
}

size_t crew__sched_cancel_all(crew_pool *p) {
    size_t n = 0;
    crew_task *t, *callbacks = NULL;
    while ((t = crew__sched_take_any(p)) != NULL) {
        /* A completion callback (crew_notify) is not a task the shutdown may drop: it tells
         * its owner that a group ended (ended by this very sweep, often). Set aside, queued
         * again once the queues are empty, and run by the threads that drain the pool. */
        if (t->crew_flags_ & CREW__TASK_NOTIFY) {
            t->crew_private_.gnext = callbacks;
            callbacks = t;
            continue;
        }
        crew__task_dropped(p, t, true);
        n++;
    }
    if (callbacks)
        crew__notify_queue(p, callbacks);
    return n;
}

void crew__sched_visit_lq(crew__lq *q, const char *what, int index, crew__queue_visitor fn,
                          void *ctx) {
    crew__queue_view v = {what, index, 0, 0, NULL};
    crew__lock_acquire(&q->lock);
    v.n = q->q.n;
    v.oldest = crew__prioq_oldest(&q->q);
    crew__lock_release(&q->lock);
    fn(ctx, &v);
}

void crew__sched_visit_deque(crew__deque *d, const char *what, int index,
                             crew__queue_visitor fn, void *ctx) {
    crew__queue_view v = {what, index, crew__deque_size(d), 0, d};
    fn(ctx, &v);
}

void crew__sched_visit(crew_pool *p, crew__queue_visitor fn, void *ctx) {
    const crew__sched_ops *ops = p->sched.ops;
    if (ops->visit)
        ops->visit(p, fn, ctx);
    if (ops->own.what)
        for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++) {
            crew__worker *w = crew__worker_at(p, i);
            crew__sched_queue q = own_queue(&ops->own, w);
            if (q.lq)
                crew__sched_visit_lq(q.lq, q.what, (int)w->index, fn, ctx);
            else
                crew__sched_visit_deque(q.deque, q.what, (int)w->index, fn, ctx);
        }
    if (p->blocking)
        crew__sched_visit_lq(p->blocking->queue, "the blocking tasks' queue", -1, fn, ctx);
}
