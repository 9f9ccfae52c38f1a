/*
 * bounded.c -- the bounded queue (crew_config.queue_capacity): admitting tasks by the
 * full-queue policy (fail, run in the caller, drop the oldest queued task, or wait for room),
 * and freeing a place when a task that held one starts or is dropped.
 *
 * A task takes its place when it is accepted (crew__bounded_admit, from submit.c) and frees it
 * when it starts or is dropped (crew__bounded_release, from worker.c). A submitter that waits
 * for room sleeps on the eventcount pool->bounded.room (ec.h); the release notifies it.
 *
 * WAKING A SUBMITTER. A producer that keeps a small queue full (zstd's pool's shape: a queue of
 * one place, more workers than CPUs) sleeps once per task, and a worker wakes it as the task
 * starts. A sleeper's futex word on its own stack must be woken while the waker holds
 * pool->lock (ec.h, THE OS WAIT); on a busy machine the woken producer then ran into that lock
 * and slept on the mutex too: 1.6 sleeps of the producer per task instead of 1, and the pool
 * slower than a textbook pool with a condition variable for room (docs/benchmarks.md, the
 * bounded queue). So the queue lends each waiting submitter one of a few sleepers it owns
 * (crew__bounded.lent, crew__ec_sleeper_own), whose words live as long as the pool: the release
 * wakes it after the unlock, and a wake that arrives after its sleeper has returned (or has
 * been lent to the next one) is a spurious one, which crew__ec_wait looks again after. A
 * submitter that finds them all lent sleeps on one of its stack, as before.
 */
#include <sched.h>
#include <stdlib.h>

#include "atomic.h"
#include "bounded.h"
#include "pool.h"
#include "worker.h"

typedef crew__admit_how admit_how; /* bounded.h */

int crew__bounded_init(crew__bounded *b, const crew_config *cfg) {
    b->capacity = cfg->queue_capacity;
    b->policy = cfg->full_policy;
    crew__atomic_init(&b->admitted, 0);
    crew__ec_init(&b->room);
    b->lent_mask = 0;
    b->lent = NULL;
    if (b->capacity == 0) /* an unbounded queue has no waits for room */
        return CREW_OK;
    b->lent = malloc(CREW__ROOM_SLEEPERS * sizeof *b->lent);
    if (!b->lent)
        return CREW_ENOMEM;
    for (unsigned i = 0; i < CREW__ROOM_SLEEPERS; i++)
        if (crew__ec_sleeper_own(&b->lent[i]) != 0) {
            while (i-- > 0)
                crew__ec_sleeper_free(&b->lent[i]);
            free(b->lent);
            b->lent = NULL;
            return CREW_ENOMEM;
        }
    return CREW_OK;
}

void crew__bounded_free(crew__bounded *b) {
    for (unsigned i = 0; b->lent && i < CREW__ROOM_SLEEPERS; i++)
        crew__ec_sleeper_free(&b->lent[i]);
    free(b->lent);
    b->lent = NULL;
}

/* pool->lock held: one of the queue's sleepers, lent to the caller, or NULL if all are lent. */
static crew__ec_sleeper *lend(crew__bounded *b) {
    for (unsigned i = 0; b->lent && i < CREW__ROOM_SLEEPERS; i++)
        if (!(b->lent_mask & (1u << i))) {
            b->lent_mask |= 1u << i;
            return &b->lent[i];
        }
    return NULL;
}

/* pool->lock held: s, lent by lend() if lent (else the caller's own), is free for the next
 * waiter. (Told, not found by comparing s with the array: a stack sleeper is another object.) */
static void give_back(crew__bounded *b, crew__ec_sleeper *s, bool lent) {
    crew__ec_off_all(s);
    if (lent)
        b->lent_mask &= ~(1u << (unsigned)(s - b->lent));
}

#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (the checked library the tests link, debug.h): how many of the queue's sleepers
 * are lent now. */
unsigned crew__test_room_lent(crew_pool *p);
unsigned crew__test_room_lent(crew_pool *p) {
    pthread_mutex_lock(&p->lock);
    unsigned n = (unsigned)__builtin_popcount(p->bounded.lent_mask);
    pthread_mutex_unlock(&p->lock);
    return n;
}
#endif

/* wait_for_room's last look (lock held): the pool closed, or room for n tasks. Seq_cst loads:
 * the pool's state (see struct crew_pool) and the freed place (see crew__bounded). The first
 * look that finds neither lists the sleeper for crew_diagnose. */
