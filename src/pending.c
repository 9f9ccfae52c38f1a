/*
 * pending.c -- the end of tasks in the pool's count of pending tasks (pending.h): their units
 * taken off pool->pending, directly or through a worker's credit, and the wake-up of whoever
 * waits for a quiet pool when the count reaches 0; with the end of the tasks in their group,
 * whose waiters (and only they) are woken when it finishes.
 */
#include "atomic.h"
#include "debug.h"
#include "ec.h"
#include "group.h"
#include "nodes.h"
#include "pending.h"
#include "pool.h"
#include "wake.h"

void crew__pending_sub(crew_pool *p, size_t n) {
    /* Seq_cst: the decrement, the fence and the read of quiet's count form the waker's half of
     * the sleep protocol (ec.h). */
    size_t before = crew__fetch_sub_seq_cst(&p->pending, n);
    crew__assert_msg(before >= n, "pending %zu, %zu ended", before, n); /* never below 0 */
    if (before != n)
        return;
    crew__ec_notify(&p->quiet, &p->lock, NULL, NULL);
    /* A closing pool's workers sleep until nothing is pending, then leave (must_leave); a
     * submission that raced with crew_shutdown can be what brings pending back to 0, after
     * shutdown's last wake-up, so this thread wakes them. Seq_cst load: see crew_pool. */
    if (crew__load_seq_cst(&p->state) != CREW__OPEN && crew__ec_sleepers(&p->work))
        crew__wake_all(p);
}

static inline void units_finished(crew_pool *p, crew__worker *w, size_t n);

void crew__tasks_finished(crew_pool *p, uint32_t slot, size_t n, enum crew__end how) {
    crew__worker *w = crew__self(p);
    if (slot != 0 &&
        crew__group_done(&p->groups, slot, (uint32_t)n, how, crew__slots_to_free(p, w))) {
        /* The group's final state is the event its waiters look for; only they are woken.
         * A slot reused meanwhile only costs a spurious wake-up. */
        crew__ec_notify(&crew__slot_at(&p->groups, slot)->waiters, &p->lock, NULL, NULL);
    }
    units_finished(p, w, n);
}

bool crew__tasks_finished_all(crew_pool *p, uint32_t slot, size_t n, uint64_t *prev) {
    crew__worker *w = crew__self(p);
    if (!crew__group_done_all(&p->groups, slot, (uint32_t)n, prev, crew__slots_to_free(p, w)))
        return false;
    /* As in crew__tasks_finished: the group's end wakes its waiters. */
    crew__ec_notify(&crew__slot_at(&p->groups, slot)->waiters, &p->lock, NULL, NULL);
    units_finished(p, w, n);
    return true;
}

/* n tasks' units of pending (w: the calling worker, or NULL). */
static inline void units_finished(crew_pool *p, crew__worker *w, size_t n) {
    if (w) { /* a worker: batch the shared decrement (see the top of pending.h) */
        if (crew__credit_back(w, n))
            return;
        /* Relaxed: the owner's own. */
        size_t surplus = crew__load_relaxed(&w->credit) + n - CREW__CREDIT_BATCH;
        crew__store_relaxed(&w->credit, CREW__CREDIT_BATCH);
        /* Relaxed: pending holds this worker's units, which only it takes off (see below). */
        crew__assert(crew__load_relaxed(&p->pending) > surplus);
        crew__pending_sub(p, surplus); /* cannot reach 0: the credit kept is still counted */
        return;
    }
    crew__pending_sub(p, n);
}

void crew__flush_finished(crew_pool *p, crew__worker *w) {
    size_t n = crew__load_relaxed(&w->credit); /* relaxed: the owner's own */
    crew__assert(n <= 2 * CREW__CREDIT_BATCH);
    if (n != 0) {
        crew__store_relaxed(&w->credit, 0);
        crew__pending_sub(p, n);
    }
}
