/*
 * sched_steal.c -- STEAL (the default): a Chase-Lev deque per worker (deque.c), external
 * submission slots, and one injection queue, a priority queue like SHARED's.
 *
 * A task submitted by a task goes to its worker's deque (LIFO for the owner, FIFO for thieves).
 * A thread that is not a worker pushes priority-0 tasks (the highest priority, and the default)
 * into one of EXT_SLOTS Chase-Lev deques, chosen per thread, whose owner side (push, and
 * the pop of a waiting submitter) is serialised by a spinlock that one submitting thread keeps
 * in its cache; workers steal from the top without a lock, oldest first (a batch at a time
 * when the backlog is long: claim_batch). So one thread's
 * priority-0 submissions run in FIFO order, as from the injection queue, but a submission costs
 * no shared lock and no heap operation (oneTBB gives external threads a slot of their own in
 * the same spirit). Other priorities go to the injection queue.
 *
 * A worker takes from its deque, except that when a slot or the injection queue holds a
 * strictly higher priority than the task it popped it takes that one first (so a priority-0
 * task never waits behind a backlog of lower-priority local work); then from its shared batch
 * (steal_batch.h: the rest of a share of a slot it claimed, in order); then the slots, oldest
 * first, a batch at a time when a slot's backlog is long (claim_batch: the oldest is run, the
 * rest kept in the worker's shared batch); then a batch from the injection queue; then it
 * steals from the other workers, starting at a random one: from a worker's shared batch, then
 * its deque. Every thread that looks for any task (steal_any: idle workers, helping waiters,
 * take_any: a cancelling shutdown's sweep, a full queue's drop) looks at the batches, and
 * queued and visit count them, so a task a worker claimed but has not started is never hidden.
 *
 * A crew_submit task of priority 0 (from outside, into a slot) or of any priority (from a worker,
 * into its deque) is held in the deque by value (deque.h): no node. A take copies it into the
 * taking thread's buffer (taken, below), valid until that thread's next take; putting such a
 * copy back pushes it by value, or gives it a node (crew__task_keep) for a locked queue.
 */
#include <stddef.h>

#include "debug.h"
#include "join.h"
#include "lock.h"
#include "nodes.h"
#include "pool.h"
#include "schedule.h"
#include "steal_ext.h"
#include "steal_join.h"
#include "worker.h"

#define EXT_SLOTS CREW__EXT_SLOTS
typedef crew__ext_slot ext_slot; /* steal_ext.h */

/* STEAL's state (crew__sched.state). */
typedef struct steal_state {
    /* The external submission slots. First: a submission finds its slot at the state's address
     * plus its index times a slot's size, as fast as from a pointer of its own. */
    ext_slot ext[EXT_SLOTS];
    crew__lq central; /* the injection queue */
    bool central_ready;       /* central is initialised */
    unsigned ext_ready;       /* how many slots are */
} steal_state;

/* Its part of each worker record (crew__worker.sched), the worker's deque, is
 * crew__steal_local, with the join interface (steal_join.h). */
_Static_assert(offsetof(steal_state, ext) == 0, "ext_of_thread reads the slots at the state");

static inline steal_state *state_of(crew_pool *p) { return p->sched.state; }
static inline crew__lq *central_of(crew_pool *p) { return &state_of(p)->central; }
static inline crew__deque *deque_of(crew__worker *w) { return &crew__steal_local_of(w)->deque; }
static inline crew__steal_batch *batch_of(crew__worker *w) {
    return &crew__steal_local_of(w)->batch;
}

static int init(crew_pool *p, const crew_config *cfg, unsigned threads) {
    crew__unused(cfg);
    crew__unused(threads);
    steal_state *s = state_of(p); /* zeroed: nothing ready */
    if (crew__sched_central_init(p, &s->central) != CREW_OK)
        return CREW_ENOMEM;
    s->central_ready = true;
    for (; s->ext_ready < EXT_SLOTS; s->ext_ready++) {
        ext_slot *x = &s->ext[s->ext_ready];
        crew__spinlock_init(&x->lock);
        crew__atomic_init(&x->claimers, 0u);
        if (crew__deque_init(&x->deque) != CREW_OK)
            return CREW_ENOMEM;
    }
    p->sched.ext = s->ext; /* every slot ready: crew_submit may push inline (steal_ext.h) */
    return CREW_OK;
}

