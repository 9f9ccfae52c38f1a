/*
 * parallel.c -- the parallel primitives' engines side by side (src/parallel.c): counter (helper
 * tasks in a group share an atomic chunk counter), split (lazy binary splitting on crew_join)
 * and offer (the counter, its helpers offered by crew_join instead of queued in a group; the
 * default under work stealing). Per workload, the runs alternate between the engines (counter,
 * split, offer, counter, ...), and each engine's median time per call (min..max) and its ratio
 * to the counter's are printed. For instruction counts, run one engine at a time under
 * `valgrind --tool=callgrind` (-e offer), with -r 1 and -r 5, and divide the difference.
 *
 * Workloads (-w, comma-separated; default all):
 *   for6    crew_parallel_for over 1e6 cheap iterations (a multiply-shift-xor each)
 *   for8    the same over 1e8 iterations
 *   small   crew_parallel_for over 1e4 iterations (the INLINE_NS region)
 *   reduce  crew_parallel_reduce: the sum of 1e6 doubles
 *   filter  crew_parallel_filter: the doubles > 0.5 of 1e6
 *   nested  crew_parallel_for over 64 outer iterations, each one over 1e4 inner (in tasks)
 *   tasks   16 tasks in one group, each running crew_parallel_for over 1e5 iterations (nested
 *           parallelism: the loops start inside tasks of the pool), waited for from outside
 *
 * Usage: bench_parallel [-t threads,...] [-r repeats] [-w workloads] [-e counter,split,offer]
 *                       [-s scale] [-h|--help]
 *   -t  pool sizes, comma-separated (default: the number of cores)
 *   -r  runs per engine (default 7; medians need at least 5)
 *   -s  multiply every element count by this (default 1; 0.01 for a quick look)
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

/* The engines (src/parallel.h; the library is linked statically). */
void crew__parallel_engine(int engine);
/* The engines measured, in the order of the columns: CREW__PAR_COUNTER, _SPLIT, _OFFER. */
static const char *const engine_names[] = {"counter", "split", "offer"};
static const int engine_ids[] = {1, 2, 3};
enum { NENGINE = 3 };

static crew_pool *g_pool;
static double *g_in, *g_out;
static _Atomic uint64_t g_sink; /* keeps the loops' results alive; relaxed: a sum */

/* A cheap iteration: a multiply, a shift and an xor, folded into a local, stored once a call. */
static void cheap(size_t b, size_t e, void *arg) {
    (void)arg;
    uint64_t acc = 0;
    for (size_t i = b; i < e; i++)
        acc ^= ((uint64_t)i * 0x9E3779B97F4A7C15u) >> (i & 15);
    atomic_fetch_add_explicit(&g_sink, acc, memory_order_relaxed);
}

static void fold(size_t b, size_t e, void *acc, void *arg) {
    (void)arg;
    double s = *(double *)acc;
    for (size_t i = b; i < e; i++)
        s += g_in[i];
    *(double *)acc = s;
}
static void combine(void *acc, const void *other, void *arg) {
    (void)arg;
    *(double *)acc += *(const double *)other;
}
static int keep(const void *x, void *arg) {
    (void)arg;
    return *(const double *)x > 0.5;
}
static void outer(size_t b, size_t e, void *arg) {
    for (size_t i = b; i < e; i++)
        crew_parallel_for(g_pool, 0, *(size_t *)arg, 0, cheap, NULL);
}
static void loop_task(void *arg) { crew_parallel_for(g_pool, 0, *(size_t *)arg, 0, cheap, NULL); }

typedef struct {
    const char *name;
    double count; /* elements at scale 1 */
} workload;

static const workload workloads[] = {{"for6", 1e6},     {"for8", 1e8},     {"small", 1e4},
                                     {"reduce", 1e6},   {"filter", 1e6},   {"nested", 1e4},
                                     {"tasks", 1e5}};
enum { NWORK = sizeof workloads / sizeof workloads[0] };

/* One call of workload w over n elements. */
static void run(int w, size_t n) {
    switch (w) {
    case 0:
    case 1:
    case 2:
        crew_parallel_for(g_pool, 0, n, 0, cheap, NULL);
        break;
    case 3: {
        double s = 0;
        crew_parallel_reduce(g_pool, 0, n, 0, &s, sizeof s, fold, combine, NULL);
        atomic_fetch_add_explicit(&g_sink, (uint64_t)s, memory_order_relaxed);
        break;
    }
    case 4: {
        size_t kept = 0;
        crew_parallel_filter(g_pool, g_in, n, sizeof(double), g_out, &kept, keep, NULL);
        atomic_fetch_add_explicit(&g_sink, kept, memory_order_relaxed);
        break;
    }
    case 5:
        crew_parallel_for(g_pool, 0, 64, 1, outer, &n);
        break;
    default: {
        crew_handle g = CREW_HANDLE_NONE;
        for (int i = 0; i < 16; i++)
            crew_submit(g_pool, loop_task, &n, 0, &g);
        crew_wait(g_pool, g);
    }
    }
}

/* Calls of workload w in one timed run: enough for about a millisecond or more. */
static int calls_for(size_t n) { return n >= 1000000 ? 1 : (int)(1000000 / (n ? n : 1)); }

