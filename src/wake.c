/*
 * wake.c -- the pool's notifiers: whom a thread wakes when it queues tasks, and when the
 * pool's state changes (resume, resize, shutdown). Each is one call to the eventcount (ec.h) on
 * the pool's eventcounts (struct crew_pool: work, waiting), with the choice of whom to wake made
 * by a match function here: a group's end and a quiet pool are notified where they happen
 * (pending.c: crew__tasks_finished, crew__pending_sub), a freed place in the bounded queue in
 * bounded.c. And the deferred wake-up of a caller's offers (wake.h: crew__wake_offered).
 */
#include "atomic.h"
#include "clock.h"
#include "pool.h"
#include "sched_calls.h"
#include "wake.h"
#include "worker.h"

void crew__wake_pushed_back(crew_pool *p, size_t *n) {
    size_t k = *n;
    *n = 0;
    crew__wake_work(p, k, 0);
}

/* crew__wake_locked's choice among the sleepers on pool->work: up to n workers that can run the
 * new tasks, each counted among the lookers at once (pool.h), so that the submissions that
 * follow, before it has even run, see a looker and stay on the fast path instead of each taking
 * the lock to wake another; and every waiter that may take any task (its node has no data). */
typedef struct wake_ctx {
    crew_pool *p;
    size_t n;
    bool all; /* every worker, whether or not it has work (a state change) */
} wake_ctx;

static bool wake_match(void *ctx, void *data) {
    wake_ctx *c = ctx;
    crew__worker *w = data;
    if (!w)
        return true; /* a helping waiter */
    /* PER_WORKER: only a worker whose own queue has work can run it. */
    if (!c->all && (c->n == 0 || !crew__sched_has_work_for(c->p, w)))
        return false;
    c->n--;
    crew__fetch_add_seq_cst(&c->p->lookers, 1u); /* seq_cst: see crew_pool.lookers */
    return true;
}

/* crew__wake_locked's choice among a group's waiters: those that help, who may take its new
 * tasks; not a timed waiter, which runs none (CREW__WAIT_SLEEPS). */
static bool helps(void *ctx, void *data) {
    (void)ctx;
    return data != CREW__WAIT_SLEEPS;
}

/* crew__wake_locked, with the wake-ups of workers left in *later (ec.h: crew__ec_choose_locked). */
static void wake_locked(crew_pool *p, size_t n, uint32_t slot, crew__ec_wakes *later) {
    wake_ctx c = {p, n, false};
    crew__ec_choose_locked(&p->work, wake_match, &c, later);
    /* The group's own waiters take its tasks even when they may take no other. */
    if (slot != 0)
        crew__ec_choose_locked(&crew__slot_at(&p->groups, slot)->waiters, helps, NULL, later);
}

void crew__wake_locked(crew_pool *p, size_t n, uint32_t slot) { wake_locked(p, n, slot, NULL); }

void crew__wake_handed_over_locked(crew_pool *p, size_t n) {
    crew__wake_locked(p, n, 0);
    /* Tasks of any group: a waiter that may take only its group's tasks sleeps on neither work
     * nor (not knowing these are its group's) anything the line above notifies. */
    crew__ec_notify_locked(&p->waiting, NULL, NULL);
}

void crew__wake(crew_pool *p, size_t n, uint32_t slot) {
    crew__ec_wakes later = {.n = 0};
    pthread_mutex_lock(&p->lock);
    wake_locked(p, n, slot, &later);
    pthread_mutex_unlock(&p->lock);
    crew__ec_wake_chosen(&later); /* the woken find the lock free */
}

void crew__wake_all_locked(crew_pool *p) {
    wake_ctx c = {p, 0, true};
    crew__ec_notify_locked(&p->work, wake_match, &c);
    crew__ec_notify_locked(&p->waiting, NULL, NULL); /* every helping waiter: look again */
}

void crew__wake_all(crew_pool *p) {
    pthread_mutex_lock(&p->lock);
    crew__wake_all_locked(p);
    crew__ec_notify_locked(&p->bounded.room, NULL, NULL); /* waiters for room: recheck the state */
    pthread_mutex_unlock(&p->lock);
}

/* How many of this thread's last rounds of offers in a row had a long own task
 * (crew__wake_if_long), up to CREW__WAKE_LONG_ROUNDS: that many, and the next round's offers are
 * woken for as they are made. Two in a row, not one: a short task that the OS preempted looks
 * long once (under load, one round in a hundred or so), and a wake-up made for nothing costs
 * the caller its CPU while the woken worker runs. A plain thread-local: the caller's own
 * pattern. */
#define CREW__WAKE_LONG_ROUNDS 2u
static CREW__TLS unsigned rounds_long;
/* The pool of this thread's last round of offers if that round's own tasks ran under
 * CREW__WAKE_TINY_NS (wake.h: TINY ROUNDS), else NULL: its next deferral to that pool sets
 * CREW__WATCH_TINY. Per pool: a thread's tiny rounds on one pool say nothing of its rounds on
 * another (whose watcher would sleep CREW__WAKE_WATCH_TINY_NS, its workers not poll). A plain
 * thread-local, as rounds_long. */
static CREW__TLS crew_pool *rounds_tiny_in;

crew__defer crew__wake_offered(crew_pool *p, size_t n) {
    crew__defer d = {crew__now_ns(), false};
    unsigned want = CREW__WATCH_WANTED | (rounds_tiny_in == p ? CREW__WATCH_TINY : 0u);
    /* Release: the offers' pushes before it, for the watcher's acquire on resigning (pool.h). */
    if (rounds_long >= CREW__WAKE_LONG_ROUNDS ||
        !(crew__fetch_or_release(&p->watch, want) & CREW__WATCHING)) {
        crew__wake_work(p, n, 0); /* long rounds, or nobody watches: as any offer */
        d.woke = true;
    }
    return d;
}

uint64_t crew__wake_watch_claim(crew_pool *p) {
    unsigned v = crew__load_relaxed(&p->watch); /* relaxed: a guess, the CAS decides */
    /* Relaxed: the claim publishes nothing; only one claimer wins (see pool.h). It clears the
     * tiny mark with the want: only a tiny round after it sets it again. */
    while ((v & ~CREW__WATCH_TINY) == CREW__WATCH_WANTED)
        if (crew__cas_relaxed(&p->watch, &v, CREW__WATCHING))
            return v & CREW__WATCH_TINY ? CREW__WAKE_WATCH_TINY_NS : CREW__WAKE_WATCH_NS;
    return 0;
}

unsigned crew__wake_watch_word(crew_pool *p) {
    return crew__load_relaxed(&p->watch); /* relaxed: a look for tests */
}

void crew__wake_watch_resign(crew_pool *p) {
    /* Acquire: the offers deferred to this watcher (their callers' release fetch_or). */
    crew__fetch_and_acquire(&p->watch, ~CREW__WATCHING);
}

void crew__wake_if_long_slow(crew_pool *p, crew__defer *d, size_t left) {
    uint64_t ran = crew__now_ns() - d->since;
    if (ran < CREW__WAKE_DEFER_NS) {
        rounds_long = 0;
        rounds_tiny_in = ran < CREW__WAKE_TINY_NS ? p : NULL; /* the round's last call decides */
        return;
    }
    rounds_tiny_in = NULL;
    d->since = 0;
    if (rounds_long < CREW__WAKE_LONG_ROUNDS)
        rounds_long++;
    if (!d->woke && left != 0 && !crew__forked(p)) /* a child wakes nobody (crew.h: fork) */
        crew__wake_work(p, left, 0); /* the rest of the round's offers: to other threads */
}
