/*
 * harness.h -- what both compat tests share: failure counting (CHECK, MUST), clocks and polling
 * waits, and a gate that holds tasks until the test opens it. Static inline, so a test that does
 * not use a helper is not warned about it.
 */
#ifndef CREW_COMPAT_TEST_HARNESS_H
#define CREW_COMPAT_TEST_HARNESS_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_int failures; /* atomic: producer threads report too */

#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);             \
            failures++;                                                                          \
        }                                                                                        \
    } while (0)

/* A pthread call that must not fail in a test: stop at once if it does. */
#define MUST(call)                                                                               \
    do {                                                                                         \
        int must_rc_ = (call);                                                                   \
        if (must_rc_ != 0) {                                                                     \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, must_rc_);       \
            exit(2);                                                                             \
        }                                                                                        \
    } while (0)

static inline void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Poll until *v >= want, for at most 10 s (sanitizers and a shared 2-core machine are slow). */
static inline int wait_for(atomic_int *v, int want) {
    double end = now_s() + 10.0;
    while (atomic_load(v) < want) {
        if (now_s() > end)
            return 0;
        sleep_ms(1);
    }
    return 1;
}

/* ---- a gate: tasks block in it until the test opens it ------------------------------------ */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int open;
    atomic_int entered;  /* tasks that reached the gate */
    atomic_int finished; /* tasks that went through it */
};

static inline void gate_init(struct gate *g) {
    MUST(pthread_mutex_init(&g->lock, NULL));
    MUST(pthread_cond_init(&g->cv, NULL));
    g->open = 0;
    atomic_init(&g->entered, 0);
    atomic_init(&g->finished, 0);
}

static inline void gate_open(struct gate *g) {
    MUST(pthread_mutex_lock(&g->lock));
    g->open = 1;
    MUST(pthread_cond_broadcast(&g->cv));
    MUST(pthread_mutex_unlock(&g->lock));
}

static inline void gate_pass(struct gate *g) {
    atomic_fetch_add(&g->entered, 1);
    MUST(pthread_mutex_lock(&g->lock));
    while (!g->open)
        MUST(pthread_cond_wait(&g->cv, &g->lock));
    MUST(pthread_mutex_unlock(&g->lock));
}

static inline void gate_destroy(struct gate *g) {
    MUST(pthread_cond_destroy(&g->cv));
    MUST(pthread_mutex_destroy(&g->lock));
}

static inline void gated_task(void *arg) {
    struct gate *g = arg;
    gate_pass(g);
    atomic_fetch_add(&g->finished, 1);
}

static inline void count_task(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

static inline void noop_task(void *arg) { (void)arg; }

/* ---- a probe: how many tasks run at once, at most, and whether one ran on a given thread ---- */
struct probe {
    atomic_int now;     /* tasks inside probe_task */
    atomic_int most;    /* the largest value of now seen */
    atomic_int done;    /* tasks finished */
    atomic_int on_main; /* tasks that ran on the thread that set main_thread */
    pthread_t main_thread;
    long sleep_ms;      /* how long each task stays inside */
};

static inline void probe_init(struct probe *p, long ms) {
    atomic_init(&p->now, 0);
    atomic_init(&p->most, 0);
    atomic_init(&p->done, 0);
    atomic_init(&p->on_main, 0);
    p->main_thread = pthread_self();
    p->sleep_ms = ms;
}

static inline void probe_task(void *arg) {
    struct probe *p = arg;
    int now = atomic_fetch_add(&p->now, 1) + 1;
    for (int most = atomic_load(&p->most); now > most;)
        if (atomic_compare_exchange_weak(&p->most, &most, now))
            break;
    if (pthread_equal(pthread_self(), p->main_thread))
        atomic_fetch_add(&p->on_main, 1);
    sleep_ms(p->sleep_ms);
    atomic_fetch_sub(&p->now, 1);
    atomic_fetch_add(&p->done, 1);
}

/* Run each test in turn, print its verdict and time, and return the exit status. A hang (a wait
 * that never returns) fails fast through alarm() instead of waiting for CTest's timeout. */
struct compat_test {
    const char *name;
    void (*fn)(void);
};

static inline int run_tests(const char *program, const struct compat_test *tests, size_t n) {
    alarm(30);
    for (size_t i = 0; i < n; i++) {
        int before = atomic_load(&failures);
        double t0 = now_s();
        tests[i].fn();
        printf("%-18s %s (%.3f s)\n", tests[i].name,
               atomic_load(&failures) == before ? "ok" : "FAILED", now_s() - t0);
    }
    if (atomic_load(&failures))
        fprintf(stderr, "%s: %d check(s) failed\n", program, atomic_load(&failures));
    return atomic_load(&failures) ? 1 : 0;
}

#endif /* CREW_COMPAT_TEST_HARNESS_H */
