/*
 * timed_wait.c -- how late a timed wait that gives up returns (crew_wait_timed,
 * crew_wait_all_timed), from a thread outside the pool, whatever the pool's tasks are.
 * Lateness = the time the call took minus its time-out (-w microseconds). Cases:
 *   held:     crew_wait_timed on a group that cannot finish (its task holds one worker until
 *             the end), -n waits; "idle": nothing else queued, "busy": a feeder keeps the queue
 *             full of -b microsecond CPU tasks of no group.
 *   long:     crew_wait_timed on a group of one task of -L milliseconds;
 *   array:    crew_wait_timed on a group of -a tasks of -A microseconds queued at once by
 *             crew_enqueue_tasks (an array: runners that claim chunks);
 *   other:    crew_wait_timed on a group whose task is running on a worker (a -L ms task on an
 *             idle pool, a holder on a busy one) while such an array of another group is
 *             queued;
 *   wait_all: crew_wait_all_timed while such an array is queued;
 *   each -m waits on an "idle" pool (every worker free: they take the work) and on a "busy"
 *   one (every worker held: the work stays queued, and only a waiter that ran tasks itself
 *   could start it). After each wait the remaining tasks are told to end at once and drained.
 * The tasks of these cases sleep rather than burn CPU (a task's length is what matters here).
 * Reports p50, p99 and max lateness per case in microseconds, how many waits did not time out
 * (a wait that ran the whole group answers CREW_OK, late) and how many tasks the waiter ran
 * itself during its timed waits. A benchmark, not a test: nothing here is asserted.
 *
 * Usage: timed_wait [-t threads] [-n waits] [-m waits] [-w timeout_us] [-b busy_task_us]
 *                   [-L long_task_ms] [-a array_tasks] [-A array_task_us]
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

/* The holders' release, the feeder's stop, the sleeping tasks' early end; set by main. Relaxed:
 * the tasks only need to see them eventually (they poll). held: holders that have started
 * (main waits for them before a wait, which would otherwise run a holder itself). */
static atomic_int release_holders, stop_feeder, drain, held;
static long busy_ns = 1000000;
/* The thread that waits; whether it is in a timed wait (read and written by that thread only);
 * the tasks it ran there (relaxed: a count for the report). */
static pthread_t waiter;
static int in_timed_wait;
static atomic_long helped;

static void count_if_waiter(void) {
    if (pthread_equal(pthread_self(), waiter) && in_timed_wait)
        atomic_fetch_add_explicit(&helped, 1, memory_order_relaxed);
}

static void hold(void *arg) {
    (void)arg;
    struct timespec nap = {0, 200000};
    count_if_waiter();
    atomic_fetch_add_explicit(&held, 1, memory_order_relaxed);
    while (!atomic_load_explicit(&release_holders, memory_order_relaxed))
        nanosleep(&nap, NULL); /* a held worker */
}

/* The feeder's tasks not yet started (relaxed: a level for the feeder, not a synchronisation). */
static atomic_long queued;

/* busy_ns of CPU. */
static void burn(void *arg) {
    (void)arg;
    atomic_fetch_sub_explicit(&queued, 1, memory_order_relaxed);
    count_if_waiter();
    uint64_t end = crew_now_ns() + (uint64_t)busy_ns;
    volatile double x = 1.0;
    while (crew_now_ns() < end)
        for (int i = 0; i < 100; i++)
            x = x * 1.0000001 + 1e-9;
}

/* A task that lasts (uintptr_t)arg nanoseconds, sleeping, or until drain; started counts them
 * (relaxed: main only polls it to see that one has started). */
static atomic_long started;
static void slow(void *arg) {
    atomic_fetch_add_explicit(&started, 1, memory_order_relaxed);
    count_if_waiter();
    uint64_t end = crew_now_ns() + (uint64_t)(uintptr_t)arg;
    for (uint64_t now; (now = crew_now_ns()) < end &&
                       !atomic_load_explicit(&drain, memory_order_relaxed);) {
        uint64_t left = end - now;
        struct timespec nap = {0, (long)(left < 200000 ? left : 200000)};
        nanosleep(&nap, NULL);
    }
}

/* Keeps about 2 * threads of burn() queued until stop_feeder. */
typedef struct feeder {
    crew_pool *p;
    unsigned threads;
} feeder;

