/*
 * test_ec.c -- the eventcount (src/ec.h) alone, as Concurrency Kit's regressions/ck_ec test
 * theirs: no lost wake-up between a sleeper's last look (crew__ec_wait) and a racing notifier
 * (crew__ec_notify), over many rounds (one sleeper woken by every notification; several
 * sleepers woken one at a time by a match function); a timed sleep on CLOCK_MONOTONIC ends in
 * time, and one woken before its time says so; a deadline already past (or negative) times out
 * at once; a sleeper on two eventcounts is woken through either and leaves both counts; a
 * notification wakes only the sleepers of its eventcount that its match accepts; a sleeper
 * chosen through one eventcount is off the others at once (woken once); wake-ups chosen under
 * the lock and made after it (crew__ec_choose_locked, crew__ec_wake_chosen) for sleepers in
 * records (crew__ec_sleeper_own), more of them than it defers, and for one on a stack; a
 * late wake-up to a record's sleeper passed on to another thread is a spurious one for it;
 * sleepers on three eventcounts each, notified through any, and timed sleepers racing
 * their deadlines, over many rounds. A lost wake-up is a hang, which alarm() turns into a
 * failure. The same file runs on both OS waits (test_ec: the library's, a futex on Linux;
 * test_ec_portable: the condition variables).
 */
#define _GNU_SOURCE 1 /* clock_gettime, CLOCK_MONOTONIC under -std=c11 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "ec.h"

static long rounds(long n) {
    const char *s = getenv("CREW_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    f *= 0.25;
#endif
    long v = (long)((double)n * f);
    return v < 10 ? 10 : v;
}

/* ---- 1. One sleeper, one notifier waking every sleeper: the event is "flag reached round". */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static crew__ec ec;
static atomic_long flag, ack;
static long nrounds;

typedef struct round_look {
    long r;
} round_look;

static bool flag_reached(void *ctx) {
    return atomic_load_explicit(&flag, memory_order_relaxed) >= ((round_look *)ctx)->r;
}

static void *sleeper(void *arg) {
    (void)arg;
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, &ec, NULL);
    for (long r = 1; r <= nrounds; r++) {
        round_look look = {r};
        while (!flag_reached(&look)) {
            pthread_mutex_lock(&lock);
            crew__ec_wait(&me, &lock, flag_reached, &look, NULL);
            pthread_mutex_unlock(&lock);
        }
        atomic_store(&ack, r);
    }
    return NULL;
}

static void lost_wakeup_all(void) {
    nrounds = rounds(200000);
    crew__ec_init(&ec);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, sleeper, NULL) == 0);
    for (long r = 1; r <= nrounds; r++) {
        atomic_store_explicit(&flag, r, memory_order_relaxed); /* the event; the fence is ec's */
        crew__ec_notify(&ec, &lock, NULL, NULL);
        while (atomic_load(&ack) < r) /* the sleeper saw it: next round */
            sched_yield();
    }
    pthread_join(t, NULL);
    CHECK(!crew__ec_listed(&ec) && !crew__ec_sleepers(&ec));
    printf("notify all: %ld rounds, no lost wake-up\n", nrounds);
}

/* ---- 2. Several sleepers, each on its own cv, woken one at a time (a match that counts). -- */
#define NSLEEPERS 3
static atomic_long tokens, consumed;
static long ntokens;

static bool token_or_end(void *ctx) {
    (void)ctx;
    return atomic_load(&tokens) != 0 || atomic_load(&consumed) >= ntokens;
}

static void *token_sleeper(void *arg) {
    (void)arg;
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL); /* this thread's own cv */
    crew__ec_on(&me, &ec, NULL);
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
        crew__ec_wait(&me, &lock, token_or_end, NULL, NULL);
        pthread_mutex_unlock(&lock);
    }
}

