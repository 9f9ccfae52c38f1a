/*
 * sched_calls.h -- the strategy's calls made once or more per task (schedule.h), inlined into
 * their callers: a call to a wrapper in schedule.c cost about 7 instructions a task. The others
 * are in schedule.c. Apart from schedule.h because they read struct crew_pool (pool.h), which
 * itself holds the strategy (crew__sched).
 */
#ifndef CREW_SCHED_CALLS_H
#define CREW_SCHED_CALLS_H

#include "nodes.h"
#include "pool.h"
#include "schedule.h"
#include "steal_ext.h"
#include "steal_join.h"

/* Queue t[0..n) for the calling thread. */
static inline int crew__sched_push(crew_pool *p, crew_task *t, size_t n) {
    return p->sched.ops->push(p, crew__self(p), t, n);
}

/* Queue t[0..n) where any thread of the pool takes them, behind what is queued there, even
 * from a worker (not in its own queue, where it would take them again at once): a lane's
 * runner (lane.c). */
static inline int crew__sched_push_shared(crew_pool *p, crew_task *t, size_t n) {
    return p->sched.ops->push(p, NULL, t, n);
}

/* Queue t[0..n) for self (crew__self) by value, where the strategy can (its push_values),
 * else CREW__SCHED_DECLINED, nothing done. */
static inline int crew__sched_push_values(crew_pool *p, crew__worker *self, const crew_task *t,
                                          size_t n, uint32_t slot, uint32_t prio) {
    const crew__sched_ops *ops = p->sched.ops;
    return ops->push_values ? ops->push_values(p, self, t, n, slot, prio) : CREW__SCHED_DECLINED;
}

/* Queue one crew_submit task (no flags; group slot, 0 for none) for self (crew__self): by value
 * where the strategy can hold it so, else in a node. CREW_OK, CREW_ENOMEM or the push's error.
 * Always inlined: submit.c's fast path has a copy per public call, and a call here would cost
 * crew_submit's every task. A priority-0 task from a thread outside the pool goes into STEAL's
 * external slot in place (steal_ext.h: the push its push_value would make, without the
 * indirect call and its frame). */
static inline __attribute__((always_inline)) int crew__sched_push_value(crew_pool *p,
                                                                        crew__worker *self,
                                                                        crew_fn fn, void *arg,
                                                                        uint32_t priority,
                                                                        uint32_t slot) {
    struct crew__ext_slot *ext = p->sched.ext;
    if (__builtin_expect(ext != NULL, 1) && !self && priority == 0)
        return crew__ext_push_value(ext, fn, arg, crew__deque_aux(slot, 0));
    const crew__sched_ops *ops = p->sched.ops;
    if (ops->push_value)
        return ops->push_value(p, self, fn, arg, priority, slot);
    crew_task *t = crew__node_of(p, fn, arg, priority, slot);
    if (!t)
        return CREW_ENOMEM;
    int rc = ops->push(p, self, t, 1);
    if (rc != CREW_OK)
        crew__node_release(p, t);
    return rc;
}

/* Any task, for the thread whose worker record for p is self (crew__self); none while the pool
 * is paused (relaxed: see crew_pool.halt). What the take did goes to *tc. */
static inline crew_task *crew__sched_take_as(crew_pool *p, crew__worker *self,
                                             crew__take_ctx *tc) {
    if (__builtin_expect(crew__paused(p), 0))
        return NULL;
    return p->sched.ops->take(p, self, tc);
}
/* The same for the calling thread (self = crew__self). */
static inline crew_task *crew__sched_take(crew_pool *p, crew__take_ctx *tc) {
    return crew__sched_take_as(p, crew__self(p), tc);
}

/* The deque of the calling thread's own external slot under STEAL (crew__sched.ext), where its
 * submissions wait, for crew__sched_take_own_ext; NULL under another strategy. */
static inline crew__deque *crew__sched_own_ext(crew_pool *p) {
    struct crew__ext_slot *ext = p->sched.ext;
    return __builtin_expect(ext != NULL, 1) ? crew__ext_own_deque(ext) : NULL;
}
/* A thread outside the pool that helps while it waits: the oldest task of own (its
 * crew__sched_own_ext, or NULL), claimed inline as a thief does (crew__deque_steal_entry: no
 * indirect call, nothing copied), its place's fields in *fn, *arg, *aux (crew__deque_entry);
 * false if none was found there (a relaxed look first: the fence only if it holds a task) or the
 * pool is paused (relaxed: see crew_pool.halt); the caller then takes with
 * crew__sched_take_as, which looks everywhere. A lost race sets tc->retry. */
static inline bool crew__sched_take_own_ext(crew_pool *p, crew__deque *own, crew_fn *fn,
                                            void **arg, uint64_t *aux, crew__take_ctx *tc) {
    return own && !crew__paused(p) && crew__deque_size(own) != 0 &&
           crew__deque_steal_entry(own, fn, arg, aux, &tc->retry);
}

