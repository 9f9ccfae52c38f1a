/*
 * sched_per_worker.c -- PER_WORKER: one priority queue per worker, no stealing (the second
 * design of the thread-pool study in docs/references.md). Submissions from outside are spread
 * round-robin over the running workers, an array in as many contiguous batches as there are
 * workers (Xu & Bode); a task submitted by a task goes to its own worker's queue. Priority order
 * holds within each worker's queue. A worker takes from its own queue only; waiters, and a
 * worker that resize marked, take from any. A leaving worker closes its queue and hands its
 * tasks to a running worker.
 */
#include <stddef.h>
#include <stdlib.h>

#include "pool.h"
#include "schedule.h"

/* PER_WORKER's state (crew__sched.state): where the round robin stands. */
typedef struct pw_state {
    /* Relaxed: spreads submissions, orders nothing. A line of its own: every submission from
     * outside increments it. */
    _Alignas(64) atomic_uint rr;
} pw_state;

/* Its part of each worker record (crew__worker.sched): the worker's queue. */
typedef struct pw_local {
    crew__lq *queue;
} pw_local;
crew__sched_local_fits(pw_local);

static inline atomic_uint *rr_of(crew_pool *p) { return &((pw_state *)p->sched.state)->rr; }
static inline crew__lq *queue_of(crew__worker *w) { return ((pw_local *)w->sched.bytes)->queue; }

static int init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    crew__unused(cfg);
    crew__unused(threads);
    crew__atomic_init(rr_of(p), 0u);
    return CREW_OK;
}

static int worker_init(crew_pool *p, crew__worker *w) {
    pw_local *l = (pw_local *)w->sched.bytes;
    l->queue = aligned_alloc(64, sizeof *l->queue);
    if (!l->queue)
        return CREW_ENOMEM;
    if (crew__lq_init(l->queue, &p->groups, p->sched.lock_spin, false) != CREW_OK) {
        free(l->queue);
        l->queue = NULL;
        return CREW_ENOMEM;
    }
    return CREW_OK;
}

static void worker_free(crew_pool *p, crew__worker *w) {
    crew__unused(p);
    pw_local *l = (pw_local *)w->sched.bytes;
    if (l->queue) {
        crew__lq_free(l->queue);
        free(l->queue);
        l->queue = NULL;
    }
}

static void worker_open(crew__worker *w, bool open) { crew__lq_set_closed(queue_of(w), !open); }

/* Only a worker whose own queue has work can run it (relaxed: a hint, see crew__lq). */
static bool has_work_for(crew_pool *p, crew__worker *w) {
    crew__unused(p);
    return crew__lq_len(queue_of(w)) != 0;
}

/* Relaxed: a worker's state is a hint here; a closed queue refuses a push under its lock. */
static inline bool running(const crew__worker *w) {
    return crew__load_relaxed(&w->state) == CREW__W_RUNNING;
}

static int push(crew_pool *p, crew__worker *self, crew_task *t, size_t n) {
    if (self && running(self) && crew__lq_push_n(queue_of(self), t, n) == CREW_OK)
        return CREW_OK;
    crew__lq *q[CREW__LQ_SPREAD_MAX];
    for (unsigned round = 0;; round++) {
        unsigned nw = crew__nworkers(p), m = 0;
        unsigned start = crew__fetch_add_relaxed(rr_of(p), 1u); /* relaxed: see pw_state */
        for (unsigned i = 0; i < nw && m < CREW__LQ_SPREAD_MAX && m < n; i++) {
            crew__worker *v = crew__worker_at(p, (start + i) % nw);
            if (running(v))
                q[m++] = queue_of(v);
        }
        if (m == 0)
            return CREW_ESHUTDOWN;
        int rc = m == 1 ? crew__lq_push_n(q[0], t, n) : crew__lq_push_spread(q, m, t, n);
        /* A target closed between the hint and the push (its worker was leaving): try the
         * others, a bounded number of times (each round sees one fewer running worker). */
        if (rc != CREW_ESHUTDOWN || round >= CREW_MAX_THREADS)
            return rc;
    }
}

