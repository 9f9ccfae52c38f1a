/*
 * join.c -- crew_join: spawn-and-wait without a group, for a caller that owns the frame (the
 * work-first fork-join of Cilk: Frigo, Leiserson and Randall, "The Implementation of the
 * Cilk-5 Multithreaded Language", PLDI 1998; Rayon's join).
 *
 * The caller offers one half to the other threads and runs the other half itself. The offer is
 * the strategy's (crew__sched_ops.offer; STEAL: a push by value on the worker's own deque,
 * through the strategy's join interface, steal_join.h, or on the external slot of a thread
 * outside the pool), so when nobody took the half the caller takes it back from the top of that
 * deque and runs it inline: a push, a take and two calls, with no group, no slot and no
 * allocation. Only when a thief took it does the caller wait
 * (crew__join_wait, wait.c): it runs its own tasks above the offer first, then helps like any
 * waiter, and sleeps only through the eventcount (pool->joined), which the thief notifies after
 * it has stored the record's `over` flag. An offer is not counted in pending: it belongs to the
 * caller's call (which, in a task, that task's unit holds), so taking it back touches no
 * counter; a thread that takes it counts it then, as it ends as a task of the pool (join.h).
 *
 * Where the strategy has no offer, the half goes into a group of its own (crew_submit) and the
 * caller waits for it with crew_wait: the same contract, at a group's price.
 *
 * crew_enqueue_tasks_wait's tasks go the same way (the second part of this file), and so does
 * crew_enqueue_tasks_wait itself (at the end: a few tasks, else a group and crew_wait).
 *
 * Every half runs exactly once: the record lives on the caller's stack until the half has run
 * or come back; a thread that took a half it must not run (a cancelling shutdown, a full
 * queue's drop, a pause, a resize) hands it back (join.h), and the caller runs it. Nothing is
 * dropped, so crew_join never reports a loss.
 */
#include "join.h"

#include "error.h"
#include "kind.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "wait.h"
#include "wake.h"
#include "worker.h"

/* A thread took an offered half that no unit of pending holds: count it, since it ends as a
 * task of the pool (crew__run, or drop, counts it finished). */
static inline void count_taken(crew_pool *p, const crew__join *j) {
    if (!j->counted)
        crew__pending_add(p, crew__self(p), 1);
}

/* Wake only the caller of the record whose over flag is ctx: a joiner sleeps on pool->joined
 * with its record's over as its node's data (wait.c). Compares addresses only: the record may
 * be gone when this runs (another record at the same place would get a harmless wake-up). */
static bool is_joiner(void *ctx, void *data) { return data == ctx; }

void crew__join_half(void *arg) {
    crew__join *j = arg;
    crew_pool *p = j->p; /* read before over: the record may be gone after it */
    void *over = &j->over;
    count_taken(p, j);
    j->fn(j->arg);
    /* Release: the half's effects before the caller's acquire of over. */
    crew__store_release(&j->over, true);
    crew__ec_notify(&p->joined, &p->lock, is_joiner, over); /* pool memory: safe after it */
}

/* The join kind's drop (kind.h): a half a thread took but must not run (a cancelling
 * shutdown, a full queue's drop, a pause, a resize) goes back to the caller of crew_join, which
 * runs it. drop.c still counts the half finished (in pending and its group), never lost. */
static void hand_back(crew_pool *p, void *arg, uint32_t slot, bool by_shutdown) {
    crew__unused(slot);
    crew__unused(by_shutdown);
    crew__join *j = arg;
    void *over = &j->over;
    count_taken(p, j);
    j->back = true;
    crew__store_release(&j->over, true); /* release: back before over; pairs as above */
    crew__ec_notify(&p->joined, &p->lock, is_joiner, over);
}

/* A half taken as a pause began, or by a worker that resize marked: dropped, which hands it
 * back (above) and ends it. */
static void put_back(crew_pool *p, crew_task *t) { crew__task_dropped(p, t, false); }

