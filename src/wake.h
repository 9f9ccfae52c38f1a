/*
 * wake.h -- waking the pool's threads (wake.c): whoever can run newly queued tasks, whoever
 * waits for a quiet pool, and every sleeper when the pool's state changes (crew__wake_*; the
 * completion callbacks of crew_notify are notify.c's). The check made on every submission
 * (crew__wake_work) is inline; the wake-ups are not.
 */
#ifndef CREW_WAKE_H
#define CREW_WAKE_H

#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "sched_calls.h"

/* The data of a timed waiter's node on its group's waiters (wait.c): it runs no task, so the
 * wake-ups for queued tasks pass it over, and only its group's end wakes it. Never dereferenced;
 * a helping waiter's node there has NULL. */
#define CREW__WAIT_SLEEPS ((void *)(uintptr_t)1)

/* crew__wake_work found sleepers: wake whoever can run the n tasks of group slot. */
void crew__wake(crew_pool *p, size_t n, uint32_t slot);
/* pool->lock held: wake up to n sleeping workers that can run newly queued work, every waiter
 * that may take any task, and the waiters of group slot (whose own tasks these may be). */
void crew__wake_locked(crew_pool *p, size_t n, uint32_t slot);
/* pool->lock held: n tasks of any groups were handed over by a worker that leaves (resize, or
 * a thread that could not start): wake workers for them as crew__wake_locked does, and every
 * helping waiter, since a waiter that may take only its own group's tasks (at its helping
 * depth, or a marked worker) may be waiting for one of them. */
void crew__wake_handed_over_locked(crew_pool *p, size_t n);
/* Wake every sleeping worker and helping waiter (lock held): a state change. */
void crew__wake_all_locked(crew_pool *p);
/* The same, and the submitters waiting for room (resize, shutdown). */
void crew__wake_all(crew_pool *p);
/* Wake sleepers for the *n tasks a take put (back) where other threads take them
 * (crew__take_ctx.pushed_back; no lock held), and set *n to 0. */
void crew__wake_pushed_back(crew_pool *p, size_t *n);

/* n tasks of group slot (0 = none) were just queued: wake whoever can run them. The push
 * before it is the event: a worker or helper (p->work), or a waiter of the group, whose own
 * tasks these are, may sleep. The check (the eventcount's fence and a load) is inlined into
 * every submission; the wake-up is not. */
static inline void crew__wake_work(crew_pool *p, size_t n, uint32_t slot) {
    if ((__builtin_expect(crew__ec_sleepers(&p->work), 0) &&
         (crew__load_seq_cst(&p->lookers) == 0 || !crew__sched_any_worker(p))) ||
        (slot != 0 && crew__ec_sleepers(&crew__slot_at(&p->groups, slot)->waiters)))
        crew__wake(p, n, slot);
}

#endif /* CREW_WAKE_H */
