/*
 * timer.c -- time: delayed tasks and periodic timers, and the pool's timer thread. The heap
 * they wait in is heap.c's.
 *
 * DESIGN. What is not due yet waits in one 4-ary min-heap per pool, ordered by due time (and
 * submission order among equal times), each entry's position kept in its task, so insertion
 * and crew_timer_stop's removal are O(log n), and a million pending entries cost 24 bytes each
 * beside their task. crew_cancel of a group with delayed tasks takes them out in one pass over
 * the heap, O(n); of a group without any (a count per group slot says) it costs nothing here.
 * A hierarchical timing wheel (Varghese & Lauck) inserts in O(1) but needs a tick: a thread
 * that wakes every tick, or cascades, even with nothing due for an hour; the heap's top is the
 * exact time to sleep until, so an idle pool with a million pending timers sleeps until the
 * first one (docs/design.md, "Timers", has the figures).
 *
 * One thread per pool, made at the first timer or delayed task, is the timekeeper: it sleeps
 * on the eventcount `changed` (ec.h) with the heap's top as its CLOCK_MONOTONIC `until`, less
 * a few microseconds that it polls ("the timer thread's sleep" below); an insertion that
 * becomes the new top notifies it; when entries are due it pops them and hands each to the
 * scheduler through the ordinary push (submit.c's crew__fire), so they run on the workers like
 * any task: the timer thread runs no code of the user's, but on_drop for what it could not
 * queue (no memory). Why not a sleeping worker as timekeeper: a pool whose workers all stay
 * busy (a backlog of tasks) has none asleep, and timers would wait for the backlog, unless
 * every worker read the clock between tasks, which the worker loop's hot path cannot afford
 * (bench/instr.sh). The thread costs its stack and one extra wake-up per firing batch.
 *
 * A delayed task is an ordinary task node (nodes.c), counted in its group and in pending from
 * its submission (submit.c's enqueue), that waits here instead of in a queue. A periodic timer
 * is a struct crew_timer whose run (a task of no group, fn crew__timer_run) is pushed when due,
 * counted in pending from then until it ends, and put back in the heap by the run itself after
 * the user's function returns: so two runs of one timer never overlap, and a pause holds the
 * one queued run (it runs once at the resume, then the timer goes on from there).
 */
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "atomic.h"
#include "clock.h"
#include "debug.h"
#include "error.h"
#include "idle.h"
#include "kind.h"
#include "list.h"
#include "lock.h"
#include "pool.h"
#include "submit.h"
#include "timer.h"
#include "worker.h"

/* A timer's state (timers.lock). */
enum { T_ARMED = 0, T_QUEUED = 1, T_RUNNING = 2, T_IDLE = 3 };

struct crew_timer {
    crew_task run;        /* its runs, pushed as a task of no group (heap position in spare) */
    crew_pool *pool;      /* fixed */
    crew_fn fn;           /* fixed */
    void *arg;            /* fixed */
    uint64_t period;      /* fixed: 0 runs once */
    uint64_t origin;      /* fixed: the first run's due time, the fixed rate's grid origin */
    uint64_t started;     /* lock: RUNNING: when the run started */
    uint64_t when;        /* lock: ARMED: its due time */
    unsigned flags;       /* fixed: CREW_TIMER_FIXED_RATE or CREW_TIMER_FIXED_DELAY */
    unsigned char state;  /* lock: T_* (one byte: with the flags below, one word) */
    bool stopped;         /* lock: crew_timer_stop was called */
    bool free_at_end;     /* lock: stopped from inside its own run: the run frees it */
    pthread_t runner;     /* lock: RUNNING: the thread running it */
    crew__ec done;        /* a crew_timer_stop from outside waits here for the run's end */
    struct crew_timer *next, *prev; /* lock: timers.live */
};
/* crew.h's figure for a timer's memory: this, malloc's 8-byte header, and a heap entry. */
_Static_assert(sizeof(struct crew_timer) <= 184, "a timer is larger than crew.h says");