/* A chooser for crew__ec_notify: wakes sleepers while the count at ctx lasts. */
static bool first_one(void *ctx, void *data) {
    (void)data;
    unsigned *left = ctx;
    if (*left == 0)
        return false;
    (*left)--;
    return true;
}

static void lost_wakeup_wake_one(void) {
    ntokens = rounds(100000);
    crew__ec_init(&ec);
    pthread_t t[NSLEEPERS];
    for (int i = 0; i < NSLEEPERS; i++)
        CHECK(pthread_create(&t[i], NULL, token_sleeper, NULL) == 0);
    for (long k = 0; k < ntokens; k++) {
        atomic_fetch_add(&tokens, 1); /* the event: one token for one sleeper */
        unsigned one = 1;
        CHECK(crew__ec_notify(&ec, &lock, first_one, &one) <= 1);
        if (k % 64 == 0)
            while (atomic_load(&consumed) < k) /* let the sleepers fall asleep now and then */
                sched_yield();
    }
    while (atomic_load(&consumed) < ntokens)
        sched_yield();
    crew__ec_notify(&ec, &lock, NULL, NULL); /* the end: wake everyone so they see it */
    for (int i = 0; i < NSLEEPERS; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&consumed) == ntokens);
    CHECK(!crew__ec_listed(&ec) && !crew__ec_sleepers(&ec));
    printf("wake one: %ld tokens over %d sleepers, no lost wake-up\n", ntokens, NSLEEPERS);
}

/* ---- 3. A timed sleep, and a sleeper on two eventcounts. ---- */
static bool never(void *ctx) {
    (void)ctx;
    return false;
}

static void timed_and_two(void) {
    crew__ec a, b;
    crew__ec_init(&a);
    crew__ec_init(&b);
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, &a, NULL);
    crew__ec_on(&me, &b, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct timespec until = crew__deadline_after_ms(20);
    pthread_mutex_lock(&lock);
    enum crew__ec_end end = crew__ec_wait(&me, &lock, never, NULL, &until);
    pthread_mutex_unlock(&lock);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    CHECK(end == CREW__EC_TIMEDOUT);
    CHECK(ms >= 19);
    CHECK(!crew__ec_listed(&a) && !crew__ec_listed(&b));
    CHECK(!crew__ec_sleepers(&a) && !crew__ec_sleepers(&b));
    printf("timed sleep: %ld ms for 20; two eventcounts back to 0\n", ms);
}

/* ---- 4. Targeted wake-ups: each sleeper sleeps on its own eventcount and on a shared one
 * (with its number as data); notifying one's own wakes it alone, and a match on the shared one
 * wakes only the sleeper it names. Each counts its wake-ups. ---- */
#define NTARGETS 4
static crew__ec own[NTARGETS], shared_ec;
static atomic_int go[NTARGETS], asleep;
static atomic_ulong wakeups[NTARGETS];
static int ids[NTARGETS];

static bool my_go(void *ctx) {
    int i = *(int *)ctx;
    if (atomic_load(&go[i]))
        return true;
    atomic_fetch_add(&asleep, 1); /* lock held: counted on both before the notifier looks */
    return false;
}

static void *target_sleeper(void *arg) {
    int i = *(int *)arg;
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, &own[i], NULL);
    crew__ec_on(&me, &shared_ec, arg);
    unsigned long before = crew__ec_thread_wakeups();
    pthread_mutex_lock(&lock);
    while (crew__ec_wait(&me, &lock, my_go, arg, NULL) != CREW__EC_FOUND)
        ;
    pthread_mutex_unlock(&lock);
    atomic_store(&wakeups[i], crew__ec_thread_wakeups() - before);
    return NULL;
}

static bool is_id(void *ctx, void *data) { return *(int *)ctx == *(int *)data; }

