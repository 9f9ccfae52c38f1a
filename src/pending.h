/*
 * pending.h -- the pool's count of pending tasks (pending.c): tasks accepted and not yet
 * finished nor dropped, in pool->pending. A submission adds to it (crew__pending_add, inline),
 * a task that ends takes its unit off (crew__tasks_finished, crew__pending_sub), and the thread
 * that takes it to 0 wakes whoever waits for a quiet pool (crew_wait_all, crew_shutdown).
 *
 * Credit. A worker holds units of pending that no task uses, in its record's credit (always
 * >= 0). A task the worker submits takes a unit from there (taking CREW__CREDIT_BATCH more from
 * pending when none is left), a task it finishes gives its unit back there (crew__credit_back),
 * and the worker returns the surplus above 2 x CREW__CREDIT_BATCH, and everything whenever it
 * runs out of work (crew__flush_finished). So pending never reads 0 while a task is unfinished
 * (it counts every task plus the credit), it is exact when every worker is idle, and
 * spawn-and-wait on a worker touches the shared count once per CREW__CREDIT_BATCH tasks at most.
 * The credit is written by its owner only (relaxed load and store, no read-modify-write);
 * crew_stats_get reads it (relaxed) to tell running tasks from credit.
 */
#ifndef CREW_PENDING_H
#define CREW_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "debug.h"
#include "group.h"
#include "pool.h"

/* A worker takes this many units of pool->pending at a time as credit. */
#define CREW__CREDIT_BATCH 64u

/* Give n finished tasks' units of pending back to worker w's credit; false if that would hold
 * more than 2 x CREW__CREDIT_BATCH (then crew__tasks_finished returns the surplus). Inlined:
 * once per task. */
static inline bool crew__credit_back(crew__worker *w, size_t n) {
    size_t credit = crew__load_relaxed(&w->credit) + n; /* relaxed: the owner's own */
    if (__builtin_expect(credit > 2 * CREW__CREDIT_BATCH, 0))
        return false;
    crew__store_relaxed(&w->credit, credit);
    return true;
}
/* Count n newly accepted tasks in pending: from the credit of self (the calling thread's worker
 * record, or NULL: crew__self) if it is a worker, else in pending itself. Inlined: once per
 * submission. */
static inline void crew__pending_add(crew_pool *p, crew__worker *self, size_t n) {
    if (self) {
        size_t credit = crew__load_relaxed(&self->credit); /* relaxed: the owner's own */
        crew__assert(credit <= 2 * CREW__CREDIT_BATCH); /* credit_back's bound */
        if (__builtin_expect(credit < n, 0)) {
            size_t get = n - credit + CREW__CREDIT_BATCH;
            crew__fetch_add_seq_cst(&p->pending, get); /* seq_cst: see struct crew_pool */
            credit += get;
        }
        crew__store_relaxed(&self->credit, credit - n);
        return;
    }
    crew__fetch_add_seq_cst(&p->pending, n); /* seq_cst: see struct crew_pool */
}
/* Tasks that ended, n of them, leave pending; whoever takes it to 0 wakes those waiting for a
 * quiet pool. */
void crew__pending_sub(crew_pool *p, size_t n);
/* n tasks of group slot (0 = none) ended as `how` says, or were never queued after all
 * (CREW__RAN): count them in their group and in pending (on a worker, through its credit), and
 * wake whoever waits for them. */
void crew__tasks_finished(crew_pool *p, uint32_t slot, size_t n, enum crew__end how);
/* n tasks of group slot that ran, if they are the group's only open tasks: the group ends with
 * them (crew__group_done_all: *prev, its state before, holds its answer), counted as
 * crew__tasks_finished counts; true. Else nothing is counted: false. */
bool crew__tasks_finished_all(crew_pool *p, uint32_t slot, size_t n, uint64_t *prev);
/* Return the calling worker's credit to pending now (see the top of this file). */
void crew__flush_finished(crew_pool *p, crew__worker *w);

/* A task of no group ended on this thread (self: its worker record for p, or NULL): its unit
 * counted where it costs no shared write, the worker's credit, or a helping waiter's count
 * (finished non-NULL: the waiter returns them to pending itself, wait.c), else at once. */
static inline __attribute__((always_inline)) void crew__end_plain(crew_pool *p,
                                                                  crew__worker *self,
                                                                  size_t *finished) {
    if (self && crew__credit_back(self, 1))
        return;
    if (!self && finished) {
        ++*finished;
        return;
    }
    crew__tasks_finished(p, 0, 1, CREW__RAN);
}

#endif /* CREW_PENDING_H */