const crew__kind crew__join_kind = {
    .fn = crew__join_half,
    .name = "join half",
    .not_lost = true, /* its caller runs it */
    .dropped = hand_back,
    .hand_back = put_back,
};

/* The caller did not get its half back at once (a thief took it, or tasks it queued itself
 * after the offer lie above it): it waits for the half, running those tasks first. Out of
 * line: the slow path. */
static __attribute__((noinline)) void join_wait(crew_pool *p, crew__worker *self, crew__join *j,
                                                int64_t mark) {
    if (crew__forked(p)) { /* fa forked, a thief took fb: the thief is not in this child */
        j->fn(j->arg);
        return;
    }
    crew__join_wait(p, self, &j->over, mark);
    /* Not over only in a child forked meanwhile (the wait stopped with CREW_EFORKED): the half
     * is left to this thread, as in join_grouped. Acquire: see crew__join. back is plain:
     * written before over, which was read with acquire. */
    if (!crew__load_acquire(&j->over) || j->back)
        j->fn(j->arg);
}

/* No offer here: the half in a group of its own, waited for with crew_wait. */
static __attribute__((noinline)) int join_grouped(crew_pool *p, crew__join *j, crew_fn fa,
                                                  void *a) {
    crew_handle g = CREW_HANDLE_NONE;
    j->counted = true; /* a submission: crew_submit counts it */
    if (crew__forked(p) || crew_submit(p, crew__join_half, j, 0, &g) != CREW_OK) {
        fa(a); /* nowhere to offer it (shut down, a full queue, a forked child): both here */
        j->fn(j->arg);
        return CREW_OK;
    }
    fa(a);
    (void)crew_wait(p, g); /* a group of its own: it ends when the half ran or came back */
    /* Acquire: see crew__join. Not over only in a child forked meanwhile (the wait failed). */
    if (!crew__load_acquire(&j->over) || j->back)
        j->fn(j->arg);
    return CREW_OK;
}

/* The offer back for a thread without a deque of its own (crew__sched_ops.take_back). If fa
 * forked and this is the child, the half counts as back without a look: the slot's lock may be
 * held by a thread of the parent's, and the thread that may have taken the half is not in the
 * child, so the caller runs it (crew.h: both halves on the caller). A worker's own deque needs
 * no such care: its owner side takes no lock (and join_wait checks for a fork). */
static __attribute__((noinline)) int take_back_slow(crew_pool *p, crew__worker *self,
                                                    int64_t mark, crew__join *j) {
    if (crew__forked(p))
        return 1;
    return crew__sched_take_back(p, self, NULL, mark, crew__join_half, j);
}

/* The call, once its arguments are checked: offer fb, run fa, take fb back or wait for it. The
 * general path: any thread, any strategy (a worker with a deque of its own takes join_worker). */
static inline __attribute__((always_inline)) int join_run(crew_pool *p, crew__worker *self,
                                                          crew_fn fa, void *a, crew_fn fb,
                                                          void *b) {
    /* over initialised with the rest (one store for the flags): the record is no other
     * thread's before the offer's release store publishes it. */
    crew__join j = {.p = p, .fn = fb, .arg = b, .over = false, .back = false, .counted = false};
    crew__steal_local *own = crew__sched_join_own(p, self);
    int64_t mark;
    /* A forked child (the caller may be the worker thread that forked): no queue of the
     * parent's may be touched (its locks may be held). An own place proves it is not one. */
    if (__builtin_expect(!own && crew__forked(p), 0))
        return join_grouped(p, &j, fa, a);
    if (__builtin_expect(crew__sched_offer(p, self, own, crew__join_half, &j, &mark) != CREW_OK,
                         0))
        return join_grouped(p, &j, fa, a);
    crew__wake_work(p, 1, 0); /* a sleeping worker may take it */
    fa(a);
    /* Take the half back from the top of this thread's own queue, paused or not: it is the
     * caller's own work (crew.h). From here p, fb and b are read from the record, not kept
     * across fa: that leaves a register for the own place, which is not spilled then. */
    int back = __builtin_expect(own != NULL, 1)
                   ? crew__sched_take_back(j.p, self, own, mark, crew__join_half, &j)
                   : take_back_slow(j.p, self, mark, &j);
    if (__builtin_expect(back > 0, 1)) {
        j.fn(j.arg);
        return CREW_OK;
    }
    join_wait(j.p, self, &j, mark);
    return CREW_OK;
}

