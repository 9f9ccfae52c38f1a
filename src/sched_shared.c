/*
 * sched_shared.c -- SHARED: one priority queue (prioq.c) under one lock, a mutex or a spinlock
 * (crew_config.lock), as in the GeckoDB/BOLSTER pool and the lock option of Xu & Bode's study
 * (docs/references.md). Strict order: highest priority first, FIFO among equals. The queue
 * keeps each group's queued tasks in a list, so a waiter takes its own group's newest task in
 * O(1).
 */
#include <stdlib.h>

#include "pool.h"
#include "schedule.h"

/* SHARED and STEAL: the central queue (STEAL's injection queue). */
int crew__sched_central_init(crew_pool *p, bool spin) {
    crew__lq *q = aligned_alloc(64, sizeof *q);
    if (!q)
        return CREW_ENOMEM;
    if (crew__lq_init(q, &p->groups, spin, true) != CREW_OK) {
        free(q);
        return CREW_ENOMEM;
    }
    p->sched.central = q;
    return CREW_OK;
}

void crew__sched_central_free(crew_pool *p) {
    if (p->sched.central) {
        crew__lq_free(p->sched.central);
        free(p->sched.central);
        p->sched.central = NULL;
    }
}

static int init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    crew__unused(threads);
    return crew__sched_central_init(p, cfg->lock == CREW_LOCK_SPIN);
}

static int push(crew_pool *p, crew__worker *self, crew_task *t, size_t n) {
    crew__unused(self);
    return crew__lq_push_n(p->sched.central, t, n);
}

static crew_task *take(crew_pool *p, crew__worker *self, bool *retry) {
    crew__unused(self);
    crew__unused(retry);
    return crew__lq_take(p->sched.central);
}

static crew_task *take_group(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark) {
    crew__unused(self);
    crew__unused(mark);
    return crew__lq_take_group(p->sched.central, slot);
}

static int requeue(crew_pool *p, crew__worker *self, crew_task *t) {
    crew__unused(self);
    return crew__lq_requeue(p->sched.central, t);
}

static crew_task *take_any(crew_pool *p) { return crew__lq_take(p->sched.central); }

static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    return crew__lq_take_group(p->sched.central, slot);
}

static size_t queued(crew_pool *p) { return crew__lq_len(p->sched.central); }

static void visit(crew_pool *p, crew__queue_visitor fn, void *ctx) {
    crew__sched_visit_lq(p->sched.central, "the shared queue", -1, fn, ctx);
}

const crew__sched_ops crew__sched_shared = {
    .name = "shared",
    .what = "one shared queue",
    .any_worker = true,
    .init = init,
    .free = crew__sched_central_free,
    .push = push,
    .take = take,
    .take_group = take_group,
    .requeue = requeue,
    .take_any = take_any,
    .take_locked_group = take_locked_group,
    .queued = queued,
    .visit = visit,
};
