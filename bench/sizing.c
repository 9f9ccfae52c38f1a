/*
 * sizing.c -- the sizing study of Xu & Bode, with crew's two controllers.
 *
 * Workload (Xu & Bode, §4.1, Fig. 4): every task computes for a fixed time C (a calibrated loop)
 * and then sleeps free_workload x E, emulating I/O; we use C = 100 us and E = 10 us, so
 * free_workload 10, 50, 100 sleep 0.1, 0.5 and 1 ms. Also a pure-CPU workload (free_workload 0),
 * short CPU tasks (C = 10 us: where extra threads only add contention), and a phase-changing one
 * (free_workload 100 for the first half, then pure CPU; its dynamic runs last twice as long).
 * A producer keeps a backlog of tasks outstanding, so the pool is always the bottleneck:
 * BACKLOG_MS of work for all the cores (at least BACKLOG_MIN tasks), refilled when about a
 * quarter has run. The report says if it ever ran dry.
 *
 *  1. static throughput vs pool size (Figs. 5, 7), with the stable point (first size within 5%
 *     of the best) and the degradation point (first larger size that falls below 95% again);
 *  2. reciprocal average idle time RAIT_i = AIT_1 / AIT_i vs pool size (Fig. 6);
 *  3. dynamic pools (AIT and BALANCE) from start sizes 1, 4, 16 (-b): steady-state throughput
 *     against a static pool of the sweep's best size run beside them, the time to reach 90% of
 *     it, the final size, and the pool size over time (Fig. 10);
 *  4. dynamic / static throughput at the same start size, free_workload 100 (Fig. 11).
 *
 * Every figure is the median of -r runs (5) with (min..max). Runs go in rounds: a round of the
 * static sweep runs every size and workload once; a round of the dynamic part runs, for every
 * workload and start size, AIT, the static reference and BALANCE (and for Fig. 11 a static pool
 * of the start size) one after the other, the order rotating every round. A ratio of two
 * throughputs is the ratio of their medians (so it reads as they do), with the (min..max) of the
 * per-round ratios, each comparing runs made side by side; RAIT is the median of per-round
 * ratios (its idle times are not printed). The pool size over
 * time is a trace, not a figure: the report prints one run's (the one with the median steady
 * throughput); the CSV has every run's.
 *
 * Times (full / -q): a static run lasts -s 0.2 / 0.05 s (throughput over its last 80%), a
 * dynamic run -d 2.0 / 0.5 s (steady throughput over its last 30%), a reference run -R 0.5 /
 * 0.1 s (its last 80%). Everything is parameterised by the options, so the same command runs on
 * a large machine: -m defaults to max(55, 4 x cores) and the sweep to sizes up to it.
 *
 * Usage: sizing [-q] [-r runs] [-m max_threads] [-S 1,2,4,...] [-b 1,4,16] [-s static_s]
 *               [-d dynamic_s] [-R ref_s] [-c out.csv]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

#define COMPUTE_US 100
#define E_US 10
#define SHORT_US 10 /* the short tasks' computation */
#define BACKLOG_MIN 256 /* tasks */
#define BACKLOG_MS 20    /* of work on all the cores: it covers the producer's late wake-ups */
#define MAX_RUNS 64
#define MAX_SIZES 32
#define MAX_STARTS 8
#define NWL 6
#define STATIC_TAIL 0.8 /* static and reference runs: throughput over their last 80% */
#define DYN_TAIL 0.3    /* dynamic runs: steady throughput over their last 30% */
/* The producer sleeps between refills for as long as a quarter of the backlog takes to run,
 * within these bounds. A fixed short nap (it was 200 us, with a backlog of 256 tasks) woke the
 * producer about 3,700 times a second, and every wake-up preempted a worker: on 2 cores that cost
 * CPU-bound tasks about 4% of their throughput, less with many threads (the scheduler then let
 * the producer sleep longer), which made oversubscribed pools look faster than they are. With
 * many threads the producer also wakes late, by milliseconds: hence a backlog measured in time,
 * not in tasks. */
#define REFILL_MIN_NS 200000L
#define REFILL_MAX_NS 5000000L