/* join_worker's offer did not come back at once: the half lies below tasks fa left above it,
 * or another thread took it, or its record says it is over. The general take-back decides. */
static __attribute__((noinline)) int join_back_slow(crew__steal_local *own, int64_t mark,
                                                    crew__join *j) {
    crew_pool *p = j->p;
    crew__worker *self = crew__self(p);
    crew__assert(self && crew__sched_join_own(p, self) == own);
    if (crew__sched_take_back(p, self, own, mark, crew__join_half, j) > 0)
        j->fn(j->arg);
    else
        join_wait(p, self, j, mark);
    return CREW_OK;
}

/* The record's address after fa, made anew there from the stack pointer: else the compiler
 * keeps the address it made for the offer in a callee-saved register for the slow paths, a
 * push and a pop on every call. The asm reads the record, which fa may have written (its
 * address was published), so it is not moved before fa. */
#if defined(__x86_64__)
#define record_after(r) __extension__({ crew__join *r_; \
        __asm__("lea %1, %0" : "=r"(r_) : "m"(*(r))); r_; })
#else
#define record_after(r) (r)
#endif

static int join_other(crew_pool *p, crew__worker *self, crew_fn fa, void *a, crew_fn fb, void *b);

/* join_worker's offer landed on an empty deque: join_run's wake-up check, then fa. Out of line,
 * and fa called here as well, so that join_worker keeps no value across a call. */
static __attribute__((noinline)) void join_notify_run(const crew__join *j, crew_fn fa, void *a) {
    crew__wake_work(j->p, 1, 0); /* a sleeping worker may take the offer */
    fa(a);
}

#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (the checked library the tests link, debug.h): called by join_worker after its
 * looks at the deque and before its offer, so that a test can hold that window open. */
void (*crew__test_join_offer)(void);
#endif

/* The fast path: a worker of p with an own place (STEAL, not a forked child: the join
 * interface of the work-stealing strategy, steal_join.h), the arguments checked, and its deque
 * not full (by top_seen) before the offer; else the general path, join_run. Nothing is kept in
 * a register across fa (the own place and the offer's are in the record, on the stack), so the
 * call saves and restores none, and every other case is out of line.
 *
 * The wake-up check (join_run's: a seq_cst fence and a load of the sleepers' count) only when
 * no older task lay below the offer as it landed: the offer's store of bottom and a read of top
 * after it are seq_cst (crew__steal_offer_at), in place of the fence. With an older task still
 * there at that read, a worker that counted itself a sleeper before the offer landed saw that
 * task in its last look (Dekker's pattern, ec.h), unless a thief took it after the offer landed
 * (the read came first in the one order), and that thief's next look, after its fence, finds
 * this offer. So the offer is left to a thread that is awake, at worst until it has run the
 * older task; and an offer needs no wake-up to be run (its caller takes it back or, if a thief
 * took it, waits for that one): a late taker costs parallelism, never a hang. A read of top
 * before the push would not do: a thief could take the last older task, find nothing more and
 * go to sleep between that read and the push, and every join inside fa (above this offer)
 * would skip its check too. */