/* Every queue of every worker in turn, from a random one (for helpers). */
static crew_task *take_any(crew_pool *p) {
    unsigned nw = crew__nworkers(p);
    unsigned start = nw ? crew__rand_below(nw) : 0;
    for (unsigned i = 0; i < nw; i++) {
        crew_task *t = crew__lq_take(queue_of(crew__worker_at(p, (start + i) % nw)));
        if (t)
            return t;
    }
    return NULL;
}

static crew_task *take(crew_pool *p, crew__worker *self, crew__take_ctx *tc) {
    crew__unused(tc);
    if (self) { /* its own queue; a marked worker may also help with the others' */
        crew_task *t = crew__lq_take(queue_of(self));
        if (t || running(self))
            return t;
    }
    return take_any(p);
}

static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    crew_task *t = NULL;
    for (unsigned i = 0, nw = crew__nworkers(p);
         i < nw && !t && crew__lq_scattered(&p->groups, slot); i++)
        t = crew__lq_take_group(queue_of(crew__worker_at(p, i)), slot);
    return t;
}

static crew_task *take_group(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark,
                             crew__take_ctx *tc) {
    crew__unused(mark);
    crew__unused(tc);
    if (!crew__lq_scattered(&p->groups, slot))
        return NULL;
    crew_task *t = self ? crew__lq_take_group(queue_of(self), slot) : NULL;
    return t ? t : take_locked_group(p, slot);
}

static int requeue(crew_pool *p, crew__worker *self, crew_task *t) {
    return crew__lq_requeue(self ? queue_of(self) : queue_of(crew__worker_at(p, 0)), t);
}

/* Close first, so no push lands after the move; then hand each task to a running worker's
 * queue, or leave the rest here, visible to helpers, if none takes pushes. One target queue at
 * a time (the next running worker's), not a round-robin push per task: a long backlog moves in
 * two lock operations a task. */
static int worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan) {
    crew_task *t;
    crew__lq_set_closed(queue_of(w), true);
    unsigned nw = crew__nworkers(p), k = crew__fetch_add_relaxed(rr_of(p), 1u), tries = 0;
    crew__lq *target = NULL;
    while ((t = crew__lq_take(queue_of(w))) != NULL) {
        int rc = target ? crew__lq_push_n(target, t, 1) : CREW_ESHUTDOWN;
        while (rc == CREW_ESHUTDOWN && tries < nw) { /* no target yet, or it closed */
            crew__worker *v = crew__worker_at(p, k++ % nw);
            tries++;
            if (v != w && running(v)) {
                target = queue_of(v);
                rc = crew__lq_push_n(target, t, 1);
            }
        }
        if (rc == CREW_OK) {
            ++*moved;
            continue;
        }
        if (crew__lq_requeue(queue_of(w), t) != CREW_OK)
            *orphan = t;
        if (rc == CREW_ESHUTDOWN && !*orphan)
            break; /* no running worker: the rest stay here, visible to helpers */
        crew__lq_set_closed(queue_of(w), false); /* out of memory: stay and work */
        return CREW_ENOMEM;
    }
    return CREW_OK;
}

const crew__sched_ops crew__sched_per_worker = {
    .name = "per-worker",
    .what = "a queue per worker",
    .any_worker = false,
    .state_size = sizeof(pw_state),
    .init = init, /* no free: the queues go with the workers */
    .worker_init = worker_init,
    .worker_free = worker_free,
    .worker_open = worker_open,
    .has_work_for = has_work_for,
    .push = push,
    .take = take,
    .take_group = take_group,
    .requeue = requeue,
    .worker_exit = worker_exit,
    .take_any = take_any,
    .take_locked_group = take_locked_group,
    /* No queue but the workers' own: schedule.c walks them (no queued, no visit). */
    .own = {.what = "the queue of worker", .at = offsetof(pw_local, queue), .by_pointer = true},
};
