/* replay.c -- the replay engine: a producer thread, the pool, a 100 ms sampler. */
#include "replay.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib.h"
#include "trace.h"

const char *const replay_metric_names[M_COUNT] = {"response", "idle", "processing",
                                                  "turnaround"};

/* ---- log-bucket histogram ---------------------------------------------------------------- */

#define HIST_BUCKETS 496 /* 8 per power of two up to 2^64 */
typedef struct hist {
    _Atomic uint64_t b[HIST_BUCKETS];
    _Atomic uint64_t count, sum, max;
} hist;

static unsigned hist_index(uint64_t v)
{
    if (v < 8)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    return (e - 2) * 8 + (unsigned)((v >> (e - 3)) & 7);
}

/* The middle of bucket i (its representative value). */
static uint64_t hist_value(unsigned i)
{
    if (i < 8)
        return i;
    unsigned e = i / 8 + 2, sub = i % 8;
    uint64_t lo = (uint64_t)(8 + sub) << (e - 3);
    return lo + (((uint64_t)1 << (e - 3)) >> 1);
}

static void hist_add(hist *h, uint64_t v)
{
    atomic_fetch_add_explicit(&h->b[hist_index(v)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum, v, memory_order_relaxed);
    uint64_t m = atomic_load_explicit(&h->max, memory_order_relaxed);
    while (v > m && !atomic_compare_exchange_weak_explicit(&h->max, &m, v, memory_order_relaxed,
                                                          memory_order_relaxed)) {
    }
}

static hist_sum hist_summary(hist *const *hs, size_t n)
{
    hist_sum s = {0, 0, 0, 0, 0};
    double sum = 0;
    for (size_t k = 0; k < n; k++) {
        s.count += atomic_load(&hs[k]->count);
        sum += (double)atomic_load(&hs[k]->sum);
        uint64_t m = atomic_load(&hs[k]->max);
        if (m > s.max)
            s.max = m;
    }
    if (s.count == 0)
        return s;
    s.mean = sum / (double)s.count;
    uint64_t r50 = (s.count + 1) / 2, r99 = s.count - s.count / 100, seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        uint64_t c = 0;
        for (size_t k = 0; k < n; k++)
            c += atomic_load(&hs[k]->b[i]);
        if (seen < r50 && seen + c >= r50)
            s.p50 = hist_value(i);
        if (seen < r99 && seen + c >= r99)
            s.p99 = hist_value(i);
        seen += c;
    }
    if (s.p50 > s.max)
        s.p50 = s.max;
    if (s.p99 > s.max)
        s.p99 = s.max;
    return s;
}

/* ---- state ------------------------------------------------------------------------------- */

typedef struct app_acc {
    uint32_t app_id;
    _Atomic uint64_t submitted, completed, cancelled;
    hist h[M_COUNT];
} app_acc;

typedef struct ctx {
    const replay_opts *o;
    crew_pool *pool;
    trace_reader tr;
    app_acc **apps; /* indexed by app_id; written by the producer only */
    uint64_t first_start_us;
    uint64_t t0_ns;
    uint64_t span_ns; /* scaled time of the last record, from the first */
    hist lag;
    _Atomic uint64_t submitted, started, done, cancelled, records;
    _Atomic uint64_t turn_sum_ns;  /* for the per-interval mean in the time series */
    _Atomic uint64_t last_done_ns; /* when the last task finished */
    _Atomic int producer_done;
    int bad_input;  /* producer: parse error (1) or pool error (3) */
    char err[600];
} ctx;

typedef struct sim_task {
    ctx *c;
    app_acc *app;
    uint64_t loops, wait_ns;
    uint64_t submitted_ns, started_ns, finished_ns;
    _Atomic uint64_t accepted_ns;
    _Atomic int refs; /* producer + task: the last one to let go records and frees */
    int cancelled;
} sim_task;

static atomic_int stop_flag;

void replay_stop(void) { atomic_store(&stop_flag, 1); }
void replay_stop_reset(void) { atomic_store(&stop_flag, 0); }
int replay_stop_requested(void) { return atomic_load(&stop_flag); }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

void replay_opts_init(replay_opts *o)
{
    memset(o, 0, sizeof *o);
    o->speed = 1;
    o->exec_scale = 1;
    o->threads = 2;
    o->min_threads = 1;
    o->scheduler = CREW_SCHED_STEAL;
    o->queue_capacity = 65536;
    o->loops_per_us = 0;
    o->sample_ms = 100;
}

void replay_split(double exec_us, double free_workload, double *compute_us, double *wait_us)
{
    /* Xu & Bode, Fig. 4: total execution time = real computation + free_workload. The text says
     * free_workload = F makes the task sleep "F times e us"; with e = E/100 that is F percent of
     * E, so F = 0 is pure computation and F = 100 pure waiting. */
    *wait_us = exec_us * free_workload / 100.0;
    *compute_us = exec_us - *wait_us;
}