static __attribute__((noinline)) int join_worker(crew_pool *p, crew_fn fa, void *a, crew_fn fb,
                                                 void *b, crew__steal_local *own) {
    crew__steal_place at;
    /* Full by top_seen: join_run's offer grows the array. */
    if (__builtin_expect(!crew__steal_offer_place(own, &at), 0))
        return join_other(p, crew__steal_worker_of(own), fa, a, fb, b);
#if defined(CREW_ASSERT) && CREW_ASSERT
    if (crew__test_join_offer)
        crew__test_join_offer();
#endif
    crew__join j = {.p = p, .fn = fb, .arg = b, .own = own, .end = at.mark + 1};
    if (__builtin_expect(crew__steal_offer_at(own, &at, crew__join_half, &j), 0))
        join_notify_run(&j, fa, a); /* nothing older lay below the offer: the check */
    else
        fa(a);
    /* From here everything is read back from the record (fa may have written it, for all the
     * compiler knows: the offer published its address), so no value is kept in a register
     * across fa: no register to save and restore on each call. */
    own = j.own;
    crew__join *jp = record_after(&j);
    /* Take the half back, paused or not: it is the caller's own work (crew.h). The fast case:
     * the offer is the newest task (bottom is end) and its record is not over. Then the place
     * end - 1 holds this offer: only the owner writes places, and it writes that place again
     * only after a take of the task there set bottom below end; a take of the offer by this
     * thread inside fa ran it or handed it back (its taker must, join.h) before fa returned, so
     * over is set; a thief's take leaves bottom at end or above, and its claim on top makes ours
     * fail. (Relaxed: a false that is stale only sends the caller to the claim, which a thief
     * won, and then to the wait, which reads over with acquire.) */
    if (__builtin_expect(!crew__load_relaxed(&jp->over), 1)) {
        crew__assert(crew__steal_offer_holds(own, jp->end - 1, jp)); /* its place holds it */
        int got = crew__steal_claim_offer(own, jp->end - 1);
        if (__builtin_expect(got > 0, 1)) {
            jp->fn(jp->arg);
            return CREW_OK;
        }
        if (got == 0) {
            join_wait(jp->p, crew__steal_worker_of(own), jp, jp->end - 1);
            return CREW_OK;
        }
    }
    return join_back_slow(own, jp->end - 1, jp);
}

/* A thread outside the pool. Unless it already runs a task of p, its halves run in a frame of
 * p with no group, as if in a task of p (crew.h): crew_destroy, crew_shutdown and crew_wait_all
 * from a half answer CREW_EDEADLK, since the call still reads the pool after fa returns, and a
 * half answers calls alike on every thread. (A worker runs crew_join only inside a task, or in
 * on_start or on_stop, already refused.) The frame's depth is the one below: no task. */
static __attribute__((noinline)) int join_outside(crew_pool *p, crew_fn fa, void *a, crew_fn fb,
                                                  void *b) {
    if (crew__in_task_of(p))
        return join_run(p, NULL, fa, a, fb, b);
    crew__frame f = {.pool = p, .up = crew__tls_frame, .group = CREW_HANDLE_NONE, .mark = 0,
                     .depth = crew__tls_frame ? crew__tls_frame->depth : 0};
    crew__tls_frame = &f;
    int rc = join_run(p, NULL, fa, a, fb, b);
    crew__tls_frame = f.up;
    return rc;
}

/* An argument is NULL: the error. Out of line. */
static __attribute__((noinline, cold)) int join_invalid(crew_pool *p, crew_fn fa) {
    return crew__fail(CREW_EINVAL, "crew_join: %s is NULL",
                      !p ? "the pool" : !fa ? "the first function" : "the second function");
}

/* Every call but join_worker's: an argument NULL, a thread outside p, no deque of its own. */
static __attribute__((noinline)) int join_other(crew_pool *p, crew__worker *self, crew_fn fa,
                                                void *a, crew_fn fb, void *b) {
    if (!self) {
        if (!p || !fa || !fb)
            return join_invalid(p, fa);
        return join_outside(p, fa, a, fb, b);
    }
    if (!fa || !fb)
        return join_invalid(p, fa);
    return join_run(p, self, fa, a, fb, b);
}

