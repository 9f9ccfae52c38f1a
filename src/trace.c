/*
 * trace.c -- the task timeline: crew_trace_start, crew_trace_stop, and the per-thread rings that
 * record tasks, waits, sleeps and graph nodes' turns (trace_json.c writes them as JSON).
 *
 * trace.h explains the design: recording rides on the cold paths (tasks stamped because
 * CREW__TIMING_TRACE is set go through worker.c's run_timed; sleeps and waits are recorded where
 * a thread already sleeps or waits), each thread writes only its own ring, and crew_trace_stop
 * turns the trace off, then waits for each ring's writer to be quiet before reading it.
 *
 * A graph node's turn (crew__trace_node) is one event, and one more per edge it took; its name
 * is copied into the ring's own table of names (intern), kept until the trace is written, as
 * the graph may be renamed or destroyed before.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "atomic.h"
#include "blocking.h"
#include "clock.h"
#include "kind.h"
#include "lock.h"
#include "pool.h"
#include "timer.h"
#include "trace.h"
#include "worker.h"

/* The calling thread's ring, cached for the last pool it recorded for (serial: pools are never
 * confused with a later pool at the same address). */
static CREW__TLS struct {
    const crew_pool *pool;
    uint64_t serial;
    crew__trace_ring *ring;
} tls_ring;

static long thread_id(void) {
#if defined(__linux__)
    return (long)syscall(SYS_gettid);
#else
    static atomic_long next; /* relaxed: a number to tell threads apart, nothing more */
    static CREW__TLS long id;
    if (id == 0)
        id = crew__fetch_add_relaxed(&next, 1) + 1;
    return id;
#endif
}

/* Find or make the calling thread's ring: once per thread and pool (more often only for a
 * thread that alternates between pools' tasks), under the trace's lock. NULL: out of memory. */
static __attribute__((noinline)) crew__trace_ring *own_ring_slow(crew_pool *p) {
    crew__trace *tr = p->trace;
    pthread_t self = pthread_self();
    long tid = thread_id();
    crew__trace_ring *r;
    pthread_mutex_lock(&tr->lock);
    for (r = tr->rings; r; r = r->next)
        if (pthread_equal(r->owner, self) && r->tid == tid)
            break;
    if (!r && (r = calloc(1, sizeof *r)) != NULL) {
        r->owner = self;
        r->tid = tid;
#if defined(__linux__)
        if (pthread_getname_np(self, r->name, sizeof r->name) != 0)
#endif
            snprintf(r->name, sizeof r->name, "thread %ld", tid);
        crew__atomic_init(&r->busy, 0);
        *tr->tail = r;
        tr->tail = &r->next;
    }
    pthread_mutex_unlock(&tr->lock);
    if (r) {
        tls_ring.pool = p;
        tls_ring.serial = p->serial;
        tls_ring.ring = r;
    }
    return r;
}

static inline crew__trace_ring *own_ring(crew_pool *p) {
    if (tls_ring.pool == p && tls_ring.serial == p->serial)
        return tls_ring.ring;
    return own_ring_slow(p);
}

/* The owner's names of ring r, freed (a new trace, or crew_trace_stop). */
static void names_free(crew__trace_ring *r) {
    for (uint32_t k = 0; k < r->names_cap; k++)
        free(r->names[k]);
    free(r->names);
    r->names = NULL;
    r->names_cap = r->nnames = 0;
}

/* The owner's half of the handshake of trace.h: busy set; true if the trace is on and ring r
 * is ready for this trace's events (then append, and always end_record). */
static bool begin_record(crew_pool *p, crew__trace_ring *r) {
    crew__store_seq_cst(&r->busy, 1);                      /* seq_cst: see trace.h */
    uint64_t state = crew__load_seq_cst(&p->trace->state); /* seq_cst: see trace.h */
    if (!(state & 1u))
        return false;
    uint64_t session = state >> 1;
    if (r->session != session) { /* the first event of this thread in this trace */
        size_t cap = p->trace->cap; /* cap and t0: published by state's store */
        if (!r->ev || r->cap != cap) {
            free(r->ev);
            r->ev = malloc(cap * sizeof *r->ev);
            r->cap = r->ev ? cap : 0;
        }
        names_free(r);
        r->session = session;
        r->head = 0;
        r->lost = 0;
    }
    return true;
}

