/*
 * ec.c -- the eventcount's sleeping half (ec.h says what the eventcount is and how to use it),
 * and the monotonic clock of every timed sleep in crew.
 */
#include <errno.h>

#include "ec.h"

enum crew__ec_end crew__ec_commit(crew__ec *ec, crew__ec_waiter *w, pthread_mutex_t *lock,
                                  const struct timespec *until) {
    int rc = 0;
    crew__assert(w->counted); /* prepared, and the lock held since: no notifier took it off */
    if (w->counted) { /* else a notifier chose it between the last look and here: cannot be,
                       * the lock is held since crew__ec_prepare, but cheap to honour */
        if (until)
            rc = pthread_cond_timedwait(w->cv, lock, until);
        else
            rc = pthread_cond_wait(w->cv, lock);
    }
    if (!w->counted)
        return CREW__EC_WOKEN; /* the notifier took it off the count */
    crew__ec_cancel(ec, w);    /* a broadcast, a timeout or a spurious return */
    return rc == ETIMEDOUT ? CREW__EC_TIMEDOUT : CREW__EC_RETURNED;
}

int crew__cond_init_monotonic(pthread_cond_t *cv) {
    pthread_condattr_t ca;
    int rc = pthread_condattr_init(&ca);
    if (rc != 0)
        return rc;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc;
}

struct timespec crew__deadline_after_ms(unsigned ms) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}
