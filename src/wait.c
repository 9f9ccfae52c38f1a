/*
 * wait.c -- waiting with the caller's help (Jendersie et al., §III-C, §III-D).
 *
 * A waiting thread runs queued tasks itself: first the awaited group's own tasks, newest first
 * (the tasks it just spawned, so nested spawn-and-wait recurses like a depth-first call tree),
 * then any queued task, highest priority and oldest first, but only while fewer than
 * CREW__HELP_DEPTH_MAX task frames are on its stack: a waiter that took arbitrary work without a
 * bound would nest unrelated tasks inside each other until the stack overflowed.
 *
 * Why a waiter that sleeps cannot deadlock, for spawn-and-wait programs (a task waits only for
 * groups it created): it sleeps only when its group has no queued task, so every unfinished task
 * of the group has started on some thread. Such a task is either on top of its thread's stack
 * (running, or waiting and itself helping), or below a task that its thread took while waiting,
 * which started later. Following "waits for" from top frame to top frame visits tasks that
 * started strictly later each time, so the chain ends at a task that makes progress.
 *
 * A timed wait (crew_wait_timed, crew_wait_all_timed, with a time-out other than 0 and no
 * limit) is not a helping wait: it runs no task, and only sleeps on the eventcount until its
 * group ends, the pool is quiet, or its end time (timed_sleep below). A helper cannot stop a task
 * it took, and no task's length is known before it ends, so a timed wait that helped would be as
 * late as the longest task it took; one that only sleeps is as late as the system's wake-up.
 */
#include "atomic.h"
#include "blocking.h"
#include "clock.h"
#include "dispatch.h"
#include "join.h"
#include "pending.h"
#include "pool.h"
#include "run_plain.h"
#include "sched_calls.h"
#include "idle.h"
#include "trace.h"
#include "wait.h"
#include "wake.h"
#include "worker.h"

/* May this thread (self: its worker record, crew__self) take a task that is not of the group it
 * waits for? Only while fewer than CREW__HELP_DEPTH_MAX task frames are below the ones it runs
 * (shallow: the frame chain does not change during a wait, so wait_loop reads it once). */
static inline bool may_help_generally(const crew__worker *self, bool shallow) {
    /* A worker that resize marked starts no new general task. Relaxed: its own state. */
    return shallow && !(self && crew__load_relaxed(&self->state) == CREW__W_MARKED);
}

/* This thread's deque mark for p: that of its innermost task of p (see crew__sched_take_group). */
static int64_t mark_of(const crew_pool *p) {
    for (const crew__frame *f = crew__tls_frame; f; f = f->up)
        if (f->pool == p)
            return f->mark;
    return 0;
}

/* A waiter's dispatch policy (dispatch.h): it waits for a group (sl set), for a flag another
 * thread sets (flag set: crew__help_until) or for a quiet pool; it takes its group's tasks
 * first, then any task if it may help generally. A waiter that is not a worker counts the tasks
 * of no group it ran in finished, and returns them to pending in one decrement when a look
 * finds nothing and when it stops (flush_finished): pending still counts them meanwhile, so
 * nothing looks quiet early, and since a look that finds nothing comes before any sleep, none is
 * held while the waiter sleeps or after it returns. */
typedef struct waiter_ctx {
    crew_pool *p;
    crew__worker *self;      /* this thread's worker record for p (crew__self), or NULL */
    size_t finished;         /* tasks run and not yet taken off pending (self NULL) */
    crew_handle group;       /* CREW_HANDLE_NONE: a wait for a flag or a quiet pool */
    crew__slot *sl;          /* the group's slot, or NULL */
    const atomic_bool *flag; /* crew__help_until's flag, or NULL */
    crew__ec *flag_ec;       /* its sleepers (woken by whoever sets the flag) */
    int64_t mark;            /* this thread's deque mark (crew__sched_take_group) */
    bool own;                /* a join: its own tasks above mark first (crew__join_wait) */
    bool shallow;            /* few enough frames below to help generally (wait_loop) */
    uint32_t whole;          /* the array runners it runs to their end (crew__run_helping):
                                all for a quiet pool, its group's, none for a flag (wait_loop) */
    /* The frame of the tasks it runs (crew__run_helping's top): pool, up and depth set once
     * by wait_loop, since this thread's frame chain is the same before each task. */
    crew__frame frame;
    bool general;            /* the last look could take any task */
    /* A task of no group held by value (priority 0), and any other task held by value, as
     * quiet_policy's takes from the thread's own slot copy them (take_in). */
    crew_task value, other;
    crew__deque *own_ext; /* quiet_policy's: crew__sched_own_ext, looked up once */
    bool checked;            /* the EDEADLK check is made */
    uint64_t slept;          /* its first sleep, for crew_diagnose */
    int status;              /* the group's answer (crew__slot_status), CREW_EDEADLK or
                                CREW_EFORKED */
} waiter_ctx;