/* The heap (heap.h) under the lock. Room is reserved before an insertion (a timer's rearm
 * needs none: every live timer has its room), and given back after removals, keeping room for
 * every delayed task and live timer. */
static void heap_remove_at(crew__timers *tm, size_t i) {
    crew__theap_remove_at(&tm->heap, i);
    crew__theap_shrink(&tm->heap, tm->delayed + tm->timers);
}
/* Take out every entry for which out(ctx, entry) holds: O(n) for crew_cancel and the
 * shutdown, however many go. */
static void heap_filter(crew__timers *tm, bool (*out)(void *ctx, const crew__tent *e),
                        void *ctx) {
    crew__theap_filter(&tm->heap, out, ctx);
    crew__theap_shrink(&tm->heap, tm->delayed + tm->timers);
}

int crew__timers_init(crew_pool *p) {
    crew__timers *tm = crew__alloc_locked(sizeof *tm, offsetof(crew__timers, lock));
    if (!tm)
        return CREW_ENOMEM;
    crew__ec_init(&tm->changed);
    crew__lone_init(&tm->thread);
    p->timers = tm;
    return CREW_OK;
}

void crew__timers_free(crew_pool *p) {
    crew__timers *tm = p->timers;
    crew__assert(tm->delayed == 0); /* each counted in pending, which the shutdown waited for */
    for (struct crew_timer *t = tm->live, *next; t; t = next) {
        next = t->next;
        free(t);
    }
    crew__theap_free(&tm->heap);
    free(tm->per_slot);
    pthread_mutex_destroy(&tm->lock);
    free(tm);
    p->timers = NULL;
}

static inline uint64_t add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The timer thread's last look before it sleeps (ec.h; lock held): exit, or an entry earlier
 * than the time it would sleep until. */
typedef struct tk_look {
    crew__timers *tm;
    uint64_t until; /* the top's due time when it decided to sleep, UINT64_MAX: none */
} tk_look;
static bool tk_last_look(void *ctx) {
    tk_look *c = ctx;
    return c->tm->exit || (c->tm->heap.n != 0 && c->tm->heap.e[0].when < c->until);
}

/* Hand the top entry, due, to the scheduler (lock held). A timer's run is not queued once a
 * shutdown began (crew__timers_closing): the timer goes idle. */
static void fire_top(crew_pool *p, crew__timers *tm) {
    crew_task *t = tm->heap.e[0].task;
    bool timer = crew__kind_of(t) == &crew__timer_kind; /* else a delayed task */
    uint32_t slot = tm->heap.e[0].slot;
    heap_remove_at(tm, 0);
    if (slot != 0)
        tm->per_slot[slot]--;
    if (timer && tm->closing) {
        ((struct crew_timer *)t->arg)->state = T_IDLE;
        return;
    }
    tm->fired++;
    if (timer) {
        struct crew_timer *tmr = t->arg;
        tmr->state = T_QUEUED;
        t->crew_flags_ = 0;
        t->crew_private_.slot = 0;
    } else {
        tm->delayed--;
    }
    if (crew__fire(p, t, timer) != CREW_OK) {
        /* No memory to queue it: it is dropped and reported, as a full queue's drop would be
         * (the timer thread calls on_drop, without the lock held). */
        pthread_mutex_unlock(&tm->lock);
        crew__task_dropped(p, t, false);
        pthread_mutex_lock(&tm->lock);
    }
}

#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (the checked library the tests link, debug.h): called by the timer thread as it
 * returns, so that a test can hold its exit open. */
void (*crew__test_timer_exit)(void);
#endif

