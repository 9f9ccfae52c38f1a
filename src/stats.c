/*
 * stats.c -- optional monitoring (Jendersie et al., §III-F; Xu & Bode, §2 and §3.3): per-task
 * timestamps turned into response, idle, processing and turnaround distributions, per-worker
 * waiting and busy time and task counts, and pool totals.
 *
 * No lock and no shared cache line on the recording path: each thread records into a block
 * (crew__tstats) and readers sum the blocks.
 *   - A worker owns its record's block: one writer, so a counter is a relaxed load and store
 *     (no read-modify-write). crew_stats_reset cannot zero such a block under its owner's feet,
 *     so it starts a new epoch instead, and the owner zeroes its block when it next records and
 *     sees the epoch change; readers count a block only once its epoch is current.
 *   - Other threads (submitters, waiters that help, blocking threads) share CREW__STATS_STRIPES
 *     blocks, one chosen per thread, with relaxed read-modify-writes; a reset zeroes those.
 * Blocks are allocated the first time a thread records, so a pool that never monitors pays
 * nothing, not even memory. Readers and resets are serialised by pool->stats->lock. Counts read
 * while tasks run may be a few tasks apart from each other (each is exact once the pool is
 * quiet); a task recorded at the moment of a reset may count on either side of it.
 *
 * Histograms are log-linear: values below 16 ns have a bucket each; above, every power of two
 * is split into 8 buckets, so a bucket's width is at most 1/8 of its value (percentiles are
 * reported at the bucket's midpoint, within 12.5%).
 *
 * Every atomic in a block is relaxed: the values are statistics, published to no one; readers
 * that need a task's record (tests once the pool is quiet) get it through the task's completion
 * (crew__tasks_finished's release, the waiter's acquire). The two exceptions are commented.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "atomic.h"
#include "blocking.h"
#include "clock.h"
#include "lock.h"
#include "pool.h"
#include "stats.h"
#include "worker.h"

static unsigned bucket_of(uint64_t v) {
    if (v < 16)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* 4..63 */
    return 16u + (e - 4u) * 8u + (unsigned)((v >> (e - 3u)) & 7u);
}

/* The midpoint of bucket i. */
static uint64_t bucket_value(unsigned i) {
    if (i < 16)
        return i;
    unsigned e = (i - 16u) / 8u + 4u, sub = (i - 16u) % 8u;
    uint64_t lo = ((uint64_t)8u + sub) << (e - 3u), width = (uint64_t)1 << (e - 3u);
    return lo + width / 2;
}

/* ---- recording ---- */

/* c += v: a relaxed read-modify-write in a shared block, a load and a store in an owned one. */
static inline void add(const crew__tstats *s, _Atomic uint64_t *c, uint64_t v) {
    if (s->shared)
        crew__fetch_add_relaxed(c, v);
    else
        crew__store_relaxed(c, crew__load_relaxed(c) + v);
}

/* c = max(c, v). */
static inline void raise_to(const crew__tstats *s, _Atomic uint64_t *c, uint64_t v) {
    uint64_t m = crew__load_relaxed(c);
    if (!s->shared) {
        if (v > m)
            crew__store_relaxed(c, v);
        return;
    }
    while (v > m && !crew__cas_relaxed(c, &m, v)) {
    }
}

static void hist_add(const crew__tstats *s, crew__hist *h, uint64_t v, uint64_t weight) {
    add(s, &h->b[bucket_of(v)], weight);
    add(s, &h->n, weight);
    add(s, &h->sum, v * weight);
    raise_to(s, &h->max, v);
}

/* The statistics a reset clears: everything from `submitted` to the end of the block. */
#define RESETTABLE(s) ((char *)&(s)->submitted)
#define RESETTABLE_SIZE (sizeof(crew__tstats) - offsetof(crew__tstats, submitted))

static void zero_block(crew__tstats *s) {
    _Atomic uint64_t *c = (_Atomic uint64_t *)(void *)RESETTABLE(s);
    for (size_t i = 0; i < RESETTABLE_SIZE / sizeof *c; i++)
        crew__store_relaxed(&c[i], 0);
}

static crew__tstats *new_block(bool shared, uint64_t epoch) {
    crew__tstats *s = calloc(1, sizeof *s);
    if (s) {
        s->shared = shared;
        crew__atomic_init(&s->epoch, epoch);
    }
    return s;
}

