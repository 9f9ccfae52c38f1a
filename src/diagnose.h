/*
 * diagnose.h -- what crew_diagnose (diagnose.c) reads: each pool thread's task now, and the
 * threads asleep in a wait.
 */
#ifndef CREW_DIAGNOSE_H
#define CREW_DIAGNOSE_H

#include <stdint.h>
#include <stddef.h>

#include "base.h"

/* diagnose.c: the outermost task a pool thread runs now, for crew_diagnose (monitoring only).
 * A seqlock: the owner makes seq odd, writes fn and since, makes it even; every field is
 * relaxed, ordered by release and acquire fences (diagnose.c). */
typedef struct crew__busy {
    crew_pool *pool;           /* fixed: the pool the thread belongs to */
    _Atomic uint32_t seq;      /* even: fn and since agree */
    _Atomic uintptr_t fn;      /* the task's function, 0 = none */
    _Atomic uint64_t since;    /* when it started (crew__now_ns) */
} crew__busy;
/* crew_diagnose's last look at one deque (its n-th, in the strategy's visiting order, which
 * is stable: deques are only ever added after the others): the top it saw with tasks queued,
 * and since when it has seen that top (0: nothing queued then). */
typedef struct crew__deque_seen {
    int64_t top;
    uint64_t since;
} crew__deque_seen;

/* Stall diagnostics' state, which struct crew_pool points to (crew__diagnose_init makes it). */
struct crew__blocked;
typedef struct crew__diag {
    struct crew__blocked *blocked; /* pool->lock: threads asleep in a wait or for room */
    pthread_mutex_t lock;          /* serialises crew_diagnose, and guards the two below */
    crew__deque_seen *seen;        /* its last look at each deque */
    size_t nseen;                  /* entries allocated */
} crew__diag;
int crew__diagnose_init(crew_pool *p);  /* p->diag, empty: CREW_OK or CREW_ENOMEM */
void crew__diagnose_free(crew_pool *p); /* it, its lock and its records of the deques */

/* This thread's record: a worker's or a blocking thread's, NULL for other threads. */
extern CREW__TLS crew__busy *crew__tls_busy;
void crew__busy_init(crew__busy *b, crew_pool *p); /* idle, for a thread of p */
void crew__busy_begin(crew__busy *b, crew_fn fn, uint64_t started); /* the owner only */
void crew__busy_end(crew__busy *b);                                 /* the owner only */

/* diagnose.c: a thread asleep in crew_wait, crew_wait_all, crew_join or waiting for room in the
 * bounded queue, listed in pool->diag->blocked (under pool->lock) while it sleeps. */
enum crew__blocked_kind {
    CREW__BLOCKED_WAIT = 0,     /* crew_wait */
    CREW__BLOCKED_WAIT_ALL = 1, /* crew_wait_all, crew_shutdown */
    CREW__BLOCKED_ROOM = 2,     /* a submitter waiting for room in the bounded queue */
    CREW__BLOCKED_JOIN = 3      /* crew_join, for the half another thread took */
};
typedef struct crew__blocked {
    struct crew__blocked *next, *prev; /* lock */
    uint64_t since;                    /* its first sleep in this call (0 before it) */
    int kind;                          /* enum crew__blocked_kind */
    crew_handle group;                 /* WAIT: the group */
    size_t n;                          /* ROOM: the tasks it needs room for */
} crew__blocked;
/* List b in p->diag.blocked before a sleep, stamping its first sleep; lock held. */
void crew__blocked_add(crew_pool *p, crew__blocked *b);
void crew__blocked_remove(crew_pool *p, crew__blocked *b); /* after the sleep; lock held */

#endif /* CREW_DIAGNOSE_H */
