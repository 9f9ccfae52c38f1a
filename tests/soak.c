/*
 * soak.c -- a long run of everything at once, with every task accounted for.
 *
 * Cycles of: create a pool (each scheduler in turn, both locks, 1-4 workers, monitoring on,
 * sometimes a bounded queue with the caller-runs or drop-oldest policy), let several producer
 * threads submit for a while (single tasks and batches, random priorities, groups, nested
 * spawn-and-wait, CREW_TASK_BLOCKING tasks, waits, resizes, statistics reads, crew_cancel of
 * random recent groups, crew_cancelled() polled in every task, and crew_submit_deadline: single
 * tasks, one more task added to a batch's group, and some nested children, with start-by times
 * mostly generous (200 ms ahead), some tight (0-20 us ahead) so that drops happen, and some
 * already past) while one more thread pauses and resumes the pool at random (crew_pause /
 * crew_resume, always ending resumed) and another calls crew_diagnose(p, NULL) (and now and
 * then crew_diagnose_ex with every limit 0) every 1-5 ms, then end the pool: half the cycles
 * with crew_shutdown(CREW_CANCEL) while the producers are still submitting, the others by
 * stopping the producers and draining; then destroy it. Three cycles in four install
 * crew_hooks.on_drop, one in two on_start / on_stop, and these callbacks call back into the
 * pool, up to CB_BUDGET times a cycle: on_start / on_stop (workers across resizes and the
 * shutdown, blocking threads) submit a task and a group of two that they wait for, and now and
 * then call crew_shutdown; on_drop submits one task, and now and then calls crew_wait_all.
 *
 * Checked, with one record per task (an atomic run count) and per group:
 *   - no task runs twice, and a refused task never runs; a task whose start-by time had passed
 *     when it was submitted never runs;
 *   - every accepted task ran, unless the cycle may drop tasks (a cancelling shutdown, a
 *     drop-oldest queue) or it had a start-by time; with on_drop installed, every accepted task
 *     ran or was handed to on_drop, exactly once, and a refused one never reaches it;
 *     crew_stats (monitoring on from crew_create, never reset) counts submitted == accepted,
 *     completed == ran, cancelled + expired == the tasks that did not run, expired only tasks
 *     with start-by times, and exactly those that did not run in a cycle that drops nothing else;
 *   - after the shutdown each group's crew_wait answers CREW_ECANCELED if it lost a task
 *     without a start-by time; CREW_EEXPIRED if it lost only tasks with one (or CREW_ECANCELED
 *     if it could have been cancelled or dropped); CREW_OK if it lost none and crew_cancel was
 *     never tried on it; a successful wait (from a producer or a nested task) came after all
 *     its tasks, and one answering CREW_EEXPIRED after all of them ran or were handed to
 *     on_drop; only groups crew_cancel was tried on lose tasks without start-by times in a
 *     cycle that otherwise drops nothing; crew_wait_all ignores crew_cancel and deadlines;
 *   - crew_diagnose returns a count (>= 0), also during and after the shutdown;
 *   - crew_cancelled() is 1 only in a task whose group crew_cancel was tried on (or, in cycles
 *     that drop, a group that may have lost a task), or during a cancelling shutdown;
 *     crew_paused follows crew_pause / crew_resume;
 *   - every call returns a documented code, and ESHUTDOWN only once a shutdown has begun;
 *   - from the callbacks: their tasks are accounted for like the producers' (run or handed to
 *     on_drop exactly once, in crew_stats, their groups' answers); crew_shutdown from on_start
 *     or on_stop and crew_wait_all from on_drop answer CREW_EDEADLK; on each pool thread
 *     on_stop follows on_start with the same index, every thread that started has stopped
 *     once the pool is shut down, and crew_cancelled() is 0 in both;
 *   - memory does not grow: the resident set after the last cycle is at most
 *     RSS_GROWTH_FACTOR times that after the warm-up cycles plus RSS_GROWTH_SLACK_KB (unless
 *     --no-rss, or built with AddressSanitizer, whose quarantine of freed blocks fills for
 *     dozens of cycles after the warm-up, up to 256 MiB, and holds them: growth that is not
 *     crew's; its leak check at exit covers the library then).
 * Prints tasks run, tasks per second, tasks expired, how often callbacks called back (per cycle:
 * on_start/on_stop/on_drop) and the peak resident set (getrusage). Exits 1 on any violation, 2
 * on a usage error.
 *
 * Usage: soak [-s seconds] [-p producers] [-c cycle_ms] [--no-rss]
 *        (seconds: SOAK_SECONDS, default 300)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include "crew.h"

#define MAX_REC (1u << 22)    /* task records per cycle */
#define MAX_GROUPS (1u << 20) /* groups per cycle */
#define MAX_PRODUCERS 16
#define WARMUP_CYCLES 3
#define RSS_GROWTH_FACTOR 1.5
#define RSS_GROWTH_SLACK_KB (32 * 1024)

/* ---- violations ----------------------------------------------------------------------------- */

static atomic_ulong violations;

#define VIOLATION(...)                                                                           \
    do {                                                                                         \
        if (atomic_fetch_add(&violations, 1) < 20) {                                             \
            fprintf(stderr, "soak: VIOLATION: " __VA_ARGS__);                                    \
            fputc('\n', stderr);                                                                 \
        }                                                                                        \
    } while (0)

/* ---- records -------------------------------------------------------------------------------- */

typedef struct rec {
    atomic_uchar runs;
    atomic_uchar accepted;
    uint8_t kind;   /* 0 plain, 1 some work, 2 spawn children and wait, 3 blocking (sleeps) */
    uint8_t depth;  /* nesting depth of a spawning task */
    uint32_t group; /* index in groups[], 0 = none */
    atomic_uchar dropped; /* times crew_hooks.on_drop was handed it */
    uint8_t dl;     /* start-by time: 0 none, DL_SET one that may pass, DL_PAST passed already */
} rec;