static void targeted(void) {
    crew__ec_init(&shared_ec);
    pthread_t t[NTARGETS];
    for (int i = 0; i < NTARGETS; i++) {
        crew__ec_init(&own[i]);
        ids[i] = i;
        CHECK(pthread_create(&t[i], NULL, target_sleeper, &ids[i]) == 0);
    }
    while (atomic_load(&asleep) < NTARGETS) /* each has looked and is about to sleep */
        sched_yield();
    /* Sleeper 0 through its own eventcount, sleeper 1 through the shared one by its data. */
    atomic_store(&go[0], 1);
    CHECK(crew__ec_notify(&own[0], &lock, NULL, NULL) == 1);
    atomic_store(&go[1], 1);
    int one = 1;
    CHECK(crew__ec_notify(&shared_ec, &lock, is_id, &one) == 1);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    /* The others were woken by neither: release them one by one through their own. */
    for (int i = 2; i < NTARGETS; i++) {
        atomic_store(&go[i], 1);
        CHECK(crew__ec_notify(&own[i], &lock, NULL, NULL) == 1);
        pthread_join(t[i], NULL);
    }
    for (int i = 0; i < NTARGETS; i++) {
        CHECK(atomic_load(&wakeups[i]) == 1); /* woken once: by its own notification */
        CHECK(!crew__ec_listed(&own[i]) && !crew__ec_sleepers(&own[i]));
    }
    CHECK(!crew__ec_listed(&shared_ec) && !crew__ec_sleepers(&shared_ec));
    printf("targeted: %d sleepers, each woken once, by its own notification\n", NTARGETS);
}

/* ---- 5. Timed waits: woken before the deadline (WOKEN), a deadline past or negative
 * (TIMEDOUT at once, no sleep). ---- */
static crew__ec timed_ec;
static atomic_int timed_asleep;

static bool count_asleep(void *ctx) {
    (void)ctx;
    atomic_fetch_add(&timed_asleep, 1); /* lock held: listed before the notifier can look */
    return false;
}

static void *timed_sleeper(void *arg) {
    enum crew__ec_end *end = arg;
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, &timed_ec, NULL);
    struct timespec until = crew__deadline_after_ms(100000); /* far: the notifier comes first */
    pthread_mutex_lock(&lock);
    *end = crew__ec_wait(&me, &lock, count_asleep, NULL, &until);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void timed_edges(void) {
    crew__ec_init(&timed_ec);
    enum crew__ec_end end = CREW__EC_FOUND;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, timed_sleeper, &end) == 0);
    while (atomic_load(&timed_asleep) == 0)
        sched_yield();
    CHECK(crew__ec_notify(&timed_ec, &lock, NULL, NULL) == 1);
    pthread_join(t, NULL);
    CHECK(end == CREW__EC_WOKEN);
    CHECK(!crew__ec_listed(&timed_ec) && !crew__ec_sleepers(&timed_ec));

    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, &timed_ec, NULL);
    struct timespec past, negative = {.tv_sec = -5, .tv_nsec = 0};
    clock_gettime(CLOCK_MONOTONIC, &past);
    past.tv_sec -= 1;
    pthread_mutex_lock(&lock);
    CHECK(crew__ec_wait(&me, &lock, never, NULL, &past) == CREW__EC_TIMEDOUT);
    CHECK(crew__ec_wait(&me, &lock, never, NULL, &negative) == CREW__EC_TIMEDOUT);
    CHECK(crew__ec_wait_for(&timed_ec, &lock, never, NULL, &past) == CREW__EC_TIMEDOUT);
    pthread_mutex_unlock(&lock);
    CHECK(!crew__ec_listed(&timed_ec) && !crew__ec_sleepers(&timed_ec));
    printf("timed: woken before the deadline; past and negative deadlines time out at once\n");
}

/* ---- 6. A sleeper chosen through one eventcount leaves the others at once: a notification on
 * another of them in the same critical section finds nobody (it is woken once). ---- */
static crew__ec once_a, once_b;
static atomic_int once_asleep;
static atomic_ulong once_wakeups;

static bool once_look(void *ctx) {
    (void)ctx;
    atomic_fetch_add(&once_asleep, 1);
    return false;
}

