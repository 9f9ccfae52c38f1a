/*
 * empty_tasks.c -- the overhead of a task: N empty tasks from one producer thread, then
 * crew_wait_all. Reports tasks per second (median, min, max of -r runs). Run under
 * `valgrind --tool=callgrind` with -r 1 to count instructions per task.
 *
 * Usage: empty_tasks [-t threads] [-n tasks] [-r repeats] [-m submit|array] [-M]
 *   -M  with monitoring on (crew_config.monitoring)
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

static void empty(void *arg) { (void)arg; }

int main(int argc, char **argv) {
    unsigned threads = 2;
    long n = 1000000;
    int repeats = 5, array = 0, monitoring = 0, opt;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:n:r:m:Mh", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            threads = (unsigned)atoi(optarg);
            break;
        case 'n':
            n = atol(optarg);
            break;
        case 'r':
            repeats = atoi(optarg);
            break;
        case 'm':
            array = strcmp(optarg, "array") == 0;
            break;
        case 'M':
            monitoring = 1;
            break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: %s [-t threads] [-n tasks] [-r repeats] [-m submit|array] [-M]\n"
                    "  -M          monitoring on (crew_config.monitoring)\n"
                    "  -h, --help  this text\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (n < 1 || repeats < 1 || repeats > 1000) {
        fprintf(stderr, "empty_tasks: -n must be >= 1 and -r 1..1000\n");
        return 2;
    }
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.monitoring = monitoring;
    crew_pool *p;
    int rc = crew_create(&p, &cfg);
    if (rc != CREW_OK) {
        fprintf(stderr, "empty_tasks: crew_create: %s\n", crew_strerror(rc));
        return 1;
    }
    crew_task *tasks = array ? calloc((size_t)n, sizeof *tasks) : NULL;
    double *rate = calloc((size_t)repeats, sizeof *rate);
    for (int r = 0; r < repeats; r++) {
        double t0 = now_s();
        if (array) {
            for (long i = 0; i < n; i++)
                tasks[i].fn = empty;
            rc = crew_enqueue_tasks(p, tasks, (size_t)n, NULL);
        } else {
            for (long i = 0; i < n && rc == CREW_OK; i++)
                rc = crew_submit(p, empty, NULL, 0, NULL);
        }
        if (rc == CREW_OK)
            rc = crew_wait_all(p);
        if (rc != CREW_OK) {
            fprintf(stderr, "empty_tasks: %s\n", crew_strerror(rc));
            return 1;
        }
        rate[r] = n / (now_s() - t0);
    }
    qsort(rate, (size_t)repeats, sizeof *rate, cmp_double);
    printf("empty tasks (%s%s, %u threads, %ld tasks, %d runs): %.0f tasks/s median "
           "(min %.0f, max %.0f)\n",
           array ? "crew_enqueue_tasks" : "crew_submit", monitoring ? ", monitoring on" : "",
           threads, n, repeats,
           rate[repeats / 2], rate[0], rate[repeats - 1]);
    crew_destroy(p);
    free(tasks);
    free(rate);
    return 0;
}
