/*
 * sched.c -- the scheduling strategies behind one small interface (crew_config.scheduler):
 * where a submitted task is queued, and where a thread looking for work takes one.
 *
 *   SHARED            one priority queue (prioq.c) under one lock, mutex or spinlock (seed 000
 *                     §III-B; seed 002's lock option). Strict order: highest priority first,
 *                     FIFO among equals.
 *   SHARED_LOCKFREE   a MultiQueue (Rihani, Sanders and Dementiev, "MultiQueues: Simple Relaxed
 *                     Concurrent Priority Queues", SPAA 2015): 2 x max(threads, cores) priority
 *                     queues, each under its own try-lock. A push goes to a random queue; a take
 *                     looks at two random queues and pops from the one whose best task has the
 *                     higher priority. No thread ever waits for a lock held by another (try-locks
 *                     only on the fast path), and the order is relaxed: the task taken is among
 *                     the best O(queues) queued ones, in expectation (the paper's rank bound);
 *                     FIFO among equals holds within each queue.
 *   PER_WORKER        one priority queue per worker, no stealing (seed 004's second design).
 *                     Submissions from outside are spread round-robin over the running workers,
 *                     an array in as many contiguous batches as there are workers (seed 002 §V-A);
 *                     a task submitted by a task goes to its own worker's queue. Priority order
 *                     holds within each worker's queue.
 *   STEAL (default)   a Chase-Lev deque per worker (deque.c) and one injection queue, a priority
 *                     queue like SHARED's. A task submitted by a task goes to its worker's deque
 *                     (LIFO for the owner, FIFO for thieves); other submissions go to the
 *                     injection queue. A worker takes from its deque, except that when the
 *                     injection queue holds a strictly higher priority than the task it popped it
 *                     takes that one first (so a priority-0 task never waits behind a backlog of
 *                     lower-priority local work); then the injection queue; then it steals from
 *                     the other workers, starting at a random one.
 *
 * Every queue is a crew__lq: a prioq.c heap under a crew__lock, with its length and best
 * priority mirrored in relaxed atomics so that empty queues are skipped without the lock. The
 * pool's central queue (SHARED's, STEAL's injection queue) also keeps each group's queued tasks
 * in a list, so a waiter takes its own group's newest task in O(1); the many small queues of
 * PER_WORKER and SHARED_LOCKFREE search their levels instead (only waiters that may not help
 * generally do that, see wait.c).
 *
 * A thread that finds nothing may sleep (worker.c). It can miss no task because every push
 * stores the queue's new length (or the deque's bottom) before a seq_cst fence and then reads
 * the sleeper count, while a sleeper increments that count, fences, and then tries every queue
 * once more (Dekker's pattern): one of the two sees the other.
 */
#include <stdlib.h>

#include "atomic.h"
#include "internal.h"

/* ---------------------------------------------------------------------------------------------
 * Random numbers for victim and queue choice: a per-thread xorshift (no shared state).
 * ------------------------------------------------------------------------------------------- */
static CREW__TLS uint32_t tls_rng;

static inline uint32_t rnd(void) {
    uint32_t x = tls_rng;
    if (x == 0)
        x = (uint32_t)(uintptr_t)&tls_rng | 1u;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    tls_rng = x;
    return x;
}

static inline uint32_t rnd_below(uint32_t n) { return (uint32_t)(((uint64_t)rnd() * n) >> 32); }

/* ---------------------------------------------------------------------------------------------
 * crew__lq: a priority queue under a lock.
 * ------------------------------------------------------------------------------------------- */
static int lq_init(crew__lq *q, bool spin, bool groups) {
    q->q = (crew__prioq){0};
    crew__atomic_init(&q->n, 0);
    crew__atomic_init(&q->top, UINT32_MAX);
    q->groups = groups;
    q->closed = false;
    return crew__lock_init(&q->lock, spin) == 0 ? CREW_OK : CREW_ENOMEM;
}

static void lq_free(crew__lq *q) {
    crew__prioq_free(&q->q);
    crew__lock_destroy(&q->lock);
}

/* Mirror the length and best priority for lock-free readers. Lock held. */
static inline void lq_publish(crew__lq *q) {
    /* Relaxed: hints read without the lock; a reader that must not miss a task (a thread about
     * to sleep) orders its read with a seq_cst fence against the pusher's (see above). */
    crew__store_relaxed(&q->n, q->q.n);
    crew__store_relaxed(&q->top, crew__prioq_top(&q->q));
}

static inline size_t lq_len(crew__lq *q) { return crew__load_relaxed(&q->n); } /* hint */

/* Link t into its group's list of queued tasks (central queue only). Lock held. */
static void group_link(crew_pool *p, crew_task *t) {
    uint32_t slot = t->crew_private_.slot;
    t->crew_private_.gprev = NULL;
    t->crew_private_.gnext = NULL;
    if (slot == 0)
        return;
    crew__slot *sl = crew__slot_at(&p->groups, slot);
    t->crew_private_.gnext = sl->queued;
    if (sl->queued)
        sl->queued->crew_private_.gprev = t;
    sl->queued = t;
}

