/*
 * api_fuzz.c -- a libFuzzer target for crew's public API.
 *
 * The input is a program: each byte sequence decodes into up to MAX_OPS calls on two pool
 * variables (create with a small random configuration, every way to submit, waits, resize,
 * statistics, monitoring, shutdown, destroy, crew_submit_deadline, crew_diagnose), valid and
 * invalid alike: NULL pools and pointers,
 * zero counts, unknown flags, stale and forged handles, the other pool's handles, calls after a
 * shutdown. What must hold, checked after every call and when each pool is destroyed:
 *   - every call returns CREW_OK or one of the error codes its documentation lists, and the
 *     exact one where the documentation leaves no choice (EINVAL for NULL, ESHUTDOWN after a
 *     shutdown, ...);
 *   - a refused task never runs; an accepted task runs at most once, and exactly once unless
 *     the pool may drop tasks (CREW_CANCEL shutdown, CREW_FULL_DROP_OLDEST);
 *   - a successful crew_wait / crew_enqueue_tasks_wait means the tasks it covers have all run,
 *     a successful crew_wait_all that every accepted task ran unless crew_cancel, a start-by
 *     time or a full queue's CREW_FULL_DROP_OLDEST may have dropped it; CREW_ECANCELED only on
 *     a pool that may drop tasks, and from crew_wait_all only after a CREW_CANCEL shutdown;
 *     after the pool is shut down, a tracked group answers CREW_ECANCELED exactly when it lost
 *     a task;
 *   - with monitoring on from crew_create and never switched off or reset, crew_stats counts
 *     submitted == accepted, completed == ran, cancelled == accepted - ran;
 *   - crew_cancel (on the pool's own open or finished groups, the other pool's, forged and
 *     never-issued handles): EINVAL exactly for NULL, slot 0 and never-issued slots; a task of a
 *     cancelled group either ran or was reported (its group's crew_wait answers CREW_ECANCELED,
 *     and crew_stats.cancelled counts it); a group that lost any task answers CREW_ECANCELED to
 *     every later crew_wait, also after the shutdown; crew_wait_all is not affected by it;
 *   - crew_cancelled() is 0 outside tasks, and 1 inside a task only if its group was cancelled
 *     or the pool is shutting down with CREW_CANCEL;
 *   - crew_submit_deadline (start-by time none, long or just past, exactly now, microseconds
 *     ahead, an hour ahead, UINT64_MAX; flags 0, CREW_TASK_BLOCKING or unknown; any group; a
 *     spawning task's children too): a task with a start-by time runs or is dropped, one whose
 *     time had passed at submission never runs (no other timing is assumed: a task taken just
 *     before its time may run after it), and one with UINT64_MAX is treated as having none;
 *     with monitoring exact, cancelled + expired == accepted - ran, expired counts only tasks
 *     with a start-by time, and exactly those that did not run if nothing else could drop;
 *     crew_wait answers CREW_EEXPIRED only for a group with such a task, and then every other
 *     task of the group ran; after the shutdown a group that lost only tasks with start-by
 *     times answers CREW_EEXPIRED (or CREW_ECANCELED if crew_cancel or the pool could have
 *     dropped them), one that lost any other CREW_ECANCELED; a finished group keeps its answer
 *     (CREW_OK, CREW_ECANCELED or CREW_EEXPIRED) to every later crew_wait;
 *   - with crew_hooks.on_drop installed (the input chooses): it gets only tasks of its own pool
 *     that never ran, each at most once, and after the shutdown every accepted task ran or was
 *     handed to it exactly once (expired ones included);
 *   - crew_diagnose / crew_diagnose_ex (limits 0-3 ms or UINT_MAX, to NULL, /dev/null or an
 *     open_memstream; on live, paused, shut-down and destroyed pools, and from inside tasks):
 *     a count (>= 0), CREW_EINVAL exactly for a NULL pool; the text written to memory starts
 *     with the header, which says "paused" and "shutting down" exactly when that holds, has one
 *     line per finding, and "nothing stalled" exactly when there is none;
 *   - crew_pause / crew_resume / crew_paused: the documented results, crew_paused follows them
 *     (unless callbacks pause and resume too), and crew_shutdown resumes. A paused pool never
 *     finishes a wait, so before any call that could wait for tasks (waits, submissions to a
 *     bounded queue, which may block or run the task in the caller) the pool is resumed, either
 *     at once or from a helper thread 1 ms later while the call is already waiting (the input
 *     chooses when it pauses);
 *   - with crew_hooks.on_start / on_stop installed (the input chooses): on each pool thread
 *     (workers across resizes and the shutdown, blocking threads) on_stop follows on_start,
 *     same index, and by the end of the shutdown every thread that started has stopped;
 *     crew_cancelled() is 0 in both;
 *   - callbacks that call back into their own pool (the input chooses which calls, and a
 *     budget: see reenter): on_start / on_stop act as an outside thread, on_drop as a task of
 *     the dropped task's group. From each: a submission (tracked like every other task, so the
 *     exactly-once accounting above covers it) is accepted, or refused with CREW_ESHUTDOWN
 *     exactly once a shutdown was called (CREW_EFULL with a bounded queue); a group the callback
 *     opens itself and waits for answers CREW_OK after its tasks ran (CREW_ECANCELED only if
 *     the pool drops or crew_cancel was called, and then each ran or was handed to on_drop);
 *     crew_wait_all answers CREW_OK (CREW_ECANCELED on a dropping pool), CREW_EDEADLK from
 *     on_drop; crew_resize to crew_size() (or CREW_EAGAIN) and crew_pause succeed
 *     (CREW_ESHUTDOWN once a shutdown was called), crew_resume, crew_stats_get and
 *     crew_diagnose(p, NULL) too;
 *     crew_shutdown and crew_destroy answer CREW_EDEADLK; and from on_drop on the input's
 *     thread, crew_wait on the dropped task's group answers CREW_EDEADLK. Nothing hangs, also
 *     when callbacks on blocking threads wait for blocking tasks (see bwaits).
 * A violation aborts, so libFuzzer saves the input. Hangs are caught by libFuzzer's -timeout.
 *
 * Tasks do tiny work; some spawn children into a group of their own and wait for them (nested
 * parallelism); some are CREW_TASK_BLOCKING; one in eight of the working ones calls
 * crew_diagnose_ex on its own pool. Callbacks submit plain and working tasks, and blocking
 * ones only where nothing waits for them.
 *
 * Input format. Each call starts with an op byte: bit 7 picks the pool variable, op % 22 the
 * call: 0 create (4 bytes: t = threads in t % 4, on_start/on_stop hooks if t & 4, callbacks
 * call back if t & 8 with budget 4^((t >> 4) & 3) callback invocations; scheduler/lock/spin;
 * monitoring/queue/policy/on_drop hook in bit 7; blocking/autosize; then, if t & 8, a fifth:
 * the calls the callbacks make, RE_* bits), 1-4 crew_submit / _ex / try / timed,
 * 5-7 crew_enqueue_tasks / _ex / _wait, 8-9 crew_wait, 10 crew_wait_all, 11 resize,
 * 12 stats_get, 13 stats_reset, 14 set_monitoring, 15 shutdown, 16 destroy, 17 crew_cancel,
 * 18 pause/resume,
 * 19 crew_submit_deadline (a: kind % 3, fn NULL if a & 0x1f == 0x1f, flags a >> 5: 7 unknown,
 * else bit 0 = CREW_TASK_BLOCKING; priority; d: start-by choice d % 8 as in start_by_for, a
 * spawning task's children (d >> 2) two bits each: none, past, microseconds, never; then the
 * group byte as in pick_group), 20 crew_diagnose (a: a % 3 the output, a & 4 the plain call;
 * else a byte of limits, 2 bits each, 0xc0 = all UINT_MAX), 21 crew_size and
 * crew_stats_threads. The operands follow in the order the op functions read them (u8, u32,
 * pick_group); missing bytes read as 0. Seeds written before ops 19-21 existed (op % 19)
 * decode alike for pool 0 (op bytes below 19), not always for pool 1; seeds written before
 * the callbacks called back have t < 4 and decode alike. Built with clang
 * -fsanitize=fuzzer,address,undefined against the library's sources directly (fuzz/run.sh).
 * API_FUZZ_TRACE=1 prints every checked call; API_FUZZ_NO_BWAITS=1 leaves out the waits of
 * bwaits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* unsetenv */
#endif
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#include "crew.h"

#define MAX_OPS 300
#define MAX_REC 2048   /* task records per input (top-level and children) */
#define MAX_GROUPS 32  /* tracked groups per pool */
#define NPOOLS 2

/* ---- failure ------------------------------------------------------------------------------ */

static unsigned op_index; /* the failing call's position in the input, for the report */

#define FAIL(...)                                                                                \
    do {                                                                                         \
        fprintf(stderr, "api_fuzz: op %u: ", op_index);                                          \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fputc('\n', stderr);                                                                     \
        abort();                                                                                 \
    } while (0)

#define BIT(e) (1u << (unsigned)-(e)) /* a set of error codes as a bit mask */
#define OKBIT 1u

static bool tracing; /* API_FUZZ_TRACE=1: print every checked call (to read a crash input) */

/* rc must be CREW_OK or a code in the mask. */
static void expect(const char *call, int rc, unsigned allowed) {
    if (tracing)
        fprintf(stderr, "api_fuzz: op %u: %s -> %s\n", op_index, call, crew_err_name(rc));
    if (rc > 0 || rc < -31 || !(allowed & (rc == 0 ? OKBIT : BIT(rc))))
        FAIL("%s returned %d (%s), not a documented result here", call, rc, crew_err_name(rc));
}

