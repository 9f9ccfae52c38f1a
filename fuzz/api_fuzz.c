/*
 * api_fuzz.c -- a libFuzzer target for crew's public API.
 *
 * The input is a program: each byte sequence decodes into up to MAX_OPS calls on two pool
 * variables (create with a small random configuration, every way to submit, waits, resize,
 * statistics, monitoring, shutdown, destroy), valid and invalid alike: NULL pools and pointers,
 * zero counts, unknown flags, stale and forged handles, the other pool's handles, calls after a
 * shutdown. What must hold, checked after every call and when each pool is destroyed:
 *   - every call returns CREW_OK or one of the error codes its documentation lists, and the
 *     exact one where the documentation leaves no choice (EINVAL for NULL, ESHUTDOWN after a
 *     shutdown, ...);
 *   - a refused task never runs; an accepted task runs at most once, and exactly once unless
 *     the pool may drop tasks (CREW_CANCEL shutdown, CREW_FULL_DROP_OLDEST);
 *   - a successful crew_wait / crew_enqueue_tasks_wait / crew_wait_all means the tasks it
 *     covers have all run; CREW_ECANCELED only on a pool that may drop tasks; after the pool
 *     is shut down, a tracked group answers CREW_ECANCELED exactly when it lost a task;
 *   - with monitoring on from crew_create and never switched off or reset, crew_stats counts
 *     submitted == accepted, completed == ran, cancelled == accepted - ran;
 *   - crew_cancel (on the pool's own open or finished groups, the other pool's, forged and
 *     never-issued handles): EINVAL exactly for NULL, slot 0 and never-issued slots; a task of a
 *     cancelled group either ran or was reported (its group's crew_wait answers CREW_ECANCELED,
 *     and crew_stats.cancelled counts it); a group that lost any task answers CREW_ECANCELED to
 *     every later crew_wait, also after the shutdown; crew_wait_all is not affected by it;
 *   - crew_cancelled() is 0 outside tasks, and 1 inside a task only if its group was cancelled
 *     or the pool is shutting down with CREW_CANCEL;
 *   - crew_pause / crew_resume / crew_paused: the documented results, crew_paused follows them,
 *     and crew_shutdown resumes. A paused pool never finishes a wait, so before any call that
 *     could wait for tasks (waits, submissions to a bounded queue, which may block or run the
 *     task in the caller) the pool is resumed, either at once or from a helper thread 1 ms
 *     later while the call is already waiting (the input chooses when it pauses).
 * A violation aborts, so libFuzzer saves the input. Hangs are caught by libFuzzer's -timeout.
 *
 * Tasks do tiny work; some spawn children into a group of their own and wait for them (nested
 * parallelism); some are CREW_TASK_BLOCKING. Built with clang -fsanitize=fuzzer,address,
 * undefined against the library's sources directly (fuzz/run.sh).
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
} rec;

static rec recs[MAX_REC];
static crew_task tmem[MAX_REC]; /* caller-owned task structs (crew_enqueue_*): one per record */
static atomic_uint nrec;

struct pool_state {
    crew_pool *p;
    unsigned incarnation;
    bool shut;          /* crew_shutdown called */
    bool may_drop;      /* CREW_CANCEL shutdown or CREW_FULL_DROP_OLDEST: tasks may be dropped */
    bool stats_exact;   /* monitoring on since crew_create, never off or reset */
    bool bounded;       /* queue_capacity != 0 */
    bool autosize;      /* a sizing controller resizes the pool too */
    crew_handle groups[MAX_GROUPS];
    unsigned ngroups;
    bool gcancel[MAX_GROUPS]; /* crew_cancel returned CREW_OK for this tracked group */
    bool cancel_untracked;    /* ... for a group that is not tracked (children, forged) */
    bool paused;              /* crew_pause returned CREW_OK, no resume or shutdown since */
    bool resume_late;         /* resume from a helper thread while the next wait waits */
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
    }
    return &recs[i];
}

static rec *new_rec(pool_state *ps, int kind, int group) {
    unsigned i = atomic_fetch_add(&nrec, 1);
    if (i >= MAX_REC)
        return NULL;
    rec *r = &recs[i];
    atomic_store(&r->runs, 0);
    atomic_store(&r->accepted, false);
    r->kind = kind;
    r->ps = ps;
    r->incarnation = ps->incarnation;
    r->group = group;
    atomic_store(&r->saw_cancel, false);
    return r;
}

static void task_fn(void *arg);

/* Children: spawned by a kind-2 task into a group of its own on the same pool. */
static void child_fn(void *arg) {
    rec *r = arg;
    if (atomic_fetch_add(&r->runs, 1) != 0)
        FAIL("a child task ran twice");
}