static void group_unlink(crew_pool *p, crew_task *t) {
    uint32_t slot = t->crew_private_.slot;
    if (slot == 0)
        return;
    crew_task *prev = t->crew_private_.gprev, *next = t->crew_private_.gnext;
    if (prev)
        prev->crew_private_.gnext = next;
    else
        crew__slot_at(&p->groups, slot)->queued = next;
    if (next)
        next->crew_private_.gprev = prev;
}

/* Queues without group lists count, per group, the tasks they hold (crew__slot.scattered), so
 * a waiter searches them only when its group has a task queued there. */
static inline void scatter(crew_pool *p, const crew_task *t, int d) {
    uint32_t slot = t->crew_private_.slot;
    if (slot != 0) /* relaxed: a count ordered by the queue's lock and the sleep protocol */
        crew__fetch_add_relaxed(&crew__slot_at(&p->groups, slot)->scattered, (unsigned)d);
}

static inline bool scattered(crew_pool *p, uint32_t slot) {
    return crew__load_relaxed(&crew__slot_at(&p->groups, slot)->scattered) != 0; /* a hint */
}

static void lq_remove_locked(crew_pool *p, crew__lq *q, crew_task *t) {
    crew__prioq_remove(&q->q, t);
    if (q->groups)
        group_unlink(p, t);
    else
        scatter(p, t, -1);
}

static crew_task *lq_pop_locked(crew_pool *p, crew__lq *q) {
    crew_task *t = q->q.nlevels ? q->q.heap[0]->head : NULL;
    if (t)
        lq_remove_locked(p, q, t);
    return t;
}

/* Push n tasks, all or nothing. CREW_OK, CREW_ENOMEM, or CREW_ESHUTDOWN if q is closed. */
static int lq_push_n(crew_pool *p, crew__lq *q, crew_task *t, size_t n) {
    crew__lock_acquire(&q->lock);
    if (q->closed) {
        crew__lock_release(&q->lock);
        return CREW_ESHUTDOWN;
    }
    for (size_t i = 0; i < n; i++) {
        if (crew__prioq_push(&q->q, &t[i]) != CREW_OK) {
            while (i-- > 0)
                lq_remove_locked(p, q, &t[i]);
            crew__lock_release(&q->lock);
            return CREW_ENOMEM;
        }
        if (q->groups)
            group_link(p, &t[i]);
        else
            scatter(p, &t[i], 1);
    }
    lq_publish(q);
    crew__lock_release(&q->lock);
    return CREW_OK;
}

static crew_task *lq_take(crew_pool *p, crew__lq *q) {
    if (lq_len(q) == 0)
        return NULL;
    crew__lock_acquire(&q->lock);
    crew_task *t = lq_pop_locked(p, q);
    if (t)
        lq_publish(q);
    crew__lock_release(&q->lock);
    return t;
}

static crew_task *lq_try_take(crew_pool *p, crew__lq *q) {
    if (lq_len(q) == 0 || !crew__lock_try(&q->lock))
        return NULL;
    crew_task *t = lq_pop_locked(p, q);
    if (t)
        lq_publish(q);
    crew__lock_release(&q->lock);
    return t;
}

/* The newest queued task of group slot in q, or NULL. */
static crew_task *lq_take_group(crew_pool *p, crew__lq *q, uint32_t slot) {
    if (lq_len(q) == 0)
        return NULL;
    crew__lock_acquire(&q->lock);
    crew_task *t = q->groups ? crew__slot_at(&p->groups, slot)->queued
                             : crew__prioq_find_newest(&q->q, slot);
    if (t) {
        lq_remove_locked(p, q, t);
        lq_publish(q);
    }
    crew__lock_release(&q->lock);
    return t;
}

/* Put back a task taken from a queue, at the front of its level. CREW_OK, or CREW_ENOMEM if
 * the level had gone and could not be made again (the caller then runs the task instead). */
static int lq_requeue(crew_pool *p, crew__lq *q, crew_task *t) {
    crew__lock_acquire(&q->lock);
    int rc = crew__prioq_push_front(&q->q, t);
    if (rc == CREW_OK) {
        if (q->groups)
            group_link(p, t);
        else
            scatter(p, t, 1);
        lq_publish(q);
    }
    crew__lock_release(&q->lock);
    return rc;
}

/* The queue operations other subsystems use (blocking.c). */
int crew__lq_init(crew__lq *q, bool spin, bool groups) { return lq_init(q, spin, groups); }
void crew__lq_free(crew__lq *q) { lq_free(q); }
int crew__lq_push_n(crew_pool *p, crew__lq *q, crew_task *t, size_t n) {
    return lq_push_n(p, q, t, n);
}
crew_task *crew__lq_take(crew_pool *p, crew__lq *q) { return lq_take(p, q); }

