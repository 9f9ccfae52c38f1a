/*
 * wake.h -- waking the pool's threads (wake.c): whoever can run newly queued tasks, whoever
 * waits for a quiet pool, and every sleeper when the pool's state changes (crew__wake_*; the
 * completion callbacks of crew_notify are notify.c's), and when a caller's offers of a few tasks
 * it waits for are woken for (the deferred wake-up, below). The check made on every submission
 * (crew__wake_work) is inline; the wake-ups are not.
 */
#ifndef CREW_WAKE_H
#define CREW_WAKE_H

#include <stdbool.h>
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

/* The deferred wake-up of a caller's offers (crew_enqueue_tasks_wait's few tasks, join.c): a
 * thread outside the pool, outside any task, that offers tasks and then runs one itself (fork-
 * join rounds from outside) takes the offers back
 * itself when its own task is short, before any woken worker could be running (a futex wake-up
 * costs the caller a system call of several microseconds and the woken worker a CPU, and it
 * found nothing in most rounds: the caller had taken its offer back). So no worker is woken for
 * the offers unless this thread's last two rounds showed long tasks: the caller's own first
 * task ran CREW__WAKE_DEFER_NS or more. Then the offers are woken for as they are made; and in a
 * round whose own task turns out long, whatever offers are still out beyond the one the caller
 * takes back next are woken for at once (crew__wake_if_long), so long tasks are not run one
 * after the other on the caller. A worker that is awake (a looker) takes offers either way.
 * Offers made inside a task (a worker's, or a task an outside thread runs) are woken for at
 * once, as before: there the caller's own task may hold a whole subtree of nested rounds, each
 * short, and deferring at every level would run the tree on one thread.
 *
 * THE WATCHER. A round is deferred only while a sleeping worker watches (p->watch): it sleeps
 * with a time-out (CREW__WAKE_WATCH_NS, the eventcount's timed wait) and then looks for work
 * as any worker does, so an offer the caller does not take back (its own task is long, or
 * waits for the offered one: a producer and its consumer, a barrier of two) is taken within
 * that bound, as a woken worker would have. A caller that finds no watcher wakes for its offers
 * as for any (crew__wake_work), and marks the watch wanted: a worker about to sleep while it is
 * wanted and nobody watches becomes the watcher (crew__wake_watch_claim, in its last look),
 * which clears the mark; it resigns once its sleep ends (crew__wake_watch_resign), looks for
 * work once more in its sleep, and watches again only if a caller marked it meanwhile; it does
 * not poll in its next idle stretch (worker.c), where it would take the offers of the short
 * rounds that go on, each a wait for the caller. So while short rounds go on one worker wakes
 * every CREW__WAKE_WATCH_NS or so, and a period after the last round the pool sleeps untimed. Correctness needs only: a caller that saw a watcher made its fetch_or
 * before the watcher's resign, which therefore sees the offers and looks for work right after
 * (if it takes other work first, the offer waits for that task, as after any wake-up);
 * not woken, it hands on what it leaves queued (a round's other offers; it must leave). */
#define CREW__WAKE_DEFER_NS 20000u /* about two wake-ups' latency on a small VM */
#define CREW__WAKE_WATCH_NS 50000u /* the watcher's sleep: the bound on a deferred offer's wait */
#define CREW__WATCHING 1u          /* p->watch: a worker watches */
#define CREW__WATCH_WANTED 2u      /* p->watch: a caller deferred since the watcher last looked */
#define CREW__WATCH_TINY 4u        /* p->watch: and its last round's own tasks were tiny (below) */

