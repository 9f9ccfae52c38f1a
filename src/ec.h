/*
 * ec.h -- the eventcount: how every crew thread sleeps without losing a wake-up, how a busy
 * pool makes no system call to find that nobody sleeps, and how a wake-up reaches only the
 * threads that wait for what happened.
 *
 * OVERVIEW. A thread that finds nothing to do (a worker without a task, a caller waiting for a
 * group or for a quiet pool, a submitter waiting for room in a bounded queue, an idle blocking
 * thread, a thread joining others, the sizing controller between two periods) must sleep, and
 * must be woken when what it waits for happens: a task is queued, a group finishes, the last
 * pending task ends, a place frees. The thread that makes it happen (the notifier) is on the hot
 * path and must not take a lock or make a system call when nobody sleeps, which is nearly
 * always. An eventcount (Concurrency Kit's ck_ec, folly's EventCount, oneTBB's
 * concurrent_monitor) splits the wait in two phases, so that the notifier pays one fence and one
 * load. This module owns the whole sequence on both sides; no other file prepares, commits or
 * waits on a futex or a condition variable:
 *
 *   sleeper: crew__ec_wait(s, lock, look, ctx, until)   notifier: make the event visible, then
 *     for each eventcount s is on: count++, list the       crew__ec_notify(ec, lock, match, ctx)
 *       node (prepare), fence                              fence, read count; if not 0: lock,
 *     look(ctx) once more: found? off every list, return   wake the listed nodes that match
 *     else sleep on s's word or condition variable         (off every list and count, mark and
 *       (commit)                                           wake their sleeper), unlock
 *     woken by a notifier: return
 *
 * Either the sleeper's last look sees the event, or the notifier sees the count (Dekker's
 * pattern: each side writes, fences, then reads the other's variable; C11 forbids both reads
 * missing). A notifier that sees the count takes the lock the sleeper holds from its prepare
 * until its wait releases it, so it chooses the sleeper either before the last look (which then
 * sees the event) or once the sleeper has released the lock to sleep; and the sleeper's OS wait
 * returns at once if it was chosen in between (THE OS WAIT).
 *
 * TARGETED WAKE-UPS. Each eventcount lists the nodes of its sleepers, and each sleeper sleeps
 * on something of its own (see THE OS WAIT), so a notifier wakes exactly the sleepers it chooses:
 * those of its eventcount (a group's, so finishing one group wakes only its own waiters), and of
 * those the ones its match function accepts (a worker whose queue has work, one sleeper of
 * several, a waiter of a given group). A sleeper may sleep on several eventcounts at once (a
 * waiter that may take any task sleeps on its group's and on the pool's work): one node on each,
 * one look, and the first notifier to choose any of its nodes takes it off all of them and wakes
 * it, so it is woken once.
 *
 * THE OS WAIT. On Linux a sleeper sleeps on a 32-bit word of its own (crew__ec_sleeper.word), as
 * Concurrency Kit's ck_ec and folly's EventCount do: the notifier that chooses it sets the word
 * to 1 under the lock and makes one FUTEX_WAKE (private) on it. A word on a stack (a waiting
 * caller's) is woken under the lock, while it is sure to exist: its sleeper cannot leave its
 * wait before it has taken the lock again (after it, the kernel would only compare a stale
 * address, but valgrind's memcheck reports the argument as unaddressable). A word that outlives
 * the wait (crew__ec_sleeper_own: a worker's, a blocking thread's record, the sleepers a
 * bounded queue lends to submitters waiting for room) is woken after the notifier has released
 * the lock (crew__ec_choose_locked, crew__ec_wake_chosen): woken under it, the sleeper ran into
 * the lock still held by its waker, which was waking the next one, and slept again on the mutex
 * (docs/benchmarks.md, the burst and the bounded queue); a wake that comes after its sleeper
 * has returned is a spurious one, which crew__ec_wait looks again after. The sleeper releases
 * the lock, FUTEX_WAITs while its word is 0 (the kernel compares and sleeps atomically, so a
 * notifier that set the word in between is never missed), and takes the lock again. A timed
 * wait is FUTEX_WAIT_BITSET without FUTEX_CLOCK_REALTIME: an absolute CLOCK_MONOTONIC deadline,
 * the `until` of crew__ec_wait as it is. Elsewhere (or built with CREW_NO_FUTEX: cmake
 * -DCREW_FUTEX=OFF) each sleeper has a condition variable (its own, made by
 * crew__ec_sleeper_own for a worker's or blocking thread's record, or the calling thread's:
 * crew__ec_thread_cv), which a notifier signals under the lock, for the same reason.
 *
 * USAGE RULES.
 *   - One lock serves the sleeper and the notifiers of an eventcount (the pool's lock for the
 *     pool's eventcounts; resize_lock for the workers' joiners, the controller's own lock for
 *     the sizing controller): the sleeper holds it around crew__ec_wait, which releases it
 *     only while asleep; crew__ec_notify takes it, crew__ec_notify_locked expects it held.
 *   - The event must be made visible before crew__ec_notify (or crew__ec_sleepers), and look()
 *     must look for it: both sides' seq_cst fences are in this module, nowhere else.
 *   - A sleeper whose events are only ever made under the lock (the blocking queue's pushes)
 *     may use crew__ec_notify_locked without crew__ec_sleepers: the lock alone orders them.
 *   - crew__ec_wait returns after a wake-up without looking again: the caller's loop looks.
 *   - A notifier that releases the lock itself right after choosing whom to wake, and is on a
 *     path where wake-ups matter, uses crew__ec_choose_locked and, once the lock is released,
 *     crew__ec_wake_chosen (crew__ec_notify does).
 *
 * API (below): crew__ec_init; crew__ec_sleeper_init (or crew__ec_sleeper_own and
 * crew__ec_sleeper_free for a thread's record), crew__ec_on, crew__ec_wait, and crew__ec_wait_for
 * for a sleeper on one eventcount that waits until its look holds (the sleeper);
 * crew__ec_sleepers, crew__ec_notify, crew__ec_notify_locked, crew__ec_choose_locked with
 * crew__ec_wake_chosen, crew__ec_listed (the notifier); crew__ec_sleepers_hint (a policy's guess);
 * crew__ec_thread_cv and crew__cond_init_monotonic for condition variables (every timed wait in
 * crew is on CLOCK_MONOTONIC; clock.h makes its times).
 *
 * IMPLEMENTATION NOTES. The count is a plain atomic counter; the sleeper's increment is a
 * seq_cst read-modify-write followed by a seq_cst fence, the notifier's read a seq_cst fence
 * followed by a relaxed load (a busy pool writes no shared line to learn that nobody sleeps).
 * ThreadSanitizer does not model fences, so under it the notifier's read is a seq_cst
 * read-modify-write of the counter itself (fetch_add 0), which the sleeper's increment
 * synchronises with in the counter's modification order: the same guarantee, checked. The lists
 * are doubly linked (a node leaves in O(1) when its sleeper found its event or was chosen through
 * another node) and guarded by the lock. ThreadSanitizer does not see the futex system calls, and
 * needs not: the word is an atomic, and everything a woken sleeper reads it reads under the lock
 * it takes again. The protocol is model-checked in models/sleep.pml, whose processes name these
 * functions.
 */