/* ---- the timer thread's sleep ----
 *
 * A delayed task's lateness (docs/benchmarks.md has the figures): the timer thread overslept
 * its due time by about 85 us at the median, 50 of them Linux's timer slack (a futex wait
 * honours it), the rest the system's wake-up of a sleeping thread. So it sets its own slack to
 * 1 ns, and wakes `early` before the due time, the streaming median of its wake-ups' lateness
 * (TK_STEP a sample, at most TK_EARLY_MAX), to poll the rest: only while an entry is due within
 * `early`, and only when the pool's idle threads may poll (may_poll); else it sleeps to the due
 * time. Not done: waking a worker ahead to poll for the task (saves the hand-off's 5-10 us at
 * most), running short tasks on the timer thread (it would serialise them). */
enum { TK_EARLY_MAX = 50000, TK_STEP = 2000 }; /* ns */

/* This thread's sleeps end at their time (Linux's timer slack: 1 ns is the least, 0 means the
 * default of 50 us); threads of the user's are never changed. */
static void precise_sleeps(void) {
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* fails only on a bad argument */
#endif
}

/* The frugal streaming median of the wake-ups' lateness (Ma, Muthukrishnan & Sandler): one
 * step towards each sample, kept in [0, TK_EARLY_MAX]. */
static uint64_t learn_early(uint64_t early, uint64_t late) {
    if (late > early)
        return early + TK_STEP < TK_EARLY_MAX ? early + TK_STEP : TK_EARLY_MAX;
    return early > TK_STEP ? early - TK_STEP : 0;
}

/* May the timer thread poll now? As the pool's idle threads may (crew_config.spin; under
 * CREW_SPIN_AUTO not while its awake workers outnumber its CPUs: a poll would take CPU time
 * from a task). */
static bool may_poll(crew_pool *p) {
    return p->spin == CREW_SPIN_AUTO ? crew__idle_polls(p) != 0 : p->spin != 0;
}

static void *timer_main(void *arg) {
    crew_pool *p = arg;
    crew__timers *tm = p->timers;
    crew__name_thread(p, "timer");
    precise_sleeps();
    uint64_t early = 0; /* the median lateness of its wake-ups (above) */
    pthread_mutex_lock(&tm->lock);
    while (!tm->exit) {
        uint64_t now = crew__now_ns();
        while (tm->heap.n != 0 && tm->heap.e[0].when <= now)
            fire_top(p, tm);
        tk_look c = {tm, tm->heap.n ? tm->heap.e[0].when : UINT64_MAX};
        uint64_t ahead = c.until != UINT64_MAX && may_poll(p) ? early : 0;
        if (c.until - now <= ahead) { /* due within early: poll it in, lock released */
            pthread_mutex_unlock(&tm->lock);
            crew__poll_pause();
            pthread_mutex_lock(&tm->lock);
            continue;
        }
        uint64_t wake = c.until - ahead; /* UINT64_MAX: no entry, no time-out */
        struct timespec until = crew__timespec_of(wake);
        if (crew__ec_wait_for(&tm->changed, &tm->lock, tk_last_look, &c,
                              wake != UINT64_MAX ? &until : NULL) == CREW__EC_TIMEDOUT) {
            uint64_t woke = crew__now_ns();
            early = learn_early(early, woke > wake ? woke - wake : 0);
        }
    }
    pthread_mutex_unlock(&tm->lock);
#if defined(CREW_ASSERT) && CREW_ASSERT
    if (crew__test_timer_exit)
        crew__test_timer_exit();
#endif
    return NULL;
}

/* Make sure the timer thread runs (lock held): CREW_OK or CREW_EAGAIN. */
static int ensure_thread(crew_pool *p, crew__timers *tm) {
    if (__builtin_expect(tm->thread.started, 1))
        return CREW_OK;
    if (crew__spawn(&tm->thread.thread, NULL, timer_main, p) != 0)
        return CREW_EAGAIN;
    tm->thread.started = true;
    return CREW_OK;
}

/* Insert t due at when, waking the timer thread if it is the new top (lock held, room
 * reserved). */
