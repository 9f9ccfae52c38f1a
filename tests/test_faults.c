/*
 * test_faults.c -- fault injection: the k-th memory allocation made by crew fails, for every k
 * in a sweep, and so does the j-th thread creation. Every call must then return CREW_ENOMEM /
 * CREW_EAGAIN (or succeed), never crash, hang, lose or duplicate a task, or leak (the sanitizer
 * and valgrind runs of this binary check the leaks).
 *
 * The test links with -Wl,--wrap= for malloc, calloc, realloc, aligned_alloc, posix_memalign and
 * pthread_create, so the calls made from crew's object files (and this file) go through the
 * shims below; the C library's own allocations are untouched. A last sweep fails the k-th
 * allocation of a huge page or more (a deque's array for a backlog of some 90,000 tasks, which
 * asks for huge-page alignment and falls back to malloc): every task still runs once.
 * Exits non-zero on failure.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crew.h"
#include "check.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **to, size_t align, size_t n);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

/* Which allocation / thread creation fails (0 = none), and how many have been made. Atomics:
 * workers may run the shims too (they do not allocate today, but the test must not race). */
static atomic_long fail_alloc_at, allocs, fail_thread_at, threads_made;
/* The same for allocations of at least BIG bytes only (their own count; -1: every one fails),
 * and how many of them were asked with an alignment (aligned_alloc, posix_memalign) and how many
 * were refused. */
#define BIG ((size_t)2 << 20)
static atomic_long fail_big_at, bigs, big_aligned, big_refused, big_refused_aligned;

static int should_fail_alloc(void) {
    long k = atomic_load(&fail_alloc_at);
    return k != 0 && atomic_fetch_add(&allocs, 1) + 1 == k;
}
static int should_fail(size_t n, int aligned) {
    if (n >= BIG) {
        atomic_fetch_add(&big_aligned, aligned);
        long k = atomic_load(&fail_big_at);
        long made = atomic_fetch_add(&bigs, 1) + 1;
        if (k < 0 || (k != 0 && made == k)) { /* k < 0: all of them */
            atomic_fetch_add(&big_refused, 1);
            atomic_fetch_add(&big_refused_aligned, aligned);
            return 1;
        }
    }
    return should_fail_alloc();
}

void *__wrap_malloc(size_t n) { return should_fail(n, 0) ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) {
    return should_fail(size && n > SIZE_MAX / size ? SIZE_MAX : n * size, 0)
               ? NULL
               : __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) {
    return should_fail(n, 0) ? NULL : __real_realloc(p, n);
}
void *__wrap_aligned_alloc(size_t align, size_t n) {
    return should_fail(n, 1) ? NULL : __real_aligned_alloc(align, n);
}
int __wrap_posix_memalign(void **to, size_t align, size_t n) {
    return should_fail(n, 1) ? ENOMEM : __real_posix_memalign(to, align, n);
}
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg) {
    long j = atomic_load(&fail_thread_at);
    if (j != 0 && atomic_fetch_add(&threads_made, 1) + 1 == j)
        return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

#define TASKS 300
static atomic_int runs[TASKS];
static void bump(void *arg) { atomic_fetch_add(&runs[(int)(size_t)arg], 1); }

static int failures;
#undef CHECK /* check.h's exits; this one counts and goes on */
#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "test_faults: " __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                                 \
            failures++;                                                                          \
        }                                                                                        \
    } while (0)

static long errors_seen; /* calls that reported the injected failure */
static int ok_or(int rc, int allowed1, int allowed2) {
    errors_seen += rc == allowed1 || rc == allowed2;
    return rc == CREW_OK || rc == allowed1 || rc == allowed2;
}

static void fold(size_t b, size_t e, void *acc, void *arg) {
    (void)arg;
    *(long *)acc += (long)(e - b);
}
static void combine(void *acc, const void *o, void *arg) {
    (void)arg;
    *(long *)acc += *(const long *)o;
}