#ifndef CREW_EC_H
#define CREW_EC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* CREW__EC_FUTEX: the OS wait is a futex (Linux, 64-bit: its timespec is the C library's; not
 * with CREW_NO_FUTEX, which forces the portable condition variables so both are tested). */
#if defined(__linux__) && __SIZEOF_POINTER__ == 8 && !defined(CREW_NO_FUTEX)
#define CREW__EC_FUTEX 1
#else
#define CREW__EC_FUTEX 0
#endif

#include "atomic.h"
#include "clock.h" /* the times of timed waits: crew__timespec_of, crew__deadline_after_ms */
#include "debug.h"

typedef struct crew__ec_node crew__ec_node;

typedef struct crew__ec {
    /* Nodes between their sleeper's prepare and the end of its wait (or a notifier's choice).
     * Changed with seq_cst read-modify-writes under the sleepers' lock; read by notifiers
     * after a seq_cst fence (see the notes above; under ThreadSanitizer the notifier's read is
     * an RMW that adds 0, outside the lock, which changes nothing). */
    atomic_uint count;
    crew__ec_node *head; /* lock: the counted nodes, most recent sleeper first */
} crew__ec;

/* How many eventcounts one sleeper can sleep on at once. */
#define CREW__EC_NODES 3

typedef struct crew__ec_sleeper crew__ec_sleeper;

/* A sleeper's place on one eventcount. */
struct crew__ec_node {
    crew__ec_node *next, *prev; /* lock: in ec's list while counted */
    crew__ec *ec;               /* the eventcount */
    crew__ec_sleeper *who;      /* the sleeper it belongs to */
    void *data;                 /* for the notifiers' match functions (crew__ec_on) */
    bool counted;               /* lock: counted and listed */
};

