/*
 * steal_ext.h -- the external submission slots of the work-stealing strategy (STEAL,
 * sched_steal.c): their type, the slot of the calling thread, and the owner side's pushes into
 * it under its lock (crew__ext_push_value, one task by value, inline, with a variant that never
 * waits: crew_submit's whole queueing step from a thread outside the pool, which sched_calls.h's
 * crew__sched_push_value makes in place rather than through the strategy's table: no indirect
 * call, no frame of its own; crew__ext_push, arrays and put-backs). Everything else about the
 * slots (steals, batch claims) is sched_steal.c's, but for a waiting submitter's takes, inline
 * too: a helping waiter's steal from its own slot (crew__ext_own_deque), and the take of its
 * group's newest task and its put-back (crew__ext_take_group, crew__ext_put_back: sched_steal.c's
 * group take and crew_wait's first steps, wait_own.c); and a worker's bounded wait for a batch
 * to form in a producer's slot (GATHERING, below).
 *
 * A slot is a Chase-Lev deque (deque.h) whose owner side (push, and the pop of a waiting
 * submitter) is serialised by a spinlock that one submitting thread keeps in its cache; thieves
 * steal from the top without the lock. The memory orders are the deque's and the spinlock's
 * (lock.h: acquire on taking it, release on giving it back).
 */
#ifndef CREW_STEAL_EXT_H
#define CREW_STEAL_EXT_H

#include <stdbool.h>
#include <stdint.h>

#include "atomic.h"
#include "base.h"
#include "deque.h"
#include "lock.h"

/* How many external slots a pool has; a thread uses slot crew__thread_number() modulo this. */
#define CREW__EXT_SLOTS 8u

/* An external submission slot: a deque whose owner side is locked. */
typedef struct crew__ext_slot {
    crew__spinlock lock; /* serialises push and pop (the owner side) */
    crew__deque deque;   /* thieves steal without the lock */
    /* Batch claims in progress (crew__deque_steal_batch's protocol with the owner's
     * crew__deque_take_unless: seq_cst increment, release decrement, acquire read). */
    atomic_uint claimers;
} crew__ext_slot;

/* The calling thread's slot among the CREW__EXT_SLOTS at ext. */
static inline crew__ext_slot *crew__ext_slot_of_thread(crew__ext_slot *ext) {
    return &ext[crew__thread_number() % CREW__EXT_SLOTS];
}

/* The owner side's pushes into the calling thread's slot among those at ext, under its lock
 * (the one place that takes it to push), all or nothing (CREW_OK or CREW_ENOMEM):
 * - crew__ext_push_value: fn(arg) by value (aux: crew__deque_aux);
 * - crew__ext_push: either t[0..n) by address (one task by value if it is a take's copy,
 *   crew__deque_push1: a put-back) or, with t NULL, values[0..n) by value in group slot (the
 *   caller's array is not referred to once it returns). */
static inline int crew__ext_push_value(crew__ext_slot *ext, crew_fn fn, void *arg, uint64_t aux) {
    crew__ext_slot *x = crew__ext_slot_of_thread(ext);
    crew__spinlock_acquire(&x->lock);
    int rc = crew__deque_push_value(&x->deque, fn, arg, aux);
    crew__spinlock_release(&x->lock);
    return rc;
}
static inline int crew__ext_push(crew__ext_slot *ext, crew_task *t, const crew_task *values,
                                 size_t n, uint32_t slot) {
    crew__ext_slot *x = crew__ext_slot_of_thread(ext);
    crew__spinlock_acquire(&x->lock);
    int rc = !t        ? crew__deque_push_values(&x->deque, values, n, slot)
             : n == 1 ? crew__deque_push1(&x->deque, t)
                      : crew__deque_push(&x->deque, t, n);
    crew__spinlock_release(&x->lock);
    return rc;
}

/* crew__ext_push_value without waiting and without a call: false, with nothing pushed, if the
 * calling thread has no number yet (crew__thread_number), its slot's lock is held, or the slot's
 * array may be full (crew__deque_room_at); the caller then pushes with crew__ext_push_value. So
 * crew_submit's fast path (submit.c) calls nothing and saves no register. */
static inline bool crew__ext_try_push_value(crew__ext_slot *ext, crew_fn fn, void *arg,
                                            uint64_t aux) {
    unsigned number = crew__tls_number; /* crew__thread_number() + 1, or 0 (base.h) */
    if (__builtin_expect(number == 0, 0))
        return false;
    crew__ext_slot *x = &ext[(number - 1) % CREW__EXT_SLOTS];
    if (__builtin_expect(!crew__spinlock_try(&x->lock), 0))
        return false;
    int64_t b = crew__load_relaxed(&x->deque.bottom); /* relaxed: the owner side, locked */
    crew__deque_array *a = crew__deque_room_at(&x->deque, b);
    if (__builtin_expect(a != NULL, 1))
        crew__deque_put_at(&x->deque, a, b, fn, arg, aux);
    crew__spinlock_release(&x->lock);
    return a != NULL;
}

/* A waiting thread's take from its own slot x found nothing: if a batch claim runs (the take
 * gave way to it, crew__deque_take_newest or _take_unless), the waiter must look again rather
 * than sleep, since the claim may leave its task where it was (claim_batch) and nobody would
 * wake it for that: *retry is set. Acquire: as the take's read of the count. */