int crew_join(crew_pool *p, crew_fn fa, void *a, crew_fn fb, void *b) {
    /* A worker's record names its pool, never NULL: found, it proves p is not NULL either, so
     * only a thread outside p checks p. Three tests, a branch each (not flags combined). */
    crew__worker *self = crew__self(p);
    if (__builtin_expect(!self || !fa || !fb, 0))
        return join_other(p, self, fa, a, fb, b);
    crew__steal_local *own = crew__sched_join_own(p, self);
    if (__builtin_expect(!own, 0))
        return join_other(p, self, fa, a, fb, b);
    return join_worker(p, fa, a, fb, b, own); /* a tail call: the arguments where they are */
}

/* ---------------------------------------------------------------------------------------------
 * crew_enqueue_tasks_wait's fast path (crew__join_tasks, join.h): tasks waited for by the caller,
 * which owns their frame, so no handle escapes and no group is needed. The caller counts them in
 * pending (as enqueue does: then the state). A few (at most CREW__JOIN_TASKS_MAX) go flat
 * (run_few): t[1..n) offered as joins offer a half (each in a crew__join on its stack, counted),
 * t[0] run at once, then the offers taken back newest first and run, or waited for where another
 * thread took them (crew__join_wait: it helps meanwhile). More are split in halves
 * (run_tasks): the upper half offered as one join, a span, the lower half run the same way,
 * then the span taken back and run the same way, or waited for; a thread that takes a span runs
 * it the same way (span_half), so thieves take half of what is left, as from a range split
 * recursively (Cilk's cilk_for; oneTBB's parallel_for), with one record per level on the
 * stack and no allocation. What another thread took ends as a task of the pool there (a span:
 * its one unit at its end, the rest of what it ran by the taker, span_half); what came back to
 * the caller (a thread that took it and had to give it up: a pause, a resize, a cancelling
 * shutdown) was counted finished by that thread (one unit), and the caller runs it. Under a
 * cancelling shutdown no thread starts any more of them: each task still held is handed to
 * on_drop, and the call answers CREW_ECANCELED, as for a task the shutdown dropped from a queue.
 * ------------------------------------------------------------------------------------------- */

/* Task t, which a cancelling shutdown keeps from running, reported as dropped: on_drop in a
 * frame of its own (as drop.c's crew__on_drop gives it), and the pool's loss for crew_wait_all.
 * Out of line: rare. */
static __attribute__((noinline, cold)) void tasks_dropped(crew_pool *p, crew__worker *self,
                                                          const crew_task *t) {
    crew__store_relaxed(&p->shutdown_dropped, true); /* relaxed: see struct crew_pool */
    if (!p->hooks.on_drop)
        return;
    crew__frame f = {.pool = p, .up = crew__tls_frame, .group = CREW_HANDLE_NONE,
                     .depth = (crew__tls_frame ? crew__tls_frame->depth : 0) + 1,
                     .mark = crew__sched_mark(p, self)};
    crew__tls_frame = &f;
    p->hooks.on_drop(t->fn, t->arg, p->hooks.arg);
    crew__tls_frame = f.up;
}

/* Run task t on the calling thread, or report it if a cancelling shutdown has begun. Returns 1
 * if it was dropped, else 0. Relaxed: a cancelling shutdown sets the flag before it sweeps the
 * queues (see struct crew_pool); a task that starts as the flag is set started before the
 * shutdown. */
static inline int run_own(crew_pool *p, crew__worker *self, const crew_task *t) {
    if (__builtin_expect(crew__cancelling(p), 0)) {
        tasks_dropped(p, self, t);
        return 1;
    }
    t->fn(t->arg);
    return 0;
}

/* Offer t (record *j, its mark), which did not come back at once: wait for it, then run it
 * if it came back. Returns 1 if the caller dropped it, else 0. Out of line: the slow case. */
static __attribute__((noinline)) int tasks_wait_one(crew_pool *p, crew__worker *self,
                                                    const crew_task *t, crew__join *j,
                                                    int64_t mark) {
    /* In a forked child (t[0] forked), the thread that may have taken it is not there: the
     * caller runs it, as join_wait does. Else wait, helping: over comes once it ran or came
     * back. Acquire: the task's effects, and back, before what the caller does next. */
    if (!crew__forked(p))
        crew__join_wait(p, self, &j->over, mark);
    if (crew__load_acquire(&j->over) && !j->back)
        return 0; /* another thread ran it */
    return run_own(p, self, t);
}