/* One scenario; returns 1 if the injected failure point was reached. */
static int scenario(long k) {
    for (int i = 0; i < TASKS; i++)
        atomic_store(&runs[i], 0);
    int accepted[TASKS] = {0};
    atomic_store(&allocs, 0);
    atomic_store(&fail_alloc_at, k);

    crew_pool *p = NULL;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    int rc = crew_create(&p, &cfg);
    CHECK(ok_or(rc, CREW_ENOMEM, CREW_EAGAIN), "k=%ld create: %s", k, crew_err_name(rc));
    if (rc != CREW_OK) {
        atomic_store(&fail_alloc_at, 0);
        return 1;
    }
    /* Single submissions, some into groups (new and existing). */
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 100; i++) {
        rc = crew_submit(p, bump, (void *)(size_t)i, (uint32_t)(i % 5), i % 2 ? &g : NULL);
        if (rc == CREW_ESTALE) {
            g = CREW_HANDLE_NONE;
            rc = crew_submit(p, bump, (void *)(size_t)i, (uint32_t)(i % 5), &g);
        }
        CHECK(ok_or(rc, CREW_ENOMEM, CREW_ENOMEM), "k=%ld submit: %s", k, crew_err_name(rc));
        accepted[i] = rc == CREW_OK;
    }
    /* Arrays with many distinct priorities (new priority levels allocate), into new groups. */
    static crew_task t[200];
    for (int b = 0; b < 4; b++) {
        memset(&t[b * 50], 0, 50 * sizeof *t);
        for (int i = 0; i < 50; i++) {
            t[b * 50 + i].fn = bump;
            t[b * 50 + i].arg = (void *)(size_t)(100 + b * 50 + i);
            t[b * 50 + i].priority = (uint32_t)(1000 + b * 50 + i);
        }
        crew_handle h = CREW_HANDLE_NONE;
        rc = crew_enqueue_tasks(p, &t[b * 50], 50, &h);
        CHECK(ok_or(rc, CREW_ENOMEM, CREW_ENOMEM), "k=%ld enqueue: %s", k, crew_err_name(rc));
        CHECK(rc == CREW_OK || h.slot == 0, "k=%ld failed enqueue opened a group", k);
        for (int i = 0; i < 50; i++)
            accepted[100 + b * 50 + i] = rc == CREW_OK;
        if (rc == CREW_OK) {
            rc = crew_wait(p, h);
            CHECK(rc == CREW_OK, "k=%ld wait: %s", k, crew_err_name(rc));
        }
    }
    long sum = 0;
    rc = crew_parallel_reduce(p, 0, 100000, 10, &sum, sizeof sum, fold, combine, NULL);
    CHECK(rc == CREW_ENOMEM || (rc == CREW_OK && sum == 100000), "k=%ld reduce: %s sum=%ld", k,
          crew_err_name(rc), sum);
    errors_seen += rc == CREW_ENOMEM;
    rc = crew_resize(p, 5);
    CHECK(ok_or(rc, CREW_ENOMEM, CREW_EAGAIN), "k=%ld resize: %s", k, crew_err_name(rc));
    rc = crew_wait_all(p);
    CHECK(rc == CREW_OK, "k=%ld wait_all: %s", k, crew_err_name(rc));
    int reached = atomic_load(&allocs) >= k;
    atomic_store(&fail_alloc_at, 0);
    CHECK(crew_destroy(p) == CREW_OK, "k=%ld destroy", k);
    for (int i = 0; i < TASKS; i++)
        CHECK(atomic_load(&runs[i]) == accepted[i], "k=%ld task %d ran %d times, accepted %d", k,
              i, atomic_load(&runs[i]), accepted[i]);
    return reached;
}

/* A pool with a bounded queue (the sleepers it lends to submitters waiting for room are
 * allocated by crew_create): the k-th allocation of crew_create fails, for every k; it returns
 * CREW_ENOMEM (or CREW_EAGAIN) and leaves nothing behind, or succeeds. Then one pool whose
 * queue of 2 places six producers keep full (more waiting for room than the queue lends
 * sleepers to): every task runs once. */