crew__tstats *crew__stats_block(crew_pool *p) {
    crew__worker *w = crew__self(p);
    /* Relaxed: the epoch is a number; a record made while it changes lands on either side. */
    uint64_t epoch = crew__load_relaxed(&p->stats->epoch);
    if (w) {
        crew__tstats *s = crew__load_relaxed(&w->stats); /* relaxed: written by this thread */
        if (!s) {
            if (!(s = new_block(false, epoch)))
                return NULL; /* out of memory: this sample is skipped */
            crew__store_release(&w->stats, s); /* release: readers see the block initialised */
        }
        if (crew__load_relaxed(&s->epoch) != epoch) { /* a reset: start over */
            zero_block(s);
            /* Release: a reader that sees the new epoch (acquire) sees the zeroes. */
            crew__store_release(&s->epoch, epoch);
        }
        return s;
    }
    _Atomic(crew__tstats *) *slot = &p->stats->outside[crew__thread_number() % CREW__STATS_STRIPES];
    crew__tstats *s = crew__load_acquire(slot); /* acquire: pairs with the publishing CAS */
    if (!s) {
        crew__tstats *mine = new_block(true, 0);
        if (!mine)
            return NULL;
        /* Acq_rel: publishes our block, or (failing) acquires the one another thread put. */
        if (crew__cas_acq_rel(slot, &s, mine))
            s = mine;
        else
            free(mine);
    }
    return s;
}

/* Tasks queued now, summed over the queues without a consistent view: a task moving from one
 * queue to another (a steal, a worker leaving) can be counted twice or not at all. With a
 * bounded queue the count of tasks holding a place (admitted: exact, since a place is taken
 * before a task is queued and given back when it starts or is dropped) caps the tasks outside
 * the blocking queue, so the figure never exceeds the capacity plus the blocking tasks. */
static size_t queued_now(crew_pool *p) {
    /* A long array's unclaimed tasks wait in its record, not in a queue, and its runners still
     * queued are not tasks (array.c): the sum wraps back to their true count, or, read as two
     * figures at different times, it may come out below 0 for a moment (then 0). Relaxed: a
     * statistic. */
    size_t n = crew__sched_queued(p) + crew__load_relaxed(&p->array_unclaimed);
    if (n > SIZE_MAX / 2)
        n = 0;
    if (p->bounded.capacity == 0)
        return n;
    size_t blocking = p->blocking ? crew__blocking_queued(p) : 0;
    size_t others = n > blocking ? n - blocking : 0;
    size_t admitted = crew__load_seq_cst(&p->bounded.admitted); /* seq_cst: see struct crew_pool */
    return (others < admitted ? others : admitted) + blocking;
}

uint64_t crew__stats_stamp(crew_pool *p, crew_task *t, size_t n, uint64_t submitted) {
    uint64_t accepted = crew__now_ns();
    uint32_t response =
        accepted - submitted > UINT32_MAX ? UINT32_MAX : (uint32_t)(accepted - submitted);
    /* Relaxed: see struct crew_pool. */
    bool counted = crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR;
    uint32_t flags = CREW__TASK_STAMPED | (counted ? CREW__TASK_COUNTED : 0u);
    for (size_t i = 0; i < n; i++) {
        t[i].crew_flags_ |= flags;
        crew__task_submitted_ns(&t[i]) = submitted;
        crew__task_response_ns(&t[i]) = response;
    }
    return accepted;
}

void crew__stats_submitted(crew_pool *p, size_t n, uint64_t submitted, uint64_t accepted) {
    crew__tstats *s = crew__stats_block(p);
    if (!s)
        return;
    add(s, &s->submitted, n);
    hist_add(s, &s->response, accepted - submitted, n);
    /* The queue's length reads every worker's queue, so the peak is sampled: at every array
     * and at one single submission in CREW__PEAK_SAMPLE of each thread. */
    static CREW__TLS unsigned tick;
    if (n > 1 || ++tick % CREW__PEAK_SAMPLE == 0) {
        size_t queued = queued_now(p);
        size_t peak = crew__load_relaxed(&p->stats->queued_peak); /* relaxed: a statistic */
        while (queued > peak && !crew__cas_relaxed(&p->stats->queued_peak, &peak, queued)) {
        }
    }
}

void crew__stats_rejected(crew_pool *p, size_t n) {
    crew__tstats *s = crew__stats_block(p);
    if (s)
        add(s, &s->rejected, n);
}

