/*
 * sched_steal.c -- STEAL (the default): a Chase-Lev deque per worker (deque.c), external
 * submission slots, and one injection queue, a priority queue like SHARED's.
 *
 * A task submitted by a task goes to its worker's deque (LIFO for the owner, FIFO for thieves).
 * A thread that is not a worker pushes priority-0 tasks (the highest priority, and the default)
 * into one of CREW__EXT_SLOTS Chase-Lev deques, chosen per thread, whose owner side (push, and
 * the pop of a waiting submitter) is serialised by a spinlock that one submitting thread keeps
 * in its cache; workers steal from the top without a lock, oldest first (a batch at a time
 * when the backlog is long: claim_batch). So one thread's
 * priority-0 submissions run in FIFO order, as from the injection queue, but a submission costs
 * no shared lock and no heap operation (oneTBB gives external threads a slot of their own in
 * the same spirit). Other priorities go to the injection queue.
 *
 * A worker takes from its deque, except that when a slot or the injection queue holds a
 * strictly higher priority than the task it popped it takes that one first (so a priority-0
 * task never waits behind a backlog of lower-priority local work); then the slots, oldest
 * first, a batch at a time when a slot's backlog is long (claim_batch); then a batch from the
 * injection queue; then it steals from the other workers, starting at a random one.
 *
 * A crew_submit task of priority 0 (from outside, into a slot) or of any priority (from a worker,
 * into its deque) is held in the deque by value (deque.h): no node. A take copies it into the
 * taking thread's buffer (taken, below), valid until that thread's next take; putting such a
 * copy back pushes it by value, or gives it a node (crew__task_keep) for a locked queue.
 */
#include <stdlib.h>

#include "debug.h"
#include "pool.h"
#include "schedule.h"
#include "worker.h"

static int init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    crew__unused(threads);
    crew__sched *s = &p->sched;
    if (crew__sched_central_init(p, cfg->lock == CREW_LOCK_SPIN) != CREW_OK)
        return CREW_ENOMEM;
    s->ext = aligned_alloc(64, CREW__EXT_SLOTS * sizeof *s->ext);
    if (!s->ext)
        return CREW_ENOMEM;
    for (s->ext_ready = 0; s->ext_ready < CREW__EXT_SLOTS; s->ext_ready++) {
        crew__ext *x = &s->ext[s->ext_ready];
        crew__spinlock_init(&x->lock);
        crew__atomic_init(&x->claimers, 0u);
        if (crew__deque_init(&x->deque) != CREW_OK)
            return CREW_ENOMEM;
    }
    return CREW_OK;
}

static void free_queues(crew_pool *p) {
    crew__sched *s = &p->sched;
    for (unsigned i = 0; i < s->ext_ready; i++)
        crew__deque_free(&s->ext[i].deque);
    free(s->ext);
    s->ext = NULL;
    s->ext_ready = 0;
    crew__sched_central_free(p);
}

static int worker_init(crew_pool *p, crew__worker *w) {
    crew__unused(p);
    return crew__deque_init(&w->deque);
}

static void worker_free(crew_pool *p, crew__worker *w) {
    crew__unused(p);
    crew__deque_free(&w->deque);
}

/* The calling thread's copy of the last task it took that a deque held by value. Its next take
 * may overwrite it: by then the task has started (crew__run copies what it needs first) or has
 * been put back. */
static CREW__TLS crew_task taken;

/* ---- External submission slots ---- */

static inline crew__ext *ext_of_thread(crew_pool *p) {
    return &p->sched.ext[crew__thread_number() % CREW__EXT_SLOTS];
}

static int push_external(crew_pool *p, crew_task *t, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (t[i].priority != 0)
            return crew__lq_push_n(p->sched.central, t, n);
    crew__ext *x = ext_of_thread(p);
    crew__spinlock_acquire(&x->lock);
    int rc = n == 1 ? crew__deque_push1(&x->deque, t) : crew__deque_push(&x->deque, t, n);
    crew__spinlock_release(&x->lock);
    return rc;
}

/* A crew_submit task by value: into the caller's deque (a worker) or its slot (priority 0);
 * other priorities from outside go to the injection queue, in a node. */