static uint64_t d2u(double v) { return v <= 0 ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t)v; }

static void record(sim_task *t)
{
    app_acc *a = t->app;
    ctx *c = t->c;
    uint64_t acc = atomic_load_explicit(&t->accepted_ns, memory_order_relaxed);
    if (t->cancelled) {
        atomic_fetch_add(&a->cancelled, 1);
        atomic_fetch_add(&c->cancelled, 1);
    } else {
        hist_add(&a->h[M_RESPONSE], acc - t->submitted_ns);
        /* The accepted stamp is taken just after crew_submit returns, so a task may start
         * before it: its queue time is then under that gap, counted as 0. */
        hist_add(&a->h[M_IDLE], t->started_ns > acc ? t->started_ns - acc : 0);
        hist_add(&a->h[M_PROCESSING], t->finished_ns - t->started_ns);
        uint64_t turn = t->finished_ns - t->submitted_ns;
        hist_add(&a->h[M_TURNAROUND], turn);
        atomic_fetch_add_explicit(&c->turn_sum_ns, turn, memory_order_relaxed);
        atomic_fetch_add(&a->completed, 1);
    }
    uint64_t fin = t->finished_ns;
    uint64_t last = atomic_load_explicit(&c->last_done_ns, memory_order_relaxed);
    while (fin > last && !atomic_compare_exchange_weak(&c->last_done_ns, &last, fin)) {
    }
    free(t);
    atomic_fetch_add(&c->done, 1); /* last: the sampler ends the run when done == submitted */
}

static void release(sim_task *t)
{
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        record(t);
}

static void task_fn(void *arg)
{
    sim_task *t = arg;
    t->started_ns = now_ns();
    atomic_fetch_add_explicit(&t->c->started, 1, memory_order_relaxed);
    if (atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        t->cancelled = 1; /* stopping: skip the work so the queue drains at once */
    } else {
        calib_spin(t->loops);
        if (t->wait_ns)
            sleep_until(now_ns() + t->wait_ns);
    }
    t->finished_ns = now_ns();
    release(t);
}

static app_acc *app_get(ctx *c, uint32_t id)
{
    if (!c->apps[id]) {
        c->apps[id] = calloc(1, sizeof(app_acc));
        if (c->apps[id])
            c->apps[id]->app_id = id;
    }
    return c->apps[id];
}

/* Sleep until the scaled trace time t, in slices, so a stop request is seen within 20 ms. */
static int wait_for(uint64_t t)
{
    for (;;) {
        if (atomic_load(&stop_flag))
            return -1;
        uint64_t n = now_ns();
        if (n >= t)
            return 0;
        sleep_until(t - n > 20000000u ? n + 20000000u : t);
    }
}

static void *producer(void *arg)
{
    ctx *c = arg;
    const replay_opts *o = c->o;
    trace_rec rec;
    int first = 1, rc;
    while ((rc = trace_next(&c->tr, &rec)) == 1) {
        atomic_fetch_add(&c->records, 1);
        if (first) {
            c->first_start_us = rec.start_us;
            first = 0;
        }
        /* A record earlier than the first (only without --strict) is due at once. */
        double rel = rec.start_us > c->first_start_us ? (double)(rec.start_us - c->first_start_us)
                                                      : 0;
        uint64_t off = d2u(rel * 1000.0 / o->speed);
        uint64_t due = c->t0_ns + off;
        if (off > c->span_ns)
            c->span_ns = off;
        if (wait_for(due) != 0)
            break;
        if (o->dry_run)
            continue;
        app_acc *a = app_get(c, rec.app_id);
        sim_task *t = calloc(1, sizeof *t);
        if (!a || !t) {
            free(t);
            snprintf(c->err, sizeof c->err, "out of memory");
            c->bad_input = 3;
            break;
        }
        double cu, wu;
        replay_split((double)rec.exec_us * o->exec_scale, o->free_workload, &cu, &wu);
        t->c = c;
        t->app = a;
        t->loops = d2u(cu * o->loops_per_us);
        t->wait_ns = d2u(wu * 1000.0);
        atomic_init(&t->refs, 2);
        atomic_fetch_add(&a->submitted, 1);
        atomic_fetch_add(&c->submitted, 1);
        t->submitted_ns = now_ns();
        hist_add(&c->lag, t->submitted_ns > due ? t->submitted_ns - due : 0);
        int err = crew_submit(c->pool, task_fn, t, 0, NULL);
        if (err != CREW_OK) {
            /* Not accepted: undo the count, so submitted = completed + cancelled still holds. */
            atomic_fetch_sub(&a->submitted, 1);
            atomic_fetch_sub(&c->submitted, 1);
            free(t);
            snprintf(c->err, sizeof c->err, "crew_submit: %s", crew_strerror(err));
            c->bad_input = 3;
            break;
        }
        atomic_store_explicit(&t->accepted_ns, now_ns(), memory_order_relaxed);
        release(t);
    }
    if (rc < 0) {
        snprintf(c->err, sizeof c->err, "%s", c->tr.err);
        c->bad_input = 1;
    }
    atomic_store(&c->producer_done, 1);
    return NULL;
}

