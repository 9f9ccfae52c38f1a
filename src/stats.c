/*
 * stats.c -- optional monitoring (seed 000 §III-F; seed 001 §2 and §3.3): per-task timestamps
 * turned into response, idle, processing and turnaround distributions, per-worker waiting and
 * busy time and task counts, and pool totals.
 *
 * Each thread records into its own block (a worker into its record's block, any other thread --
 * a submitter, a helping waiter -- into the pool's shared "outside" block); readers sum the
 * blocks. With one shared queue every recording point already holds pool->lock, so blocks are
 * plain memory written and read under that lock. Blocks are allocated the first time a thread
 * records, so a pool that never monitors pays nothing, not even memory.
 *
 * Histograms are log-linear: values below 16 ns have a bucket each; above, every power of two
 * is split into 8 buckets, so a bucket's width is at most 1/8 of its value (percentiles are
 * reported at the bucket's midpoint, within 12.5%).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic.h"
#include "internal.h"

uint64_t crew__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

void crew__hist_add(crew__hist *h, uint64_t v, uint64_t weight) {
    h->b[bucket_of(v)] += weight;
    h->n += weight;
    h->sum += v * weight;
    if (v > h->max)
        h->max = v;
}

static void hist_merge(crew__hist *into, const crew__hist *from) {
    for (unsigned i = 0; i < CREW__HIST_BUCKETS; i++)
        into->b[i] += from->b[i];
    into->n += from->n;
    into->sum += from->sum;
    if (from->max > into->max)
        into->max = from->max;
}

static uint64_t percentile(const crew__hist *h, double q) {
    if (h->n == 0)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)(h->n - 1)) + 1, seen = 0;
    for (unsigned i = 0; i < CREW__HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t v = bucket_value(i);
            return v > h->max ? h->max : v;
        }
    }
    return h->max;
}

static crew_latency summarize(const crew__hist *h) {
    crew_latency l = {0};
    l.count = h->n;
    l.mean_ns = h->n ? (double)h->sum / (double)h->n : 0.0;
    l.p50_ns = percentile(h, 0.50);
    l.p90_ns = percentile(h, 0.90);
    l.p99_ns = percentile(h, 0.99);
    l.max_ns = h->max;
    return l;
}

crew__tstats *crew__stats_block_locked(crew_pool *p) {
    crew__worker *w = crew__tls_worker;
    crew__tstats **slot = w && w->pool == p ? &w->stats : &p->outside;
    if (!*slot)
        *slot = calloc(1, sizeof **slot); /* NULL: out of memory, this sample is skipped */
    return *slot;
}

void crew__stats_submitted_locked(crew_pool *p, size_t n, uint64_t submitted, uint64_t accepted) {
    crew__tstats *s = crew__stats_block_locked(p);
    if (!s)
        return;
    s->submitted += n;
    crew__hist_add(&s->response, accepted - submitted, n);
    size_t queued = crew__sched_queued(p);
    if (queued > p->queued_peak)
        p->queued_peak = queued;
}

void crew__stats_rejected_locked(crew_pool *p, size_t n) {
    crew__tstats *s = crew__stats_block_locked(p);
    if (s)
        s->rejected += n;
}

void crew__stats_cancelled_locked(crew_pool *p) {
    crew__tstats *s = crew__stats_block_locked(p);
    if (s)
        s->cancelled++;
}

void crew__stats_done_locked(crew_pool *p, uint64_t submitted, uint64_t accepted,
                             uint64_t started, uint64_t finished) {
    crew__tstats *s = crew__stats_block_locked(p);
    if (!s)
        return;
    s->completed++;
    s->tasks++;
    s->busy_ns += finished - started;
    crew__hist_add(&s->idle, started - accepted, 1);
    crew__hist_add(&s->processing, finished - started, 1);
    crew__hist_add(&s->turnaround, finished - submitted, 1);
}

void crew__stats_waited_locked(crew_pool *p, uint64_t ns) {
    crew__tstats *s = crew__stats_block_locked(p);
    if (s)
        s->waiting_ns += ns;
}

void crew__stats_free(crew_pool *p) {
    free(p->outside);
    p->outside = NULL;
    for (unsigned i = 0; i < crew__nworkers(p); i++) {
        free(crew__worker_at(p, i)->stats);
        crew__worker_at(p, i)->stats = NULL;
    }
}

/* ---- the public calls ---- */

int crew_set_monitoring(crew_pool *p, int on) {
    if (!p)
        return CREW_EINVAL;
    /* Relaxed: a hint read by submitters before they take the lock; a task submitted while it
     * changes is simply timed or not. */
    if (on)
        atomic_fetch_or_explicit(&p->timing, CREW__TIMING_MONITOR, memory_order_relaxed);
    else
        atomic_fetch_and_explicit(&p->timing, ~CREW__TIMING_MONITOR, memory_order_relaxed);
    return CREW_OK;
}

