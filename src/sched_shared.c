/*
 * sched_shared.c -- SHARED: one priority queue (prioq.c) under one lock, a mutex or a spinlock
 * (crew_config.lock), as in the GeckoDB/BOLSTER pool and the lock option of Xu & Bode's study
 * (docs/references.md). Strict order: highest priority first, FIFO among equals. The queue
 * keeps each group's queued tasks in a list, so a waiter takes its own group's newest task in
 * O(1).
 */
#include "pool.h"
#include "schedule.h"

/* SHARED's queue and STEAL's injection queue. */
int crew__sched_central_init(crew_pool *p, crew__lq *q) {
    return crew__lq_init(q, &p->groups, p->sched.lock_spin, true);
}

/* SHARED's state (crew__sched.state): its queue. */
typedef struct shared_state {
    crew__lq q; /* first: at the state's address */
    bool ready; /* q is initialised */
} shared_state;

static inline shared_state *state_of(crew_pool *p) { return p->sched.state; }
static inline crew__lq *queue_of(crew_pool *p) { return &state_of(p)->q; }

static int init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    crew__unused(cfg);
    crew__unused(threads);
    if (crew__sched_central_init(p, queue_of(p)) != CREW_OK)
        return CREW_ENOMEM;
    state_of(p)->ready = true;
    return CREW_OK;
}

static void free_queue(crew_pool *p) {
    if (state_of(p)->ready)
        crew__lq_free(queue_of(p));
}

static int push(crew_pool *p, crew__worker *self, crew_task *t, size_t n) {
    crew__unused(self);
    return crew__lq_push_n(queue_of(p), t, n);
}

static crew_task *take(crew_pool *p, crew__worker *self, crew__take_ctx *tc) {
    crew__unused(self);
    crew__unused(tc);
    return crew__lq_take(queue_of(p));
}

static crew_task *take_group(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark,
                             crew__take_ctx *tc) {
    crew__unused(self);
    crew__unused(mark);
    crew__unused(tc);
    return crew__lq_take_group(queue_of(p), slot);
}

static int requeue(crew_pool *p, crew__worker *self, crew_task *t) {
    crew__unused(self);
    return crew__lq_requeue(queue_of(p), t);
}

static crew_task *take_any(crew_pool *p) { return crew__lq_take(queue_of(p)); }

static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    return crew__lq_take_group(queue_of(p), slot);
}

static size_t queued(crew_pool *p) { return crew__lq_len(queue_of(p)); }

static void visit(crew_pool *p, crew__queue_visitor fn, void *ctx) {
    crew__sched_visit_lq(queue_of(p), "the shared queue", -1, fn, ctx);
}

const crew__sched_ops crew__sched_shared = {
    .name = "shared",
    .what = "one shared queue",
    .any_worker = true,
    .state_size = sizeof(shared_state),
    .init = init,
    .free = free_queue,
    .push = push,
    .take = take,
    .take_group = take_group,
    .requeue = requeue,
    .take_any = take_any,
    .take_locked_group = take_locked_group,
    .queued = queued,
    .visit = visit,
};