#define DL_SET 1
#define DL_PAST 2

typedef struct group {
    crew_handle h;
    atomic_uint accepted; /* tasks the pool accepted into it */
    atomic_uint ran;      /* of those, run */
    atomic_bool published;   /* h is set (release), so another producer may cancel it */
    atomic_bool cancel_tried; /* set before crew_cancel(h) is called (it may take effect at once) */
    atomic_uint dropped;  /* of its tasks, handed to on_drop */
    bool has_dl;          /* a task with a start-by time was submitted to it (set before) */
    bool lost_plain, lost_dl; /* end of cycle: it lost a task without / with a start-by time */
    atomic_bool reported; /* a crew_wait returned its loss: later waits may answer CREW_OK once
                             256 more losses are reported (crew.h, crew_wait) */
} group;


static rec *recs;
static group *groups;

/* rc, a crew_wait's answer for group g: a loss returned is a loss reported. Returns rc. */
static int note_report(unsigned g, int rc) {
    if (rc == CREW_ECANCELED || rc == CREW_EEXPIRED)
        atomic_store(&groups[g].reported, true);
    return rc;
}
static atomic_uint nrec, ngroups;

/* The cycle's pool and its state. */
static crew_pool *pool;
static atomic_bool stopping;   /* producers: stop submitting */
static atomic_bool shutting;   /* a shutdown has begun: ESHUTDOWN is now legitimate */
static bool may_drop;          /* this cycle may drop accepted tasks */
static bool bounded;           /* this cycle's pool has a bounded queue */
static bool cancel_cycle;      /* this cycle ends with crew_shutdown(CREW_CANCEL) */
static atomic_bool any_cancel; /* crew_cancel was tried in this cycle */
static atomic_ulong cancels_ok, pauses_ok; /* totals, for the summary */
static bool hooks_on;          /* this cycle's pool has crew_hooks.on_drop */
static bool thread_hooks;      /* this cycle's pool has crew_hooks.on_start / on_stop */
/* Callbacks that call back into the pool (see "callbacks" below). */
static _Atomic(crew_pool *) cb_pool; /* the pool for the callbacks: set once crew_create has
                                        returned, cleared after the shutdown */
static atomic_int cb_budget;         /* callback invocations that may still call back */
static atomic_long threads_live;     /* on_start minus on_stop calls in this cycle */
static atomic_ulong cb_calls[3];     /* callbacks that called back: on_start, on_stop, on_drop */
static atomic_ulong cb_calls_total;  /* ... over all cycles, for the summary */
static atomic_ulong diag_calls, diag_findings; /* crew_diagnose: totals, for the summary */
static uint64_t expired_total, dl_total; /* crew_stats.expired; accepted with a start-by time */

static rec *new_recs(unsigned n, uint8_t kind, uint32_t g) {
    unsigned i = atomic_fetch_add(&nrec, n);
    if (i + n > MAX_REC)
        return NULL; /* budget used up: the producers idle until the cycle ends */
    for (unsigned k = 0; k < n; k++) {
        rec *r = &recs[i + k];
        atomic_store_explicit(&r->runs, 0, memory_order_relaxed);
        atomic_store_explicit(&r->accepted, 0, memory_order_relaxed);
        r->kind = kind;
        r->depth = 0;
        r->group = g;
        atomic_store_explicit(&r->dropped, 0, memory_order_relaxed);
        r->dl = 0;
    }
    return &recs[i];
}

static uint32_t new_group(void) {
    unsigned g = atomic_fetch_add(&ngroups, 1) + 1; /* 0 means "no group" */
    if (g >= MAX_GROUPS)
        return 0;
    groups[g].h = CREW_HANDLE_NONE;
    atomic_store(&groups[g].accepted, 0);
    atomic_store(&groups[g].ran, 0);
    atomic_store(&groups[g].dropped, 0);
    groups[g].has_dl = groups[g].lost_plain = groups[g].lost_dl = false;
    return g;
}

static uint32_t rnd(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (uint32_t)((*s * 2685821657736338717ull) >> 32);
}

/* A start-by time for r: mostly generous (200 ms ahead), some tight (0-20 us ahead: these
 * expire whenever the task waits a little), one in ten already past (it must never run). */
static uint64_t start_by(rec *r, uint64_t *seed) {
    uint64_t now = crew_now_ns();
    unsigned c = rnd(seed) % 10;
    r->dl = c == 0 ? DL_PAST : DL_SET;
    if (c == 0)
        return now - 1;
    if (c <= 3)
        return now + rnd(seed) % 20000;
    return now + 200000000u;
}

/* crew_hooks.on_drop: a task of this soak that never ran, handed over once; then it may call
 * back into the pool (drop_calls_back). */
static void task_fn(void *arg);
static void drop_calls_back(void);
static void on_drop(crew_fn fn, void *task_arg, void *arg) {
    (void)arg;
    rec *r = task_arg;
    if (fn != task_fn) {
        VIOLATION("on_drop got a function that was never submitted");
        return;
    }
    if (atomic_fetch_add(&r->dropped, 1) != 0)
        VIOLATION("task %ld was handed to on_drop twice", (long)(r - recs));
    if (atomic_load(&r->runs) != 0)
        VIOLATION("task %ld was handed to on_drop after it ran", (long)(r - recs));
    if (r->group)
        atomic_fetch_add(&groups[r->group].dropped, 1);
    drop_calls_back();
}