static void free_queues(crew_pool *p) {
    steal_state *s = state_of(p);
    for (unsigned i = 0; i < s->ext_ready; i++)
        crew__deque_free(&s->ext[i].deque);
    if (s->central_ready)
        crew__lq_free(&s->central);
}

static int worker_init(crew_pool *p, crew__worker *w) {
    crew__unused(p);
    crew__steal_batch_init(batch_of(w));
    return crew__deque_init(deque_of(w));
}

static void worker_free(crew_pool *p, crew__worker *w) {
    crew__unused(p);
    crew__deque_free(deque_of(w));
}

/* The calling thread's copy of the last task it took that a deque held by value. Its next take
 * may overwrite it: by then the task has started (crew__run copies what it needs first) or has
 * been put back. */
static CREW__TLS crew_task taken;

/* ---- External submission slots ---- */

static inline ext_slot *ext_of_thread(crew_pool *p) {
    /* The state's first field (see steal_state). */
    return crew__ext_slot_of_thread((ext_slot *)p->sched.state);
}

static int push_external(crew_pool *p, crew_task *t, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (t[i].priority != 0)
            return crew__lq_push_n(central_of(p), t, n);
    return crew__ext_push(state_of(p)->ext, t, NULL, n, 0);
}

/* A crew_submit task by value: into the caller's deque (a worker) or its slot (priority 0);
 * other priorities from outside go to the injection queue, in a node. */
static int push_value(crew_pool *p, crew__worker *self, crew_fn fn, void *arg, uint32_t priority,
                      uint32_t slot) {
    uint64_t aux = crew__deque_aux(slot, priority);
    /* Relaxed: the owner's own state (see push). */
    if (self && crew__load_relaxed(&self->state) != CREW__W_EXITED)
        return crew__deque_push_value(deque_of(self), fn, arg, aux);
    if (priority == 0) /* crew__sched_push_value makes this push inline (steal_ext.h) */
        return crew__ext_push_value(state_of(p)->ext, fn, arg, aux);
    crew_task *t = crew__node_of(p, fn, arg, priority, slot);
    if (!t)
        return CREW_ENOMEM;
    int rc = crew__lq_push_n(central_of(p), t, 1);
    if (rc != CREW_OK)
        crew__node_release(p, t);
    return rc;
}

/* An array's tasks by value (crew_enqueue_tasks' short arrays): into the caller's deque (a
 * worker), or its slot if all are of priority 0; the injection queue holds tasks by address
 * only (declined). A worker's own state is read relaxed (see push). */
static int push_values(crew_pool *p, crew__worker *self, const crew_task *t, size_t n,
                       uint32_t slot, uint32_t prio) {
    if (self && crew__load_relaxed(&self->state) != CREW__W_EXITED)
        return crew__deque_push_values(deque_of(self), t, n, slot);
    if (prio != 0)
        return CREW__SCHED_DECLINED;
    return crew__ext_push(state_of(p)->ext, NULL, t, n, slot);
}

#define EXT_BATCH CREW__STEAL_BATCH /* most tasks a worker claims from a slot at a time */

/* The batch worker w claims from a slot that holds len tasks: none (0: one steal) unless w
 * runs no task (tc->may_batch: its main loop; a waiter inside a task takes one at a time), is
 * not marked to leave (resize), and tasks are not timed (autosize reads each task's times as it
 * starts; a batch would have them wait in one worker's deque instead); then an equal share of
 * the backlog for this worker and each of the others, at most EXT_BATCH, at least 2. */
static inline size_t batch_size(crew_pool *p, crew__worker *w, const crew__take_ctx *tc,
                                size_t len) {
    /* Relaxed: the timing bits (see struct crew_pool) and the worker's own state. */
    if (!w || len < 4 || !tc->may_batch || crew__load_relaxed(&p->timing) != 0 ||
        crew__load_relaxed(&w->state) != CREW__W_RUNNING)
        return 0;
    size_t n = len / (crew__nworkers(p) + 1);
    return n < 2 ? 0 : n > EXT_BATCH ? EXT_BATCH : n;
}

