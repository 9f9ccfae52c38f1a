/*
 * test_threadpool.c -- mbrossard's threadpool API (compat/threadpool/threadpool.h) on crew: every
 * behaviour its header promises, and the choices it documents. A plain C program: prints each
 * failed check and exits non-zero if there was one. Waits poll a state with a deadline; the few
 * sleeps only give a wrong implementation the chance to show itself.
 */
#define _POSIX_C_SOURCE 200809L
#include "threadpool.h"

#include "harness.h"

/* ---- invalid arguments and limits ----------------------------------------------------------- */
static void test_invalid(void) {
    CHECK(threadpool_create(0, 8, 0) == NULL);
    CHECK(threadpool_create(-1, 8, 0) == NULL);
    CHECK(threadpool_create(4097, 8, 0) == NULL); /* above CREW_MAX_THREADS */
    CHECK(threadpool_create(1, 0, 0) == NULL);
    CHECK(threadpool_create(1, -5, 0) == NULL);
    int x = 0;
    CHECK(threadpool_add(NULL, noop_task, &x, 0) == threadpool_invalid);
    CHECK(threadpool_destroy(NULL, 0) == threadpool_invalid);
    CHECK(threadpool_destroy(NULL, threadpool_graceful) == threadpool_invalid);

    /* A program whose copy of the header raises MAX_THREADS (caio: 128) is not refused by a
     * library built with the original's 64; nor a queue longer than MAX_QUEUE. */
    threadpool_t *big = threadpool_create(128, MAX_QUEUE + 1, 0);
    CHECK(big != NULL);
    if (big) {
        for (int i = 0; i < 256; i++)
            CHECK(threadpool_add(big, noop_task, &x, 0) == 0);
        CHECK(threadpool_destroy(big, threadpool_graceful) == 0);
    }

    /* The limits themselves are accepted. */
    threadpool_t *tp = threadpool_create(MAX_THREADS, MAX_QUEUE, 0);
    CHECK(tp != NULL);
    if (tp) {
        CHECK(threadpool_add(tp, NULL, &x, 0) == threadpool_invalid);
        CHECK(threadpool_destroy(tp, 0) == 0);
    }
    tp = threadpool_create(1, 1, 12345); /* flags unused */
    CHECK(tp != NULL);
    if (tp)
        CHECK(threadpool_destroy(tp, threadpool_graceful) == 0);
}

/* ---- every task runs exactly once (graceful destroy runs the queue) ------------------------ */
enum { N_TASKS = 20000, N_PRODUCERS = 2 };

static atomic_uchar runs[N_TASKS];
static atomic_int full_seen;

static void once_task(void *arg) { atomic_fetch_add((atomic_uchar *)arg, 1); }

struct producer_arg {
    threadpool_t *tp;
    int first;
};

static void *producer(void *arg) {
    struct producer_arg *p = arg;
    for (int i = p->first; i < p->first + N_TASKS / N_PRODUCERS; i++) {
        for (;;) {
            int rc = threadpool_add(p->tp, once_task, &runs[i], 0);
            if (rc == 0)
                break;
            if (rc != threadpool_queue_full) {
                fprintf(stderr, "threadpool_add: unexpected %d\n", rc);
                failures++; /* checked by main after the join */
                return NULL;
            }
            atomic_fetch_add(&full_seen, 1);
            sched_yield(); /* the queue is full: let the workers catch up */
        }
    }
    return NULL;
}

static void test_exactly_once(void) {
    threadpool_t *tp = threadpool_create(4, 256, 0);
    CHECK(tp != NULL);
    if (!tp)
        return;
    for (int i = 0; i < N_TASKS; i++)
        atomic_init(&runs[i], 0);
    pthread_t th[N_PRODUCERS];
    struct producer_arg args[N_PRODUCERS];
    for (int t = 0; t < N_PRODUCERS; t++) {
        args[t].tp = tp;
        args[t].first = t * (N_TASKS / N_PRODUCERS);
        MUST(pthread_create(&th[t], NULL, producer, &args[t]));
    }
    for (int t = 0; t < N_PRODUCERS; t++)
        MUST(pthread_join(th[t], NULL));
    CHECK(threadpool_destroy(tp, threadpool_graceful) == 0);
    int wrong = 0;
    for (int i = 0; i < N_TASKS; i++)
        if (atomic_load(&runs[i]) != 1)
            wrong++;
    CHECK(wrong == 0);
}

