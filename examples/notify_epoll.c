/*
 * notify_epoll.c -- handing completions from a crew pool to an event loop that never blocks.
 *
 * An epoll loop (as in a network server, or libuv's uv_async_t) starts "requests": each is a
 * group of tasks on the pool that sums a slice of squares. The loop does not wait for a group:
 * crew_notify registers a callback that the pool runs once the group has finished; it appends
 * the request to a completion list and writes to an eventfd the loop watches. The loop wakes,
 * drains the list, and asks crew_wait for each group's result, which answers at once (the group
 * has finished). Meanwhile a timerfd ticks every millisecond to show the loop stays responsive.
 * With -c, every third request is cancelled (crew_cancel) right after it starts: its callback
 * still runs, and crew_wait reports CREW_ECANCELED.
 *
 *   notify_epoll [-n requests] [-k tasks per request] [-t threads] [-c] [-h]
 *
 * Prints one line per completed request, then a summary; exits 0 if every request completed
 * exactly once with the right sum (or was reported cancelled), 1 otherwise, 2 on bad options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "crew.h"

#define SLICE 20000u /* numbers per task */

typedef struct request request;
typedef struct part {
    request *req;
    uint64_t begin;
} part;

struct request {
    unsigned id;
    crew_handle group;
    _Atomic uint64_t sum; /* the tasks add their partial sums */
    part *parts;
    crew_task *tasks; /* must live until each task starts: freed after crew_destroy */
    int done;       /* completions seen by the loop (must end at 1) */
    request *next;  /* completion list link (under done_lock) */
};

/* The completion list: filled by callbacks on pool threads, drained by the loop. */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static request *done_head;
static int wake_fd; /* eventfd */

static void sum_slice(void *arg) {
    part *pt = arg;
    uint64_t s = 0;
    for (uint64_t x = pt->begin; x < pt->begin + SLICE; x++)
        s += x * x;
    atomic_fetch_add(&pt->req->sum, s);
}

/* crew_notify's callback: on a pool thread, once the request's group has finished. */
static void completed(void *arg) {
    request *r = arg;
    pthread_mutex_lock(&done_lock);
    r->next = done_head;
    done_head = r;
    pthread_mutex_unlock(&done_lock);
    uint64_t one = 1;
    if (write(wake_fd, &one, sizeof one) != sizeof one) /* never blocks: a counter */
        perror("write eventfd");
}

static uint64_t expected_sum(unsigned k, unsigned id) {
    uint64_t s = 0;
    for (uint64_t x = (uint64_t)id * k * SLICE; x < (uint64_t)(id + 1) * k * SLICE; x++)
        s += x * x;
    return s;
}

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [-n 1..100000 requests] [-k 1..1000 tasks] [-t 1..64 threads] [-c]\n"
            "  -n requests  requests to run (default 100)\n"
            "  -k tasks     tasks per request (default 8)\n"
            "  -t threads   pool workers (default 2)\n"
            "  -c           cancel every third request right after it starts\n"
            "  -h, --help   this text\n"
            "Prints a line per completed request, then a summary.\n",
            prog);
}

/* The argument s of option -opt as a whole number in lo..hi; anything else is a usage error. */
static unsigned parse(int opt, const char *s, long lo, long hi, const char *prog) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "%s: -%c %s: expected a number in %ld..%ld\n", prog, opt, s, lo, hi);
        usage(stderr, prog);
        exit(2);
    }
    return (unsigned)v;
}

