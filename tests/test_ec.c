/*
 * test_ec.c -- the eventcount (src/ec.h) alone, as Concurrency Kit's regressions/ck_ec test
 * theirs: no lost wake-up between a sleeper's last look and a racing notifier, over many rounds
 * (one sleeper on a broadcast cv; several sleepers each on its own cv, woken one at a time by
 * crew__ec_wake_locked); a timed sleep on CLOCK_MONOTONIC ends in time; counts return to 0 when
 * a sleeper prepared on two eventcounts commits on one and cancels the other. A lost wake-up is
 * a hang, which alarm() turns into a failure.
 */
#define _GNU_SOURCE 1 /* clock_gettime, CLOCK_MONOTONIC under -std=c11 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ec.h"

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);            \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static long rounds(long n) {
    const char *s = getenv("CREW_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    f *= 0.25;
#endif
    long v = (long)((double)n * f);
    return v < 10 ? 10 : v;
}

/* ---- 1. One sleeper, one notifier, a broadcast cv: the event is "flag reached round". ---- */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static crew__ec ec;
static atomic_long flag, ack;
static long nrounds;

static void *sleeper(void *arg) {
    (void)arg;
    crew__ec_waiter me = {&cv, false};
    for (long r = 1; r <= nrounds; r++) {
        while (atomic_load_explicit(&flag, memory_order_relaxed) < r) {
            pthread_mutex_lock(&lock);
            crew__ec_prepare(&ec, &me);
            if (atomic_load_explicit(&flag, memory_order_relaxed) < r) /* the last look */
                crew__ec_commit(&ec, &me, &lock, NULL);
            crew__ec_cancel(&ec, &me);
            pthread_mutex_unlock(&lock);
        }
        atomic_store(&ack, r);
    }
    return NULL;
}

static void lost_wakeup_broadcast(void) {
    nrounds = rounds(200000);
    crew__ec_init(&ec);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, sleeper, NULL) == 0);
    for (long r = 1; r <= nrounds; r++) {
        atomic_store_explicit(&flag, r, memory_order_relaxed); /* the event; the fence is ec's */
        if (crew__ec_sleepers(&ec)) {
            pthread_mutex_lock(&lock);
            crew__ec_broadcast_locked(&cv);
            pthread_mutex_unlock(&lock);
        }
        while (atomic_load(&ack) < r) /* the sleeper saw it: next round */
            sched_yield();
    }
    pthread_join(t, NULL);
    CHECK(crew__ec_count_locked(&ec) == 0);
    printf("broadcast: %ld rounds, no lost wake-up\n", nrounds);
}

/* ---- 2. Several sleepers, each on its own cv, woken one at a time (claimed). ---- */
#define NSLEEPERS 3
static struct one {
    pthread_cond_t cv;
    crew__ec_waiter w;
} ones[NSLEEPERS];
static atomic_long tokens, consumed;
static long ntokens;

static void *token_sleeper(void *arg) {
    struct one *o = arg;
    for (;;) {
        long t = atomic_load(&tokens);
        if (t > 0) {
            if (atomic_compare_exchange_weak(&tokens, &t, t - 1))
                atomic_fetch_add(&consumed, 1);
            continue;
        }
        if (atomic_load(&consumed) >= ntokens)
            return NULL;
        pthread_mutex_lock(&lock);
        crew__ec_prepare(&ec, &o->w);
        if (atomic_load(&tokens) == 0 && atomic_load(&consumed) < ntokens)
            crew__ec_commit(&ec, &o->w, &lock, NULL);
        crew__ec_cancel(&ec, &o->w);
        pthread_mutex_unlock(&lock);
    }
}

static void lost_wakeup_wake_one(void) {
    ntokens = rounds(100000);
    crew__ec_init(&ec);
    pthread_t t[NSLEEPERS];
    for (int i = 0; i < NSLEEPERS; i++) {
        CHECK(pthread_cond_init(&ones[i].cv, NULL) == 0);
        ones[i].w = (crew__ec_waiter){&ones[i].cv, false};
        CHECK(pthread_create(&t[i], NULL, token_sleeper, &ones[i]) == 0);
    }
    for (long k = 0; k < ntokens; k++) {
        atomic_fetch_add(&tokens, 1); /* the event: one token for one sleeper */
        if (crew__ec_sleepers(&ec)) {
            pthread_mutex_lock(&lock);
            for (int i = 0; i < NSLEEPERS; i++)
                if (crew__ec_wake_locked(&ec, &ones[i].w))
                    break; /* one, taken off the count by the notifier */
            pthread_mutex_unlock(&lock);
        }
        if (k % 64 == 0)
            while (atomic_load(&consumed) < k) /* let the sleepers fall asleep now and then */
                sched_yield();
    }
    while (atomic_load(&consumed) < ntokens)
        sched_yield();
    pthread_mutex_lock(&lock); /* the last token: wake everyone so they see the end */
    for (int i = 0; i < NSLEEPERS; i++)
        crew__ec_wake_locked(&ec, &ones[i].w);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < NSLEEPERS; i++) {
        pthread_join(t[i], NULL);
        pthread_cond_destroy(&ones[i].cv);
    }
    CHECK(atomic_load(&consumed) == ntokens);
    CHECK(crew__ec_count_locked(&ec) == 0);
    printf("wake one: %ld tokens over %d sleepers, no lost wake-up\n", ntokens, NSLEEPERS);
}

/* ---- 3. A timed sleep, and a sleeper prepared on two eventcounts. ---- */
static void timed_and_two(void) {
    pthread_cond_t mono;
    CHECK(crew__cond_init_monotonic(&mono) == 0);
    crew__ec a, b;
    crew__ec_init(&a);
    crew__ec_init(&b);
    crew__ec_waiter wa = {&mono, false}, wb = {&mono, false};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct timespec until = crew__deadline_after_ms(20);
    pthread_mutex_lock(&lock);
    crew__ec_prepare(&a, &wa);
    crew__ec_prepare(&b, &wb);
    CHECK(crew__ec_count_locked(&a) == 1 && crew__ec_count_locked(&b) == 1);
    enum crew__ec_end end;
    do /* a spurious return sleeps again, as every caller does */
        end = crew__ec_commit(&a, &wa, &lock, &until);
    while (end == CREW__EC_RETURNED && (crew__ec_prepare(&a, &wa), 1));
    crew__ec_cancel(&b, &wb);
    pthread_mutex_unlock(&lock);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    CHECK(end == CREW__EC_TIMEDOUT);
    CHECK(ms >= 19);
    CHECK(crew__ec_count_locked(&a) == 0 && crew__ec_count_locked(&b) == 0);
    CHECK(!crew__ec_sleepers(&a) && !crew__ec_sleepers(&b));
    pthread_cond_destroy(&mono);
    printf("timed sleep: %ld ms for 20; two eventcounts back to 0\n", ms);
}

int main(void) {
    alarm(240); /* a lost wake-up hangs: fail instead */
    timed_and_two();
    lost_wakeup_broadcast();
    lost_wakeup_wake_one();
    return 0;
}
