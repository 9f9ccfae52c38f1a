/*
 * sched_per_worker.c -- PER_WORKER: one priority queue per worker, no stealing (the second
 * design of the thread-pool study in docs/references.md). Submissions from outside are spread
 * round-robin over the running workers, an array in as many contiguous batches as there are
 * workers (Xu & Bode); a task submitted by a task goes to its own worker's queue. Priority order
 * holds within each worker's queue. A worker takes from its own queue only; waiters, and a
 * worker that resize marked, take from any. A leaving worker closes its queue and hands its
 * tasks to a running worker.
 */
#include <stdlib.h>

#include "pool.h"
#include "schedule.h"

static int init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    crew__unused(p);
    crew__unused(cfg);
    crew__unused(threads);
    return CREW_OK;
}

static void free_nothing(crew_pool *p) { crew__unused(p); } /* the queues go with the workers */

static int worker_init(crew_pool *p, crew__worker *w) {
    w->queue = aligned_alloc(64, sizeof *w->queue);
    if (!w->queue)
        return CREW_ENOMEM;
    if (crew__lq_init(w->queue, &p->groups, p->sched.lock_spin, false) != CREW_OK) {
        free(w->queue);
        w->queue = NULL;
        return CREW_ENOMEM;
    }
    return CREW_OK;
}

static void worker_free(crew_pool *p, crew__worker *w) {
    crew__unused(p);
    if (w->queue) {
        crew__lq_free(w->queue);
        free(w->queue);
        w->queue = NULL;
    }
}

static void worker_open(crew__worker *w, bool open) { crew__lq_set_closed(w->queue, !open); }

/* Relaxed: a worker's state is a hint here; a closed queue refuses a push under its lock. */
static inline bool running(const crew__worker *w) {
    return crew__load_relaxed(&w->state) == CREW__W_RUNNING;
}

static int push(crew_pool *p, crew__worker *self, crew_task *t, size_t n) {
    if (self && running(self) && crew__lq_push_n(self->queue, t, n) == CREW_OK)
        return CREW_OK;
    crew__lq *q[CREW__LQ_SPREAD_MAX];
    for (unsigned round = 0;; round++) {
        unsigned nw = crew__nworkers(p), m = 0;
        /* Relaxed: spreads submissions, orders nothing. */
        unsigned start = crew__fetch_add_relaxed(&p->rr, 1u);
        for (unsigned i = 0; i < nw && m < CREW__LQ_SPREAD_MAX && m < n; i++) {
            crew__worker *v = crew__worker_at(p, (start + i) % nw);
            if (running(v))
                q[m++] = v->queue;
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
        crew_task *t = crew__lq_take(crew__worker_at(p, (start + i) % nw)->queue);
        if (t)
            return t;
    }
    return NULL;
}

static crew_task *take(crew_pool *p, crew__worker *self, bool *retry) {
    crew__unused(retry);
    if (self) { /* its own queue; a marked worker may also help with the others' */
        crew_task *t = crew__lq_take(self->queue);
        if (t || running(self))
            return t;
    }
    return take_any(p);
}

static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    crew_task *t = NULL;
    for (unsigned i = 0, nw = crew__nworkers(p);
         i < nw && !t && crew__lq_scattered(&p->groups, slot); i++)
        t = crew__lq_take_group(crew__worker_at(p, i)->queue, slot);
    return t;
}

static crew_task *take_group(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark) {
    crew__unused(mark);
    if (!crew__lq_scattered(&p->groups, slot))
        return NULL;
    crew_task *t = self ? crew__lq_take_group(self->queue, slot) : NULL;
    return t ? t : take_locked_group(p, slot);
}

static int requeue(crew_pool *p, crew__worker *self, crew_task *t) {
    return crew__lq_requeue(self ? self->queue : crew__worker_at(p, 0)->queue, t);
}

/* Close first, so no push lands after the move; then hand each task to a running worker's
 * queue, or leave the rest here, visible to helpers, if none takes pushes. One target queue at
 * a time (the next running worker's), not a round-robin push per task: a long backlog moves in
 * two lock operations a task. */
static int worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan) {
    crew_task *t;
    crew__lq_set_closed(w->queue, true);
    unsigned nw = crew__nworkers(p), k = crew__fetch_add_relaxed(&p->rr, 1u), tries = 0;
    crew__lq *target = NULL;
    while ((t = crew__lq_take(w->queue)) != NULL) {
        int rc = target ? crew__lq_push_n(target, t, 1) : CREW_ESHUTDOWN;
        while (rc == CREW_ESHUTDOWN && tries < nw) { /* no target yet, or it closed */
            crew__worker *v = crew__worker_at(p, k++ % nw);
            tries++;
            if (v != w && running(v)) {
                target = v->queue;
                rc = crew__lq_push_n(target, t, 1);
            }
        }
        if (rc == CREW_OK) {
            ++*moved;
            continue;
        }
        if (crew__lq_requeue(w->queue, t) != CREW_OK)
            *orphan = t;
        if (rc == CREW_ESHUTDOWN && !*orphan)
            break; /* no running worker: the rest stay here, visible to helpers */
        crew__lq_set_closed(w->queue, false); /* out of memory: stay and work */
        return CREW_ENOMEM;
    }
    return CREW_OK;
}

static size_t queued(crew_pool *p) {
    size_t n = 0;
    for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++)
        n += crew__lq_len(crew__worker_at(p, i)->queue);
    return n;
}

static void visit(crew_pool *p, crew__queue_visitor fn, void *ctx) {
    for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++) {
        crew__worker *w = crew__worker_at(p, i);
        crew__sched_visit_lq(w->queue, "the queue of worker", (int)w->index, fn, ctx);
    }
}

const crew__sched_ops crew__sched_per_worker = {
    .name = "per-worker",
    .what = "a queue per worker",
    .any_worker = false,
    .init = init,
    .free = free_nothing,
    .worker_init = worker_init,
    .worker_free = worker_free,
    .worker_open = worker_open,
    .push = push,
    .take = take,
    .take_group = take_group,
    .requeue = requeue,
    .worker_exit = worker_exit,
    .take_any = take_any,
    .take_locked_group = take_locked_group,
    .queued = queued,
    .visit = visit,
};