static void *once_sleeper(void *arg) {
    (void)arg;
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, &once_a, NULL);
    crew__ec_on(&me, &once_b, NULL);
    unsigned long before = crew__ec_thread_wakeups();
    pthread_mutex_lock(&lock);
    CHECK(crew__ec_wait(&me, &lock, once_look, NULL, NULL) == CREW__EC_WOKEN);
    pthread_mutex_unlock(&lock);
    atomic_store(&once_wakeups, crew__ec_thread_wakeups() - before);
    return NULL;
}

static void chosen_once(void) {
    crew__ec_init(&once_a);
    crew__ec_init(&once_b);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, once_sleeper, NULL) == 0);
    while (atomic_load(&once_asleep) == 0)
        sched_yield();
    pthread_mutex_lock(&lock);
    CHECK(crew__ec_listed(&once_a) && crew__ec_listed(&once_b));
    CHECK(crew__ec_notify_locked(&once_a, NULL, NULL) == 1);
    CHECK(!crew__ec_listed(&once_b)); /* off b too, already */
    CHECK(crew__ec_notify_locked(&once_b, NULL, NULL) == 0);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    CHECK(atomic_load(&once_wakeups) == 1);
    CHECK(!crew__ec_sleepers(&once_a) && !crew__ec_sleepers(&once_b));
    printf("chosen once: off both eventcounts when chosen through one\n");
}

/* ---- 7. Wake-ups made after the lock (crew__ec_choose_locked, crew__ec_wake_chosen), for
 * more sleepers in records than it defers, and one on a stack (woken under the lock): every one
 * wakes. ---- */
#define NLATER (CREW__EC_WAKES + 3)
static crew__ec_sleeper later_rec[NLATER]; /* records: crew__ec_sleeper_own */
static crew__ec later_ec;
static atomic_int later_asleep, later_go;

static bool later_look(void *ctx) {
    (void)ctx;
    if (atomic_load(&later_go))
        return true;
    atomic_fetch_add(&later_asleep, 1);
    return false;
}

static void *later_sleeper(void *arg) {
    int i = *(int *)arg;
    pthread_mutex_lock(&lock);
    if (i < NLATER) /* a record's sleeper, woken after the unlock */
        while (crew__ec_wait(&later_rec[i], &lock, later_look, NULL, NULL) != CREW__EC_FOUND)
            ;
    else /* a stack sleeper, woken under the lock */
        crew__ec_wait_for(&later_ec, &lock, later_look, NULL, NULL);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void wake_after_unlock(void) {
    crew__ec_init(&later_ec);
    pthread_t t[NLATER + 1];
    int ids[NLATER + 1];
    for (int i = 0; i <= NLATER; i++) {
        if (i < NLATER) {
            CHECK(crew__ec_sleeper_own(&later_rec[i]) == 0);
            crew__ec_on(&later_rec[i], &later_ec, NULL);
        }
        ids[i] = i;
        CHECK(pthread_create(&t[i], NULL, later_sleeper, &ids[i]) == 0);
    }
    while (atomic_load(&later_asleep) < NLATER + 1)
        sched_yield();
    atomic_store(&later_go, 1);
    crew__ec_wakes later = {.n = 0};
    pthread_mutex_lock(&lock);
    CHECK(crew__ec_choose_locked(&later_ec, NULL, NULL, &later) == NLATER + 1);
    CHECK(!crew__ec_listed(&later_ec));
#if CREW__EC_FUTEX
    CHECK(later.n == CREW__EC_WAKES); /* the records' first ones; the stack's never */
#endif
    pthread_mutex_unlock(&lock);
    crew__ec_wake_chosen(&later);
    CHECK(later.n == 0);
    for (int i = 0; i <= NLATER; i++)
        pthread_join(t[i], NULL);
    CHECK(!crew__ec_sleepers(&later_ec));
    for (int i = 0; i < NLATER; i++)
        crew__ec_sleeper_free(&later_rec[i]);
    printf("wake after unlock: %d sleepers, %d wake-ups deferred at most, all woken\n",
           NLATER + 1, CREW__EC_WAKES);
}

/* ---- 7b. A lasting sleeper passed from thread to thread (as a bounded queue lends its
 * sleepers to submitters): a wake chosen for its last user and made late, once the next user
 * sleeps on it, is a spurious one: the next user looks again and sleeps on, and returns only
 * when chosen itself. ---- */
static crew__ec_sleeper lent_rec;
static crew__ec lent_ec;
static atomic_int lent_looks, lent_go, lent_end;

static bool lent_look(void *ctx) {
    (void)ctx;
    atomic_fetch_add(&lent_looks, 1);
    return atomic_load(&lent_go) != 0;
}

static void *lent_user(void *arg) { /* one wait on the lent sleeper, its end + 1 in lent_end */
    (void)arg;
    pthread_mutex_lock(&lock);
    crew__ec_on(&lent_rec, &lent_ec, NULL);
    enum crew__ec_end end = crew__ec_wait(&lent_rec, &lock, lent_look, NULL, NULL);
    crew__ec_off_all(&lent_rec);
    pthread_mutex_unlock(&lock);
    atomic_store(&lent_end, (int)end + 1);
    return NULL;
}

/* Starts a user of lent_rec and returns once it has looked (it then sleeps, or is about to). */
static pthread_t lent_start(void) {
    atomic_store(&lent_looks, 0);
    atomic_store(&lent_end, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, lent_user, NULL) == 0);
    while (atomic_load(&lent_looks) < 1)
        sched_yield();
    return t;
}