/* Taken just as a pause or a cancelling shutdown began (after the look above): held back
 * (crew__hold_back, schedule.h), true; false if it may run. Checked after every take, so that
 * no task submitted after crew_pause returned starts before crew_resume (the look before the
 * take alone left a window), and no queued task starts once this thread has seen a cancelling
 * shutdown begin (its sweep comes after the flag: a worker freed by a task that polled
 * crew_cancelled would otherwise start the next queued task first). A task put back is counted
 * in *pushed_back (the caller's take context), and sleepers are woken for all of them at once
 * (crew__wake_pushed_back). */
static inline bool crew__held_back(crew_pool *p, crew_task *t, size_t *pushed_back) {
    return __builtin_expect(crew__halted(p), 0) && crew__hold_back(p, t, pushed_back);
}

/* A queued task of group slot for a waiter (self: its worker record for p, crew__self), newest
 * first; none while paused. */
static inline crew_task *crew__sched_take_group_as(crew_pool *p, crew__worker *self,
                                                   uint32_t slot, int64_t mark,
                                                   crew__take_ctx *tc) {
    if (crew__paused(p))
        return NULL;
    return p->sched.ops->take_group(p, self, slot, mark, tc);
}
static inline crew_task *crew__sched_take_group(crew_pool *p, uint32_t slot, int64_t mark,
                                                crew__take_ctx *tc) {
    return crew__sched_take_group_as(p, crew__self(p), slot, mark, tc);
}

/* This thread's mark for crew__sched_take_group, when a task starts (self: crew__self): where
 * the strategy keeps it (crew__sched_ops.mark_at), else 0. */
static inline int64_t crew__sched_mark(crew_pool *p, crew__worker *self) {
    unsigned at = p->sched.ops->mark_at;
    if (at == 0 || !self)
        return 0;
    /* Relaxed: the worker's own (STEAL: its deque's bottom, which only it writes). */
    return crew__load_relaxed((_Atomic int64_t *)(void *)(self->sched.bytes + at));
}

/* A join's own place: the calling worker's (self: crew__self) part of the work-stealing
 * strategy, whose join interface (steal_join.h) then offers and takes back inline, if its
 * strategy is STEAL (crew__sched_ops.own_deque), else NULL; NULL too in a forked child
 * (crew__sched.own_deque), so a place found proves !crew__forked(p). Looked up once per join:
 * the offer and the take-back below then work on it without asking the strategy again. */
static inline crew__steal_local *crew__sched_join_own(crew_pool *p, crew__worker *self) {
    if (__builtin_expect(!self || !p->sched.own_deque, 0))
        return NULL;
    /* A worker whose loop has ended runs no task (worker.c), so none joins. Relaxed: its own
     * state. */
    crew__assert(crew__load_relaxed(&self->state) != CREW__W_EXITED);
    return crew__steal_local_of(self);
}
/* A join's offer (crew__sched_ops.offer) of fn(arg) for the calling thread: on its own place
 * (crew__sched_join_own) if it has one, else the strategy's offer; CREW_ENOTSUP without one.
 * OUT: *mark, for crew__sched_take_back. */
static inline int crew__sched_offer(crew_pool *p, crew__worker *self, crew__steal_local *own,
                                    crew_fn fn, void *arg, int64_t *mark) {
    if (__builtin_expect(own != NULL, 1))
        return crew__steal_offer(own, fn, arg, mark);
    const crew__sched_ops *ops = p->sched.ops;
    return ops->offer ? ops->offer(p, self, fn, arg, mark) : CREW_ENOTSUP;
}
/* The offer back, if it is still the newest task above mark (crew__sched_ops.take_back). */
static inline int crew__sched_take_back(crew_pool *p, crew__worker *self, crew__steal_local *own,
                                        int64_t mark, crew_fn fn, void *arg) {
    if (__builtin_expect(own != NULL, 1))
        return crew__steal_take_back(own, mark, fn, arg);
    return p->sched.ops->take_back(p, self, mark, fn, arg);
}
/* Does the strategy offer a join's half without a group (crew__sched_ops.offer)? */
static inline bool crew__sched_has_offer(const crew_pool *p) {
    return __builtin_expect(p->sched.own_deque, 1) || p->sched.ops->offer != NULL;
}

/* Can any worker take any queued task (crew__sched_ops.any_worker: the pool's lookers)? */
static inline bool crew__sched_any_worker(const crew_pool *p) { return p->sched.ops->any_worker; }

/* May sleeping worker w take a task queued now (crew__sched_ops.has_work_for; lock held)? */
static inline bool crew__sched_has_work_for(crew_pool *p, crew__worker *w) {
    return !p->sched.ops->has_work_for || p->sched.ops->has_work_for(p, w);
}

#endif /* CREW_SCHED_CALLS_H */