/* What a run of some of the call's tasks on one thread did: the tasks whose units of pending
 * that thread ends (run or dropped there; not those another thread took), and how many were
 * dropped (by a cancelling shutdown) wherever they were. */
typedef struct tasks_done {
    size_t mine;
    size_t dropped;
} tasks_done;

/* The flat way for n tasks (1 <= n <= CREW__JOIN_TASKS_MAX) on this thread (self, own: as
 * crew__sched_join_own gave them), see above; unwoken: offers this thread made before (spans
 * of run_tasks) that no wake-up check has covered yet; outer: in the frame crew__join_tasks
 * made, outside any task. */
static inline __attribute__((always_inline)) void run_few(crew_pool *p, crew__worker *self,
                                                          crew__steal_local *own,
                                                          const crew_task *t, size_t n,
                                                          size_t unwoken, bool outer,
                                                          tasks_done *d) {
    crew__join j[CREW__JOIN_TASKS_MAX];
    int64_t mark[CREW__JOIN_TASKS_MAX];
    size_t k = 1; /* offered: t[1..k) */
    for (; k < n; k++) {
        /* Counted: pending holds it already (a thread that takes it adds nothing). The record
         * is no other thread's before the offer's release publishes it. */
        j[k] = (crew__join){.p = p, .fn = t[k].fn, .arg = t[k].arg, .over = false,
                            .back = false, .counted = true};
        if (crew__sched_offer(p, self, own, crew__join_half, &j[k], &mark[k]) != CREW_OK)
            break; /* no memory to queue it: it and the rest run here */
    }
    /* A sleeping worker may take them: woken for now, or, for an outside caller's flat round,
     * only once the round proves long (wake.h: the deferred wake-up; the caller takes back
     * whatever nobody took). */
    crew__defer defer = {0, true};
    if (k > 1 && outer && unwoken == 0)
        defer = crew__wake_offered(p, k - 1);
    else if (k - 1 + unwoken > 0)
        crew__wake_work(p, k - 1 + unwoken, 0);
    size_t dropped = (size_t)run_own(p, self, &t[0]);
    size_t mine = 1; /* run (or dropped) here, still counted in pending by this call */
    for (size_t i = k; i < n; i++, mine++)
        dropped += (size_t)run_own(p, self, &t[i]);
    for (size_t i = k - 1; i >= 1; i--) {
        crew__wake_if_long(p, &defer, i - 1); /* the offers below the one taken back next */
        /* Newest first: each is the newest above its own mark once those above it are done. */
        int back = own ? crew__sched_take_back(p, self, own, mark[i], crew__join_half, &j[i])
                   : crew__forked(p)
                       ? 0 /* the slot's lock may be held in a child: tasks_wait_one runs it */
                       : crew__sched_take_back(p, self, NULL, mark[i], crew__join_half, &j[i]);
        if (__builtin_expect(back > 0, 1)) {
            dropped += (size_t)run_own(p, self, &t[i]);
            mine++;
        } else {
            dropped += (size_t)tasks_wait_one(p, self, &t[i], &j[i], mark[i]);
        }
    }
    d->mine += mine;
    d->dropped += dropped;
}

/* The upper part of a split, offered as one join (its j.fn is span_half, its j.arg itself). */
typedef struct tasks_span {
    crew__join j;
    const crew_task *t; /* the caller's tasks [t, t + n): read under the call only */
    size_t n;
    size_t dropped; /* by the thread that took it: written before j.over (release) */
} tasks_span;

static void run_tasks(crew_pool *p, crew__worker *self, crew__steal_local *own,
                      const crew_task *t, size_t n, size_t unwoken, tasks_done *d);