void crew__stats_dropped(crew_pool *p, enum crew__end how) {
    crew__tstats *s = crew__stats_block(p);
    if (s)
        add(s, how == CREW__EXPIRED ? &s->expired : &s->cancelled, 1);
}

void crew__stats_graph(crew_pool *p, uint64_t ran, uint64_t unstarted) {
    crew__tstats *s = crew__stats_block(p);
    if (!s)
        return;
    add(s, &s->submitted, ran + unstarted);
    add(s, &s->completed, ran);
    add(s, &s->cancelled, unstarted);
}

void crew__stats_done(crew__tstats *s, uint64_t submitted, uint64_t accepted, uint64_t started,
                      uint64_t finished) {
    add(s, &s->completed, 1);
    add(s, &s->tasks, 1);
    add(s, &s->busy_ns, finished - started);
    hist_add(s, &s->idle, started - accepted, 1);
    hist_add(s, &s->processing, finished - started, 1);
    hist_add(s, &s->turnaround, finished - submitted, 1);
}

#define SWITCH_SAMPLE_NS 20000000u /* a worker reads its context switches at most every 20 ms */

void crew__stats_timed(crew_pool *p, crew__tstats *s, uint64_t wait_ns, uint64_t processing_ns,
                       uint64_t now) {
    add(s, &s->timed, 1);
    add(s, &s->timed_busy_ns, processing_ns);
    add(s, &s->timed_wait_ns, wait_ns);
    /* A worker's context switches, read now and then (a system call), as deltas from its last
     * reading: the counts are the thread's own, and a record may be reused by a new thread. */
    static CREW__TLS struct {
        uint64_t at_ns;
        long waits, preemptions;
    } last;
    crew__worker *w = crew__self(p);
    struct rusage ru;
    if (s->shared || !w || now - last.at_ns < SWITCH_SAMPLE_NS ||
        getrusage(RUSAGE_THREAD, &ru) != 0)
        return;
    if (last.at_ns != 0) {
        add(s, &s->waits, (uint64_t)(ru.ru_nvcsw - last.waits));
        add(s, &s->preemptions, (uint64_t)(ru.ru_nivcsw - last.preemptions));
    }
    last.at_ns = now;
    last.waits = ru.ru_nvcsw;
    last.preemptions = ru.ru_nivcsw;
}

void crew__stats_waited(crew_pool *p, uint64_t ns) {
    crew__tstats *s = crew__stats_block(p);
    if (s)
        add(s, &s->waiting_ns, ns);
}

/* Every block of p, in turn: workers' (index < nworkers) then the shared ones. */
static crew__tstats *block_at(crew_pool *p, unsigned i, unsigned nw) {
    /* Acquire: pairs with the release that published the block. */
    return i < nw ? crew__load_acquire(&crew__worker_at(p, i)->stats)
                  : crew__load_acquire(&p->stats->outside[i - nw]);
}

void crew__stats_timed_sum(crew_pool *p, crew__timed_sum *sum) {
    *sum = (crew__timed_sum){0};
    unsigned nw = crew__nworkers(p);
    for (unsigned i = 0; i < nw + CREW__STATS_STRIPES; i++) {
        crew__tstats *s = block_at(p, i, nw);
        if (s) {
            sum->tasks += crew__load_relaxed(&s->timed);
            sum->busy_ns += crew__load_relaxed(&s->timed_busy_ns);
            sum->wait_ns += crew__load_relaxed(&s->timed_wait_ns);
            sum->waits += crew__load_relaxed(&s->waits);
            sum->preemptions += crew__load_relaxed(&s->preemptions);
        }
    }
}

int crew__stats_init(crew_pool *p) {
    crew__pool_stats *ps = crew__alloc_locked(sizeof *ps, offsetof(crew__pool_stats, lock));
    if (!ps)
        return CREW_ENOMEM;
    ps->epoch_ns = crew__now_ns();
    crew__atomic_init(&ps->epoch, 1u);
    crew__atomic_init(&ps->queued_peak, 0u);
    for (unsigned i = 0; i < CREW__STATS_STRIPES; i++)
        crew__atomic_init(&ps->outside[i], NULL);
    p->stats = ps;
    return CREW_OK;
}