/* ---- task records ------------------------------------------------------------------------- */

typedef struct pool_state pool_state;

typedef struct rec {
    atomic_int runs;      /* times its function started */
    atomic_bool accepted; /* the submitting call returned CREW_OK */
    int kind;             /* 0 plain, 1 a little work, 2 spawns children and waits */
    pool_state *ps;       /* the pool it was submitted to */
    unsigned incarnation; /* of that pool variable */
    int group;            /* tracked group index, -1 none or untracked */
    atomic_bool saw_cancel; /* crew_cancelled() returned 1 inside it */
    atomic_int drops;     /* times crew_hooks.on_drop was handed it */
    bool dl;              /* it has a start-by time that can pass (crew_submit_deadline) */
    bool past;            /* ... one already past when it was submitted: it must never run */
    unsigned cdl;         /* kind 2 from op_deadline: its children's start-by choices */
    bool hook;            /* submitted from a callback (on_start, on_stop, on_drop) */
} rec;

static rec recs[MAX_REC];
static crew_task tmem[MAX_REC]; /* caller-owned task structs (crew_enqueue_*): one per record */
static atomic_uint nrec;

struct pool_state {
    crew_pool *p;
    unsigned incarnation;
    bool shut;          /* crew_shutdown called */
    bool may_drop;      /* CREW_CANCEL shutdown or CREW_FULL_DROP_OLDEST: tasks may be dropped */
    bool full_drops;    /* CREW_FULL_DROP_OLDEST: the full queue may drop tasks */
    bool cancel_shut;   /* crew_shutdown(CREW_CANCEL) called: crew_wait_all may say ECANCELED */
    bool stats_exact;   /* monitoring on since crew_create, never off or reset */
    bool bounded;       /* queue_capacity != 0 */
    bool autosize;      /* a sizing controller resizes the pool too */
    crew_handle groups[MAX_GROUPS];
    unsigned ngroups;
    bool gcancel[MAX_GROUPS]; /* crew_cancel returned CREW_OK for this tracked group */
    bool cancel_untracked;    /* ... for a group that is not tracked (children, forged) */
    bool paused;              /* crew_pause returned CREW_OK, no resume or shutdown since */
    bool resume_late;         /* resume from a helper thread while the next wait waits */
    bool hooks;               /* crew_hooks.on_drop installed: every drop is handed to it */
    bool block_full;          /* bounded, CREW_FULL_BLOCK: a worker must not wait for room */
    bool gdl[MAX_GROUPS];     /* a task that may expire (rec.dl) joined this tracked group */
    int gfinal[MAX_GROUPS];   /* the answer of a crew_wait that saw it finished; 1 = none yet */
    bool greported[MAX_GROUPS]; /* a crew_wait returned its loss: the loss may be let go since
                                   (crew.h, crew_wait) */
    atomic_bool dl_untracked; /* a task that may expire went to an untracked group (set before
                                 the submission: nested waits read it) */
    /* Callbacks that call back into the pool (the input chooses at crew_create). The callbacks
     * run on the pool's threads: they read only the fields fixed before hp is published, and
     * the atomics below. */
    bool thread_hooks;        /* crew_hooks.on_start / on_stop installed */
    unsigned reenter;         /* RE_* calls each callback makes (0: none) */
    _Atomic(crew_pool *) hp;  /* the pool, for the callbacks: set (release) once crew_create has
                                 returned and every field they read is set; NULL before */
    atomic_int budget;        /* callback invocations that may still make calls */
    atomic_bool closing;      /* a crew_shutdown was called (set before the call) */
    atomic_bool pool_drops;   /* the pool may drop tasks itself: CREW_FULL_DROP_OLDEST, or a
                                 CREW_CANCEL shutdown was called (set before the call) */
    atomic_bool cancel_tried; /* crew_cancel was called on the pool (set before the call) */
    atomic_uint starts, stops; /* on_start / on_stop calls */
    atomic_uint reentered;    /* callback invocations that made calls */
};

static pool_state pools[NPOOLS];

/* n new consecutive records (tasks spawning children allocate concurrently, so the block is
 * reserved in one step), or NULL when the input has used them all. */
static rec *new_recs(pool_state *ps, int kind, int group, unsigned n) {
    unsigned i = atomic_fetch_add(&nrec, n);
    if (i + n > MAX_REC)
        return NULL;
    for (unsigned k = 0; k < n; k++) {
        rec *r = &recs[i + k];
        atomic_store(&r->runs, 0);
        atomic_store(&r->accepted, false);
        r->kind = kind;
        r->ps = ps;
        r->incarnation = ps->incarnation;
        r->group = group;
        atomic_store(&r->saw_cancel, false);
        atomic_store(&r->drops, 0);
        r->dl = r->past = false;
        r->cdl = 0;
        r->hook = false;
    }
    return &recs[i];
}

static rec *new_rec(pool_state *ps, int kind, int group) { return new_recs(ps, kind, group, 1); }

/* A start-by time for crew_submit_deadline from choice c; marks r as one that may expire
 * (r->dl) and, if the time has already passed, as one that must never run (r->past). No check
 * depends on timing: a task taken just before its start-by time runs after it, and one with a
 * few microseconds to go may run or expire. */
static uint64_t start_by_for(unsigned c, rec *r) {
    uint64_t now = crew_now_ns();
    switch (c % 8) {
    case 0: /* none: crew_submit_ex */
        return 0;
    case 1: /* long past */
        r->dl = r->past = true;
        return 1;
    case 2: /* just past: a thread compares its clock, read later, with > */
        r->dl = r->past = true;
        return now - 1;
    case 3: /* a few microseconds ahead */
        r->dl = true;
        return now + 1000u * (1 + (c >> 3) % 8);
    case 4: /* exactly now: not past (the check is strictly later), likely expires */
        r->dl = true;
        return now;
    case 5: /* tens of microseconds ahead */
        r->dl = true;
        return now + 20000u + 10000u * ((c >> 3) % 4);
    case 6: /* far ahead: an hour (may expire in principle; nothing is asserted) */
        r->dl = true;
        return now + 3600ull * 1000000000u;
    default: /* the end of time: can never pass, so it must behave as no start-by time */
        return UINT64_MAX;
    }
}

static void task_fn(void *arg);

/* Children: spawned by a kind-2 task into a group of its own on the same pool. */
static void child_fn(void *arg) {
    rec *r = arg;
    if (atomic_fetch_add(&r->runs, 1) != 0)
        FAIL("a child task ran twice");
    if (r->past)
        FAIL("a child task whose start-by time had passed when it was submitted ran");
    if (atomic_load(&r->drops) != 0)
        FAIL("a child task handed to on_drop ran");
}

enum { IN_START, IN_STOP, IN_DROP };
static void reenter(pool_state *ps, int where, const rec *dropped);

/* crew_hooks.on_drop (arg: the pool_state): each task it gets was submitted to this pool and
 * never ran, and it gets each at most once. Then it may call back into the pool (reenter). */
static void on_drop(crew_fn fn, void *task_arg, void *arg) {
    pool_state *ps = arg;
    uintptr_t a = (uintptr_t)task_arg;
    if (fn != task_fn && fn != child_fn)
        FAIL("on_drop got function %p, never submitted", (void *)(uintptr_t)fn);
    if (a < (uintptr_t)recs || a >= (uintptr_t)(recs + MAX_REC) ||
        (a - (uintptr_t)recs) % sizeof(rec) != 0)
        FAIL("on_drop got argument %p, never submitted", task_arg);
    rec *r = task_arg;
    if (r->ps != ps)
        FAIL("on_drop of pool %d got task %u of pool %d", (int)(ps - pools), (unsigned)(r - recs),
             (int)(r->ps - pools));
    if (atomic_fetch_add(&r->drops, 1) != 0)
        FAIL("task %u was handed to on_drop twice", (unsigned)(r - recs));
    if (atomic_load(&r->runs) != 0)
        FAIL("task %u was handed to on_drop after it ran", (unsigned)(r - recs));
    reenter(ps, IN_DROP, r);
}

