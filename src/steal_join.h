/*
 * steal_join.h -- the join interface of the work-stealing strategy (STEAL, sched_steal.c): what
 * a join on a worker (join.c: crew_join, crew_enqueue_tasks_wait's few tasks) does on that
 * worker's own deque, inline, since crew_join on a worker is crew's hottest path. A join offers
 * a task by value on top of the deque, where thieves find it at the far end, and later takes it
 * back from the top if nobody took it: the offer (crew__steal_offer, or its two halves
 * crew__steal_offer_place and crew__steal_offer_at), and the take-back (crew__steal_take_back,
 * or crew__steal_claim_offer where the caller knows the offer is the newest task); and a
 * waiter's take of its own newest task (crew__steal_take_above). The
 * protocols and their memory orders are the deque's (deque.h); this header names what a join
 * may do with them, and owns STEAL's part of a worker record, so that no other file reads the
 * deque's fields or recovers a worker from its deque.
 *
 * A caller holds a worker's part (crew__steal_local) from crew__sched_join_own (sched_calls.h),
 * which gives one only to a worker of a pool whose strategy is STEAL, and only in the process
 * that made the pool (crew__sched.own_deque).
 */
#ifndef CREW_STEAL_JOIN_H
#define CREW_STEAL_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deque.h"
#include "pool.h"
#include "schedule.h"
#include "steal_batch.h"

/* STEAL's part of each worker record (crew__worker.sched, schedule.h): the worker's own deque,
 * read by every push and take of the worker (in the record, not behind a pointer), and its
 * shared batch (steal_batch.h: a share of a slot's backlog that it runs and others may take). */
typedef struct crew__steal_local {
    crew__deque deque;
    crew__steal_batch batch;
} crew__steal_local;
crew__sched_local_fits(crew__steal_local);

/* Worker w's part (its strategy is STEAL). */
static inline crew__steal_local *crew__steal_local_of(crew__worker *w) {
    return (crew__steal_local *)(void *)w->sched.bytes;
}
/* The worker whose part own is. */
static inline crew__worker *crew__steal_worker_of(crew__steal_local *own) {
    return (crew__worker *)(void *)((char *)own - offsetof(crew__worker, sched));
}

/* Owner: offer fn(arg) (priority 0, no group) by value on top of its own deque: CREW_OK or
 * CREW_ENOMEM. OUT: *mark, the bottom before the offer: crew__steal_take_back's mark. */
static inline int crew__steal_offer(crew__steal_local *own, crew_fn fn, void *arg,
                                    int64_t *mark) {
    *mark = crew__load_relaxed(&own->deque.bottom); /* relaxed: the owner's own bottom */
    return crew__deque_push_value_at(&own->deque, *mark, fn, arg, 0);
}
/* Owner: the offer back (crew__deque_take_back, no batch claims on a worker's own deque): 1, it
 * was still the newest task above mark and is the caller's now (it runs it); 0, a thief took it
 * (or nothing lies above mark); -1, other tasks lie on top of it, left there. */
static inline int crew__steal_take_back(crew__steal_local *own, int64_t mark, crew_fn fn,
                                        void *arg) {
    return crew__deque_take_back(&own->deque, mark, fn, arg, NULL);
}

/* Owner: the newest task above mark (one that the caller's task, or a task it ran, queued on
 * this deque), or NULL: a waiter's first look at its own tasks (wait.c's own_group_first), as
 * the strategy's take_group looks. A task held by value is copied into buf. */
static inline crew_task *crew__steal_take_above(crew__steal_local *own, int64_t mark,
                                                crew_task *buf) {
    if (crew__load_relaxed(&own->deque.bottom) <= mark) /* relaxed: the owner's own bottom */
        return NULL;
    return crew__deque_take(&own->deque, buf);
}

/* The offer in two halves, for crew_join's fast path (join.c's join_worker): where an offer
 * would go (its mark, the bottom before it, and the array with room for it), then the offer
 * there. */
typedef struct crew__steal_place {
    int64_t mark;             /* the bottom before the offer: the offer's own place */
    crew__deque_array *array; /* the deque's current array, with room at mark */
} crew__steal_place;
/* Owner: false if the deque looks full by what its owner last saw of top (then the general
 * offer, crew__steal_offer, grows it); else *at is where an offer goes. */
static inline bool crew__steal_offer_place(crew__steal_local *own, crew__steal_place *at) {
    at->mark = crew__load_relaxed(&own->deque.bottom); /* relaxed: the owner's own bottom */
    at->array = crew__deque_room_at(&own->deque, at->mark);
    return __builtin_expect(at->array != NULL, 1);
}
/* Owner: offer fn(arg) at *at (crew__deque_offer_at): true if no older task lay below it when
 * it landed, so the caller must make the wake-up check (crew__wake_work). */
static inline bool crew__steal_offer_at(crew__steal_local *own, const crew__steal_place *at,
                                        crew_fn fn, void *arg) {
    return crew__deque_offer_at(&own->deque, at->array, at->mark, fn, arg, 0);
}
/* Owner: take back the offer made at place mark, which the caller knows is the newest task
 * unless a thief took it (crew__deque_claim_at): 1, it is the caller's now; 0, a thief won it;
 * -1, it is not the newest (nothing changed). */
static inline int crew__steal_claim_offer(crew__steal_local *own, int64_t mark) {
    return crew__deque_claim_at(&own->deque, mark);
}
/* For checks only: is the offer made at place mark the newest task (then true only if its
 * place holds arg), or is something else on top (true)? */
static inline bool crew__steal_offer_holds(crew__steal_local *own, int64_t mark, void *arg) {
    return !crew__deque_bottom_is(&own->deque, mark + 1) ||
           crew__deque_arg_at(&own->deque, mark) == arg;
}

#endif /* CREW_STEAL_JOIN_H */