/* TINY ROUNDS. An awake worker takes a deferred offer as any task, and in a round whose own
 * task is shorter than handing a task to another CPU and back (the offer's lines to the thief,
 * its end's back to the caller: a round trip between two cores, 0.65-1 us on a 2-core VM,
 * 0.1-0.2 us on one socket of a server), the round then lasts longer than if the caller had run
 * both: two tasks of 0.29 us took 0.93 us a round with one of them on a polling worker, 0.64
 * us on the caller alone (2 cores, a harness timing each round). A worker that polled after
 * such a task took the next round's offer as well, about one round in three, and stayed awake
 * for as long as the rounds went on. So a caller whose rounds' own tasks ran under
 * CREW__WAKE_TINY_NS marks its deferral tiny (CREW__WATCH_TINY, with CREW__WATCH_WANTED, in the
 * same fetch_or), and while the mark is up an idle worker does not poll: it sleeps at once (its
 * last look first), and the caller runs its rounds alone. (Other threads' submissions to the
 * pool meanwhile find no poller either and wake a sleeper, as under a spin of 0.) The mark is
 * cleared with WANTED by the next watcher's claim, and set again only by the next tiny round
 * of a thread on this pool (a thread's tiny rounds on another pool do not count), so it
 * outlives the tiny rounds by one watch at most (the one under way: up to
 * CREW__WAKE_WATCH_TINY_NS). Rounds of longer tasks (CREW__WAKE_TINY_NS or more, below
 * CREW__WAKE_DEFER_NS) are deferred as before, and a worker that finds their offers polls
 * after them as after any task: there the parallel round is the faster one. */
#define CREW__WAKE_TINY_NS 1000u
/* The watcher's sleep when the rounds it watches are tiny. Its look after the sleep lands in a
 * round of the caller's about every other time and takes that round's offer: a round that then
 * lasted 23-30 us (median, against 0.64), one in 250 under CREW__WAKE_WATCH_NS, a sixth of the
 * time of all the rounds. Tiny rounds hold no long task to take: the watch is there for the
 * offer nobody takes back (tasks of one round that wait for each other), which then waits up
 * to this long; a caller whose own task turns long wakes for its other offers itself. */
#define CREW__WAKE_WATCH_TINY_NS 1000000u

typedef struct crew__defer {
    uint64_t since; /* when the offers were made (crew__now_ns); 0: no more checks */
    bool woke;      /* the offers were woken for */
} crew__defer;

/* After n offers (n >= 1) of tasks it will take back or wait for, by a caller outside the pool
 * and outside any task (the others wake with crew__wake_work, inline): wake whoever can run them
 * now if this thread's rounds are long, else defer (see above). */
crew__defer crew__wake_offered(crew_pool *p, size_t n);
/* After each task the caller ran itself while offers are out: if the round has lasted
 * CREW__WAKE_DEFER_NS, wake for the `left` offers the caller will not take back next (if not
 * woken for already), and remember that this thread's rounds are long; else that they are
 * short. Nothing once d->since is 0 (the round was found long). */
void crew__wake_if_long_slow(crew_pool *p, crew__defer *d, size_t left);
/* A worker's last look before it sleeps found nothing (lock held): if it becomes the watcher
 * (the watch is wanted and nobody watches), how long it sleeps at most (CREW__WAKE_WATCH_NS, or
 * CREW__WAKE_WATCH_TINY_NS for tiny rounds); else 0. */
uint64_t crew__wake_watch_claim(crew_pool *p);
/* The watcher's sleep has ended (lock held): it watches no more, and looks for work next. */
void crew__wake_watch_resign(crew_pool *p);
/* Tests: p->watch as it is now (CREW__WATCHING, CREW__WATCH_WANTED, CREW__WATCH_TINY). */
unsigned crew__wake_watch_word(crew_pool *p);
/* Does a caller run tiny rounds (CREW__WATCH_TINY, see TINY ROUNDS)? Then an idle worker does
 * not poll. Relaxed: a hint for a policy; a stale answer costs polls, or a sleep. */
static inline bool crew__wake_rounds_tiny(crew_pool *p) {
    return (crew__load_relaxed(&p->watch) & CREW__WATCH_TINY) != 0;
}
static inline void crew__wake_if_long(crew_pool *p, crew__defer *d, size_t left) {
    if (d->since != 0) /* only a deferring caller pays the call */
        crew__wake_if_long_slow(p, d, left);
}

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