static void insert_locked(crew__timers *tm, crew_task *t, uint64_t when, uint32_t slot) {
    if (crew__theap_insert(&tm->heap, t, when, slot))
        crew__ec_notify_locked(&tm->changed, NULL, NULL); /* events made under the lock: ec.h */
}

/* Room to count the delayed tasks of slot (lock held): CREW_OK or CREW_ENOMEM. The counts
 * grow by doubling up to the highest slot with a delayed task so far (4 bytes a slot). */
static int per_slot_reserve(crew__timers *tm, uint32_t slot) {
    if (slot < tm->per_slot_n)
        return CREW_OK;
    size_t n = tm->per_slot_n ? tm->per_slot_n : 64;
    while (n <= slot)
        n *= 2;
    uint32_t *c = realloc(tm->per_slot, n * sizeof *c);
    if (!c)
        return CREW_ENOMEM;
    memset(c + tm->per_slot_n, 0, (n - tm->per_slot_n) * sizeof *c);
    tm->per_slot = c;
    tm->per_slot_n = n;
    return CREW_OK;
}

int crew__timers_add(crew_pool *p, crew_task *t, uint64_t when) {
    crew__timers *tm = p->timers;
    uint32_t slot = t->crew_private_.slot;
    pthread_mutex_lock(&tm->lock);
    int rc = tm->closing == 2 ? CREW_ESHUTDOWN : ensure_thread(p, tm);
    if (rc == CREW_OK)
        rc = crew__theap_reserve(&tm->heap, tm->heap.n + 1 + tm->timers);
    if (rc == CREW_OK && slot != 0)
        rc = per_slot_reserve(tm, slot);
    if (rc == CREW_OK) {
        tm->delayed++;
        if (slot != 0)
            tm->per_slot[slot]++; /* a group's tasks: at most UINT32_MAX (crew__group_add) */
        insert_locked(tm, t, when, slot);
    }
    pthread_mutex_unlock(&tm->lock);
    return rc;
}

/* heap_filter's choice for crew_cancel: the delayed tasks of one slot, listed. */
typedef struct filter_ctx {
    crew__timers *tm;
    uint32_t slot;     /* crew_cancel: the group's slot; 0: the shutdown */
    bool delayed_too;  /* the shutdown: also the delayed tasks (CREW_CANCEL) */
    crew_task *list;   /* the delayed tasks taken out, linked by gnext */
    size_t n;
} filter_ctx;
static bool take_out(void *ctx, const crew__tent *e) {
    filter_ctx *c = ctx;
    crew_task *t = e->task;
    bool timer = crew__kind_of(t) == &crew__timer_kind; /* else a delayed task */
    if (c->slot != 0 ? e->slot != c->slot : !timer && !c->delayed_too)
        return false;
    if (timer) {
        ((struct crew_timer *)t->arg)->state = T_IDLE; /* runs no more */
    } else {
        c->tm->delayed--;
        if (e->slot != 0)
            c->tm->per_slot[e->slot]--;
        t->crew_private_.gnext = c->list;
        c->list = t;
        c->n++;
    }
    return true;
}

/* Drop the tasks heap_filter took out (on_drop, without the lock). */
static void drop_list(crew_pool *p, crew_task *list, bool by_shutdown) {
    while (list) {
        crew_task *t = list;
        list = t->crew_private_.gnext;
        crew__task_dropped(p, t, by_shutdown);
    }
}

size_t crew__timers_cancel_group(crew_pool *p, uint32_t slot, uint32_t gen) {
    crew__timers *tm = p->timers;
    filter_ctx c = {tm, slot, false, NULL, 0};
    pthread_mutex_lock(&tm->lock);
    /* A delayed task holds its group open, so while one of slot waits here the slot's
     * generation is its group's; another generation means the cancelled group has ended and
     * those waiting belong to the slot's next group. Relaxed: the group opened before the
     * task was inserted under this lock. */
    if (slot < tm->per_slot_n && tm->per_slot[slot] != 0 &&
        crew__gen_of(crew__load_relaxed(&crew__slot_at(&p->groups, slot)->state)) == gen)
        heap_filter(tm, take_out, &c);
    pthread_mutex_unlock(&tm->lock);
    drop_list(p, c.list, false);
    return c.n;
}