static void progress(const ctx *c, FILE *f, int mode, double el, unsigned size, int final)
{
    fprintf(f, "%s[crew-sim] %7.1fs  submitted %llu  done %llu  pool %u%s", mode == 1 ? "\r" : "",
            el, (unsigned long long)atomic_load(&c->submitted),
            (unsigned long long)atomic_load(&c->done), size,
            mode == 1 && !final ? "   " : "\n");
    fflush(f);
}

int replay_run(const replay_opts *o, replay_result *res)
{
    memset(res, 0, sizeof *res);
    ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(res->err, sizeof res->err, "out of memory");
        return 3;
    }
    int ret = 0;
    c->o = o;
    c->apps = calloc(TRACE_MAX_APP + 1, sizeof *c->apps);
    if (!c->apps) {
        snprintf(res->err, sizeof res->err, "out of memory");
        free(c);
        return 3;
    }
    if (trace_open(&c->tr, o->trace, o->strict) != 0) {
        snprintf(res->err, sizeof res->err, "%s", c->tr.err);
        trace_close(&c->tr);
        free(c->apps);
        free(c);
        return 1;
    }
    if (!o->dry_run) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = o->threads;
        cfg.monitoring = 1;
        cfg.autosize = o->autosize;
        cfg.min_threads = o->min_threads;
        cfg.max_threads = o->max_threads;
        cfg.scheduler = o->scheduler;
        cfg.queue_capacity = o->queue_capacity;
        cfg.full_policy = CREW_FULL_BLOCK;
        cfg.name = "sim";
        int err = crew_create(&c->pool, &cfg);
        if (err == CREW_ENOTSUP && o->autosize == CREW_AUTOSIZE_OFF) {
            cfg.monitoring = 0; /* a build without monitoring: crew-sim's own figures remain */
            err = crew_create(&c->pool, &cfg);
        }
        if (err != CREW_OK) {
            snprintf(res->err, sizeof res->err, "crew_create: %s", crew_strerror(err));
            trace_close(&c->tr);
            free(c->apps);
            free(c);
            return 3;
        }
        res->monitoring = cfg.monitoring;
    }
    if (o->timeseries)
        fprintf(o->timeseries, "t_s,submitted,completed,cancelled,throughput_per_s,"
                "turnaround_mean_us,pool_size,threads,queued,running\n");
    c->t0_ns = now_ns() + 1000000; /* 1 ms: the producer is running by then */
    pthread_t th;
    int perr = pthread_create(&th, NULL, producer, c);
    if (perr != 0) {
        snprintf(res->err, sizeof res->err, "pthread_create: %s", strerror(perr));
        if (c->pool)
            crew_destroy(c->pool);
        trace_close(&c->tr);
        free(c->apps);
        free(c);
        return 3;
    }
    /* Sample until the producer is done and every submitted task is accounted for. */
    uint64_t period = (uint64_t)(o->sample_ms ? o->sample_ms : 100) * 1000000u;
    uint64_t next = c->t0_ns + period, prev_t = c->t0_ns, prev_done = 0, prev_turn = 0;
    uint64_t last_progress = 0;
    for (;;) {
        int finished = atomic_load(&c->producer_done) &&
                       atomic_load(&c->done) == atomic_load(&c->submitted);
        uint64_t t = now_ns();
        if (!finished && t < next) {
            uint64_t until = next;
            if (until - t > 10000000u)
                until = t + 10000000u; /* notice the end of a short run within 10 ms */
            sleep_until(until);
            continue;
        }
        unsigned size = c->pool ? crew_size(c->pool) : 0;
        crew_stats st;
        memset(&st, 0, sizeof st);
        st.size = sizeof st;
        if (c->pool)
            crew_stats_get(c->pool, &st);
        if (st.threads > res->threads_peak)
            res->threads_peak = st.threads;
        if (o->timeseries && t >= next) {
            /* Only completions count for the latency column, cancelled tasks have none. */
            uint64_t d = atomic_load(&c->done), cc = atomic_load(&c->cancelled);
            uint64_t turn = atomic_load(&c->turn_sum_ns);
            /* Queued and running from crew-sim's own counters: exact under every scheduler. */
            uint64_t sub = atomic_load(&c->submitted), sta = atomic_load(&c->started);
            double dt = (double)(t - prev_t) / 1e9;
            uint64_t dcomp = (d - cc) >= prev_done ? (d - cc) - prev_done : 0;
            fprintf(o->timeseries, "%.3f,%llu,%llu,%llu,%.1f,%.1f,%u,%u,%llu,%llu\n",
                    (double)(t - c->t0_ns) / 1e9, (unsigned long long)sub,
                    (unsigned long long)(d - cc), (unsigned long long)cc,
                    dt > 0 ? (double)dcomp / dt : 0,
                    dcomp ? (double)(turn - prev_turn) / (double)dcomp / 1e3 : 0, size,
                    st.threads, (unsigned long long)(sub > sta ? sub - sta : 0),
                    (unsigned long long)(sta > d ? sta - d : 0));
            prev_t = t;
            prev_done = d - cc;
            prev_turn = turn;
        }
        if (o->progress && (finished || t - last_progress >= (o->progress == 1 ? 100000000u
                                                                                : 1000000000u))) {
            progress(c, stderr, o->progress, (double)(t - c->t0_ns) / 1e9, size, finished);
            last_progress = t;
        }
        if (finished)
            break;
        while (next <= t)
            next += period;
    }
    pthread_join(th, NULL);
    uint64_t end = atomic_load(&c->last_done_ns);
    if (c->pool) {
        crew_shutdown(c->pool, CREW_DRAIN); /* nothing is left: every task was accounted for */
        memset(&res->crew, 0, sizeof res->crew);
        res->crew.size = sizeof res->crew;
        if (res->monitoring && crew_stats_get(c->pool, &res->crew) == CREW_OK) {
            char *buf = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&buf, &len);
            if (m) {
                int jerr = crew_stats_write_json(c->pool, m);
                if (fclose(m) == 0 && jerr == CREW_OK)
                    res->crew_json = buf;
                else
                    free(buf);
            }
        }
        crew_destroy(c->pool);
    }
    res->interrupted = replay_stop_requested();
    res->records = atomic_load(&c->records);
    res->trace_s = (double)c->span_ns / 1e9;
    res->backwards = c->tr.backwards;
    hist *lp = &c->lag;
    res->lag = hist_summary(&lp, 1);
    if (end <= c->t0_ns)
        end = now_ns(); /* nothing completed (dry run, empty trace, stopped at once) */
    res->wall_s = (double)(end - c->t0_ns) / 1e9;
    if (c->bad_input) {
        snprintf(res->err, sizeof res->err, "%s", c->err);
        ret = c->bad_input;
    }
    /* Snapshot the per-app accounting in app_id order; the overall row merges them. */
    size_t n = 0;
    for (size_t i = 0; i <= TRACE_MAX_APP; i++)
        n += c->apps[i] != NULL;
    res->apps = calloc(n ? n : 1, sizeof *res->apps);
    hist **all[M_COUNT];
    for (int m = 0; m < M_COUNT; m++)
        all[m] = calloc(n ? n : 1, sizeof(hist *));
    int oom = !res->apps;
    for (int m = 0; m < M_COUNT; m++)
        oom |= !all[m];
    res->overall.app_id = UINT32_MAX;
    for (size_t i = 0, k = 0; !oom && i <= TRACE_MAX_APP; i++) {
        app_acc *a = c->apps[i];
        if (!a)
            continue;
        app_row *r = &res->apps[k];
        r->app_id = a->app_id;
        r->submitted = atomic_load(&a->submitted);
        r->completed = atomic_load(&a->completed);
        r->cancelled = atomic_load(&a->cancelled);
        for (int m = 0; m < M_COUNT; m++) {
            hist *h = &a->h[m];
            r->m[m] = hist_summary(&h, 1);
            all[m][k] = h;
        }
        res->overall.submitted += r->submitted;
        res->overall.completed += r->completed;
        res->overall.cancelled += r->cancelled;
        k++;
    }
    if (!oom) {
        res->napps = n;
        for (int m = 0; m < M_COUNT; m++)
            res->overall.m[m] = hist_summary(all[m], n);
    } else if (!ret) {
        snprintf(res->err, sizeof res->err, "out of memory");
        ret = 3;
    }
    for (int m = 0; m < M_COUNT; m++)
        free(all[m]);
    res->submitted = atomic_load(&c->submitted);
    res->completed = res->submitted - atomic_load(&c->cancelled);
    res->cancelled = atomic_load(&c->cancelled);
    for (size_t i = 0; i <= TRACE_MAX_APP; i++)
        free(c->apps[i]);
    free(c->apps);
    trace_close(&c->tr);
    free(c);
    return ret;
}

void replay_result_free(replay_result *res)
{
    free(res->apps);
    free(res->crew_json);
    res->apps = NULL;
    res->crew_json = NULL;
}
