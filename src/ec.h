/*
 * ec.h -- the eventcount: how every crew thread sleeps without losing a wake-up, and how a busy
 * pool makes no system call to find that nobody sleeps.
 *
 * OVERVIEW. A thread that finds nothing to do (a worker without a task, a caller waiting for a
 * group or for a quiet pool, a submitter waiting for room in a bounded queue, an idle blocking
 * thread) must sleep, and must be woken when what it waits for happens: a task is queued, a
 * group finishes, the last pending task ends, a place frees. The thread that makes it happen
 * (the notifier) is on the hot path and must not take a lock or make a system call when nobody
 * sleeps, which is nearly always. An eventcount (Concurrency Kit's ck_ec, folly's EventCount,
 * oneTBB's concurrent_monitor) splits the wait in two phases, so that the notifier pays one
 * fence and one load:
 *
 *   sleeper                                   notifier
 *   lock                                      make the event visible (a store or RMW)
 *   crew__ec_prepare(ec, &me)   count++,      if (crew__ec_sleepers(ec))    fence, read count
 *                               fence             lock; crew__ec_wake_locked(ec, one) or
 *   look for the event once more                  crew__ec_broadcast_locked(cv); unlock
 *   found:     crew__ec_cancel(ec, &me)
 *   not found: crew__ec_commit(ec, &me, lock, until)   (waits on me.cv, releases the lock)
 *   unlock
 *
 * Either the sleeper's last look sees the event, or the notifier sees the count (Dekker's
 * pattern: each side writes, fences, then reads the other's variable; C11 forbids both reads
 * missing). A notifier that sees the count takes the lock the sleeper holds from prepare until
 * its wait releases it, so its signal cannot fall between the last look and the wait.
 *
 * USAGE RULES.
 *   - The sleeper holds the lock from crew__ec_prepare to crew__ec_commit / crew__ec_cancel;
 *     the notifier holds it for crew__ec_wake_locked and crew__ec_broadcast_locked. One lock may
 *     serve several eventcounts (crew uses the pool's lock for all of them).
 *   - The event must be made visible before crew__ec_sleepers, and looked for after
 *     crew__ec_prepare: both sides' seq_cst fences are in these functions, nowhere else.
 *   - A sleeper may prepare on several eventcounts before its one last look (a waiter that may
 *     take any task counts itself as a worker would, and as its group's waiter); it then commits
 *     on one of them and cancels the others, or cancels all.
 *   - crew__ec_wake_locked wakes one chosen sleeper and takes it off the count itself, so the
 *     notifications that follow, before the sleeper has even run, see one sleeper fewer and stay
 *     on the fast path. crew__ec_broadcast_locked wakes every sleeper of a condition variable
 *     (they take themselves off the count when they return).
 *
 * API (below): crew__ec_init, crew__ec_prepare, crew__ec_cancel, crew__ec_commit,
 * crew__ec_sleepers, crew__ec_wake_locked, crew__ec_broadcast_locked, crew__ec_count_locked
 * (for sleepers that only ever use the lock); crew__cond_init_monotonic
 * and crew__deadline_after_ms for timed sleeps (every timed wait in crew is on CLOCK_MONOTONIC).
 *
 * IMPLEMENTATION NOTES. The count is a plain atomic counter; the sleeper's increment is a
 * seq_cst read-modify-write followed by a seq_cst fence, the notifier's read a seq_cst fence
 * followed by a relaxed load (a busy pool writes no shared line to learn that nobody sleeps).
 * ThreadSanitizer does not model fences, so under it the notifier's read is a seq_cst
 * read-modify-write of the counter itself (fetch_add 0), which the sleeper's increment
 * synchronises with in the counter's modification order: the same guarantee, checked. The
 * protocol is model-checked in models/sleep.pml, whose processes name these functions.
 */
#ifndef CREW_EC_H
#define CREW_EC_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "atomic.h"
#include "debug.h"

typedef struct crew__ec {
    /* Threads between crew__ec_prepare and the end of their sleep (or a notifier's claim).
     * Changed with seq_cst read-modify-writes under the sleepers' lock; read by notifiers
     * after a seq_cst fence (see the notes above; under ThreadSanitizer the notifier's read is
     * an RMW that adds 0, outside the lock, which changes nothing). */
    atomic_uint count;
} crew__ec;