static void append(crew_pool *p, crew__trace_ring *r, const crew__trace_ev *ev) {
    if (ev->start_ns < p->trace->t0) {
        /* began before this trace (seen on by a stale hint after the previous one) */
    } else if (r->ev) {
        r->ev[r->head % r->cap] = *ev; /* full: the oldest goes */
        r->head++;
    } else {
        r->lost++;
    }
}

static void end_record(crew__trace_ring *r) {
    crew__store_release(&r->busy, 0); /* release: stop reads the event after it sees 0 */
}

/* Append ev to the owner's ring r, if the trace is still on (the handshake of trace.h). */
static void record(crew_pool *p, crew__trace_ring *r, const crew__trace_ev *ev) {
    if (begin_record(p, r))
        append(p, r, ev);
    end_record(r);
}

bool crew__trace_task_begin(crew_pool *p, const crew_task *t, crew__trace_task *tt) {
    crew__trace_ring *r = own_ring(p);
    if (!r)
        return false;
    tt->ring = r;
    crew_handle g = {t->crew_private_.slot, 0};
    if (g.slot != 0) {
        /* The group is open (the task is unfinished). Relaxed: as in worker.c's call(). */
        g.gen = crew__gen_of(crew__load_relaxed(&crew__slot_at(&p->groups, g.slot)->state));
        g = crew__handle_public(&p->groups, g);
    }
    crew__worker *w = crew__self(p);
    /* A task run inside another task (which waits), or by a thread that is neither a worker
     * nor a blocking thread of p (a caller in crew_wait or crew_wait_all), is help. */
    bool help = crew__tls_frame != NULL || (!w && crew__tls_bthread != p);
    bool stolen = false;
    if (w) {
        /* The worker counts its steals as it takes (sched_steal.c): if the count moved since
         * its last traced task, this task was stolen. Relaxed: the owner's own counter. */
        uint64_t s = crew__load_relaxed(&w->stolen);
        stolen = s != r->last_stolen;
        r->last_stolen = s;
    }
    /* A special task is named by its kind (kind.h): a timer's run by the timer's function. */
    tt->ev = (crew__trace_ev){0, 0, (uintptr_t)crew__kind_fn_of(t), g.slot, g.gen, 0, 0, 0,
                              (uint8_t)(help ? CREW__TR_HELP : CREW__TR_TASK), stolen};
    return true;
}

void crew__trace_task_end(crew_pool *p, crew__trace_task *tt, uint64_t start_ns,
                          uint64_t end_ns) {
    tt->ev.start_ns = start_ns;
    tt->ev.end_ns = end_ns;
    record(p, tt->ring, &tt->ev);
}

void crew__trace_span(crew_pool *p, enum crew__trace_kind kind, crew_handle group,
                      uint64_t start_ns) {
    crew__trace_ring *r = own_ring(p);
    if (!r)
        return;
    if (group.slot != 0)
        group = crew__handle_public(&p->groups, group);
    crew__trace_ev ev = {start_ns, crew__now_ns(), 0, group.slot, group.gen, 0, 0, 0,
                         (uint8_t)kind, 0};
    record(p, r, &ev);
}

/* A thread names at most this many distinct nodes per trace (beyond: "node N"). */
#define NAMES_MAX 65536u

static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* name as a copy kept in the owner's ring r until the trace is written (the graph may be
 * destroyed or renamed before), or NULL when there is no memory or no room left. */