static void task_fn(void *arg) {
    rec *r = arg;
    if (atomic_fetch_add(&r->runs, 1) != 0)
        FAIL("a task ran twice");
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
    } else if (r->kind == 2) {
        /* Nested spawn-and-wait. crew_try_submit never waits for room, so a worker never
         * blocks on a full bounded queue that only workers drain. */
        crew_pool *p = r->ps->p;
        crew_handle h = CREW_HANDLE_NONE;
        rec *kids[3];
        int nk = 0;
        for (int i = 0; i < 3; i++) {
            rec *c = new_rec(r->ps, 0, -1);
            if (!c)
                break;
            c->incarnation = r->incarnation;
            int rc = crew_try_submit(p, child_fn, c, (uint32_t)i, &h);
            expect("crew_try_submit (child)", rc,
                   BIT(CREW_ESHUTDOWN) | BIT(CREW_EFULL) | BIT(CREW_ENOMEM) | BIT(CREW_ESTALE) |
                       BIT(CREW_ECANCELED) | OKBIT);
            if (rc == CREW_OK) {
                atomic_store(&c->accepted, true);
                kids[nk++] = c;
            }
        }
        if (h.slot != 0) {
            int rc = crew_wait(p, h);
            expect("crew_wait (nested)", rc, OKBIT | BIT(CREW_ECANCELED));
            if (rc == CREW_OK)
                for (int i = 0; i < nk; i++)
                    if (atomic_load(&kids[i]->runs) != 1)
                        FAIL("nested crew_wait returned CREW_OK before a child ran");
        }
    }
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

/* Every tracked group of a shut-down pool answers CREW_ECANCELED exactly if it lost a task. */
static void check_groups_after_shutdown(pool_state *ps) {
    for (unsigned g = 0; g < ps->ngroups; g++) {
        bool lost = false;
        unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
        for (unsigned i = 0; i < n; i++) {
            rec *r = &recs[i];
            if (r->ps == ps && r->incarnation == ps->incarnation && r->group == (int)g &&
                atomic_load(&r->accepted) && atomic_load(&r->runs) == 0) {
                lost = true;
                if (tracing)
                    fprintf(stderr, "api_fuzz: group %u: task %u (kind %d) accepted, not run\n",
                            g, i, r->kind);
            }
        }
        int rc = crew_wait(ps->p, ps->groups[g]);
        /* A group crew_cancel reached may answer CREW_ECANCELED without having lost a task
         * (cancelled after its last task started); one that lost a task must, however late. */
        if (!lost && ps->gcancel[g] && rc == CREW_ECANCELED)
            continue;
        if (rc != (lost ? CREW_ECANCELED : CREW_OK))
            FAIL("after shutdown, group %u (slot %u gen %u) %s a task but crew_wait returned %s",
                 g, ps->groups[g].slot, ps->groups[g].gen, lost ? "lost" : "did not lose",
                 crew_err_name(rc));
    }
}

static void destroy_pool(pool_state *ps) {
    if (!ps->p)
        return;
    /* Shut down (drain unless already done), then look at the pool before freeing it. */
    expect("crew_shutdown", crew_shutdown(ps->p, CREW_DRAIN), OKBIT);
    if (crew_paused(ps->p) != 0)
        FAIL("crew_paused is 1 after crew_shutdown (it resumes)");
    ps->paused = false;
    check_groups_after_shutdown(ps);
    unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
    uint64_t accepted = 0, ran = 0;
    for (unsigned i = 0; i < n; i++) {
        rec *r = &recs[i];
        if (r->ps != ps || r->incarnation != ps->incarnation)
            continue;
        int runs = atomic_load(&r->runs);
        bool acc = atomic_load(&r->accepted);
        if (!acc && runs != 0)
            FAIL("task %u was refused but ran", i);
        bool cancellable = r->group >= 0 ? ps->gcancel[r->group] : ps->cancel_untracked;
        if (acc && runs == 0 && !ps->may_drop && !cancellable)
            FAIL("task %u was accepted and never ran, on a pool that drops nothing", i);
        if (atomic_load(&r->saw_cancel) && !ps->may_drop && !cancellable)
            FAIL("crew_cancelled() was 1 in task %u, whose group was not cancelled", i);
        accepted += acc;
        ran += (uint64_t)runs;
    }
    crew_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    int src = crew_stats_get(ps->p, &st);
    expect("crew_stats_get", src, OKBIT | BIT(CREW_ENOMEM));
    if (src == CREW_OK && ps->stats_exact &&
        (st.submitted != accepted || st.completed != ran || st.cancelled != accepted - ran))
        FAIL("stats: submitted %llu completed %llu cancelled %llu, but accepted %llu ran %llu",
             (unsigned long long)st.submitted, (unsigned long long)st.completed,
             (unsigned long long)st.cancelled, (unsigned long long)accepted,
             (unsigned long long)ran);
    expect("crew_destroy", crew_destroy(ps->p), OKBIT);
    ps->p = NULL;
}

/* ---- the operations ------------------------------------------------------------------------- */

