/*
 * lock.c -- the spinlock's wait (lock.h): spin a little, then yield to a holder that may have
 * been preempted.
 */
#include <sched.h>
#include <stdlib.h>

#include "lock.h"

void crew__spinlock_wait(crew__spinlock *s) {
    for (unsigned i = 0; !crew__spinlock_try(s); i++) {
        if (i < 64)
            crew__cpu_relax();
        else
            sched_yield(); /* the holder may be preempted: let it run */
    }
}

void *crew__alloc_locked(size_t size, size_t lock_offset) {
    char *b = calloc(1, size);
    if (b && pthread_mutex_init((pthread_mutex_t *)(void *)(b + lock_offset), NULL) != 0) {
        free(b);
        return NULL;
    }
    return b;
}