/* The function of an offered span, run by the thread that took it (through crew__join_half,
 * which counts nothing: the span is counted), in that thread's frame: the span's tasks split
 * and run as the caller would. crew__run (or the helping waiter) ends the span's one unit of
 * pending after this; the others of what ran here end here. */
static void span_half(void *arg) {
    tasks_span *s = arg;
    crew_pool *p = s->j.p;
    crew__worker *self = crew__self(p);
    tasks_done d = {0, 0};
    run_tasks(p, self, crew__sched_join_own(p, self), s->t, s->n, 0, &d);
    s->dropped = d.dropped; /* plain: before crew__join_half's release store of over */
    if (d.mine > 1 && __builtin_expect(!crew__forked(p), 1))
        crew__tasks_finished(p, 0, d.mine - 1, CREW__RAN);
}

/* A span that did not come back at once: wait for it (helping), then, if it came back (or, in
 * a forked child, whoever took it is not there), run it here. Out of line: the slow case. */
static __attribute__((noinline)) void span_wait(crew_pool *p, crew__worker *self,
                                                crew__steal_local *own, tasks_span *s,
                                                int64_t mark, tasks_done *d) {
    if (!crew__forked(p))
        crew__join_wait(p, self, &s->j.over, mark);
    /* Acquire: the span's effects, and back and dropped, before what the caller does next. */
    bool over = crew__load_acquire(&s->j.over);
    if (over && !s->j.back) {
        d->dropped += s->dropped; /* another thread ran it and ended its units */
        return;
    }
    size_t before = d->mine;
    run_tasks(p, self, own, s->t, s->n, 0, d);
    if (over && d->mine > before)
        d->mine--; /* came back: the thread that gave it up ended its one unit */
}

/* Tasks a cancelling shutdown keeps from starting, each reported (run_own), none offered: a
 * span that came back to this thread, or that it took, after the shutdown's sweep. Also, in a
 * forked child, the tasks left (each run here by run_own: no offer, no wake-up, whose locks a
 * parent's thread may hold). Out of line: rare. */
static __attribute__((noinline, cold)) void drop_all(crew_pool *p, crew__worker *self,
                                                     const crew_task *t, size_t n,
                                                     tasks_done *d) {
    for (size_t i = 0; i < n; i++)
        d->dropped += (size_t)run_own(p, self, &t[i]);
    d->mine += n;
}

/* n tasks (n >= 1) on this thread: flat if few, else split (see above). */
static void run_tasks(crew_pool *p, crew__worker *self, crew__steal_local *own,
                      const crew_task *t, size_t n, size_t unwoken, tasks_done *d) {
    for (;;) {
        /* Relaxed: as run_own's look. Once the shutdown's sweep of the queues has passed,
         * nothing more is offered, or a thread that drains the pool could run it. A forked
         * child (a task forked) offers nothing either: crew__forked. */
        if (__builtin_expect(crew__cancelling(p) || crew__forked(p), 0)) {
            drop_all(p, self, t, n, d);
            return;
        }
        if (n <= CREW__JOIN_TASKS_MAX)
            break;
        size_t low = n - n / 2; /* t[0..low) here, t[low..n) offered */
        tasks_span s = {.j = {.p = p, .fn = span_half, .over = false, .back = false,
                              .counted = true},
                        .t = t + low, .n = n - low, .dropped = 0};
        s.j.arg = &s;
        int64_t mark;
        if (crew__sched_offer(p, self, own, crew__join_half, &s.j, &mark) != CREW_OK) {
            run_few(p, self, own, t, 1, unwoken, false, d); /* no memory: one at a time here */
            t++, n--, unwoken = 0;
            continue;
        }
        run_tasks(p, self, own, t, low, unwoken + 1, d);
        int back = own ? crew__sched_take_back(p, self, own, mark, crew__join_half, &s.j)
                   : crew__forked(p) ? 0 /* as in run_few */
                                     : crew__sched_take_back(p, self, NULL, mark,
                                                             crew__join_half, &s.j);
        if (__builtin_expect(back <= 0, 0)) {
            span_wait(p, self, own, &s, mark, d);
            return;
        }
        t = s.t, n = s.n, unwoken = 0; /* taken back: on with it here, as a loop */
    }
    run_few(p, self, own, t, n, unwoken, false, d); /* split: woken for at once */
}