/* rc of a submission: OK, or a code that fits this moment. */
static void check_submit_rc(const char *call, int rc) {
    if (rc == CREW_OK) /* never CREW_ESTALE: a finished group is replaced (crew.h) */
        return;
    if (rc == CREW_ESHUTDOWN && atomic_load(&shutting))
        return;
    if (rc == CREW_EFULL && bounded)
        return;
    if (rc == CREW_ECANCELED && (may_drop || atomic_load(&any_cancel)))
        return; /* adding to a group that lost a task or was cancelled (crew.h) */
    VIOLATION("%s returned %s", call, crew_err_name(rc));
}

static void accepted(rec *r, unsigned n) {
    for (unsigned i = 0; i < n; i++)
        atomic_store(&r[i].accepted, 1);
    if (r[0].group)
        atomic_fetch_add(&groups[r[0].group].accepted, n);
}

static void task_fn(void *arg);

static void publish(uint32_t g, crew_handle h) {
    groups[g].h = h;
    atomic_store_explicit(&groups[g].published, true, memory_order_release);
}

/* May group g answer CREW_ECANCELED / lose tasks? */
static bool cancellable(uint32_t g) {
    return may_drop || (g && atomic_load(&groups[g].cancel_tried));
}

/* crew_cancel of one of the last 64 groups opened in this cycle. */
static void cancel_some(uint64_t *seed) {
    unsigned ng = atomic_load(&ngroups);
    if (ng >= MAX_GROUPS)
        ng = MAX_GROUPS - 1;
    if (ng == 0)
        return;
    uint32_t g = ng - rnd(seed) % (ng < 64 ? ng : 64);
    if (g == 0 || !atomic_load_explicit(&groups[g].published, memory_order_acquire))
        return;
    atomic_store(&any_cancel, true);
    atomic_store(&groups[g].cancel_tried, true);
    int rc = crew_cancel(pool, groups[g].h);
    if (rc == CREW_OK)
        atomic_fetch_add_explicit(&cancels_ok, 1, memory_order_relaxed);
    else if (rc != CREW_ESTALE)
        VIOLATION("crew_cancel returned %s", crew_err_name(rc));
}

/* A spawning task's children: a group of 2-4, then a wait (nested parallelism). */
static void spawn_and_wait(rec *parent, uint64_t *seed) {
    unsigned n = 2 + rnd(seed) % 3;
    uint32_t g = new_group();
    if (!g)
        return;
    rec *kids = new_recs(n, 0, g);
    if (!kids)
        return;
    for (unsigned i = 0; i < n; i++) {
        kids[i].kind = parent->depth < 2 && rnd(seed) % 4 == 0 ? 2 : (uint8_t)(rnd(seed) % 2);
        kids[i].depth = (uint8_t)(parent->depth + 1);
    }
    crew_handle h = CREW_HANDLE_NONE;
    unsigned ok = 0;
    for (unsigned i = 0; i < n; i++) {
        /* try_submit: a worker must not wait for room in a queue that only workers drain. One
         * child in eight has a start-by time: crew_submit_deadline may wait for room only under
         * CREW_FULL_BLOCK, which the soak never uses (caller-runs runs it here, drop-oldest
         * drops another). */
        int rc;
        if (rnd(seed) % 8 == 0) {
            uint64_t by = start_by(&kids[i], seed);
            groups[g].has_dl = true;
            rc = crew_submit_deadline(pool, task_fn, &kids[i], rnd(seed) % 8, 0, by, &h);
            check_submit_rc("crew_submit_deadline (nested)", rc);
        } else {
            rc = crew_try_submit(pool, task_fn, &kids[i], rnd(seed) % 8, &h);
            check_submit_rc("crew_try_submit (nested)", rc);
        }
        if (rc == CREW_OK) {
            ok++;
            accepted(&kids[i], 1);
        } else if (rc == CREW_ECANCELED) {
            break; /* the group lost a child and was cancelled */
        }
        /* Never CREW_ESTALE: once the earlier children have finished, the submission opens a
         * new group in h's place (crew.h), which inherits any loss. */
    }
    if (ok == 0)
        return;
    publish(g, h); /* the final handle: a group of every child accepted (cancel_some) */
    int rc = note_report(g, crew_wait(pool, h));
    if (rc == CREW_OK) {
        for (unsigned i = 0; i < n; i++)
            if (atomic_load(&kids[i].accepted) && atomic_load(&kids[i].runs) != 1)
                VIOLATION("nested crew_wait on slot %u gen %u returned OK, but child %ld was "
                          "not run (cycle may drop: %d)",
                          h.slot, h.gen, (long)(&kids[i] - recs), (int)may_drop);
    } else if (rc == CREW_EEXPIRED) {
        if (!groups[g].has_dl)
            VIOLATION("nested crew_wait returned CREW_EEXPIRED for a group without start-by "
                      "times");
        for (unsigned i = 0; i < n; i++)
            if (atomic_load(&kids[i].accepted) && !kids[i].dl && atomic_load(&kids[i].runs) != 1)
                VIOLATION("nested crew_wait returned CREW_EEXPIRED, but child %ld, without a "
                          "start-by time, did not run",
                          (long)(&kids[i] - recs));
    } else if (!(rc == CREW_ECANCELED && cancellable(g))) {
        VIOLATION("nested crew_wait returned %s", crew_err_name(rc));
    }
}