void crew__stats_free(crew_pool *p) {
    unsigned nw = crew__nworkers(p);
    for (unsigned i = 0; i < nw + CREW__STATS_STRIPES; i++)
        free(block_at(p, i, nw));
    pthread_mutex_destroy(&p->stats->lock);
    free(p->stats);
    p->stats = NULL;
}

/* ---- reading ---- */

/* A histogram summed from blocks (plain numbers: the reader's own copy). */
typedef struct hist_sum {
    uint64_t n, sum, max, b[CREW__HIST_BUCKETS];
} hist_sum;

typedef struct totals {
    uint64_t submitted, completed, cancelled, rejected, expired;
    hist_sum response, idle, processing, turnaround;
} totals;

static void hist_merge(hist_sum *into, const crew__hist *from) {
    for (unsigned i = 0; i < CREW__HIST_BUCKETS; i++)
        into->b[i] += crew__load_relaxed(&from->b[i]);
    into->n += crew__load_relaxed(&from->n);
    into->sum += crew__load_relaxed(&from->sum);
    uint64_t m = crew__load_relaxed(&from->max);
    if (m > into->max)
        into->max = m;
}

static uint64_t percentile(const hist_sum *h, double q) {
    /* Rank within the buckets' own total: n and the buckets are read at slightly different
     * moments while tasks run. */
    uint64_t total = 0;
    for (unsigned i = 0; i < CREW__HIST_BUCKETS; i++)
        total += h->b[i];
    if (total == 0)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)(total - 1)) + 1, seen = 0;
    for (unsigned i = 0; i < CREW__HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t v = bucket_value(i);
            return v > h->max ? h->max : v;
        }
    }
    return h->max;
}

static crew_latency summarize(const hist_sum *h) {
    crew_latency l = {0};
    l.count = h->n;
    l.mean_ns = h->n ? (double)h->sum / (double)h->n : 0.0;
    l.p50_ns = percentile(h, 0.50);
    l.p90_ns = percentile(h, 0.90);
    l.p99_ns = percentile(h, 0.99);
    l.max_ns = h->max;
    return l;
}

/* Is block s counted in the current epoch? stats_lock held. */
static bool current(crew_pool *p, const crew__tstats *s) {
    /* Acquire: pairs with the owner's release after it zeroed the block for this epoch. */
    return s &&
           (s->shared || crew__load_acquire(&s->epoch) == crew__load_relaxed(&p->stats->epoch));
}

/* Sum every current block into *t. stats_lock held. */
static void sum_blocks(crew_pool *p, totals *t) {
    memset(t, 0, sizeof *t);
    unsigned nw = crew__nworkers(p);
    for (unsigned i = 0; i < nw + CREW__STATS_STRIPES; i++) {
        crew__tstats *s = block_at(p, i, nw);
        if (!current(p, s))
            continue;
        t->submitted += crew__load_relaxed(&s->submitted);
        t->completed += crew__load_relaxed(&s->completed);
        t->cancelled += crew__load_relaxed(&s->cancelled);
        t->rejected += crew__load_relaxed(&s->rejected);
        t->expired += crew__load_relaxed(&s->expired);
        hist_merge(&t->response, &s->response);
        hist_merge(&t->idle, &s->idle);
        hist_merge(&t->processing, &s->processing);
        hist_merge(&t->turnaround, &s->turnaround);
    }
}

/* ---- the public calls ---- */

int crew_set_monitoring(crew_pool *p, int on) {
    int rc = crew__pool_check(p, "crew_set_monitoring");
    if (rc != CREW_OK)
        return rc;
#ifdef CREW_NO_MONITORING
    if (on)
        return crew__fail(CREW_ENOTSUP, "crew_set_monitoring: this build leaves monitoring out "
                                        "(CREW_MONITORING=OFF)");
#endif
    /* Relaxed: a hint read by submitters before they take the lock; a task submitted while it
     * changes is simply timed or not. */
    if (on)
        crew__fetch_or_relaxed(&p->timing, CREW__TIMING_MONITOR);
    else
        crew__fetch_and_relaxed(&p->timing, ~CREW__TIMING_MONITOR);
    return CREW_OK;
}