/* Worker w claims up to n of slot x's oldest tasks with one compare-and-swap, runs the oldest
 * and keeps the rest in its shared batch (steal_batch.h), where it takes them in order and every
 * other thread can take them too (oldest first): a share, not the backlog, so the others keep
 * finding work in the slot. One claim instead of one per task, and the producer, whose pushes
 * read top, sees it move once a batch. The slot's owner side (a waiting submitter's take) gives
 * way to the claim while it runs (x->claimers, crew__deque_steal_batch); the producer's pushes
 * do not wait for it. */
#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (the checked library the tests link, debug.h): called by a worker's batch claim
 * just before (after 0) and after (1) it claims, so that a test can hold that window open. */
void (*crew__test_claim)(int after);
#define TEST_CLAIM(after) (crew__test_claim ? crew__test_claim(after) : (void)0)
/* Tests only: called as a worker begins to wait for a batch in a slot (take_queued). */
void (*crew__test_gather)(void);
#define TEST_GATHER() (crew__test_gather ? crew__test_gather() : (void)0)
#else
#define TEST_CLAIM(after) ((void)0)
#define TEST_GATHER() ((void)0)
#endif

/* A join's offered half (crew__join_half) is claimed only as the batch's first task, which the
 * worker runs, or hands back if a pause began, at once; one at a later place would wait in its
 * deque, where neither its caller nor a draining shutdown can count on it. */
static __attribute__((noinline)) crew_task *claim_batch(crew__worker *w, ext_slot *x, size_t n,
                                                        crew__take_ctx *tc) {
    crew__steal_batch *b = batch_of(w);
    /* Its places are written only while it is exhausted, as seen by an acquire (steal_batch.h).
     * It is: w's take looked at its batch before the queues, only w fills it, and w runs no
     * task here (may_batch). A guard all the same: else one task, and no batch. */
    if (!crew__steal_batch_exhausted(b))
        return crew__deque_steal(&x->deque, &taken, &tc->retry);
    TEST_CLAIM(0);
    size_t got = crew__deque_steal_batch(&x->deque, b->place, n, crew__join_half, &x->claimers,
                                         &tc->retry);
    TEST_CLAIM(1);
    if (got == 0)
        return NULL; /* the places written are never claimable: the index is unchanged */
    /* The oldest is w's: copied before the publication, after which only w writes places
     * again (its next fill), and w runs it first. */
    crew_task *t = crew__deque_entry_task(&b->place[0], &taken);
    if (got > 1) {
        crew__steal_batch_publish(b, got);
        tc->pushed_back += got - 1; /* others may take them: wake a sleeper */
        tc->batch = true;
    }
    return t;
}

/* The slot that last had work for this thread (steal_external, take_queued). */
static CREW__TLS unsigned last;
/* Takes in a row from slot `last` (a plain thread-local: this thread's own count, across
 * pools, like `last`: both are hints that order a search, never what it finds). */
static CREW__TLS unsigned streak;

#define EXT_TURN 16u /* takes in a row from one slot before the search starts past it */

/* This thread took from slot k. After EXT_TURN takes in a row from it, its next search starts
 * at the slot after k (and comes back round to k): a producer that keeps its slot full would
 * otherwise have every worker's search end there, and another producer's tasks wait as long as
 * it keeps submitting. */
static inline void took_from(unsigned k) {
    if (k != last) {
        last = k;
        streak = 0;
    } else if (__builtin_expect(++streak == EXT_TURN, 0)) {
        streak = 0;
        last = (k + 1) % EXT_SLOTS;
    }
}
/* take_queued's last look at that slot found tasks (a plain thread-local: its own history). */
static CREW__TLS bool fed;

/* Steal the oldest task of any slot (a batch of them for a worker, batch_size), starting with
 * the one that last had work for this thread (usually the only busy one: one submitting
 * thread). w: the calling worker, or NULL. */