static void task_fn(void *arg) {
    rec *r = arg;
    if (atomic_fetch_add(&r->runs, 1) != 0)
        VIOLATION("task %ld ran twice", (long)(r - recs));
    if (r->dl == DL_PAST)
        VIOLATION("task %ld ran, but its start-by time had passed when it was submitted",
                  (long)(r - recs));
    if (atomic_load_explicit(&r->dropped, memory_order_relaxed) != 0)
        VIOLATION("task %ld ran after it was handed to on_drop", (long)(r - recs));
    /* r->accepted may not be set yet (the submitting call has not returned): checked at the
     * end of the cycle. */
    if (crew_cancelled()) {
        /* A group that lost a task to a drop-oldest queue (or a cancelling shutdown) counts as
         * cancelled too: crew__group_done(dropped) marks the slot's state word. */
        if (!(cancel_cycle && atomic_load(&shutting)) &&
            !(r->group && (may_drop || atomic_load(&groups[r->group].cancel_tried))))
            VIOLATION("crew_cancelled() was 1 in task %ld, whose group was not cancelled",
                      (long)(r - recs));
        if (r->kind == 2)
            goto out; /* stop early, as crew.h suggests: no children */
    }
    switch (r->kind) {
    case 1: {
        volatile uint32_t x = 0;
        for (unsigned i = 0; i < 300; i++)
            x += i * i;
        (void)x;
        break;
    }
    case 2: {
        uint64_t seed = (uint64_t)(uintptr_t)r * 0x9e3779b97f4a7c15ull | 1;
        spawn_and_wait(r, &seed);
        break;
    }
    case 3: {
        struct timespec ts = {0, 20000 + (long)((r - recs) % 8) * 10000};
        nanosleep(&ts, NULL);
        break;
    }
    default:
        break;
    }
out:
    if (r->group)
        atomic_fetch_add(&groups[r->group].ran, 1);
}

/* ---- callbacks that call back into the pool -------------------------------------------------
 *
 * on_start / on_stop (workers across resizes and the shutdown, blocking threads as they come and
 * go) act as outside threads: one tracked task, then a tracked group of two waited for here
 * (the wait helps run it), and now and then crew_shutdown, which must answer CREW_EDEADLK.
 * on_drop (on the thread that drops: crew_cancel, a drop-oldest submission, a cancelling
 * shutdown, a thread that finds a task past its start-by time) submits one tracked task, and
 * now and then checks that crew_wait_all answers CREW_EDEADLK (it runs as a task of the
 * dropped task's group). Every task goes through the same records as the producers' ones.
 * Bounded: CB_BUDGET callbacks per cycle call back, and none while another callback is
 * calling back on its thread (an on_drop for a drop that a callback's own submission caused
 * just records it, so a drop-oldest queue cannot chain drops without end). Groups of blocking
 * tasks are never waited for here: a blocking thread's on_start counts as one of max_blocking,
 * and waiters do not run blocking tasks. */

#define CB_BUDGET 20000 /* per cycle: a few times the drops of a typical cycle */

static _Thread_local unsigned in_cb;     /* callbacks calling back on this thread now */
static _Thread_local bool thread_started; /* on_start ran on this thread, on_stop not yet */
static _Thread_local unsigned started_index;

/* May this callback call back? Then *p is the pool and in_cb counts it (end with in_cb--). */
static bool cb_begin(crew_pool **p, int where) {
    if (in_cb || !(*p = atomic_load_explicit(&cb_pool, memory_order_acquire)))
        return false;
    if (atomic_fetch_sub_explicit(&cb_budget, 1, memory_order_relaxed) <= 0)
        return false;
    in_cb++;
    atomic_fetch_add_explicit(&cb_calls[where], 1, memory_order_relaxed);
    return true;
}

static void drop_calls_back(void) {
    crew_pool *p;
    if (!cb_begin(&p, 2))
        return;
    rec *r = new_recs(1, 0, 0);
    if (r) {
        int rc = crew_submit(p, task_fn, r, (uint32_t)(r - recs) % 16, NULL);
        check_submit_rc("crew_submit (on_drop)", rc);
        if (rc == CREW_OK)
            accepted(r, 1);
        if ((r - recs) % 16 == 0 && (rc = crew_wait_all(p)) != CREW_EDEADLK)
            VIOLATION("crew_wait_all from on_drop returned %s, not EDEADLK", crew_err_name(rc));
    }
    in_cb--;
}

/* on_start and on_stop: a task, a group waited for, sometimes crew_shutdown (EDEADLK). */
static void thread_calls_back(int where) {
    crew_pool *p;
    if (!cb_begin(&p, where))
        return;
    const char *in = where == 0 ? "on_start" : "on_stop";
    rec *r = new_recs(1, 1, 0);
    if (r) {
        int rc = crew_submit(p, task_fn, r, (uint32_t)(r - recs) % 16, NULL);
        check_submit_rc(where == 0 ? "crew_submit (on_start)" : "crew_submit (on_stop)", rc);
        if (rc == CREW_OK)
            accepted(r, 1);
        if ((r - recs) % 8 == 0 && (rc = crew_shutdown(p, CREW_DRAIN)) != CREW_EDEADLK)
            VIOLATION("crew_shutdown from %s returned %s, not EDEADLK", in, crew_err_name(rc));
    }
    uint32_t g = new_group();
    rec *k = g ? new_recs(2, 0, g) : NULL;
    if (k) {
        crew_task t[2]; /* ours again once the group finished: waited for below */
        for (unsigned i = 0; i < 2; i++) {
            memset(&t[i], 0, sizeof t[i]);
            t[i].fn = task_fn;
            t[i].arg = &k[i];
            t[i].priority = (uint32_t)i;
        }
        crew_handle h = CREW_HANDLE_NONE;
        int rc = crew_enqueue_tasks(p, t, 2, &h);
        check_submit_rc(where == 0 ? "crew_enqueue_tasks (on_start)"
                                   : "crew_enqueue_tasks (on_stop)",
                        rc);
        if (rc == CREW_OK) {
            publish(g, h); /* a producer's cancel_some may cancel it */
            accepted(k, 2);
            rc = note_report(g, crew_wait(p, h));
            if (rc == CREW_OK) {
                if (atomic_load(&groups[g].ran) != atomic_load(&groups[g].accepted))
                    VIOLATION("crew_wait from %s returned OK with %u of %u tasks run", in,
                              atomic_load(&groups[g].ran), atomic_load(&groups[g].accepted));
            } else if (!(rc == CREW_ECANCELED && cancellable(g))) {
                VIOLATION("crew_wait from %s returned %s", in, crew_err_name(rc));
            }
        }
    }
    in_cb--;
}