void crew__timers_closing(crew_pool *p, int how) {
    crew__timers *tm = p->timers;
    pthread_mutex_lock(&tm->lock);
    int closing = how == CREW_CANCEL ? 2 : 1;
    if (tm->closing < closing)
        tm->closing = closing;
    pthread_mutex_unlock(&tm->lock);
}

void crew__timers_close(crew_pool *p, int how) {
    crew__timers *tm = p->timers;
    filter_ctx c = {tm, 0, how == CREW_CANCEL, NULL, 0};
    pthread_mutex_lock(&tm->lock);
    crew__assert(tm->closing >= (how == CREW_CANCEL ? 2 : 1)); /* crew__timers_closing */
    heap_filter(tm, take_out, &c);
    pthread_mutex_unlock(&tm->lock);
    drop_list(p, c.list, true);
}

void crew__timers_stop(crew_pool *p) {
    crew__timers *tm = p->timers; /* a concurrent shutdown joins it, or waits for the join */
    crew__lone_stop(&tm->thread, &tm->lock, &tm->exit, &tm->changed);
}

/* ---- periodic timers ---- */

static void unlink_timer(crew__timers *tm, struct crew_timer *t) {
    CREW__LIST_UNLINK(tm->live, t);
    tm->timers--;
}

/* After a run (lock held): put t back in the heap for its next run, or leave it idle (a
 * one-shot timer, or a closing pool). started, now: when the run started and ended. Fixed
 * rate: the next run is at the first point of the grid (origin + k * period) after the run's
 * start, or at once if the run itself took longer than that: the periods missed are skipped,
 * and a run that started late (a busy or paused pool) is not followed by catch-up runs. */
static void rearm(crew__timers *tm, struct crew_timer *t, uint64_t started, uint64_t now) {
    if (tm->closing || t->period == 0) {
        t->state = T_IDLE;
        return;
    }
    uint64_t when;
    if (t->flags == CREW_TIMER_FIXED_DELAY) {
        when = add_sat(now, t->period);
    } else {
        uint64_t k = started > t->origin ? (started - t->origin) / t->period + 1 : 1;
        uint64_t next = k > (UINT64_MAX - t->origin) / t->period ? UINT64_MAX
                                                                  : t->origin + k * t->period;
        when = next > now ? next : now;
    }
    t->when = when;
    t->state = T_ARMED;
    insert_locked(tm, &t->run, when, 0); /* room: reserved for every live timer */
}

/* The end of a run, or of the on_drop of a dropped run (lock held, t RUNNING on this thread;
 * the lock is released): free t if it was stopped from inside, wake the crew_timer_stop that
 * waits if it was stopped from outside, else put it back in the heap. started, now: as for
 * rearm. */
static void run_end(crew__timers *tm, struct crew_timer *t, uint64_t started, uint64_t now) {
    if (t->stopped) {
        if (t->free_at_end) { /* stopped from inside this run */
            unlink_timer(tm, t);
            pthread_mutex_unlock(&tm->lock);
            free(t);
            return;
        }
        t->state = T_IDLE; /* a crew_timer_stop waits for this: it frees t */
        crew__ec_notify_locked(&t->done, NULL, NULL);
        pthread_mutex_unlock(&tm->lock);
        return;
    }
    rearm(tm, t, started, now);
    pthread_mutex_unlock(&tm->lock);
}

/* A run of timer t (or its drop) starts on this thread: false if t was stopped while queued
 * (freed here). Else t runs on this thread until run_end: a crew_timer_stop from another thread
 * waits for it (so t's arg stays in use), one from inside returns at once. */