/* What a sleeping waiter leaves for crew_diagnose and the trace, kept alike by both kinds of
 * wait (a helping waiter's last look and a timed wait's, below): the record that lists the
 * thread as blocked (listed once a look has found nothing) and, under a trace, when it fell
 * asleep (0 when untraced). */
typedef struct sleep_note {
    bool listed;
    crew__blocked rec;
    uint64_t slept_at;
} sleep_note;

/* A look that found nothing (crew__ec_wait, lock held): list the thread for crew_diagnose (if
 * list, once) and, under a trace, note when it fell asleep. Returns false: the caller sleeps. */
static bool note_sleep(crew_pool *p, sleep_note *n, bool list) {
    if (list && !n->listed) {
        crew__blocked_add(p, &n->rec);
        n->listed = true;
    }
    if (__builtin_expect(crew__tracing(p), 0) && n->slept_at == 0) /* a trace records it */
        n->slept_at = crew__now_ns();
    return false;
}

/* After the sleep (lock held): take the thread off the list, and record the sleep's span for
 * *group under a trace (read only then). */
static void note_woken(crew_pool *p, sleep_note *n, const crew_handle *group) {
    if (n->listed)
        crew__blocked_remove(p, &n->rec);
    if (__builtin_expect(n->slept_at != 0, 0))
        crew__trace_span(p, CREW__TR_SLEEP, *group, n->slept_at);
}

/* The waiter's last look before it sleeps (crew__ec_wait, lock held): is its wait over, or is
 * there a task it may take? The first look that finds neither lists the thread for crew_diagnose
 * (crew_wait, crew_wait_all and crew_join, each a kind of its own, diagnose.h; crew__help_until's
 * callers, crew_lane_destroy, are not listed) and, under a trace, notes when it fell asleep. */
typedef struct last_look_ctx {
    waiter_ctx *c;
    crew__ec *ec; /* what it waits for: its group's waiters, the flag's, or pool->quiet */
    crew_task *t;
    crew__take_ctx tc; /* a waiter's takes claim no batch (it is in a task, or not a worker) */
    sleep_note note;   /* listed unless a flag's waiter that is not a join */
} last_look_ctx;

static bool last_look(void *ctx) {
    last_look_ctx *l = ctx;
    waiter_ctx *c = l->c;
    crew_pool *p = c->p;
    crew__slot *sl = c->sl;
    bool done = sl       ? crew__group_status(&p->groups, c->group) != 1
                : c->flag ? crew__load_acquire(c->flag) /* acquire: see crew__help_until */
                          : crew__load_seq_cst(&p->pending) == 0; /* seq_cst: see crew_pool */
    if (done)
        return true;
    if (sl || c->own)
        l->t = crew__sched_take_group(p, c->group.slot, c->mark, &l->tc);
    if (!l->t && c->general)
        l->t = crew__sched_take(p, &l->tc);
    if (!l->t) /* a blocking thread: blocking tasks are pushed under this lock */
        l->t = crew__blocking_help(p, c->group.slot, c->general);
    if (l->t || l->tc.retry)
        return true;
    bool list = !c->flag || c->own;
    if (list && !l->note.listed) /* the record, built when first needed */
        l->note.rec = (crew__blocked){.since = c->slept, .group = c->group,
                                      .kind = sl       ? CREW__BLOCKED_WAIT
                                              : c->own ? CREW__BLOCKED_JOIN
                                                       : CREW__BLOCKED_WAIT_ALL};
    return note_sleep(p, &l->note, list);
}

/* The waiter's sleep (the eventcount, ec.h), on this thread's own condition variable: on what it
 * waits for (its group's waiters, who are also woken when tasks of the group are queued; the
 * flag's eventcount; pool->quiet for a wait for a quiet pool), on pool->work as a worker would
 * if it may take any task, and on pool->waiting (state changes); one last look, then sleep.
 * While it sleeps in crew_wait or crew_wait_all, the thread is listed for crew_diagnose, as
 * blocked since c->slept (set at its first sleep in this call). Returns a task found on the last
 * look, or NULL after waking up. */