static void task_fn(void *arg) {
    rec *r = arg;
    if (atomic_fetch_add(&r->runs, 1) != 0)
        FAIL("a task ran twice");
    if (r->past)
        FAIL("task %u ran, but its start-by time had passed when it was submitted",
             (unsigned)(r - recs));
    if (atomic_load(&r->drops) != 0)
        FAIL("task %u ran after it was handed to on_drop", (unsigned)(r - recs));
    int c = crew_cancelled();
    if (c != 0 && c != 1)
        FAIL("crew_cancelled() returned %d", c);
    if (c) {
        atomic_store(&r->saw_cancel, true);
        return; /* stop early, as crew.h suggests */
    }
    if (r->kind == 1) {
        volatile unsigned x = 0;
        for (unsigned i = 0; i < 200; i++)
            x += i;
        (void)x;
        if ((r - recs) % 8 == 5) { /* crew_diagnose from inside a task: safe, only counts */
            int rc = crew_diagnose_ex(r->ps->p, NULL, 0, 0, 0);
            if (rc < 0)
                FAIL("crew_diagnose_ex from a task returned %d (%s)", rc, crew_err_name(rc));
        }
    } else if (r->kind == 2) {
        /* Nested spawn-and-wait. crew_try_submit never waits for room, so a worker never
         * blocks on a full bounded queue that only workers drain. */
        crew_pool *p = r->ps->p;
        crew_handle h = CREW_HANDLE_NONE;
        rec *kids[3];
        int nk = 0;
        bool kid_dl = false;
        /* Children with start-by times (op_deadline chose them), unless the queue is bounded
         * with CREW_FULL_BLOCK: crew_submit_deadline would wait for room there. */
        bool deadlines = r->cdl != 0 && !r->ps->block_full;
        for (int i = 0; i < 3; i++) {
            rec *c = new_rec(r->ps, 0, -1);
            if (!c)
                break;
            c->incarnation = r->incarnation;
            int rc;
            if (deadlines) {
                static const unsigned choice[4] = {0, 1, 3, 7}; /* none, past, µs ahead, never */
                uint64_t sb = start_by_for(choice[(r->cdl >> (2 * i)) & 3], c);
                rc = crew_submit_deadline(p, child_fn, c, (uint32_t)i, 0, sb, &h);
                kid_dl |= c->dl;
            } else {
                rc = crew_try_submit(p, child_fn, c, (uint32_t)i, &h);
            }
            expect(deadlines ? "crew_submit_deadline (child)" : "crew_try_submit (child)", rc,
                   BIT(CREW_ESHUTDOWN) | BIT(CREW_EFULL) | BIT(CREW_ENOMEM) |
                       BIT(CREW_ECANCELED) | OKBIT); /* never ESTALE: see note_group */
            if (rc == CREW_EFULL && !r->ps->bounded)
                FAIL("a child's submission: CREW_EFULL without a bounded queue");
            if (rc == CREW_OK) {
                atomic_store(&c->accepted, true);
                kids[nk++] = c;
            }
        }
        if (h.slot != 0) {
            int rc = crew_wait(p, h);
            /* CREW_EEXPIRED: a child with a start-by time, or a forged handle that put a top-level
             * task with one into this group. */
            expect("crew_wait (nested)", rc, OKBIT | BIT(CREW_ECANCELED) | BIT(CREW_EEXPIRED));
            if (rc == CREW_EEXPIRED && !kid_dl && !atomic_load(&r->ps->dl_untracked))
                FAIL("nested crew_wait: CREW_EEXPIRED, but no task of the group had a start-by "
                     "time");
            if (rc == CREW_OK)
                for (int i = 0; i < nk; i++)
                    if (atomic_load(&kids[i]->runs) != 1)
                        FAIL("nested crew_wait returned CREW_OK before a child ran");
            if (rc == CREW_EEXPIRED) /* finished, and lost only tasks that may expire */
                for (int i = 0; i < nk; i++)
                    if (!kids[i]->dl && atomic_load(&kids[i]->runs) != 1)
                        FAIL("nested crew_wait returned CREW_EEXPIRED, but a child without a "
                             "start-by time did not run");
        }
    }
}

/* ---- callbacks that call back into the pool ----------------------------------------------- */

/* The calls a callback makes (pool_state.reenter, from the input), in this order. */
#define RE_SUBMIT 0x01u   /* one tracked task, no group */
#define RE_WAIT 0x02u     /* a group of two tracked tasks it opens itself, then crew_wait on it */
#define RE_WAIT_ALL 0x04u /* crew_wait_all: CREW_EDEADLK from on_drop */
#define RE_RESIZE 0x08u   /* crew_size, crew_resize to it */
#define RE_PAUSE 0x10u    /* crew_pause, crew_paused, crew_resume */
#define RE_STATS 0x20u    /* crew_stats_get, crew_diagnose to NULL, crew_cancelled() */
#define RE_DEADLK 0x40u   /* crew_shutdown and crew_destroy: CREW_EDEADLK; from on_drop on the
                             input's thread, also crew_wait on the dropped task's group */
#define RE_BLOCKING 0x80u /* RE_SUBMIT's task is CREW_TASK_BLOCKING every other time */
#define RE_DEPTH_MAX 2    /* callbacks making calls, nested on one thread (on_drop in a drop
                             that a callback's own submission caused, ...) */

static _Thread_local bool main_thread;       /* this thread runs the input */
static _Thread_local unsigned cb_depth;       /* callbacks making calls on this thread now */
static _Thread_local pool_state *started_for; /* on_start ran on this thread, for this pool */
static _Thread_local unsigned started_index;  /* ... with this index */

static const char *const in_name[] = {"on_start", "on_stop", "on_drop"};

/* Waits on a blocking thread for blocking tasks: crew_wait_all in a blocking thread's
 * on_start; crew_wait on a group holding a blocking task from on_drop on a blocking thread (an
 * expired blocking task), or from the body of a blocking task. At most max_blocking blocking
 * threads exist (one in its on_start counts), so these hung once all of them waited, until
 * waiting blocking threads ran blocking tasks themselves (crew__blocking_help); this fuzzer
 * found them (seeds reentry_bthread*). bwaits (the default) makes those waits;
 * API_FUZZ_NO_BWAITS=1 leaves them out: no group a callback waits for gets a blocking task,
 * and no callback waits while a blocking thread's on_start runs (nested on_drop included). */
static bool bwaits;
static _Thread_local bool in_bstart; /* this blocking thread is in its on_start */

/* One tracked task submitted from a callback (into *h if h is not NULL): never with a call
 * that could wait for room (a worker's on_drop waiting for room only workers make), so
 * crew_try_submit under CREW_FULL_BLOCK, else crew_submit (which may run it right here, or
 * drop the oldest task: on_drop again, on this thread), or (RE_BLOCKING, every other task,
 * unless no_blocking) crew_submit_ex with CREW_TASK_BLOCKING, which the bounded queue does not
 * count. Returns its record if accepted. */
static rec *cb_submit(pool_state *ps, crew_pool *p, int where, crew_handle *h,
                      bool no_blocking) {
    rec *r = new_rec(ps, 1 - (int)(atomic_load(&nrec) & 1), -1); /* kind 0 or 1 */
    if (!r)
        return NULL;
    r->hook = true;
    bool blocking = (ps->reenter & RE_BLOCKING) && (r - recs) % 2 == 0 && !no_blocking;
    bool had_group = h && h->slot != 0;
    uint32_t prio = (uint32_t)(r - recs) % 4;
    int rc;
    const char *call;
    if (blocking)
        rc = crew_submit_ex(p, task_fn, r, prio, CREW_TASK_BLOCKING, h),
        call = "crew_submit_ex(BLOCKING)";
    else if (ps->block_full)
        rc = crew_try_submit(p, task_fn, r, prio, h), call = "crew_try_submit";
    else
        rc = crew_submit(p, task_fn, r, prio, h), call = "crew_submit";
    char what[80];
    snprintf(what, sizeof what, "%s: %s", in_name[where], call);
    /* ESHUTDOWN exactly once a shutdown was called; EFULL only with a bounded queue; a second
     * task for the group: ECANCELED (the group was cancelled: a forged handle can name it),
     * never ESTALE (a finished group is replaced: see note_group). */
    unsigned ok = OKBIT | BIT(CREW_ENOMEM);
    if (atomic_load(&ps->closing))
        ok |= BIT(CREW_ESHUTDOWN);
    if (ps->bounded && !blocking)
        ok |= BIT(CREW_EFULL);
    if (blocking)
        ok |= BIT(CREW_EAGAIN); /* no blocking thread could be started */
    if (had_group)
        ok |= atomic_load(&ps->pool_drops) || atomic_load(&ps->cancel_tried) ? BIT(CREW_ECANCELED)
                                                                             : 0u;
    expect(what, rc, ok);
    if (rc != CREW_OK)
        return NULL;
    atomic_store(&r->accepted, true);
    if (h && h->slot == 0)
        FAIL("%s: a submission that opened a group left the handle empty", what);
    return r;
}

/* A callback calls back into its own pool: one pass over the calls ps->reenter names (at most
 * a dozen calls) per invocation, in at most ps->budget invocations per pool, at most
 * RE_DEPTH_MAX nested on one thread (so an on_drop whose submission drops another task ends);
 * never before crew_create has returned (on_start of the first workers may run before), nor
 * once destroy_pool's shutdown is over (hp is cleared). On_drop runs as a
 * task of the dropped task's group: crew_wait_all, crew_shutdown and crew_destroy answer
 * CREW_EDEADLK, and so does crew_wait on that group. On_start and on_stop act as an outside
 * thread: everything works, crew_shutdown and crew_destroy answer CREW_EDEADLK. Once a
 * shutdown has begun, submissions, crew_resize and crew_pause answer CREW_ESHUTDOWN. */