/* The fast path on worker self (NULL: a thread outside the pool, in a frame of p; outer: in
 * the frame crew__join_tasks made, outside any task). */
static int join_tasks_run(crew_pool *p, crew__worker *self, crew_task *t, size_t n, bool outer) {
    crew__pending_add(p, self, n);
    /* Seq_cst after the count: see enqueue (submit.c). A closed pool: the long way answers. */
    if (__builtin_expect(crew__load_seq_cst(&p->state) != CREW__OPEN, 0)) {
        crew__tasks_finished(p, 0, n, CREW__RAN);
        return CREW__JOIN_DECLINED;
    }
    tasks_done d = {0, 0};
    crew__steal_local *own = crew__sched_join_own(p, self);
    if (__builtin_expect(n <= CREW__JOIN_TASKS_MAX, 1))
        run_few(p, self, own, t, n, 0, outer, &d);
    else
        run_tasks(p, self, own, t, n, 0, &d);
    if (__builtin_expect(!crew__forked(p), 1)) /* a child touches nothing of the parent's */
        crew__tasks_finished(p, 0, d.mine, CREW__RAN);
    return d.dropped ? CREW_ECANCELED : CREW_OK;
}

int crew__join_tasks(crew_pool *p, crew_task *t, size_t n) {
    if (__builtin_expect(!p || !t || n == 0 || n > UINT32_MAX, 0))
        return CREW__JOIN_DECLINED;
    for (size_t i = 0; i < n; i++)
        if (!t[i].fn || t[i].priority != 0)
            return CREW__JOIN_DECLINED;
    /* Relaxed: timing and paused, see struct crew_pool (a pause that the caller knows began is
     * seen: it happened-before). Seq_cst: the state, an early look as in enqueue. A strategy
     * without an offer would put each task in a group of its own: the long way is cheaper. */
    if (__builtin_expect(crew__load_relaxed(&p->timing) != 0 || p->bounded.capacity != 0, 0) ||
        __builtin_expect(crew__paused(p), 0) ||
        __builtin_expect(crew__load_seq_cst(&p->state) != CREW__OPEN, 0) ||
        __builtin_expect(!crew__sched_has_offer(p), 0))
        return CREW__JOIN_DECLINED;
    crew__worker *self = crew__self(p);
    if (self || crew__in_task_of(p))
        return join_tasks_run(p, self, t, n, false);
    /* A thread outside the pool: the tasks it runs run in a frame of p, as in a task (see
     * join_outside). */
    crew__frame f = {.pool = p, .up = crew__tls_frame, .group = CREW_HANDLE_NONE, .mark = 0,
                     .depth = crew__tls_frame ? crew__tls_frame->depth : 0};
    crew__tls_frame = &f;
    int rc = join_tasks_run(p, NULL, t, n, true);
    crew__tls_frame = f.up;
    return rc;
}

/* crew_enqueue_tasks_wait: a few tasks through crew__join_tasks (above), else a group. */
int crew_enqueue_tasks_wait(crew_pool *p, crew_task *t, size_t n) {
    int rc = crew__join_tasks(p, t, n); /* a few tasks: no group (above) */
    if (rc == CREW_OK)
        return rc;
    if (rc == CREW_ECANCELED)
        return crew__fail(rc, "crew_enqueue_tasks_wait: a cancelling shutdown (crew_shutdown "
                              "with CREW_CANCEL) dropped tasks; each went to on_drop");
    crew_handle h = CREW_HANDLE_NONE;
    rc = crew_enqueue_tasks(p, t, n, &h);
    if (rc == CREW_OK)
        rc = crew_wait(p, h);
    return rc == CREW_OK ? rc : crew__fail_as(rc, "crew_enqueue_tasks_wait");
}
