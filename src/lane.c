/*
 * lane.c -- lanes: serial (strand) and bounded-concurrency queues of tasks on a shared pool,
 * and their barriers (crew_lane_create, crew_lane_barrier, crew_lane_destroy; crew_lane_submit
 * is submit.c's, which accepts the task like any other and hands it to crew__lane_push).
 *
 * DESIGN. A lane is a FIFO of accepted tasks under a small spinlock, plus the number of its
 * runners that are queued or running ("active"). A runner is an ordinary pool task (a node of
 * submit.c's, function crew__lane_runner, no group, priority 0) that pops the lane's tasks in
 * order and runs each as the pool runs any task (crew__run: its group's frame, cancellation,
 * statistics). A submission that appends a task and finds fewer than max_concurrency runners
 * active counts one more and queues a new runner; a runner that finds the lane empty counts
 * itself out in the same critical section, so a task is never left in a lane without a runner
 * (the race between the last runner leaving and a new submission is decided by the lock). The
 * tasks start in submission order (the pops are ordered by the lock) and at most
 * max_concurrency run at once (one per active runner). An idle lane holds no thread and no
 * task: 48 bytes.
 *
 * Every runner counted in active is counted in the pool's pending too, from the critical
 * section that counts it active (crew__lane_push) until it has run or been dropped; so is its
 * task, from before the submission's check of the pool's state. The new runner's unit of
 * pending is taken before the task becomes visible to the lane's other runners, so pending
 * cannot reach 0 between the task's end (another runner may take it at once) and the new
 * runner's queueing: a closing pool's workers and crew_shutdown wait for the runner, which
 * then runs or is dropped, and gives its place in active back, under every scheduler and both
 * kinds of shutdown. (Counted only when queued, as before, the runner could be queued after a
 * shutdown that had seen pending at 0 had already let the workers go: run by nobody, it kept
 * active above 0 and crew_lane_destroy waited for ever.)
 *
 * Fairness: a runner runs at most CREW__LANE_BATCH tasks, then, if more wait, queues itself
 * again behind the pool's other tasks and returns its thread; runners always go to the pool's
 * shared queue (STEAL: the external slots, FIFO; PER_WORKER: round robin), never to the
 * worker's own deque, where it would be taken again at once. So busy lanes and plain tasks
 * take turns through the pool's queue. A runner also steps back (queues itself again) when the
 * pool is paused, seen under the lane's lock so that a task submitted after crew_pause returned
 * does not start before crew_resume, and when resize has marked its worker.
 *
 * Each task is counted in its group and in the pool's pending count from crew_lane_submit on,
 * so crew_wait, crew_wait_all and crew_shutdown(CREW_DRAIN) wait for tasks still in a lane;
 * each runner is counted in pending too while it is queued or runs (not in the statistics, nor
 * in any group). Tasks of a cancelled group are dropped when their runner comes to them, as
 * the work-stealing deques' are. A cancelling shutdown drops the runners that are queued, and
 * a dropped runner drops its lane's waiting tasks (the lane kind's drop, kind.h); a runner that
 * is running drops the rest instead of running them.
 *
 * A task graph's node may run in a lane (graph_opts.c): the graph counts itself in the lane
 * (crew__lane_hold) for each such node, and crew_lane_destroy refuses (CREW_EBUSY) while any
 * is counted, so a graph never holds a freed lane.
 *
 * BARRIERS (crew_lane_barrier; libdispatch's dispatch_barrier_async). A barrier is a task of
 * the lane flagged CREW__TASK_BARRIER; "running" counts the lane's tasks that runners have
 * popped and not yet finished, or is LANE_EXCL while a barrier runs. The task at the head may
 * start unless the lane is blocked: a barrier runs, or the head is a barrier and running is
 * not 0. A runner that finds the lane blocked counts itself out and leaves, as one that finds
 * it empty does; blocked means some task of the lane runs, and its runner comes back to the
 * head when it ends (it takes its task off running first, under the lock), so a waiting task
 * still always has a runner: the last runner of the tasks before a barrier starts it, and the
 * barrier's runner, once the barrier has ended, starts the tasks after it, queueing up to
 * max_concurrency - 1 more runners for those before the next barrier (top_up). A submission
 * into a blocked lane starts no runner (it would only leave again). With max_concurrency 1
 * only one runner exists, which never finds its lane blocked: it keeps no count (running stays
 * 0), and a barrier is a plain task there.
 * A barrier is dropped as any lane task (a cancelled group, a cancelling shutdown, a dropped
 * runner), alone too: a drop by a runner holds the lane as a run would.
 */
