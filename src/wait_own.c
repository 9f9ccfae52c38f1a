/*
 * wait_own.c -- crew_wait's first steps (crew__wait_first): the tasks of the awaited group that
 * the waiter queued itself run here, one after another, before wait.c's general loop (which
 * finishes the wait), and end in the group together. On a worker with a deque of its own (the
 * default strategy, sched_steal.c) they are the tasks on top of that deque; on a thread outside
 * the pool under it, the newest tasks of the thread's external slot, if of the group (taken
 * inline: steal_ext.h); on any other thread (a worker of another strategy) those the strategy's
 * group take finds.
 * A task that queues an array and waits for it (crew_enqueue_tasks, then crew_wait) so costs
 * about what crew_enqueue_tasks_wait does. These steps also decide when the wait takes its hold
 * on the group's slot (crew__slot.holds): only once it must, and never while the group may have
 * ended unseen; a waiter whose own tasks were the group's last learns the answer from their end
 * and holds nothing. Out of wait.c, whose general loop they precede, as a call of their own
 * (never inlined there: the rare case of a wait).
 */
#include "atomic.h"
#include "group.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "steal_join.h"
#include "trace.h"
#include "wait.h"
#include "wake.h"
#include "worker.h"

/* The wait's hold on sl (crew__slot_hold), taken once. */
static inline void hold_once(crew__slot *sl, bool *held) {
    if (!*held) {
        crew__slot_hold(sl);
        *held = true;
    }
}

/* A cancelled group's task, a flagged one or another group's (or generation's), that the loop
 * took: run the general way (out of line: rare), the wait's hold taken first. Returns whether
 * group (sl) is open still: once it ended, its slot may hold a later group, whose tasks (and
 * cancel) the loop must not take as its. */
static __attribute__((noinline)) bool own_other(crew_pool *p, crew__worker *self, crew_task *t,
                                                crew_handle group, crew__slot *sl, bool *held) {
    hold_once(sl, held);
    /* Counted as wait.c's loop counts what it runs: a thread outside the pool that ran an
     * array's runner to its end takes the array's other runners (worker.c's end_leftovers) and
     * counts them here; the count leaves pending at once. */
    size_t finished = 0;
    crew__run_helping(p, self, t, &finished, NULL, group.slot);
    if (finished)
        crew__pending_sub(p, finished);
    return crew__slot_status(sl, group.gen) == 1;
}

/* End ran tasks of group that ran here. If the wait holds no slot yet and they are the group's
 * last open tasks, they end it with one compare-and-swap (crew__tasks_finished_all) and the
 * group's answer comes from its end: returned, nothing held. Else the wait takes its hold, while
 * those tasks still keep the group open, then ends them: 1. */
static int own_end(crew_pool *p, crew_handle group, crew__slot *sl, size_t ran, bool *held) {
    uint64_t prev;
    if (!*held && crew__tasks_finished_all(p, group.slot, ran, &prev))
        return crew__status_of(prev);
    hold_once(sl, held);
    crew__tasks_finished(p, group.slot, ran, CREW__RAN);
    return 1;
}