static crew_task *sleep_waiting(waiter_ctx *c) {
    crew_pool *p = c->p;
    last_look_ctx l = {.c = c, .ec = c->sl ? &c->sl->waiters : c->flag ? c->flag_ec : &p->quiet};
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    /* A flag's waiter names its flag (a joiner: its record's over, which join.c's wake-ups
     * match; other flags' notifiers wake all). */
    crew__ec_on(&me, l.ec, (void *)(uintptr_t)c->flag);
    if (c->general)
        crew__ec_on(&me, &p->work, NULL); /* no data: a helper (wake.c's wake_match) */
    crew__ec_on(&me, &p->waiting, NULL);
    pthread_mutex_lock(&p->lock);
    (void)crew__ec_wait(&me, &p->lock, last_look, &l, NULL);
    if (l.note.listed)
        c->slept = l.note.rec.since;
    note_woken(p, &l.note, &c->group);
    pthread_mutex_unlock(&p->lock);
    if (l.tc.pushed_back) /* the last look put a task back: wake someone for it */
        crew__wake_pushed_back(p, &l.tc.pushed_back);
    return l.t;
}

static inline void flush_finished(waiter_ctx *c) {
    if (c->finished != 0) {
        crew__pending_sub(c->p, c->finished);
        c->finished = 0;
    }
}

/* The policy's steps, for any waiter (outside false), or, with outside a constant true, for the
 * commonest wait on its own (quiet_policy): crew_wait_all from a thread that is no worker of
 * the pool nor a blocking thread, few enough frames below to help generally (so general stays
 * true), waiting for a quiet pool (no group, no flag, no join), for which the tests of the
 * other kinds' fields fold away and a task's mark is 0 (no worker record). */
static inline __attribute__((always_inline)) bool done_in(waiter_ctx *c, bool outside) {
    if (!outside && c->sl) {
        if ((c->status = crew__slot_status(c->sl, c->group.gen)) != 1)
            return true;
    } else if (!outside && c->flag) {
        if (crew__load_acquire(c->flag)) /* acquire: see crew__help_until */
            return true;
    } else if (crew__load_seq_cst(&c->p->pending) == c->finished) {
        /* Quiet once only the tasks this waiter ran are left: then it returns them, and
         * whoever else waits for a quiet pool is woken by that decrement. Seq_cst: see struct
         * crew_pool. */
        flush_finished(c);
        c->status = CREW_OK;
        return true;
    }
    return false;
}

static inline __attribute__((always_inline)) crew_task *take_in(waiter_ctx *c,
                                                                crew__take_ctx *tc,
                                                                bool outside) {
    if (outside) {
        /* Its own submissions first, inline (c->value: fn and arg per task, the rest set once
         * by wait_loop); else as any take, by the strategy. */
        crew_fn fn;
        void *arg;
        uint64_t aux;
        if (crew__sched_take_own_ext(c->p, c->own_ext, &fn, &arg, &aux, tc)) {
            if (__builtin_expect(fn == NULL || aux != 0, 0))
                return crew__deque_task(fn, arg, aux, &c->other);
            c->value.fn = fn;
            c->value.arg = arg;
            return &c->value;
        }
        crew_task *t = crew__sched_take_as(c->p, NULL, tc);
        if (!t)
            flush_finished(c);
        return t;
    }
    c->general = may_help_generally(c->self, c->shallow);
    /* The group is open (not done), so the slot still belongs to it. A join (own): slot 0,
     * this worker's own tasks above its mark. */
    crew_task *t = c->sl || c->own
                       ? crew__sched_take_group_as(c->p, c->self, c->group.slot, c->mark, tc)
                       : NULL;
    if (!t && c->general)
        t = crew__sched_take_as(c->p, c->self, tc);
    if (!t && crew__tls_bthread == c->p) /* a blocking thread runs blocking tasks too */
        t = crew__blocking_help(c->p, c->group.slot, c->general);
    if (!t)
        flush_finished(c);
    return t;
}