#include <limits.h>
#include <stdlib.h>

#include "atomic.h"
#include "debug.h"
#include "kind.h"
#include "lane.h"
#include "lock.h"
#include "nodes.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "submit.h"
#include "wait.h"
#include "wake.h"
#include "worker.h"

/* crew_lane_destroy waiting for a lane's runners: done is set by the runner that counts the
 * last one out, with pool->lock held, and the destroyer woken through ec, on which it sleeps
 * (with pool->lock): as a helping waiter does (crew__help_until), if it is a task or hook of the
 * pool, so that queued work wakes it too, else only for done. */
typedef struct lane_waiter {
    crew__ec ec;
    /* Set once, with release, under pool->lock; read with acquire, under it or not (a helping
     * destroyer's loop, crew__help_until). */
    atomic_bool done;
} lane_waiter;

/* crew_lane.running while a barrier runs. */
#define LANE_EXCL UINT_MAX

struct crew_lane {
    crew_pool *pool; /* fixed */
    /* The spinlock guarding the fields below (its critical sections are a few stores; lock.h
     * has the orders): every field below is read and written under it. */
    crew__spinlock lock;
    unsigned max;           /* fixed: max_concurrency */
    unsigned active;        /* lock: runners queued or running */
    unsigned running;       /* lock: popped tasks not finished, or LANE_EXCL (a barrier) */
    crew_task *head, *tail; /* lock: the waiting tasks, linked by crew_private_.qnext */
    lane_waiter *destroyer; /* lock: crew_lane_destroy, waiting for active to reach 0 */
    /* Graph nodes that run in the lane (crew_graph_node_lane): while not 0, crew_lane_destroy
     * answers CREW_EBUSY. Added to relaxed (the graph holds a node's lane only while it has
     * it), taken from with release after the graph's last use of the lane; the destroy reads
     * it with acquire. */
    _Atomic uint32_t graph_nodes;
};

/* The lanes whose runners run on this thread (a runner's task may wait and help, so runners
 * nest): crew_lane_destroy from one of them would wait for itself. */
typedef struct lane_frame {
    const crew_lane *lane;
    struct lane_frame *up;
} lane_frame;
static CREW__TLS lane_frame *tls_lane;

static void lane_lock(crew_lane *l) { crew__spinlock_acquire(&l->lock); }
static void lane_unlock(crew_lane *l) { crew__spinlock_release(&l->lock); }

/* A runner counts itself out (lock held). Returns the destroyer to wake, if this was the last
 * runner and crew_lane_destroy waits: from here on the lane may be freed. */
static lane_waiter *leave_locked(crew_lane *l) {
    crew__assert_msg(l->active != 0 && l->active <= l->max, "active %u, max %u", l->active, l->max);
    return --l->active == 0 ? l->destroyer : NULL;
}

static void wake_destroyer(crew_pool *p, lane_waiter *w) {
    if (!w)
        return;
    pthread_mutex_lock(&p->lock);
    /* Wake first, then set done, the last touch of w: a helping destroyer may see done without
     * the lock, return and end w's life. One asleep cannot look again before the unlock, and
     * one that prepares meanwhile waits for this lock, so either way it sees done. */
    crew__ec_notify_locked(&w->ec, NULL, NULL);
    crew__store_release(&w->done, true); /* release: see lane_waiter */
    pthread_mutex_unlock(&p->lock);
}

crew_pool *crew__lane_pool(const crew_lane *l) { return l->pool; }

void crew__lane_hold(crew_lane *l) {
    crew__fetch_add_relaxed(&l->graph_nodes, 1u); /* relaxed: see crew_lane.graph_nodes */
}

