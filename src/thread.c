/*
 * thread.c -- a pool's threads (thread.h): joining each once, however many crew_shutdown calls
 * run at once (the wait for the other callers' joins is the eventcount's, ec.h); making one with
 * every signal blocked, and its start and stop hooks.
 */
#include <sched.h>
#include <signal.h>

#include "pool.h"
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

/* ---- making a pool thread, and its hooks ---- */

int crew__spawn(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits this mask */
    int rc = pthread_create(t, attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

CREW__TLS const crew_pool *crew__tls_hook;

void crew__thread_start(crew_pool *p, unsigned index) {
    const crew_hooks *h = &p->hooks;
#if defined(__linux__)
    if (h->cpus) {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (index < CREW_MAX_THREADS) /* a worker: one cpu, round-robin over the list */
            CPU_SET(h->cpus[index % h->ncpus], &set);
        else /* a blocking thread: any of them */
            for (size_t i = 0; i < h->ncpus; i++)
                CPU_SET(h->cpus[i], &set);
        /* Checked against the process's set in crew_create; a later change of that set makes
         * this fail, and the thread then runs wherever the system lets it. */
        (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
#endif
    if (h->on_start) {
        crew__tls_hook = p;
        h->on_start(index, h->arg);
        crew__tls_hook = NULL;
    }
}

void crew__thread_stop(crew_pool *p, unsigned index) {
    if (p->hooks.on_stop) {
        crew__tls_hook = p;
        p->hooks.on_stop(index, p->hooks.arg);
        crew__tls_hook = NULL;
    }
}