static inline __attribute__((always_inline)) bool run_in(waiter_ctx *c, crew_task *t,
                                                         crew__take_ctx *tc, bool outside) {
    if (crew__held_back(c->p, t, &tc->pushed_back))
        return false;
    /* Wake a sleeper for the tasks the take put back before running this one (no lock). */
    if (__builtin_expect(tc->pushed_back != 0, 0))
        crew__wake_pushed_back(c->p, &tc->pushed_back);
    crew__worker *self = outside ? NULL : c->self;
    if (outside && t == &c->value) /* plain by its making (take_in) */
        crew__run_plain_now(c->p, NULL, t, &c->finished, &c->frame, true);
    else if (!crew__run_plain_helping(c->p, self, t, &c->finished, &c->frame)) /* inline */
        crew__run_helping(c->p, self, t, &c->finished, &c->frame, c->whole);
    return false;
}

#define WAITER_STEP static inline __attribute__((always_inline))
WAITER_STEP bool waiter_done(void *ctx) { return done_in(ctx, false); }
WAITER_STEP crew_task *waiter_take(void *ctx, crew__take_ctx *tc) {
    return take_in(ctx, tc, false);
}
WAITER_STEP bool waiter_run(void *ctx, crew_task *t, crew__take_ctx *tc) {
    return run_in(ctx, t, tc, false);
}
WAITER_STEP bool quiet_done(void *ctx) { return done_in(ctx, true); }
WAITER_STEP crew_task *quiet_take(void *ctx, crew__take_ctx *tc) { return take_in(ctx, tc, true); }
WAITER_STEP bool quiet_run(void *ctx, crew_task *t, crew__take_ctx *tc) {
    return run_in(ctx, t, tc, true);
}

static crew_task *waiter_sleep(void *ctx, crew__take_ctx *tc, bool *stop) {
    waiter_ctx *c = ctx;
    /* Before the first sleep (not on every wait: it walks the frames), the check that this
     * thread is not inside a task of the group: it could never finish. */
    /* In a forked child (a task this thread ran while it helped called fork()): the takes
     * find nothing (the pool is marked paused), and sleeping would take a lock the parent's
     * threads may hold. */
    if (crew__forked(c->p)) {
        c->status = CREW_EFORKED;
        *stop = true;
        return NULL;
    }
    if (c->sl && !c->checked) {
        if (crew__in_group(c->p, c->group)) {
            c->status = CREW_EDEADLK;
            *stop = true;
            return NULL;
        }
        c->checked = true;
    }
    if (tc->pushed_back)
        crew__wake_pushed_back(c->p, &tc->pushed_back);
    flush_finished(c); /* done by the look before; a sleep must hold none */
    return sleep_waiting(c);
}

/* CREW_SPIN_AUTO's polls for a waiter (idle.h). */
static unsigned waiter_polls(void *ctx) { return crew__idle_polls(((waiter_ctx *)ctx)->p); }

static const crew__policy waiter_policy = {
    .done = waiter_done,
    .take = waiter_take,
    .sleep = waiter_sleep,
    .run = waiter_run,
    .polls = waiter_polls,
    .retry_at_once = true};
static const crew__policy quiet_policy = {
    .done = quiet_done,
    .take = quiet_take,
    .sleep = waiter_sleep,
    .run = quiet_run,
    .polls = waiter_polls,
    .retry_at_once = true};

/* A wait under a trace (trace.h): the same loop, its span recorded. Out of line, so that an
 * untraced wait pays only the test of the trace bit. */
static __attribute__((noinline, cold)) void dispatch_traced(crew_pool *p, waiter_ctx *c,
                                                           crew__take_ctx *tc) {
    uint64_t began = crew__now_ns();
    crew__dispatch(&waiter_policy, c, tc, p->spin);
    crew__trace_span(p, CREW__TR_WAIT, c->group, began);
}

/* The waiter's loop, traced or not, then the tasks it ran given back to pending, and a
 * sleeper woken for tasks its last look put back and did not run or sleep on. */