/* ---------------------------------------------------------------------------------------------
 * The interface.
 * ------------------------------------------------------------------------------------------- */
int crew__sched_init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    bool spin = cfg->lock == CREW_LOCK_SPIN;
    if (p->sched == CREW_SCHED_SHARED || p->sched == CREW_SCHED_STEAL) {
        p->central = aligned_alloc(64, sizeof *p->central);
        if (!p->central)
            return CREW_ENOMEM;
        if (lq_init(p->central, spin, true) != CREW_OK) {
            free(p->central);
            p->central = NULL;
            return CREW_ENOMEM;
        }
        if (p->sched == CREW_SCHED_STEAL) {
            p->ext = aligned_alloc(64, CREW__EXT_SLOTS * sizeof *p->ext);
            if (!p->ext)
                return CREW_ENOMEM;
            for (p->next = 0; p->next < CREW__EXT_SLOTS; p->next++) {
                crew__ext *x = &p->ext[p->next];
                if (crew__lock_init(&x->lock, true) != 0)
                    return CREW_ENOMEM;
                if (crew__deque_init(&x->deque) != CREW_OK) {
                    crew__lock_destroy(&x->lock);
                    return CREW_ENOMEM;
                }
            }
        }
    } else if (p->sched == CREW_SCHED_SHARED_LOCKFREE) {
        unsigned cores = crew__online_cores();
        unsigned n = 2 * (threads > cores ? threads : cores);
        if (cfg->autosize && cfg->max_threads > threads)
            n = 2 * cfg->max_threads;
        p->mq = aligned_alloc(64, n * sizeof *p->mq);
        if (!p->mq)
            return CREW_ENOMEM;
        for (p->nmq = 0; p->nmq < n; p->nmq++)
            if (lq_init(&p->mq[p->nmq], spin, false) != CREW_OK)
                return CREW_ENOMEM; /* crew__sched_free frees the ones made */
    }
    p->lock_spin = spin;
    return CREW_OK;
}

void crew__sched_free(crew_pool *p) {
    for (unsigned i = 0; i < p->next; i++) {
        crew__deque_free(&p->ext[i].deque);
        crew__lock_destroy(&p->ext[i].lock);
    }
    free(p->ext);
    p->ext = NULL;
    p->next = 0;
    if (p->central) {
        lq_free(p->central);
        free(p->central);
        p->central = NULL;
    }
    for (unsigned i = 0; i < p->nmq; i++)
        lq_free(&p->mq[i]);
    free(p->mq);
    p->mq = NULL;
    p->nmq = 0;
}

int crew__sched_worker_init(crew_pool *p, crew__worker *w) {
    if (p->sched == CREW_SCHED_STEAL)
        return crew__deque_init(&w->deque);
    if (p->sched == CREW_SCHED_PER_WORKER) {
        w->queue = aligned_alloc(64, sizeof *w->queue);
        if (!w->queue)
            return CREW_ENOMEM;
        if (lq_init(w->queue, p->lock_spin, false) != CREW_OK) {
            free(w->queue);
            w->queue = NULL;
            return CREW_ENOMEM;
        }
    }
    return CREW_OK;
}

void crew__sched_worker_free(crew_pool *p, crew__worker *w) {
    if (p->sched == CREW_SCHED_STEAL)
        crew__deque_free(&w->deque);
    if (w->queue) {
        lq_free(w->queue);
        free(w->queue);
        w->queue = NULL;
    }
}

void crew__sched_worker_open(crew__worker *w) {
    if (w->queue) {
        crew__lock_acquire(&w->queue->lock);
        w->queue->closed = false;
        crew__lock_release(&w->queue->lock);
    }
}

/* The calling thread's worker record if it is a RUNNING-or-MARKED worker of p, else NULL. */
static inline crew__worker *self_of(crew_pool *p) {
    crew__worker *w = crew__tls_worker;
    return w && w->pool == p ? w : NULL;
}

/* A push that spans several queues (arrays under PER_WORKER and SHARED_LOCKFREE) is made
 * all-or-nothing by holding every target's lock at once, taken in address order (so two such
 * pushes cannot deadlock, and single-queue operations take one lock at a time): no other thread
 * sees any of the tasks until all are in, so a failure part-way can take them all back. */
#define PUSH_TARGETS_MAX 64u

static int cmp_lq(const void *a, const void *b) {
    const crew__lq *x = *(crew__lq *const *)a, *y = *(crew__lq *const *)b;
    return x < y ? -1 : x > y;
}

/* Push t[0..n) spread in contiguous slices over the m distinct queues q[] (1 <= m <=
 * PUSH_TARGETS_MAX); closed queues are skipped. CREW_OK, CREW_ENOMEM or CREW_ESHUTDOWN (every
 * target closed). */