static void reenter(pool_state *ps, int where, const rec *dropped) {
    crew_pool *p = atomic_load_explicit(&ps->hp, memory_order_acquire);
    if (!p || !ps->reenter || cb_depth >= RE_DEPTH_MAX)
        return;
    if (atomic_fetch_sub(&ps->budget, 1) <= 0)
        return;
    cb_depth++;
    atomic_fetch_add(&ps->reentered, 1);
    unsigned re = ps->reenter;
    bool frame = where == IN_DROP; /* runs as a task of the pool */
    /* No waits where they could never return: on the input's thread (on_drop in crew_cancel,
     * a drop-oldest submission, a cancelling shutdown) while the input has paused the pool;
     * in a blocking thread's on_start (see bwaits). */
    bool may_sleep = !(main_thread && ps->paused) && !(in_bstart && !bwaits);
    const char *in = in_name[where];
    char what[96];
    int rc;

    if (re & RE_SUBMIT)
        cb_submit(ps, p, where, NULL, false);

    if ((re & RE_WAIT) && may_sleep) {
        crew_handle h = CREW_HANDLE_NONE;
        rec *mine[2];
        int n = 0;
        for (int i = 0; i < 2; i++) {
            rec *r = cb_submit(ps, p, where, &h, !bwaits);
            if (r)
                mine[n++] = r;
        }
        if (h.slot != 0) {
            rc = crew_wait(p, h);
            snprintf(what, sizeof what, "%s: crew_wait on a group of its own", in);
            /* ECANCELED: a task dropped (drop-oldest, a cancelling shutdown) or the group
             * cancelled through a forged handle; EEXPIRED: a forged handle put a task with a
             * start-by time into it. */
            expect(what, rc,
                   OKBIT |
                       (atomic_load(&ps->pool_drops) || atomic_load(&ps->cancel_tried)
                            ? BIT(CREW_ECANCELED)
                            : 0u) |
                       (atomic_load(&ps->dl_untracked) ? BIT(CREW_EEXPIRED) : 0u));
            for (int i = 0; i < n; i++) {
                int runs = atomic_load(&mine[i]->runs), drops = atomic_load(&mine[i]->drops);
                if (rc == CREW_OK && runs != 1)
                    FAIL("%s returned CREW_OK but its task %u ran %d times", what,
                         (unsigned)(mine[i] - recs), runs);
                if (rc != CREW_OK && ps->hooks && runs + drops != 1)
                    FAIL("%s returned %s but its task %u ran %d times and was dropped %d times",
                         what, crew_err_name(rc), (unsigned)(mine[i] - recs), runs, drops);
            }
        }
    }

    if (re & RE_WAIT_ALL) {
        snprintf(what, sizeof what, "%s: crew_wait_all", in);
        if (frame)
            expect(what, crew_wait_all(p), BIT(CREW_EDEADLK));
        else if (may_sleep)
            expect(what, crew_wait_all(p),
                   OKBIT | (atomic_load(&ps->pool_drops) ? BIT(CREW_ECANCELED) : 0u));
    }

    if (re & RE_RESIZE) {
        unsigned n = crew_size(p);
        if (n == 0 || n > CREW_MAX_THREADS)
            FAIL("%s: crew_size = %u", in, n);
        rc = crew_resize(p, n);
        snprintf(what, sizeof what, "%s: crew_resize(%u)", in, n);
        expect(what, rc,
               OKBIT | BIT(CREW_EAGAIN) |
                   (atomic_load(&ps->closing) ? BIT(CREW_ESHUTDOWN) : 0u));
    }

    if (re & RE_PAUSE) {
        rc = crew_pause(p);
        snprintf(what, sizeof what, "%s: crew_pause", in);
        expect(what, rc, OKBIT | (atomic_load(&ps->closing) ? BIT(CREW_ESHUTDOWN) : 0u));
        int pz = crew_paused(p);
        if (pz != 0 && pz != 1)
            FAIL("%s: crew_paused = %d", in, pz);
        snprintf(what, sizeof what, "%s: crew_resume", in);
        expect(what, crew_resume(p), OKBIT);
    }

    if (re & RE_STATS) {
        crew_stats st;
        memset(&st, 0, sizeof st);
        st.size = sizeof st;
        snprintf(what, sizeof what, "%s: crew_stats_get", in);
        expect(what, crew_stats_get(p, &st), OKBIT | BIT(CREW_ENOMEM));
        rc = crew_diagnose(p, NULL);
        if (rc < 0)
            FAIL("%s: crew_diagnose(p, NULL) returned %d (%s)", in, rc, crew_err_name(rc));
        int c = crew_cancelled();
        if (c != 0 && (c != 1 || !frame))
            FAIL("%s: crew_cancelled() returned %d", in, c);
    }

    if (re & RE_DEADLK) {
        snprintf(what, sizeof what, "%s: crew_shutdown", in);
        expect(what, crew_shutdown(p, (int)(atomic_load(&nrec) & 1)), BIT(CREW_EDEADLK));
        snprintf(what, sizeof what, "%s: crew_destroy", in);
        expect(what, crew_destroy(p), BIT(CREW_EDEADLK));
        /* The dropped task's group cannot finish while its on_drop runs. Only on the input's
         * thread, which owns the group table (and the record's group index), and only once the
         * submission has returned: a task that the submitting call itself runs and drops (a
         * full queue's CREW_FULL_CALLER_RUNS, past its start-by time) may have opened a new
         * group in a handle the table gets only after the call (pick_group's copy), so the
         * table still names the handle's finished group then. */
        if (frame && main_thread && dropped && atomic_load(&dropped->accepted) &&
            dropped->group >= 0 && (unsigned)dropped->group < ps->ngroups) {
            snprintf(what, sizeof what, "%s: crew_wait on the dropped task's group %d", in,
                     dropped->group);
            expect(what, crew_wait(p, ps->groups[dropped->group]), BIT(CREW_EDEADLK));
        }
    }
    cb_depth--;
}

/* crew_hooks.on_start / on_stop (the input installs them): paired on each thread, with one
 * index; no task frame (crew_cancelled() is 0); then they may call back into the pool. */
static void on_start(unsigned index, void *arg) {
    pool_state *ps = arg;
    if (started_for)
        FAIL("on_start(%u) ran on a thread that had already run on_start(%u)", index,
             started_index);
    started_for = ps;
    started_index = index;
    atomic_fetch_add(&ps->starts, 1);
    if (crew_cancelled() != 0)
        FAIL("crew_cancelled() is 1 in on_start");
    in_bstart = index >= CREW_MAX_THREADS;
    reenter(ps, IN_START, NULL);
    in_bstart = false;
}

static void on_stop(unsigned index, void *arg) {
    pool_state *ps = arg;
    if (started_for != ps || started_index != index)
        FAIL("on_stop(%u) of pool %d ran on a thread whose on_start was %s(%u)", index,
             (int)(ps - pools), started_for ? "of another pool " : "never run ", started_index);
    if (crew_cancelled() != 0)
        FAIL("crew_cancelled() is 1 in on_stop");
    reenter(ps, IN_STOP, NULL);
    started_for = NULL;
    atomic_fetch_add(&ps->stops, 1);
}

/* ---- input -------------------------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *d;
    size_t n, i;
} reader;

static unsigned u8(reader *r) { return r->i < r->n ? r->d[r->i++] : 0; }
static uint32_t u32(reader *r) {
    uint32_t v = u8(r);
    if (v >= 0xf0) /* now and then a large priority */
        v = (uint32_t)u8(r) << 24 | (uint32_t)u8(r) << 8 | u8(r);
    return v;
}

/* ---- checks at the end of a pool's life ----------------------------------------------------- */

/* Is this answer of crew_wait for tracked group g the same as any earlier one? A finished group
 * keeps its answer: CREW_OK for good once its slot moved on, CREW_ECANCELED and CREW_EEXPIRED
 * until a wait has reported it and 256 more losses have been (crew.h), then CREW_OK. Every
 * crew_cancel here returns before the next wait begins, so none can mark the group after a
 * wait saw it finished. */
static void note_final(pool_state *ps, int g, int rc, const char *when) {
    if (rc != CREW_OK && rc != CREW_ECANCELED && rc != CREW_EEXPIRED)
        return;
    if (rc != CREW_OK)
        ps->greported[g] = true;
    if (ps->gfinal[g] != 1 && ps->gfinal[g] != rc && !(rc == CREW_OK && ps->greported[g]))
        FAIL("%s: group %d (slot %u gen %u) answered %s, earlier %s", when, g,
             ps->groups[g].slot, ps->groups[g].gen, crew_err_name(rc),
             crew_err_name(ps->gfinal[g]));
    ps->gfinal[g] = rc;
}

/* Did a drop other than by a start-by time ever become possible on this pool? */
static bool other_drops(const pool_state *ps) {
    bool any = ps->may_drop || ps->cancel_untracked;
    for (unsigned g = 0; g < ps->ngroups; g++)
        any |= ps->gcancel[g];
    return any;
}

/* Every tracked group of a shut-down pool answers as its tasks went: CREW_ECANCELED if it lost a
 * task without a start-by time; if it lost only tasks with one, CREW_EEXPIRED (or CREW_ECANCELED
 * if crew_cancel or the pool could have dropped them instead); CREW_OK if it lost none. */
static void check_groups_after_shutdown(pool_state *ps) {
    for (unsigned g = 0; g < ps->ngroups; g++) {
        bool lost_plain = false, lost_dl = false;
        unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
        for (unsigned i = 0; i < n; i++) {
            rec *r = &recs[i];
            if (r->ps == ps && r->incarnation == ps->incarnation && r->group == (int)g &&
                atomic_load(&r->accepted) && atomic_load(&r->runs) == 0) {
                if (r->dl)
                    lost_dl = true;
                else
                    lost_plain = true;
                if (tracing)
                    fprintf(stderr,
                            "api_fuzz: group %u: task %u (kind %d%s) accepted, not run\n", g, i,
                            r->kind, r->dl ? ", start-by time" : "");
            }
        }
        int rc = crew_wait(ps->p, ps->groups[g]);
        bool droppable = ps->gcancel[g] || ps->may_drop;
        bool ok;
        if (lost_plain)
            ok = rc == CREW_ECANCELED;
        else if (lost_dl)
            ok = rc == CREW_EEXPIRED || (rc == CREW_ECANCELED && droppable);
        else /* a group crew_cancel reached may answer CREW_ECANCELED without having lost a task
              * (cancelled after its last task started) */
            ok = rc == CREW_OK || (rc == CREW_ECANCELED && ps->gcancel[g]);
        ok = ok || (rc == CREW_OK && ps->greported[g]); /* a reported loss may be let go */
        if (!ok)
            FAIL("after shutdown, group %u (slot %u gen %u) %s but crew_wait returned %s", g,
                 ps->groups[g].slot, ps->groups[g].gen,
                 lost_plain ? "lost a task without a start-by time"
                 : lost_dl  ? "lost only tasks with start-by times"
                            : "lost no task",
                 crew_err_name(rc));
        note_final(ps, (int)g, rc, "after shutdown");
    }
}

