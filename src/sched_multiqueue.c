/*
 * sched_multiqueue.c -- SHARED_LOCKFREE: a MultiQueue (Rihani, Sanders and Dementiev,
 * "MultiQueues: Simple Relaxed Concurrent Priority Queues", SPAA 2015): 2 x max(threads, CPUs)
 * priority queues, each under its own try-lock. A push goes to a random queue; a take looks at
 * two random queues and pops from the one whose best task has the higher priority. No thread
 * ever waits for a lock held by another (try-locks only on the fast path), and the order is
 * relaxed: the task taken is among the best O(queues) queued ones, in expectation (the paper's
 * rank bound); FIFO among equals holds within each queue. The queues keep no group lists: a
 * waiter searches them only when its group has tasks there (crew__slot.scattered).
 */
#include "pool.h"
#include "schedule.h"

/* SHARED_LOCKFREE's state (crew__sched.state). */
typedef struct mq_state {
    unsigned n;    /* queues made (all of them once init succeeded) */
    crew__lq q[];  /* the MultiQueue's queues */
} mq_state;

static inline mq_state *state_of(crew_pool *p) { return p->sched.state; }

/* How many queues: 2 x max(threads, the CPUs the pool may use), or 2 x max_threads if autosize may grow the pool. */
static unsigned queues_for(crew_pool *p, const crew_config *cfg, unsigned threads) {
    unsigned cores = p->cpus;
    if (cfg->autosize && cfg->max_threads > threads)
        return 2 * cfg->max_threads;
    return 2 * (threads > cores ? threads : cores);
}

static size_t queues_size(crew_pool *p, const crew_config *cfg, unsigned threads) {
    return queues_for(p, cfg, threads) * sizeof(crew__lq);
}

static int init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    mq_state *s = state_of(p);
    unsigned n = queues_for(p, cfg, threads);
    for (s->n = 0; s->n < n; s->n++)
        if (crew__lq_init(&s->q[s->n], &p->groups, p->sched.lock_spin, false) != CREW_OK)
            return CREW_ENOMEM; /* free() frees the ones made */
    return CREW_OK;
}

static void free_queues(crew_pool *p) {
    mq_state *s = state_of(p);
    for (unsigned i = 0; i < s->n; i++)
        crew__lq_free(&s->q[i]);
}

static crew__lq *random_queue(mq_state *s) { return &s->q[crew__rand_below(s->n)]; }

static int push(crew_pool *p, crew__worker *self, crew_task *t, size_t n) {
    crew__unused(self);
    mq_state *s = state_of(p);
    if (n == 1) { /* the common case: a random queue that is free right now */
        crew__lq *one = random_queue(s);
        for (unsigned k = 0; k < 4 && crew__spinlock_busy(&one->lock.sl); k++)
            one = random_queue(s); /* a hint (spinlocks only) */
        return crew__lq_push_n(one, t, 1);
    }
    crew__lq *q[4];
    unsigned m = 0;
    for (unsigned start = crew__rand_below(s->n); m < s->n && m < n && m < 4; m++)
        q[m] = &s->q[(start + m) % s->n];
    return crew__lq_push_spread(q, m, t, n);
}

/* The better of two random queues' best tasks (the MultiQueue delete-min), a few times; then
 * every queue in turn, so that "nothing found" means nothing was there. */
static crew_task *take_any(crew_pool *p) {
    mq_state *s = state_of(p);
    for (unsigned attempt = 0; attempt < 4; attempt++) {
        crew__lq *a = random_queue(s), *b = random_queue(s);
        uint32_t ta = crew__lq_top(a), tb = crew__lq_top(b); /* hints; the pop is what counts */
        crew__lq *best = tb < ta ? b : a;
        if ((tb < ta ? tb : ta) == UINT32_MAX)
            continue;
        crew_task *t = crew__lq_try_take(best);
        if (t)
            return t;
    }
    unsigned start = crew__rand_below(s->n);
    for (unsigned i = 0; i < s->n; i++) {
        crew_task *t = crew__lq_take(&s->q[(start + i) % s->n]);
        if (t)
            return t;
    }
    return NULL;
}

static crew_task *take(crew_pool *p, crew__worker *self, crew__take_ctx *tc) {
    crew__unused(self);
    crew__unused(tc);
    return take_any(p);
}

static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    mq_state *s = state_of(p);
    crew_task *t = NULL;
    /* Highest address first: an array's last slice, its newest tasks, went to the
     * highest-addressed of its queues (crew__lq_push_spread). */
    for (unsigned i = s->n; i-- > 0 && !t && crew__lq_scattered(&p->groups, slot);)
        t = crew__lq_take_group(&s->q[i], slot);
    return t;
}

static crew_task *take_group(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark,
                             crew__take_ctx *tc) {
    crew__unused(self);
    crew__unused(mark);
    crew__unused(tc);
    return take_locked_group(p, slot);
}

static int requeue(crew_pool *p, crew__worker *self, crew_task *t) {
    crew__unused(self);
    return crew__lq_requeue(random_queue(state_of(p)), t);
}

static size_t queued(crew_pool *p) {
    mq_state *s = state_of(p);
    size_t n = 0;
    for (unsigned i = 0; i < s->n; i++)
        n += crew__lq_len(&s->q[i]);
    return n;
}

static void visit(crew_pool *p, crew__queue_visitor fn, void *ctx) {
    mq_state *s = state_of(p);
    for (unsigned i = 0; i < s->n; i++)
        crew__sched_visit_lq(&s->q[i], "MultiQueue queue", (int)i, fn, ctx);
}

const crew__sched_ops crew__sched_multiqueue = {
    .name = "lockfree",
    .what = "MultiQueue",
    .any_worker = true,
    .state_size = sizeof(mq_state),
    .state_more = queues_size,
    .init = init,
    .free = free_queues,
    .push = push,
    .take = take,
    .take_group = take_group,
    .requeue = requeue,
    .take_any = take_any,
    .take_locked_group = take_locked_group,
    .queued = queued,
    .visit = visit,
};
