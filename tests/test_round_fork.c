/*
 * test_round_fork.c -- a fork() from the first task of a deferred round (crew_enqueue_tasks_wait
 * of a few tasks from a thread outside the pool, wake.h's deferred wake-up): the child, a copy
 * of the caller alone, runs the round's other tasks itself and touches none of the parent's
 * locks (crew.h: in a forked child nothing hangs), even when the fork caught a parent's thread
 * holding the pool's lock. White-box: a watcher is faked in p->watch so that the round defers,
 * and a thread holds p->lock across the fork. An alarm turns a hang in the child into a failure.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "crew.h"
#include "ec.h"
#include "pool.h"
#include "sched_calls.h"
#include "wake.h"

#if defined(__SANITIZE_THREAD__)
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "die_after_fork=0"; }
#endif

static crew_pool *pool;
static atomic_int ran;
static atomic_int holder_state; /* 0 start, 1 holds the lock, 2 may release */
static pid_t parent;

static void *hold_lock(void *arg) {
    (void)arg;
    pthread_mutex_lock(&pool->lock);
    atomic_store(&holder_state, 1);
    while (atomic_load(&holder_state) != 2)
        sched_yield();
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

static void bump(void *arg) {
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

/* The round's first task: forks while another thread holds the pool's lock. */
static void forker(void *arg) {
    (void)arg;
    pthread_t h;
    CHECK(pthread_create(&h, NULL, hold_lock, NULL) == 0);
    while (atomic_load(&holder_state) != 1)
        sched_yield();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(10); /* a hang: SIGALRM */
        return;    /* the child goes on with the round */
    }
    atomic_store(&holder_state, 2);
    pthread_join(h, NULL);
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    if (WIFSIGNALED(st))
        fprintf(stderr, "child killed by signal %d (%s): it hung in the round\n", WTERMSIG(st),
                strsignal(WTERMSIG(st)));
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The split way (more than CREW__JOIN_TASKS_MAX tasks): the upper half, a span, is taken by a
 * worker and still running (its first task waits for the fork) when the caller's first task
 * forks, with the other worker asleep and the pool's lock held. The child runs the span itself
 * (whoever took it is not there): flat, with no offer and no wake-up. */
static atomic_int span_started, span_release;

static void span_first(void *arg) {
    (void)arg;
    if (getpid() != parent)
        return; /* the child's copy: nothing to wait for */
    atomic_store(&span_started, 1);
    while (!atomic_load(&span_release))
        sched_yield();
}

static void forker_split(void *arg) {
    (void)arg;
    for (int i = 0; i < 10000 && !(atomic_load(&span_started) && crew__ec_sleepers(&pool->work));
         i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (!atomic_load(&span_started) || !crew__ec_sleepers(&pool->work)) {
        fprintf(stderr, "split: no span running with a worker asleep; not checked\n");
        atomic_store(&span_release, 1);
        return;
    }
    forker(arg);
    atomic_store(&span_release, 1);
}

static void split_round(void) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    CHECK(crew_create(&pool, &cfg) == CREW_OK);
    atomic_store(&holder_state, 0);
    enum { N = 12 };
    crew_task t[N];
    memset(t, 0, sizeof t);
    for (int i = 0; i < N; i++)
        t[i].fn = bump;
    t[0].fn = forker_split;
    t[N - N / 2].fn = span_first; /* the span is t[6..12) */
    int rc = crew_enqueue_tasks_wait(pool, t, N);
    if (getpid() != parent)
        _exit(rc == CREW_OK ? 0 : 3);
    CHECK(rc == CREW_OK);
    CHECK(crew_destroy(pool) == CREW_OK);
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "A fork from a deferred round's first task: the child never hangs.");
    parent = getpid();
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    CHECK(crew_create(&pool, &cfg) == CREW_OK);
    if (!crew__sched_has_offer(pool)) {
        printf("skipped: the strategy offers no join halves\n");
        crew_destroy(pool);
        return 0;
    }
    /* The worker asleep (it is counted on p->work), and a watcher faked: the round defers. */
    for (int i = 0; i < 10000 && !crew__ec_sleepers(&pool->work); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    CHECK(crew__ec_sleepers(&pool->work));
    atomic_store(&pool->watch, CREW__WATCHING);
    crew_task t[3];
    memset(t, 0, sizeof t);
    t[0].fn = forker;
    t[1].fn = t[2].fn = bump;
    int rc = crew_enqueue_tasks_wait(pool, t, 3);
    if (getpid() != parent) /* the child: the round ran here in full */
        _exit(rc == CREW_OK && atomic_load(&ran) == 2 ? 0 : 3);
    CHECK(rc == CREW_OK);
    CHECK(atomic_load(&ran) == 2);
    atomic_store(&pool->watch, 0u); /* no watcher any more */
    CHECK(crew_destroy(pool) == CREW_OK);
    split_round();
    printf("ok\n");
    return 0;
}