int main(int argc, char **argv) {
    unsigned n = 100, k = 8, threads = 2;
    int cancel = 0, opt;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "n:k:t:ch", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n': n = parse(opt, optarg, 1, 100000, argv[0]); break;
        case 'k': k = parse(opt, optarg, 1, 1000, argv[0]); break;
        case 't': threads = parse(opt, optarg, 1, 64, argv[0]); break;
        case 'c': cancel = 1; break;
        case 'h': usage(stdout, argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    crew_pool *pool;
    if (crew_create(&pool, &cfg) != CREW_OK) {
        fprintf(stderr, "crew_create: %s\n", crew_last_error());
        return 1;
    }
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct itimerspec every_ms = {{0, 1000000}, {0, 1000000}};
    struct epoll_event ev = {.events = EPOLLIN};
    if (wake_fd < 0 || tick_fd < 0 || ep < 0 || timerfd_settime(tick_fd, 0, &every_ms, NULL)) {
        perror("eventfd/timerfd/epoll");
        return 1;
    }
    ev.data.fd = wake_fd;
    epoll_ctl(ep, EPOLL_CTL_ADD, wake_fd, &ev);
    ev.data.fd = tick_fd;
    epoll_ctl(ep, EPOLL_CTL_ADD, tick_fd, &ev);

    request *reqs = calloc(n, sizeof *reqs);
    if (!reqs)
        return 1;
    /* Start every request from the loop's thread: a group of k tasks, then its callback. */
    for (unsigned i = 0; i < n; i++) {
        request *r = &reqs[i];
        r->id = i;
        r->group = CREW_HANDLE_NONE;
        r->parts = calloc(k, sizeof *r->parts);
        crew_task *tasks = r->tasks = calloc(k, sizeof *tasks);
        if (!r->parts || !tasks)
            return 1;
        for (unsigned j = 0; j < k; j++) {
            r->parts[j] = (part){r, ((uint64_t)i * k + j) * SLICE};
            tasks[j].fn = sum_slice;
            tasks[j].arg = &r->parts[j];
        }
        if (crew_enqueue_tasks(pool, tasks, k, &r->group) != CREW_OK ||
            crew_notify(pool, r->group, completed, r) != CREW_OK) {
            fprintf(stderr, "request %u: %s\n", i, crew_last_error());
            return 1;
        }
        if (cancel && i % 3 == 0)
            crew_cancel(pool, r->group); /* CREW_ESTALE if it already finished: fine */
    }

    unsigned completions = 0, cancelled = 0, bad = 0;
    uint64_t ticks = 0;
    while (completions < n) {
        struct epoll_event got[2];
        int m = epoll_wait(ep, got, 2, 5000);
        if (m == 0) {
            fprintf(stderr, "no completion for 5 s\n");
            return 1;
        }
        for (int e = 0; e < m; e++) {
            uint64_t cnt;
            if (got[e].data.fd == tick_fd) {
                if (read(tick_fd, &cnt, sizeof cnt) == sizeof cnt)
                    ticks += cnt;
                continue;
            }
            if (read(wake_fd, &cnt, sizeof cnt) != sizeof cnt)
                continue;
            pthread_mutex_lock(&done_lock);
            request *list = done_head;
            done_head = NULL;
            pthread_mutex_unlock(&done_lock);
            for (request *r = list; r; r = r->next) {
                int rc = crew_wait(pool, r->group); /* finished: answers at once */
                uint64_t s = atomic_load(&r->sum);
                r->done++;
                completions++;
                if (rc == CREW_ECANCELED) {
                    cancelled++;
                    printf("request %u: cancelled\n", r->id);
                } else if (rc == CREW_OK && s == expected_sum(k, r->id)) {
                    printf("request %u: sum %" PRIu64 "\n", r->id, s);
                } else {
                    bad++;
                    printf("request %u: WRONG (%s, sum %" PRIu64 ")\n", r->id, crew_err_name(rc),
                           s);
                }
            }
        }
    }
    crew_destroy(pool); /* drains: no callback can still be running after this */
    for (unsigned i = 0; i < n; i++) {
        if (reqs[i].done != 1)
            bad++;
        free(reqs[i].parts);
        free(reqs[i].tasks);
    }
    printf("done: %u requests, %u cancelled, %u wrong, the loop ticked %" PRIu64 " times\n", n,
           cancelled, bad, ticks);
    free(reqs);
    close(ep);
    close(tick_fd);
    close(wake_fd);
    return bad == 0 ? 0 : 1;
}