int crew_stats_get(crew_pool *p, crew_stats *out) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_stats_get: the pool is NULL");
    if (!out)
        return crew__fail(CREW_EINVAL, "crew_stats_get: out is NULL");
    if (out->size < offsetof(crew_stats, response))
        return crew__fail(CREW_EINVAL,
                          "crew_stats_get: out->size is %zu; set it to sizeof(crew_stats) (at "
                          "least %zu)",
                          out->size, offsetof(crew_stats, response));
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_stats_get: " CREW__FORKED_DETAIL);
    totals *t = malloc(sizeof *t);
    if (!t)
        return crew__fail(CREW_ENOMEM, "crew_stats_get: out of memory for the totals");
    crew_stats s;
    memset(&s, 0, sizeof s);
    pthread_mutex_lock(&p->stats->lock);
    sum_blocks(p, t);
    /* Relaxed: see crew_set_monitoring. */
    s.monitoring = (crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR) != 0;
    s.uptime_ns = crew__now_ns() - p->stats->epoch_ns;
    size_t queued = queued_now(p), pending = crew__load_seq_cst(&p->pending); /* seq_cst */
    size_t peak = crew__load_relaxed(&p->stats->queued_peak); /* relaxed: a statistic */
    /* pending counts every unfinished task plus the credit workers hold (crew__worker). */
    size_t credit = 0;
    for (unsigned i = 0, nw = crew__nworkers(p); i < nw; i++)
        credit += crew__load_relaxed(&crew__worker_at(p, i)->credit); /* relaxed: a snapshot */
    s.queued = queued;
    s.queued_peak = peak > queued ? peak : queued;
    /* All three move while tasks run: a snapshot, exact once the pool is quiet. */
    s.running = pending > queued + credit ? pending - queued - credit : 0;
    pthread_mutex_lock(&p->lock);
    s.threads = crew__running_workers_locked(p);
    s.threads_peak = p->stats->threads_peak;
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->stats->lock);

    s.submitted = t->submitted;
    s.completed = t->completed;
    s.cancelled = t->cancelled;
    s.rejected = t->rejected;
    s.expired = t->expired;
    s.throughput = s.uptime_ns ? (double)s.completed * 1e9 / (double)s.uptime_ns : 0.0;
    s.response = summarize(&t->response);
    s.idle = summarize(&t->idle);
    s.processing = summarize(&t->processing);
    s.turnaround = summarize(&t->turnaround);
    free(t);
    size_t n = out->size < sizeof s ? out->size : sizeof s;
    s.size = out->size;
    memcpy(out, &s, n);
    return CREW_OK;
}

int crew_stats_threads(crew_pool *p, crew_thread_stats *out, size_t cap, size_t *n) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_stats_threads: the pool is NULL");
    if (!n)
        return crew__fail(CREW_EINVAL, "crew_stats_threads: n is NULL");
    if (!out && cap)
        return crew__fail(CREW_EINVAL,
                          "crew_stats_threads: out is NULL but cap is %zu; pass cap 0 to ask "
                          "only for the count",
                          cap);
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_stats_threads: " CREW__FORKED_DETAIL);
    pthread_mutex_lock(&p->stats->lock);
    unsigned nw = crew__nworkers(p);
    *n = nw;
    for (unsigned i = 0; i < nw && i < cap; i++) {
        crew__worker *w = crew__worker_at(p, i);
        crew_thread_stats t = {0};
        t.index = w->index;
        t.state = crew__load_relaxed(&w->state); /* relaxed: a snapshot of a moving value */
        crew__tstats *s = block_at(p, i, nw);
        if (current(p, s)) {
            t.waiting_ns = crew__load_relaxed(&s->waiting_ns);
            t.busy_ns = crew__load_relaxed(&s->busy_ns);
            t.tasks = crew__load_relaxed(&s->tasks);
        }
        /* Relaxed: a counter (see crew__worker); the reset keeps a base instead of zeroing a
         * value that only its owner writes. */
        t.stolen = crew__load_relaxed(&w->stolen) - w->stolen_base;
        out[i] = t;
    }
    pthread_mutex_unlock(&p->stats->lock);
    return CREW_OK;
}

