/*
 * lock.c -- the spinlock's wait (lock.h): spin a little, then yield to a holder that may have
 * been preempted.
 */
#include <sched.h>

#include "lock.h"

void crew__spinlock_wait(crew__spinlock *s) {
    for (unsigned i = 0; !crew__spinlock_try(s); i++) {
        if (i < 64)
            crew__cpu_relax();
        else
            sched_yield(); /* the holder may be preempted: let it run */
    }
}