static inline __attribute__((always_inline)) crew_task *steal_external(crew_pool *p,
                                                                      crew__worker *w,
                                                                      crew__take_ctx *tc) {
    for (unsigned i = 0; i < EXT_SLOTS; i++) {
        unsigned k = (last + i) % EXT_SLOTS;
        ext_slot *x = &state_of(p)->ext[k];
        size_t len = crew__deque_size(&x->deque), n;
        if (len != 0) {
            crew_task *t = __builtin_expect((n = batch_size(p, w, tc, len)) != 0, 0)
                               ? claim_batch(w, x, n, tc)
                               : crew__deque_steal(&x->deque, &taken, &tc->retry);
            if (t) {
                took_from(k);
                return t;
            }
        }
    }
    return NULL;
}

static bool external_queued(crew_pool *p) {
    for (unsigned i = 0; i < EXT_SLOTS; i++)
        if (crew__deque_size(&state_of(p)->ext[i].deque) != 0)
            return true;
    return false;
}

/* A waiting submitter: the newest task of its own slot if it is of group slot (steal_ext.h). */
static crew_task *take_external_group(crew_pool *p, uint32_t slot, crew__take_ctx *tc) {
    return crew__ext_take_group(state_of(p)->ext, slot, &taken, &tc->retry, &tc->pushed_back);
}

/* A joining thread outside the pool (crew_join): the newest task of its external slot, if it
 * lies above mark (pushed after its offer: its own, or of another thread that shares the
 * slot), or NULL. */
static crew_task *take_external_own(crew_pool *p, int64_t mark, crew__take_ctx *tc) {
    ext_slot *x = ext_of_thread(p);
    /* Relaxed: a hint; the owner side's bottom, read again under the lock. */
    if (crew__load_relaxed(&x->deque.bottom) <= mark)
        return NULL;
    crew__spinlock_acquire(&x->lock);
    crew_task *t = NULL;
    if (crew__load_relaxed(&x->deque.bottom) > mark) { /* relaxed: the owner side, locked */
        t = crew__deque_take_unless(&x->deque, &taken, &x->claimers);
        if (!t) /* NULL also while a worker claims a batch: look again */
            crew__ext_gave_way(x, &tc->retry);
    }
    crew__spinlock_release(&x->lock);
    return t;
}

static int push(crew_pool *p, crew__worker *self, crew_task *t, size_t n) {
    /* Relaxed: the owner's own state. A marked worker still pushes locally: it drains its
     * deque into the injection queue before it exits. */
    if (self && crew__load_relaxed(&self->state) != CREW__W_EXITED)
        return n == 1 ? crew__deque_push1(deque_of(self), t)
                      : crew__deque_push(deque_of(self), t, n);
    return push_external(p, t, n);
}

/* Steal one task from another worker's shared batch or deque, starting at a random one.
 * tc->retry is set if a race was lost on a deque (a task may remain; a batch's claim tries
 * again until it wins or finds the batch empty). */
static crew_task *steal_any(crew_pool *p, crew__worker *self, crew__take_ctx *tc) {
    unsigned nw = crew__nworkers(p);
    if (nw == 0)
        return NULL;
    unsigned start = crew__rand_below(nw);
    for (unsigned i = 0; i < nw; i++) {
        crew__worker *v = crew__worker_at(p, (start + i) % nw);
        crew_task *t = NULL;
        if (v == self)
            continue;
        /* Its shared batch first: older tasks than its deque's (claimed from a slot before its
         * running task pushed any), and held up behind that task. */
        if (crew__steal_batch_size(batch_of(v)) != 0)
            t = crew__steal_batch_take(batch_of(v), &taken);
        if (!t && crew__deque_size(deque_of(v)) != 0)
            t = crew__deque_steal(deque_of(v), &taken, &tc->retry);
        if (t) {
            if (self) /* relaxed: only this worker writes it; statistics read it */
                crew__store_relaxed(&self->stolen, crew__load_relaxed(&self->stolen) + 1);
            return t;
        }
    }
    return NULL;
}

#define INJECT_BATCH 32u /* most tasks a worker moves from the injection queue at a time */

/* A worker: take a batch of the injection queue's best tasks (all of one priority, at most
 * INJECT_BATCH and at most half of what is queued), run the oldest, and push the rest into its
 * deque, oldest at the bottom, so that it runs them in FIFO order and thieves take the newest.
 * One lock hold serves many tasks: the lock no longer bounces between the workers and the
 * submitting thread on every task. */