/* One sleeper's record: where it sleeps, and whether a notifier has already woken it. */
typedef struct crew__ec_waiter {
    pthread_cond_t *cv; /* its condition variable (its own, or one shared with other sleepers) */
    bool counted;       /* lock: counted in the eventcount, not yet woken by crew__ec_wake_locked */
} crew__ec_waiter;

static inline void crew__ec_init(crew__ec *ec) { crew__atomic_init(&ec->count, 0u); }

#if defined(CREW__TSAN)
#define crew__ec_fence_() ((void)0)
#else
#define crew__ec_fence_() crew__fence_seq_cst()
#endif

/* Sleeper, lock held: count me, then fence; the last look for the event follows. */
static inline void crew__ec_prepare(crew__ec *ec, crew__ec_waiter *w) {
    crew__assert(!w->counted); /* counted once: its last sleep was committed or cancelled */
    w->counted = true;
    /* Seq_cst: the sleeper's write in Dekker's pattern; the fence below orders it before the
     * last look (pairs with the notifier's fence in crew__ec_sleepers). */
    crew__fetch_add_seq_cst(&ec->count, 1u);
    crew__ec_fence_();
}

/* Sleeper, lock held: the last look found the event; no sleep. */
static inline void crew__ec_cancel(crew__ec *ec, crew__ec_waiter *w) {
    if (w->counted) { /* not already taken off by a notifier */
        w->counted = false;
        crew__assert(crew__load_relaxed(&ec->count) != 0); /* w is in it (exact: the lock) */
        crew__fetch_sub_seq_cst(&ec->count, 1u); /* seq_cst: pairs with the increment */
    }
}

/* How a sleep ended (crew__ec_commit). */
enum crew__ec_end {
    CREW__EC_WOKEN = 0,    /* a notifier chose this sleeper (crew__ec_wake_locked) */
    CREW__EC_RETURNED = 1, /* a broadcast, or a spurious return: look for the event again */
    CREW__EC_TIMEDOUT = 2  /* the time passed first */
};

/* Sleeper, lock held, after a last look that found nothing: sleep on w->cv until woken or, if
 * until is not NULL, until that time (CLOCK_MONOTONIC; the cv must use that clock:
 * crew__cond_init_monotonic). Returns with the lock held and w off the count. */
enum crew__ec_end crew__ec_commit(crew__ec *ec, crew__ec_waiter *w, pthread_mutex_t *lock,
                                  const struct timespec *until);

/* Notifier, after making its event visible: may anyone sleep? (The fence is here.) */
static inline bool crew__ec_sleepers(crew__ec *ec) {
#if defined(CREW__TSAN)
    return crew__fetch_add_seq_cst(&ec->count, 0u) != 0; /* seq_cst RMW: see the notes above */
#else
    crew__ec_fence_(); /* orders the event before the read; pairs with crew__ec_prepare's */
    return crew__load_relaxed(&ec->count) != 0;
#endif
}

/* Notifier, lock held: wake w if it still sleeps, taking it off the count. Returns whether it
 * did. */
static inline bool crew__ec_wake_locked(crew__ec *ec, crew__ec_waiter *w) {
    if (!w->counted)
        return false;
    w->counted = false;
    crew__assert(crew__load_relaxed(&ec->count) != 0); /* w is in it (exact: the lock) */
    crew__fetch_sub_seq_cst(&ec->count, 1u); /* seq_cst: see crew__ec.count */
    pthread_cond_signal(w->cv);
    return true;
}

/* Notifier, lock held: wake every sleeper of cv (which may serve several eventcounts). */
static inline void crew__ec_broadcast_locked(pthread_cond_t *cv) { pthread_cond_broadcast(cv); }

/* Lock held: sleepers counted now (exact under the lock, which every change that alters it
 * holds). */
static inline unsigned crew__ec_count_locked(crew__ec *ec) {
    return crew__load_relaxed(&ec->count); /* relaxed: the lock orders every change */
}

/* Initialise cv for timed sleeps on CLOCK_MONOTONIC. 0 or an errno value. */
int crew__cond_init_monotonic(pthread_cond_t *cv);
/* The CLOCK_MONOTONIC time ms milliseconds from now. */
struct timespec crew__deadline_after_ms(unsigned ms);

#endif /* CREW_EC_H */