static void *bounded_producer(void *arg) {
    crew_pool *p = arg;
    static atomic_int next;
    for (int i; (i = atomic_fetch_add(&next, 1)) < TASKS;)
        CHECK(crew_submit(p, bump, (void *)(size_t)i, 0, NULL) == CREW_OK, "bounded submit %d", i);
    return NULL;
}
static int bounded_scenario(long k) {
    atomic_store(&allocs, 0);
    atomic_store(&fail_alloc_at, k);
    crew_pool *p = NULL;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.queue_capacity = 2;
    int rc = crew_create(&p, &cfg);
    int reached = atomic_load(&allocs) >= k;
    atomic_store(&fail_alloc_at, 0);
    CHECK(ok_or(rc, CREW_ENOMEM, CREW_EAGAIN), "k=%ld bounded create: %s", k, crew_err_name(rc));
    CHECK(rc == CREW_OK || p == NULL, "k=%ld bounded create failed but made a pool", k);
    if (rc == CREW_OK)
        CHECK(crew_destroy(p) == CREW_OK, "k=%ld bounded destroy", k);
    return reached;
}
static void bounded_faults(void) {
    long k = 1;
    while (bounded_scenario(k) && failures == 0 && k < 10000)
        k++;
    printf("test_faults: bounded queue: swept allocation failures k = 1..%ld\n", k - 1);
    for (int i = 0; i < TASKS; i++)
        atomic_store(&runs[i], 0);
    crew_pool *p = NULL;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.queue_capacity = 2;
    CHECK(crew_create(&p, &cfg) == CREW_OK, "bounded create");
    pthread_t th[6]; /* more producers than the queue lends sleepers */
    for (int i = 0; i < 6; i++)
        CHECK(__real_pthread_create(&th[i], NULL, bounded_producer, p) == 0, "producer");
    for (int i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
    CHECK(crew_wait_all(p) == CREW_OK, "bounded wait_all");
    CHECK(crew_destroy(p) == CREW_OK, "bounded destroy");
    for (int i = 0; i < TASKS; i++)
        CHECK(atomic_load(&runs[i]) == 1, "bounded task %d ran %d times", i, atomic_load(&runs[i]));
}

/* A backlog of BIG_TASKS tasks queued by this thread on a paused pool (under work stealing: its
 * external slot's deque grows past a huge page), with the k-th allocation of at least BIG bytes
 * refused: each submission is accepted or answers CREW_ENOMEM, and every accepted task runs once
 * after the resume. */
#define BIG_TASKS 100000
static atomic_uchar big_runs[BIG_TASKS];
static unsigned char big_accepted[BIG_TASKS];
static void big_bump(void *arg) { atomic_fetch_add(&big_runs[(size_t)arg], 1); }
static int big_scenario(long k) {
    atomic_store(&bigs, 0);
    atomic_store(&big_refused_aligned, 0);
    atomic_store(&fail_big_at, k);
    for (size_t i = 0; i < BIG_TASKS; i++)
        atomic_store(&big_runs[i], 0);
    crew_pool *p = NULL;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    int rc = crew_create(&p, &cfg);
    CHECK(rc == CREW_OK, "k=%ld big create: %s", k, crew_err_name(rc));
    if (rc != CREW_OK) {
        atomic_store(&fail_big_at, 0);
        return 0;
    }
    CHECK(crew_pause(p) == CREW_OK, "k=%ld pause", k);
    long refused = 0;
    for (size_t i = 0; i < BIG_TASKS; i++) {
        rc = crew_submit(p, big_bump, (void *)i, 0, NULL);
        CHECK(rc == CREW_OK || rc == CREW_ENOMEM, "k=%ld big submit: %s", k, crew_err_name(rc));
        big_accepted[i] = rc == CREW_OK;
        refused += rc != CREW_OK;
    }
    int reached = atomic_load(&bigs) >= k;
    atomic_store(&fail_big_at, 0);
    /* A refused aligned block has a fallback (malloc): only a refusal of that loses room. */
    CHECK(k < 0 || !reached || atomic_load(&big_refused_aligned) == 0 || refused == 0,
          "k=%ld the aligned block was refused and %ld submissions failed for it", k, refused);
    CHECK(crew_resume(p) == CREW_OK, "k=%ld resume", k);
    CHECK(crew_wait_all(p) == CREW_OK, "k=%ld big wait_all", k);
    CHECK(crew_destroy(p) == CREW_OK, "k=%ld big destroy", k);
    long wrong = 0;
    for (size_t i = 0; i < BIG_TASKS; i++)
        wrong += atomic_load(&big_runs[i]) != big_accepted[i];
    CHECK(wrong == 0, "k=%ld %ld of the big backlog's tasks ran a wrong number of times", k, wrong);
    errors_seen += refused != 0;
    return reached;
}
static void big_faults(void) {
    atomic_store(&big_aligned, 0);
    atomic_store(&big_refused, 0);
    long k = 1;
    while (big_scenario(k) && failures == 0 && k < 100)
        k++;
    big_scenario(-1); /* and with no big block to be had at all */
    printf("test_faults: big backlog: swept failures of allocations of 2 MiB or more k = 1..%ld "
           "(%ld of them aligned, %ld refused)\n",
           k - 1, atomic_load(&big_aligned), atomic_load(&big_refused));
}

/* The j-th thread creation fails: create rolls back, resize keeps what it has. */
static void thread_faults(void) {
    for (long j = 1; j <= 4; j++) {
        atomic_store(&threads_made, 0);
        atomic_store(&fail_thread_at, j);
        crew_pool *p = NULL;
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = 3;
        int rc = crew_create(&p, &cfg);
        if (j <= 3) {
            CHECK(rc == CREW_EAGAIN && p == NULL, "create with thread %ld failing: %s", j,
                  crew_err_name(rc));
            continue;
        }
        CHECK(rc == CREW_OK, "create: %s", crew_err_name(rc));
        atomic_store(&threads_made, 0);
        atomic_store(&fail_thread_at, 2); /* grow 3 -> 6: the second new thread fails */
        rc = crew_resize(p, 6);
        CHECK(rc == CREW_EAGAIN, "resize with a failing thread: %s", crew_err_name(rc));
        CHECK(crew_size(p) == 4, "size after a partial grow is %u, want 4", crew_size(p));
        atomic_store(&fail_thread_at, 0);
        for (int i = 0; i < TASKS; i++)
            atomic_store(&runs[i], 0);
        for (int i = 0; i < TASKS; i++)
            CHECK(crew_submit(p, bump, (void *)(size_t)i, 0, NULL) == CREW_OK, "submit");
        CHECK(crew_wait_all(p) == CREW_OK, "wait_all");
        for (int i = 0; i < TASKS; i++)
            CHECK(atomic_load(&runs[i]) == 1, "task %d ran %d times", i, atomic_load(&runs[i]));
        CHECK(crew_resize(p, 6) == CREW_OK && crew_size(p) == 6, "resize after the fault");
        CHECK(crew_destroy(p) == CREW_OK, "destroy");
    }
    atomic_store(&fail_thread_at, 0);
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "Fault injection: every failed allocation or thread creation is reported.");
    long k = 1;
    while (scenario(k) && failures == 0 && k < 100000)
        k++;
    printf("test_faults: swept allocation failures k = 1..%ld (the scenario makes %ld); "
           "%ld calls reported them\n", k - 1, k - 1, errors_seen);
    /* Every failing allocation must surface as an error somewhere (or be absorbed by a
     * documented fallback, like parallel loops running on the caller alone). */
    CHECK(errors_seen >= (k - 1) / 2, "only %ld of %ld injected failures were reported",
          errors_seen, k - 1);
    thread_faults();
    bounded_faults();
    big_faults();
    if (failures) {
        printf("test_faults: %d failures\n", failures);
        return 1;
    }
    printf("test_faults: ok\n");
    return 0;
}