static void *feed(void *arg) {
    feeder *f = arg;
    struct timespec nap = {0, 100000};
    while (!atomic_load_explicit(&stop_feeder, memory_order_relaxed)) {
        if (atomic_load_explicit(&queued, memory_order_relaxed) < 2 * (long)f->threads) {
            atomic_fetch_add_explicit(&queued, 1, memory_order_relaxed);
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

/* The settings of the task cases. */
typedef struct setup {
    crew_pool *p;
    uint64_t timeout_ns, long_ns, array_task_ns;
    size_t array_n;
    crew_task *array;
} setup;

enum kind { HELD, LONG, ARRAY, OTHER, WAIT_ALL };

static void die(const char *what, int rc) {
    fprintf(stderr, "timed_wait: %s: %s\n", what, crew_strerror(rc));
    exit(1);
}

/* One wait of kind k (for HELD, and OTHER on a busy pool, on the held group h); returns its
 * lateness in ns, and counts an answer other than CREW_ETIMEDOUT in *early. */
static uint64_t one_wait(const setup *s, enum kind k, crew_handle h, long *early) {
    crew_pool *p = s->p;
    crew_handle g = CREW_HANDLE_NONE, a = CREW_HANDLE_NONE;
    int rc;
    if (k == LONG || (k == OTHER && h.slot == 0)) {
        long before = atomic_load_explicit(&started, memory_order_relaxed);
        if ((rc = crew_submit(p, slow, (void *)(uintptr_t)s->long_ns, 0, &g)) != CREW_OK)
            die("crew_submit", rc);
        struct timespec nap = {0, 100000};
        while (k == OTHER && atomic_load_explicit(&started, memory_order_relaxed) == before)
            nanosleep(&nap, NULL); /* running on a worker, not queued */
    }
    if (k == ARRAY || k == OTHER || k == WAIT_ALL) {
        for (size_t i = 0; i < s->array_n; i++)
            s->array[i] = (crew_task){.fn = slow, .arg = (void *)(uintptr_t)s->array_task_ns};
        if ((rc = crew_enqueue_tasks(p, s->array, s->array_n, &a)) != CREW_OK)
            die("crew_enqueue_tasks", rc);
    }
    in_timed_wait = 1;
    uint64_t t0 = crew_now_ns();
    rc = k == WAIT_ALL ? crew_wait_all_timed(p, s->timeout_ns)
                       : crew_wait_timed(p, k == ARRAY ? a : g.slot ? g : h, s->timeout_ns);
    uint64_t took = crew_now_ns() - t0;
    in_timed_wait = 0;
    if (rc != CREW_ETIMEDOUT)
        ++*early;
    if (k != HELD) { /* end the rest at once, and drain (the untimed waits help) */
        atomic_store_explicit(&drain, 1, memory_order_relaxed);
        if (g.slot != 0 && (rc = crew_wait(p, g)) != CREW_OK)
            die("crew_wait", rc);
        if (a.slot != 0 && (rc = crew_wait(p, a)) != CREW_OK)
            die("crew_wait", rc);
        atomic_store_explicit(&drain, 0, memory_order_relaxed);
    }
    return took > s->timeout_ns ? took - s->timeout_ns : 0;
}

/* n waits of kind k; prints the lateness percentiles. */
static void measure(const setup *s, const char *name, const char *pool, enum kind k,
                    crew_handle h, long n) {
    uint64_t *late = calloc((size_t)n, sizeof *late);
    if (!late)
        die("calloc", CREW_ENOMEM);
    long early = 0;
    atomic_store_explicit(&helped, 0, memory_order_relaxed);
    for (long i = 0; i < n; i++)
        late[i] = one_wait(s, k, h, &early);
    qsort(late, (size_t)n, sizeof *late, cmp_u64);
    printf("%-8s %-4s  %5ld waits  lateness us: p50 %9.1f  p99 %9.1f  max %9.1f"
           "  not timed out %ld  tasks run by the waiter %ld\n",
           name, pool, n, late[n / 2] / 1e3, late[(size_t)((double)n * 0.99)] / 1e3,
           late[n - 1] / 1e3, early, atomic_load_explicit(&helped, memory_order_relaxed));
    free(late);
}

/* Occupy k workers with hold() (a group of their own, in *g) and wait until they all run. */
static void hold_workers(crew_pool *p, unsigned k, crew_handle *g) {
    atomic_store_explicit(&release_holders, 0, memory_order_relaxed);
    atomic_store_explicit(&held, 0, memory_order_relaxed);
    for (unsigned i = 0; i < k; i++) {
        int rc = crew_submit(p, hold, NULL, 0, g);
        if (rc != CREW_OK)
            die("crew_submit", rc);
    }
    struct timespec nap = {0, 1000000};
    while (atomic_load_explicit(&held, memory_order_relaxed) < (int)k)
        nanosleep(&nap, NULL);
}

static void release_workers(crew_pool *p, crew_handle g) {
    atomic_store_explicit(&release_holders, 1, memory_order_relaxed);
    int rc = crew_wait(p, g);
    if (rc != CREW_OK)
        die("crew_wait", rc);
}

static void usage(FILE *f, const char *argv0) {
    fprintf(f,
            "usage: %s [-t threads] [-n waits] [-m waits] [-w timeout_us] [-b busy_task_us]\n"
            "          [-L long_task_ms] [-a array_tasks] [-A array_task_us]\n"
            "  lateness of timed waits (crew_wait_timed, crew_wait_all_timed) that give up,\n"
            "  on an idle and a busy pool, with short, long and array tasks queued\n"
            "  -t threads       workers (default 2)\n"
            "  -n waits         waits per held case (default 1000)\n"
            "  -m waits         waits per long, array, other and wait_all case (default 100)\n"
            "  -w timeout_us    each wait's time-out (default 1000)\n"
            "  -b busy_task_us  the held busy case's CPU tasks (default 1000)\n"
            "  -L long_task_ms  the long task (default 200)\n"
            "  -a array_tasks   the array's tasks (default 200)\n"
            "  -A array_task_us the array's task length (default 2000)\n"
            "  -h, --help       this text\n"
            "exit status 0, 1 if the pool failed, 2 for bad options\n",
            argv0);
}

int main(int argc, char **argv) {
    unsigned threads = 2;
    long n = 1000, m = 100, timeout_us = 1000, busy_us = 1000, long_ms = 200, array_n = 200,
         array_us = 2000;
    int opt;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:n:m:w:b:L:a:A:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            threads = (unsigned)atoi(optarg);
            break;
        case 'n':
            n = atol(optarg);
            break;
        case 'm':
            m = atol(optarg);
            break;
        case 'w':
            timeout_us = atol(optarg);
            break;
        case 'b':
            busy_us = atol(optarg);
            break;
        case 'L':
            long_ms = atol(optarg);
            break;
        case 'a':
            array_n = atol(optarg);
            break;
        case 'A':
            array_us = atol(optarg);
            break;
        case 'h':
            usage(stdout, argv[0]);
            return 0;
        default:
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (optind < argc || threads < 1 || threads > 256 || n < 1 || m < 1 || timeout_us < 1 ||
        busy_us < 1 || long_ms < 1 || array_n < 1 || array_us < 1) {
        fprintf(stderr, "timed_wait: -t must be 1..256, the others >= 1 (--help)\n");
        return 2;
    }
    busy_ns = busy_us * 1000;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads; /* not monitored: crew_enqueue_tasks then queues long arrays as such */
    crew_pool *p;
    int rc = crew_create(&p, &cfg);
    if (rc != CREW_OK)
        die("crew_create", rc);
    setup s = {.p = p, .timeout_ns = (uint64_t)timeout_us * 1000u,
               .long_ns = (uint64_t)long_ms * 1000000u, .array_task_ns = (uint64_t)array_us * 1000u,
               .array_n = (size_t)array_n, .array = calloc((size_t)array_n, sizeof(crew_task))};
    if (!s.array)
        die("calloc", CREW_ENOMEM);
    printf("time-outs of %ld us, %u workers; held: busy tasks of %ld us; long task %ld ms; "
           "array of %ld tasks of %ld us\n",
           timeout_us, threads, busy_us, long_ms, array_n, array_us);
    waiter = pthread_self();

    /* held: one worker held by the group waited for, the others idle, then busy. */
    crew_handle h = CREW_HANDLE_NONE;
    hold_workers(p, 1, &h);
    measure(&s, "held", "idle", HELD, h, n);
    feeder f = {p, threads};
    pthread_t th;
    if (pthread_create(&th, NULL, feed, &f) != 0)
        die("pthread_create", CREW_ENOMEM);
    struct timespec warm = {0, 50000000};
    nanosleep(&warm, NULL); /* the queue fills */
    measure(&s, "held", "busy", HELD, h, n);
    atomic_store_explicit(&stop_feeder, 1, memory_order_relaxed);
    pthread_join(th, NULL);
    release_workers(p, h);
    if ((rc = crew_wait_all(p)) != CREW_OK)
        die("crew_wait_all", rc);

    /* The task cases: every worker free, then every worker held. */
    static const struct {
        const char *name;
        enum kind k;
    } cases[] = {{"long", LONG}, {"array", ARRAY}, {"other", OTHER}, {"wait_all", WAIT_ALL}};
    for (int busy = 0; busy < 2; busy++) {
        crew_handle hb = CREW_HANDLE_NONE;
        if (busy)
            hold_workers(p, threads, &hb);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            measure(&s, cases[i].name, busy ? "busy" : "idle", cases[i].k,
                    cases[i].k == OTHER && busy ? hb : CREW_HANDLE_NONE, m);
        if (busy)
            release_workers(p, hb);
    }
    crew_destroy(p);
    free(s.array);
    return 0;
}
