/*
 * sizing.c -- the sizing study of seed 001 (Xu & Bode), with crew's two controllers.
 *
 * Workload (seed 001 §4.1, Fig. 4): every task computes for a fixed time C (a calibrated loop)
 * and then sleeps free_workload x E, emulating I/O; we use C = 100 us and E = 10 us, so
 * free_workload 10, 50, 100 sleep 0.1, 0.5 and 1 ms. Also a pure-CPU workload (free_workload 0),
 * short CPU tasks (C = 10 us: where extra threads only add contention), and a phase-changing one
 * (free_workload 100 for the first half, then pure CPU). A producer keeps a backlog of tasks
 * outstanding, so the pool is always the bottleneck.
 *
 *  1. static throughput vs pool size (Figs. 5, 7), with the stable point (first size within 5%
 *     of the best) and the degradation point (first larger size that falls below 95% again);
 *  2. reciprocal average idle time RAIT_i = AIT_1 / AIT_i vs pool size (Fig. 6);
 *  3. dynamic pools (AIT and BALANCE) started at 1, 4 and 16 threads: pool size over time
 *     (Fig. 10), steady-state throughput against the best static size, and the time to reach
 *     90% of it;
 *  4. dynamic / static throughput for start sizes 1..16 (Fig. 11).
 *
 * Usage: sizing [-q] [-m max_threads] [-d dynamic_seconds] [-s static_seconds] [-c out.csv]
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"

#define COMPUTE_US 100
#define E_US 10
#define BACKLOG 256

static double loops_per_us;
static atomic_int free_workload; /* the current phase's setting */
static atomic_int compute_us = COMPUTE_US; /* the current workload's computation */
static atomic_long outstanding, done_count;
static volatile uint64_t sink;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void compute(long loops) {
    uint64_t x = 88172645463325252ull;
    for (long i = 0; i < loops; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static void calibrate(void) {
    long loops = 1000;
    double t;
    do {
        loops *= 2;
        double t0 = now_s();
        compute(loops);
        t = now_s() - t0;
    } while (t < 0.05);
    loops_per_us = (double)loops / (t * 1e6);
}

static void task(void *arg) {
    (void)arg;
    compute((long)(atomic_load_explicit(&compute_us, memory_order_relaxed) * loops_per_us));
    int fw = atomic_load_explicit(&free_workload, memory_order_relaxed);
    if (fw > 0) {
        long us = (long)fw * E_US;
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_sub(&outstanding, 1);
    atomic_fetch_add(&done_count, 1);
}

/* Keep the backlog full for `seconds`; phase: switch to fw_after at half time (if >= 0).
 * Samples the pool size and completions every 100 ms into size_log / rate_log. Returns the
 * throughput over the last `tail` fraction of the run. */
static double run(crew_pool *p, double seconds, int fw, int fw_after, double tail,
                  unsigned *size_log, double *rate_log, int *nlog) {
    atomic_store(&free_workload, fw);
    atomic_store(&done_count, 0);
    double t0 = now_s(), next_sample = t0 + 0.1, tail_start = t0 + seconds * (1 - tail);
    long tail_done = -1, last_done = 0;
    int n = 0;
    for (;;) {
        double t = now_s();
        if (t >= t0 + seconds)
            break;
        if (fw_after >= 0 && t >= t0 + seconds / 2)
            atomic_store(&free_workload, fw_after);
        if (tail_done < 0 && t >= tail_start)
            tail_done = atomic_load(&done_count);
        while (atomic_load(&outstanding) < BACKLOG) {
            atomic_fetch_add(&outstanding, 1);
            if (crew_submit(p, task, NULL, 0, NULL) != CREW_OK) {
                fprintf(stderr, "sizing: submit failed\n");
                exit(1);
            }
        }
        if (t >= next_sample && size_log && n < 1000) {
            long d = atomic_load(&done_count);
            size_log[n] = crew_size(p);
            rate_log[n] = (double)(d - last_done) / 0.1;
            last_done = d;
            n++;
            next_sample += 0.1;
        }
        struct timespec ms = {0, 200000};
        nanosleep(&ms, NULL);
    }
    long end_done = atomic_load(&done_count);
    if (nlog)
        *nlog = n;
    /* Let the backlog drain so the next run starts clean. */
    crew_wait_all(p);
    atomic_store(&outstanding, 0);
    return (double)(end_done - (tail_done < 0 ? 0 : tail_done)) / (seconds * tail);
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

int main(int argc, char **argv) {
    int quick = 0, opt;
    unsigned max = 55;
    double dyn_s = 3.0, static_s = 0.4;
    const char *csv = NULL;
    while ((opt = getopt(argc, argv, "qm:d:s:c:h")) != -1) {
        switch (opt) {
        case 'q': quick = 1; break;
        case 'm': max = (unsigned)atoi(optarg); break;
        case 'd': dyn_s = atof(optarg); break;
        case 's': static_s = atof(optarg); break;
        case 'c': csv = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-q] [-m max_threads] [-d dynamic_s] [-s static_s] "
                            "[-c out.csv]\n", argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (max < 16 || max > CREW_MAX_THREADS || dyn_s <= 0 || static_s <= 0) {
        fprintf(stderr, "sizing: -m 16..%u, -d and -s > 0\n", CREW_MAX_THREADS);
        return 2;
    }
    if (quick) { /* a smoke test: too short for the controllers to settle */
        dyn_s = 1.2;
        static_s = 0.1;
    }
    calibrate();
    FILE *out = csv ? fopen(csv, "w") : NULL;
    if (out)
        fprintf(out, "part,workload,controller,start,size,time_s,throughput,rait\n");

    /* The phase workload comes last: it has no static row of its own (it is judged against the
     * pure-CPU phase it ends in). */
    const workload all[] = {{"fw=10", 10, -1, COMPUTE_US}, {"fw=50", 50, -1, COMPUTE_US},
                            {"fw=100", 100, -1, COMPUTE_US}, {"cpu", 0, -1, COMPUTE_US},
                            {"short", 0, -1, 10},          {"phase", 100, 0, COMPUTE_US}};
    const workload few[] = {{"fw=100", 100, -1, COMPUTE_US}, {"cpu", 0, -1, COMPUTE_US},
                            {"short", 0, -1, 10}};
    const workload *wl = quick ? few : all;
    const int nwl = quick ? 3 : 6, nstatic = quick ? 3 : 5, cpu_w = quick ? 1 : 3;
    unsigned sizes_full[] = {1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 55};
    unsigned sizes_quick[] = {1, 2, 4, 8, 16, 32};
    unsigned *sizes = quick ? sizes_quick : sizes_full;
    int nsizes = quick ? 6 : 11;
    double best[6] = {0}, static_at[6][64] = {{0}};
    unsigned best_size[6] = {0};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);

    printf("sizing study: task = %d us compute + free_workload x %d us sleep, backlog %d, "
           "%ld cores\n\n1. static throughput (tasks/s) and RAIT vs pool size\n%-8s",
           COMPUTE_US, E_US, BACKLOG, cores, "size");
    for (int w = 0; w < nstatic; w++)
        printf(" %12s %6s", wl[w].name, "RAIT");
    printf("\n");
    double ait1[6] = {0};
    for (int i = 0; i < nsizes; i++) {
        printf("%-8u", sizes[i]);
        for (int w = 0; w < nstatic; w++) { /* the phase workload has no static row */
            crew_pool *p = make(sizes[i], CREW_AUTOSIZE_OFF, 0, 1);
            atomic_store(&compute_us, wl[w].compute_us);
            double x = run(p, static_s, wl[w].fw, -1, 0.8, NULL, NULL, NULL);
            crew_stats st;
            st.size = sizeof st;
            crew_stats_get(p, &st);
            crew_destroy(p);
            if (i == 0)
                ait1[w] = st.idle.mean_ns;
            double rait = st.idle.mean_ns > 0 ? ait1[w] / st.idle.mean_ns : 0;
            static_at[w][i] = x;
            if (x > best[w]) {
                best[w] = x;
                best_size[w] = sizes[i];
            }
            printf(" %12.0f %6.2f", x, rait);
            if (out)
                fprintf(out, "static,%s,none,%u,%u,%.2f,%.1f,%.4f\n", wl[w].name, sizes[i],
                        sizes[i], static_s, x, rait);
            fflush(stdout);
        }
        printf("\n");
    }
    if (nwl > nstatic) { /* phase: judged against the pure-CPU phase it ends in */
        best[nwl - 1] = best[cpu_w];
        best_size[nwl - 1] = best_size[cpu_w];
    }
    printf("%-8s", "stable");
    for (int w = 0; w < nstatic; w++) {
        int stable = -1, degr = -1;
        for (int i = 0; i < nsizes; i++)
            if (stable < 0 && static_at[w][i] >= 0.95 * best[w])
                stable = i;
        for (int i = stable + 1; i < nsizes; i++)
            if (degr < 0 && static_at[w][i] < 0.95 * best[w])
                degr = i;
        printf(" %12u %6s", sizes[stable], "");
        static_at[w][63] = degr < 0 ? 0 : sizes[degr];
    }
    printf("\n%-8s", "degrades");
    for (int w = 0; w < nstatic; w++) {
        if (static_at[w][63] > 0)
            printf(" %12.0f %6s", static_at[w][63], "");
        else
            printf(" %12s %6s", "none", "");
    }
    printf("\n\n2. dynamic pools (min 1, max %u), %.1f s each: steady throughput (last half) / "
           "best static of the sweep (/best) and / a static pool of that size run between the "
           "two controllers (/ref: side by side, so the machine's load changes less), time to "
           "reach 90%% of best static, final size\n",
           max, dyn_s);
    printf("%-8s %-9s %5s %10s %6s %6s %8s %6s   size every 0.1 s (Fig. 10)\n", "workload",
           "control", "start", "tasks/s", "/best", "/ref", "t90 (s)", "final");
    unsigned starts_full[] = {1, 4, 16}, starts_quick[] = {1, 16};
    unsigned *starts = quick ? starts_quick : starts_full;
    const int nstarts = quick ? 2 : 3;
    double dyn_at[2][6][3];
    for (int w = 0; w < nwl; w++)
        for (int s = 0; s < nstarts; s++) {
            /* AIT, then the static reference, then BALANCE; printed once all three ran. */
            static unsigned sizes_log[2][1000];
            static double rates[2][1000];
            int n[2] = {0, 0};
            double ref = 0;
            atomic_store(&compute_us, wl[w].compute_us);
            for (int c = 0; c < 2; c++) {
                if (c == 1) {
                    crew_pool *p = make(best_size[w], CREW_AUTOSIZE_OFF, 0, 0);
                    int fw = wl[w].fw_after >= 0 ? wl[w].fw_after : wl[w].fw;
                    ref = run(p, dyn_s * 0.5, fw, -1, 1.0, NULL, NULL, NULL);
                    crew_destroy(p);
                }
                unsigned mode = c == 0 ? CREW_AUTOSIZE_AIT : CREW_AUTOSIZE_BALANCE;
                crew_pool *p = make(starts[s], mode, max, 0);
                dyn_at[c][w][s] =
                    run(p, dyn_s, wl[w].fw, wl[w].fw_after, 0.5, sizes_log[c], rates[c], &n[c]);
                crew_destroy(p);
            }
            printf("%-8s static@%-2u %5s %10.0f %6.2f\n", wl[w].name, best_size[w], "", ref,
                   ref / best[w]);
            for (int c = 0; c < 2; c++) {
                double x = dyn_at[c][w][s], t90 = -1;
                int from = wl[w].fw_after >= 0 ? n[c] / 2 : 0; /* phase: after the change */
                for (int i = from; i < n[c] && t90 < 0; i++)
                    if (rates[c][i] >= 0.9 * best[w])
                        t90 = (i + 1 - from) * 0.1;
                char t90s[16] = "never";
                if (t90 >= 0)
                    snprintf(t90s, sizeof t90s, "%.1f", t90);
                const char *name = c == 0 ? "AIT" : "BALANCE";
                printf("%-8s %-9s %5u %10.0f %6.2f %6.2f %8s %6u   ", wl[w].name, name,
                       starts[s], x, x / best[w], ref > 0 ? x / ref : 0, t90s,
                       n[c] ? sizes_log[c][n[c] - 1] : 0);
                for (int i = 0; i < n[c]; i++)
                    printf("%s%u", i ? "," : "", sizes_log[c][i]);
                printf("\n");
                if (out) {
                    for (int i = 0; i < n[c]; i++)
                        fprintf(out, "dynamic,%s,%s,%u,%u,%.1f,%.1f,\n", wl[w].name, name,
                                starts[s], sizes_log[c][i], (i + 1) * 0.1, rates[c][i]);
                    fprintf(out, "ratio,%s,%s,%u,%u,%.1f,%.4f,\n", wl[w].name, name, starts[s],
                            best_size[w], dyn_s, ref > 0 ? x / ref : 0);
                }
            }
            fflush(stdout);
        }
    const int fw100 = quick ? 0 : 2;
    printf("\n3. dynamic / static throughput at the same start size (Fig. 11), fw=100\n");
    printf("%-8s %10s %10s %10s\n", "start", "static", "AIT", "BALANCE");
    for (int s = 0; s < nstarts; s++) {
        int i = 0;
        while (i < nsizes && sizes[i] != starts[s])
            i++;
        double st = i < nsizes ? static_at[fw100][i] : 0;
        printf("%-8u %10.0f %10.2f %10.2f\n", starts[s], st, st ? dyn_at[0][fw100][s] / st : 0,
               st ? dyn_at[1][fw100][s] / st : 0);
    }
    if (out)
        fclose(out);
    return 0;
}
