/*
 * join.h -- spawn-and-wait without a group (join.c): crew_join's record, and how the rest of
 * crew recognises a join's offered half.
 */
#ifndef CREW_JOIN_H
#define CREW_JOIN_H

#include <stdbool.h>

#include "atomic.h"
#include "base.h"

/* One crew_join, on its caller's stack: the half it offers to other threads. */
typedef struct crew__join {
    crew_pool *p; /* the pool */
    crew_fn fn;   /* the offered half */
    void *arg;
    /* Set (release) by the thread that took the half once it has run it, or handed it back
     * (back set first): the caller reads it with acquire and may return at once, so nobody
     * touches the record after this store. */
    atomic_bool over;
    bool back; /* written before over: the half did not run, its caller runs it */
    /* Counted in pending by its caller (a group's, submitted). An offer is not: the caller's
     * own call holds it, and a thread that takes it counts it first (crew__join_half,
     * or its drop, join.c), since it then ends as a task of the pool. */
    bool counted;
    bool spare_; /* unused: the four flags are one 32-bit word, zeroed by one store */
    /* The caller's own, for its take-back on a worker's own deque (join.c's join_worker): its
     * place (steal_join.h), and the bottom the offer left. Kept here rather than in registers
     * across fa. */
    struct crew__steal_local *own;
    int64_t end;
} crew__join;

/* The function of a join's offered half (arg: its crew__join): whoever takes the half from a
 * queue runs it through here. The join kind's row (kind.h, join.c) recognises halves by it: a
 * half a thread took but must not run (dropped by a cancelling shutdown or a full queue, taken
 * as a pause began, taken by a worker that resize marked) is handed back to its caller, which
 * runs it itself, and counted as finished, never lost nor reported as dropped. */
void crew__join_half(void *arg);

/* crew_enqueue_tasks_wait's fast path (join.c), for n tasks t of priority 0 (their fn checked
 * here) on a pool that times nothing and has no bounded queue: the caller runs t[0] at once
 * and offers the others as joins do, in records on its stack, so no group is opened; up to
 * CREW__JOIN_TASKS_MAX one by one, more split in halves, the upper half offered as one (a
 * thread that takes it splits it the same way). They are counted in pending as any accepted
 * task (crew_wait_all and a draining crew_shutdown wait for them). Returns CREW_OK,
 * CREW_ECANCELED (a cancelling shutdown kept some from running: each was handed to on_drop),
 * or CREW__JOIN_DECLINED, nothing done, where the call must take the long way (a group of its
 * own): n is 0 or above UINT32_MAX, an argument is bad, the pool is timed, bounded, paused,
 * closed or forked, or its strategy has no offer. */
#define CREW__JOIN_TASKS_MAX 8
#define CREW__JOIN_DECLINED 1
int crew__join_tasks(crew_pool *p, crew_task *t, size_t n);

#endif /* CREW_JOIN_H */