static int push_spread(crew_pool *p, crew__lq **q, unsigned m, crew_task *t, size_t n) {
    size_t pushed[PUSH_TARGETS_MAX] = {0}; /* tasks queued in q[i], from t + first[i] */
    size_t first[PUSH_TARGETS_MAX] = {0};
    qsort(q, m, sizeof *q, cmp_lq);
    for (unsigned i = 0; i < m; i++)
        crew__lock_acquire(&q[i]->lock);
    unsigned open = 0;
    for (unsigned i = 0; i < m; i++)
        open += !q[i]->closed;
    int rc = open ? CREW_OK : CREW_ESHUTDOWN;
    size_t done = 0, slices = open < n ? open : n;
    for (unsigned i = 0, s = 0; i < m && rc == CREW_OK && done < n; i++) {
        if (q[i]->closed)
            continue;
        size_t len = n / slices + (s++ < n % slices);
        first[i] = done;
        for (; pushed[i] < len; pushed[i]++) {
            if (crew__prioq_push(&q[i]->q, &t[done + pushed[i]]) != CREW_OK) {
                rc = CREW_ENOMEM;
                break;
            }
            scatter(p, &t[done + pushed[i]], 1); /* these queues keep no group lists */
        }
        done += pushed[i];
    }
    for (unsigned i = m; i-- > 0;) {
        if (rc != CREW_OK) /* nobody saw them: take them all back */
            for (size_t k = 0; k < pushed[i]; k++)
                lq_remove_locked(p, q[i], &t[first[i] + k]);
        lq_publish(q[i]);
        crew__lock_release(&q[i]->lock);
    }
    return rc;
}

/* ---- STEAL: external submission slots ----
 * A thread that is not a worker pushes priority-0 tasks (the highest priority, and the default)
 * into one of CREW__EXT_SLOTS Chase-Lev deques, chosen per thread, whose owner side (push, and
 * the pop of a waiting submitter) is serialised by a spinlock that one submitting thread keeps
 * in its cache; workers steal from the top without a lock, oldest first. So one thread's
 * priority-0 submissions run in FIFO order, as from the injection queue, but a submission costs
 * no shared lock and no heap operation (oneTBB gives external threads a slot of their own in
 * the same spirit). Other priorities go to the injection queue; workers look at the slots
 * before it, which keeps priority 0 first. */
static CREW__TLS unsigned tls_number; /* crew__thread_number() + 1, or 0 before the first */

static __attribute__((noinline)) unsigned first_number(void) {
    static atomic_uint next_thread; /* relaxed: numbers threads, orders nothing */
    tls_number = crew__fetch_add_relaxed(&next_thread, 1u) + 1;
    return tls_number - 1;
}

unsigned crew__thread_number(void) {
    return __builtin_expect(tls_number != 0, 1) ? tls_number - 1 : first_number();
}

static inline crew__ext *ext_of_thread(crew_pool *p) {
    return &p->ext[crew__thread_number() % CREW__EXT_SLOTS];
}

static int push_external(crew_pool *p, crew_task *t, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (t[i].priority != 0)
            return lq_push_n(p, p->central, t, n);
    crew__ext *x = ext_of_thread(p);
    crew__lock_acquire(&x->lock);
    int rc = crew__deque_push(&x->deque, t, n);
    crew__lock_release(&x->lock);
    return rc;
}

/* Steal the oldest task of any slot, starting with the one that last had work for this thread
 * (usually the only busy one: one submitting thread). */
