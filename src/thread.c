/*
 * thread.c -- joining a pool's threads once each, however many crew_shutdown calls run at once
 * (thread.h). The wait for the other callers' joins is the eventcount's (ec.h).
 */
#include "thread.h"

/* The last look of a caller waiting for the others' joins (lock held). */
static bool joins_done(void *ctx) { return ((crew__joins *)ctx)->active == 0; }

void crew__join_each(crew__joins *j, pthread_mutex_t *lock, unsigned (*count)(void *ctx),
                     bool (*claim)(void *ctx, unsigned i, pthread_t *thread), void *ctx) {
    j->active++;
    for (unsigned i = 0; i < count(ctx); i++) {
        pthread_t th;
        if (!claim(ctx, i, &th))
            continue;
        pthread_mutex_unlock(lock);
        pthread_join(th, NULL);
        pthread_mutex_lock(lock);
    }
    if (--j->active == 0) /* events made under the lock: ec.h */
        crew__ec_notify_locked(&j->done, NULL, NULL);
    crew__ec_wait_for(&j->done, lock, joins_done, j, NULL);
}

/* crew__join_each's view of a lone thread: one record, claimed once if it was made. */
static unsigned lone_count(void *ctx) {
    (void)ctx;
    return 1;
}
static bool lone_claim(void *ctx, unsigned i, pthread_t *thread) {
    crew__lone *t = ctx;
    (void)i;
    if (!t->started || t->claimed)
        return false;
    t->claimed = true;
    *thread = t->thread;
    return true;
}

void crew__join_once(crew__lone *t, pthread_mutex_t *lock) {
    crew__join_each(&t->joins, lock, lone_count, lone_claim, t);
}

void crew__lone_stop(crew__lone *t, pthread_mutex_t *lock, bool *stop, crew__ec *ec) {
    pthread_mutex_lock(lock);
    *stop = true;
    crew__ec_notify_locked(ec, NULL, NULL); /* events made under the lock: ec.h */
    crew__join_once(t, lock);
    pthread_mutex_unlock(lock);
}