static void late_wake_to_next_user(void) {
    crew__ec_init(&lent_ec);
    CHECK(crew__ec_sleeper_own(&lent_rec) == 0);
    crew__ec_wakes first = {.n = 0}, late;
    pthread_t t = lent_start(); /* the first user, chosen and woken after the unlock */
    pthread_mutex_lock(&lock);
    CHECK(crew__ec_choose_locked(&lent_ec, NULL, NULL, &first) == 1);
    pthread_mutex_unlock(&lock);
    late = first; /* the same wake-up, to be made again once the next user sleeps */
    crew__ec_wake_chosen(&first);
    pthread_join(t, NULL);
    CHECK(atomic_load(&lent_end) == CREW__EC_WOKEN + 1);
    t = lent_start(); /* the next user of the same sleeper */
    long stray = 0;
#if CREW__EC_FUTEX
    CHECK(late.n == 1);
    /* Until the late wake-up has reached it (it looked again), or it wrongly returned. */
    while (atomic_load(&lent_looks) < 2 && atomic_load(&lent_end) == 0) {
        crew__ec_wakes again = late;
        crew__ec_wake_chosen(&again);
        stray++;
        usleep(1000);
    }
#else
    (void)late; /* condition variables are signalled under the lock: no wake-up comes late */
#endif
    CHECK(atomic_load(&lent_end) == 0); /* a late wake-up for another user does not end it */
    atomic_store(&lent_go, 1);
    CHECK(crew__ec_notify(&lent_ec, &lock, NULL, NULL) == 1);
    pthread_join(t, NULL);
    CHECK(atomic_load(&lent_end) == CREW__EC_WOKEN + 1);
    CHECK(!crew__ec_sleepers(&lent_ec));
    crew__ec_sleeper_free(&lent_rec);
    printf("late wake to the next user: spurious (%ld late wake-ups made), then woken\n", stray);
}

/* ---- 8. Stress: sleepers on three eventcounts each (one shared by all, two of their own),
 * notifiers on any of them; and timed sleepers whose deadlines race the notifications. Tokens
 * as in 2: every token is consumed, and the counts end at 0. ---- */