void crew__lane_let_go(crew_lane *l) {
    crew__fetch_sub_release(&l->graph_nodes, 1u); /* release: see crew_lane.graph_nodes */
}

/* A node for a runner of lane l (NULL when out of memory). */
static crew_task *runner_node(crew_pool *p, crew_lane *l) {
    return crew__node_of(p, crew__lane_runner, l, 0, 0);
}

/* Count one more runner in pending (see the top of this file: before the runner can finish,
 * and before the task it was started for is visible to other runners). */
static void count_runner(crew_pool *p) { crew__pending_add(p, crew__self(p), 1); }

/* Queue runner r (a node from runner_node, already counted in pending: count_runner) behind the
 * pool's queued tasks (see the top of this file). Returns false if the pool had no memory to
 * queue it: r is then counted but not queued, for the caller to run or to give back. The
 * caller does not read its lane after the push: the runner may finish, and the lane be freed,
 * at once. */
static bool queue_runner(crew_pool *p, crew_task *r) {
    if (crew__sched_push_shared(p, r, 1) != CREW_OK)
        return false;
    crew__wake_work(p, 1, 0);
    return true;
}

static bool is_barrier(const crew_task *t) { return (t->crew_flags_ & CREW__TASK_BARRIER) != 0; }

/* Lock held: may the task at the head not start now? (See BARRIERS at the top of this file.) */
static bool blocked_locked(const crew_lane *l) {
    return l->running == LANE_EXCL || (l->head && is_barrier(l->head) && l->running != 0);
}

bool crew__lane_push(crew_lane *l, crew_task *t) {
    t->crew_private_.qnext = NULL;
    lane_lock(l);
    if (l->tail)
        l->tail->crew_private_.qnext = t;
    else
        l->head = t;
    l->tail = t;
    bool start = l->active < l->max && !blocked_locked(l);
    if (start) {
        l->active++;
        crew__assert(l->active <= l->max);
        count_runner(l->pool); /* before the unlock: see the top of this file */
    }
    lane_unlock(l);
    return start;
}

void crew__lane_start(crew_lane *l) {
    crew_pool *p = l->pool;
    crew_task *r = runner_node(p, l);
    if (r && queue_runner(p, r))
        return;
    /* No memory for the runner's node, or to queue it: this thread is the runner, now (the
     * lane's tasks are accepted and must run), as CREW_FULL_CALLER_RUNS runs a task in its
     * submitter. */
    if (r) {
        crew__run(p, r); /* counted in pending by crew__lane_push: run as the task it is */
    } else {
        crew__lane_runner(l);
        crew__tasks_finished(p, 0, 1, CREW__RAN); /* its unit of pending; l is not read */
    }
}

/* Lock held, a barrier just ended and this runner takes (or its replacement will take) the
 * task after it: count the runners that the plain tasks from `from` on need, as crew__lane_push
 * would have started for them had the barrier not blocked the lane (at most one per task
 * before the next barrier, within max_concurrency). Returns how many; the caller starts them
 * (start_more) while it is still active. */
static unsigned top_up_locked(crew_lane *l, const crew_task *from) {
    unsigned n = 0;
    for (const crew_task *t = from; t && !is_barrier(t) && l->active < l->max;
         t = t->crew_private_.qnext) {
        l->active++;
        count_runner(l->pool); /* as in crew__lane_push */
        n++;
    }
    return n;
}

/* Queue n runners that top_up_locked counted. Out of memory, a runner's count is given back:
 * this runner, still active, runs the tasks it would have run, one at a time. */
static void start_more(crew_pool *p, crew_lane *l, unsigned n) {
    for (; n != 0; n--) {
        crew_task *r = runner_node(p, l);
        if (r && queue_runner(p, r))
            continue;
        if (r)
            crew__node_release(p, r);
        lane_lock(l);
        lane_waiter *w = leave_locked(l); /* this runner is active: never the last */
        lane_unlock(l);
        crew__assert(w == NULL);
        crew__unused(w);
        crew__tasks_finished(p, 0, 1, CREW__RAN); /* the runner's unit of pending */
    }
}