/* ---- a full queue: threadpool_queue_full at once, exactly at queue_size waiting tasks -------- */
static void test_queue_full(void) {
    threadpool_t *tp = threadpool_create(1, 4, 0);
    CHECK(tp != NULL);
    if (!tp)
        return;
    struct gate g;
    gate_init(&g);
    atomic_int count;
    atomic_init(&count, 0);
    CHECK(threadpool_add(tp, gated_task, &g, 0) == 0);
    CHECK(wait_for(&g.entered, 1)); /* running, so no longer in the queue */
    for (int i = 0; i < 4; i++)
        CHECK(threadpool_add(tp, count_task, &count, 0) == 0);
    double t0 = now_s();
    CHECK(threadpool_add(tp, count_task, &count, 0) == threadpool_queue_full);
    CHECK(threadpool_add(tp, count_task, &count, 0) == threadpool_queue_full);
    CHECK(now_s() - t0 < 1.0); /* refused, not blocked */
    gate_open(&g);
    CHECK(threadpool_destroy(tp, threadpool_graceful) == 0);
    CHECK(atomic_load(&count) == 4);
    gate_destroy(&g);
}

/* ---- graceful vs immediate destroy, with a task adding work while it runs -------------------- */
struct destroy_case {
    threadpool_t *tp;
    struct gate g;
    atomic_int count;      /* tasks queued before the destroy that ran */
    atomic_int late;       /* tasks the running task managed to add before the destroy began */
    atomic_int late_ran;
    atomic_int add_result; /* what threadpool_add finally returned inside the running task */
};

static void running_task(void *arg) {
    struct destroy_case *d = arg;
    gate_pass(&d->g);
    /* The destroy has begun or is about to: add until the pool refuses with
     * threadpool_shutdown (a full queue just means "again"). */
    int rc = 0;
    double end = now_s() + 10.0;
    while (now_s() < end) {
        rc = threadpool_add(d->tp, count_task, &d->late_ran, 0);
        if (rc == 0)
            atomic_fetch_add(&d->late, 1);
        else if (rc != threadpool_queue_full)
            break;
        sleep_ms(1);
    }
    atomic_store(&d->add_result, rc);
    atomic_fetch_add(&d->g.finished, 1);
}

struct destroy_call {
    threadpool_t *tp;
    int flags;
    int rc;
};

static void *destroy_thread(void *arg) {
    struct destroy_call *c = arg;
    c->rc = threadpool_destroy(c->tp, c->flags);
    return NULL;
}

static void run_destroy_case(int flags) {
    struct destroy_case d;
    gate_init(&d.g);
    atomic_init(&d.count, 0);
    atomic_init(&d.late, 0);
    atomic_init(&d.late_ran, 0);
    atomic_init(&d.add_result, 0);
    d.tp = threadpool_create(1, 64, 0);
    CHECK(d.tp != NULL);
    if (!d.tp)
        return;
    CHECK(threadpool_add(d.tp, running_task, &d, 0) == 0);
    CHECK(wait_for(&d.g.entered, 1));
    for (int i = 0; i < 10; i++)
        CHECK(threadpool_add(d.tp, count_task, &d.count, 0) == 0);
    struct destroy_call c = {d.tp, flags, 12345};
    pthread_t th;
    MUST(pthread_create(&th, NULL, destroy_thread, &c));
    sleep_ms(20);
    gate_open(&d.g);
    MUST(pthread_join(th, NULL));
    CHECK(c.rc == 0);
    /* The running task finished before threadpool_destroy returned, and saw the shutdown. */
    CHECK(atomic_load(&d.g.finished) == 1);
    CHECK(atomic_load(&d.add_result) == threadpool_shutdown);
    if (flags & threadpool_graceful) {
        /* Everything accepted ran, including what the running task added in time. */
        CHECK(atomic_load(&d.count) == 10);
        CHECK(atomic_load(&d.late_ran) == atomic_load(&d.late));
    } else {
        /* Queued tasks were dropped (the only thread was busy, so none had started). */
        CHECK(atomic_load(&d.count) == 0);
        CHECK(atomic_load(&d.late_ran) == 0);
    }
    gate_destroy(&d.g);
}

static void test_destroy_graceful(void) { run_destroy_case(threadpool_graceful); }
static void test_destroy_immediate(void) { run_destroy_case(0); }

/* ---- threadpool_add from another thread while a graceful destroy runs: the add that returns
 *      threadpool_shutdown is ordered before the destroy frees the pool ---------------------- */
/* The original's add reads the pool under its mutex, which its destroy takes again before
 * freeing, so an add that comes while the destroy runs is race-free. Here a held task keeps the
 * graceful destroy running until an outside thread's add has returned threadpool_shutdown; the
 * adder tells the task so with a relaxed store, which orders nothing: only the library can order
 * that add's reads of the pool before the destroy's free. ThreadSanitizer reported the race
 * when it did not. The adder makes no call once it has seen threadpool_shutdown, so it never
 * uses the pool after threadpool_destroy returns (the original's contract). */
struct add_race {
    threadpool_t *tp;
    atomic_int holding;   /* the held task has started */
    atomic_int refused;   /* the adder got threadpool_shutdown (relaxed: orders nothing) */
    atomic_int last_rc;   /* the adder's last answer */
};

static void held_until_refused(void *arg) {
    struct add_race *r = arg;
    atomic_store(&r->holding, 1);
    double end = now_s() + 10.0;
    while (!atomic_load_explicit(&r->refused, memory_order_relaxed) && now_s() < end)
        sleep_ms(1);
}