#define NMULTI 3
static crew__ec multi_shared, multi_own[NMULTI][2];
static atomic_long mtokens, mconsumed;
static atomic_ulong mtimeouts;
static long nmtokens;

static bool mtoken_or_end(void *ctx) {
    (void)ctx;
    return atomic_load(&mtokens) != 0 || atomic_load(&mconsumed) >= nmtokens;
}

static void *multi_sleeper(void *arg) {
    int i = *(int *)arg;
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, &multi_own[i][0], NULL);
    crew__ec_on(&me, &multi_shared, NULL);
    crew__ec_on(&me, &multi_own[i][1], NULL);
    for (unsigned long k = 0;; k++) {
        long t = atomic_load(&mtokens);
        if (t > 0) {
            if (atomic_compare_exchange_weak(&mtokens, &t, t - 1))
                atomic_fetch_add(&mconsumed, 1);
            continue;
        }
        if (atomic_load(&mconsumed) >= nmtokens)
            return NULL;
        /* Sleeper 0 sleeps with a deadline of 0 to 2 ms now and then: timeouts race wake-ups. */
        struct timespec until = crew__deadline_after_ms((unsigned)(k % 3));
        pthread_mutex_lock(&lock);
        if (crew__ec_wait(&me, &lock, mtoken_or_end, NULL, i == 0 && k % 2 ? &until : NULL) ==
            CREW__EC_TIMEDOUT)
            atomic_fetch_add(&mtimeouts, 1);
        pthread_mutex_unlock(&lock);
    }
}

static void multi_stress(void) {
    nmtokens = rounds(100000);
    crew__ec_init(&multi_shared);
    int id[NMULTI];
    pthread_t t[NMULTI];
    for (int i = 0; i < NMULTI; i++) {
        crew__ec_init(&multi_own[i][0]);
        crew__ec_init(&multi_own[i][1]);
        id[i] = i;
        CHECK(pthread_create(&t[i], NULL, multi_sleeper, &id[i]) == 0);
    }
    for (long k = 0; k < nmtokens; k++) {
        atomic_fetch_add(&mtokens, 1); /* one token: wake one sleeper, through any eventcount */
        unsigned one = 1;
        long pick = k % (2 * NMULTI + 1);
        crew__ec *ec_k = pick == 2 * NMULTI ? &multi_shared : &multi_own[pick / 2][pick % 2];
        if (crew__ec_notify(ec_k, &lock, first_one, &one) == 0 && ec_k != &multi_shared)
            crew__ec_notify(&multi_shared, &lock, first_one, &(unsigned){1}); /* nobody there */
        if (k % 64 == 0)
            while (atomic_load(&mconsumed) < k)
                sched_yield();
    }
    while (atomic_load(&mconsumed) < nmtokens)
        sched_yield();
    crew__ec_notify(&multi_shared, &lock, NULL, NULL); /* the end: wake everyone */
    for (int i = 0; i < NMULTI; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&mconsumed) == nmtokens);
    CHECK(!crew__ec_listed(&multi_shared) && !crew__ec_sleepers(&multi_shared));
    for (int i = 0; i < NMULTI; i++)
        for (int j = 0; j < 2; j++)
            CHECK(!crew__ec_listed(&multi_own[i][j]) && !crew__ec_sleepers(&multi_own[i][j]));
    printf("three eventcounts each: %ld tokens over %d sleepers, %lu timeouts, no lost "
           "wake-up\n",
           nmtokens, NMULTI, (unsigned long)atomic_load(&mtimeouts));
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "The eventcount alone: no lost wake-up between a last look and a notifier.");
    alarm(240); /* a lost wake-up hangs: fail instead */
    printf("OS wait: %s\n", CREW__EC_FUTEX ? "futex" : "condition variables");
    timed_and_two();
    timed_edges();
    targeted();
    chosen_once();
    wake_after_unlock();
    late_wake_to_next_user();
    lost_wakeup_all();
    lost_wakeup_wake_one();
    multi_stress();
    return 0;
}