/* Has resize marked the worker running this runner? (Relaxed: its own state.) */
static bool marked(crew_pool *p) {
    crew__worker *w = crew__self(p);
    return w && crew__load_relaxed(&w->state) != CREW__W_RUNNING;
}

void crew__lane_runner(void *arg) {
    crew_lane *l = arg;
    crew_pool *p = l->pool;
    lane_frame frame = {l, tls_lane};
    tls_lane = &frame;
    bool may_step_back = true;
    /* A strand's one runner never finds its lane blocked: it keeps no count of running tasks
     * (running stays 0), and a barrier is a plain task there. */
    const bool counts = l->max > 1; /* fixed */
    bool took = false;              /* it took a task, not yet counted off running */
    bool took_barrier = false;      /* that task is a barrier */
    for (unsigned k = 0;; k++) {
        lane_lock(l);
        if (took) { /* the task it ran (or dropped) has ended: off running */
            crew__assert(took_barrier ? l->running == LANE_EXCL
                                      : l->running != 0 && l->running != LANE_EXCL);
            l->running = took_barrier ? 0 : l->running - 1;
        }
        bool after_barrier = took && took_barrier;
        took = false;
        crew_task *t = l->head;
        if (!t || (counts && blocked_locked(l))) { /* blocked: a running task's runner returns */
            lane_waiter *w = leave_locked(l);
            lane_unlock(l);
            wake_destroyer(p, w);
            break;
        }
        /* Relaxed paused, read under the lane's lock: a task submitted after crew_pause
         * returned was appended under this lock, so a runner that pops it reads paused after
         * the store (coherence), and steps back instead of starting it. */
        if (may_step_back &&
            (k >= CREW__LANE_BATCH || crew__paused(p) || marked(p))) {
            /* The runners for the tasks after a barrier: one for each after t (the runner
             * that replaces this one takes t), before the replacement is queued (after that
             * this runner may not read l). */
            unsigned more =
                after_barrier && !is_barrier(t) ? top_up_locked(l, t->crew_private_.qnext) : 0;
            lane_unlock(l);
            if (more)
                start_more(p, l, more);
            crew_task *r = runner_node(p, l);
            if (r)
                count_runner(p); /* this runner is still counted: pending stays above 0 */
            if (r && queue_runner(p, r))
                break; /* this runner's count goes to the new one; l is not read again */
            if (r) {
                crew__tasks_finished(p, 0, 1, CREW__RAN); /* the count just taken */
                crew__node_release(p, r);
            }
            may_step_back = false; /* no memory: this runner carries on */
            continue;
        }
        l->head = t->crew_private_.qnext;
        if (!l->head)
            l->tail = NULL;
        unsigned more = 0;
        if (counts) {
            took = true;
            took_barrier = is_barrier(t); /* read now: t's memory may go once it has run */
            l->running = took_barrier ? LANE_EXCL : l->running + 1;
            if (after_barrier && !took_barrier)
                more = top_up_locked(l, l->head);
        }
        lane_unlock(l);
        if (more)
            start_more(p, l, more);
        if (crew__cancelling(p)) /* relaxed: see crew_pool */
            crew__task_dropped(p, t, true);
        else
            crew__run(p, t);
    }
    tls_lane = frame.up;
}

/* The lane kind's drop (kind.h): a queued runner of lane arg was dropped (by_shutdown: a
 * cancelling shutdown; else a full queue's CREW_FULL_DROP_OLDEST): the tasks waiting in its
 * lane are dropped with it, each reported as any dropped task (crew__task_dropped with the same
 * by_shutdown). */
static void runner_dropped(crew_pool *p, void *arg, uint32_t slot, bool by_shutdown) {
    crew__unused(slot);
    crew_lane *l = arg;
    lane_frame frame = {l, tls_lane};
    tls_lane = &frame;
    /* The waiting tasks and the runner's place in the count leave together: a task submitted
     * while they are dropped (an on_drop may resubmit) starts a runner of its own instead of
     * joining the tasks this dropped runner took with it. */
    lane_lock(l);
    crew_task *t = l->head;
    l->head = l->tail = NULL;
    lane_waiter *w = leave_locked(l);
    lane_unlock(l);
    while (t) {
        crew_task *next = t->crew_private_.qnext;
        crew__task_dropped(p, t, by_shutdown);
        t = next;
    }
    wake_destroyer(p, w); /* after the drops: a destroyer may free l once woken */
    tls_lane = frame.up;
}

