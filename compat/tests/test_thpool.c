/*
 * test_thpool.c -- the C-Thread-Pool API (compat/thpool/thpool.h) on crew: every behaviour its
 * header promises, and the choices it documents. A plain C program: prints each failed check and
 * exits non-zero if there was one. No sleeps decide a result: waits for a state poll with a
 * deadline, and the few sleeps only give a wrong implementation the chance to show itself.
 */
#define _POSIX_C_SOURCE 200809L
#include "thpool.h"

#include "harness.h"

/* ---- invalid arguments ----------------------------------------------------------------------- */
static void test_invalid(void) {
    CHECK(thpool_init(4097) == NULL);
    int x = 0;
    CHECK(thpool_add_work(NULL, noop_task, &x) == -1);
    /* The NULL pool is a no-op for the void functions, and works 0. */
    thpool_wait(NULL);
    thpool_pause(NULL);
    thpool_resume(NULL);
    thpool_destroy(NULL);
    CHECK(thpool_num_threads_working(NULL) == 0);

    threadpool tp = thpool_init(1);
    CHECK(tp != NULL);
    if (!tp)
        return;
    CHECK(thpool_add_work(tp, NULL, &x) == -1);
    thpool_wait(tp); /* nothing added: returns at once */
    CHECK(thpool_num_threads_working(tp) == 0);
    thpool_destroy(tp);
}

/* ---- a count <= 0: as the original, a pool without threads (work queues, never runs) ------- */
static void test_no_threads(void) {
    for (int n = 0; n >= -3; n -= 3) {
        threadpool tp = thpool_init(n);
        CHECK(tp != NULL);
        if (!tp)
            return;
        atomic_int count;
        atomic_init(&count, 0);
        thpool_wait(tp); /* nothing added: returns at once */
        for (int i = 0; i < 10; i++)
            CHECK(thpool_add_work(tp, count_task, &count) == 0);
        thpool_resume(tp); /* a pool without threads stays without */
        sleep_ms(20);
        CHECK(atomic_load(&count) == 0);
        CHECK(thpool_num_threads_working(tp) == 0);
        thpool_destroy(tp); /* drops the 10 jobs; ASan and valgrind check their memory */
        CHECK(atomic_load(&count) == 0);
    }
}

/* ---- the caller of thpool_wait only waits: a pool of n threads runs at most n jobs at once,
 *      and thpool_num_threads_working never exceeds n (the original's timing test: 4 jobs of
 *      a second on 1 thread take 4 s, not 2) --------------------------------------------------- */
static void test_concurrency_bound(void) {
    for (int threads = 1; threads <= 2; threads++) {
        threadpool tp = thpool_init(threads);
        CHECK(tp != NULL);
        if (!tp)
            return;
        struct probe p;
        probe_init(&p, 5);
        int jobs = 8 * threads;
        double t0 = now_s();
        for (int i = 0; i < jobs; i++)
            CHECK(thpool_add_work(tp, probe_task, &p) == 0);
        thpool_wait(tp);
        double took = now_s() - t0;
        CHECK(atomic_load(&p.done) == jobs);
        CHECK(atomic_load(&p.most) <= threads);
        CHECK(atomic_load(&p.on_main) == 0);
        CHECK(took >= 0.005 * jobs / threads * 0.9); /* the jobs ran one wave per thread */
        /* Sampled while a waiter waits: working stays within the pool's threads. */
        struct gate g;
        gate_init(&g);
        for (int i = 0; i < 2 * threads; i++)
            CHECK(thpool_add_work(tp, gated_task, &g) == 0);
        CHECK(wait_for(&g.entered, threads));
        for (int i = 0; i < 20; i++) {
            CHECK(thpool_num_threads_working(tp) <= threads);
            sleep_ms(1);
        }
        gate_open(&g);
        thpool_wait(tp);
        CHECK(atomic_load(&g.finished) == 2 * threads);
        gate_destroy(&g);
        thpool_destroy(tp);
    }
}