static inline void wait_loop(crew_pool *p, waiter_ctx *c) {
    /* A runner of an array the wait covers whole (a wait for a quiet pool, or for the runner's
     * own group) runs to its end: the wait cannot end before the array does. */
    c->whole = c->sl ? c->group.slot : c->flag ? CREW__RUNNERS_TURNS : CREW__RUNNERS_WHOLE;
    crew__frame *up = crew__tls_frame;
    c->frame = (crew__frame){.pool = p, .up = up, .depth = up ? up->depth + 1 : 1};
    c->shallow = c->frame.depth <= CREW__HELP_DEPTH_MAX; /* fewer than the bound below it */
    /* A waiter moves no batch into a deque (it is inside a task, or not a worker) and claims
     * one task at a time (docs/design.md says why it holds no claimed batch). */
    crew__take_ctx tc = {.may_batch = false};
    c->general = true; /* quiet_policy's, which never sets it (the sleep reads it) */
    if (__builtin_expect(crew__tracing(p), 0))
        dispatch_traced(p, c, &tc);
    else if (!c->sl && !c->flag && !c->self && c->shallow && crew__tls_bthread != p) {
        c->value = (crew_task){.crew_flags_ = CREW__TASK_COPY}; /* priority 0, group slot 0 */
        c->own_ext = crew__sched_own_ext(p);
        crew__dispatch(&quiet_policy, c, &tc, p->spin); /* see done_in */
    } else
        crew__dispatch(&waiter_policy, c, &tc, p->spin);
    flush_finished(c);
    if (tc.pushed_back)
        crew__wake_pushed_back(p, &tc.pushed_back);
}

/* A timed wait's look (crew__ec_wait, lock held): has its group ended (sl set) or is the pool
 * quiet? The first look that finds neither lists the thread for crew_diagnose, as a helping
 * waiter's does, and under a trace notes when it fell asleep (note_sleep). */
typedef struct timed_look {
    crew_pool *p;
    crew__slot *sl; /* the group's slot, or NULL: a wait for a quiet pool */
    uint32_t gen;
    sleep_note note;
} timed_look;

static bool timed_over(void *ctx) {
    timed_look *l = ctx;
    if (l->sl ? crew__slot_status(l->sl, l->gen) != 1
              : crew__load_seq_cst(&l->p->pending) == 0) /* seq_cst: see struct crew_pool */
        return true;
    return note_sleep(l->p, &l->note, true);
}

/* A timed wait, which runs no task (see the top of this file): sleep until group (sl set) has
 * ended or the pool is quiet (sl NULL), or until until_ns on crew__now_ns's clock. Returns
 * CREW_OK (it is over) or CREW_ETIMEDOUT. It sleeps on the group's waiters, woken by the group's
 * end (pending.c) but passed over by the wake-ups for its queued tasks (wake.c: its node's data
 * is CREW__WAIT_SLEEPS), or on pool->quiet; on nothing that announces work, so no wake-up meant
 * for a thread that would run a task is spent on it. */
static int timed_sleep(crew_pool *p, crew__slot *sl, crew_handle group, uint64_t until_ns) {
    uint64_t began = crew__tracing(p) ? crew__now_ns() : 0;
    struct timespec until = crew__timespec_of(until_ns);
    timed_look l = {.p = p, .sl = sl, .gen = group.gen,
                    .note.rec = {.group = group, /* since: stamped by crew__blocked_add */
                                 .kind = sl ? CREW__BLOCKED_WAIT : CREW__BLOCKED_WAIT_ALL}};
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, sl ? &sl->waiters : &p->quiet, CREW__WAIT_SLEEPS);
    pthread_mutex_lock(&p->lock);
    enum crew__ec_end end;
    while ((end = crew__ec_wait(&me, &p->lock, timed_over, &l, &until)) == CREW__EC_WOKEN)
        ; /* a wake-up: look again */
    note_woken(p, &l.note, &group);
    pthread_mutex_unlock(&p->lock);
    if (__builtin_expect(began != 0, 0))
        crew__trace_span(p, CREW__TR_WAIT, group, began);
    return end == CREW__EC_FOUND ? CREW_OK : CREW_ETIMEDOUT;
}

/* The detail of a group wait's answer st for group, if it is a failure; returns st. who: the
 * public call (crew_wait or crew_wait_timed). */
static __attribute__((cold, noinline)) int wait_failed(const char *who, crew_handle group,
                                                       int st) {
    /* The detail names the group between before and after. */
    const char *before = "", *after;
    switch (st) {
    case CREW_ECANCELED:
        after = " lost tasks: cancelled (crew_cancel), or dropped by a cancelling shutdown or a "
                "full queue";
        break;
    case CREW_EEXPIRED:
        after = " lost tasks that no thread could start by their start-by time "
                "(crew_submit_deadline)";
        break;
    case CREW_EDEADLK:
        before = "called from inside a task of ";
        after = " itself: the group cannot finish before this call returns";
        break;
    case CREW_ETIMEDOUT:
        after = " had not finished when the time-out passed; its tasks go on (wait again, or "
                "crew_cancel it)";
        break;
    case CREW_EFORKED:
        return crew__fail(st, "%s: " CREW__FORKED_DETAIL, who);
    default:
        return crew__fail(st, "%s: the group {%u, %u}: %s", who, group.slot, group.gen,
                          crew_strerror(st));
    }
    return crew__fail(st, "%s: %sthe group {%u, %u}%s", who, before, group.slot, group.gen, after);
}

