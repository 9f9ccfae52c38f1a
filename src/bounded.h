/*
 * bounded.h -- the bounded queue (bounded.c): crew_config.queue_capacity places that a task
 * takes when it is accepted and frees when it starts or is dropped, the full-queue policy for a
 * submission that finds none free, and the sleepers the pool lends to submitters waiting for room.
 */
#ifndef CREW_BOUNDED_H
#define CREW_BOUNDED_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base.h"
#include "ec.h"

/* Sleepers a bounded queue lends to submitters that wait for room (bounded.c: wait_for_room):
 * enough for the usual one or few producers; a submitter that finds them all lent sleeps on one
 * of its own stack. */
#define CREW__ROOM_SLEEPERS 4

/* The bounded queue (crew_config.queue_capacity) in struct crew_pool. */
typedef struct crew__bounded {
    size_t capacity; /* fixed: tasks that may wait to start; 0 = unbounded */
    unsigned policy; /* fixed: enum crew_full_policy */
    /* Queued tasks that hold a place (CREW__TASK_BOUNDED). Seq_cst read-modify-writes: a task
     * that starts frees a place, the event room's sleepers look for (ec.h). */
    _Atomic size_t admitted;
    crew__ec room;      /* submitters asleep waiting for room (ec.h), with pool->lock */
    /* pool->lock: bit i set while lent[i] is lent to a waiting submitter. */
    unsigned lent_mask;
    /* Fixed: CREW__ROOM_SLEEPERS sleepers made by crew__ec_sleeper_own, or NULL if capacity is
     * 0 (kept out of struct crew_pool, whose hot fields follow). Their futex words live as long
     * as the pool, so a freed place wakes its sleeper after the releaser has let go of
     * pool->lock (ec.h, THE OS WAIT), not into the lock still held. */
    crew__ec_sleeper *lent;
} crew__bounded;

/* How a submission that finds the bounded queue full behaves (crew_try_submit,
 * crew_submit_timed). */
typedef struct crew__admit_how {
    bool try_only;             /* never wait: CREW_EFULL */
    bool timed;                /* wait until deadline at most */
    struct timespec deadline;  /* CLOCK_MONOTONIC */
} crew__admit_how;

/* The queue of crew_config cfg (capacity, policy), empty. CREW_OK, or CREW_ENOMEM (no memory
 * for the lent sleepers, or without futexes for their condition variables) with nothing left
 * to free. */
int crew__bounded_init(crew__bounded *b, const crew_config *cfg);
/* Undo crew__bounded_init, once no thread waits for room or frees a place. */
void crew__bounded_free(crew__bounded *b);
/* Take n places in the bounded queue, acting on the full-queue policy. CREW_OK with *caller_runs
 * set means: accept the tasks but run them in this thread (no place taken). */
int crew__bounded_admit(crew_pool *p, size_t n, const crew__admit_how *how, bool *caller_runs);
/* A task that held a place in the bounded queue started or was dropped: free the place. */
void crew__bounded_release(crew_pool *p);

#endif /* CREW_BOUNDED_H */
