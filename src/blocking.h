/*
 * blocking.h -- blocking tasks (blocking.c): their queue and their threads.
 */
#ifndef CREW_BLOCKING_H
#define CREW_BLOCKING_H

#include <stdbool.h>
#include <stddef.h>

#include "diagnose.h"
#include "ec.h"
#include "lq.h"
#include "thread.h"

/* blocking.c: the blocking tasks' queue and threads. */
struct crew__bthread;
typedef struct crew__blocking {
    crew__lq *queue;     /* blocking tasks waiting for a thread */
    unsigned max;        /* fixed: crew_config.max_blocking */
    unsigned idle_ms;    /* fixed: crew_config.blocking_idle_ms */
    unsigned running;    /* lock: blocking threads alive */
    crew__ec idle;       /* of those, asleep waiting for a task (ec.h, used under lock only) */
    unsigned peak;       /* lock: most alive at once */
    bool stop;           /* lock: crew_shutdown: exit */
    crew__joins joins;   /* lock: crew__blocking_stop calls joining threads now (thread.h) */
    struct crew__bthread **threads; /* lock: thread records, reused after their thread exits */
    unsigned nthreads, cap;         /* lock */
} crew__blocking;

int crew__blocking_init(crew_pool *p, const crew_config *cfg);
void crew__blocking_free(crew_pool *p);
/* Queue t[0..n) as blocking tasks: CREW_OK, CREW_ENOMEM, or CREW_EAGAIN (no thread at all). */
int crew__blocking_push(crew_pool *p, crew_task *t, size_t n);
size_t crew__blocking_cancel_all(crew_pool *p);
size_t crew__blocking_queued(crew_pool *p);
/* crew_diagnose: call fn for the busy record of every blocking thread alive; lock held. */
void crew__blocking_visit_locked(crew_pool *p, void (*fn)(void *ctx, unsigned index,
                                                          crew__busy *b), void *ctx);
void crew__blocking_wake_all_locked(crew_pool *p); /* idle blocking threads look again */
/* The pool whose blocking thread this is, from before its on_start until it leaves its loop;
 * NULL on other threads. */
extern CREW__TLS const crew_pool *crew__tls_bthread;
/* A blocking thread of p that waits (crew_wait, crew_wait_all, from a task, on_start or
 * on_drop) runs blocking tasks itself while it waits, as a worker runs tasks: otherwise a wait
 * for blocking tasks made on the blocking threads, once max_blocking of them wait, could never
 * end. A queued blocking task of group slot (0: none), newest first, or if general any queued
 * blocking task; NULL on any other thread, or while p is paused. */
crew_task *crew__blocking_help(crew_pool *p, uint32_t slot, bool general);
/* A queued blocking task of group slot (0: none), newest first, or NULL (crew_cancel, and the
 * helping above). */
crew_task *crew__blocking_take_group(crew_pool *p, uint32_t slot);
/* Every accepted task finished: stop the threads and join them; returns once every one is
 * joined, also when several crew_shutdown calls run it at once. */
void crew__blocking_stop(crew_pool *p);

#endif /* CREW_BLOCKING_H */
