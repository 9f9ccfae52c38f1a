/*
 * blocking.c -- blocking tasks (CREW_TASK_BLOCKING, Li & Hu, §V-B): a task that sleeps, waits
 * for I/O or holds a lock for long runs on an extra thread, so it never occupies a worker and
 * short tasks keep flowing however many blocking tasks are in progress.
 *
 * Blocking tasks wait in their own priority queue (a crew__lq). Threads are made when a task
 * arrives and no blocking thread is idle, up to crew_config.max_blocking; a thread that finds no
 * task sleeps (the eventcount's OS wait: its own futex word or condition variable) and exits
 * after blocking_idle_ms without work. Idle threads sleep on the eventcount blocking->idle
 * (ec.h), used with the lock alone: the submitter pushes under pool->lock, then wakes one idle
 * thread (crew__ec_choose_locked with a match that accepts one, which takes it off the count;
 * the wake-up itself after the unlock) or starts a new one; a thread decides to sleep under
 * pool->lock after one more look at the queue, so no task is left behind. Its idle time is on CLOCK_MONOTONIC.
 * crew_shutdown waits for every accepted task (blocking ones included), then stops the threads
 * and joins them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "atomic.h"
#include "blocking.h"
#include "dispatch.h"
#include "pool.h"
#include "sched_calls.h"
#include "worker.h"

struct crew__bthread {
    crew_pool *pool;
    pthread_t thread;
    crew__ec_sleeper sleeper; /* its sleep on blocking->idle (its own: crew__ec_sleeper_own) */
    unsigned index;    /* for the thread name */
    bool started;      /* lock: a thread was created for this record */
    bool exited;       /* lock: the thread left its loop; join it */
    crew__busy busy;   /* its task now, for crew_diagnose */
};

int crew__blocking_init(crew_pool *p, const crew_config *cfg) {
    crew__blocking *b = calloc(1, sizeof *b);
    if (!b)
        return CREW_ENOMEM;
    b->max = cfg->max_blocking ? cfg->max_blocking : 64;
    b->idle_ms = cfg->blocking_idle_ms ? cfg->blocking_idle_ms : 10000;
    crew__ec_init(&b->idle);
    crew__joins_init(&b->joins);
    b->queue = aligned_alloc(64, sizeof *b->queue);
    if (!b->queue || crew__lq_init(b->queue, &p->groups, false, false) != CREW_OK) {
        free(b->queue);
        free(b);
        return CREW_ENOMEM;
    }
    p->blocking = b;
    return CREW_OK;
}

void crew__blocking_free(crew_pool *p) {
    crew__blocking *b = p->blocking;
    if (!b)
        return;
    for (unsigned i = 0; i < b->nthreads; i++) {
        crew__ec_sleeper_free(&b->threads[i]->sleeper);
        free(b->threads[i]);
    }
    free(b->threads);
    crew__lq_free(b->queue);
    free(b->queue);
    free(b);
    p->blocking = NULL;
}

/* A blocking thread's dispatch policy (dispatch.h): it takes blocking tasks only, never spins,
 * and sleeps on blocking->idle, under pool->lock alone (every push is made under that lock,
 * which is the eventcount's lock-only use); it stops when idle for idle_ms, or at a shutdown.
 * It leaves the running count under the lock of its last look, so a submitter either sees it
 * idle (or running) and wakes it, or sees it gone and starts another. */
typedef struct bthread_ctx {
    crew_pool *p;
    struct crew__bthread *t;
} bthread_ctx;

static crew_task *bthread_take(void *ctx, crew__take_ctx *tc) {
    crew__unused(tc); /* the blocking queue's take puts nothing back */
    crew_pool *p = ((bthread_ctx *)ctx)->p;
    /* Paused: no task (crew_resume wakes the idle threads). Relaxed: see crew_pool.halt. */
    return crew__paused(p) ? NULL : crew__lq_take(p->blocking->queue);
}

/* Lock held: is a task there for this thread to take? */
static bool work_queued(crew_pool *p) {
    return !crew__paused(p) && crew__lq_len(p->blocking->queue) != 0;
}

/* Its last look (crew__ec_wait, lock held): a shutdown, or a task for it. */
static bool stop_or_work(void *ctx) {
    crew_pool *p = ctx;
    return p->blocking->stop || work_queued(p);
}