static crew_task *steal_external(crew_pool *p, bool *retry) {
    static CREW__TLS unsigned last;
    for (unsigned i = 0; i < CREW__EXT_SLOTS; i++) {
        unsigned k = (last + i) % CREW__EXT_SLOTS;
        crew__ext *x = &p->ext[k];
        if (crew__deque_size(&x->deque) != 0) {
            crew_task *t = crew__deque_steal(&x->deque, retry);
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
        if (crew__deque_size(&p->ext[i].deque) != 0)
            return true;
    return false;
}

/* A waiting submitter: the newest task of its own slot if it is of group slot. */
static crew_task *take_external_group(crew_pool *p, uint32_t slot) {
    crew__ext *x = ext_of_thread(p);
    if (crew__deque_size(&x->deque) == 0)
        return NULL;
    crew__lock_acquire(&x->lock);
    crew_task *t = crew__deque_take(&x->deque);
    if (t && t->crew_private_.slot != slot) {
        crew__deque_push(&x->deque, t, 1); /* cannot fail: its place is free */
        crew__tls_pushed_back++;
        t = NULL;
    }
    crew__lock_release(&x->lock);
    return t;
}

int crew__sched_push(crew_pool *p, crew_task *t, size_t n) {
    crew__lq *q[PUSH_TARGETS_MAX];
    unsigned m = 0;
    crew__worker *w = self_of(p);
    switch (p->sched) {
    case CREW_SCHED_STEAL:
        /* Relaxed: the owner's own state. A marked worker still pushes locally: it drains its
         * deque into the injection queue before it exits. */
        if (w && crew__load_relaxed(&w->state) != CREW__W_EXITED)
            return crew__deque_push(&w->deque, t, n);
        return push_external(p, t, n);
    case CREW_SCHED_SHARED:
        return lq_push_n(p, p->central, t, n);
    case CREW_SCHED_SHARED_LOCKFREE:
        if (n == 1) { /* the common case: a random queue that is free right now */
            crew__lq *one = &p->mq[rnd_below(p->nmq)];
            for (unsigned k = 0; k < 4 && crew__load_relaxed(&one->lock.held); k++)
                one = &p->mq[rnd_below(p->nmq)]; /* relaxed: a hint (spinlocks only) */
            return lq_push_n(p, one, t, 1);
        }
        for (unsigned start = rnd_below(p->nmq); m < p->nmq && m < n && m < 4; m++)
            q[m] = &p->mq[(start + m) % p->nmq];
        return push_spread(p, q, m, t, n);
    case CREW_SCHED_PER_WORKER:
    default:
        if (w && crew__load_relaxed(&w->state) == CREW__W_RUNNING && /* relaxed: own state */
            lq_push_n(p, w->queue, t, n) == CREW_OK)
            return CREW_OK;
        for (unsigned round = 0;; round++) {
            unsigned nw = crew__nworkers(p);
            /* Relaxed: spreads submissions, orders nothing. */
            unsigned start = crew__fetch_add_relaxed(&p->rr, 1u);
            m = 0;
            for (unsigned i = 0; i < nw && m < PUSH_TARGETS_MAX && m < n; i++) {
                crew__worker *v = crew__worker_at(p, (start + i) % nw);
                /* Relaxed: a hint; a closed queue refuses the push under its lock. */
                if (crew__load_relaxed(&v->state) == CREW__W_RUNNING)
                    q[m++] = v->queue;
            }
            if (m == 0)
                return CREW_ESHUTDOWN;
            int rc = m == 1 ? lq_push_n(p, q[0], t, n) : push_spread(p, q, m, t, n);
            /* A target closed between the hint and the push (its worker was leaving): try the
             * others, a bounded number of times (each round sees one fewer running worker). */
            if (rc != CREW_ESHUTDOWN || round >= CREW_MAX_THREADS)
                return rc;
        }
    }
}

/* STEAL: steal one task from another worker's deque, starting at a random one. *retry is set
 * if a race was lost (a task may remain). */
static crew_task *steal_any(crew_pool *p, crew__worker *self, bool *retry) {
    unsigned nw = crew__nworkers(p);
    if (nw == 0)
        return NULL;
    unsigned start = rnd_below(nw);
    for (unsigned i = 0; i < nw; i++) {
        crew__worker *v = crew__worker_at(p, (start + i) % nw);
        if (v == self || crew__deque_size(&v->deque) == 0)
            continue;
        crew_task *t = crew__deque_steal(&v->deque, retry);
        if (t) {
            if (self) /* relaxed: only this worker writes it; statistics read it */
                crew__store_relaxed(&self->stolen, crew__load_relaxed(&self->stolen) + 1);
            return t;
        }
    }
    return NULL;
}

#define INJECT_BATCH 32u /* most tasks a worker moves from the injection queue at a time */

/* STEAL, a worker: take a batch of the injection queue's best tasks (all of one priority, at
 * most INJECT_BATCH and at most half of what is queued), run the oldest, and push the rest into
 * its deque, oldest at the bottom, so that it runs them in FIFO order and thieves take the
 * newest. One lock hold serves many tasks: the lock no longer bounces between the workers and
 * the submitting thread on every task. */
static crew_task *take_injected(crew_pool *p, crew__worker *w) {
    crew__lq *q = p->central;
    if (lq_len(q) == 0)
        return NULL;
    crew_task *batch[INJECT_BATCH];
    size_t n = 0;
    /* Room for the batch first, so the push below cannot fail (else: one task, no batch). */
    size_t room = crew__deque_reserve(&w->deque, INJECT_BATCH) == CREW_OK ? INJECT_BATCH : 1;
    crew__lock_acquire(&q->lock);
    size_t max = q->q.n / 2 < room ? q->q.n / 2 : room;
    uint32_t prio = crew__prioq_top(&q->q);
    do {
        batch[n++] = lq_pop_locked(p, q);
    } while (n < max && q->q.nlevels && crew__prioq_top(&q->q) == prio);
    lq_publish(q);
    crew__lock_release(&q->lock);
    if (n > 1) { /* newest first, so the oldest ends at the bottom (room was reserved) */
        crew_task *rev[INJECT_BATCH];
        for (size_t i = 1; i < n; i++)
            rev[i - 1] = batch[n - i];
        crew__deque_push_ptrs(&w->deque, rev, n - 1);
        crew__tls_pushed_back += n - 1; /* others may steal them: wake a sleeper */
    }
    return batch[0];
}

/* STEAL, a worker: its own deque, unless the injection queue has better. */
static crew_task *take_steal(crew_pool *p, crew__worker *w, bool *retry) {
    crew_task *t;
    if (w && (t = crew__deque_take(&w->deque)) != NULL) {
        if (t->priority != 0) { /* anything better queued from outside? */
            crew_task *u = NULL;
            if (external_queued(p))
                u = steal_external(p, retry);
            /* Relaxed: a hint; the worst a stale value does is one task's order. */
            if (!u && crew__load_relaxed(&p->central->top) < t->priority)
                u = lq_take(p, p->central);
            if (u) { /* cannot fail: the place t left is free again */
                crew__deque_push(&w->deque, t, 1);
                crew__tls_pushed_back++;
                return u;
            }
        }
        return t;
    }
    if ((t = steal_external(p, retry)) != NULL)
        return t;
    if ((t = w ? take_injected(p, w) : lq_take(p, p->central)) != NULL)
        return t;
    return steal_any(p, w, retry);
}

/* SHARED_LOCKFREE: the better of two random queues' best tasks (the MultiQueue delete-min),
 * a few times; then every queue in turn, so that "nothing found" means nothing was there. */
static crew_task *take_mq(crew_pool *p) {
    for (unsigned attempt = 0; attempt < 4; attempt++) {
        crew__lq *a = &p->mq[rnd_below(p->nmq)], *b = &p->mq[rnd_below(p->nmq)];
        /* Relaxed: hints; the pop under the lock is what counts. */
        uint32_t ta = crew__load_relaxed(&a->top), tb = crew__load_relaxed(&b->top);
        crew__lq *best = tb < ta ? b : a;
        if ((tb < ta ? tb : ta) == UINT32_MAX)
            continue;
        crew_task *t = lq_try_take(p, best);
        if (t)
            return t;
    }
    unsigned start = rnd_below(p->nmq);
    for (unsigned i = 0; i < p->nmq; i++) {
        crew_task *t = lq_take(p, &p->mq[(start + i) % p->nmq]);
        if (t)
            return t;
    }
    return NULL;
}

/* Every queue of every worker in turn, from a random one (PER_WORKER, for helpers). */
static crew_task *take_any_worker_queue(crew_pool *p) {
    unsigned nw = crew__nworkers(p);
    unsigned start = nw ? rnd_below(nw) : 0;
    for (unsigned i = 0; i < nw; i++) {
        crew_task *t = lq_take(p, crew__worker_at(p, (start + i) % nw)->queue);
        if (t)
            return t;
    }
    return NULL;
}

crew_task *crew__sched_take(crew_pool *p, bool *retry) {
    if (__builtin_expect(crew__load_relaxed(&p->paused), 0)) /* relaxed: see crew_pool */
        return NULL;
    crew__worker *w = self_of(p);
    switch (p->sched) {
    case CREW_SCHED_STEAL:
        return take_steal(p, w, retry);
    case CREW_SCHED_SHARED:
        return lq_take(p, p->central);
    case CREW_SCHED_SHARED_LOCKFREE:
        return take_mq(p);
    case CREW_SCHED_PER_WORKER:
    default:
        if (w) { /* its own queue; a marked worker may also help with the others' */
            crew_task *t = lq_take(p, w->queue);
            if (t || crew__load_relaxed(&w->state) == CREW__W_RUNNING) /* relaxed: own */
                return t;
        }
        return take_any_worker_queue(p);
    }
}

crew_task *crew__sched_take_group(crew_pool *p, uint32_t slot, int64_t mark, bool general) {
    crew__unused(general);
    if (crew__load_relaxed(&p->paused)) /* relaxed: see crew_pool */
        return NULL;
    crew__worker *w = self_of(p);
    crew_task *t = NULL;
    switch (p->sched) {
    case CREW_SCHED_STEAL:
        /* The tasks this task (and tasks it helped with) pushed sit above mark in our deque:
         * our own descendants, newest first. Relaxed: the owner's own bottom. */
        if (w && crew__load_relaxed(&w->deque.bottom) > mark)
            t = crew__deque_take(&w->deque);
        else if (!w)
            t = take_external_group(p, slot);
        return t ? t : lq_take_group(p, p->central, slot);
    case CREW_SCHED_SHARED:
        return lq_take_group(p, p->central, slot);
    case CREW_SCHED_SHARED_LOCKFREE:
        if (!scattered(p, slot))
            return NULL;
        /* Highest address first: an array's last slice, its newest tasks, went to the
         * highest-addressed of its queues (push_spread). */
        for (unsigned i = p->nmq; i-- > 0 && !t;)
            t = lq_take_group(p, &p->mq[i], slot);
        return t;
    case CREW_SCHED_PER_WORKER:
    default:
        if (!scattered(p, slot))
            return NULL;
        if (w)
            t = lq_take_group(p, w->queue, slot);
        for (unsigned i = 0, nw = crew__nworkers(p); i < nw && !t; i++)
            t = lq_take_group(p, crew__worker_at(p, i)->queue, slot);
        return t;
    }
}

int64_t crew__sched_mark(crew_pool *p) {
    crew__worker *w = self_of(p);
    /* Relaxed: the owner reads its own bottom. */
    return p->sched == CREW_SCHED_STEAL && w ? crew__load_relaxed(&w->deque.bottom) : 0;
}

int crew__sched_requeue(crew_pool *p, crew_task *t) {
    crew__worker *w = self_of(p);
    switch (p->sched) {
    case CREW_SCHED_STEAL:
    case CREW_SCHED_SHARED:
        return lq_requeue(p, p->central, t);
    case CREW_SCHED_SHARED_LOCKFREE:
        return lq_requeue(p, &p->mq[rnd_below(p->nmq)], t);
    case CREW_SCHED_PER_WORKER:
    default:
        return lq_requeue(p, w ? w->queue : crew__worker_at(p, 0)->queue, t);
    }
}

int crew__sched_worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan) {
    crew_task *t;
    *moved = 0;
    *orphan = NULL;
    if (p->sched == CREW_SCHED_STEAL) {
        while ((t = crew__deque_take(&w->deque)) != NULL) {
            if (lq_requeue(p, p->central, t) != CREW_OK) {
                *orphan = t;
                return CREW_ENOMEM;
            }
            ++*moved;
        }
    } else if (p->sched == CREW_SCHED_PER_WORKER) {
        /* Close first, so no push lands after the move; then hand each task to a running
         * worker's queue, or leave the rest here, visible to helpers, if none takes pushes. */
        crew__lock_acquire(&w->queue->lock);
        w->queue->closed = true;
        crew__lock_release(&w->queue->lock);
        /* One target queue at a time (the next running worker's), not a round-robin push per
         * task: a long backlog moves in two lock operations a task. */
        unsigned nw = crew__nworkers(p), k = crew__fetch_add_relaxed(&p->rr, 1u), tries = 0;
        crew__lq *target = NULL;
        while ((t = lq_take(p, w->queue)) != NULL) {
            int rc = target ? lq_push_n(p, target, t, 1) : CREW_ESHUTDOWN;
            while (rc == CREW_ESHUTDOWN && tries < nw) { /* no target yet, or it closed */
                crew__worker *v = crew__worker_at(p, k++ % nw);
                tries++;
                /* Relaxed: a hint; a closed queue refuses the push under its lock. */
                if (v != w && crew__load_relaxed(&v->state) == CREW__W_RUNNING) {
                    target = v->queue;
                    rc = lq_push_n(p, target, t, 1);
                }
            }
            if (rc == CREW_OK) {
                ++*moved;
                continue;
            }
            if (lq_requeue(p, w->queue, t) != CREW_OK)
                *orphan = t;
            if (rc == CREW_ESHUTDOWN && !*orphan)
                break; /* no running worker: the rest stay here, visible to helpers */
            crew__lock_acquire(&w->queue->lock); /* out of memory: stay and work */
            w->queue->closed = false;
            crew__lock_release(&w->queue->lock);
            return CREW_ENOMEM;
        }
    }
    return CREW_OK;
}

size_t crew__sched_queued(crew_pool *p) {
    size_t n = p->central ? lq_len(p->central) : 0;
    if (p->blocking)
        n += lq_len(p->blocking->queue);
    if (p->ext)
        for (unsigned i = 0; i < CREW__EXT_SLOTS; i++)
            n += crew__deque_size(&p->ext[i].deque);
    for (unsigned i = 0; i < p->nmq; i++)
        n += lq_len(&p->mq[i]);
    if (p->sched == CREW_SCHED_STEAL || p->sched == CREW_SCHED_PER_WORKER) {
        unsigned nw = crew__nworkers(p);
        for (unsigned i = 0; i < nw; i++) {
            crew__worker *v = crew__worker_at(p, i);
            n += p->sched == CREW_SCHED_STEAL ? crew__deque_size(&v->deque) : lq_len(v->queue);
        }
    }
    return n;
}

/* Take any queued task at all, as a helper would (cancellation). */
static crew_task *take_anything(crew_pool *p) {
    bool retry;
    crew_task *t;
    do {
        retry = false;
        switch (p->sched) {
        case CREW_SCHED_STEAL:
            t = steal_external(p, &retry);
            if (!t)
                t = lq_take(p, p->central);
            if (!t)
                t = steal_any(p, NULL, &retry);
            break;
        case CREW_SCHED_SHARED:
            t = lq_take(p, p->central);
            break;
        case CREW_SCHED_SHARED_LOCKFREE:
            t = take_mq(p);
            break;
        case CREW_SCHED_PER_WORKER:
        default:
            t = take_any_worker_queue(p);
            break;
        }
    } while (!t && retry);
    return t;
}

crew_task *crew__sched_take_any(crew_pool *p) { return take_anything(p); }

/* A queued task of group slot from the queues under locks (not the deques: crew__run drops
 * those when they come up), or NULL. */
static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    crew_task *t = NULL;
    /* Blocking tasks: their queue keeps no group lists, so it counts them as scattered. */
    if (p->blocking && scattered(p, slot) &&
        (t = lq_take_group(p, p->blocking->queue, slot)) != NULL)
        return t;
    switch (p->sched) {
    case CREW_SCHED_STEAL:
    case CREW_SCHED_SHARED:
        return lq_take_group(p, p->central, slot);
    case CREW_SCHED_SHARED_LOCKFREE:
        for (unsigned i = 0; i < p->nmq && !t && scattered(p, slot); i++)
            t = lq_take_group(p, &p->mq[i], slot);
        return t;
    case CREW_SCHED_PER_WORKER:
    default:
        for (unsigned i = 0, nw = crew__nworkers(p); i < nw && !t && scattered(p, slot); i++)
            t = lq_take_group(p, crew__worker_at(p, i)->queue, slot);
        return t;
    }
}