static crew_task *take_injected(crew_pool *p, crew__worker *w, crew__take_ctx *tc) {
    crew__lq *q = central_of(p);
    if (crew__lq_len(q) == 0)
        return NULL;
    crew_task *batch[INJECT_BATCH];
    /* Room for the batch first, so the push below cannot fail (else: one task, no batch). */
    size_t room = crew__deque_reserve(deque_of(w), INJECT_BATCH) == CREW_OK ? INJECT_BATCH : 1;
    size_t n = crew__lq_take_batch(q, batch, room);
    if (n == 0)
        return NULL;
    if (n > 1) { /* newest first, so the oldest ends at the bottom (room was reserved) */
        crew_task *rev[INJECT_BATCH];
        for (size_t i = 1; i < n; i++)
            rev[i - 1] = batch[n - i];
        int rc = crew__deque_push_ptrs(deque_of(w), rev, n - 1);
        crew__assert(rc == CREW_OK); /* room was reserved */
        tc->pushed_back += n - 1; /* others may steal them: wake a sleeper */
    }
    return batch[0];
}

/* Worker w took t, of priority above 0, from its deque: a task queued from outside with a
 * strictly higher priority instead, t going back, if there is one; else t. Out of line: most
 * tasks have priority 0. */
static __attribute__((noinline)) crew_task *better_than(crew_pool *p, crew__worker *w,
                                                        crew_task *t, crew__take_ctx *tc) {
    crew_task *u = NULL, keep = *t; /* a steal below may overwrite taken */
    if (external_queued(p))
        u = steal_external(p, NULL, tc); /* one task: t goes back on top of w's deque */
    /* A hint; the worst a stale value does is one task's order. */
    if (!u && crew__lq_top(central_of(p)) < t->priority)
        u = crew__lq_take(central_of(p));
    if (!u)
        return t; /* no steal succeeded: taken, if t is it, is intact */
    int rc = crew__deque_push1(deque_of(w), t == &taken ? &keep : t); /* t's place is free: */
    crew__assert(rc == CREW_OK);
    tc->pushed_back++;
    return u;
}

/* take_queued's rest, after its first look. */
static __attribute__((noinline)) crew_task *take_queued_rest(crew_pool *p, crew__worker *w,
                                                             crew__take_ctx *tc) {
    crew_task *t;
    if ((t = steal_external(p, w, tc)) != NULL)
        return t;
    if ((t = w ? take_injected(p, w, tc) : crew__lq_take(central_of(p))) != NULL)
        return t;
    return steal_any(p, w, tc);
}

/* take's rest, once the worker's own deque had nothing (or the taker is no worker). First a
 * look at the slot that last had work (steal_external's first, where a thread fed from outside
 * finds its tasks): a single steal there, with no call that would need registers saved; the
 * rest (batches, the other slots, the injection queue, the workers' deques) out of line, which
 * looks at that slot again (a steal lost to a race there sets tc->retry). */
static __attribute__((noinline)) crew_task *take_queued(crew_pool *p, crew__worker *w,
                                                        crew__take_ctx *tc) {
    ext_slot *x = &state_of(p)->ext[last];
    size_t len = crew__deque_size(&x->deque);
    /* A worker that would chase a submitting producer waits for a batch (steal_ext.h), from
     * its second find in a row on: not on its first after an idle stretch (a wake-up, a
     * fork-join round's offer), whose task waits for nothing; and only if it may claim one
     * (batch_size: not while tasks are timed, nor when marked to leave, nor as a waiter). */
    if (__builtin_expect(len - 1 < CREW__EXT_GATHER - 1, 0) && fed &&
        batch_size(p, w, tc, CREW__EXT_GATHER) != 0) {
        TEST_GATHER();
        len = crew__ext_gather(&x->deque, len);
    }
    fed = len != 0;
    if (len != 0 && batch_size(p, w, tc, len) == 0) {
        crew_task *t = crew__deque_steal(&x->deque, &taken, &tc->retry);
        if (t) {
            took_from(last);
            return t;
        }
    }
    return take_queued_rest(p, w, tc);
}