/* ---- every task runs exactly once, from several producers and from inside tasks -------------- */
enum { N_TASKS = 20000, N_PRODUCERS = 2 };

struct once {
    threadpool tp;
    atomic_uchar runs[N_TASKS * 2]; /* [0, N): top-level tasks, [N, 2N): their children */
    atomic_int add_failures;
};
struct once_arg {
    struct once *o;
    int index;
};
static struct once_arg once_args[N_TASKS * 2];

static void child_task(void *arg) {
    struct once_arg *a = arg;
    atomic_fetch_add(&a->o->runs[a->index], 1);
}

static void parent_task(void *arg) {
    struct once_arg *a = arg;
    atomic_fetch_add(&a->o->runs[a->index], 1);
    /* Every other task adds a child from inside the pool: thpool_wait must wait for it too. */
    if (a->index % 2 == 0 && thpool_add_work(a->o->tp, child_task, &once_args[N_TASKS + a->index]))
        atomic_fetch_add(&a->o->add_failures, 1);
}

static void *producer(void *arg) {
    struct once_arg *first = arg;
    for (int i = 0; i < N_TASKS / N_PRODUCERS; i++)
        if (thpool_add_work(first->o->tp, parent_task, &first[i]) != 0)
            atomic_fetch_add(&first->o->add_failures, 1);
    return NULL;
}

static void test_exactly_once(void) {
    static struct once o;
    o.tp = thpool_init(4);
    CHECK(o.tp != NULL);
    if (!o.tp)
        return;
    for (int i = 0; i < N_TASKS * 2; i++) {
        atomic_init(&o.runs[i], 0);
        once_args[i].o = &o;
        once_args[i].index = i;
    }
    atomic_init(&o.add_failures, 0);
    pthread_t th[N_PRODUCERS];
    for (int t = 0; t < N_PRODUCERS; t++)
        MUST(pthread_create(&th[t], NULL, producer, &once_args[t * (N_TASKS / N_PRODUCERS)]));
    for (int t = 0; t < N_PRODUCERS; t++)
        MUST(pthread_join(th[t], NULL));
    thpool_wait(o.tp);
    /* After thpool_wait every task and every child has run, exactly once, and none works. */
    CHECK(atomic_load(&o.add_failures) == 0);
    int wrong = 0;
    for (int i = 0; i < N_TASKS * 2; i++) {
        int want = (i < N_TASKS || (i - N_TASKS) % 2 == 0) ? 1 : 0;
        if (atomic_load(&o.runs[i]) != want)
            wrong++;
    }
    CHECK(wrong == 0);
    CHECK(thpool_num_threads_working(o.tp) == 0);
    thpool_destroy(o.tp);
}

/* ---- thpool_wait: waits for queued and running tasks, returns at once inside a task -------- */
struct slow {
    threadpool tp;
    atomic_int done;
    atomic_int inner_wait_returned;
};

static void slow_task(void *arg) {
    struct slow *s = arg;
    sleep_ms(2);
    atomic_fetch_add(&s->done, 1);
}

static void waiting_task(void *arg) {
    struct slow *s = arg;
    thpool_wait(s->tp); /* from its own pool: returns at once (documented choice) */
    atomic_fetch_add(&s->inner_wait_returned, 1);
}

static void test_wait(void) {
    struct slow s;
    atomic_init(&s.done, 0);
    atomic_init(&s.inner_wait_returned, 0);
    s.tp = thpool_init(2);
    CHECK(s.tp != NULL);
    if (!s.tp)
        return;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 10; i++)
            CHECK(thpool_add_work(s.tp, slow_task, &s) == 0);
        thpool_wait(s.tp);
        CHECK(atomic_load(&s.done) == 10 * (round + 1));
        CHECK(thpool_num_threads_working(s.tp) == 0);
    }
    CHECK(thpool_add_work(s.tp, waiting_task, &s) == 0);
    thpool_wait(s.tp);
    CHECK(atomic_load(&s.inner_wait_returned) == 1);
    thpool_destroy(s.tp);
}

