/*
 * nap_cost.c -- what a frequently napping thread costs threads that compute beside it.
 *
 * The sizing study's producer (bench/sizing.c) naps between refills of its backlog. An earlier
 * version napped a fixed 200 us; this measures what such a napper costs raw threads (no pool)
 * that compute on every core: each run starts `threads` computing threads and one napper for
 * `seconds`, and counts the compute loops done. Runs alternate between a short nap (-a) and a
 * long one (-b), in rounds, and the report gives the median of the per-round ratios
 * short/long with (min..max), and the napper's wake-ups per second. A benchmark, not a test:
 * nothing here is asserted.
 *
 * Usage: nap_cost [-t threads] [-s seconds] [-r rounds] [-a short_nap_us] [-b long_nap_us]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "bench_util.h"

/* Set by main to end a run; relaxed: the threads only need to see it eventually, and the
 * counts they publish are read after pthread_join, which orders them. */
static atomic_int stop;

struct worker {
    pthread_t thread;
    unsigned long loops;
};

static void *compute(void *arg) {
    struct worker *w = arg;
    volatile double x = 1.0;
    unsigned long loops = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        loops++;
    }
    w->loops = loops;
    return NULL;
}

struct napper {
    pthread_t thread;
    long nap_us;
    unsigned long wakeups;
};

static void *nap(void *arg) {
    struct napper *n = arg;
    struct timespec ts = {n->nap_us / 1000000, (n->nap_us % 1000000) * 1000};
    unsigned long wakeups = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        nanosleep(&ts, NULL);
        wakeups++;
    }
    n->wakeups = wakeups;
    return NULL;
}

/* One run: loops per second of all compute threads, and the napper's wake-ups per second. */
static double run(int threads, double seconds, long nap_us, double *wakeups_per_s) {
    struct worker *w = calloc((size_t)threads, sizeof *w);
    struct napper n = {.nap_us = nap_us};
    if (!w) {
        fprintf(stderr, "nap_cost: out of memory\n");
        exit(1);
    }
    atomic_store_explicit(&stop, 0, memory_order_relaxed);
    double t0 = now_s();
    for (int i = 0; i < threads; i++)
        pthread_create(&w[i].thread, NULL, compute, &w[i]);
    pthread_create(&n.thread, NULL, nap, &n);
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    atomic_store_explicit(&stop, 1, memory_order_relaxed);
    unsigned long loops = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].thread, NULL);
        loops += w[i].loops;
    }
    pthread_join(n.thread, NULL);
    double elapsed = now_s() - t0;
    free(w);
    *wakeups_per_s = n.wakeups / elapsed;
    return loops / elapsed;
}

/* Sorts v and returns its median (the mean of the middle two when n is even). */
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), rounds = 6, opt;
    double seconds = 2.0;
    long short_us = 200, long_us = 5000;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:s:r:a:b:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't': threads = atoi(optarg); break;
        case 's': seconds = atof(optarg); break;
        case 'r': rounds = atoi(optarg); break;
        case 'a': short_us = atol(optarg); break;
        case 'b': long_us = atol(optarg); break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: %s [-t threads] [-s seconds] [-r rounds] [-a short_nap_us] "
                    "[-b long_nap_us]\n"
                    "  -h, --help  this text\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (threads < 1 || seconds <= 0 || rounds < 1 || short_us < 1 || long_us < 1) {
        fprintf(stderr, "nap_cost: threads, seconds, rounds and naps must be positive\n");
        return 2;
    }
    double *ratio = malloc((size_t)rounds * sizeof *ratio);
    double *wake_short = malloc((size_t)rounds * sizeof *wake_short);
    double *wake_long = malloc((size_t)rounds * sizeof *wake_long);
    if (!ratio || !wake_short || !wake_long) {
        fprintf(stderr, "nap_cost: out of memory\n");
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        /* Alternate which goes first, so a drift in the machine's load favours neither. */
        double a, b;
        if (r % 2 == 0) {
            a = run(threads, seconds, short_us, &wake_short[r]);
            b = run(threads, seconds, long_us, &wake_long[r]);
        } else {
            b = run(threads, seconds, long_us, &wake_long[r]);
            a = run(threads, seconds, short_us, &wake_short[r]);
        }
        ratio[r] = a / b;
        printf("round %d: nap %ld us %.4g loops/s, nap %ld us %.4g loops/s, ratio %.3f\n", r + 1,
               short_us, a, long_us, b, ratio[r]);
    }
    double mid = median(ratio, rounds); /* sorts ratio, so [0] and [rounds - 1] are min, max */
    printf("%d computing threads beside a napper: compute rate with %ld us naps (%.0f wake-ups/s) "
           "over %ld us naps (%.0f wake-ups/s): median %.3f (%.3f..%.3f) of %d rounds\n",
           threads, short_us, median(wake_short, rounds), long_us, median(wake_long, rounds), mid,
           ratio[0], ratio[rounds - 1], rounds);
    free(ratio);
    free(wake_short);
    free(wake_long);
    return 0;
}