static int push_value(crew_pool *p, crew__worker *self, crew_fn fn, void *arg, uint32_t priority,
                      uint32_t slot) {
    uint64_t aux = crew__deque_aux(slot, priority);
    /* Relaxed: the owner's own state (see push). */
    if (self && crew__load_relaxed(&self->state) != CREW__W_EXITED)
        return crew__deque_push_value(&self->deque, fn, arg, aux);
    if (priority == 0) {
        crew__ext *x = ext_of_thread(p);
        crew__spinlock_acquire(&x->lock);
        int rc = crew__deque_push_value(&x->deque, fn, arg, aux);
        crew__spinlock_release(&x->lock);
        return rc;
    }
    crew_task *t = crew__node_of(p, fn, arg, priority, slot);
    if (!t)
        return CREW_ENOMEM;
    int rc = crew__lq_push_n(p->sched.central, t, 1);
    if (rc != CREW_OK)
        crew__node_release(p, t);
    return rc;
}

#define EXT_BATCH 16u /* most tasks a worker claims from a slot at a time */

/* The batch worker w claims from a slot that holds len tasks: none (0: one steal) unless w
 * runs no task (its main loop: a waiter inside a task takes one at a time), is not marked to
 * leave (resize), and tasks are not timed (autosize reads each task's times as it starts; a
 * batch would have them wait in one worker's deque instead); then an equal share of the
 * backlog for this worker and each of the others, at most EXT_BATCH, at least 2. */
static inline size_t batch_size(crew_pool *p, crew__worker *w, size_t len) {
    /* Relaxed: the timing bits (see struct crew_pool) and the worker's own state. */
    if (!w || len < 4 || crew__tls_frame || crew__load_relaxed(&p->timing) != 0 ||
        crew__load_relaxed(&w->state) != CREW__W_RUNNING)
        return 0;
    size_t n = len / (crew__nworkers(p) + 1);
    return n < 2 ? 0 : n > EXT_BATCH ? EXT_BATCH : n;
}

/* Worker w claims up to n of slot x's oldest tasks with one compare-and-swap, runs the oldest
 * and pushes the rest into its deque, where it takes them in order and idle workers can steal
 * them (newest first). A share, not the backlog: the others keep finding work in the slot. One
 * claim instead of one per task, and the producer, whose pushes read top, sees it move once a
 * batch. The slot's owner side (a waiting submitter's take) gives way to the claim while it
 * runs (x->claimers, crew__deque_steal_batch); the producer's pushes do not wait for it. */
static __attribute__((noinline)) crew_task *claim_batch(crew__worker *w, crew__ext *x, size_t n,
                                                        bool *retry) {
    crew__deque_entry e[EXT_BATCH];
    if (crew__deque_reserve(&w->deque, n - 1) != CREW_OK) /* no room: one task */
        return crew__deque_steal(&x->deque, &taken, retry);
    n = crew__deque_steal_batch(&x->deque, e, n, &x->claimers, retry);
    if (n == 0)
        return NULL;
    if (n > 1) {
        crew__deque_push_entries_reversed(&w->deque, e + 1, n - 1);
        crew__tls_pushed_back += n - 1; /* others may steal them: wake a sleeper */
    }
    return crew__deque_entry_task(&e[0], &taken);
}

/* Steal the oldest task of any slot (a batch of them for a worker, batch_size), starting with
 * the one that last had work for this thread (usually the only busy one: one submitting
 * thread). w: the calling worker, or NULL. */
static inline __attribute__((always_inline)) crew_task *steal_external(crew_pool *p,
                                                                      crew__worker *w,
                                                                      bool *retry) {
    static CREW__TLS unsigned last;
    for (unsigned i = 0; i < CREW__EXT_SLOTS; i++) {
        unsigned k = (last + i) % CREW__EXT_SLOTS;
        crew__ext *x = &p->sched.ext[k];
        size_t len = crew__deque_size(&x->deque), n;
        if (len != 0) {
            crew_task *t = __builtin_expect((n = batch_size(p, w, len)) != 0, 0)
                               ? claim_batch(w, x, n, retry)
                               : crew__deque_steal(&x->deque, &taken, retry);
            if (t) {
                last = k;
                return t;
            }
        }
    }
    return NULL;
}