static void destroy_pool(pool_state *ps) {
    if (!ps->p)
        return;
    /* Shut down (drain unless already done), then look at the pool before freeing it. */
    atomic_store(&ps->closing, true);
    expect("crew_shutdown", crew_shutdown(ps->p, CREW_DRAIN), OKBIT);
    if (crew_paused(ps->p) != 0)
        FAIL("crew_paused is 1 after crew_shutdown (it resumes)");
    ps->paused = false;
    /* Every pool thread has exited: each on_start was matched by an on_stop. */
    unsigned starts = atomic_load(&ps->starts), stops = atomic_load(&ps->stops);
    if (ps->thread_hooks && starts != stops)
        FAIL("after shutdown: on_start ran %u times, on_stop %u times", starts, stops);
    if (tracing && ps->thread_hooks)
        fprintf(stderr, "api_fuzz: pool %d: %u threads started and stopped, %u callbacks "
                "called back\n", (int)(ps - pools), starts, atomic_load(&ps->reentered));
    check_groups_after_shutdown(ps);
    unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
    uint64_t accepted = 0, ran = 0, dl_lost = 0;
    for (unsigned i = 0; i < n; i++) {
        rec *r = &recs[i];
        if (r->ps != ps || r->incarnation != ps->incarnation)
            continue;
        int runs = atomic_load(&r->runs), drops = atomic_load(&r->drops);
        bool acc = atomic_load(&r->accepted);
        if (!acc && runs != 0)
            FAIL("task %u was refused but ran", i);
        if (!acc && drops != 0)
            FAIL("task %u was refused but handed to on_drop", i);
        /* With on_drop installed, every accepted task ran or was handed to it (exactly once:
         * both counts are checked as they happen). */
        if (acc && ps->hooks && runs + drops != 1)
            FAIL("task %u was accepted, ran %d times and was dropped %d times", i, runs, drops);
        if (acc && r->past && ps->hooks && drops != 1)
            FAIL("task %u's start-by time had passed at submission, but on_drop never got it",
                 i);
        bool cancellable = r->group >= 0 ? ps->gcancel[r->group] : ps->cancel_untracked;
        if (acc && runs == 0 && !ps->may_drop && !cancellable && !r->dl)
            FAIL("task %u was accepted and never ran, without a start-by time, on a pool that "
                 "drops nothing",
                 i);
        if (atomic_load(&r->saw_cancel) && !ps->may_drop && !cancellable)
            FAIL("crew_cancelled() was 1 in task %u, whose group was not cancelled", i);
        accepted += acc;
        ran += (uint64_t)runs;
        dl_lost += acc && runs == 0 && r->dl;
    }
    crew_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    int src = crew_stats_get(ps->p, &st);
    expect("crew_stats_get", src, OKBIT | BIT(CREW_ENOMEM));
    /* Every accepted task that did not run was cancelled or expired; only a task with a
     * start-by time can expire; without any other way to drop, all were expired. */
    if (src == CREW_OK && ps->stats_exact &&
        (st.submitted != accepted || st.completed != ran ||
         st.cancelled + st.expired != accepted - ran || st.expired > dl_lost ||
         (!other_drops(ps) && st.expired != dl_lost)))
        FAIL("stats: submitted %llu completed %llu cancelled %llu expired %llu, but accepted "
             "%llu ran %llu (not run, with a start-by time: %llu)",
             (unsigned long long)st.submitted, (unsigned long long)st.completed,
             (unsigned long long)st.cancelled, (unsigned long long)st.expired,
             (unsigned long long)accepted, (unsigned long long)ran, (unsigned long long)dl_lost);
    atomic_store(&ps->hp, NULL);
    expect("crew_destroy", crew_destroy(ps->p), OKBIT);
    ps->p = NULL;
}

/* ---- the operations ------------------------------------------------------------------------- */

/* Never CREW_ESTALE: a submission through a finished group's handle opens a new group. */
static const unsigned SUBMIT_ERRS = OKBIT | BIT(CREW_EINVAL) | BIT(CREW_ESHUTDOWN) |
                                    BIT(CREW_ENOMEM) | BIT(CREW_ERANGE) | BIT(CREW_EFULL) |
                                    BIT(CREW_ETIMEDOUT);

static void op_create(reader *in, pool_state *ps) {
    crew_config c;
    crew_config_init(&c);
    unsigned t = u8(in);
    c.threads = t == 0xff ? CREW_MAX_THREADS + 1 : t % 4; /* 0: one per core */
    unsigned s = u8(in);
    c.scheduler = s % 6;  /* 5: unknown */
    c.lock = (s >> 4) & 1;
    c.spin = (unsigned[]){0, 1, 64}[(s >> 5) % 3];
    unsigned m = u8(in);
    c.monitoring = m & 1;
    if (m & 2) {
        c.queue_capacity = 1 + (m >> 2) % 6;
        c.full_policy = (m >> 5) & 3;
    }
    unsigned b = u8(in);
    c.max_blocking = 1 + b % 2;
    c.blocking_idle_ms = 1 + (b >> 1) % 20;
    /* m's top bit: crew_hooks with on_drop, which then must see every dropped task. t's bit 2:
     * on_start and on_stop; bit 3: the callbacks call back into the pool, the calls in one more
     * byte (RE_*), (t >> 4) & 3 their budget. */
    unsigned re = t & 8 ? u8(in) : 0;
    crew_hooks hk;
    memset(&hk, 0, sizeof hk);
    hk.size = sizeof hk;
    hk.arg = ps;
    if (m & 0x80)
        hk.on_drop = on_drop;
    if (t & 4) {
        hk.on_start = on_start;
        hk.on_stop = on_stop;
    }
    if (hk.on_drop || hk.on_start)
        c.hooks = &hk;
    if ((b >> 6) == 3) { /* now and then a sizing controller */
        c.autosize = 1 + ((b >> 5) & 1);
        c.min_threads = 1;
        c.max_threads = 3;
        c.autosize_period_ms = 5;
    }
    bool invalid = c.threads > CREW_MAX_THREADS || c.scheduler > 4;
    if (ps->p) { /* the variable is taken: exercise the NULL out pointer instead */
        expect("crew_create(NULL)", crew_create(NULL, &c), BIT(CREW_EINVAL));
        return;
    }
    if (tracing)
        fprintf(stderr,
                "api_fuzz: op %u: config threads %u scheduler %u lock %u spin %u monitoring %d "
                "capacity %u policy %u max_blocking %u autosize %u on_drop %d on_start/stop %d "
                "calls back 0x%x budget %u\n",
                op_index, c.threads, c.scheduler, c.lock, c.spin, c.monitoring, c.queue_capacity,
                c.full_policy, c.max_blocking, c.autosize, hk.on_drop != NULL,
                hk.on_start != NULL, re, 1u << 2 * ((t >> 4) & 3));
    /* What the callbacks read is fixed before any of them runs; they make no call until hp
     * is published below (the first workers' on_start may run before crew_create returns, and
     * on_stop inside it if it fails). */
    atomic_store(&ps->hp, NULL);
    ps->thread_hooks = hk.on_start != NULL;
    ps->reenter = re;
    atomic_store(&ps->budget, (int)(1u << 2 * ((t >> 4) & 3))); /* 1, 4, 16 or 64 */
    atomic_store(&ps->closing, false);
    atomic_store(&ps->pool_drops, c.queue_capacity && c.full_policy == CREW_FULL_DROP_OLDEST);
    atomic_store(&ps->cancel_tried, false);
    atomic_store(&ps->starts, 0);
    atomic_store(&ps->stops, 0);
    atomic_store(&ps->reentered, 0);
    crew_pool *p = NULL;
    int rc = crew_create(&p, &c);
    if (invalid) {
        expect("crew_create (invalid config)", rc, BIT(CREW_EINVAL));
        return;
    }
    expect("crew_create", rc, OKBIT | BIT(CREW_ENOMEM) | BIT(CREW_EAGAIN));
    if (rc != CREW_OK)
        return;
    ps->p = p;
    ps->incarnation++;
    ps->shut = false;
    ps->may_drop = c.queue_capacity && c.full_policy == CREW_FULL_DROP_OLDEST;
    ps->full_drops = ps->may_drop;
    ps->cancel_shut = false;
    ps->stats_exact = c.monitoring;
    ps->bounded = c.queue_capacity != 0;
    ps->autosize = c.autosize != CREW_AUTOSIZE_OFF;
    ps->ngroups = 0;
    memset(ps->gcancel, 0, sizeof ps->gcancel);
    ps->cancel_untracked = false;
    ps->paused = false;
    ps->hooks = hk.on_drop != NULL;
    ps->block_full = c.queue_capacity && c.full_policy == CREW_FULL_BLOCK;
    memset(ps->gdl, 0, sizeof ps->gdl);
    memset(ps->greported, 0, sizeof ps->greported);
    for (unsigned g = 0; g < MAX_GROUPS; g++)
        ps->gfinal[g] = 1;
    atomic_store(&ps->dl_untracked, false);
    atomic_store_explicit(&ps->hp, p, memory_order_release); /* the callbacks may call now */
}