/* One sleeping thread: what it sleeps on (THE OS WAIT above) and its nodes (crew__ec_on). */
struct crew__ec_sleeper {
#if CREW__EC_FUTEX
    /* 1 once a notifier chose one of its nodes during this wait, else 0: the futex word. Written
     * under the lock (0 by the sleeper as it starts a wait, 1 by the notifier); read by the
     * sleeper after it has released the lock (a relaxed load before the system call, which only
     * spares the call: the verdict is read again under the lock) and by the kernel. */
    atomic_uint word;
    bool lasting; /* the word outlives every wait (crew__ec_sleeper_own): wakes may be deferred */
#else
    pthread_cond_t *cv; /* signalled by notifiers; CLOCK_MONOTONIC for timed waits */
    pthread_cond_t own; /* cv, if crew__ec_sleeper_own made it */
    bool woken;         /* lock: a notifier chose one of its nodes during the last wait */
#endif
    unsigned n; /* nodes in use */
    crew__ec_node node[CREW__EC_NODES];
};

static inline void crew__ec_init(crew__ec *ec) {
    crew__atomic_init(&ec->count, 0u);
    ec->head = NULL;
}

/* A sleeper on no eventcount yet. Without futexes it sleeps on cv (NULL: the calling thread's
 * own, crew__ec_thread_cv; then it must be used on this thread only); with them on its own word,
 * and cv is not used. */
void crew__ec_sleeper_init(crew__ec_sleeper *s, pthread_cond_t *cv);
/* A sleeper that outlives its waits (a worker's or blocking thread's record, one a bounded
 * queue lends), used by one thread at a time: without futexes it gets a condition variable of
 * its own (CLOCK_MONOTONIC), made here; with them it needs none. 0, or an errno value (nothing
 * to free then). */
int crew__ec_sleeper_own(crew__ec_sleeper *s);
/* Undo crew__ec_sleeper_own, once no thread sleeps on s or may notify it. */
void crew__ec_sleeper_free(crew__ec_sleeper *s);
/* s sleeps on ec too (at most CREW__EC_NODES of them, each a different one), with data for ec's
 * notifiers' match functions. Not while s waits. */
static inline void crew__ec_on(crew__ec_sleeper *s, crew__ec *ec, void *data) {
    crew__assert(s->n < CREW__EC_NODES);
    for (unsigned i = 0; i < s->n; i++) /* a notifier unlists all of them while it walks one */
        crew__assert(s->node[i].ec != ec);
    crew__ec_node *n = &s->node[s->n++];
    n->ec = ec;
    n->who = s;
    n->data = data;
    n->counted = false;
    n->next = n->prev = NULL;
}
/* Forget s's eventcounts (between waits), to put it on others. */
static inline void crew__ec_off_all(crew__ec_sleeper *s) { s->n = 0; }

/* How a wait ended (crew__ec_wait). */
enum crew__ec_end {
    CREW__EC_FOUND = 0,   /* look() found what it looks for: no sleep, or not after a return */
    CREW__EC_WOKEN = 1,   /* a notifier chose this sleeper (through any of its nodes) */
    CREW__EC_TIMEDOUT = 2 /* the time passed first */
};

/* The sleeper's whole wait, lock held (released only while asleep, held again on return).
 * Counts s on each of its eventcounts and fences, then calls look(ctx): true means the event is
 * there, and the wait returns CREW__EC_FOUND without sleeping; false, and s sleeps until a
 * notifier chooses it (CREW__EC_WOKEN; the caller looks again itself) or, if until is not NULL,
 * until that CLOCK_MONOTONIC time (CREW__EC_TIMEDOUT; a time already past, or a negative
 * tv_sec, times out at once; tv_nsec must be in [0, 1e9)). After any other return from the OS
 * wait (spurious) it looks again (and may sleep again). On return s is on no count. */
enum crew__ec_end crew__ec_wait(crew__ec_sleeper *s, pthread_mutex_t *lock,
                                bool (*look)(void *ctx), void *ctx, const struct timespec *until);

/* The common case of crew__ec_wait: the calling thread sleeps on ec alone (on a sleeper on its
 * stack: a futex word, or its own condition variable, crew__ec_thread_cv) until look(ctx) holds
 * (CREW__EC_FOUND) or, if until is not NULL, that CLOCK_MONOTONIC time passes (CREW__EC_TIMEDOUT);
 * a wake-up looks again. Lock held, as for crew__ec_wait. */
enum crew__ec_end crew__ec_wait_for(crew__ec *ec, pthread_mutex_t *lock, bool (*look)(void *ctx),
                                    void *ctx, const struct timespec *until);

