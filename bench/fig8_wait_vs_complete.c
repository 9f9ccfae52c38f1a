/*
 * fig8_wait_vs_complete.c -- average waiting time vs completion time of pools of different
 * sizes processing 10,000 tasks, from crew's monitoring (Jendersie et al., Fig. 8 and §V-C).
 *
 * For each pool size, one producer enqueues n tasks of work (exp() calls), the caller waits for all
 * of them, and the pool's statistics give, per task, the average waiting time in the queue
 * (accepted -> started: the "avg wait time" of Jendersie et al., Table IV) and completion time
 * (submitted -> finished), and, per worker (Table III), the average time spent waiting for work and
 * busy; plus the wall time for all n. Medians of -r runs (the per-task columns with min..max).
 *
 * Usage: fig8_wait_vs_complete [-t 4,8,16,32] [-n tasks] [-w exp_calls] [-r repeats]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

static long work_calls = 2000;

static void work(void *arg) {
    double *r = arg, x = *r;
    for (long i = 0; i < work_calls; i++)
        x += exp(-(double)(i % 1024) / 1024.0);
    *r = x;
}

int main(int argc, char **argv) {
    int sizes[16] = {4, 8, 16, 32}, nsizes = 4, repeats = 5, opt;
    long n = 10000;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:n:w:r:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            nsizes = 0;
            for (char *s = strtok(optarg, ","); s && nsizes < 16; s = strtok(NULL, ","))
                sizes[nsizes++] = atoi(s);
            break;
        case 'n': n = atol(optarg); break;
        case 'w': work_calls = atol(optarg); break;
        case 'r': repeats = atoi(optarg); break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: %s [-t 4,8,16,32] [-n tasks] [-w exp_calls] [-r repeats]\n"
                    "  -t          the pool sizes to run\n"
                    "  -h, --help  this text\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (n < 1 || n > 100000000 || repeats < 1 || repeats > 1000 || work_calls < 0) {
        fprintf(stderr, "fig8: -n 1..100000000, -r 1..1000, -w >= 0\n");
        return 2;
    }
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] < 1 || sizes[i] > (int)CREW_MAX_THREADS) {
            fprintf(stderr, "fig8: pool sizes must be 1..%u\n", CREW_MAX_THREADS);
            return 2;
        }
    double *results = calloc((size_t)n, sizeof *results);
    crew_task *tasks = calloc((size_t)n, sizeof *tasks);
    double *wait = calloc((size_t)repeats, sizeof *wait);
    double *done = calloc((size_t)repeats, sizeof *done);
    double *wall = calloc((size_t)repeats, sizeof *wall);
    double *idle = calloc((size_t)repeats, sizeof *idle);
    double *busy = calloc((size_t)repeats, sizeof *busy);
    if (!results || !tasks || !wait || !done || !wall || !idle || !busy)
        return 1;
    printf("waiting vs completion time (Jendersie et al., Fig. 8): %ld tasks of %ld exp() calls, "
           "%d runs each, %ld online cores\n",
           n, work_calls, repeats, sysconf(_SC_NPROCESSORS_ONLN));
    printf("%6s %26s %26s %14s %14s %22s\n", "size", "task: waiting us", "task: completion us",
           "worker: idle ms", "worker: busy ms", "all done ms");
    for (int s = 0; s < nsizes; s++) {
        for (int r = 0; r < repeats; r++) {
            crew_config cfg;
            crew_config_init(&cfg);
            cfg.threads = (unsigned)sizes[s];
            cfg.monitoring = 1;
            crew_pool *p;
            int rc = crew_create(&p, &cfg);
            if (rc != CREW_OK) {
                fprintf(stderr, "fig8: %s\n", crew_strerror(rc));
                return 1;
            }
            memset(tasks, 0, (size_t)n * sizeof *tasks);
            double t0 = now_s();
            for (long i = 0; i < n && rc == CREW_OK; i++) {
                results[i] = (double)i;
                tasks[i].fn = work;
                tasks[i].arg = &results[i];
                rc = crew_enqueue_task(p, &tasks[i], NULL); /* one by one, as in Fig. 6 */
            }
            if (rc == CREW_OK)
                rc = crew_wait_all(p);
            wall[r] = now_s() - t0;
            crew_stats st;
            st.size = sizeof st;
            crew_stats_get(p, &st);
            crew_thread_stats ts[64];
            size_t nw = 0;
            crew_stats_threads(p, ts, 64, &nw);
            idle[r] = busy[r] = 0;
            for (size_t i = 0; i < nw && i < 64; i++) {
                idle[r] += (double)ts[i].waiting_ns / 1e6 / (double)(nw < 64 ? nw : 64);
                busy[r] += (double)ts[i].busy_ns / 1e6 / (double)(nw < 64 ? nw : 64);
            }
            crew_destroy(p);
            if (rc != CREW_OK) {
                fprintf(stderr, "fig8: %s\n", crew_strerror(rc));
                return 1;
            }
            wait[r] = st.idle.mean_ns / 1e3;
            done[r] = st.turnaround.mean_ns / 1e3;
        }
        qsort(wait, (size_t)repeats, sizeof *wait, cmp_double);
        qsort(done, (size_t)repeats, sizeof *done, cmp_double);
        qsort(wall, (size_t)repeats, sizeof *wall, cmp_double);
        qsort(idle, (size_t)repeats, sizeof *idle, cmp_double);
        qsort(busy, (size_t)repeats, sizeof *busy, cmp_double);
        int m = repeats / 2, hi = repeats - 1;
        printf("%6d %10.1f (%6.1f..%6.1f) %10.1f (%6.1f..%6.1f) %14.2f %14.2f", sizes[s], wait[m],
               wait[0], wait[hi], done[m], done[0], done[hi], idle[m], busy[m]);
        printf(" %8.1f (%5.1f..%5.1f)\n", wall[m] * 1e3, wall[0] * 1e3, wall[hi] * 1e3);
        fflush(stdout);
    }
    free(results);
    free(tasks);
    free(wait);
    free(done);
    free(wall);
    free(idle);
    free(busy);
    return 0;
}