/* ---- pause while another thread waits, then resume ----------------------------------------- */
struct waiter {
    threadpool tp;
    atomic_int returned;
};

static void *wait_thread(void *arg) {
    struct waiter *w = arg;
    thpool_wait(w->tp);
    atomic_store(&w->returned, 1);
    return NULL;
}

static void test_pause_resume(void) {
    threadpool tp = thpool_init(2);
    CHECK(tp != NULL);
    if (!tp)
        return;
    atomic_int count;
    atomic_init(&count, 0);

    /* Paused before the work is added: nothing may start, and a waiter waits for the resume. */
    thpool_pause(tp);
    thpool_pause(tp); /* twice is once */
    for (int i = 0; i < 10; i++)
        CHECK(thpool_add_work(tp, count_task, &count) == 0);
    struct waiter w = {tp, 0};
    pthread_t th;
    MUST(pthread_create(&th, NULL, wait_thread, &w));
    sleep_ms(50);
    CHECK(atomic_load(&count) == 0);
    CHECK(atomic_load(&w.returned) == 0);
    CHECK(thpool_num_threads_working(tp) == 0);
    thpool_resume(tp);
    MUST(pthread_join(th, NULL));
    CHECK(atomic_load(&w.returned) == 1);
    CHECK(atomic_load(&count) == 10);

    /* Paused while tasks run: they finish, queued ones wait for the resume. */
    struct gate g;
    gate_init(&g);
    CHECK(thpool_add_work(tp, gated_task, &g) == 0);
    CHECK(thpool_add_work(tp, gated_task, &g) == 0);
    CHECK(wait_for(&g.entered, 2));
    thpool_pause(tp);
    for (int i = 0; i < 10; i++)
        CHECK(thpool_add_work(tp, count_task, &count) == 0);
    gate_open(&g);
    CHECK(wait_for(&g.finished, 2)); /* running tasks run to their end */
    sleep_ms(30);
    CHECK(atomic_load(&count) == 10); /* no queued task started while paused */
    thpool_resume(tp);
    thpool_resume(tp); /* resuming a running pool does nothing */
    thpool_wait(tp);
    CHECK(atomic_load(&count) == 20);
    thpool_destroy(tp);
    gate_destroy(&g);
}

/* ---- thpool_num_threads_working during gated tasks ----------------------------------------- */
static void test_working(void) {
    threadpool tp = thpool_init(3);
    CHECK(tp != NULL);
    if (!tp)
        return;
    struct gate g;
    gate_init(&g);
    CHECK(thpool_add_work(tp, gated_task, &g) == 0);
    CHECK(thpool_add_work(tp, gated_task, &g) == 0);
    CHECK(wait_for(&g.entered, 2));
    CHECK(thpool_num_threads_working(tp) == 2);
    gate_open(&g);
    thpool_wait(tp);
    CHECK(atomic_load(&g.finished) == 2);
    CHECK(thpool_num_threads_working(tp) == 0);
    thpool_destroy(tp);
    gate_destroy(&g);
}

/* ---- thpool_destroy: queued jobs dropped, running ones finish, adds during it fail ----------- */
struct destroy_case {
    threadpool tp;
    struct gate g;
    atomic_int count;
    atomic_int add_refused; /* the running job saw thpool_add_work fail during the destroy */
};

static void running_job(void *arg) {
    struct destroy_case *d = arg;
    gate_pass(&d->g);
    /* The destroy has begun (or is about to): keep adding until the pool refuses. Jobs it still
     * accepted are queued behind this one on the only thread, so they are dropped too. */
    double end = now_s() + 10.0;
    while (now_s() < end) {
        if (thpool_add_work(d->tp, count_task, &d->count) != 0) {
            atomic_store(&d->add_refused, 1);
            break;
        }
        sleep_ms(1);
    }
    atomic_fetch_add(&d->g.finished, 1);
}