/* take's claim on worker w's shared batch, which holds a task by the look in take: its next
 * task, in order (priority 0, as every slot's task: none is better), the caller told to run the
 * batch's next ones too (tc->batch); else the queues (others took the rest). */
static __attribute__((noinline)) crew_task *take_batch(crew_pool *p, crew__worker *w,
                                                       crew__take_ctx *tc) {
    crew_task *t = crew__steal_batch_take(batch_of(w), &taken);
    if (t)
        tc->batch = true;
    return t ? t : take_queued(p, w, tc);
}

/* take's claim on worker w's own deque, which holds a task by the look in take. */
static __attribute__((noinline)) crew_task *take_own(crew_pool *p, crew__worker *w,
                                                     crew__take_ctx *tc) {
    crew_task *t = crew__deque_take_newest(deque_of(w), &taken, NULL); /* inline: every task */
    if (t)
        return __builtin_expect(t->priority != 0, 0) ? better_than(p, w, t, tc) : t;
    return take_queued(p, w, tc); /* a thief won its last task */
}

/* The strategy's take: small, with only tail calls, so that no path saves registers for
 * another (a worker's own deque: take_own; the queues: take_queued). The look at the own
 * deque is crew__deque_take's (a stale top, relaxed, at or past bottom proves it empty). */
static crew_task *take(crew_pool *p, crew__worker *w, crew__take_ctx *tc) {
    if (w) {
        crew__deque *d = deque_of(w);
        /* Relaxed: see crew__deque_take. */
        if (crew__load_relaxed(&d->top) < crew__load_relaxed(&d->bottom))
            return take_own(p, w, tc);
        if (crew__steal_batch_size(batch_of(w)) != 0)
            return take_batch(p, w, tc);
    }
    return take_queued(p, w, tc);
}

static crew_task *take_group(crew_pool *p, crew__worker *self, uint32_t slot, int64_t mark,
                             crew__take_ctx *tc) {
    crew_task *t = NULL;
    /* The tasks this task (and tasks it helped with) pushed sit above mark in our deque: our
     * own descendants, newest first. Relaxed: the owner's own bottom. */
    if (self && crew__load_relaxed(&deque_of(self)->bottom) > mark)
        t = crew__deque_take(deque_of(self), &taken);
    else if (!self)
        t = slot == 0 ? take_external_own(p, mark, tc) : take_external_group(p, slot, tc);
    /* Slot 0 (a join, crew_join): only the tasks above mark of this thread's own queue. */
    return t || slot == 0 ? t : crew__lq_take_group(central_of(p), slot);
}

/* A join's offered half (crew_join): by value on top of the worker's own deque, or of the
 * external slot of a thread outside the pool (under the slot's lock), where thieves find it at
 * the far end (oldest first: an outer join's half before an inner one's) and the caller takes
 * it back with take_group(slot 0, mark): the deque's bottom before the push. A worker's own
 * state is read relaxed (see push); an exited worker's deque takes no pushes (ENOTSUP: its
 * thread, in on_stop, joins through a group). */
static __attribute__((noinline)) int offer_external(crew_pool *p, crew_fn fn, void *arg,
                                                    int64_t *mark) {
    ext_slot *x = ext_of_thread(p);
    crew__spinlock_acquire(&x->lock);
    *mark = crew__load_relaxed(&x->deque.bottom); /* relaxed: the owner side, under its lock */
    int rc = crew__deque_push_value(&x->deque, fn, arg, 0);
    crew__spinlock_release(&x->lock);
    return rc;
}
static int offer(crew_pool *p, crew__worker *self, crew_fn fn, void *arg, int64_t *mark) {
    if (__builtin_expect(!self, 0))
        return offer_external(p, fn, arg, mark);
    if (__builtin_expect(crew__load_relaxed(&self->state) == CREW__W_EXITED, 0))
        return CREW_ENOTSUP;
    return crew__steal_offer(crew__steal_local_of(self), fn, arg, mark);
}

/* The offered half back (crew__deque_take_back), from the worker's deque or the thread's
 * external slot (under its lock, giving way to a batch claim). */