/* Sum every block into *total. resize_lock and lock held. */
static void sum_blocks(crew_pool *p, crew__tstats *total) {
    memset(total, 0, sizeof *total);
    unsigned nw = crew__nworkers(p);
    for (unsigned i = 0; i <= nw; i++) {
        const crew__tstats *s = i < nw ? crew__worker_at(p, i)->stats : p->outside;
        if (!s)
            continue;
        total->submitted += s->submitted;
        total->completed += s->completed;
        total->cancelled += s->cancelled;
        total->rejected += s->rejected;
        hist_merge(&total->response, &s->response);
        hist_merge(&total->idle, &s->idle);
        hist_merge(&total->processing, &s->processing);
        hist_merge(&total->turnaround, &s->turnaround);
    }
}

int crew_stats_get(crew_pool *p, crew_stats *out) {
    if (!p || !out || out->size < offsetof(crew_stats, response))
        return CREW_EINVAL;
    crew__tstats *total = malloc(sizeof *total);
    if (!total)
        return CREW_ENOMEM;
    crew_stats s;
    memset(&s, 0, sizeof s);
    pthread_mutex_lock(&p->resize_lock);
    pthread_mutex_lock(&p->lock);
    sum_blocks(p, total);
    /* Relaxed: see crew_set_monitoring. */
    s.monitoring = (crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR) != 0;
    s.uptime_ns = crew__now_ns() - p->stats_epoch_ns;
    size_t queued = crew__sched_queued(p), pending = atomic_load(&p->pending); /* seq_cst */
    s.queued = queued;
    s.queued_peak = p->queued_peak > queued ? p->queued_peak : queued;
    s.running = pending > queued ? pending - queued : 0; /* both move while tasks run */
    s.threads = crew__running_workers_locked(p);
    s.threads_peak = p->threads_peak;
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->resize_lock);

    s.submitted = total->submitted;
    s.completed = total->completed;
    s.cancelled = total->cancelled;
    s.rejected = total->rejected;
    s.throughput = s.uptime_ns ? (double)s.completed * 1e9 / (double)s.uptime_ns : 0.0;
    s.response = summarize(&total->response);
    s.idle = summarize(&total->idle);
    s.processing = summarize(&total->processing);
    s.turnaround = summarize(&total->turnaround);
    free(total);
    size_t n = out->size < sizeof s ? out->size : sizeof s;
    s.size = out->size;
    memcpy(out, &s, n);
    return CREW_OK;
}

int crew_stats_threads(crew_pool *p, crew_thread_stats *out, size_t cap, size_t *n) {
    if (!p || !n || (!out && cap))
        return CREW_EINVAL;
    pthread_mutex_lock(&p->resize_lock);
    pthread_mutex_lock(&p->lock);
    unsigned nw = crew__nworkers(p);
    *n = nw;
    for (unsigned i = 0; i < nw && i < cap; i++) {
        crew__worker *w = crew__worker_at(p, i);
        crew_thread_stats t = {0};
        t.index = w->index;
        t.state = crew__load_relaxed(&w->state); /* relaxed: transitions happen under the lock */
        if (w->stats) {
            t.waiting_ns = w->stats->waiting_ns;
            t.busy_ns = w->stats->busy_ns;
            t.tasks = w->stats->tasks;
        }
        t.stolen = crew__load_relaxed(&w->stolen); /* relaxed: a counter, see crew__worker */
        out[i] = t;
    }
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->resize_lock);
    return CREW_OK;
}

int crew_stats_reset(crew_pool *p) {
    if (!p)
        return CREW_EINVAL;
    pthread_mutex_lock(&p->resize_lock);
    pthread_mutex_lock(&p->lock);
    unsigned nw = crew__nworkers(p);
    for (unsigned i = 0; i <= nw; i++) {
        crew__tstats *s = i < nw ? crew__worker_at(p, i)->stats : p->outside;
        if (s)
            memset(s, 0, sizeof *s);
        if (i < nw) /* relaxed: a counter; an increment racing the reset may survive it */
            crew__store_relaxed(&crew__worker_at(p, i)->stolen, 0u);
    }
    p->stats_epoch_ns = crew__now_ns();
    p->queued_peak = crew__sched_queued(p);
    p->threads_peak = crew__running_workers_locked(p);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->resize_lock);
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
    if (!p || !f)
        return CREW_EINVAL;
    crew_stats s;
    s.size = sizeof s;
    int rc = crew_stats_get(p, &s);
    if (rc != CREW_OK)
        return rc;
    size_t n = 0;
    crew_stats_threads(p, NULL, 0, &n);
    crew_thread_stats *t = n ? calloc(n, sizeof *t) : NULL;
    if (n && !t)
        return CREW_ENOMEM;
    if (n)
        crew_stats_threads(p, t, n, &n);
    fprintf(f,
            "{\n  \"monitoring\": %s,\n  \"uptime_ns\": %llu,\n  \"submitted\": %llu,\n"
            "  \"completed\": %llu,\n  \"cancelled\": %llu,\n  \"rejected\": %llu,\n"
            "  \"queued\": %llu,\n  \"queued_peak\": %llu,\n  \"running\": %llu,\n"
            "  \"threads\": %u,\n  \"threads_peak\": %u,\n  \"throughput\": %.3f,\n",
            s.monitoring ? "true" : "false", (unsigned long long)s.uptime_ns,
            (unsigned long long)s.submitted, (unsigned long long)s.completed,
            (unsigned long long)s.cancelled, (unsigned long long)s.rejected,
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
    return ferror(f) ? CREW_EIO : CREW_OK;
}