static inline void crew__ext_gave_way(crew__ext_slot *x, bool *retry) {
    if (crew__load_acquire(&x->claimers) != 0)
        *retry = true;
}

/* A thread outside the pool that waits for group slot (STEAL's take_group; crew_wait's first
 * steps, wait_own.c, inline): the newest task of its own slot among those at ext if it is of
 * that group, else NULL; one of another group goes back where it was, counted in *pushed_back.
 * A task held by value is copied into buf. NULL also while a worker claims a batch from the slot
 * (the take gives way, crew__deque_take_newest): then *retry is set, since the claim may leave
 * the task where it was and nobody would wake a sleeper for it. */
static inline crew_task *crew__ext_take_group(crew__ext_slot *ext, uint32_t slot, crew_task *buf,
                                              bool *retry, size_t *pushed_back) {
    crew__ext_slot *x = crew__ext_slot_of_thread(ext);
    if (crew__deque_size(&x->deque) == 0)
        return NULL;
    crew__spinlock_acquire(&x->lock);
    crew_task *t = crew__deque_take_newest(&x->deque, buf, &x->claimers);
    if (!t) {
        crew__ext_gave_way(x, retry);
    } else if (t->crew_private_.slot != slot) {
        int rc = crew__deque_push1(&x->deque, t); /* its place is free */
        crew__assert(rc == CREW_OK);
        (void)rc;
        ++*pushed_back;
        t = NULL;
    }
    crew__spinlock_release(&x->lock);
    return t;
}
/* Put t, a task crew__ext_take_group returned, back on top of the calling thread's slot among
 * those at ext (where it was, unless a thread that shares the slot pushed meanwhile): CREW_OK,
 * or CREW_ENOMEM if the slot had to grow and could not (then the caller keeps t). */
static inline int crew__ext_put_back(crew__ext_slot *ext, crew_task *t) {
    return crew__ext_push(ext, t, NULL, 1, 0);
}

/* GATHERING. A worker that finds only a few tasks in a slot whose producer is submitting would
 * chase it: one steal per task, each a read of the bottom the producer writes next and of the
 * line it is filling, so every push of the producer's misses in its cache (the "chasing" regime
 * of docs/benchmarks.md, where the producer's time per task triples and the workers run dry,
 * sleep and are woken by it thousands of times a run). It waits instead, a bounded moment, for a
 * batch to form, and claims it with one compare-and-swap: it pauses, looks at bottom again, and
 * goes on only while the producer is still submitting fast (at least CREW__EXT_GATHER_GROWTH
 * tasks since its last look) and the slot holds fewer than CREW__EXT_GATHER tasks, at most
 * CREW__EXT_GATHER_ROUNDS looks of CREW__EXT_GATHER_PAUSES pauses each. Each look costs the
 * producer a cache miss on its next push (the line of bottom moves to the looker), so the looks
 * are far apart (about 0.8 us on a 2-core VM, where a pause takes 25 ns; 4 pauses, a look
 * every 0.1 us, cost the one-producer rate about 30%); a slower producer (fewer tasks since the
 * last look) or one that has stopped is taken at once after one look: its tasks wait at most
 * one look (0.8 us), a fast producer's at most eight (about 6 us). An empty slot is never waited
 * for: an idle pool spends nothing here. Only a worker that may claim a batch waits
 * (sched_steal.c's take_queued asks batch_size): not while tasks are timed, where each is taken
 * alone. */
#define CREW__EXT_GATHER 96u        /* a full batch (32) for one of two workers: batch_size */
#define CREW__EXT_GATHER_ROUNDS 8u  /* looks at most */
#define CREW__EXT_GATHER_PAUSES 32u /* pauses between looks (above) */
#define CREW__EXT_GATHER_GROWTH 8   /* tasks pushed since the last look: a fast producer */

/* Wait as above for slot deque d, which held len tasks (1 <= len < CREW__EXT_GATHER) at the
 * caller's look; returns how many it holds now. Relaxed loads: a hint, as crew__deque_size's;
 * the claim that follows reads what it takes with the deque's own orders. */
static inline size_t crew__ext_gather(crew__deque *d, size_t len) {
    int64_t b = crew__load_relaxed(&d->bottom); /* relaxed: a hint (see above) */
    for (unsigned r = 0; r < CREW__EXT_GATHER_ROUNDS && len < CREW__EXT_GATHER; r++) {
        for (unsigned k = 0; k < CREW__EXT_GATHER_PAUSES; k++)
            crew__cpu_relax();
        int64_t now = crew__load_relaxed(&d->bottom); /* relaxed: a hint */
        if (now == b)
            break; /* the producer has stopped: take what is there */
        len = crew__deque_size(d);
        if (now - b < CREW__EXT_GATHER_GROWTH)
            break; /* a slower producer: take what is there */
        b = now;
    }
    return len;
}

/* The deque of the calling thread's slot among those at ext, whose oldest task a thread outside
 * the pool that helps while it waits claims inline, as a thief does (sched_calls.h's
 * crew__sched_take_own_ext). */
static inline crew__deque *crew__ext_own_deque(crew__ext_slot *ext) {
    return &crew__ext_slot_of_thread(ext)->deque;
}

#endif /* CREW_STEAL_EXT_H */