static const char *intern(crew__trace_ring *r, const char *name) {
    uint32_t h = name_hash(name);
    if (r->names_cap) {
        for (uint32_t k = h & (r->names_cap - 1);; k = (k + 1) & (r->names_cap - 1)) {
            if (!r->names[k])
                break;
            if (strcmp(r->names[k], name) == 0)
                return r->names[k];
        }
    }
    if (r->nnames >= NAMES_MAX)
        return NULL;
    if (2 * (r->nnames + 1) > r->names_cap) { /* at most half full */
        uint32_t cap = r->names_cap ? 2 * r->names_cap : 64;
        char **t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (uint32_t j = 0; j < r->names_cap; j++) {
            if (!r->names[j])
                continue;
            uint32_t k = name_hash(r->names[j]) & (cap - 1);
            while (t[k])
                k = (k + 1) & (cap - 1);
            t[k] = r->names[j];
        }
        free(r->names);
        r->names = t;
        r->names_cap = cap;
    }
    uint32_t k = h & (r->names_cap - 1);
    while (r->names[k])
        k = (k + 1) & (r->names_cap - 1);
    char *copy = strdup(name);
    if (copy) {
        r->names[k] = copy;
        r->nnames++;
    }
    return copy;
}

uint32_t crew__trace_run_number(crew_pool *p) {
    return crew__fetch_add_relaxed(&p->trace->graph_runs, 1u) + 1u; /* relaxed: see crew__trace */
}

void crew__trace_node(crew_pool *p, crew_handle group, uint32_t run, uint32_t node,
                      const char *name, uint64_t start_ns, uint64_t end_ns, const uint32_t *to,
                      uint32_t nto) {
    crew__trace_ring *r = own_ring(p);
    if (!r)
        return;
    if (group.slot != 0)
        group = crew__handle_public(&p->groups, group);
    if (begin_record(p, r)) {
        crew__trace_ev ev = {start_ns, end_ns, 0, group.slot, group.gen, run, node, 0,
                             CREW__TR_NODE, 0};
        if (name)
            ev.fn = (uintptr_t)intern(r, name);
        append(p, r, &ev);
        ev.kind = CREW__TR_EDGE;
        ev.fn = 0;
        for (uint32_t k = 0; k < nto; k++) {
            ev.to = to[k];
            append(p, r, &ev);
        }
    }
    end_record(r);
}

/* ---------------------------------------------------------------------------------------------
 * Starting and stopping.
 * ------------------------------------------------------------------------------------------- */

int crew__trace_init(crew_pool *p) {
    crew__trace *tr = crew__alloc_locked(sizeof *tr, offsetof(crew__trace, lock));
    if (!tr)
        return CREW_ENOMEM;
    crew__atomic_init(&tr->state, 0u);
    crew__atomic_init(&tr->graph_runs, 0u);
    tr->rings = NULL;
    tr->tail = &tr->rings;
    p->trace = tr;
    return CREW_OK;
}

static int start(crew_pool *p, const char *path, size_t events, const char *who) {
    if (!p)
        return crew__fail(CREW_EINVAL, "%s: the pool is NULL", who);
    if (!path || !*path)
        return crew__fail(CREW_EINVAL, "%s: the path is %s; name the file to write the trace to",
                          who, path ? "empty" : "NULL");
    if (events > CREW__TRACE_MAX_EVENTS)
        return crew__fail(CREW_EINVAL, "%s: events_per_thread is %zu; at most %u", who, events,
                          CREW__TRACE_MAX_EVENTS);
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "%s: " CREW__FORKED_DETAIL, who);
#ifdef CREW_NO_MONITORING
    return crew__fail(CREW_ENOTSUP, "%s: this build of crew leaves tracing out "
                                    "(CREW_MONITORING=OFF)", who);
