/*
 * thread.h -- joining the threads a pool makes (thread.c): its workers, its blocking threads,
 * the timer thread and the sizing controller; and making them: crew__spawn (with every signal
 * blocked), and the start and stop of each (its CPU affinity, crew_hooks.on_start, on_stop).
 *
 * Several crew_shutdown calls may run at once, and each must return only once every thread is
 * joined, also those another call claimed and is still joining: a thread may still be in
 * on_stop, which may call back into the pool (crew_resize), so no lock is held during a join,
 * and a caller that has nothing left to join waits for the others' joins on an eventcount
 * (ec.h), never on a mutex held across a join. Each joiner claims a thread under the lock of
 * what owns it (so a thread is joined once), joins it without the lock, then waits until no
 * caller is joining any more: crew__join_each over many records, crew__join_once for one
 * thread of its own (crew__lone). A thread known to have left (its record marked gone after
 * on_stop) is reaped where its record is reused: crew__join_gone.
 */
#ifndef CREW_THREAD_H
#define CREW_THREAD_H

#include <pthread.h>
#include <stdbool.h>

#include "base.h" /* CREW__TLS, crew_pool */
#include "ec.h"

/* The callers joining a set of threads now. */
typedef struct crew__joins {
    unsigned active; /* lock: callers of crew__join_each joining now */
    crew__ec done;   /* they wait here for the others' joins (under the same lock) */
} crew__joins;
static inline void crew__joins_init(crew__joins *j) {
    j->active = 0;
    crew__ec_init(&j->done);
}
/* Join every thread that claim(ctx, i, &thread) claims, for i from 0 while i < count(ctx)
 * (lock held; false: record i has no thread to join, or another caller claimed it), each
 * without the lock; then wait until every other caller on j has joined what it claimed. Lock
 * held on entry and on return. */
void crew__join_each(crew__joins *j, pthread_mutex_t *lock, unsigned (*count)(void *ctx),
                     bool (*claim)(void *ctx, unsigned i, pthread_t *thread), void *ctx);

/* A single thread of a pool's service (the timer thread, the sizing controller), made at most
 * once and joined by whichever crew_shutdown comes first. Its fields are guarded by the lock
 * of the service that owns it ("lock"). */
typedef struct crew__lone {
    pthread_t thread;  /* valid when started */
    bool started;      /* lock: the thread was made (set by its maker, after crew__spawn) */
    bool claimed;      /* lock: a crew__join_once claimed it to join */
    crew__joins joins; /* the callers of crew__join_once on it */
} crew__lone;
static inline void crew__lone_init(crew__lone *t) {
    t->started = t->claimed = false;
    crew__joins_init(&t->joins);
}
/* Join t's thread if it was made (the caller has told it to return), or wait until the caller
 * that claimed it has joined it. Lock held on entry and on return, released during the join
 * and the wait. */
void crew__join_once(crew__lone *t, pthread_mutex_t *lock);

/* Stop t's thread and join it: *stop = true and a wake-up on ec (where the thread sleeps,
 * looking at *stop under lock), then crew__join_once. Lock not held. */
void crew__lone_stop(crew__lone *t, pthread_mutex_t *lock, bool *stop, crew__ec *ec);

/* Join a thread that has already left (it marked its record gone after on_stop): the join
 * waits only for its return, so it may be made with locks held. */
static inline void crew__join_gone(pthread_t thread) { pthread_join(thread, NULL); }

/* pthread_create with every signal blocked in the new thread (signals belong to the
 * application's own threads). Returns pthread_create's result. */
int crew__spawn(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* A pool thread starts (its CPU affinity, then crew_hooks.on_start) or stops (on_stop).
 * index: the worker's, or CREW_MAX_THREADS + a blocking thread's. */
void crew__thread_start(crew_pool *p, unsigned index);
void crew__thread_stop(crew_pool *p, unsigned index);
/* The pool whose on_start or on_stop hook runs on this thread now, else NULL. */
extern CREW__TLS const crew_pool *crew__tls_hook;

#endif /* CREW_THREAD_H */
