/*
 * empty_tasks.c -- the overhead of a task: N empty tasks from one producer thread, then
 * crew_wait_all. Reports tasks per second (median, min, max of -r runs). Run under
 * `valgrind --tool=callgrind` with -r 1 to count instructions per task.
 *
 * Usage: empty_tasks [-t threads] [-n tasks] [-r repeats] [-m submit|array] [-M]
 *                    [-w any|worker|waiter]
 *   -M  with monitoring on (crew_config.monitoring)
 *   -w  who runs the tasks: any (crew_wait_all, which helps: the workers and the waiting
 *       producer share them as they race), worker (the producer waits with
 *       crew_wait_all_timed and a long time-out, which runs no task and sleeps: the workers
 *       run them all), waiter (every worker is first held in a task of its own that sleeps on
 *       a condition variable until the last submitted task lets it go: the producer's
 *       crew_wait_all runs them all, that last one included)
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

static void empty(void *arg) { (void)arg; }

/* -w waiter: the workers held, each in a task of hold's, until release's task lets them go. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static unsigned held;  /* workers in hold */
static int holding;    /* 1 while they must stay */

static void hold(void *arg) {
    (void)arg;
    pthread_mutex_lock(&hold_lock);
    held++;
    pthread_cond_broadcast(&hold_cond);
    while (holding)
        pthread_cond_wait(&hold_cond, &hold_lock);
    held--;
    pthread_mutex_unlock(&hold_lock);
}

static void release(void *arg) {
    (void)arg;
    pthread_mutex_lock(&hold_lock);
    holding = 0;
    pthread_cond_broadcast(&hold_cond);
    pthread_mutex_unlock(&hold_lock);
}

/* Hold every worker of p (threads of them) in a task of hold's; CREW_OK once all are held. */
static int hold_workers(crew_pool *p, unsigned threads) {
    holding = 1;
    for (unsigned i = 0; i < threads; i++) {
        int rc = crew_submit(p, hold, NULL, 0, NULL);
        if (rc != CREW_OK)
            return rc;
    }
    pthread_mutex_lock(&hold_lock);
    while (held < threads)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
    return CREW_OK;
}

int main(int argc, char **argv) {
    unsigned threads = 2;
    long n = 1000000;
    int repeats = 5, array = 0, monitoring = 0, opt;
    const char *who = "any";
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:n:r:m:Mw:h", longopts, NULL)) != -1) {
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
        case 'w':
            who = optarg;
            break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: %s [-t threads] [-n tasks] [-r repeats] [-m submit|array] [-M]\n"
                    "                  [-w any|worker|waiter]\n"
                    "  -M          monitoring on (crew_config.monitoring)\n"
                    "  -w who      who runs the tasks: any (crew_wait_all, which helps: the\n"
                    "              workers and the waiting producer share them), worker (the\n"
                    "              producer waits without helping, crew_wait_all_timed), waiter\n"
                    "              (the workers held in tasks of their own until the last task\n"
                    "              lets them go: the producer's crew_wait_all runs them all)\n"
                    "  -h, --help  this text\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    int by_worker = strcmp(who, "worker") == 0, by_waiter = strcmp(who, "waiter") == 0;
    if (n < 1 || repeats < 1 || repeats > 1000 ||
        (!by_worker && !by_waiter && strcmp(who, "any") != 0) || (by_waiter && array)) {
        fprintf(stderr, "empty_tasks: -n must be >= 1, -r 1..1000, -w any, worker or waiter "
                        "(waiter with -m submit)\n");
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
        if (array) /* the array filled before the clock starts: the first run's page faults
                    * are the benchmark's own, not the pool's (a caller's array is written) */
            for (long i = 0; i < n; i++)
                tasks[i].fn = empty;
        double t0 = now_s();
        if (array) {
            rc = crew_enqueue_tasks(p, tasks, (size_t)n, NULL);
        } else {
            if (by_waiter) /* threads > 0: crew_create made as many workers */
                rc = hold_workers(p, crew_size(p));
            for (long i = 0; i < n - by_waiter && rc == CREW_OK; i++)
                rc = crew_submit(p, empty, NULL, 0, NULL);
            if (by_waiter && rc == CREW_OK) /* the last task, run after the others */
                rc = crew_submit(p, release, NULL, 0, NULL);
        }
        if (rc == CREW_OK) /* an hour: no limit in practice, but a timed wait, which sleeps */
            rc = by_worker ? crew_wait_all_timed(p, UINT64_C(3600000000000)) : crew_wait_all(p);
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