/* Which handle a submission or wait uses. *track: the tracked group index it names, -1 if none
 * or unknown; *opens: it asks for a new group. NULL return: no group at all. */
static crew_handle *pick_group(reader *in, pool_state *ps, crew_handle *tmp, int *track,
                               bool *opens) {
    unsigned k = u8(in);
    *track = -1;
    *opens = false;
    pool_state *other = &pools[(ps - pools + 1) % NPOOLS];
    switch (k % 6) {
    case 0:
        return NULL;
    case 1:
        *tmp = CREW_HANDLE_NONE;
        *opens = true;
        return tmp;
    case 2: /* one of this pool's groups, maybe finished (stale) */
        if (ps->ngroups == 0)
            return NULL;
        *track = (int)((k >> 3) % ps->ngroups);
        *tmp = ps->groups[*track];
        return tmp;
    case 3: /* the other pool's handle */
        if (other->ngroups == 0)
            return NULL;
        *tmp = other->groups[(k >> 3) % other->ngroups];
        return tmp;
    case 4: /* forged */
        tmp->slot = u8(in);
        tmp->gen = u8(in);
        if (tmp->slot == 0 && tmp->gen == 0)
            tmp->gen = 1; /* {0, 0} would open a group */
        return tmp;
    default: /* a handle that can never be valid */
        tmp->slot = 0;
        tmp->gen = 1 + (k >> 3);
        return tmp;
    }
}

/* After an accepted submission: record a new group's handle; a forged or foreign handle that
 * the pool accepted names one of its open groups, so find which. */
static int note_group(pool_state *ps, crew_handle *h, bool opens, int track) {
    if (!opens) {
        for (unsigned g = 0; h && track < 0 && g < ps->ngroups; g++)
            if (ps->groups[g].slot == h->slot && ps->groups[g].gen == h->gen)
                track = (int)g;
        /* A tracked group that had finished: the submission opened a new group in its place
         * and stored it in *h (crew.h). The tracked index follows the handle variable: its
         * earlier tasks are done, and the new group inherits any loss. */
        if (h && track >= 0 &&
            (ps->groups[track].slot != h->slot || ps->groups[track].gen != h->gen)) {
            ps->groups[track] = *h;
            ps->gfinal[track] = 1; /* a new group: no answer seen yet */
            if (ps->greported[track]) {
                /* A wait reported the old group's loss: the new group starts clean (crew.h),
                 * so the old group's tasks (all ended) no longer count for the index; they
                 * become untracked ones, which a cancel may have dropped if it reached them. */
                if (ps->gcancel[track])
                    ps->cancel_untracked = true;
                unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
                for (unsigned i = 0; i < n; i++)
                    if (recs[i].ps == ps && recs[i].incarnation == ps->incarnation &&
                        recs[i].group == track)
                        recs[i].group = -1;
                ps->greported[track] = false;
            }
        }
        return track;
    }
    if (h->slot == 0)
        FAIL("a submission that opened a group left the handle empty");
    if (ps->ngroups < MAX_GROUPS) {
        ps->groups[ps->ngroups] = *h;
        return (int)ps->ngroups++;
    }
    return -1;
}

/* Check the result of a submission of tasks with pool ps (p may be NULL). */
static void check_submit(const char *call, int rc, pool_state *ps, crew_pool *p, bool bad_args) {
    if (!p || bad_args) {
        expect(call, rc, BIT(CREW_EINVAL));
        return;
    }
    if (ps->shut) {
        expect(call, rc, BIT(CREW_ESHUTDOWN) | BIT(CREW_EINVAL));
        return;
    }
    /* CREW_ECANCELED: adding to a group that lost a task (documented since crew_cancel). */
    bool cancels = ps->may_drop || ps->cancel_untracked;
    for (unsigned g = 0; g < ps->ngroups; g++)
        cancels |= ps->gcancel[g];
    expect(call, rc, SUBMIT_ERRS | (cancels ? BIT(CREW_ECANCELED) : 0u));
    if (!ps->bounded && (rc == CREW_EFULL || rc == CREW_ETIMEDOUT))
        FAIL("%s: %s without a bounded queue", call, crew_err_name(rc));
}

/* The operands of a single submission, in input order: a (task kind a % 3, a NULL function if
 * a & 0x1f == 0x1f, the rest per call), the priority, *extra if asked for, then the group (see
 * pick_group). Returns the task's record, NULL when the records ran out. */
typedef struct submit_ops {
    unsigned a, extra;
    uint32_t prio;
    crew_handle tmp, *h;
    int track;
    bool opens, null_fn;
} submit_ops;

static rec *read_submit_ops(reader *in, pool_state *ps, submit_ops *o, bool extra) {
    o->a = u8(in);
    o->prio = u32(in);
    o->extra = extra ? u8(in) : 0;
    o->h = pick_group(in, ps, &o->tmp, &o->track, &o->opens);
    o->null_fn = (o->a & 0x1f) == 0x1f;
    return new_rec(ps, (int)(o->a % 3), o->track);
}

static void op_submit(reader *in, pool_state *ps, unsigned variant) {
    crew_pool *p = ps->p;
    submit_ops o;
    rec *r = read_submit_ops(in, ps, &o, false);
    if (!r)
        return;
    unsigned a = o.a;
    uint32_t prio = o.prio;
    crew_handle *h = o.h;
    bool null_fn = o.null_fn;
    crew_fn fn = null_fn ? NULL : task_fn;
    int rc;
    bool bad = null_fn;
    const char *call;
    switch (variant) {
    case 0:
        rc = crew_submit(p, fn, r, prio, h), call = "crew_submit";
        break;
    case 1: {
        unsigned flags = (a >> 5) % 3; /* 2: unknown */
        bad |= flags > 1;
        rc = crew_submit_ex(p, fn, r, prio, flags, h), call = "crew_submit_ex";
        break;
    }
    case 2:
        rc = crew_try_submit(p, fn, r, prio, h), call = "crew_try_submit";
        break;
    default:
        rc = crew_submit_timed(p, fn, r, prio, h, (a >> 5) % 3), call = "crew_submit_timed";
        break;
    }
    check_submit(call, rc, ps, p, bad);
    if (rc == CREW_OK) {
        atomic_store(&r->accepted, true);
        r->group = note_group(ps, h, o.opens, o.track);
    }
    if (tracing)
        fprintf(stderr, "api_fuzz: op %u: task %u kind %d prio %u group %d\n", op_index,
                (unsigned)(r - recs), r->kind, prio, r->group);
}

/* crew_submit_deadline: a start-by time from the input (none, past, microseconds ahead, an hour
 * ahead, never), flags 0, CREW_TASK_BLOCKING or unknown, any group; a spawning task also gets
 * start-by times for its children. */
static void op_deadline(reader *in, pool_state *ps) {
    crew_pool *p = ps->p;
    submit_ops o;
    rec *r = read_submit_ops(in, ps, &o, true);
    if (!r)
        return;
    unsigned a = o.a, d = o.extra;
    uint32_t prio = o.prio;
    crew_handle *h = o.h;
    int track = o.track;
    bool opens = o.opens, null_fn = o.null_fn;
    if (r->kind == 2)
        r->cdl = d >> 2; /* children: 2 bits each (see task_fn); 0: plain crew_try_submit */
    unsigned flags = (a >> 5) == 7 ? 2u : (a >> 5) & 1u; /* 2: unknown */
    uint64_t start_by = start_by_for(d, r);
    /* A task with a start-by time sent to a group the checks do not track (forged or foreign
     * handle: maybe a child group, which a nested wait checks) makes CREW_EEXPIRED possible
     * there: say so before the task can expire. */
    if (r->dl && h && !opens && track < 0)
        atomic_store(&ps->dl_untracked, true);
    int rc = crew_submit_deadline(p, null_fn ? NULL : task_fn, r, prio, flags, start_by, h);
    check_submit("crew_submit_deadline", rc, ps, p, null_fn || flags > 1);
    if (rc == CREW_OK) {
        atomic_store(&r->accepted, true);
        r->group = note_group(ps, h, opens, track);
        if (r->dl && r->group >= 0)
            ps->gdl[r->group] = true;
    }
    if (tracing)
        fprintf(stderr,
                "api_fuzz: op %u: task %u kind %d prio %u flags %u start-by %s%s group %d\n",
                op_index, (unsigned)(r - recs), r->kind, prio, flags,
                start_by == 0 ? "none" : start_by == UINT64_MAX ? "never" : "set",
                r->past ? " (past)" : "", r->group);
}