static void usage(FILE *f) {
    fputs("usage: bench_parallel [-t threads,...] [-r repeats] [-w for6,for8,small,reduce,"
          "filter,nested,tasks] [-e counter,split,offer] [-s scale] [-h|--help]\n"
          "  crew_parallel_for/reduce/filter under each engine: counter (helper tasks in a\n"
          "  group), split (lazy binary splitting on crew_join), offer (the counter's helpers\n"
          "  offered by crew_join); runs interleaved; median time per call (min..max) per\n"
          "  engine and its ratio to the counter's.\n",
          f);
}

int main(int argc, char **argv) {
    char threads_arg[256] = "", works[256] = "for6,for8,small,reduce,filter,nested,tasks";
    int repeats = 7, opt, engines = (1 << NENGINE) - 1;
    double scale = 1;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:r:w:e:s:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            snprintf(threads_arg, sizeof threads_arg, "%s", optarg);
            break;
        case 'r':
            repeats = atoi(optarg);
            break;
        case 'w':
            snprintf(works, sizeof works, "%s", optarg);
            break;
        case 'e':
            engines = 0;
            for (int e = 0; e < NENGINE; e++)
                if (strstr(optarg, engine_names[e]))
                    engines |= 1 << e;
            break;
        case 's':
            scale = atof(optarg);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (repeats < 1 || scale <= 0) {
        usage(stderr);
        return 2;
    }
    if (!threads_arg[0])
        snprintf(threads_arg, sizeof threads_arg, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    size_t nmax = (size_t)(1e6 * scale) + 1;
    g_in = malloc(nmax * sizeof *g_in);
    g_out = malloc(nmax * sizeof *g_out);
    if (!g_in || !g_out)
        return 1;
    uint64_t x = 88172645463325252u;
    for (size_t i = 0; i < nmax; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        g_in[i] = (double)(x >> 11) / 9007199254740992.0;
    }
    printf("%-7s %3s %10s %6s", "work", "t", "elements", "calls");
    for (int e = 0; e < NENGINE; e++)
        if (engines & (1 << e))
            printf(" %24s", engine_names[e]);
    printf("   (us per call: median (min..max); x: to the counter's median)\n");
    for (char *ts = strtok(threads_arg, ","); ts; ts = strtok(NULL, ",")) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = (unsigned)atoi(ts);
        if (crew_create(&g_pool, &cfg) != CREW_OK) {
            fprintf(stderr, "bench_parallel: crew_create(%s threads): %s\n", ts,
                    crew_last_error());
            return 1;
        }
        char wcopy[256];
        snprintf(wcopy, sizeof wcopy, "%s", works);
        char *save = NULL;
        for (char *wn = strtok_r(wcopy, ",", &save); wn; wn = strtok_r(NULL, ",", &save)) {
            int w = 0;
            while (w < NWORK && strcmp(workloads[w].name, wn))
                w++;
            if (w == NWORK) {
                fprintf(stderr, "bench_parallel: unknown workload '%s'\n", wn);
                return 2;
            }
            size_t n = (size_t)(workloads[w].count * scale);
            if (n == 0)
                n = 1;
            if (w == 3 || w == 4)
                n = n < nmax ? n : nmax;
            int calls = calls_for(w == 5 ? n * 64 : w == 6 ? n * 16 : n);
            double *t[NENGINE];
            for (int e = 0; e < NENGINE; e++)
                t[e] = calloc((size_t)repeats, sizeof(double));
            for (int e = 0; e < NENGINE; e++) { /* warm-up */
                if (!(engines & (1 << e)))
                    continue;
                crew__parallel_engine(engine_ids[e]);
                run(w, n);
            }
            for (int r = 0; r < repeats; r++)
                for (int e = 0; e < NENGINE; e++) {
                    if (!(engines & (1 << e)))
                        continue;
                    crew__parallel_engine(engine_ids[e]);
                    double t0 = now_s();
                    for (int c = 0; c < calls; c++)
                        run(w, n);
                    t[e][r] = (now_s() - t0) / calls * 1e6;
                }
            printf("%-7s %3s %10zu %6d", wn, ts, n, calls);
            for (int e = 0; e < NENGINE; e++) {
                qsort(t[e], (size_t)repeats, sizeof(double), cmp_double);
                if (!(engines & (1 << e)))
                    continue;
                char col[48];
                snprintf(col, sizeof col, "%.0f (%.0f..%.0f)", t[e][repeats / 2], t[e][0],
                         t[e][repeats - 1]);
                if (e > 0 && (engines & 1))
                    printf(" %18s %4.2fx", col, t[e][repeats / 2] / t[0][repeats / 2]);
                else
                    printf(" %24s", col);
            }
            printf("\n");
            fflush(stdout);
            for (int e = 0; e < NENGINE; e++)
                free(t[e]);
        }
        crew_destroy(g_pool);
    }
    printf("(%d runs per engine, interleaved; sink %llu)\n", repeats,
           (unsigned long long)atomic_load(&g_sink) % 10);
    free(g_in);
    free(g_out);
    return 0;
}