#if defined(CREW__TSAN)
#define crew__ec_fence_() ((void)0)
#else
#define crew__ec_fence_() crew__fence_seq_cst()
#endif

/* Notifier, after making its event visible: may anyone sleep on ec? (The fence is here.) */
static inline bool crew__ec_sleepers(crew__ec *ec) {
#if defined(CREW__TSAN)
    return crew__fetch_add_seq_cst(&ec->count, 0u) != 0; /* seq_cst RMW: see the notes above */
#else
    crew__ec_fence_(); /* orders the event before the read; pairs with crew__ec_wait's */
    return crew__load_relaxed(&ec->count) != 0;
#endif
}

/* How many sleepers ec counts now, as a guess for a policy (idle.c: how many threads are
 * awake), never for a wake-up decision. Relaxed and without a fence: it orders nothing, and may
 * be stale by the time it is used. */
static inline unsigned crew__ec_sleepers_hint(crew__ec *ec) {
    return crew__load_relaxed(&ec->count); /* relaxed: a hint, see above */
}

/* A notifier's choice among the nodes of an eventcount: true wakes the node's sleeper. data is
 * the node's (crew__ec_on), ctx the notifier's. Called under the lock, most recent sleeper
 * first; it may change the notifier's state (count down what it may still wake). */
typedef bool (*crew__ec_match)(void *ctx, void *data);

/* Notifier, lock held: wake every sleeper listed on ec whose node match accepts (match NULL:
 * all), taking each off the count and list of every eventcount it sleeps on. Returns how many
 * it woke. */
unsigned crew__ec_notify_locked(crew__ec *ec, crew__ec_match match, void *ctx);

/* Wake-ups chosen under the lock, made after it is released (crew__ec_choose_locked). */
#define CREW__EC_WAKES 8
typedef struct crew__ec_wakes {
    unsigned n;
#if CREW__EC_FUTEX
    atomic_uint *word[CREW__EC_WAKES]; /* the chosen sleepers' words, for FUTEX_WAKE */
#endif
} crew__ec_wakes;
/* crew__ec_notify_locked, but the FUTEX_WAKEs of up to CREW__EC_WAKES chosen sleepers whose
 * word outlives their wait (crew__ec_sleeper_own: a worker, a blocking thread, one a bounded
 * queue lends) are left in *later (n 0 to start with) for crew__ec_wake_chosen to make once the
 * caller has released the lock, so that the woken do not find it held by their waker; the
 * others' (a word on a stack), and all without futexes, are made at once. Either way the sleepers are chosen, off the lists,
 * when it returns. */
unsigned crew__ec_choose_locked(crew__ec *ec, crew__ec_match match, void *ctx,
                                crew__ec_wakes *later);
/* Lock released: the wake-ups crew__ec_choose_locked left in *later. */
#if CREW__EC_FUTEX
void crew__ec_wake_chosen(crew__ec_wakes *later);
#else
static inline void crew__ec_wake_chosen(crew__ec_wakes *later) { (void)later; }
#endif
/* crew__ec_notify_locked out of line, taking lock (deferring as crew__ec_choose_locked). */
unsigned crew__ec_notify_slow(crew__ec *ec, pthread_mutex_t *lock, crew__ec_match match,
                              void *ctx);
/* Notifier, after making its event visible, lock not held: the fence and the count, and only if
 * someone sleeps the lock and crew__ec_notify_locked. Returns how many it woke. */
static inline unsigned crew__ec_notify(crew__ec *ec, pthread_mutex_t *lock, crew__ec_match match,
                                       void *ctx) {
    if (__builtin_expect(!crew__ec_sleepers(ec), 1))
        return 0;
    return crew__ec_notify_slow(ec, lock, match, ctx);
}
/* Lock held: does anyone sleep on ec now (exact under the lock)? */
static inline bool crew__ec_listed(const crew__ec *ec) { return ec->head != NULL; }

/* The calling thread's own condition variable (CLOCK_MONOTONIC), made on first use, for the
 * sleepers that have none of their own: a thread sleeps in one place at a time. */
pthread_cond_t *crew__ec_thread_cv(void);
/* Wake-ups this thread has had (returns from its OS wait), for tests. */
unsigned long crew__ec_thread_wakeups(void);
/* Initialise cv for timed sleeps on CLOCK_MONOTONIC. 0 or an errno value. */
int crew__cond_init_monotonic(pthread_cond_t *cv);

#endif /* CREW_EC_H */