static void op_enqueue(reader *in, pool_state *ps, unsigned variant) {
    crew_pool *p = ps->p;
    unsigned a = u8(in);
    size_t n = a % 5; /* 0 is invalid */
    crew_handle tmp, *h;
    int track;
    bool opens;
    h = pick_group(in, ps, &tmp, &track, &opens);
    rec *block = new_recs(ps, 0, track, (unsigned)n);
    if (!block)
        return;
    unsigned first = (unsigned)(block - recs);
    bool null_fn = n != 0 && (a & 0xe0) == 0xe0;
    for (size_t i = 0; i < n; i++) {
        rec *r = &block[i];
        r->kind = (int)((a >> 3) + i) % 3;
        crew_task *t = &tmem[r - recs];
        memset(t, 0, sizeof *t);
        t->fn = null_fn && i == n - 1 ? NULL : task_fn;
        t->arg = r;
        t->priority = (uint32_t)u8(in);
    }
    crew_task *t = (a & 0xe0) == 0x20 ? NULL : &tmem[first]; /* now and then a NULL array */
    int rc;
    const char *call;
    bool bad = null_fn || n == 0 || !t;
    if (variant == 0) {
        rc = n == 1 && (a & 0x40) ? crew_enqueue_task(p, t, h) : crew_enqueue_tasks(p, t, n, h);
        call = "crew_enqueue_tasks";
    } else if (variant == 1) {
        unsigned flags = (a >> 6) % 3;
        bad |= flags > 1;
        rc = crew_enqueue_tasks_ex(p, t, n, h, flags), call = "crew_enqueue_tasks_ex";
    } else {
        rc = crew_enqueue_tasks_wait(p, t, n), call = "crew_enqueue_tasks_wait";
        if (p && !bad && !ps->shut) {
            expect(call, rc, SUBMIT_ERRS | BIT(CREW_ECANCELED));
            if (rc == CREW_ECANCELED && !ps->may_drop && !ps->cancel_untracked)
                FAIL("%s: CREW_ECANCELED on a pool that drops nothing", call);
            if (rc == CREW_OK || rc == CREW_ECANCELED) {
                for (size_t i = 0; i < n; i++) {
                    atomic_store(&recs[first + i].accepted, true);
                    recs[first + i].group = -1;
                    if (rc == CREW_OK && atomic_load(&recs[first + i].runs) != 1)
                        FAIL("%s returned CREW_OK before task %zu ran", call, i);
                }
            }
            return;
        }
    }
    check_submit(call, rc, ps, p, bad);
    if (rc == CREW_OK) {
        int g = note_group(ps, h, opens, track);
        for (size_t i = 0; i < n; i++) {
            atomic_store(&recs[first + i].accepted, true);
            recs[first + i].group = g;
        }
    }
}

static void op_wait(reader *in, pool_state *ps) {
    crew_handle tmp, *h;
    int track;
    bool opens;
    h = pick_group(in, ps, &tmp, &track, &opens);
    crew_handle g = h ? *h : CREW_HANDLE_NONE;
    int rc = crew_wait(ps->p, g);
    if (!ps->p || g.slot == 0) {
        expect("crew_wait", rc, BIT(CREW_EINVAL));
        return;
    }
    expect("crew_wait", rc,
           OKBIT | BIT(CREW_ECANCELED) | BIT(CREW_EEXPIRED) | BIT(CREW_EINVAL));
    if (track < 0)
        return;
    if (rc == CREW_EINVAL)
        FAIL("crew_wait: EINVAL for a handle this pool issued");
    if (rc == CREW_ECANCELED && !ps->may_drop && !ps->gcancel[track])
        FAIL("crew_wait: CREW_ECANCELED for a group neither cancelled nor on a dropping pool");
    if (rc == CREW_EEXPIRED && !ps->gdl[track])
        FAIL("crew_wait: CREW_EEXPIRED for a group without a task with a start-by time");
    note_final(ps, track, rc, "crew_wait");
    if (rc == CREW_ECANCELED)
        return;
    /* A finished wait happens-after every task of the group: CREW_OK, all ran; CREW_EEXPIRED,
     * all ran but some with start-by times, and those that did not were handed to on_drop. */
    unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
    for (unsigned i = 0; i < n; i++) {
        rec *r = &recs[i];
        if (r->ps != ps || r->incarnation != ps->incarnation || r->group != track ||
            !atomic_load(&r->accepted))
            continue;
        int runs = atomic_load(&r->runs);
        if (rc == CREW_OK && runs != 1)
            FAIL("crew_wait returned CREW_OK but task %u of the group ran %d times", i, runs);
        if (rc == CREW_EEXPIRED && !r->dl && runs != 1)
            FAIL("crew_wait returned CREW_EEXPIRED but task %u of the group, without a start-by "
                 "time, ran %d times",
                 i, runs);
        if (rc == CREW_EEXPIRED && ps->hooks && runs + atomic_load(&r->drops) != 1)
            FAIL("crew_wait returned CREW_EEXPIRED but task %u of the group ran %d times and "
                 "was handed to on_drop %d times",
                 i, runs, atomic_load(&r->drops));
    }
}

static void op_wait_all(pool_state *ps) {
    int rc = crew_wait_all(ps->p);
    if (!ps->p) {
        expect("crew_wait_all", rc, BIT(CREW_EINVAL));
        return;
    }
    expect("crew_wait_all", rc, OKBIT | BIT(CREW_ECANCELED));
    if (rc == CREW_ECANCELED && !ps->cancel_shut)
        FAIL("crew_wait_all: CREW_ECANCELED with no cancelling shutdown (only those make it "
             "fail: crew.h)");
    unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
    for (unsigned i = 0; i < n; i++) {
        rec *r = &recs[i];
        if (r->ps == ps && r->incarnation == ps->incarnation && atomic_load(&r->accepted)) {
            int runs = atomic_load(&r->runs);
            bool cancellable = r->group >= 0 ? ps->gcancel[r->group] : ps->cancel_untracked;
            /* A callback (a worker's on_stop, say) may submit after the pool went quiet. */
            if (runs > 1 || (runs == 0 && rc == CREW_OK && !cancellable && !r->dl && !r->hook &&
                             !ps->full_drops))
                FAIL("crew_wait_all returned %s but task %u ran %d times", crew_err_name(rc), i,
                     runs);
        }
    }
}

static void op_misc(reader *in, pool_state *ps, unsigned which) {
    crew_pool *p = ps->p;
    unsigned a = u8(in);
    int rc;
    switch (which) {
    case 0: { /* resize */
        unsigned n = a == 0xff ? CREW_MAX_THREADS + 1 : a % 5;
        rc = crew_resize(p, n);
        if (!p || n == 0 || n > CREW_MAX_THREADS)
            expect("crew_resize", rc, BIT(CREW_EINVAL));
        else if (ps->shut)
            expect("crew_resize", rc, BIT(CREW_ESHUTDOWN));
        else
            expect("crew_resize", rc, OKBIT | BIT(CREW_EAGAIN) | BIT(CREW_ESHUTDOWN));
        if (p && rc == CREW_OK && !ps->autosize && !(ps->reenter & RE_RESIZE) &&
            crew_size(p) != n)
            FAIL("crew_size %u after crew_resize(%u)", crew_size(p), n);
        break;
    }
    case 1: { /* stats_get */
        crew_stats st;
        memset(&st, 0, sizeof st);
        st.size = a % 4 == 0 ? 8 : sizeof st; /* too small */
        crew_stats *out = a % 7 == 1 ? NULL : &st;
        rc = crew_stats_get(p, out);
        expect("crew_stats_get", rc,
               !p || !out || st.size < sizeof st ? BIT(CREW_EINVAL) : OKBIT | BIT(CREW_ENOMEM));
        /* No relation between live counters is checked: they are summed from per-thread
         * blocks without a snapshot, and a reset leaves tasks in flight that finish after it.
         * destroy_pool compares the totals once the pool is quiet. */
        break;
    }
    case 2: /* stats_reset */
        rc = crew_stats_reset(p);
        expect("crew_stats_reset", rc, p ? OKBIT : BIT(CREW_EINVAL));
        ps->stats_exact = false;
        break;
    case 3: /* set_monitoring */
        rc = crew_set_monitoring(p, (int)(a & 1));
        expect("crew_set_monitoring", rc, p ? OKBIT : BIT(CREW_EINVAL));
        if (!(a & 1))
            ps->stats_exact = false;
        break;
    case 4: { /* shutdown */
        int how = a % 5 == 4 ? 7 : (int)(a & 1); /* 7: unknown */
        if (p && how <= 1) { /* the callbacks may see it from now on */
            atomic_store(&ps->closing, true);
            if (how == CREW_CANCEL)
                atomic_store(&ps->pool_drops, true);
        }
        rc = crew_shutdown(p, how);
        if (!p || how > 1) {
            expect("crew_shutdown", rc, BIT(CREW_EINVAL));
            break;
        }
        expect("crew_shutdown", rc, OKBIT);
        if (crew_paused(p) != 0)
            FAIL("crew_paused is 1 after crew_shutdown (it resumes)");
        ps->paused = false;
        ps->shut = true;
        if (how == CREW_CANCEL)
            ps->may_drop = ps->cancel_shut = true;
        break;
    }
    case 5: /* destroy (NULL is a no-op) */
        if (p)
            destroy_pool(ps);
        else
            expect("crew_destroy(NULL)", crew_destroy(NULL), OKBIT);
        break;
    case 6: { /* size, per-thread stats */
        unsigned sz = crew_size(p);
        if (!p && sz != 0)
            FAIL("crew_size(NULL) = %u", sz);
        crew_thread_stats ts[4];
        size_t n = 0;
        rc = crew_stats_threads(p, a & 1 ? ts : NULL, a & 1 ? 4 : 0, &n);
        expect("crew_stats_threads", rc, OKBIT | BIT(CREW_EINVAL));
        if (!p && rc != CREW_EINVAL)
            FAIL("crew_stats_threads(NULL) returned %d", rc);
        break;
    }
    default:
        break;
    }
}