typedef struct room_look {
    crew_pool *p;
    size_t n;
    crew__blocked *rec;
    bool listed;
} room_look;

static bool room_or_closed(void *ctx) {
    room_look *c = ctx;
    crew_pool *p = c->p;
    if (crew__load_seq_cst(&p->state) != CREW__OPEN ||
        crew__load_seq_cst(&p->bounded.admitted) + c->n <= p->bounded.capacity)
        return true;
    if (!c->listed)
        crew__blocked_add(p, c->rec);
    c->listed = true;
    return false;
}

/* Wait for room in the bounded queue (the eventcount pool->bounded.room, ec.h;
 * crew__bounded_release notifies), on a sleeper the queue lends (WAKING A SUBMITTER above) or,
 * if all are lent, one on this stack; rec lists the sleeper for crew_diagnose. Returns CREW_OK
 * to try again, CREW_ESHUTDOWN or CREW_ETIMEDOUT. */
static int wait_for_room(crew_pool *p, size_t n, const admit_how *how, crew__blocked *rec) {
    int rc = CREW_OK;
    room_look look = {p, n, rec, false};
    crew__ec_sleeper mine;
    pthread_mutex_lock(&p->lock);
    crew__ec_sleeper *s = lend(&p->bounded);
    if (!s) {
        crew__ec_sleeper_init(&mine, NULL);
        s = &mine;
    }
    crew__ec_on(s, &p->bounded.room, NULL);
    enum crew__ec_end end;
    while ((end = crew__ec_wait(s, &p->lock, room_or_closed, &look,
                                how->timed ? &how->deadline : NULL)) == CREW__EC_WOKEN)
        ; /* woken: look again (the loop's next wait looks first) */
    give_back(&p->bounded, s, s != &mine);
    if (end == CREW__EC_TIMEDOUT)
        rc = CREW_ETIMEDOUT;
    if (look.listed)
        crew__blocked_remove(p, rec);
    pthread_mutex_unlock(&p->lock);
    if (rc == CREW_OK && crew__load_seq_cst(&p->state) != CREW__OPEN)
        rc = CREW_ESHUTDOWN;
    return rc;
}

int crew__bounded_admit(crew_pool *p, size_t n, const admit_how *how, bool *caller_runs) {
    *caller_runs = false;
    if (n > p->bounded.capacity)
        return CREW_EFULL;
    unsigned policy = p->bounded.policy;
    /* A task of this pool that waited for room could wait for itself (every worker blocked in
     * a submission, nobody freeing a place): it runs the new tasks itself instead. */
    if (policy == CREW_FULL_BLOCK && !how->try_only && crew__in_task_of(p))
        policy = CREW_FULL_CALLER_RUNS;
    crew__blocked rec = {.kind = CREW__BLOCKED_ROOM, .n = n};
    for (;;) {
        size_t cur = crew__load_seq_cst(&p->bounded.admitted); /* seq_cst: see struct crew_pool */
        while (cur + n <= p->bounded.capacity)
            if (crew__cas_weak_seq_cst(&p->bounded.admitted, &cur, cur + n))
                return CREW_OK;
        if (how->try_only || policy == CREW_FULL_FAIL)
            return CREW_EFULL;
        if (policy == CREW_FULL_CALLER_RUNS) {
            *caller_runs = true;
            return CREW_OK;
        }
        if (policy == CREW_FULL_DROP_OLDEST) {
            crew_task *old = crew__sched_take_any(p);
            if (old && (old->crew_flags_ & CREW__TASK_NOTIFY))
                crew__run(p, old); /* a completion callback is never dropped: it runs here */
            else if (old)
                crew__task_dropped(p, old, false); /* frees its place; not a shutdown's */
            else if (crew__load_seq_cst(&p->bounded.admitted) + n > p->bounded.capacity)
                sched_yield(); /* the places are held by tasks being taken right now */
            continue;
        }
        int rc = wait_for_room(p, n, how, &rec);
        if (rc != CREW_OK)
            return rc;
    }
}

void crew__bounded_release(crew_pool *p) {
    /* Seq_cst: the freed place is the event a submitter waiting for room looks for. */
    crew__fetch_sub_seq_cst(&p->bounded.admitted, 1);
    /* Every waiter: they need different amounts of room, and one that times out or cannot use
     * the room would otherwise swallow the wake-up. A lent sleeper's wake comes after the unlock
     * (crew__ec_notify defers it: WAKING A SUBMITTER above). */
    crew__ec_notify(&p->bounded.room, &p->lock, NULL, NULL);
}