const crew__kind crew__lane_kind = {
    .fn = crew__lane_runner,
    .name = "lane runner",
    .dropped = runner_dropped,
};

int crew_lane_create(crew_pool *p, unsigned max_concurrency, crew_lane **out) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_lane_create: the pool is NULL");
    if (!out)
        return crew__fail(CREW_EINVAL, "crew_lane_create: out is NULL");
    if (max_concurrency == 0)
        return crew__fail(CREW_EINVAL,
                          "crew_lane_create: max_concurrency is 0; a lane runs at least 1 task "
                          "at a time (1 makes a serial lane, a strand)");
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_lane_create: " CREW__FORKED_DETAIL);
    if (crew__load_seq_cst(&p->state) != CREW__OPEN) /* seq_cst: see struct crew_pool */
        return crew__fail(CREW_ESHUTDOWN, "crew_lane_create: the pool is shutting down or shut "
                                          "down; it accepts no more tasks");
    crew_lane *l = calloc(1, sizeof *l);
    if (!l)
        return crew__fail(CREW_ENOMEM, "crew_lane_create: out of memory for the lane");
    l->pool = p;
    crew__spinlock_init(&l->lock);
    l->max = max_concurrency;
    crew__atomic_init(&l->graph_nodes, 0u);
    *out = l;
    return CREW_OK;
}

int crew_lane_barrier(crew_lane *l, crew_fn fn, void *arg, crew_handle *group) {
    return crew__lane_submit(l, fn, arg, group, true, "crew_lane_barrier");
}

/* wait_for_runners' look (lock held): the last runner has left. */
static bool runners_gone(void *ctx) {
    return crew__load_acquire(&((lane_waiter *)ctx)->done); /* acquire: see lane_waiter */
}

/* Wait until w is done. From a task of the pool (a runner of the lane may be queued behind
 * the very task that waits, on the only worker) or its on_start or on_stop (which may hold up
 * the only worker), the caller helps as a waiter for a quiet pool would (crew__help_until):
 * it runs queued tasks meanwhile, and sleeps when there are none until a task is queued or the
 * last runner leaves; from any other thread, it sleeps until the last runner leaves. */
static void wait_for_runners(crew_pool *p, lane_waiter *w) {
    if (crew__in_task_of(p) || crew__tls_hook == p) {
        crew__help_until(p, &w->done, &w->ec);
        return;
    }
    pthread_mutex_lock(&p->lock);
    crew__ec_wait_for(&w->ec, &p->lock, runners_gone, w, NULL);
    pthread_mutex_unlock(&p->lock);
}

int crew_lane_destroy(crew_lane *l) {
    if (!l)
        return CREW_OK;
    crew_pool *p = l->pool;
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_lane_destroy: " CREW__FORKED_DETAIL);
    for (const lane_frame *f = tls_lane; f; f = f->up)
        if (f->lane == l)
            return crew__fail(CREW_EDEADLK,
                              "crew_lane_destroy: called from a task of the lane itself, which "
                              "cannot finish before this call returns; destroy it from "
                              "elsewhere");
    uint32_t held = crew__load_acquire(&l->graph_nodes); /* acquire: see crew_lane */
    if (held != 0)
        return crew__fail(CREW_EBUSY,
                          "crew_lane_destroy: %u node(s) of task graphs run in this lane "
                          "(crew_graph_node_lane); take them out of it (a NULL lane) or destroy "
                          "their graphs first",
                          held);
    lane_waiter w;
    crew__ec_init(&w.ec);
    crew__atomic_init(&w.done, false);
    lane_lock(l);
    bool idle = l->active == 0;
    crew__assert(!idle || l->head == NULL); /* a waiting task always has a runner */
    if (!idle)
        l->destroyer = &w;
    lane_unlock(l);
    if (!idle)
        wait_for_runners(p, &w);
    free(l);
    return CREW_OK;
}