static void *late_adder(void *arg) {
    struct add_race *r = arg;
    double end = now_s() + 10.0;
    int rc;
    do { /* a full queue (the held task holds the only thread) just means "again" */
        rc = threadpool_add(r->tp, noop_task, NULL, 0);
        if (rc != threadpool_shutdown)
            sleep_ms(1);
    } while (rc != threadpool_shutdown && (rc == 0 || rc == threadpool_queue_full) &&
             now_s() < end);
    atomic_store_explicit(&r->last_rc, rc, memory_order_relaxed);
    atomic_store_explicit(&r->refused, 1, memory_order_relaxed);
    return NULL;
}

static void test_add_racing_destroy(void) {
    for (int round = 0; round < 5; round++) {
        struct add_race r;
        atomic_init(&r.holding, 0);
        atomic_init(&r.refused, 0);
        atomic_init(&r.last_rc, 1);
        r.tp = threadpool_create(1, 4, 0);
        CHECK(r.tp != NULL);
        if (!r.tp)
            return;
        CHECK(threadpool_add(r.tp, held_until_refused, &r, 0) == 0);
        CHECK(wait_for(&r.holding, 1));
        pthread_t adder;
        MUST(pthread_create(&adder, NULL, late_adder, &r));
        if (round % 2)
            sleep_ms(2); /* the adder fills the queue first, or the destroy begins first */
        CHECK(threadpool_destroy(r.tp, threadpool_graceful) == 0);
        MUST(pthread_join(adder, NULL));
        CHECK(atomic_load(&r.last_rc) == threadpool_shutdown);
    }
}

/* ---- a graceful destroy waits for the workers to run the queue: the destroying thread runs
 *      nothing, so a pool of n threads never runs more than n tasks at once ------------------ */
static void test_graceful_bound(void) {
    for (int threads = 1; threads <= 2; threads++) {
        threadpool_t *tp = threadpool_create(threads, 64, 0);
        CHECK(tp != NULL);
        if (!tp)
            return;
        struct probe p;
        probe_init(&p, 5);
        int tasks = 8 * threads;
        for (int i = 0; i < tasks; i++)
            CHECK(threadpool_add(tp, probe_task, &p, 0) == 0);
        CHECK(threadpool_destroy(tp, threadpool_graceful) == 0);
        CHECK(atomic_load(&p.done) == tasks);
        CHECK(atomic_load(&p.most) <= threads);
        CHECK(atomic_load(&p.on_main) == 0);
    }
}

/* ---- threadpool_destroy from a task of its own pool fails, and the pool stays usable -------- */
struct self_destroy {
    threadpool_t *tp;
    atomic_int rc;
    atomic_int done;
};

static void self_destroy_task(void *arg) {
    struct self_destroy *s = arg;
    atomic_store(&s->rc, threadpool_destroy(s->tp, threadpool_graceful));
    atomic_store(&s->done, 1);
}

static void test_destroy_from_task(void) {
    struct self_destroy s;
    atomic_init(&s.rc, 0);
    atomic_init(&s.done, 0);
    s.tp = threadpool_create(2, 8, 0);
    CHECK(s.tp != NULL);
    if (!s.tp)
        return;
    CHECK(threadpool_add(s.tp, self_destroy_task, &s, 0) == 0);
    CHECK(wait_for(&s.done, 1));
    CHECK(atomic_load(&s.rc) == threadpool_thread_failure);
    atomic_int count;
    atomic_init(&count, 0);
    CHECK(threadpool_add(s.tp, count_task, &count, 0) == 0);
    CHECK(threadpool_destroy(s.tp, threadpool_graceful) == 0);
    CHECK(atomic_load(&count) == 1);
}

/* ---- many pools, destroyed either way with work queued: nothing leaks (ASan checks) -------- */
static void test_churn(void) {
    for (int round = 0; round < 20; round++) {
        threadpool_t *tp = threadpool_create(1 + round % 3, 128, 0);
        CHECK(tp != NULL);
        if (!tp)
            return;
        for (int i = 0; i < 100; i++) {
            int rc = threadpool_add(tp, noop_task, NULL, 0);
            CHECK(rc == 0 || rc == threadpool_queue_full);
        }
        CHECK(threadpool_destroy(tp, round % 2 ? threadpool_graceful : 0) == 0);
    }
}

int main(void) {
    static const struct compat_test tests[] = {
        {"invalid", test_invalid},
        {"exactly_once", test_exactly_once},
        {"queue_full", test_queue_full},
        {"destroy_graceful", test_destroy_graceful},
        {"destroy_immediate", test_destroy_immediate},
        {"add_racing_destroy", test_add_racing_destroy},
        {"graceful_bound", test_graceful_bound},
        {"destroy_from_task", test_destroy_from_task},
        {"churn", test_churn},
    };
    return run_tests("test_threadpool", tests, sizeof tests / sizeof tests[0]);
}
