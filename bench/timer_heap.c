/*
 * timer_heap.c -- what pending time costs: a million delayed tasks and a million periodic
 * timers on one pool. For each: the time to insert one (crew_submit_after, crew_timer_start),
 * the memory per entry (resident set growth), the CPU the process uses while they wait (the
 * timer thread sleeps until the nearest due time: about 0), and the time to take them out
 * again (crew_cancel of their group, one call for all; crew_timer_stop, one call each). A
 * benchmark, not a test: nothing here is asserted.
 *
 * Usage: timer_heap [-n entries] [-s idle_seconds] [-t threads]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"

static void nothing(void *arg) { (void)arg; }

static double now_s(void) { return (double)crew_now_ns() * 1e-9; }

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* CPU seconds the whole process used over `seconds` of waiting. */
static double idle_cpu(double seconds) {
    double c0 = cpu_s();
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    return cpu_s() - c0;
}

static void usage(FILE *f) {
    fprintf(f, "usage: timer_heap [-n entries] [-s idle_seconds] [-t threads]\n"
               "  -n  delayed tasks, then timers, pending at once (default 1000000)\n"
               "  -s  seconds to measure the CPU used while they wait (default 1)\n"
               "  -t  worker threads (default 2)\n"
               "  -h, --help  this text\n");
}

int main(int argc, char **argv) {
    long n = 1000000;
    double idle = 1.0;
    unsigned threads = 2;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    int c;
    while ((c = getopt_long(argc, argv, "n:s:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': n = atol(optarg); break;
        case 's': idle = atof(optarg); break;
        case 't': threads = (unsigned)atoi(optarg); break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (n < 1 || threads < 1) {
        usage(stderr);
        return 2;
    }
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    crew_pool *p;
    if (crew_create(&p, &cfg) != CREW_OK)
        return 1;
    const uint64_t hour = 3600ull * 1000000000ull;

    long m0 = rss_kb();
    crew_handle g = CREW_HANDLE_NONE;
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        if (crew_submit_after(p, hour + (uint64_t)(i % 100000) * 1000u, nothing, NULL, 0, &g) !=
            CREW_OK)
            return 1;
    double t1 = now_s();
    long m1 = rss_kb();
    double cpu = idle_cpu(idle);
    double t2 = now_s();
    crew_cancel(p, g);
    double t3 = now_s();
    printf("delayed tasks: %ld pending; insert %.0f ns each; %.0f bytes each; CPU while waiting "
           "%.3f s in %.1f s; crew_cancel of all %.3f s (%.0f ns each)\n",
           n, (t1 - t0) * 1e9 / (double)n, (double)(m1 - m0) * 1024.0 / (double)n, cpu, idle,
           t3 - t2, (t3 - t2) * 1e9 / (double)n);

    crew_timer **ts = malloc((size_t)n * sizeof *ts);
    if (!ts)
        return 1;
    m0 = rss_kb();
    t0 = now_s();
    for (long i = 0; i < n; i++)
        if (crew_timer_start(p, hour + (uint64_t)(i % 100000) * 1000u, 1000000, 0, nothing, NULL,
                             &ts[i]) != CREW_OK)
            return 1;
    t1 = now_s();
    m1 = rss_kb();
    cpu = idle_cpu(idle);
    /* Stopped in a scattered order, so that most leave from the middle of the heap. */
    t2 = now_s();
    for (long k = 0; k < n; k++)
        crew_timer_stop(ts[(k * 7919) % n]);
    t3 = now_s();
    printf("timers: %ld pending; start %.0f ns each; %.0f bytes each; CPU while waiting %.3f s "
           "in %.1f s; stop %.0f ns each\n",
           n, (t1 - t0) * 1e9 / (double)n, (double)(m1 - m0) * 1024.0 / (double)n, cpu, idle,
           (t3 - t2) * 1e9 / (double)n);
    free(ts);
    crew_destroy(p);
    return 0;
}
