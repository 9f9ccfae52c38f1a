/*
 * diagnose.c -- crew_diagnose: what looks stuck in a pool (stall diagnostics).
 *
 * Three sources, none of them on the hot path of a pool that is not monitored:
 *   - a busy record per pool thread (crew__busy), written only for timed tasks (worker.c's
 *     run_timed) as a seqlock, read here (without fences, which ThreadSanitizer cannot check:
 *     the fields are stored with release and loaded with acquire instead);
 *   - the queues (schedule.c's crew__sched_visit): a locked queue tells the acceptance time of
 *     the oldest timed task at the front of each priority level; a work-stealing deque cannot
 *     be read by another thread (its tasks may be taken and freed meanwhile), so its age comes
 *     from comparing its top with the previous call: top only grows, and taking its oldest
 *     task, or its last one, always moves it, so an unchanged top over a non-empty deque means
 *     the same task has waited at the front all along;
 *   - the list of threads asleep in a wait or waiting for room (pool->diag->blocked, under
 *     pool->lock), which they join only when they really sleep.
 * Then two listings, not findings: what waits in the timer heap (timer.c's view), and the task
 * graph runs in progress (graph_seen.c describes them).
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <link.h>
#include <unistd.h>

#include "atomic.h"
#include "blocking.h"
#include "diagnose.h"
#include "graph.h"
#include "lock.h"
#include "pool.h"
#include "schedule.h"
#include "clock.h"
#include "timer.h"

CREW__TLS crew__busy *crew__tls_busy;

/* The owner's half of the seqlock: seq odd, the fields, seq even. A reader that loads a field
 * (acquire) written here (release) also sees the odd seq, so its second look at seq differs
 * from its first. */
static void busy_write(crew__busy *b, uintptr_t fn, uint64_t since) {
    uint32_t s = crew__load_relaxed(&b->seq); /* relaxed: only the owner writes it */
    crew__store_relaxed(&b->seq, s + 1);
    crew__store_release(&b->since, since); /* release: the odd seq before it */
    crew__store_release(&b->fn, fn);
    crew__store_release(&b->seq, s + 2); /* release: the fields before the even seq */
}

void crew__busy_init(crew__busy *b, crew_pool *p) {
    b->pool = p;
    crew__atomic_init(&b->seq, 0u);
    crew__atomic_init(&b->fn, 0u);
    crew__atomic_init(&b->since, 0u);
}

void crew__busy_begin(crew__busy *b, crew_fn fn, uint64_t started) {
    busy_write(b, (uintptr_t)fn, started);
}

void crew__busy_end(crew__busy *b) { busy_write(b, 0, 0); }

/* The reader's half: seq with acquire, the fields with acquire, seq again; the two must be equal
 * and even. False if the owner kept writing (then it is not stuck on one task). */
static bool busy_read(crew__busy *b, uintptr_t *fn, uint64_t *since) {
    for (int tries = 0; tries < 64; tries++) {
        uint32_t s1 = crew__load_acquire(&b->seq);
        if (s1 & 1u)
            continue;
        *fn = crew__load_acquire(&b->fn); /* acquire: see busy_write */
        *since = crew__load_acquire(&b->since);
        if (crew__load_relaxed(&b->seq) == s1) /* relaxed: ordered by the acquires above */
            return true;
    }
    return false;
}

void crew__blocked_add(crew_pool *p, crew__blocked *b) {
    if (b->since == 0)
        b->since = crew__now_ns();
    b->prev = NULL;
    b->next = p->diag->blocked;
    if (p->diag->blocked)
        p->diag->blocked->prev = b;
    p->diag->blocked = b;
}

void crew__blocked_remove(crew_pool *p, crew__blocked *b) {
    if (b->prev)
        b->prev->next = b->next;
    else
        p->diag->blocked = b->next;
    if (b->next)
        b->next->prev = b->prev;
}

/* One crew_diagnose call. */
typedef struct diag {
    crew_pool *p;
    FILE *f;
    uint64_t now, busy_ns, queued_ns, blocked_ns;
    int findings;
    size_t deques; /* deques visited so far */
} diag;