/* Paired on each thread, one index; none left when the pool has shut down (cycle()). */
static void on_start(unsigned index, void *arg) {
    (void)arg;
    if (thread_started)
        VIOLATION("on_start(%u) on a thread that already ran on_start(%u)", index, started_index);
    thread_started = true;
    started_index = index;
    atomic_fetch_add(&threads_live, 1);
    if (crew_cancelled() != 0)
        VIOLATION("crew_cancelled() is 1 in on_start");
    thread_calls_back(0);
}

static void on_stop(unsigned index, void *arg) {
    (void)arg;
    if (!thread_started || started_index != index)
        VIOLATION("on_stop(%u) on a thread whose on_start %s", index,
                  thread_started ? "had another index" : "never ran");
    if (crew_cancelled() != 0)
        VIOLATION("crew_cancelled() is 1 in on_stop");
    thread_calls_back(1);
    thread_started = false;
    atomic_fetch_sub(&threads_live, 1);
}

/* ---- producers ------------------------------------------------------------------------------ */

static void *producer(void *arg) {
    unsigned id = (unsigned)(uintptr_t)arg;
    uint64_t seed = 0x1234567ull + id * 7919ull + (uint64_t)time(NULL);
    crew_task batch[16];
    while (!atomic_load(&stopping)) {
        unsigned what = rnd(&seed) % 100;
        if (what < 40) { /* single task, maybe blocking, maybe with a start-by time */
            bool blocking = rnd(&seed) % 10 == 0;
            uint8_t kind = blocking ? 3 : (uint8_t)(rnd(&seed) % 3);
            rec *r = new_recs(1, kind, 0);
            if (!r)
                break;
            int rc;
            const char *call;
            if (rnd(&seed) % 4 == 0) {
                uint64_t by = start_by(r, &seed);
                rc = crew_submit_deadline(pool, task_fn, r, rnd(&seed) % 16,
                                          blocking ? CREW_TASK_BLOCKING : 0, by, NULL);
                call = "crew_submit_deadline";
            } else if (blocking) {
                rc = crew_submit_ex(pool, task_fn, r, rnd(&seed) % 16, CREW_TASK_BLOCKING, NULL);
                call = "crew_submit_ex";
            } else {
                rc = crew_submit(pool, task_fn, r, rnd(&seed) % 16, NULL);
                call = "crew_submit";
            }
            check_submit_rc(call, rc);
            if (rc == CREW_OK)
                accepted(r, 1);
        } else if (what < 75) { /* a batch as a new group, maybe waited for */
            unsigned n = 1 + rnd(&seed) % 16;
            uint32_t g = new_group();
            rec *r = g ? new_recs(n, 0, g) : NULL;
            if (!r)
                break;
            for (unsigned i = 0; i < n; i++) {
                r[i].kind = (uint8_t)(rnd(&seed) % 3);
                memset(&batch[i], 0, sizeof batch[i]);
                batch[i].fn = task_fn;
                batch[i].arg = &r[i];
                batch[i].priority = rnd(&seed) % 16;
            }
            crew_handle h = CREW_HANDLE_NONE;
            int rc = crew_enqueue_tasks(pool, batch, n, &h);
            check_submit_rc("crew_enqueue_tasks", rc);
            if (rc != CREW_OK)
                continue;
            accepted(r, n);
            /* Add one more through the same handle, one time in four with a start-by time
             * (then the group may answer CREW_EEXPIRED); if the group has finished already, a
             * new group opens in its place and h names it (inheriting any loss). */
            rec *extra = new_recs(1, 0, g);
            if (extra) {
                if (rnd(&seed) % 4 == 0) {
                    uint64_t by = start_by(extra, &seed);
                    groups[g].has_dl = true;
                    rc = crew_submit_deadline(pool, task_fn, extra, 0, 0, by, &h);
                    check_submit_rc("crew_submit_deadline (add)", rc);
                } else {
                    rc = crew_submit(pool, task_fn, extra, 0, &h);
                    check_submit_rc("crew_submit (add)", rc);
                }
                if (rc == CREW_OK)
                    accepted(extra, 1);
            }
            publish(g, h); /* the final handle, which the group's record follows */
            /* The batch array is ours again only once every task has started: wait. */
            rc = note_report(g, crew_wait(pool, h));
            if (rc == CREW_OK) {
                if (atomic_load(&groups[g].ran) != atomic_load(&groups[g].accepted))
                    VIOLATION("crew_wait returned OK with %u of %u tasks run",
                              atomic_load(&groups[g].ran), atomic_load(&groups[g].accepted));
            } else if (rc == CREW_EEXPIRED) {
                if (!groups[g].has_dl)
                    VIOLATION("crew_wait returned CREW_EEXPIRED for a group without start-by "
                              "times");
                else if (hooks_on && atomic_load(&groups[g].ran) + atomic_load(&groups[g].dropped) !=
                                         atomic_load(&groups[g].accepted))
                    VIOLATION("crew_wait returned CREW_EEXPIRED with %u of %u tasks run and %u "
                              "handed to on_drop",
                              atomic_load(&groups[g].ran), atomic_load(&groups[g].accepted),
                              atomic_load(&groups[g].dropped));
            } else if (!(rc == CREW_ECANCELED && cancellable(g))) {
                VIOLATION("crew_wait returned %s", crew_err_name(rc));
            }
        } else if (what < 83) { /* a spawning task: nested groups on the workers */
            rec *r = new_recs(1, 2, 0);
            if (!r)
                break;
            int rc = crew_submit(pool, task_fn, r, rnd(&seed) % 4, NULL);
            check_submit_rc("crew_submit (spawner)", rc);
            if (rc == CREW_OK)
                accepted(r, 1);
        } else if (what < 86) { /* cancel a recent group (maybe finished, maybe nested) */
            cancel_some(&seed);
        } else if (what < 90) { /* statistics */
            crew_stats st;
            memset(&st, 0, sizeof st);
            st.size = sizeof st;
            int rc = crew_stats_get(pool, &st);
            if (rc != CREW_OK && rc != CREW_ENOMEM)
                VIOLATION("crew_stats_get returned %s", crew_err_name(rc));
            /* Live counters are summed from per-thread blocks without a snapshot, so only
             * the totals after the shutdown are compared (cycle()). */
            crew_thread_stats ts[8];
            size_t nt = 0;
            if (crew_stats_threads(pool, ts, 8, &nt) != CREW_OK)
                VIOLATION("crew_stats_threads failed");
        } else if (what < 92 && id == 0) { /* resize */
            int rc = crew_resize(pool, 1 + rnd(&seed) % 4);
            if (rc != CREW_OK && rc != CREW_EAGAIN && !(rc == CREW_ESHUTDOWN && atomic_load(&shutting)))
                VIOLATION("crew_resize returned %s", crew_err_name(rc));
        } else { /* a short pause, so queues drain and workers go to sleep and wake again */
            struct timespec ts = {0, 1000 + (long)(rnd(&seed) % 50000)};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* Pauses and resumes the pool at random until the producers stop; always ends resumed. */
static void *toggler(void *arg) {
    uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull | 1;
    while (!atomic_load(&stopping)) {
        struct timespec run = {0, 500000 + (long)(rnd(&seed) % 4000000)};
        nanosleep(&run, NULL);
        int rc = crew_pause(pool);
        if (rc == CREW_OK) {
            atomic_fetch_add_explicit(&pauses_ok, 1, memory_order_relaxed);
            if (crew_paused(pool) != 1 && !atomic_load(&shutting))
                VIOLATION("crew_paused is 0 right after crew_pause");
        } else if (!(rc == CREW_ESHUTDOWN && atomic_load(&shutting))) {
            VIOLATION("crew_pause returned %s", crew_err_name(rc));
        }
        struct timespec held = {0, 50000 + (long)(rnd(&seed) % 500000)};
        nanosleep(&held, NULL);
        if ((rc = crew_resume(pool)) != CREW_OK)
            VIOLATION("crew_resume returned %s", crew_err_name(rc));
        if (crew_paused(pool) != 0)
            VIOLATION("crew_paused is 1 right after crew_resume");
    }
    return NULL;
}

/* Calls crew_diagnose(pool, NULL) every 1-5 ms until the producers stop (through the shutdown in
 * the cycles that cancel), one call in four crew_diagnose_ex with every limit 0. */
static void *diagnoser(void *arg) {
    uint64_t seed = (uint64_t)(uintptr_t)arg * 0x2545f4914f6cdd1dull | 1;
    while (!atomic_load(&stopping)) {
        struct timespec ts = {0, 1000000 + (long)(rnd(&seed) % 4000000)};
        nanosleep(&ts, NULL);
        int rc = rnd(&seed) % 4 == 0 ? crew_diagnose_ex(pool, NULL, 0, 0, 0)
                                     : crew_diagnose(pool, NULL);
        if (rc < 0) {
            VIOLATION("crew_diagnose returned %s", crew_err_name(rc));
            continue;
        }
        atomic_fetch_add_explicit(&diag_calls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&diag_findings, (unsigned long)rc, memory_order_relaxed);
    }
    return NULL;
}

/* ---- cycles --------------------------------------------------------------------------------- */

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *const sched_names[] = {"default", "steal", "shared", "lockfree", "per-worker"};

/* One cycle; returns the tasks that ran. */
static uint64_t cycle(unsigned k, unsigned producers, unsigned cycle_ms, uint64_t *seed) {
    crew_config c;
    crew_config_init(&c);
    c.scheduler = 1 + k % 4;
    c.lock = (k / 4) % 2;
    c.threads = 1 + rnd(seed) % 4;
    c.monitoring = 1;
    c.spin = rnd(seed) % 2 ? 64 : 0;
    c.max_blocking = 2 + rnd(seed) % 4;
    c.blocking_idle_ms = 5;
    bounded = rnd(seed) % 4 == 0;
    if (bounded) {
        c.queue_capacity = 32 + rnd(seed) % 64;
        c.full_policy = rnd(seed) % 2 ? CREW_FULL_CALLER_RUNS : CREW_FULL_DROP_OLDEST;
    }
    static crew_hooks hk; /* crew_create copies it */
    hk.size = sizeof hk;
    hooks_on = rnd(seed) % 4 != 0;
    thread_hooks = rnd(seed) % 2 == 0;
    hk.on_drop = hooks_on ? on_drop : NULL;
    hk.on_start = thread_hooks ? on_start : NULL;
    hk.on_stop = thread_hooks ? on_stop : NULL;
    c.hooks = hooks_on || thread_hooks ? &hk : NULL;
    bool cancel = rnd(seed) % 2;
    may_drop = cancel || (bounded && c.full_policy == CREW_FULL_DROP_OLDEST);
    cancel_cycle = cancel;
    atomic_store(&any_cancel, false);

    atomic_store(&nrec, 0);
    atomic_store(&ngroups, 0);
    atomic_store(&stopping, false);
    atomic_store(&shutting, false);
    atomic_store(&cb_budget, CB_BUDGET);
    atomic_store(&threads_live, 0);
    for (int i = 0; i < 3; i++)
        atomic_store(&cb_calls[i], 0);
    int rc = crew_create(&pool, &c);
    if (rc != CREW_OK) {
        VIOLATION("crew_create returned %s", crew_err_name(rc));
        return 0;
    }
    atomic_store_explicit(&cb_pool, pool, memory_order_release); /* the callbacks may call now */
    pthread_t th[MAX_PRODUCERS + 2];
    for (unsigned i = 0; i <= producers + 1; i++)
        if (pthread_create(&th[i], NULL,
                           i < producers ? producer : i == producers ? toggler : diagnoser,
                           (void *)(uintptr_t)(i + k * 31u + 1)) != 0) {
            fprintf(stderr, "soak: pthread_create failed\n");
            exit(2);
        }
    struct timespec ts = {cycle_ms / 1000, (long)(cycle_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    if (cancel) { /* cancel while the producers still submit */
        atomic_store(&shutting, true);
        rc = crew_shutdown(pool, CREW_CANCEL);
        if (rc != CREW_OK)
            VIOLATION("crew_shutdown(CANCEL) returned %s", crew_err_name(rc));
        atomic_store(&stopping, true);
        for (unsigned i = 0; i <= producers + 1; i++) /* and the toggler and the diagnoser */
            pthread_join(th[i], NULL);
    } else {
        atomic_store(&stopping, true);
        for (unsigned i = 0; i <= producers + 1; i++) /* the toggler: the pool ends resumed */
            pthread_join(th[i], NULL);
        rc = crew_wait_all(pool);
        if (rc != CREW_OK && !(rc == CREW_ECANCELED && may_drop))
            VIOLATION("crew_wait_all returned %s", crew_err_name(rc));
        atomic_store(&shutting, true);
        if ((rc = crew_shutdown(pool, CREW_DRAIN)) != CREW_OK)
            VIOLATION("crew_shutdown(DRAIN) returned %s", crew_err_name(rc));
    }

    /* Every pool thread has exited: each on_start was followed by an on_stop. */
    atomic_store(&cb_pool, NULL);
    if (thread_hooks && atomic_load(&threads_live) != 0)
        VIOLATION("after the shutdown, on_start ran %ld times more than on_stop",
                  atomic_load(&threads_live));

    /* Account for every task. */
    unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
    uint64_t acc = 0, ran = 0, lost = 0, lost_dl = 0, acc_dl = 0;
    for (unsigned i = 0; i < n; i++) {
        rec *r = &recs[i];
        unsigned runs = atomic_load(&r->runs), a = atomic_load(&r->accepted);
        unsigned dropped = atomic_load(&r->dropped);
        if (runs > 1)
            VIOLATION("task %u ran %u times", i, runs);
        if (!a && runs)
            VIOLATION("task %u was refused but ran", i);
        if (!a && dropped)
            VIOLATION("task %u was refused but handed to on_drop", i);
        if (a && hooks_on && runs + dropped != 1)
            VIOLATION("task %u was accepted, ran %u times and was handed to on_drop %u times", i,
                      runs, dropped);
        acc += a;
        ran += runs;
        lost += a && !runs;
        lost_dl += a && !runs && r->dl;
        acc_dl += a && r->dl;
        if (a && !runs && r->group) {
            if (r->dl)
                groups[r->group].lost_dl = true;
            else
                groups[r->group].lost_plain = true;
        }
    }
    if (lost != lost_dl && !may_drop)
        for (unsigned i = 0; i < n; i++)
            if (atomic_load(&recs[i].accepted) && !atomic_load(&recs[i].runs) && !recs[i].dl &&
                !cancellable(recs[i].group))
                VIOLATION("task %u was accepted and never ran, without a start-by time, not in a "
                          "cancelled group, in a cycle that drops nothing", i);
    crew_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    bool drops_other = may_drop || atomic_load(&any_cancel); /* than by start-by times */
    if (crew_stats_get(pool, &st) == CREW_OK &&
        (st.submitted != acc || st.completed != ran || st.cancelled + st.expired != lost ||
         st.expired > lost_dl || (!drops_other && st.expired != lost_dl)))
        VIOLATION("stats: submitted %llu completed %llu cancelled %llu expired %llu; records: "
                  "accepted %llu ran %llu lost %llu (with a start-by time: %llu)",
                  (unsigned long long)st.submitted, (unsigned long long)st.completed,
                  (unsigned long long)st.cancelled, (unsigned long long)st.expired,
                  (unsigned long long)acc, (unsigned long long)ran, (unsigned long long)lost,
                  (unsigned long long)lost_dl);
    expired_total += st.expired;
    dl_total += acc_dl;
    /* Groups: CREW_ECANCELED exactly for those that lost a task without a start-by time,
     * CREW_EEXPIRED for those that lost only tasks with one (unless they could also have been
     * cancelled or dropped), CREW_OK for the others; CREW_OK also for a group whose loss a wait
     * reported during the cycle (its slot may have been freed since: crew.h, crew_wait). */
    unsigned ng = atomic_load(&ngroups) < MAX_GROUPS ? atomic_load(&ngroups) : MAX_GROUPS - 1;
    for (unsigned g = 1; g <= ng; g++) {
        if (groups[g].h.slot == 0)
            continue; /* never opened */
        bool lp = groups[g].lost_plain, ld = groups[g].lost_dl;
        rc = crew_wait(pool, groups[g].h);
        bool ok;
        if (lp)
            ok = rc == CREW_ECANCELED;
        else if (ld)
            ok = rc == CREW_EEXPIRED || (rc == CREW_ECANCELED && cancellable(g));
        else /* cancelled after its last task started: CREW_ECANCELED is documented */
            ok = rc == CREW_OK ||
                 (rc == CREW_ECANCELED && atomic_load(&groups[g].cancel_tried));
        /* A loss a wait has reported is kept only a while (crew.h, crew_wait). */
        ok = ok || (rc == CREW_OK && atomic_load(&groups[g].reported));
        if (!ok)
            VIOLATION("group %u %s but crew_wait returned %s", g,
                      lp   ? "lost a task without a start-by time"
                      : ld ? "lost only tasks with start-by times"
                           : "did not lose a task",
                      crew_err_name(rc));
    }
    if ((rc = crew_destroy(pool)) != CREW_OK)
        VIOLATION("crew_destroy returned %s", crew_err_name(rc));
    pool = NULL;
    for (unsigned g = 1; g <= ng; g++) { /* for the next cycle's cancel_some */
        atomic_store(&groups[g].published, false);
        atomic_store(&groups[g].cancel_tried, false);
    }
    unsigned long cbs = atomic_load(&cb_calls[0]), cbt = atomic_load(&cb_calls[1]),
                  cbd = atomic_load(&cb_calls[2]);
    atomic_fetch_add(&cb_calls_total, cbs + cbt + cbd);
    printf("soak: cycle %3u %-10s %s %u thr %s%s: %8llu tasks, %6llu dropped, %6u groups, "
           "called back %lu/%lu/%lu, rss %ld KB, violations so far %lu\n",
           k, sched_names[c.scheduler], c.lock ? "spin " : "mutex", c.threads,
           cancel ? "cancel" : "drain ",
           bounded ? (c.full_policy == CREW_FULL_DROP_OLDEST ? " drop-oldest" : " caller-runs")
                   : "",
           (unsigned long long)ran, (unsigned long long)lost, ng, cbs, cbt, cbd, rss_kb(),
           atomic_load(&violations));
    fflush(stdout);
    return ran;
}

/* Built with AddressSanitizer (GCC's macro, Clang's feature test). */
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#endif
#ifndef SOAK_ASAN
#define SOAK_ASAN 0
#endif

static void usage(FILE *f) {
    fprintf(f, "usage: soak [-s seconds] [-p producers] [-c cycle_ms] [--no-rss]\n"
               "  -s seconds   how long to run (default: $SOAK_SECONDS, else 300)\n"
               "  -p producers threads submitting at once, 1..%d (default 4)\n"
               "  -c cycle_ms  the life of one pool (default 1000)\n"
               "  --no-rss     do not bound the resident set's growth (the default when built\n"
               "               with AddressSanitizer, whose quarantine keeps freed memory)\n"
               "  -h, --help   this text\n"
               "Exits 0 if every task was accounted for, 1 on a violation, 2 on bad usage.\n",
            MAX_PRODUCERS);
}

int main(int argc, char **argv) {
    const char *env = getenv("SOAK_SECONDS");
    double seconds = env ? atof(env) : 300;
    unsigned producers = 4, cycle_ms = 1000;
    bool check_rss = !SOAK_ASAN;
    int opt;
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, {"no-rss", no_argument, NULL, 'R'}, {0}};
    while ((opt = getopt_long(argc, argv, "s:p:c:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'R': check_rss = false; break;
        case 's': seconds = atof(optarg); break;
        case 'p': producers = (unsigned)atoi(optarg); break;
        case 'c': cycle_ms = (unsigned)atoi(optarg); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (seconds <= 0 || producers == 0 || producers > MAX_PRODUCERS || cycle_ms == 0) {
        fprintf(stderr, "soak: bad arguments\n");
        return 2;
    }
    unsetenv("CREW_SCHEDULER"); /* each cycle picks its scheduler itself */
    recs = calloc(MAX_REC, sizeof *recs);
    groups = calloc(MAX_GROUPS, sizeof *groups);
    if (!recs || !groups) {
        fprintf(stderr, "soak: out of memory\n");
        return 2;
    }
    /* Touch the record arrays once, so their pages count in the baseline. */
    memset(recs, 0, MAX_REC * sizeof *recs);
    memset(groups, 0, MAX_GROUPS * sizeof *groups);

    printf("soak: %.0f s, %u producers, %u ms cycles\n", seconds, producers, cycle_ms);
    uint64_t seed = 0x5eed5eedull ^ (uint64_t)time(NULL), total = 0;
    double start = now_s();
    long rss_warm = 0;
    unsigned k = 0;
    while (k < 4 || now_s() - start < seconds) { /* at least one cycle per scheduler */
        total += cycle(k, producers, cycle_ms, &seed);
        long rss = rss_kb();
        if (k < WARMUP_CYCLES && rss > rss_warm)
            rss_warm = rss;
        k++;
    }
    double elapsed = now_s() - start;
    long rss_end = rss_kb();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long bound = (long)(rss_warm * RSS_GROWTH_FACTOR) + RSS_GROWTH_SLACK_KB;
    printf("soak: %u cycles, %llu tasks in %.1f s = %.0f tasks/s, %llu expired (of %llu with a "
           "start-by time); peak RSS %ld KB; RSS after warm-up %ld KB, at the end %ld KB (bound "
           "%ld KB)\n",
           k, (unsigned long long)total, elapsed, total / elapsed,
           (unsigned long long)expired_total, (unsigned long long)dl_total, ru.ru_maxrss,
           rss_warm, rss_end, bound);
    printf("soak: crew_cancel returned CREW_OK %lu times; crew_pause %lu times; crew_diagnose "
           "%lu times (%lu findings); callbacks called back %lu times\n",
           atomic_load(&cancels_ok), atomic_load(&pauses_ok), atomic_load(&diag_calls),
           atomic_load(&diag_findings), atomic_load(&cb_calls_total));
    if (!check_rss)
        printf("soak: the resident set's growth is not checked (%s)\n",
               SOAK_ASAN ? "AddressSanitizer's quarantine" : "--no-rss");
    else if (rss_end > bound)
        VIOLATION("resident set grew from %ld KB to %ld KB (bound %ld KB)", rss_warm, rss_end,
                  bound);
    unsigned long v = atomic_load(&violations);
    printf("soak: %s (%lu violations)\n", v ? "FAILED" : "passed", v);
    free(recs);
    free(groups);
    return v ? 1 : 0;
}