#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (the checked library the tests link, debug.h): called by own_take on a thread that
 * took a task of the queues (not of a worker's own deque), holding no lock of the pool, with 0
 * before its look at the halt (the window in which a cancelling shutdown may begin) and with 1
 * once a cancelling shutdown or a pause held that task back (dropped or put back), before the
 * wait looks again; so that a test can hold either window open. */
void (*crew__test_own_take)(int held_back);
#define TEST_OWN_TAKE(held_back) (crew__test_own_take ? crew__test_own_take(held_back) : (void)0)
#else
#define TEST_OWN_TAKE(held_back) ((void)0)
#endif

/* The next task: the newest above mark on the worker's own deque (own), else, for a thread
 * outside the pool under STEAL (ext: crew__sched.ext), the newest of its own external slot if it
 * is of the group (inline, steal_ext.h: what the strategy's group take looks at first; a task of
 * the group in another queue is left to wait.c's loop), else the strategy's group take; a task a
 * pause or a cancelling shutdown holds back goes back (NULL). A cancelling shutdown drops it: a
 * loss of the group, perhaps its end, which this wait must answer, so the wait takes its hold
 * on sl first (while the task keeps the group open, if it is the group's): a loss is let go
 * only once no wait holds its slot (crew__slot.holds). Tasks a take put back are woken for at
 * once. */
static inline crew_task *own_take(crew_pool *p, crew__worker *self, crew__steal_local *own,
                                  struct crew__ext_slot *ext, crew_handle group, int64_t mark,
                                  crew_task *buf, crew__take_ctx *tc, crew__slot *sl,
                                  bool *held) {
    if (own)
        return crew__steal_take_above(own, mark, buf);
    crew_task *t = !ext ? crew__sched_take_group_as(p, self, group.slot, mark, tc)
                   : crew__paused(p)
                       ? NULL
                       : crew__ext_take_group(ext, group.slot, buf, &tc->retry, &tc->pushed_back);
    if (!t)
        return NULL;
    TEST_OWN_TAKE(0);
    /* Relaxed: see struct crew_pool.halt (crew__held_back's look). */
    if (__builtin_expect(crew__halted(p), 0)) {
        hold_once(sl, held);
        if (crew__hold_back(p, t, &tc->pushed_back)) {
            TEST_OWN_TAKE(1);
            return NULL;
        }
    }
    if (__builtin_expect(tc->pushed_back != 0, 0))
        crew__wake_pushed_back(p, &tc->pushed_back);
    return t;
}

/* The first steps, see the top of this file: the plain tasks of group (sl its slot) that this
 * thread queued, newest first, run here in one frame without the general loop's looks between
 * them, and end in it together once none is left, or before any other task runs here (the group
 * ends no later for it, as a task of the group runs on this thread the whole time, but for the
 * one look that finds no more). Stops on a pause, a resize's mark, a cancelling shutdown, a
 * trace, or the group's end (own_other).
 *
 * The hold (crew__slot.holds) comes before the wait's first look at the state, as in wait.c,
 * except on a worker's own deque (own) and a thread's own external slot (ext): there the first
 * look is made holding a plain task of the group's slot (the newest above mark; the newest of
 * the slot). A slot is reused only once its group has ended, which a task not yet ended keeps
 * from happening, so if the slot is at the group's generation and open that task is the
 * group's, and the group is open at the look; the hold then waits until the wait must look
 * again, still holding a task (own_end, own_other, or the general loop), or is never taken, if
 * this thread's tasks end the group (own_end). A first task that is not so goes back on top of
 * the deque or the slot, untouched, and the wait takes its hold and goes on as wait.c's (a
 * finished or forged handle: its answer). Once a task of the group has been found, a later one
 * of its slot is the group's too while this thread holds one (the group cannot end meanwhile).
 * Elsewhere (a queue other threads push to), the look is made after the hold, and again after
 * an end (own_other); a task of the slot that is not the group's goes the general way. */
static inline __attribute__((always_inline)) int
first_steps(crew_pool *p, crew__worker *self, crew__steal_local *own, struct crew__ext_slot *ext,
            crew_handle group, crew__slot *sl, int64_t mark) {
    bool held = false;
    if (!own && !ext) { /* the hold, then the first look */
        hold_once(sl, &held);
        if (crew__slot_status(sl, group.gen) != 1)
            return 1;
    }
    bool open = false; /* a look found the group open while this thread held one of its tasks */
    crew__frame *up = crew__tls_frame;
    crew__frame f = {.pool = p, .up = up, .group = group, .depth = up ? up->depth + 1 : 1};
    size_t ran = 0;
    crew_task buf, *t;
    crew__take_ctx tc = {.may_batch = false}; /* a waiter claims no batch (wait.c) */
    /* Relaxed: paused or cancelling (see struct crew_pool.halt); the worker's own state. */
    while (!crew__halted(p) &&
           ((!own && !self) || crew__load_relaxed(&self->state) == CREW__W_RUNNING) &&
           !crew__tracing(p) &&
           (t = own_take(p, self, own, ext, group, mark, &buf, &tc, sl, &held)) != NULL) {
        /* A plain task (by address, no flag, or by value, a copy): no node, timed or kind. */
        bool mine = (t->crew_flags_ & ~CREW__TASK_COPY) == 0 && t->crew_private_.slot == group.slot;
        if (__builtin_expect(!open, 0)) { /* the look: see above */
            if (!mine || crew__slot_status(sl, group.gen) != 1) {
                if (own) {
                    /* Its place is free: it goes back where it was, on the worker's deque. */
                    int rc = crew__deque_push1(&own->deque, t);
                    crew__assert(rc == CREW_OK);
                    (void)rc;
                    break; /* ran is 0 */
                }
                /* The first look on ext, holding nothing: it goes back on top of the slot (and
                 * is woken for: a worker may have looked meanwhile), unless out of memory. */
                if (ext && !held && crew__ext_put_back(ext, t) == CREW_OK) {
                    tc.pushed_back++;
                    break; /* ran is 0 */
                }
                mine = false; /* another group's (or generation's): the general way */
            } else {
                open = true;
            }
        }
        if (__builtin_expect(!mine || crew__slot_cancelled(sl, group.gen), 0)) {
            if (ran) { /* ended first: that task may wait for the group */
                hold_once(sl, &held); /* while they keep the group open */
                crew__tasks_finished(p, group.slot, ran, CREW__RAN);
            }
            ran = 0;
            if (!own_other(p, self, t, group, sl, &held))
                break; /* ran is 0 */
            /* On a worker's own deque, the group's slot still holds its tasks only (see above);
             * elsewhere another thread's may come: look again at the next. */
            open = open && own;
            continue;
        }
        crew_fn fn = t->fn; /* read before it starts: then t is its owner's again */
        void *arg = t->arg;
        f.mark = crew__sched_mark(p, self);
        crew__debug_yield();
        crew__tls_frame = &f;
        fn(arg);
        crew__tls_frame = up;
        crew__debug_yield();
        ran++;
    }
    if (tc.pushed_back)
        crew__wake_pushed_back(p, &tc.pushed_back);
    if (ran)
        return own_end(p, group, sl, ran, &held);
    hold_once(sl, &held);
    return 1;
}

int crew__wait_first(crew_pool *p, crew__worker *self, crew_handle group, crew__slot *sl,
                     int64_t mark) {
    crew__steal_local *own = crew__sched_join_own(p, self);
    struct crew__ext_slot *ext = self ? NULL : p->sched.ext; /* NULL: not STEAL, or forked */
    /* Three copies of the loop, each with its own take inline. */
    return own   ? first_steps(p, self, own, NULL, group, sl, mark)
           : ext ? first_steps(p, NULL, NULL, ext, group, sl, mark)
                 : first_steps(p, self, NULL, NULL, group, sl, mark);
}