/* The record of the next deque visited, or NULL if memory ran out (that deque is skipped). */
static crew__deque_seen *next_seen(diag *d) {
    crew_pool *p = d->p;
    size_t k = d->deques++;
    if (k >= p->diag->nseen) {
        size_t n = k + 16;
        crew__deque_seen *s = realloc(p->diag->seen, n * sizeof *s);
        if (!s)
            return NULL;
        memset(s + p->diag->nseen, 0, (n - p->diag->nseen) * sizeof *s);
        p->diag->seen = s;
        p->diag->nseen = n;
    }
    return &p->diag->seen[k];
}

int crew__diagnose_init(crew_pool *p) {
    p->diag = crew__alloc_locked(sizeof *p->diag, offsetof(crew__diag, lock));
    return p->diag ? CREW_OK : CREW_ENOMEM;
}

void crew__diagnose_free(crew_pool *p) {
    free(p->diag->seen);
    pthread_mutex_destroy(&p->diag->lock);
    free(p->diag);
    p->diag = NULL;
}

static void say(diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(diag *d, const char *fmt, ...) {
    if (!d->f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(d->f, fmt, ap);
    va_end(ap);
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* The executable or shared object that holds fn, for addr2line: its path (the running program's
 * own, which the loader names only by argv[0], read from /proc/self/exe) into buf, and the
 * address it was loaded at (what addr2line's offsets count from: the load bias, 0 for a
 * program that is not position-independent). False when the loader knows no object there. */
static bool object_of(uintptr_t fn, Dl_info *info, char *buf, size_t size, uintptr_t *base) {
#ifdef __GLIBC__
    struct link_map *map = NULL;
    if (!dladdr1((void *)fn, info, (void **)&map, RTLD_DL_LINKMAP))
        return false;
    *base = map ? (uintptr_t)map->l_addr : (uintptr_t)info->dli_fbase;
    bool main_program = map && map->l_name[0] == '\0';
#else
    if (!dladdr((void *)fn, info))
        return false;
    *base = (uintptr_t)info->dli_fbase;
    bool main_program = false;
#endif
    ssize_t len;
    if (main_program && (len = readlink("/proc/self/exe", buf, size - 1)) > 0)
        buf[len] = '\0';
    else
        snprintf(buf, size, "%s", info->dli_fname ? info->dli_fname : "?");
    return true;
}

/* The task function, as "0x... (symbol+0x..., object+0x...)": its address, its symbol when the
 * dynamic linker knows it (exported, or the program linked with -rdynamic), and always the
 * object and the offset in it that `addr2line -f -e object 0x...` turns into a source line. */
static void say_fn(diag *d, uintptr_t fn) {
    Dl_info info;
    char object[4096];
    uintptr_t base;
    say(d, "%#lx", (unsigned long)fn);
    if (!object_of(fn, &info, object, sizeof object, &base))
        return;
    say(d, " (");
    if (info.dli_sname)
        say(d, "%s+0x%lx, ", info.dli_sname, (unsigned long)(fn - (uintptr_t)info.dli_saddr));
    say(d, "%s+0x%lx)", object, (unsigned long)(fn - base));
}

static void check_busy(diag *d, crew__busy *b, const char *role, unsigned index) {
    uintptr_t fn;
    uint64_t since;
    if (!busy_read(b, &fn, &since) || fn == 0 || since > d->now || d->now - since < d->busy_ns)
        return;
    d->findings++;
    say(d, "  busy: %s %u (thread %s-%u-%c%u) has run one task for %.0f ms: ", role, index,
        d->p->name, d->p->id, role[0] == 'w' ? 'w' : 'b', index, ms(d->now - since));
    say_fn(d, fn);
    say(d, "\n");
}

/* The blocking threads alive, copied under pool->lock (their records live as long as the
 * pool), so that nothing is written out while the lock is held. */
typedef struct bthreads {
    size_t n, cap;
    struct {
        unsigned index;
        crew__busy *busy;
    } *v;
} bthreads;

static void note_bthread(void *ctx, unsigned index, crew__busy *b) {
    bthreads *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        void *v = realloc(l->v, cap * sizeof *l->v);
        if (!v)
            return; /* out of memory: that thread goes unreported */
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].index = index;
    l->v[l->n++].busy = b;
}

static void check_bthreads(diag *d) {
    bthreads l = {0, 0, NULL};
    pthread_mutex_lock(&d->p->lock);
    crew__blocking_visit_locked(d->p, note_bthread, &l);
    pthread_mutex_unlock(&d->p->lock);
    for (size_t i = 0; i < l.n; i++)
        check_busy(d, l.v[i].busy, "blocking thread", l.v[i].index);
    free(l.v);
}

static void check_queue(void *ctx, const crew__queue_view *v) {
    diag *d = ctx;
    char name[64];
    if (v->index >= 0)
        snprintf(name, sizeof name, "%s %d", v->what, v->index);
    else
        snprintf(name, sizeof name, "%s", v->what);
    if (v->deque) {
        crew__deque_seen *q = next_seen(d);
        int64_t top = crew__deque_top(v->deque);
        if (!q)
            return;
        if (v->n == 0) {
            q->since = 0;
            return;
        }
        if (q->since == 0 || q->top != top) { /* new at the front since last time */
            q->top = top;
            q->since = d->now;
            return;
        }
        if (d->now - q->since >= d->queued_ns) {
            d->findings++;
            say(d,
                "  queue: %s holds %zu tasks; its oldest has waited at least %.0f ms (none taken "
                "from its front since an earlier crew_diagnose)\n",
                name, v->n, ms(d->now - q->since));
        }
        return;
    }
    if (v->oldest != 0 && v->oldest <= d->now && d->now - v->oldest >= d->queued_ns) {
        d->findings++;
        say(d, "  queue: %s holds %zu tasks; the oldest has waited %.0f ms\n", name, v->n,
            ms(d->now - v->oldest));
    }
}

/* Threads blocked past the limit, copied under pool->lock and written out after it. */
static void check_blocked(diag *d) {
    size_t n = 0, cap = 0;
    crew__blocked *copy = NULL;
    pthread_mutex_lock(&d->p->lock);
    for (crew__blocked *b = d->p->diag->blocked; b; b = b->next) {
        if (b->since > d->now || d->now - b->since < d->blocked_ns)
            continue;
        if (n == cap) {
            size_t c = cap ? 2 * cap : 16;
            crew__blocked *v = realloc(copy, c * sizeof *v);
            if (!v)
                break; /* out of memory: the rest go unreported */
            copy = v;
            cap = c;
        }
        copy[n++] = *b;
    }
    pthread_mutex_unlock(&d->p->lock);
    for (size_t i = 0; i < n; i++) {
        const crew__blocked *b = &copy[i];
        d->findings++;
        double waited = ms(d->now - b->since);
        if (b->kind == CREW__BLOCKED_ROOM)
            say(d,
                "  blocked: a submitter has waited %.0f ms for room for %zu task(s) in the full "
                "queue (capacity %zu)\n",
                waited, b->n, d->p->bounded.capacity);
        else if (b->kind == CREW__BLOCKED_WAIT)
            say(d, "  blocked: a thread has waited %.0f ms in crew_wait for group {%u, %u}\n",
                waited, crew__handle_public(&d->p->groups, b->group).slot, b->group.gen);
        else if (b->kind == CREW__BLOCKED_JOIN)
            say(d, "  blocked: a thread has waited %.0f ms in crew_join for a half another thread"
                   " took\n", waited);
        else
            say(d, "  blocked: a thread has waited %.0f ms in crew_wait_all\n", waited);
    }
    free(copy);
}

/* One periodic timer (crew__timers_list). */
static void say_timer(diag *d, const crew__timer_info *t) {
    uint64_t when = t->when;
    say(d, "    timer ");
    say_fn(d, (uintptr_t)t->fn);
    say(d, ": every %.3f ms, %s", ms(t->period_ns), t->state);
    if (when)
        say(d, when > d->now ? ", next run in %.3f ms" : ", due %.3f ms ago",
            ms(when > d->now ? when - d->now : d->now - when));
    say(d, "\n");
}

/* What waits in the timer heap (timer.h): not a finding, a listing. */
static void list_timers(diag *d) {
    crew__timers_view v;
    crew__timers_view_get(d->p, &v);
    if (v.delayed == 0 && v.timers == 0)
        return;
    say(d, "  time: %zu delayed tasks waiting, %zu periodic timers (%zu armed), %llu fired so "
           "far\n",
        v.delayed, v.timers, v.armed, (unsigned long long)v.fired);
    if (v.next_when) {
        say(d, "    next due %s %.3f ms: ", v.next_when > d->now ? "in" : "since",
            ms(v.next_when > d->now ? v.next_when - d->now : d->now - v.next_when));
        say_fn(d, (uintptr_t)v.next_fn);
        say(d, "\n");
    }
    enum { MAX_LISTED = 16 };
    crew__timer_info list[MAX_LISTED]; /* copied under the heap's lock, printed without it */
    size_t n = crew__timers_list(d->p, list, MAX_LISTED);
    for (size_t i = 0; i < n && i < MAX_LISTED; i++)
        say_timer(d, &list[i]);
    if (n > MAX_LISTED)
        say(d, "    ... and %zu more timers\n", n - MAX_LISTED);
}

/* The task graph runs in progress (graph_seen.c): not a finding, a listing. */
static void list_graphs(diag *d) {
    size_t runs;
    char *text = crew__graph_runs_describe(d->p, &runs); /* made under the graphs' locks */
    if (runs != 0) {
        say(d, "  graphs: %zu run(s) in progress\n", runs);
        if (text)
            say(d, "%s", text);
        else
            say(d, "    (out of memory to describe them)\n");
    }
    free(text);
}

int crew_diagnose_ex(crew_pool *p, FILE *f, unsigned busy_ms, unsigned queued_ms,
                     unsigned blocked_ms) {
    int rc = crew__pool_check(p, "crew_diagnose");
    if (rc != CREW_OK)
        return rc;
    diag d = {p, f, 0, (uint64_t)busy_ms * 1000000u, (uint64_t)queued_ms * 1000000u,
              (uint64_t)blocked_ms * 1000000u, 0, 0};
    pthread_mutex_lock(&p->diag->lock);
    d.now = crew__now_ns();
    unsigned timing = crew__load_relaxed(&p->timing); /* relaxed: see struct crew_pool */
    say(&d,
        "crew_diagnose: pool %s-%u (%s), %u workers, %zu tasks queued%s%s; limits: busy %u ms, "
        "queued %u ms, blocked %u ms\n",
        p->name, p->id, crew__sched_what(p), crew_size(p), crew__sched_queued(p),
        crew__paused(p) ? ", paused" : "", /* relaxed: a report */
        crew__load_seq_cst(&p->state) != CREW__OPEN ? ", shutting down" : "", busy_ms, queued_ms,
        blocked_ms);
    if (!timing)
        say(&d, "  (monitoring is off: running tasks and the locked queues' waiting tasks are not "
                "timed; crew_set_monitoring turns it on)\n");
    unsigned nw = crew__nworkers(p);
    for (unsigned i = 0; i < nw; i++) {
        crew__worker *w = crew__worker_at(p, i);
        check_busy(&d, &w->busy, "worker", w->index);
    }
    check_bthreads(&d);
    crew__sched_visit(p, check_queue, &d);
    check_blocked(&d);
    list_timers(&d);
    list_graphs(&d);
    if (d.findings == 0)
        say(&d, "  nothing stalled\n");
    pthread_mutex_unlock(&p->diag->lock);
    if (f && ferror(f))
        return crew__fail(CREW_EIO, "crew_diagnose: writing the report failed (the stream's "
                                    "error indicator is set; ferror)");
    return d.findings;
}

int crew_diagnose(crew_pool *p, FILE *f) {
    return crew_diagnose_ex(p, f, CREW_DIAGNOSE_DEFAULT_MS, CREW_DIAGNOSE_DEFAULT_MS,
                            CREW_DIAGNOSE_DEFAULT_MS);
}