int crew_stats_reset(crew_pool *p) {
    int rc = crew__pool_check(p, "crew_stats_reset");
    if (rc != CREW_OK)
        return rc;
    pthread_mutex_lock(&p->stats->lock);
    /* Relaxed: workers zero their own blocks when they see the new epoch (crew__stats_block);
     * readers hold stats_lock, which orders this store before their loads. */
    crew__store_relaxed(&p->stats->epoch, crew__load_relaxed(&p->stats->epoch) + 1);
    unsigned nw = crew__nworkers(p);
    for (unsigned i = 0; i < nw; i++) {
        crew__worker *w = crew__worker_at(p, i);
        w->stolen_base = crew__load_relaxed(&w->stolen); /* relaxed: a counter */
    }
    for (unsigned i = 0; i < CREW__STATS_STRIPES; i++) {
        crew__tstats *s = block_at(p, nw + i, nw);
        if (s)
            zero_block(s); /* shared blocks: every write is a read-modify-write */
    }
    p->stats->epoch_ns = crew__now_ns();
    crew__store_relaxed(&p->stats->queued_peak, crew__sched_queued(p)); /* relaxed: a statistic */
    pthread_mutex_lock(&p->lock);
    p->stats->threads_peak = crew__running_workers_locked(p);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->stats->lock);
    return CREW_OK;
}

static void json_latency(FILE *f, const char *name, const crew_latency *l, const char *sep) {
    fprintf(f,
            "  \"%s\": {\"count\": %llu, \"mean_ns\": %.1f, \"p50_ns\": %llu, \"p90_ns\": %llu, "
            "\"p99_ns\": %llu, \"max_ns\": %llu}%s\n",
            name, (unsigned long long)l->count, l->mean_ns, (unsigned long long)l->p50_ns,
            (unsigned long long)l->p90_ns, (unsigned long long)l->p99_ns,
            (unsigned long long)l->max_ns, sep);
}

int crew_stats_write_json(crew_pool *p, FILE *f) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_stats_write_json: the pool is NULL");
    if (!f)
        return crew__fail(CREW_EINVAL, "crew_stats_write_json: f is NULL");
    crew_stats s;
    s.size = sizeof s;
    int rc = crew_stats_get(p, &s);
    if (rc != CREW_OK)
        return crew__fail_as(rc, "crew_stats_write_json");
    size_t n = 0;
    crew_stats_threads(p, NULL, 0, &n);
    crew_thread_stats *t = n ? calloc(n, sizeof *t) : NULL;
    if (n && !t)
        return crew__fail(CREW_ENOMEM, "crew_stats_write_json: out of memory for %zu workers' "
                                       "statistics", n);
    size_t cap = n;
    if (cap)
        crew_stats_threads(p, t, cap, &n);
    if (n > cap) /* workers were added since the count: write those the array holds */
        n = cap;
    fprintf(f,
            "{\n  \"monitoring\": %s,\n  \"uptime_ns\": %llu,\n  \"submitted\": %llu,\n"
            "  \"completed\": %llu,\n  \"cancelled\": %llu,\n  \"expired\": %llu,\n"
            "  \"rejected\": %llu,\n"
            "  \"queued\": %llu,\n  \"queued_peak\": %llu,\n  \"running\": %llu,\n"
            "  \"threads\": %u,\n  \"threads_peak\": %u,\n  \"throughput\": %.3f,\n",
            s.monitoring ? "true" : "false", (unsigned long long)s.uptime_ns,
            (unsigned long long)s.submitted, (unsigned long long)s.completed,
            (unsigned long long)s.cancelled, (unsigned long long)s.expired,
            (unsigned long long)s.rejected,
            (unsigned long long)s.queued, (unsigned long long)s.queued_peak,
            (unsigned long long)s.running, s.threads, s.threads_peak, s.throughput);
    json_latency(f, "response", &s.response, ",");
    json_latency(f, "idle", &s.idle, ",");
    json_latency(f, "processing", &s.processing, ",");
    json_latency(f, "turnaround", &s.turnaround, ",");
    fprintf(f, "  \"workers\": [");
    for (size_t i = 0; i < n; i++)
        fprintf(f,
                "%s\n    {\"index\": %u, \"state\": %d, \"waiting_ns\": %llu, \"busy_ns\": %llu, "
                "\"tasks\": %llu, \"stolen\": %llu}",
                i ? "," : "", t[i].index, t[i].state, (unsigned long long)t[i].waiting_ns,
                (unsigned long long)t[i].busy_ns, (unsigned long long)t[i].tasks,
                (unsigned long long)t[i].stolen);
    fprintf(f, "%s]\n}\n", n ? "\n  " : "");
    free(t);
    if (ferror(f))
        return crew__fail(CREW_EIO, "crew_stats_write_json: writing to the stream failed (its "
                                    "error indicator is set; ferror)");
    return CREW_OK;
}