static __attribute__((noinline)) int take_back_external(crew_pool *p, int64_t mark, crew_fn fn,
                                                        void *arg) {
    ext_slot *x = ext_of_thread(p);
    crew__spinlock_acquire(&x->lock);
    int r = crew__deque_take_back(&x->deque, mark, fn, arg, &x->claimers);
    crew__spinlock_release(&x->lock);
    return r;
}
static int take_back(crew_pool *p, crew__worker *self, int64_t mark, crew_fn fn, void *arg) {
    if (__builtin_expect(!self, 0))
        return take_back_external(p, mark, fn, arg);
    return crew__steal_take_back(crew__steal_local_of(self), mark, fn, arg);
}

static int requeue(crew_pool *p, crew__worker *self, crew_task *t) {
    crew__unused(self);
    return crew__lq_requeue(central_of(p), t);
}

static int worker_exit(crew_pool *p, crew__worker *w, size_t *moved, crew_task **orphan) {
    /* Its batch's rest newest first, as each requeue goes in front (so in order), then its
     * deque. One without memory is the orphan; the batch's older ones go back into it. */
    crew__deque_entry rest[CREW__STEAL_BATCH];
    size_t n = crew__steal_batch_drain(batch_of(w), rest);
    crew_task *t;
    while ((t = n ? crew__deque_entry_task(&rest[--n], &taken)
                  : crew__deque_take(deque_of(w), &taken)) != NULL) {
        /* Into the injection queue (requeue, below), a task held by value in a node. */
        if (crew__sched_requeue(p, t) != CREW_OK) {
            *orphan = t;
            crew__steal_batch_put_back(batch_of(w), rest, n);
            return CREW_ENOMEM;
        }
        ++*moved;
    }
    return CREW_OK;
}

static crew_task *take_any(crew_pool *p) {
    crew__take_ctx tc = {.may_batch = false}; /* without a worker: nothing is put back */
    crew_task *t;
    do {
        tc.retry = false;
        t = steal_external(p, NULL, &tc);
        if (!t)
            t = crew__lq_take(central_of(p));
        if (!t)
            t = steal_any(p, NULL, &tc);
    } while (!t && tc.retry);
    return t;
}

static crew_task *take_locked_group(crew_pool *p, uint32_t slot) {
    return crew__lq_take_group(central_of(p), slot);
}

static size_t queued(crew_pool *p) {
    size_t n = crew__lq_len(central_of(p));
    for (unsigned i = 0; i < EXT_SLOTS; i++)
        n += crew__deque_size(&state_of(p)->ext[i].deque);
    /* The workers' shared batches (their deques: the strategy's own queues, schedule.c). */
    for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++)
        n += crew__steal_batch_size(batch_of(crew__worker_at(p, i)));
    return n;
}

static void visit(crew_pool *p, crew__queue_visitor fn, void *ctx) {
    crew__sched_visit_lq(central_of(p), "the injection queue", -1, fn, ctx);
    for (unsigned i = 0; i < EXT_SLOTS; i++)
        crew__sched_visit_deque(&state_of(p)->ext[i].deque, "external submission slot", (int)i,
                                fn, ctx);
    for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++) {
        crew__worker *w = crew__worker_at(p, i);
        crew__queue_view v = {"the batch of worker", (int)w->index,
                              crew__steal_batch_size(batch_of(w)), 0, NULL};
        if (v.n != 0)
            fn(ctx, &v);
    }
}

const crew__sched_ops crew__sched_steal = {
    .name = "steal",
    .what = "work stealing",
    .any_worker = true,
    .state_size = sizeof(steal_state),
    .init = init,
    .free = free_queues,
    .worker_init = worker_init,
    .worker_free = worker_free,
    .push = push,
    .push_value = push_value,
    .push_values = push_values,
    .take = take,
    .run_batch = crew__batch_run,
    .take_group = take_group,
    .mark_at = offsetof(crew__steal_local, deque.bottom), /* not 0: top comes first */
    .offer = offer,
    .take_back = take_back,
    .own_deque = true,
    .requeue = requeue,
    .worker_exit = worker_exit,
    .take_any = take_any,
    .take_locked_group = take_locked_group,
    .queued = queued,
    .visit = visit,
    .own = {.what = "the deque of worker", .at = offsetof(crew__steal_local, deque), .deque = true},
};