size_t crew__sched_cancel_group(crew_pool *p, uint32_t slot, uint32_t gen) {
    size_t n = 0;
    crew_task *t;
    while ((t = take_locked_group(p, slot)) != NULL) {
        /* A queued task's group is open, so the slot's generation is its group's: if it moved
         * on, the cancelled group has ended and this task belongs to the slot's next group.
         * Relaxed: the queue's lock ordered the task's group opening before our take. */
        if (crew__gen_of(crew__load_relaxed(&crew__slot_at(&p->groups, slot)->state)) != gen) {
            if (crew__sched_requeue(p, t) == CREW_OK)
                crew__tls_pushed_back++;
            else
                crew__run(p, t); /* no memory to put it back: run it here */
            break;
        }
        crew__task_dropped(p, t, false);
        n++;
    }
    if (crew__tls_pushed_back)
        crew__notify_pushed_back(p);
    return n;
}

size_t crew__sched_cancel_all(crew_pool *p) {
    size_t n = 0;
    crew_task *t;
    while ((t = take_anything(p)) != NULL) {
        crew__task_dropped(p, t, true);
        n++;
    }
    return n;
}

/* ---------------------------------------------------------------------------------------------
 * crew_diagnose's view of the queues.
 * ------------------------------------------------------------------------------------------- */