/* A group wait's answer st for group (given: the handle the caller passed): a loss returned
 * is a loss reported (crew__group_report), after which the group's slot may go. */
static int group_answer(crew_pool *p, const char *who, crew_handle given, crew_handle group,
                        int st) {
    return st == CREW_OK ? st : wait_failed(who, given, crew__group_report(&p->groups, group, st));
}

/* A timed wait's end on crew__now_ns's clock, timeout_ns from now: 0 for no limit
 * (UINT64_MAX, or a time-out so long that the end is past the clock's range). */
static uint64_t end_of(uint64_t timeout_ns) {
    if (timeout_ns == UINT64_MAX)
        return 0;
    uint64_t now = crew__now_ns();
    return timeout_ns > UINT64_MAX - now ? 0 : now + timeout_ns;
}

static inline __attribute__((always_inline)) int wait_held(crew_pool *p, crew_handle group,
                                                           crew_handle given, crew__slot *sl,
                                                           bool timed, uint64_t timeout_ns,
                                                           const char *who);

/* crew_wait and crew_wait_timed: wait for group, helping, until it finishes or, if timed,
 * sleeping without helping until it finishes or the time-out passes (timeout_ns: 0 a poll,
 * UINT64_MAX no limit, which helps as crew_wait does). Inlined into both, so that crew_wait's
 * untimed path folds the time away. */
static inline __attribute__((always_inline)) int wait_group(crew_pool *p, crew_handle group,
                                                            bool timed, uint64_t timeout_ns,
                                                            const char *who) {
    if (!p || !crew__handle_valid(&p->groups, group))
        return crew__fail_handle(CREW_EINVAL, who, p, group);
    if (crew__forked(p)) /* before the slot's answer: nothing of the parent's pool is asked */
        return wait_failed(who, group, CREW_EFORKED);
    int st;
    crew_handle given = group;          /* as handed out, for the details */
    group = crew__handle_local(group); /* from here on, the slot's index */
    crew__slot *sl = crew__slot_at(&p->groups, group.slot);
    /* Held from before the first look at the state to after the answer and its report: a
     * group kept for a reported loss is not let go while a wait on its slot is in progress
     * (crew__slot.holds), so this wait answers the loss if the group had one. A helping wait
     * first runs the tasks of the group it queued itself (wait_own.c), which takes the hold
     * (then the look below is the first made under it), or, if those tasks ended the group,
     * answers from their end, holding nothing: a look made while this thread held one of the
     * group's tasks found it open, and the answer is the end's own. */
    if (timed && timeout_ns != UINT64_MAX) /* no limit: crew_wait's way, first steps too */
        crew__slot_hold(sl);
    else if ((st = crew__wait_first(p, crew__self(p), group, sl, mark_of(p))) != 1)
        return group_answer(p, who, given, group, st);
    int rc = wait_held(p, group, given, sl, timed, timeout_ns, who);
    crew__slot_unhold(sl);
    return rc;
}

/* wait_group with the slot held. */
static inline __attribute__((always_inline)) int wait_held(crew_pool *p, crew_handle group,
                                                           crew_handle given, crew__slot *sl,
                                                           bool timed, uint64_t timeout_ns,
                                                           const char *who) {
    int st = crew__slot_status(sl, group.gen);
    if (st != 1) { /* finished, or a generation never issued (forged) */
        if (__builtin_expect(!crew__gen_issued(sl, group.gen), 0))
            return crew__fail_handle(CREW_EINVAL, who, p, given);
        return st == CREW_OK ? st
                             : wait_failed(who, given, crew__group_report(&p->groups, group, st));
    }
    uint64_t until_ns = 0;
    if (timed && (timeout_ns == 0 || (until_ns = end_of(timeout_ns)) != 0)) {
        /* Inside a task of the group, the group stays open for as long as the caller waits. */
        if (crew__in_group(p, group))
            return wait_failed(who, given, CREW_EDEADLK);
        /* A poll neither runs a task nor sleeps; a timed wait only sleeps. Then the group's
         * answer, if it has ended (also just as the time-out passed). */
        if (timeout_ns != 0) {
            crew__debug_yield();
            (void)timed_sleep(p, sl, group, until_ns);
        }
        st = crew__slot_status(sl, group.gen);
        return group_answer(p, who, given, group, st == 1 ? CREW_ETIMEDOUT : st);
    }
    waiter_ctx c = {.p = p, .self = crew__self(p), .group = group, .sl = sl, .mark = mark_of(p),
                    .status = 1};
    crew__debug_yield();
    wait_loop(p, &c);
    return group_answer(p, who, given, group, c.status);
}

