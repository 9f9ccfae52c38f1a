/*
 * timeline.c -- two short runs recorded with crew_trace_start/stop, for the report's timeline
 * pictures (bench/plot.sh renders them): a fork-join (a binary tree of tasks, each inner task
 * spawning two children and waiting for them, so waiting threads help) and a burst of empty
 * tasks submitted one by one from outside and waited for with crew_wait_all.
 *
 * Usage: timeline [-t threads] [-d depth] [-n empty_tasks] OUT_DIR
 *   writes OUT_DIR/timeline_forkjoin.json and OUT_DIR/timeline_empty.json (Chrome Trace Event
 *   Format: they also open in Perfetto). Defaults: the online cores, depth 9, 2000 tasks.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crew.h"

static crew_pool *pool;

/* Some tens of microseconds of arithmetic: long enough to see on the timeline. */
static void leaf_work(void) {
    volatile double x = 1.0;
    for (int i = 0; i < 4000; i++)
        x = x * 1.0000001 + 1e-9;
}

typedef struct node {
    int depth;
} node;

/* Not static, and the program exports its symbols: the trace names these functions. */
void fork_join(void *arg);
void empty(void *arg);

void fork_join(void *arg) {
    int depth = ((node *)arg)->depth;
    if (depth == 0) {
        leaf_work();
        return;
    }
    node kids[2] = {{depth - 1}, {depth - 1}};
    /* One group of two, queued at once (a child may finish before a second submission). */
    crew_task t[2] = {{.fn = fork_join, .arg = &kids[0]}, {.fn = fork_join, .arg = &kids[1]}};
    if (crew_enqueue_tasks_wait(pool, t, 2) != CREW_OK) {
        fprintf(stderr, "timeline: crew_enqueue_tasks_wait: %s\n", crew_last_error());
        exit(1);
    }
}

void empty(void *arg) { (void)arg; }

static void check(int rc, const char *what) {
    if (rc != CREW_OK) {
        fprintf(stderr, "timeline: %s: %s\n", what, crew_last_error());
        exit(1);
    }
}

static void usage(FILE *f) {
    fprintf(f, "usage: timeline [-t threads] [-d depth] [-n empty_tasks] OUT_DIR\n"
               "  writes OUT_DIR/timeline_forkjoin.json and OUT_DIR/timeline_empty.json (they\n"
               "  open in Perfetto); defaults: the online cores, depth 9, 2000 tasks\n"
               "  -h, --help  this text\n");
}

int main(int argc, char **argv) {
    unsigned threads = 0;
    int depth = 9, opt;
    long n = 2000;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:d:n:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            threads = (unsigned)atoi(optarg);
            break;
        case 'd':
            depth = atoi(optarg);
            break;
        case 'n':
            n = atol(optarg);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    const char *dir = argv[optind];
    char path[4096];
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    check(crew_create(&pool, &cfg), "crew_create");
    /* Let the workers start and fall asleep first: the picture shows them waking up. */
    usleep(20000);

    snprintf(path, sizeof path, "%s/timeline_forkjoin.json", dir);
    check(crew_trace_start(pool, path), "crew_trace_start");
    node root = {depth};
    crew_handle g = CREW_HANDLE_NONE;
    check(crew_submit(pool, fork_join, &root, 0, &g), "crew_submit");
    check(crew_wait(pool, g), "crew_wait");
    uint64_t events = 0, dropped = 0;
    check(crew_trace_stop_ex(pool, &events, &dropped), "crew_trace_stop");
    printf("fork-join, depth %d (%d tasks): %llu events, %llu dropped -> %s\n", depth,
           (2 << depth) - 1, (unsigned long long)events, (unsigned long long)dropped,
           "timeline_forkjoin.json");

    usleep(20000);
    snprintf(path, sizeof path, "%s/timeline_empty.json", dir);
    check(crew_trace_start(pool, path), "crew_trace_start");
    for (long i = 0; i < n; i++)
        check(crew_submit(pool, empty, NULL, 0, NULL), "crew_submit");
    check(crew_wait_all(pool), "crew_wait_all");
    check(crew_trace_stop_ex(pool, &events, &dropped), "crew_trace_stop");
    printf("empty tasks (%ld): %llu events, %llu dropped -> %s\n", n, (unsigned long long)events,
           (unsigned long long)dropped, "timeline_empty.json");
    crew_destroy(pool);
    return 0;
}
