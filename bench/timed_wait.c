/*
 * timed_wait.c -- how late a timed wait that gives up returns: crew_wait_timed on a group that
 * cannot finish (one of its tasks holds a worker until the end), -n times with a time-out of
 * -w microseconds, from a thread outside the pool. Lateness = the time the call took minus its
 * time-out. Two cases:
 *   idle: the pool has nothing else to do; the waiter sleeps in the eventcount's timed wait
 *         and returns when it times out (the floor: the system's timer slack and wake-up).
 *   busy: a feeder keeps the pool's queue full of -b microsecond CPU tasks of no group; the
 *         waiter helps with them (crew_wait_timed runs queued tasks while it waits) and can
 *         give up only between two tasks, so its lateness is up to one task's length.
 * Reports p50, p99 and max lateness per case, in microseconds, and how many busy tasks the
 * waiter ran itself. A benchmark, not a test:
 * nothing here is asserted.
 *
 * Usage: timed_wait [-t threads] [-n waits] [-w timeout_us] [-b busy_task_us]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "crew.h"

/* The holder task's release, and the feeder's stop; set once by main. Relaxed: the tasks only
 * need to see it eventually (they poll). held: the holder has started (on a worker; main waits
 * for it before its first crew_wait_timed, which would otherwise run the holder itself). */
static atomic_int release_holder, stop_feeder, held;
static long busy_ns = 1000000;
/* The thread that waits, and the busy tasks it ran while it helped (relaxed: a count for the
 * report; only the waiter itself adds to it, and it reads it). */
static pthread_t waiter;
static atomic_long helped;

static void hold(void *arg) {
    (void)arg;
    struct timespec nap = {0, 200000};
    atomic_store_explicit(&held, 1, memory_order_relaxed);
    while (!atomic_load_explicit(&release_holder, memory_order_relaxed))
        nanosleep(&nap, NULL); /* a held worker: the group stays open */
}

/* busy_ns of CPU. */
static void burn(void *arg) {
    (void)arg;
    if (pthread_equal(pthread_self(), waiter))
        atomic_fetch_add_explicit(&helped, 1, memory_order_relaxed);
    uint64_t end = crew_now_ns() + (uint64_t)busy_ns;
    volatile double x = 1.0;
    while (crew_now_ns() < end)
        for (int i = 0; i < 100; i++)
            x = x * 1.0000001 + 1e-9;
}

/* Keeps about 2 * threads of burn() queued until stop_feeder. */
typedef struct feeder {
    crew_pool *p;
    unsigned threads;
} feeder;

static void *feed(void *arg) {
    feeder *f = arg;
    crew_stats s;
    s.size = sizeof s;
    struct timespec nap = {0, 100000};
    while (!atomic_load_explicit(&stop_feeder, memory_order_relaxed)) {
        if (crew_stats_get(f->p, &s) == CREW_OK && s.queued < 2u * f->threads) {
            if (crew_submit(f->p, burn, NULL, 1, NULL) != CREW_OK)
                break;
            continue;
        }
        nanosleep(&nap, NULL);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* n timed waits on g; prints the lateness percentiles. Returns 0, or 1 if a wait did not time
 * out. */
static int measure(const char *name, crew_pool *p, crew_handle g, long n, uint64_t timeout_ns) {
    uint64_t *late = calloc((size_t)n, sizeof *late);
    if (!late)
        return 1;
    for (long i = 0; i < n; i++) {
        uint64_t t0 = crew_now_ns();
        int rc = crew_wait_timed(p, g, timeout_ns);
        uint64_t took = crew_now_ns() - t0;
        if (rc != CREW_ETIMEDOUT) {
            fprintf(stderr, "timed_wait: crew_wait_timed returned %s\n", crew_err_name(rc));
            free(late);
            return 1;
        }
        late[i] = took > timeout_ns ? took - timeout_ns : 0;
    }
    qsort(late, (size_t)n, sizeof *late, cmp_u64);
    printf("%-5s  %6ld waits  lateness us: p50 %8.1f  p99 %8.1f  max %8.1f\n", name, n,
           late[n / 2] / 1e3, late[(size_t)((double)n * 0.99)] / 1e3, late[n - 1] / 1e3);
    free(late);
    return 0;
}

int main(int argc, char **argv) {
    unsigned threads = 2;
    long n = 1000, timeout_us = 1000, busy_us = 1000;
    int opt;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:n:w:b:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            threads = (unsigned)atoi(optarg);
            break;
        case 'n':
            n = atol(optarg);
            break;
        case 'w':
            timeout_us = atol(optarg);
            break;
        case 'b':
            busy_us = atol(optarg);
            break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: %s [-t threads] [-n waits] [-w timeout_us] [-b busy_task_us]\n"
                    "  lateness of crew_wait_timed time-outs on an idle and a busy pool\n"
                    "  -t threads      workers (default 2; one is held for the whole run)\n"
                    "  -n waits        timed waits per case (default 1000)\n"
                    "  -w timeout_us   each wait's time-out (default 1000)\n"
                    "  -b busy_task_us the busy case's CPU tasks (default 1000)\n"
                    "  -h, --help      this text\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (threads < 2 || n < 1 || timeout_us < 1 || busy_us < 1) {
        fprintf(stderr, "timed_wait: -t must be >= 2, -n, -w and -b >= 1\n");
        return 2;
    }
    busy_ns = busy_us * 1000;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.monitoring = 1; /* the feeder reads crew_stats.queued */
    crew_pool *p;
    int rc = crew_create(&p, &cfg);
    if (rc != CREW_OK) {
        fprintf(stderr, "timed_wait: crew_create: %s\n", crew_strerror(rc));
        return 1;
    }
    crew_handle g = CREW_HANDLE_NONE;
    if ((rc = crew_submit(p, hold, NULL, 0, &g)) != CREW_OK) {
        fprintf(stderr, "timed_wait: crew_submit: %s\n", crew_strerror(rc));
        return 1;
    }
    struct timespec nap = {0, 1000000};
    while (!atomic_load_explicit(&held, memory_order_relaxed))
        nanosleep(&nap, NULL);
    printf("crew_wait_timed time-outs of %ld us, %u workers (one held), busy tasks of %ld us\n",
           timeout_us, threads, busy_us);
    uint64_t timeout_ns = (uint64_t)timeout_us * 1000u;
    waiter = pthread_self();
    int bad = measure("idle", p, g, n, timeout_ns);
    feeder f = {p, threads};
    pthread_t th;
    if (pthread_create(&th, NULL, feed, &f) != 0) {
        fprintf(stderr, "timed_wait: pthread_create failed\n");
        return 1;
    }
    struct timespec warm = {0, 50000000};
    nanosleep(&warm, NULL); /* the queue fills */
    bad |= measure("busy", p, g, n, timeout_ns);
    atomic_store_explicit(&stop_feeder, 1, memory_order_relaxed);
    pthread_join(th, NULL);
    printf("busy: the waiter ran %ld of the busy tasks itself while it waited\n",
           atomic_load_explicit(&helped, memory_order_relaxed));
    atomic_store_explicit(&release_holder, 1, memory_order_relaxed);
    crew_destroy(p);
    return bad;
}