/* crew_cancel on a handle: own (open or finished), the other pool's, forged, or never issued. */
static void op_cancel(reader *in, pool_state *ps) {
    crew_pool *p = ps->p;
    unsigned a = u8(in);
    crew_handle tmp, *h;
    int track;
    bool opens;
    bool never = (a & 7) == 7;
    if (never) { /* a slot far beyond any this input can issue */
        tmp.slot = 100000u + a;
        tmp.gen = 1;
        h = &tmp;
        track = -1;
    } else {
        h = pick_group(in, ps, &tmp, &track, &opens);
    }
    crew_handle g = h ? *h : CREW_HANDLE_NONE;
    if (p) /* a forged handle may name a group a callback opened: its wait may see it */
        atomic_store(&ps->cancel_tried, true);
    int rc = crew_cancel(p, g);
    if (!p || g.slot == 0 || never) {
        expect("crew_cancel", rc, BIT(CREW_EINVAL));
        return;
    }
    expect("crew_cancel", rc, OKBIT | BIT(CREW_ESTALE) | BIT(CREW_EINVAL));
    if (rc == CREW_EINVAL && track >= 0)
        FAIL("crew_cancel: EINVAL for a handle this pool issued");
    if (ps->shut && rc == CREW_OK)
        FAIL("crew_cancel: CREW_OK after the shutdown finished every group");
    if (rc != CREW_OK)
        return;
    if (track < 0) /* a forged or foreign handle that names one of this pool's groups */
        for (unsigned k = 0; k < ps->ngroups; k++)
            if (ps->groups[k].slot == g.slot && ps->groups[k].gen == g.gen)
                track = (int)k;
    if (track >= 0)
        ps->gcancel[track] = true;
    else
        ps->cancel_untracked = true;
}

static FILE *devnull; /* opened once: a FILE* that takes everything */

/* How many lines of text start with p? */
static unsigned count_lines(const char *text, const char *p) {
    unsigned n = 0;
    size_t k = strlen(p);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        n += strncmp(l, p, k) == 0;
    return n;
}

/* crew_diagnose / crew_diagnose_ex, limits 0-3 ms (or all UINT_MAX), writing nowhere (NULL), to
 * /dev/null or to memory, on the pool as it is (live, paused, shut down, destroyed: NULL). The
 * result is a count, EINVAL exactly for a NULL pool; the text written to memory has the header
 * (naming the pause and the shutdown exactly when they hold), one line per finding, and
 * "nothing stalled" exactly when there is none. */
static void op_diagnose(reader *in, pool_state *ps) {
    crew_pool *p = ps->p;
    unsigned a = u8(in);
    unsigned out = a % 3; /* 0 NULL, 1 /dev/null, 2 memory */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = out == 0 ? NULL : out == 1 ? devnull : open_memstream(&buf, &len);
    if (out && !f)
        return; /* no memory, or /dev/null missing */
    int rc;
    const char *call;
    if (a & 4) {
        rc = crew_diagnose(p, f), call = "crew_diagnose";
    } else {
        unsigned l = u8(in);
        unsigned busy = l & 3, queued = (l >> 2) & 3, blocked = (l >> 4) & 3;
        if ((l >> 6) == 3)
            busy = queued = blocked = UINT32_MAX;
        rc = crew_diagnose_ex(p, f, busy, queued, blocked), call = "crew_diagnose_ex";
    }
    if (tracing)
        fprintf(stderr, "api_fuzz: op %u: %s (to %s) -> %d\n", op_index, call,
                out == 0 ? "NULL" : out == 1 ? "/dev/null" : "memory", rc);
    if (!p) {
        if (rc != CREW_EINVAL)
            FAIL("%s(NULL) returned %d, not CREW_EINVAL", call, rc);
    } else if (rc < 0 && !(out == 2 && rc == CREW_EIO)) { /* memory: a write may fail (ENOMEM) */
        FAIL("%s returned %d (%s), not a count", call, rc, crew_err_name(rc));
    }
    if (out != 2)
        return;
    if (fclose(f) == 0 && buf && p && rc >= 0) {
        const char *nl = strchr(buf, '\n');
        size_t hl = nl ? (size_t)(nl - buf) : strlen(buf);
        unsigned findings = count_lines(buf, "  busy: ") + count_lines(buf, "  queue: ") +
                            count_lines(buf, "  blocked: ");
        bool nothing = count_lines(buf, "  nothing stalled") != 0;
        char *paused = memmem(buf, hl, ", paused", 8);
        char *shut = memmem(buf, hl, ", shutting down", 15);
        if (strncmp(buf, "crew_diagnose: pool ", 20) != 0 || findings != (unsigned)rc ||
            nothing != (rc == 0) ||
            (!paused != !ps->paused && !(ps->reenter & RE_PAUSE)) || !shut != !ps->shut)
            FAIL("%s returned %d (paused %d, shut down %d) but wrote:\n%s", call, rc, ps->paused,
                 ps->shut, buf);
    }
    free(buf);
}

static void *resumer(void *arg) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
    expect("crew_resume (helper thread)", crew_resume(arg), OKBIT);
    return NULL;
}

/* Before a call that could wait for tasks: a paused pool would never let it return. Resume now,
 * or from a helper thread once the call is (probably) waiting; *t is then to be joined. */
static bool unpause(pool_state *ps, pthread_t *t) {
    if (!ps->p || !ps->paused)
        return false;
    ps->paused = false;
    if (ps->resume_late && pthread_create(t, NULL, resumer, ps->p) == 0)
        return true;
    expect("crew_resume", crew_resume(ps->p), OKBIT);
    if (crew_paused(ps->p) != 0 && !(ps->reenter & RE_PAUSE))
        FAIL("crew_paused is 1 after crew_resume");
    return false;
}

static void joined(pool_state *ps, bool started, pthread_t t) {
    if (started)
        pthread_join(t, NULL);
    if (ps->p && crew_paused(ps->p) != 0 && !(ps->reenter & RE_PAUSE))
        FAIL("crew_paused is 1 after crew_resume");
}

static void op_pause(reader *in, pool_state *ps) {
    crew_pool *p = ps->p;
    unsigned a = u8(in);
    int rc;
    if (a & 1) {
        rc = crew_pause(p);
        if (!p)
            expect("crew_pause", rc, BIT(CREW_EINVAL));
        else if (ps->shut)
            expect("crew_pause", rc, BIT(CREW_ESHUTDOWN));
        else
            expect("crew_pause", rc, OKBIT);
        if (rc == CREW_OK) {
            ps->paused = true;
            ps->resume_late = (a & 2) != 0;
        }
    } else {
        rc = crew_resume(p);
        expect("crew_resume", rc, p ? OKBIT : BIT(CREW_EINVAL));
        if (rc == CREW_OK)
            ps->paused = false;
    }
    /* Callbacks that pause and resume (RE_PAUSE) may have it either way for a moment. */
    int pz = crew_paused(p);
    if (pz != (ps->paused ? 1 : 0) && !(ps->reenter & RE_PAUSE && (pz == 0 || pz == 1)))
        FAIL("crew_paused = %d, expected %d", pz, ps->paused);
    if (crew_cancelled() != 0)
        FAIL("crew_cancelled() outside any task returned 1");
}

/* ---- the target ------------------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    unsetenv("CREW_SCHEDULER"); /* the configuration comes from the input alone */
    tracing = getenv("API_FUZZ_TRACE") != NULL;
    bwaits = getenv("API_FUZZ_NO_BWAITS") == NULL;
    devnull = fopen("/dev/null", "w");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader in = {data, size, 0};
    main_thread = true;
    atomic_store(&nrec, 0);
    for (unsigned i = 0; i < NPOOLS; i++) {
        pools[i].p = NULL;
        atomic_store(&pools[i].hp, NULL);
        pools[i].ngroups = 0;
        pools[i].paused = false;
        atomic_store(&pools[i].dl_untracked, false);
    }
    for (op_index = 0; op_index < MAX_OPS && in.i < in.n; op_index++) {
        unsigned op = u8(&in);
        pool_state *ps = &pools[op >> 7];
        unsigned k = op % 22;
        /* Calls that may wait for tasks: waits, crew_enqueue_tasks_wait, and any submission to
         * a bounded queue (it may block for room, or run a spawning task in this thread). */
        bool may_wait = (k >= 8 && k <= 10) || k == 7 ||
                        (ps->bounded && ((k >= 1 && k <= 6) || k == 19));
        pthread_t rt;
        bool late = may_wait && unpause(ps, &rt);
        switch (k) {
        case 0:
            op_create(&in, ps);
            break;
        case 1: case 2: case 3: case 4:
            op_submit(&in, ps, k - 1);
            break;
        case 5: case 6: case 7:
            op_enqueue(&in, ps, k - 5);
            break;
        case 8: case 9:
            op_wait(&in, ps);
            break;
        case 10:
            op_wait_all(ps);
            break;
        case 17:
            op_cancel(&in, ps);
            break;
        case 18:
            op_pause(&in, ps);
            break;
        case 19:
            op_deadline(&in, ps);
            break;
        case 20:
            op_diagnose(&in, ps);
            break;
        case 21:
            op_misc(&in, ps, 6); /* crew_size, crew_stats_threads */
            break;
        default:
            op_misc(&in, ps, k - 11);
            break;
        }
        if (may_wait)
            joined(ps, late, rt);
    }
    for (unsigned i = 0; i < NPOOLS; i++)
        destroy_pool(&pools[i]);
    return 0;
}