static bool external_queued(crew_pool *p) {
    for (unsigned i = 0; i < CREW__EXT_SLOTS; i++)
        if (crew__deque_size(&p->sched.ext[i].deque) != 0)
            return true;
    return false;
}

/* A waiting submitter: the newest task of its own slot if it is of group slot. */
static crew_task *take_external_group(crew_pool *p, uint32_t slot) {
    crew__ext *x = ext_of_thread(p);
    if (crew__deque_size(&x->deque) == 0)
        return NULL;
    crew__spinlock_acquire(&x->lock);
    /* NULL also while a worker claims a batch (claim_batch): the waiter looks again. */
    crew_task *t = crew__deque_take_unless(&x->deque, &taken, &x->claimers);
    if (t && t->crew_private_.slot != slot) {
        int rc = crew__deque_push1(&x->deque, t); /* its place is free: */
        crew__assert(rc == CREW_OK);
        crew__tls_pushed_back++;
        t = NULL;
    }
    crew__spinlock_release(&x->lock);
    return t;
}

static int push(crew_pool *p, crew__worker *self, crew_task *t, size_t n) {
    /* Relaxed: the owner's own state. A marked worker still pushes locally: it drains its
     * deque into the injection queue before it exits. */
    if (self && crew__load_relaxed(&self->state) != CREW__W_EXITED)
        return n == 1 ? crew__deque_push1(&self->deque, t) : crew__deque_push(&self->deque, t, n);
    return push_external(p, t, n);
}

/* Steal one task from another worker's deque, starting at a random one. *retry is set if a
 * race was lost (a task may remain). */
static crew_task *steal_any(crew_pool *p, crew__worker *self, bool *retry) {
    unsigned nw = crew__nworkers(p);
    if (nw == 0)
        return NULL;
    unsigned start = crew__rand_below(nw);
    for (unsigned i = 0; i < nw; i++) {
        crew__worker *v = crew__worker_at(p, (start + i) % nw);
        if (v == self || crew__deque_size(&v->deque) == 0)
            continue;
        crew_task *t = crew__deque_steal(&v->deque, &taken, retry);
        if (t) {
            if (self) /* relaxed: only this worker writes it; statistics read it */
                crew__store_relaxed(&self->stolen, crew__load_relaxed(&self->stolen) + 1);
            return t;
        }
    }
    return NULL;
}

#define INJECT_BATCH 32u /* most tasks a worker moves from the injection queue at a time */

/* A worker: take a batch of the injection queue's best tasks (all of one priority, at most
 * INJECT_BATCH and at most half of what is queued), run the oldest, and push the rest into its
 * deque, oldest at the bottom, so that it runs them in FIFO order and thieves take the newest.
 * One lock hold serves many tasks: the lock no longer bounces between the workers and the
 * submitting thread on every task. */
static crew_task *take_injected(crew_pool *p, crew__worker *w) {
    crew__lq *q = p->sched.central;
    if (crew__lq_len(q) == 0)
        return NULL;
    crew_task *batch[INJECT_BATCH];
    /* Room for the batch first, so the push below cannot fail (else: one task, no batch). */
    size_t room = crew__deque_reserve(&w->deque, INJECT_BATCH) == CREW_OK ? INJECT_BATCH : 1;
    size_t n = crew__lq_take_batch(q, batch, room);
    if (n == 0)
        return NULL;
    if (n > 1) { /* newest first, so the oldest ends at the bottom (room was reserved) */
        crew_task *rev[INJECT_BATCH];
        for (size_t i = 1; i < n; i++)
            rev[i - 1] = batch[n - i];
        int rc = crew__deque_push_ptrs(&w->deque, rev, n - 1);
        crew__assert(rc == CREW_OK); /* room was reserved */
        crew__tls_pushed_back += n - 1; /* others may steal them: wake a sleeper */
    }
    return batch[0];
}

/* Worker w took t, of priority above 0, from its deque: a task queued from outside with a
 * strictly higher priority instead, t going back, if there is one; else t. Out of line: most
 * tasks have priority 0. */