static crew_task *bthread_sleep(void *ctx, crew__take_ctx *tc, bool *stop) {
    crew__unused(tc); /* nothing put back: see bthread_take */
    crew_pool *p = ((bthread_ctx *)ctx)->p;
    struct crew__bthread *t = ((bthread_ctx *)ctx)->t;
    crew__blocking *b = p->blocking;
    struct timespec until = crew__deadline_after_ms(b->idle_ms);
    pthread_mutex_lock(&p->lock);
    /* The last look, under the lock; then sleep until a submitter or crew_resume wakes it, or
     * the idle time runs out. */
    enum crew__ec_end end = crew__ec_wait(&t->sleeper, &p->lock, stop_or_work, p, &until);
    /* Stop at a shutdown, or when idle too long with nothing queued for it. */
    if (b->stop || (end == CREW__EC_TIMEDOUT && crew__lq_len(b->queue) == 0)) {
        b->running--;
        *stop = true;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static bool bthread_run(void *ctx, crew_task *t, crew__take_ctx *tc) {
    crew_pool *p = ((bthread_ctx *)ctx)->p;
    if (!crew__held_back(p, t, &tc->pushed_back))
        crew__run(p, t);
    return false;
}

static const crew__policy bthread_policy = {
    .take = bthread_take, .sleep = bthread_sleep, .run = bthread_run};

CREW__TLS const crew_pool *crew__tls_bthread;

crew_task *crew__blocking_take_group(crew_pool *p, uint32_t slot) {
    /* Its queue keeps no group lists: it counts them as scattered (a hint). */
    if (slot == 0 || !crew__lq_scattered(&p->groups, slot))
        return NULL;
    return crew__lq_take_group(p->blocking->queue, slot);
}

crew_task *crew__blocking_help(crew_pool *p, uint32_t slot, bool general) {
    /* Relaxed: see crew_pool.halt. */
    if (crew__tls_bthread != p || crew__paused(p))
        return NULL;
    crew_task *t = crew__blocking_take_group(p, slot);
    if (!t && general)
        t = crew__lq_take(p->blocking->queue);
    return t;
}

static void *bthread_main(void *arg) {
    struct crew__bthread *t = arg;
    crew_pool *p = t->pool;
    char role[16];
    snprintf(role, sizeof role, "b%u", t->index);
    crew__name_thread(p, role);
    /* A blocking thread already in on_start: it counts in running, so its waits there help
     * (crew__blocking_help); from on_stop on it no longer counts, and others are started. */
    crew__tls_bthread = p;
    crew__thread_start(p, CREW_MAX_THREADS + t->index);
    crew__tls_busy = &t->busy;
    bthread_ctx ctx = {p, t};
    crew__take_ctx tc = {.may_batch = false}; /* its takes put nothing back (bthread_take) */
    crew__dispatch(&bthread_policy, &ctx, &tc, 0);
    crew__tls_bthread = NULL;
    crew__tls_busy = NULL;
    crew__thread_stop(p, CREW_MAX_THREADS + t->index);
    pthread_mutex_lock(&p->lock);
    t->exited = true; /* after on_stop: a joiner waits for it (start_bthread, stop) */
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Start a blocking thread, reusing an exited record. Lock held. */
static void start_bthread(crew_pool *p) {
    crew__blocking *b = p->blocking;
    struct crew__bthread *t = NULL;
    for (unsigned i = 0; i < b->nthreads && !t; i++)
        if (!b->threads[i]->started || b->threads[i]->exited)
            t = b->threads[i];
    if (t && t->started) { /* it has left its loop: this join does not wait for long */
        crew__join_gone(t->thread);
        t->started = false;
    }
    if (!t) {
        if (b->nthreads == b->cap) {
            unsigned cap = b->cap ? 2 * b->cap : 8;
            struct crew__bthread **a = realloc(b->threads, cap * sizeof *a);
            if (!a)
                return; /* no thread now; the running ones (or the next submission) carry on */
            b->threads = a;
            b->cap = cap;
        }
        if (!(t = calloc(1, sizeof *t)))
            return;
        if (crew__ec_sleeper_own(&t->sleeper) != 0) {
            free(t);
            return;
        }
        crew__ec_on(&t->sleeper, &b->idle, NULL);
        t->pool = p;
        crew__busy_init(&t->busy, p);
        t->index = b->nthreads;
        b->threads[b->nthreads++] = t;
    }
    t->exited = false;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    if (p->stack_size != 0)
        pthread_attr_setstacksize(&attr, p->stack_size);
    if (crew__spawn(&t->thread, &attr, bthread_main, t) == 0) {
        t->started = true;
        b->running++;
        if (b->running > b->peak)
            b->peak = b->running;
    }
    pthread_attr_destroy(&attr);
}

/* crew__blocking_push's choice: the first idle thread listed. */
static bool wake_one(void *ctx, void *data) {
    crew__unused(data);
    unsigned *left = ctx;
    if (*left == 0)
        return false;
    (*left)--;
    return true;
}

int crew__blocking_push(crew_pool *p, crew_task *t, size_t n) {
    crew__blocking *b = p->blocking;
    /* Under pool->lock throughout: no thread can decide to exit (it looks at the queue under
     * this lock) between our check that one runs and our push. */
    pthread_mutex_lock(&p->lock);
    if (b->running == 0)
        start_bthread(p);
    if (b->running == 0) { /* none could be started: refuse rather than strand the tasks */
        pthread_mutex_unlock(&p->lock);
        return CREW_EAGAIN;
    }
    int rc = crew__lq_push_n(b->queue, t, n);
    bool unserved = false; /* a task no idle thread was woken for */
    crew__ec_wakes later = {.n = 0}; /* the idle threads' wake-ups, made after the unlock */
    for (size_t i = 0; i < n && rc == CREW_OK; i++) {
        unsigned one = 1; /* an idle thread, taken off the idle count */
        if (crew__ec_choose_locked(&b->idle, wake_one, &one, &later) != 0)
            continue;
        unserved = true;
        if (b->running < b->max)
            start_bthread(p); /* if it fails, the running threads take the task later */
        else
            break; /* every thread is busy: they take the rest as they finish */
    }
    /* Busy blocking threads that wait meanwhile (helping waiters, asleep on pool->waiting
     * under this lock) run them (crew__blocking_help), also when a new thread could not be
     * started. */
    if (unserved)
        crew__ec_notify_locked(&p->waiting, NULL, NULL);
    pthread_mutex_unlock(&p->lock);
    crew__ec_wake_chosen(&later);
    return rc;
}

size_t crew__blocking_cancel_all(crew_pool *p) {
    size_t n = 0;
    crew_task *t;
    while ((t = crew__lq_take(p->blocking->queue)) != NULL) {
        crew__task_dropped(p, t, true);
        n++;
    }
    return n;
}

void crew__blocking_wake_all_locked(crew_pool *p) {
    crew__ec_notify_locked(&p->blocking->idle, NULL, NULL);
}

size_t crew__blocking_queued(crew_pool *p) { return crew__load_relaxed(&p->blocking->queue->n); }

/* crew__join_each's view of the thread records (pool->lock held). */
static unsigned bthreads_count(void *ctx) { return ((crew__blocking *)ctx)->nthreads; }
static bool claim_bthread(void *ctx, unsigned i, pthread_t *thread) {
    struct crew__bthread *t = ((crew__blocking *)ctx)->threads[i];
    if (!t->started)
        return false;
    t->started = false;
    *thread = t->thread;
    return true;
}

void crew__blocking_stop(crew_pool *p) {
    crew__blocking *b = p->blocking;
    pthread_mutex_lock(&p->lock);
    b->stop = true; /* no thread starts from here on */
    crew__blocking_wake_all_locked(p);
    /* Join each thread once, even when several crew_shutdown calls run at once: a caller
     * claims a record (started -> false) under the lock, then joins it without the lock; then
     * it waits for the joins the others claimed (a thread may still be in on_stop). */
    crew__join_each(&b->joins, &p->lock, bthreads_count, claim_bthread, b);
    pthread_mutex_unlock(&p->lock);
}

void crew__blocking_visit_locked(crew_pool *p, void (*fn)(void *ctx, unsigned index,
                                                          crew__busy *b), void *ctx) {
    crew__blocking *b = p->blocking;
    for (unsigned i = 0; i < b->nthreads; i++)
        if (b->threads[i]->started && !b->threads[i]->exited)
            fn(ctx, b->threads[i]->index, &b->threads[i]->busy);
}