#else
    crew__trace *tr = p->trace;
    pthread_mutex_lock(&tr->lock);
    if (crew__load_relaxed(&tr->state) & 1u) { /* relaxed: written under this lock */
        pthread_mutex_unlock(&tr->lock);
        return crew__fail(CREW_EINVAL, "%s: the pool is already being traced; one trace at a "
                                       "time (crew_trace_stop ends it)", who);
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        pthread_mutex_unlock(&tr->lock);
        return crew__fail(CREW_EIO, "%s: cannot open \"%s\" for writing: %s", who, path,
                          strerror(e));
    }
    tr->f = f;
    tr->cap = events ? events : CREW__TRACE_DEFAULT_EVENTS;
    tr->t0 = crew__now_ns();
    tr->sessions++;
    /* Seq_cst: publishes cap to the recording threads, and the handshake of trace.h. */
    crew__store_seq_cst(&tr->state, (tr->sessions << 1) | 1u);
    crew__fetch_or_relaxed(&p->timing, CREW__TIMING_TRACE); /* relaxed: see crew_pool.timing */
    pthread_mutex_unlock(&tr->lock);
    return CREW_OK;
#endif
}

int crew_trace_start(crew_pool *p, const char *path) {
    return start(p, path, 0, "crew_trace_start");
}

int crew_trace_start_ex(crew_pool *p, const char *path, size_t events_per_thread) {
    return start(p, path, events_per_thread, "crew_trace_start_ex");
}

/* Turn the trace off, wait for the rings' writers, write and close the file, free the
 * events. Lock held. */
static int stop_locked(crew_pool *p, uint64_t *events, uint64_t *dropped) {
    crew__trace *tr = p->trace;
    uint64_t state = crew__load_relaxed(&tr->state); /* relaxed: written under this lock */
    crew__fetch_and_relaxed(&p->timing, ~CREW__TIMING_TRACE); /* relaxed: a hint */
    crew__store_seq_cst(&tr->state, state & ~(uint64_t)1u);  /* seq_cst: see trace.h */
    for (crew__trace_ring *r = tr->rings; r; r = r->next)
        while (crew__load_seq_cst(&r->busy)) /* seq_cst: see trace.h; a write is short */
            sched_yield();
    crew__trace_write(p, state >> 1, events, dropped);
    int rc = ferror(tr->f) ? CREW_EIO : CREW_OK;
    if (fclose(tr->f) != 0)
        rc = CREW_EIO;
    tr->f = NULL;
    for (crew__trace_ring *r = tr->rings; r; r = r->next) {
        free(r->ev);
        r->ev = NULL;
        r->cap = 0;
        names_free(r);
    }
    return rc;
}

static int stop(crew_pool *p, uint64_t *events, uint64_t *dropped, const char *who) {
    uint64_t e = 0, d = 0;
    int rc = crew__pool_check(p, who);
    if (rc != CREW_OK)
        return rc;
    crew__trace *tr = p->trace;
    pthread_mutex_lock(&tr->lock);
    if (!(crew__load_relaxed(&tr->state) & 1u)) { /* relaxed: written under this lock */
        pthread_mutex_unlock(&tr->lock);
        return crew__fail(CREW_EINVAL, "%s: the pool is not being traced (crew_trace_start "
                                       "begins a trace)", who);
    }
    rc = stop_locked(p, &e, &d);
    pthread_mutex_unlock(&tr->lock);
    if (events)
        *events = e;
    if (dropped)
        *dropped = d;
    if (rc != CREW_OK)
        return crew__fail(rc, "%s: writing the trace failed (disk full, or the file was "
                              "removed?)", who);
    return CREW_OK;
}

int crew_trace_stop(crew_pool *p) {
    return stop(p, NULL, NULL, "crew_trace_stop");
}

int crew_trace_stop_ex(crew_pool *p, uint64_t *events, uint64_t *dropped) {
    return stop(p, events, dropped, "crew_trace_stop_ex");
}

void crew__trace_free(crew_pool *p) {
    crew__trace *tr = p->trace;
    uint64_t e, d;
    if (crew__load_relaxed(&tr->state) & 1u) /* relaxed: no other call on p is in progress */
        (void)stop_locked(p, &e, &d);
    for (crew__trace_ring *r = tr->rings, *next; r; r = next) {
        next = r->next;
        free(r->ev);
        names_free(r);
        free(r);
    }
    pthread_mutex_destroy(&tr->lock);
    free(tr);
    p->trace = NULL;
}