static __attribute__((noinline)) crew_task *better_than(crew_pool *p, crew__worker *w,
                                                        crew_task *t, bool *retry) {
    crew_task *u = NULL, keep = *t; /* a steal below may overwrite taken */
    if (external_queued(p))
        u = steal_external(p, NULL, retry); /* one task: t goes back on top of w's deque */
    /* A hint; the worst a stale value does is one task's order. */
    if (!u && crew__lq_top(p->sched.central) < t->priority)
        u = crew__lq_take(p->sched.central);
    if (!u)
        return t; /* no steal succeeded: taken, if t is it, is intact */
    int rc = crew__deque_push1(&w->deque, t == &taken ? &keep : t); /* t's place is free: */
    crew__assert(rc == CREW_OK);
    crew__tls_pushed_back++;
    return u;
}

static crew_task *take(crew_pool *p, crew__worker *w, bool *retry) {
    crew_task *t;
    if (w && (t = crew__deque_take(&w->deque, &taken)) != NULL)
        return __builtin_expect(t->priority != 0, 0) ? better_than(p, w, t, retry) : t;
    if ((t = steal_external(p, w, retry)) != NULL)
        return t;
    if ((t = w ? take_injected(p, w) : crew__lq_take(p->sched.central)) != NULL)
        return t;
    return steal_any(p, w, retry);
}

static crew_task *take_group(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark) {
    crew_task *t = NULL;
    /* The tasks this task (and tasks it helped with) pushed sit above mark in our deque: our
     * own descendants, newest first. Relaxed: the owner's own bottom. */
    if (self && crew__load_relaxed(&self->deque.bottom) > mark)
        t = crew__deque_take(&self->deque, &taken);
    else if (!self)
        t = take_external_group(p, slot);
    return t ? t : crew__lq_take_group(p->sched.central, slot);
}

static int requeue(crew_pool *p, crew__worker *self, crew_task *t) {
    crew__unused(self);
    return crew__lq_requeue(p->sched.central, t);
}

static int worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan) {
    crew_task *t;
    while ((t = crew__deque_take(&w->deque, &taken)) != NULL) {
        /* Into the injection queue (requeue, below), a task held by value in a node. */
        if (crew__sched_requeue(p, t) != CREW_OK) {
            *orphan = t;
            return CREW_ENOMEM;
        }
        ++*moved;
    }
    return CREW_OK;
}

static crew_task *take_any(crew_pool *p) {
    bool retry;
    crew_task *t;
    do {
        retry = false;
        t = steal_external(p, NULL, &retry);
        if (!t)
            t = crew__lq_take(p->sched.central);
        if (!t)
            t = steal_any(p, NULL, &retry);
    } while (!t && retry);
    return t;
}

static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    return crew__lq_take_group(p->sched.central, slot);
}

static size_t queued(crew_pool *p) {
    size_t n = crew__lq_len(p->sched.central);
    for (unsigned i = 0; i < CREW__EXT_SLOTS; i++)
        n += crew__deque_size(&p->sched.ext[i].deque);
    for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++)
        n += crew__deque_size(&crew__worker_at(p, i)->deque);
    return n;
}

static void visit(crew_pool *p, crew__queue_visitor fn, void *ctx) {
    crew__sched_visit_lq(p->sched.central, "the injection queue", -1, fn, ctx);
    for (unsigned i = 0; i < CREW__EXT_SLOTS; i++)
        crew__sched_visit_deque(&p->sched.ext[i].deque, "external submission slot", (int)i, fn,
                                ctx);
    for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++) {
        crew__worker *w = crew__worker_at(p, i);
        crew__sched_visit_deque(&w->deque, "the deque of worker", (int)w->index, fn, ctx);
    }
}

const crew__sched_ops crew__sched_steal = {
    .name = "steal",
    .what = "work stealing",
    .any_worker = true,
    .init = init,
    .free = free_queues,
    .worker_init = worker_init,
    .worker_free = worker_free,
    .push = push,
    .push_value = push_value,
    .take = take,
    .take_group = take_group,
    .marks = true,
    .requeue = requeue,
    .worker_exit = worker_exit,
    .take_any = take_any,
    .take_locked_group = take_locked_group,
    .queued = queued,
    .visit = visit,
};