static double loops_per_us;
static atomic_int free_workload;            /* the current phase's setting */
static atomic_int compute_us = COMPUTE_US; /* the current workload's computation */
static atomic_int draining; /* set after a run's window: the backlog left returns at once */
static atomic_long outstanding, done_count;
static long backlog_for_cores; /* BACKLOG_MS x cores, in microseconds of computation */
static long dry_refills; /* refills that found the backlog empty (the producer's thread only) */
static volatile uint64_t sink;

static void compute(long loops) {
    uint64_t x = 88172645463325252ull;
    for (long i = 0; i < loops; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Loops per microsecond of the compute loop, timed in this thread's CPU time (so time spent
 * preempted by other processes does not count: on a loaded machine, wall time made the tasks
 * up to 2x too short), the fastest of 5 timings of at least 20 ms. */
static void calibrate(void) {
    long loops = 1000;
    double t;
    do {
        loops *= 2;
        double t0 = cpu_s();
        compute(loops);
        t = cpu_s() - t0;
    } while (t < 0.02);
    for (int i = 0; i < 4; i++) {
        double t0 = cpu_s();
        compute(loops);
        double u = cpu_s() - t0;
        if (u < t)
            t = u;
    }
    loops_per_us = (double)loops / (t * 1e6);
}

static void task(void *arg) {
    (void)arg;
    if (!atomic_load_explicit(&draining, memory_order_relaxed)) {
        compute((long)(atomic_load_explicit(&compute_us, memory_order_relaxed) * loops_per_us));
        int fw = atomic_load_explicit(&free_workload, memory_order_relaxed);
        if (fw > 0) {
            long us = (long)fw * E_US;
            struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
    }
    atomic_fetch_sub(&outstanding, 1);
    atomic_fetch_add(&done_count, 1);
}

/* Keep the backlog full for `seconds` with tasks of `cus` us compute; phase: switch to fw_after
 * at half time (if >= 0). Samples the pool size and completions every 100 ms into size_log /
 * rate_log (at most `cap` samples). Reads the pool's statistics into *st (if given) at the end
 * of the window, before the backlog drains. Returns the throughput over the last `tail`
 * fraction of the run. */
static double run(crew_pool *p, double seconds, int cus, int fw, int fw_after, double tail,
                  unsigned *size_log, double *rate_log, int cap, int *nlog, crew_stats *st) {
    atomic_store(&compute_us, cus);
    long backlog = backlog_for_cores / cus;
    if (backlog < BACKLOG_MIN)
        backlog = BACKLOG_MIN;
    atomic_store(&free_workload, fw);
    atomic_store(&done_count, 0);
    double t0 = now_s(), next_sample = t0 + 0.1, tail_start = t0 + seconds * (1 - tail);
    double t_tail = t0, t_end, last_sample = t0, last_fill = t0;
    long tail_done = -1, last_done = 0;
    long nap_ns = REFILL_MIN_NS, refills = 0;
    int n = 0;
    for (;;) {
        double t = now_s();
        if (t >= t0 + seconds) {
            t_end = t;
            break;
        }
        if (fw_after >= 0 && t >= t0 + seconds / 2)
            atomic_store(&free_workload, fw_after);
        if (tail_done < 0 && t >= tail_start) {
            tail_done = atomic_load(&done_count);
            t_tail = t;
        }
        long refilled = 0;
        if (refills++ > 0 && atomic_load(&outstanding) == 0)
            dry_refills++; /* the pool ran out of work: this run's pool was not the bottleneck */
        while (atomic_load(&outstanding) < backlog) {
            atomic_fetch_add(&outstanding, 1);
            if (crew_submit(p, task, NULL, 0, NULL) != CREW_OK) {
                fprintf(stderr, "sizing: submit failed\n");
                exit(1);
            }
            refilled++;
        }
        /* Sleep until about a quarter of the backlog has run, at the rate just seen. */
        double per_task = refilled ? (t - last_fill) / (double)refilled : 0;
        last_fill = t;
        if (refilled)
            nap_ns = (long)(per_task * (double)(backlog / 4) * 1e9);
        else
            nap_ns *= 2;
        if (nap_ns < REFILL_MIN_NS)
            nap_ns = REFILL_MIN_NS;
        if (nap_ns > REFILL_MAX_NS)
            nap_ns = REFILL_MAX_NS;
        if (t >= next_sample && size_log && n < cap) {
            long d = atomic_load(&done_count);
            size_log[n] = crew_size(p);
            rate_log[n] = (double)(d - last_done) / (t - last_sample);
            last_done = d;
            last_sample = t;
            n++;
            next_sample += 0.1;
        }
        struct timespec nap = {0, nap_ns};
        nanosleep(&nap, NULL);
    }
    long end_done = atomic_load(&done_count);
    if (nlog)
        *nlog = n;
    if (st) {
        st->size = sizeof *st;
        crew_stats_get(p, st);
    }
    /* Let the backlog drain, without its work, so the next run starts clean and soon. */
    atomic_store(&draining, 1);
    crew_wait_all(p);
    atomic_store(&outstanding, 0);
    atomic_store(&draining, 0);
    if (tail_done < 0)
        tail_done = 0;
    return t_end > t_tail ? (double)(end_done - tail_done) / (t_end - t_tail) : 0;
}

static crew_pool *make(unsigned threads, unsigned autosize, unsigned max, int monitoring) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.autosize = autosize;
    cfg.min_threads = 1;
    cfg.max_threads = autosize ? max : 0;
    cfg.monitoring = monitoring;
    crew_pool *p;
    int rc = crew_create(&p, &cfg);
    if (rc != CREW_OK) {
        fprintf(stderr, "sizing: crew_create(%u): %s\n", threads, crew_strerror(rc));
        exit(1);
    }
    return p;
}

typedef struct workload {
    const char *name;
    int fw, fw_after; /* fw_after < 0: no phase change */
    int compute_us;   /* C */
} workload;

/* The phase workload comes last: it has no static row of its own (it is judged against the
 * pure-CPU phase it ends in). */
static const workload all[NWL] = {{"fw=10", 10, -1, COMPUTE_US}, {"fw=50", 50, -1, COMPUTE_US},
                                  {"fw=100", 100, -1, COMPUTE_US}, {"cpu", 0, -1, COMPUTE_US},
                                  {"short", 0, -1, SHORT_US},          {"phase", 100, 0, COMPUTE_US}};
enum { W_FW100 = 2, W_CPU = 3, W_SHORT = 4, W_PHASE = 5 };

typedef struct stat3 {
    double med, min, max;
} stat3;

/* Median (the upper one of an even count, as the other sections), min and max of v[0..n). */
static stat3 stats(const double *v, int n) {
    double s[MAX_RUNS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return (stat3){s[n / 2], s[0], s[n - 1]};
}

/* Index of the run whose value is the median of v[0..n). */
static int median_run(const double *v, int n) {
    stat3 m = stats(v, n);
    for (int r = 0; r < n; r++)
        if (v[r] == m.med)
            return r;
    return 0;
}

static int parse_list(char *arg, unsigned *v, int cap, unsigned lo, unsigned hi) {
    int n = 0;
    for (char *s = strtok(arg, ","); s; s = strtok(NULL, ",")) {
        char *end;
        long x = strtol(s, &end, 10);
        if (*end || x < (long)lo || x > (long)hi || n == cap)
            return -1;
        v[n++] = (unsigned)x;
    }
    return n;
}

/* "1.2" or "never" (infinite), into a buffer of 8. */
static const char *secs(double t, char *buf) {
    if (isinf(t))
        return "never";
    snprintf(buf, 8, "%.1f", t);
    return buf;
}

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [-q] [-r runs] [-m max_threads] [-S 1,2,4,...] [-b 1,4,16] [-s static_s]\n"
            "       [-d dynamic_s] [-R ref_s] [-c out.csv]\n"
            "  -q  quick (a smoke test): 3 runs, sizes 1,2,4,8,16,32, workloads fw=100, cpu,\n"
            "      short (dynamic: fw=100, short, from 1 thread), -s 0.05 -d 0.5 -R 0.1\n"
            "  -r  runs per figure, interleaved in rounds (default 5; 1..%d)\n"
            "  -m  the dynamic pools' max and the sweep's largest size\n"
            "      (default max(55, 4 x cores))\n"
            "  -S  static sweep sizes (default 1,2,4,8,12,16,24,32,40,48,... up to -m, and -m)\n"
            "  -b  start sizes of the dynamic pools, also Fig. 11's (default 1,4,16; -q 1)\n"
            "  -s  seconds per static run (default 0.2), -d per dynamic run (2.0), -R per\n"
            "      reference static run beside the dynamic ones (0.5)\n"
            "  -c  write every run to a CSV file\n"
            "  -h, --help  this text\n",
            prog, MAX_RUNS);
}

