/*
 * sched_simple.c -- "simple", a strategy for the tests only (CREW_SCHEDULER=simple; crew.h does
 * not offer it, and only the library the tests link has it: CREW_TEST_HOOKS, CMakeLists.txt):
 * one priority queue (lq.h) under one mutex, whatever crew_config.lock says, and without group
 * lists, so that a waiter finds its group's tasks by the queue's per-group counts
 * (crew__slot.scattered) as PER_WORKER's and the MultiQueue's waiters do. It keeps every
 * contract crew.h states for all strategies (strict priority order, FIFO among equals; a
 * waiter runs its own group's tasks, newest first; cancelling; crew_diagnose's view) with the
 * fewest parts, and shows what the interface asks of a strategy: its file and one line in
 * crew__sched_resolve's table. It keeps no per-worker state and needs none of the optional
 * entries.
 */
#include "pool.h"
#include "schedule.h"

/* The state (crew__sched.state, which schedule.c allocates): the queue. */
typedef struct simple_state {
    crew__lq q; /* first: at the state's address */
    bool ready; /* q is initialised */
} simple_state;

static inline simple_state *state_of(crew_pool *p) { return p->sched.state; }
static inline crew__lq *the_queue(crew_pool *p) { return &state_of(p)->q; }

static int init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    crew__unused(cfg);
    crew__unused(threads);
    if (crew__lq_init(the_queue(p), &p->groups, false, false) != CREW_OK)
        return CREW_ENOMEM;
    state_of(p)->ready = true;
    return CREW_OK;
}

static void free_state(crew_pool *p) {
    if (state_of(p)->ready)
        crew__lq_free(the_queue(p));
}

/* Every thread, worker or not, pushes to and takes from the one queue. */
static int push(crew_pool *p, crew__worker *self, crew_task *t, size_t n) {
    crew__unused(self);
    return crew__lq_push_n(the_queue(p), t, n);
}

static crew_task *take_any(crew_pool *p) { return crew__lq_take(the_queue(p)); }

static crew_task *take(crew_pool *p, crew__worker *self, crew__take_ctx *tc) {
    crew__unused(self);
    crew__unused(tc); /* no race to lose (a lock), nothing put back */
    return take_any(p);
}

/* A queued task of group slot, newest first: searched for only while the queue holds some. */
static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    if (!crew__lq_scattered(&p->groups, slot))
        return NULL;
    return crew__lq_take_group(the_queue(p), slot);
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
    return crew__lq_requeue(the_queue(p), t);
}

static size_t queued(crew_pool *p) { return crew__lq_len(the_queue(p)); }

static void visit(crew_pool *p, crew__queue_visitor fn, void *ctx) {
    crew__sched_visit_lq(the_queue(p), "the queue", -1, fn, ctx);
}

const crew__sched_ops crew__sched_simple = {
    .name = "simple",
    .what = "one queue (for the tests)",
    .any_worker = true,
    .state_size = sizeof(simple_state),
    .init = init,
    .free = free_state,
    .push = push,
    .take = take,
    .take_group = take_group,
    .requeue = requeue,
    .take_any = take_any,
    .take_locked_group = take_locked_group,
    .queued = queued,
    .visit = visit,
};