static bool run_start(crew__timers *tm, struct crew_timer *t) {
    pthread_mutex_lock(&tm->lock);
    if (t->stopped) {
        unlink_timer(tm, t);
        pthread_mutex_unlock(&tm->lock);
        free(t);
        return false;
    }
    t->state = T_RUNNING;
    t->runner = pthread_self();
    t->started = crew__now_ns();
    pthread_mutex_unlock(&tm->lock);
    return true;
}

void crew__timer_run(void *arg) {
    struct crew_timer *t = arg;
    crew__timers *tm = t->pool->timers;
    if (!run_start(tm, t))
        return;
    t->fn(t->arg);

    pthread_mutex_lock(&tm->lock);
    run_end(tm, t, t->started, crew__now_ns());
}

/* The timer kind's drop (kind.h): a run of timer arg was dropped (a shutdown, a full queue, no
 * memory to queue it). on_drop gets the timer's fn and arg, as a run would, between run_start
 * and run_end (so a crew_timer_stop waits for on_drop); nothing if the timer was stopped. */
static void run_dropped(crew_pool *p, void *arg, uint32_t slot, bool by_shutdown) {
    crew__unused(by_shutdown);
    struct crew_timer *t = arg;
    crew__timers *tm = p->timers;
    if (!run_start(tm, t))
        return;
    crew__on_drop(p, slot, t->fn, t->arg); /* t runs here meanwhile: its arg stays in use */
    pthread_mutex_lock(&tm->lock);
    uint64_t now = crew__now_ns();
    run_end(tm, t, now, now); /* a full queue's drop: the next period still comes */
}

/* A timer's run is named by its timer's function (the timeline, crew_diagnose). */
static crew_fn run_fn(const crew_task *t) { return ((const struct crew_timer *)t->arg)->fn; }

const crew__kind crew__timer_kind = {
    .fn = crew__timer_run,
    .name = "timer run",
    .dropped = run_dropped,
    .fn_of = run_fn,
};

int crew_timer_start(crew_pool *p, uint64_t first_ns, uint64_t period_ns, unsigned flags,
                     crew_fn fn, void *arg, crew_timer **out) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_timer_start: the pool is NULL");
    if (!fn)
        return crew__fail(CREW_EINVAL, "crew_timer_start: fn is NULL; a timer needs a function");
    if (!out)
        return crew__fail(CREW_EINVAL, "crew_timer_start: out is NULL; pass the address of a "
                                       "crew_timer * to receive the timer");
    if (flags > CREW_TIMER_FIXED_DELAY)
        return crew__fail(CREW_EINVAL,
                          "crew_timer_start: flags is %#x; accepted: CREW_TIMER_FIXED_RATE (0) "
                          "or CREW_TIMER_FIXED_DELAY (1)",
                          flags);
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_timer_start: " CREW__FORKED_DETAIL);
    struct crew_timer *t = calloc(1, sizeof *t);
    if (!t)
        return crew__fail(CREW_ENOMEM, "crew_timer_start: out of memory for the timer");
    t->run.fn = crew__timer_run;
    t->run.arg = t;
    t->run.priority = 0;
    t->pool = p;
    t->fn = fn;
    t->arg = arg;
    t->period = period_ns;
    t->flags = flags;
    crew__ec_init(&t->done);
    crew__timers *tm = p->timers;
    pthread_mutex_lock(&tm->lock);
    int rc = CREW_OK;
    /* Seq_cst: as a submission's look at the state (submit.c); the lock orders it against
     * crew__timers_close, which comes after the state's change. */
    if (tm->closing || crew__load_seq_cst(&p->state) != CREW__OPEN)
        rc = CREW_ESHUTDOWN;
    if (rc == CREW_OK)
        rc = ensure_thread(p, tm);
    if (rc == CREW_OK)
        rc = crew__theap_reserve(&tm->heap, tm->heap.n + tm->timers + 1);
    if (rc == CREW_OK) {
        CREW__LIST_PUSH(tm->live, t); /* t is calloc'd: prev was NULL already */
        tm->timers++;
        t->origin = t->when = add_sat(crew__now_ns(), first_ns);
        t->state = T_ARMED;
        /* Before the first run can start (it takes this lock first): fn may read *out. */
        *out = t;
        insert_locked(tm, &t->run, t->when, 0);
    }
    pthread_mutex_unlock(&tm->lock);
    if (rc != CREW_OK) {
        free(t);
        if (rc == CREW_ESHUTDOWN)
            return crew__fail(rc, "crew_timer_start: the pool is shutting down or shut down");
        if (rc == CREW_EAGAIN)
            return crew__fail(rc, "crew_timer_start: the system refused to create the pool's "
                                  "timer thread");
        return crew__fail(rc, "crew_timer_start: out of memory for the timer heap");
    }
    return CREW_OK;
}

