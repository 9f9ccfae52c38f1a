/*
 * lock.h -- the lock that guards a queue: a pthread mutex or a test-and-test-and-set spinlock,
 * chosen per pool (crew_config.lock, Li & Hu's option).
 *
 * The spinlock yields the processor after a short spin, so an oversubscribed machine (more
 * runnable threads than cores, where the holder may be preempted) degrades to sched_yield
 * instead of burning whole time slices.
 */
#ifndef CREW_LOCK_H
#define CREW_LOCK_H

#include <pthread.h>
#include <stdbool.h>

#include "atomic.h"

typedef struct crew__lock {
    int spin;          /* fixed at init: true = spinlock, false = mutex */
    atomic_int held;   /* spinlock word */
    pthread_mutex_t m; /* the mutex */
} crew__lock;

static inline int crew__lock_init(crew__lock *l, bool spin) {
    l->spin = spin;
    crew__atomic_init(&l->held, 0);
    return pthread_mutex_init(&l->m, NULL) == 0 ? 0 : -1;
}

static inline void crew__lock_destroy(crew__lock *l) { pthread_mutex_destroy(&l->m); }

/* The spinlock's wait when its first try failed (lock.c): out of line, so that an uncontended
 * acquire is a load and a compare-and-swap, with nothing for its caller to save around a call. */
void crew__lock_spin(crew__lock *l);

/* The spinlock's operations, for a lock known to be one (initialised with spin true; the
 * external slots call them directly, without the test of the kind). */
static inline bool crew__spinlock_try(crew__lock *l) {
    int expected = 0;
    /* Relaxed load first (test-and-test-and-set); acquire on success: the critical section
     * happens-after the previous holder's release in crew__spinlock_release. */
    return crew__load_relaxed(&l->held) == 0 && crew__cas_acquire(&l->held, &expected, 1);
}
static inline void crew__spinlock_acquire(crew__lock *l) {
    if (__builtin_expect(!crew__spinlock_try(l), 0))
        crew__lock_spin(l);
}
static inline void crew__spinlock_release(crew__lock *l) {
    /* Release: publishes the critical section to the next acquirer (crew__spinlock_try). */
    crew__store_release(&l->held, 0);
}

static inline bool crew__lock_try(crew__lock *l) {
    return l->spin ? crew__spinlock_try(l) : pthread_mutex_trylock(&l->m) == 0;
}

static inline void crew__lock_acquire(crew__lock *l) {
    if (l->spin)
        crew__spinlock_acquire(l);
    else
        pthread_mutex_lock(&l->m);
}

static inline void crew__lock_release(crew__lock *l) {
    if (l->spin)
        crew__spinlock_release(l);
    else
        pthread_mutex_unlock(&l->m);
}

#endif /* CREW_LOCK_H */
