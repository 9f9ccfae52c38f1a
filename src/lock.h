/*
 * lock.h -- the lock that guards a queue: a pthread mutex or a test-and-test-and-set spinlock,
 * chosen per pool (crew_config.lock, Li & Hu's option); and that spinlock on its own
 * (crew__spinlock), for the locks that are always one.
 *
 * The spinlock yields the processor after a short spin, so an oversubscribed machine (more
 * runnable threads than cores, where the holder may be preempted) degrades to sched_yield
 * instead of burning whole time slices.
 */
#ifndef CREW_LOCK_H
#define CREW_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "atomic.h"

/* A test-and-test-and-set spinlock: one word. The external slots' owner side and the lanes
 * use it directly; crew__lock wraps it when a pool is configured for spinlocks. */
typedef struct crew__spinlock {
    atomic_int held; /* 1 while held; see crew__spinlock_try and crew__spinlock_release */
} crew__spinlock;

static inline void crew__spinlock_init(crew__spinlock *s) { crew__atomic_init(&s->held, 0); }

/* The spinlock's wait when its first try failed (lock.c): out of line, so that an uncontended
 * acquire is a load and a compare-and-swap, with nothing for its caller to save around a call. */
void crew__spinlock_wait(crew__spinlock *s);

static inline bool crew__spinlock_try(crew__spinlock *s) {
    int expected = 0;
    /* Relaxed load first (test-and-test-and-set); acquire on success: the critical section
     * happens-after the previous holder's release in crew__spinlock_release. */
    return crew__load_relaxed(&s->held) == 0 && crew__cas_acquire(&s->held, &expected, 1);
}
static inline void crew__spinlock_acquire(crew__spinlock *s) {
    if (__builtin_expect(!crew__spinlock_try(s), 0))
        crew__spinlock_wait(s);
}
static inline void crew__spinlock_release(crew__spinlock *s) {
    /* Release: publishes the critical section to the next acquirer (crew__spinlock_try). */
    crew__store_release(&s->held, 0);
}
/* A hint, not a synchronisation: is it held right now? (Relaxed: nothing is read after it.) */
static inline bool crew__spinlock_busy(crew__spinlock *s) {
    return crew__load_relaxed(&s->held) != 0;
}

typedef struct crew__lock {
    int spin;          /* fixed at init: true = spinlock, false = mutex */
    crew__spinlock sl; /* the spinlock */
    pthread_mutex_t m; /* the mutex */
} crew__lock;

static inline int crew__lock_init(crew__lock *l, bool spin) {
    l->spin = spin;
    crew__spinlock_init(&l->sl);
    return pthread_mutex_init(&l->m, NULL) == 0 ? 0 : -1;
}

static inline void crew__lock_destroy(crew__lock *l) { pthread_mutex_destroy(&l->m); }

static inline bool crew__lock_try(crew__lock *l) {
    return l->spin ? crew__spinlock_try(&l->sl) : pthread_mutex_trylock(&l->m) == 0;
}

static inline void crew__lock_acquire(crew__lock *l) {
    if (l->spin)
        crew__spinlock_acquire(&l->sl);
    else
        pthread_mutex_lock(&l->m);
}

static inline void crew__lock_release(crew__lock *l) {
    if (l->spin)
        crew__spinlock_release(&l->sl);
    else
        pthread_mutex_unlock(&l->m);
}

/* A module's state with a lock of its own: a zeroed block of size bytes whose mutex at
 * lock_offset (default attributes) is initialised; NULL when out of memory. Its owner destroys
 * the mutex and frees the block. */
void *crew__alloc_locked(size_t size, size_t lock_offset);

#endif /* CREW_LOCK_H */