int main(int argc, char **argv) {
    int quick = 0, runs = 0, opt, nsizes = 0, nstarts = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned max = cores * 4 > 55 ? (unsigned)cores * 4 : 55;
    double dyn_s = 0, static_s = 0, ref_s = 0;
    unsigned sizes[MAX_SIZES], starts[MAX_STARTS];
    const char *csv = NULL;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "qr:m:S:b:d:s:R:c:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'q': quick = 1; break;
        case 'r': runs = atoi(optarg); break;
        case 'm': max = (unsigned)atoi(optarg); break;
        case 'S':
            nsizes = parse_list(optarg, sizes, MAX_SIZES, 1, CREW_MAX_THREADS);
            if (nsizes < 1) {
                fprintf(stderr, "sizing: -S wants up to %d sizes 1..%u\n", MAX_SIZES,
                        CREW_MAX_THREADS);
                return 2;
            }
            break;
        case 'b':
            nstarts = parse_list(optarg, starts, MAX_STARTS, 1, CREW_MAX_THREADS);
            if (nstarts < 1) {
                fprintf(stderr, "sizing: -b wants up to %d start sizes\n", MAX_STARTS);
                return 2;
            }
            break;
        case 'd': dyn_s = atof(optarg); break;
        case 's': static_s = atof(optarg); break;
        case 'R': ref_s = atof(optarg); break;
        case 'c': csv = optarg; break;
        case 'h': usage(stdout, argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    if (!runs)
        runs = quick ? 3 : 5;
    if (dyn_s <= 0)
        dyn_s = quick ? 0.5 : 2.0;
    if (static_s <= 0)
        static_s = quick ? 0.05 : 0.2;
    if (ref_s <= 0)
        ref_s = quick ? 0.1 : 0.5;
    if (quick && max > 32)
        max = 32;
    if (max < 2 || max > CREW_MAX_THREADS || runs < 1 || runs > MAX_RUNS || dyn_s > 100) {
        fprintf(stderr, "sizing: -m 2..%u, -r 1..%d, -d up to 100 s\n", CREW_MAX_THREADS,
                MAX_RUNS);
        return 2;
    }
    if (!nsizes) { /* 1, 2, 4, 8, then steps of 8 (to 48) or a quarter, and the max */
        static const unsigned base_full[] = {1, 2, 4, 8, 12, 16, 24, 32, 40, 48};
        static const unsigned base_quick[] = {1, 2, 4, 8, 16};
        const unsigned *base = quick ? base_quick : base_full;
        int nbase = quick ? 5 : 10;
        unsigned last = 0;
        for (int i = 0; i < nbase && base[i] < max; i++)
            sizes[nsizes++] = last = base[i];
        while (!quick && nsizes < MAX_SIZES - 1) {
            unsigned next = (last + last / 4 + 7) / 8 * 8;
            if (next >= max)
                break;
            sizes[nsizes++] = last = next;
        }
        sizes[nsizes++] = max;
    }
    if (!nstarts) { /* the start sizes of Xu & Bode, Fig. 10 (-q: the ends only) */
        starts[nstarts++] = 1;
        if (!quick && max > 4)
            starts[nstarts++] = 4;
        if (!quick)
            starts[nstarts++] = 16 < max ? 16 : max;
    }
    for (int s = 0; s < nstarts; s++)
        if (starts[s] > max) {
            fprintf(stderr, "sizing: start size %u is above -m %u\n", starts[s], max);
            return 2;
        }

    /* Workloads: the static sweep's, and the dynamic part's (phase needs cpu's sweep). */
    int sweep_w[NWL], dyn_w[NWL], nsweep, ndyn;
    if (quick) {
        const int sw[] = {W_FW100, W_CPU, W_SHORT}, dw[] = {W_FW100, W_SHORT};
        nsweep = 3, ndyn = 2;
        memcpy(sweep_w, sw, sizeof sw);
        memcpy(dyn_w, dw, sizeof dw);
    } else {
        nsweep = 5, ndyn = 6;
        for (int w = 0; w < NWL; w++)
            sweep_w[w] = dyn_w[w] = w;
    }

    calibrate();
    FILE *out = NULL;
    if (csv) {
        out = fopen(csv, "w");
        if (!out) {
            perror(csv);
            return 1;
        }
        fprintf(out, "part,workload,controller,start,size,time_s,throughput,rait,run\n");
    }

    backlog_for_cores = (long)BACKLOG_MS * 1000 * cores;
    printf("sizing study: task = %d us compute + free_workload x %d us sleep, %ld cores;\n"
           "backlog: %d ms of computation for all the cores, at least %d tasks (%ld of %d us, "
           "%ld of %d us);\ncompute loop: %.0f loops/us (the fastest of 5 timings in thread CPU "
           "time)\n",
           COMPUTE_US, E_US, cores, BACKLOG_MS, BACKLOG_MIN,
           backlog_for_cores / COMPUTE_US > BACKLOG_MIN ? backlog_for_cores / COMPUTE_US
                                                         : BACKLOG_MIN,
           COMPUTE_US,
           backlog_for_cores / SHORT_US > BACKLOG_MIN ? backlog_for_cores / SHORT_US : BACKLOG_MIN,
           SHORT_US, loops_per_us);
    printf("%d runs per figure, interleaved in rounds; medians with (min..max)\n", runs);
    if (quick)
        printf("quick mode: %d runs instead of 5, shorter runs, fewer sizes and workloads: a "
               "smoke\ntest, too short for the controllers to settle\n",
               runs);

    /* 1. The static sweep: each round runs every size and workload once. */
    static double x[NWL][MAX_SIZES][MAX_RUNS], ait[NWL][MAX_SIZES][MAX_RUNS];
    for (int r = 0; r < runs; r++)
        for (int i = 0; i < nsizes; i++)
            for (int k = 0; k < nsweep; k++) {
                int w = sweep_w[k];
                crew_pool *p = make(sizes[i], CREW_AUTOSIZE_OFF, 0, 1);
                crew_stats st;
                x[w][i][r] = run(p, static_s, all[w].compute_us, all[w].fw, -1, STATIC_TAIL, NULL,
                                 NULL, 0, NULL, &st);
                ait[w][i][r] = st.idle.mean_ns;
                crew_destroy(p);
            }
    double best[NWL] = {0}, med_at[NWL][MAX_SIZES];
    unsigned best_size[NWL] = {0};
    printf("\n1. static throughput (Figs. 5, 7) and RAIT = AIT_%u / AIT_size vs pool size (AIT: "
           "the\naverage time a task waits in the queue; Fig. 6). %.2f s per run, throughput over "
           "its\nlast %.0f%%; RAIT is the median of per-round ratios\n",
           sizes[0], static_s, STATIC_TAIL * 100);
    printf("%-8s %5s   %-27s   %s\n", "workload", "size", "tasks/s median (min..max)",
           "RAIT median (min..max)");
    for (int k = 0; k < nsweep; k++) {
        int w = sweep_w[k];
        for (int i = 0; i < nsizes; i++) {
            double rait[MAX_RUNS];
            for (int r = 0; r < runs; r++) {
                rait[r] = ait[w][i][r] > 0 ? ait[w][0][r] / ait[w][i][r] : 0;
                if (out)
                    fprintf(out, "static,%s,none,%u,%u,%.2f,%.1f,%.4f,%d\n", all[w].name,
                            sizes[i], sizes[i], static_s, x[w][i][r], rait[r], r);
            }
            stat3 t = stats(x[w][i], runs), q = stats(rait, runs);
            med_at[w][i] = t.med;
            if (t.med > best[w]) {
                best[w] = t.med;
                best_size[w] = sizes[i];
            }
            printf("%-8s %5u   %8.0f (%7.0f..%7.0f)   %4.2f (%4.2f..%4.2f)\n", all[w].name,
                   sizes[i], t.med, t.min, t.max, q.med, q.min, q.max);
        }
    }
    best[W_PHASE] = best[W_CPU]; /* phase: judged against the pure-CPU phase it ends in */
    best_size[W_PHASE] = best_size[W_CPU];
    printf("\nfrom the medians: best size, stable point (the first size within 5%% of the best)\n"
           "and degradation point (the first larger size below 95%% again)\n");
    printf("%-8s %6s %10s %7s %9s\n", "workload", "best", "tasks/s", "stable", "degrades");
    for (int k = 0; k < nsweep; k++) {
        int w = sweep_w[k], stable = -1, degr = -1;
        for (int i = 0; i < nsizes; i++)
            if (stable < 0 && med_at[w][i] >= 0.95 * best[w])
                stable = i;
        for (int i = stable + 1; i < nsizes; i++)
            if (degr < 0 && med_at[w][i] < 0.95 * best[w])
                degr = i;
        char d[16] = "none";
        if (degr >= 0)
            snprintf(d, sizeof d, "%u", sizes[degr]);
        printf("%-8s %6u %10.0f %7u %9s\n", all[w].name, best_size[w], best[w], sizes[stable], d);
    }
    fflush(stdout);

    /* 2. Dynamic pools. Per round, for every workload and start size: AIT, the static reference
     * of the sweep's best size, BALANCE, and (Fig. 11's workload) a static pool of the start size,
     * the order rotating every round. */
    enum { AIT, BAL, REF, ST, NITEM };
    const char *cname[2] = {"AIT", "BALANCE"};
    /* The phase workload's runs last twice as long: the controllers must grow for the blocking
     * phase before the change at half time, and shrink back after it. */
#define DYN_LEN(w) (all[w].fw_after >= 0 ? 2 * dyn_s : dyn_s)
    const int cap = (int)(dyn_s * 20) + 2; /* samples per trace, one every 0.1 s */
    static double res[NITEM][NWL][MAX_STARTS][MAX_RUNS];
    const size_t ntrace = (size_t)2 * NWL * MAX_STARTS * MAX_RUNS;
    unsigned *slog = malloc(sizeof(unsigned) * ntrace * (size_t)cap);
    double *rlog = malloc(sizeof(double) * ntrace * (size_t)cap);
    int *nlog = calloc(ntrace, sizeof(int));
    if (!slog || !rlog || !nlog) {
        fprintf(stderr, "sizing: out of memory\n");
        return 1;
    }
#define TRACE(c, w, s, r)                                                                         \
    ((((size_t)(c) * NWL + (size_t)(w)) * MAX_STARTS + (size_t)(s)) * MAX_RUNS + (size_t)(r))
    int fig11 = -1;
    for (int k = 0; k < ndyn; k++)
        if (dyn_w[k] == W_FW100)
            fig11 = W_FW100;
    for (int r = 0; r < runs; r++)
        for (int k = 0; k < ndyn; k++)
            for (int s = 0; s < nstarts; s++) {
                int w = dyn_w[k], nitem = w == fig11 ? 4 : 3;
                int fw_end = all[w].fw_after >= 0 ? all[w].fw_after : all[w].fw;
                static const int order[4] = {AIT, REF, BAL, ST};
                for (int j = 0; j < nitem; j++) {
                    int item = order[(j + r) % nitem];
                    if (item == REF || item == ST) {
                        crew_pool *p = make(item == REF ? best_size[w] : starts[s],
                                            CREW_AUTOSIZE_OFF, 0, 0);
                        res[item][w][s][r] = run(p, ref_s, all[w].compute_us, fw_end, -1,
                                                 STATIC_TAIL, NULL, NULL, 0, NULL, NULL);
                        crew_destroy(p);
                        continue;
                    }
                    size_t tr = TRACE(item, w, s, r);
                    crew_pool *p = make(starts[s],
                                        item == AIT ? CREW_AUTOSIZE_AIT : CREW_AUTOSIZE_BALANCE,
                                        max, 0);
                    res[item][w][s][r] =
                        run(p, DYN_LEN(w), all[w].compute_us, all[w].fw, all[w].fw_after, DYN_TAIL,
                            slog + tr * (size_t)cap, rlog + tr * (size_t)cap, cap, &nlog[tr], NULL);
                    crew_destroy(p);
                }
            }

    printf("\n2. dynamic pools (min 1, max %u) from start sizes", max);
    for (int s = 0; s < nstarts; s++)
        printf("%s%u", s ? "," : " ", starts[s]);
    printf(". Each round runs AIT, a static pool of the\n"
           "sweep's best size (ref) and BALANCE side by side, the order rotating every round. A\n"
           "dynamic run lasts %.1f s (phase: twice as long, changing at half time), its steady\n"
           "throughput is over the last %.0f%%; a ref run lasts %.2f s (its last %.0f%%). /best:\n"
           "median / the sweep's best median (not side by side); /ref: median / ref's median, with\n"
           "(min..max) of the per-round ratios; t90: seconds until a 0.1 s sample reaches 90%% of that round's ref\n"
           "(phase: from the change); final: the size at the end. The size every 0.1 s (Fig. 10)\n"
           "is one run's trace, the run with the median steady throughput, not a median (the CSV\n"
           "has every run's)\n",
           dyn_s, DYN_TAIL * 100, ref_s, STATIC_TAIL * 100);
    printf("%-8s %-9s %5s   %-27s %5s   %-17s   %-20s   %-16s   %s\n", "workload", "control",
           "start", "tasks/s median (min..max)", "/best", "/ref (min..max)", "t90 s (min..max)",
           "final (min..max)", "size every 0.1 s (Fig. 10, median run)");
    for (int k = 0; k < ndyn; k++)
        for (int s = 0; s < nstarts; s++) {
            int w = dyn_w[k];
            stat3 ref = stats(res[REF][w][s], runs);
            char label[24];
            snprintf(label, sizeof label, "static@%u", best_size[w]);
            printf("%-8s %-9s %5s   %8.0f (%7.0f..%7.0f) %5.2f\n", all[w].name, label, "", ref.med,
                   ref.min, ref.max, best[w] > 0 ? ref.med / best[w] : 0);
            if (out)
                for (int r = 0; r < runs; r++)
                    fprintf(out, "ref,%s,static,%u,%u,%.2f,%.1f,,%d\n", all[w].name, starts[s],
                            best_size[w], ref_s, res[REF][w][s][r], r);
            for (int c = 0; c < 2; c++) {
                double ratio[MAX_RUNS], t90[MAX_RUNS], fin[MAX_RUNS];
                for (int r = 0; r < runs; r++) {
                    size_t tr = TRACE(c, w, s, r);
                    int n = nlog[tr], from = all[w].fw_after >= 0 ? n / 2 : 0;
                    const unsigned *sl = slog + tr * (size_t)cap;
                    const double *rl = rlog + tr * (size_t)cap, dx = res[c][w][s][r];
                    double ref_r = res[REF][w][s][r];
                    ratio[r] = ref_r > 0 ? dx / ref_r : 0;
                    t90[r] = INFINITY;
                    for (int i = from; i < n && isinf(t90[r]); i++)
                        if (rl[i] >= 0.9 * ref_r)
                            t90[r] = (i + 1 - from) * 0.1;
                    fin[r] = n ? sl[n - 1] : 0;
                    if (out) {
                        for (int i = 0; i < n; i++)
                            fprintf(out, "dynamic,%s,%s,%u,%u,%.1f,%.1f,,%d\n", all[w].name,
                                    cname[c], starts[s], sl[i], (i + 1) * 0.1, rl[i], r);
                        fprintf(out, "steady,%s,%s,%u,%u,%.1f,%.1f,,%d\n", all[w].name, cname[c],
                                starts[s], (unsigned)fin[r], DYN_LEN(w), dx, r);
                        fprintf(out, "ratio,%s,%s,%u,%u,%.1f,%.4f,,%d\n", all[w].name, cname[c],
                                starts[s], best_size[w], DYN_LEN(w), ratio[r], r);
                    }
                }
                stat3 t = stats(res[c][w][s], runs), q = stats(ratio, runs),
                      u = stats(t90, runs), f = stats(fin, runs);
                int mr = median_run(res[c][w][s], runs);
                if (out)
                    fprintf(out, "median_run,%s,%s,%u,,,,,%d\n", all[w].name, cname[c],
                            starts[s], mr);
                char b1[8], b2[8], b3[8], tb[32], fb[40];
                snprintf(tb, sizeof tb, "%s (%s..%s)", secs(u.med, b1), secs(u.min, b2),
                         secs(u.max, b3));
                snprintf(fb, sizeof fb, "%3.0f (%.0f..%.0f)", f.med, f.min, f.max);
                printf("%-8s %-9s %5u   %8.0f (%7.0f..%7.0f) %5.2f   %4.2f (%4.2f..%4.2f)   "
                       "%-20s   %-16s   ",
                       all[w].name, cname[c], starts[s], t.med, t.min, t.max,
                       best[w] > 0 ? t.med / best[w] : 0, ref.med > 0 ? t.med / ref.med : 0,
                       q.min, q.max, tb, fb);
                size_t tr = TRACE(c, w, s, mr);
                for (int i = 0; i < nlog[tr]; i++)
                    printf("%s%u", i ? "," : "", slog[tr * (size_t)cap + (size_t)i]);
                printf("\n");
            }
        }

    printf("\nBALANCE against AIT, side by side: the ratio of their median steady throughputs with\n"
           "(min..max) of the per-round ratios, the rounds BALANCE was ahead, and the median final\n"
           "sizes\n");
    printf("%-8s %5s   %-20s   %-13s   %s\n", "workload", "start", "BALANCE / AIT", "rounds ahead",
           "threads BALANCE / AIT");
    for (int k = 0; k < ndyn; k++)
        for (int s = 0; s < nstarts; s++) {
            int w = dyn_w[k], ahead = 0;
            double q[MAX_RUNS], fin[2][MAX_RUNS];
            for (int r = 0; r < runs; r++) {
                double a = res[AIT][w][s][r], b = res[BAL][w][s][r];
                q[r] = a > 0 ? b / a : 0;
                ahead += b >= a;
                for (int c = 0; c < 2; c++) {
                    size_t tr = TRACE(c, w, s, r);
                    fin[c][r] = nlog[tr] ? slog[tr * (size_t)cap + (size_t)nlog[tr] - 1] : 0;
                }
            }
            stat3 m = stats(q, runs), fb = stats(fin[BAL], runs), fa = stats(fin[AIT], runs);
            stat3 tb = stats(res[BAL][w][s], runs), ta = stats(res[AIT][w][s], runs);
            printf("%-8s %5u   %4.2f (%4.2f..%4.2f)     %2d of %-2d        %3.0f / %.0f\n",
                   all[w].name, starts[s], ta.med > 0 ? tb.med / ta.med : 0, m.min, m.max, ahead,
                   runs, fb.med, fa.med);
        }
    fflush(stdout);

    if (fig11 >= 0) {
        printf("\n3. dynamic / static throughput at the same start size (Fig. 11), %s: a static\n"
               "pool of the start size runs in the same rounds as the dynamic pools (%.2f s, its\n"
               "last %.0f%%); a ratio is the dynamic pool's median over the static one's, with\n"
               "(min..max) of the per-round ratios\n",
               all[fig11].name, ref_s, STATIC_TAIL * 100);
        printf("%-8s %-27s   %-20s   %s\n", "start", "static tasks/s (min..max)",
               "AIT / static", "BALANCE / static");
        for (int s = 0; s < nstarts; s++) {
            double q[2][MAX_RUNS];
            for (int r = 0; r < runs; r++) {
                double st = res[ST][fig11][s][r];
                for (int c = 0; c < 2; c++)
                    q[c][r] = st > 0 ? res[c][fig11][s][r] / st : 0;
                if (out)
                    fprintf(out, "static_at_start,%s,static,%u,%u,%.2f,%.1f,,%d\n",
                            all[fig11].name, starts[s], starts[s], ref_s, st, r);
            }
            stat3 st = stats(res[ST][fig11][s], runs), a = stats(q[0], runs),
                  b = stats(q[1], runs), da = stats(res[AIT][fig11][s], runs),
                  db = stats(res[BAL][fig11][s], runs);
            printf("%-8u %8.0f (%7.0f..%7.0f)   %5.2f (%5.2f..%5.2f)   %5.2f (%5.2f..%5.2f)\n",
                   starts[s], st.med, st.min, st.max, st.med > 0 ? da.med / st.med : 0, a.min,
                   a.max, st.med > 0 ? db.med / st.med : 0, b.min, b.max);
        }
    }
    if (dry_refills)
        printf("\nwarning: %ld times the producer found the backlog empty: a pool then waited "
               "for work,\nand the throughput of that run understates it\n",
               dry_refills);
    else
        printf("\nthe backlog never ran dry: every run's pool was the bottleneck\n");
    free(slog);
    free(rlog);
    free(nlog);
    if (out && fclose(out) != 0) {
        perror(csv);
        return 1;
    }
    return 0;
}