static const unsigned SUBMIT_ERRS = OKBIT | BIT(CREW_EINVAL) | BIT(CREW_ESHUTDOWN) |
                                    BIT(CREW_ESTALE) | BIT(CREW_ENOMEM) | BIT(CREW_ERANGE) |
                                    BIT(CREW_EFULL) | BIT(CREW_ETIMEDOUT);

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
                "capacity %u policy %u max_blocking %u autosize %u\n",
                op_index, c.threads, c.scheduler, c.lock, c.spin, c.monitoring, c.queue_capacity,
                c.full_policy, c.max_blocking, c.autosize);
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
    ps->stats_exact = c.monitoring;
    ps->bounded = c.queue_capacity != 0;
    ps->autosize = c.autosize != CREW_AUTOSIZE_OFF;
    ps->ngroups = 0;
    memset(ps->gcancel, 0, sizeof ps->gcancel);
    ps->cancel_untracked = false;
    ps->paused = false;
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
        expect(call, rc, BIT(CREW_ESHUTDOWN) | BIT(CREW_EINVAL) | BIT(CREW_ESTALE));
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

static void op_submit(reader *in, pool_state *ps, unsigned variant) {
    crew_pool *p = ps->p;
    unsigned a = u8(in);
    uint32_t prio = u32(in);
    crew_handle tmp, *h;
    int track;
    bool opens;
    h = pick_group(in, ps, &tmp, &track, &opens);
    bool null_fn = (a & 0x1f) == 0x1f;
    rec *r = new_rec(ps, (int)(a % 3), track);
    if (!r)
        return;
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
        r->group = note_group(ps, h, opens, track);
    }
    if (tracing)
        fprintf(stderr, "api_fuzz: op %u: task %u kind %d prio %u group %d\n", op_index,
                (unsigned)(r - recs), r->kind, prio, r->group);
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
    expect("crew_wait", rc, OKBIT | BIT(CREW_ECANCELED) | BIT(CREW_EINVAL));
    if (track < 0)
        return;
    if (rc == CREW_EINVAL)
        FAIL("crew_wait: EINVAL for a handle this pool issued");
    if (rc == CREW_ECANCELED && !ps->may_drop && !ps->gcancel[track])
        FAIL("crew_wait: CREW_ECANCELED for a group neither cancelled nor on a dropping pool");
    if (rc != CREW_OK)
        return;
    /* A successful wait happens-after every task of the group. */
    unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
    for (unsigned i = 0; i < n; i++) {
        rec *r = &recs[i];
        if (r->ps == ps && r->incarnation == ps->incarnation && r->group == track &&
            atomic_load(&r->accepted) && atomic_load(&r->runs) != 1)
            FAIL("crew_wait returned CREW_OK but task %u of the group ran %d times", i,
                 atomic_load(&r->runs));
    }
}

static void op_wait_all(pool_state *ps) {
    int rc = crew_wait_all(ps->p);
    if (!ps->p) {
        expect("crew_wait_all", rc, BIT(CREW_EINVAL));
        return;
    }
    expect("crew_wait_all", rc, OKBIT | BIT(CREW_ECANCELED));
    if (rc == CREW_ECANCELED && !ps->may_drop)
        FAIL("crew_wait_all: CREW_ECANCELED on a pool that drops nothing");
    unsigned n = atomic_load(&nrec) < MAX_REC ? atomic_load(&nrec) : MAX_REC;
    for (unsigned i = 0; i < n; i++) {
        rec *r = &recs[i];
        if (r->ps == ps && r->incarnation == ps->incarnation && atomic_load(&r->accepted)) {
            int runs = atomic_load(&r->runs);
            bool cancellable = r->group >= 0 ? ps->gcancel[r->group] : ps->cancel_untracked;
            if (runs > 1 || (runs == 0 && rc == CREW_OK && !cancellable))
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
        if (p && rc == CREW_OK && !ps->autosize && crew_size(p) != n)
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
            ps->may_drop = true;
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
    if (crew_paused(ps->p) != 0)
        FAIL("crew_paused is 1 after crew_resume");
    return false;
}

static void joined(pool_state *ps, bool started, pthread_t t) {
    if (started)
        pthread_join(t, NULL);
    if (ps->p && crew_paused(ps->p) != 0)
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
    int pz = crew_paused(p);
    if (pz != (ps->paused ? 1 : 0))
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
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader in = {data, size, 0};
    atomic_store(&nrec, 0);
    for (unsigned i = 0; i < NPOOLS; i++) {
        pools[i].p = NULL;
        pools[i].ngroups = 0;
        pools[i].paused = false;
    }
    for (op_index = 0; op_index < MAX_OPS && in.i < in.n; op_index++) {
        unsigned op = u8(&in);
        pool_state *ps = &pools[op >> 7];
        unsigned k = op % 19;
        /* Calls that may wait for tasks: waits, crew_enqueue_tasks_wait, and any submission to
         * a bounded queue (it may block for room, or run a spawning task in this thread). */
        bool may_wait = (k >= 8 && k <= 10) || k == 7 || (ps->bounded && k >= 1 && k <= 6);
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
