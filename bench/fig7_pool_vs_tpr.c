/*
 * fig7_pool_vs_tpr.c -- a crew pool against thread-per-request (Jendersie et al., Fig. 7).
 *
 * BOLSTER's baseline (Jendersie et al., Fig. 5) creates numThreads - 1 threads per call, runs one
 * work_large itself, and joins the rest. The pool version (Fig. 6) enqueues numThreads tasks of
 * work_large into a pool of numThreads workers created beforehand (creation is not timed, as in
 * the paper) and waits for all with the caller helping. Both run side by side in one process,
 * interleaved run by run, so the ratio is measured under the same machine noise.
 *
 * Usage: fig7_pool_vs_tpr [-t 4,8,16,32] [-r repeats] [-w exp_calls_per_task] [-c csv_file]
 * Prints, per thread count: median (min..max) time of each, and the ratio baseline / pool of
 * those two medians (so it reads the same way as they do), with the range of the run-by-run
 * ratios (which always holds it).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

static long work_calls = 20000; /* exponentials per work_large */

/* "calculates a huge amount of exponential values in a loop" (Jendersie et al., §V-B). */
static void work_large(void *arg) {
    double *r = arg, x = *r;
    for (long i = 0; i < work_calls; i++)
        x += exp(-(double)(i % 1024) / 1024.0);
    *r = x;
}

static void *work_thread(void *arg) {
    work_large(arg);
    return NULL;
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Jendersie et al., Fig. 5. */
static double run_baseline(int n) {
    double results[64];
    pthread_t threads[64];
    double t0 = now_ns();
    for (int tid = 1; tid < n; tid++) {
        results[tid] = tid + 1;
        if (pthread_create(&threads[tid], NULL, work_thread, &results[tid]) != 0) {
            fprintf(stderr, "fig7: pthread_create failed\n");
            exit(1);
        }
    }
    results[0] = 1;
    work_large(&results[0]); /* the calling thread processes one task */
    for (int tid = 1; tid < n; tid++)
        pthread_join(threads[tid], NULL);
    return now_ns() - t0;
}

/* Jendersie et al., Fig. 6. */
static double run_pool(crew_pool *p, int n) {
    double results[64];
    crew_task tasks[64];
    double t0 = now_ns();
    memset(tasks, 0, sizeof tasks);
    for (int i = 0; i < n; i++) {
        results[i] = i + 1;
        tasks[i].fn = work_large;
        tasks[i].arg = &results[i];
    }
    int rc = crew_enqueue_tasks(p, tasks, (size_t)n, NULL);
    if (rc == CREW_OK)
        rc = crew_wait_all(p);
    if (rc != CREW_OK) {
        fprintf(stderr, "fig7: %s\n", crew_strerror(rc));
        exit(1);
    }
    return now_ns() - t0;
}

int main(int argc, char **argv) {
    int sizes[16] = {4, 8, 16, 32}, nsizes = 4, repeats = 5;
    const char *csv = NULL;
    int opt;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:r:w:c:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't': {
            nsizes = 0;
            for (char *s = strtok(optarg, ","); s && nsizes < 16; s = strtok(NULL, ","))
                sizes[nsizes++] = atoi(s);
            break;
        }
        case 'r':
            repeats = atoi(optarg);
            break;
        case 'w':
            work_calls = atol(optarg);
            break;
        case 'c':
            csv = optarg;
            break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: %s [-t 4,8,16,32] [-r repeats] [-w exp_calls] [-c out.csv]\n"
                    "  -t          tasks per call, also the pool's size (1..64 each)\n"
                    "  -h, --help  this text\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] < 1 || sizes[i] > 64) {
            fprintf(stderr, "fig7: thread counts must be 1..64, got %d\n", sizes[i]);
            return 2;
        }
    if (repeats < 1 || repeats > 1000 || work_calls < 1) {
        fprintf(stderr, "fig7: repeats must be 1..1000 and -w at least 1\n");
        return 2;
    }
    FILE *out = csv ? fopen(csv, "w") : NULL;
    if (csv && !out) {
        perror(csv);
        return 1;
    }
    if (out)
        fprintf(out, "threads,run,baseline_ns,pool_ns\n");

    printf("pool vs thread-per-request (Jendersie et al., Fig. 7), work_large = %ld exp() calls, "
           "%d runs each, %ld online cores\n",
           work_calls, repeats, sysconf(_SC_NPROCESSORS_ONLN));
    printf("ratio: the thread-per-request median over the pool's (> 1: the pool is faster), with "
           "(min..max) of the run-by-run ratios\n");
    printf("%8s  %28s  %28s  %14s\n", "threads", "thread-per-request us", "crew pool us",
           "ratio tpr/pool");
    for (int s = 0; s < nsizes; s++) {
        int n = sizes[s];
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = (unsigned)n;
        crew_pool *p;
        int rc = crew_create(&p, &cfg);
        if (rc != CREW_OK) {
            fprintf(stderr, "fig7: crew_create: %s\n", crew_strerror(rc));
            return 1;
        }
        run_pool(p, n); /* warm-up: workers have started and touched their stacks */
        run_baseline(n);
        double *b = calloc((size_t)repeats, sizeof *b), *q = calloc((size_t)repeats, sizeof *q);
        double *ratio = calloc((size_t)repeats, sizeof *ratio);
        for (int r = 0; r < repeats; r++) {
            b[r] = run_baseline(n);
            q[r] = run_pool(p, n);
            ratio[r] = b[r] / q[r];
            if (out)
                fprintf(out, "%d,%d,%.0f,%.0f\n", n, r, b[r], q[r]);
        }
        crew_destroy(p);
        qsort(b, (size_t)repeats, sizeof *b, cmp_double);
        qsort(q, (size_t)repeats, sizeof *q, cmp_double);
        qsort(ratio, (size_t)repeats, sizeof *ratio, cmp_double);
        printf("%8d  %10.1f (%7.1f..%7.1f)  %10.1f (%7.1f..%7.1f)  %6.2f (%.2f..%.2f)\n", n,
               b[repeats / 2] / 1e3, b[0] / 1e3, b[repeats - 1] / 1e3, q[repeats / 2] / 1e3,
               q[0] / 1e3, q[repeats - 1] / 1e3, b[repeats / 2] / q[repeats / 2], ratio[0],
               ratio[repeats - 1]);
        fflush(stdout);
        free(b);
        free(q);
        free(ratio);
    }
    if (out)
        fclose(out);
    return 0;
}