static void visit_lq(crew__lq *q, const char *what, int index,
                     void (*fn)(void *ctx, const crew__queue_view *v), void *ctx) {
    crew__queue_view v = {what, index, 0, 0, NULL};
    crew__lock_acquire(&q->lock);
    v.n = q->q.n;
    v.oldest = crew__prioq_oldest(&q->q);
    crew__lock_release(&q->lock);
    fn(ctx, &v);
}

static void visit_deque(crew__deque *d, const char *what, int index,
                        void (*fn)(void *ctx, const crew__queue_view *v), void *ctx) {
    crew__queue_view v = {what, index, crew__deque_size(d), 0, d};
    fn(ctx, &v);
}

void crew__sched_visit(crew_pool *p, void (*fn)(void *ctx, const crew__queue_view *v), void *ctx) {
    if (p->central)
        visit_lq(p->central,
                 p->sched == CREW_SCHED_STEAL ? "the injection queue" : "the shared queue", -1, fn,
                 ctx);
    if (p->ext)
        for (unsigned i = 0; i < CREW__EXT_SLOTS; i++)
            visit_deque(&p->ext[i].deque, "external submission slot", (int)i, fn, ctx);
    for (unsigned i = 0; i < p->nmq; i++)
        visit_lq(&p->mq[i], "MultiQueue queue", (int)i, fn, ctx);
    if (p->sched == CREW_SCHED_STEAL || p->sched == CREW_SCHED_PER_WORKER) {
        unsigned nw = crew__nworkers(p);
        for (unsigned i = 0; i < nw; i++) {
            crew__worker *w = crew__worker_at(p, i);
            if (p->sched == CREW_SCHED_STEAL)
                visit_deque(&w->deque, "the deque of worker", (int)w->index, fn, ctx);
            else
                visit_lq(w->queue, "the queue of worker", (int)w->index, fn, ctx);
        }
    }
    if (p->blocking)
        visit_lq(p->blocking->queue, "the blocking tasks' queue", -1, fn, ctx);
}