static void *destroy_thread(void *arg) {
    thpool_destroy(arg);
    return NULL;
}

static void test_destroy(void) {
    struct destroy_case d;
    gate_init(&d.g);
    atomic_init(&d.count, 0);
    atomic_init(&d.add_refused, 0);
    d.tp = thpool_init(1);
    CHECK(d.tp != NULL);
    if (!d.tp)
        return;
    CHECK(thpool_add_work(d.tp, running_job, &d) == 0);
    for (int i = 0; i < 100; i++)
        CHECK(thpool_add_work(d.tp, count_task, &d.count) == 0);
    CHECK(wait_for(&d.g.entered, 1));
    pthread_t th;
    MUST(pthread_create(&th, NULL, destroy_thread, d.tp));
    sleep_ms(20);
    gate_open(&d.g);
    MUST(pthread_join(th, NULL));
    /* thpool_destroy returned: the running job had finished, and no queued job ran. */
    CHECK(atomic_load(&d.g.finished) == 1);
    CHECK(atomic_load(&d.add_refused) == 1);
    CHECK(atomic_load(&d.count) == 0);
    gate_destroy(&d.g);

    /* Destroying a paused pool with queued jobs returns (the running jobs could finish) and drops
     * them. */
    atomic_int count;
    atomic_init(&count, 0);
    threadpool tp = thpool_init(2);
    CHECK(tp != NULL);
    if (!tp)
        return;
    thpool_pause(tp);
    for (int i = 0; i < 50; i++)
        CHECK(thpool_add_work(tp, count_task, &count) == 0);
    thpool_destroy(tp);
    CHECK(atomic_load(&count) == 0);
}

/* ---- thpool_destroy from a job of its own pool does nothing (documented choice) ------------ */
struct self_destroy {
    threadpool tp;
    atomic_int returned;
};

static void self_destroy_job(void *arg) {
    struct self_destroy *s = arg;
    thpool_destroy(s->tp);
    atomic_store(&s->returned, 1);
}

static void test_destroy_from_job(void) {
    struct self_destroy s;
    atomic_init(&s.returned, 0);
    s.tp = thpool_init(2);
    CHECK(s.tp != NULL);
    if (!s.tp)
        return;
    CHECK(thpool_add_work(s.tp, self_destroy_job, &s) == 0);
    thpool_wait(s.tp);
    CHECK(atomic_load(&s.returned) == 1);
    atomic_int count;
    atomic_init(&count, 0);
    CHECK(thpool_add_work(s.tp, count_task, &count) == 0); /* the pool still works */
    thpool_wait(s.tp);
    CHECK(atomic_load(&count) == 1);
    thpool_destroy(s.tp);
}

/* ---- many pools, destroyed with work outstanding: nothing leaks (ASan checks) --------------- */
static void test_churn(void) {
    for (int round = 0; round < 20; round++) {
        threadpool tp = thpool_init(1 + round % 3);
        CHECK(tp != NULL);
        if (!tp)
            return;
        for (int i = 0; i < 200; i++)
            CHECK(thpool_add_work(tp, noop_task, NULL) == 0);
        if (round % 2)
            thpool_wait(tp);
        thpool_destroy(tp);
    }
}

int main(void) {
    static const struct compat_test tests[] = {
        {"invalid", test_invalid},
        {"no_threads", test_no_threads},
        {"concurrency_bound", test_concurrency_bound},
        {"exactly_once", test_exactly_once},
        {"wait", test_wait},
        {"pause_resume", test_pause_resume},
        {"working", test_working},
        {"destroy", test_destroy},
        {"destroy_from_job", test_destroy_from_job},
        {"churn", test_churn},
    };
    return run_tests("test_thpool", tests, sizeof tests / sizeof tests[0]);
}