int crew_wait(crew_pool *p, crew_handle group) {
    return wait_group(p, group, false, 0, "crew_wait");
}

int crew_wait_timed(crew_pool *p, crew_handle group, uint64_t timeout_ns) {
    return wait_group(p, group, true, timeout_ns, "crew_wait_timed");
}

/* Run queued tasks until no accepted task is unfinished. Returns CREW_OK (quiet) or
 * CREW_EFORKED (in a child that a task this thread ran forked: see waiter_sleep). */
static int help_until_quiet(crew_pool *p) {
    waiter_ctx c = {.p = p, .self = crew__self(p), .group = CREW_HANDLE_NONE, .status = 1};
    wait_loop(p, &c);
    return c.status;
}

/* Run queued tasks until no accepted task is unfinished (crew_wait_all, crew_shutdown). */
void crew__help_until_quiet(crew_pool *p) { (void)help_until_quiet(p); }

void crew__help_until(crew_pool *p, const atomic_bool *flag, crew__ec *ec) {
    waiter_ctx c = {.p = p, .self = crew__self(p), .group = CREW_HANDLE_NONE, .flag = flag,
                    .flag_ec = ec, .status = 1};
    wait_loop(p, &c);
}

void crew__join_wait(crew_pool *p, crew__worker *self, const atomic_bool *over, int64_t mark) {
    waiter_ctx c = {.p = p, .self = self, .group = CREW_HANDLE_NONE, .flag = over,
                    .flag_ec = &p->joined, .mark = mark, .own = true, .status = 1};
    wait_loop(p, &c);
}

/* crew_wait_all and crew_wait_all_timed (see wait_group for timed and timeout_ns: a timed
 * wait only sleeps, an untimed one helps). */
static int wait_all(crew_pool *p, bool timed, uint64_t timeout_ns, const char *who) {
    int rc = crew__pool_check(p, who);
    if (rc != CREW_OK)
        return rc;
    if (crew__in_task_of(p))
        return crew__fail(CREW_EDEADLK,
                          "%s: called from a task of this pool, which cannot be quiet "
                          "while that task runs; wait for a group instead (crew_wait)",
                          who);
    uint64_t until_ns = timed && timeout_ns != 0 ? end_of(timeout_ns) : 0;
    if (!timed || (timeout_ns != 0 && until_ns == 0)) /* no limit: help */
        rc = help_until_quiet(p);
    else if (timeout_ns == 0) /* a poll; seq_cst: see struct crew_pool */
        rc = crew__load_seq_cst(&p->pending) == 0 ? CREW_OK : CREW_ETIMEDOUT;
    else /* runs no task: sleeps until quiet or the time-out */
        rc = timed_sleep(p, NULL, CREW_HANDLE_NONE, until_ns);
    if (rc == CREW_ETIMEDOUT)
        return crew__fail(rc,
                          "%s: the pool still had unfinished tasks when the time-out passed; "
                          "they go on (wait again)",
                          who);
    /* Relaxed: see struct crew_pool. */
    if (crew__load_relaxed(&p->shutdown_dropped))
        return crew__fail(CREW_ECANCELED,
                          "%s: the pool has dropped tasks without running them: a "
                          "cancelling shutdown (crew_shutdown with CREW_CANCEL) dropped them",
                          who);
    return CREW_OK;
}

int crew_wait_all(crew_pool *p) { return wait_all(p, false, 0, "crew_wait_all"); }

int crew_wait_all_timed(crew_pool *p, uint64_t timeout_ns) {
    return wait_all(p, true, timeout_ns, "crew_wait_all_timed");
}