/* crew_timer_stop's wait for the run in progress (lock held). */
static bool run_over(void *ctx) { return ((struct crew_timer *)ctx)->state != T_RUNNING; }

int crew_timer_stop(crew_timer *t) {
    if (!t)
        return CREW_OK;
    crew_pool *p = t->pool;
    if (crew__forked(p)) /* nothing freed: the memory is the parent's copy */
        return crew__fail(CREW_EFORKED, "crew_timer_stop: " CREW__FORKED_DETAIL);
    crew__timers *tm = p->timers;
    pthread_mutex_lock(&tm->lock);
    if (t->stopped) {
        pthread_mutex_unlock(&tm->lock);
        return crew__fail(CREW_EINVAL, "crew_timer_stop: the timer is already being stopped");
    }
    t->stopped = true;
    switch (t->state) {
    case T_ARMED:
        heap_remove_at(tm, t->run.crew_private_.spare);
        break;
    case T_QUEUED: /* its run frees it when it comes to it, without calling fn */
        pthread_mutex_unlock(&tm->lock);
        return CREW_OK;
    case T_RUNNING:
        if (pthread_equal(t->runner, pthread_self())) { /* from inside its own run */
            t->free_at_end = true;
            pthread_mutex_unlock(&tm->lock);
            return CREW_OK;
        }
        crew__ec_wait_for(&t->done, &tm->lock, run_over, t, NULL);
        break;
    default:
        break;
    }
    unlink_timer(tm, t);
    pthread_mutex_unlock(&tm->lock);
    free(t);
    return CREW_OK;
}

/* ---- crew_diagnose ---- */

void crew__timers_view_get(crew_pool *p, crew__timers_view *v) {
    crew__timers *tm = p->timers;
    memset(v, 0, sizeof *v);
    pthread_mutex_lock(&tm->lock);
    v->delayed = tm->delayed;
    v->timers = tm->timers;
    v->armed = tm->heap.n - tm->delayed;
    v->fired = tm->fired;
    if (tm->heap.n) {
        v->next_when = tm->heap.e[0].when;
        v->next_fn = crew__kind_fn_of(tm->heap.e[0].task);
    }
    pthread_mutex_unlock(&tm->lock);
}

size_t crew__timers_list(crew_pool *p, crew__timer_info *out, size_t max) {
    static const char *const names[] = {"armed", "queued", "running", "idle"};
    crew__timers *tm = p->timers;
    pthread_mutex_lock(&tm->lock);
    size_t i = 0;
    for (struct crew_timer *t = tm->live; t && i < max; t = t->next, i++)
        out[i] = (crew__timer_info){t->fn, t->period, t->state == T_ARMED ? t->when : 0,
                                    names[t->state]};
    size_t n = tm->timers;
    pthread_mutex_unlock(&tm->lock);
    return n;
}
