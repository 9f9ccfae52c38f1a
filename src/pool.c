/*
 * pool.c -- a pool's lifecycle: crew_create, crew_resize (lazy, Jendersie et al., §III-E),
 * crew_shutdown and crew_destroy.
 *
 * Workers are never killed: shrinking marks the surplus (RUNNING -> MARKED, compare-and-swap
 * under pool->lock) and each marked worker exits after its current task; growing first revives
 * marked workers that have not exited yet (MARKED -> RUNNING), then starts new threads, reusing
 * the records of workers that have exited. The workers array and the joining of threads belong
 * to resize_lock; crew_shutdown takes it only after every task has finished, so a task that
 * calls crew_resize can never hold up the shutdown that joins its own thread.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "clock.h"
#include "config.h"
#include "cpus.h"
#include "modules.h"
#include "idle.h"
#include "pool.h"
#include "stats.h"
#include "thread.h"
#include "wait.h"
#include "wake.h"
#include "worker.h"

/* Start w's thread (with every signal blocked: crew__spawn); who: the public call, for the
 * detail of a failure. */
static int start_thread(crew_pool *p, crew__worker *w, const char *who) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return crew__fail(CREW_ENOMEM, "%s: pthread_attr_init failed (out of memory)", who);
    if (p->stack_size != 0 && pthread_attr_setstacksize(&attr, p->stack_size) != 0) {
        pthread_attr_destroy(&attr);
        return crew__fail(CREW_EINVAL,
                          "%s: crew_config.stack_size %zu is refused by pthread_attr_setstacksize "
                          "(at least PTHREAD_STACK_MIN, %zu here, is needed)",
                          who, p->stack_size, (size_t)PTHREAD_STACK_MIN);
    }
    crew__sched_worker_open(p, w, true);
    /* Relaxed: the thread does not exist yet; pthread_create orders these stores before it. */
    crew__store_relaxed(&w->state, CREW__W_RUNNING);
    crew__store_relaxed(&w->gone, false);
    int rc = crew__spawn(&w->thread, &attr, crew__worker_main, w);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        /* No thread: hand over what submitters already put in its queue (PER_WORKER saw it
         * RUNNING), as a leaving worker does, and mark it EXITED under the lock. */
        crew_task *orphan = NULL;
        size_t moved = 0;
        pthread_mutex_lock(&p->lock);
        if (crew__sched_worker_exit(p, w, &moved, &orphan) != CREW_OK)
            crew__sched_worker_open(p, w, false); /* what could not move stays for helpers */
        if (moved != 0)
            crew__wake_handed_over_locked(p, moved);
        crew__store_relaxed(&w->state, CREW__W_EXITED); /* relaxed: under the lock */
        pthread_mutex_unlock(&p->lock);
        if (orphan) /* nowhere to put it: run it here rather than lose it */
            crew__run(p, orphan);
        return crew__fail(CREW_EAGAIN, "%s: pthread_create refused worker %u: %s", who, w->index,
                          strerror(rc));
    }
    w->started = true;
    w->joined = false;
    return CREW_OK;
}

/* Join workers that have left their loop and returned from on_stop. resize_lock held: so the
 * join must never wait for a hook, which may itself call crew_resize. */
static void reap_exited(crew_pool *p) {
    for (unsigned i = 0; i < crew__nworkers(p); i++) {
        crew__worker *w = crew__worker_at(p, i);
        /* Acquire: pairs with the release store of gone after on_stop (worker.c), so this
         * join waits only for the thread's return. */
        if (w->started && !w->joined && crew__load_acquire(&w->gone)) {
            crew__join_gone(w->thread);
            w->joined = true;
        }
    }
}

static void free_worker(crew_pool *p, crew__worker *w) {
    crew__sched_worker_free(p, w);
    crew__ec_sleeper_free(&w->sleeper);
    free(w);
}

/* A record for one more worker: an exited, joined one, or a new one. resize_lock held. */
static crew__worker *free_record(crew_pool *p) {
    unsigned n = crew__nworkers(p);
    for (unsigned i = 0; i < n; i++) {
        crew__worker *w = crew__worker_at(p, i);
        if (!w->started || w->joined)
            return w;
    }
    if (n == CREW_MAX_THREADS)
        return NULL;
    crew__worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (crew__ec_sleeper_own(&w->sleeper) != 0) {
        free(w);
        return NULL;
    }
    w->pool = p;
    w->index = n;
    crew__ec_on(&w->sleeper, &p->work, w); /* its data: wake_match in wake.c */
    crew__atomic_init(&w->state, CREW__W_EXITED);
    crew__atomic_init(&w->gone, true);
    crew__atomic_init(&w->stolen, 0u);
    crew__atomic_init(&w->credit, 0u);
    crew__atomic_init(&w->stats, NULL);
    crew__busy_init(&w->busy, p);
    if (crew__sched_worker_init(p, w) != CREW_OK) {
        free_worker(p, w);
        return NULL;
    }
    crew__store_relaxed(&p->workers[n], w); /* relaxed: published by the release below */
    /* Release: the record is initialised before thieves and round-robin see it (acquire). */
    crew__store_release(&p->nworkers, n + 1);
    return w;
}

unsigned crew__running_workers_locked(crew_pool *p) {
    unsigned n = 0, nw = crew__nworkers(p); /* acquire: see free_record */
    for (unsigned i = 0; i < nw; i++)
        /* Relaxed: the lock orders every transition. */
        n += crew__load_relaxed(&crew__worker_at(p, i)->state) == CREW__W_RUNNING;
    return n;
}

/* Move up to n workers from one state to another, last index first; lock held. */
static unsigned transition(crew_pool *p, unsigned n, int from, int to) {
    unsigned done = 0;
    for (unsigned i = crew__nworkers(p); i-- > 0 && done < n;) {
        int expected = from;
        /* Relaxed compare-and-swap: every transition happens under the lock, which orders them;
         * the CAS states the check-then-set of Jendersie et al., §III-E in one step. */
        if (crew__cas_relaxed(&crew__worker_at(p, i)->state, &expected, to))
            done++;
    }
    return done;
}

/* Make `threads` workers RUNNING; resize_lock held. who: the public call (crew_create or
 * crew_resize), for the detail of a failure. */
static int set_workers(crew_pool *p, unsigned threads, const char *who) {
    pthread_mutex_lock(&p->lock);
    /* Seq_cst, under the lock: a shutdown may have begun. */
    if (crew__load_seq_cst(&p->state) != CREW__OPEN) {
        pthread_mutex_unlock(&p->lock);
        return crew__fail(CREW_ESHUTDOWN, "%s: the pool is shutting down or shut down", who);
    }
    unsigned running = crew__running_workers_locked(p);
    bool changed = false;
    if (threads < running) {
        changed = transition(p, running - threads, CREW__W_RUNNING, CREW__W_MARKED) != 0;
        running = threads;
    } else if (threads > running) {
        unsigned revived = transition(p, threads - running, CREW__W_MARKED, CREW__W_RUNNING);
        changed = revived != 0; /* a revived worker asleep in a nested wait may help again */
        running += revived;
    }
    pthread_mutex_unlock(&p->lock);
    if (changed) /* marked sleepers wake up and exit */
        crew__wake_all(p);
    crew__debug_yield();

    reap_exited(p);
    int rc = CREW_OK;
    while (running < threads) {
        crew__worker *w = free_record(p);
        if (!w) {
            rc = crew__fail(CREW_ENOMEM, "%s: out of memory for worker %u's record", who, running);
            break;
        }
        if ((rc = start_thread(p, w, who)) != CREW_OK)
            break;
        running++;
    }
    /* Relaxed: a plain number, see struct crew_pool. */
    crew__store_relaxed(&p->target, running);
    pthread_mutex_lock(&p->lock);
    if (running > p->stats->threads_peak)
        p->stats->threads_peak = running;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

/* The pool's array of worker records, and (crew_destroy) every record made. */
int crew__workers_init(crew_pool *p) {
    p->workers = calloc(CREW_MAX_THREADS, sizeof *p->workers);
    return p->workers ? CREW_OK : CREW_ENOMEM;
}
void crew__workers_free(crew_pool *p) {
    for (unsigned i = 0; i < crew__nworkers(p); i++)
        free_worker(p, crew__worker_at(p, i));
    free(p->workers);
}

/* Would a shutdown of p from this thread wait for the thread itself? (From a task of p, or
 * from on_start or on_stop of one of p's threads: shutdown joins that thread.) */
static bool waits_for_itself(const crew_pool *p) {
    return crew__tls_hook == p || crew__in_task_of(p);
}

/* CREW_EDEADLK of crew_shutdown and crew_destroy, with the detail of where the call came from. */
static int deadlock(const char *who, const crew_pool *p) {
    return crew__fail(CREW_EDEADLK,
                      "%s: called from %s of this pool, which the shutdown would wait for; call it "
                      "from another thread",
                      who, crew__tls_hook == p ? "on_start or on_stop of a thread" : "a task");
}

int crew_create(crew_pool **out, const crew_config *cfg) {
    static atomic_uint next_id; /* numbers pools in thread names only */
    crew_config defaults;
    if (!out)
        return crew__fail(CREW_EINVAL, "crew_create: out is NULL; pass the address of a "
                                       "crew_pool * to receive the pool");
    if (!cfg) {
        crew_config_init(&defaults);
        cfg = &defaults;
    }
    int sched_kind = 0;
    const crew__sched_ops *sched = NULL;
    crew_hooks hooks;
    int rc = crew__config_check(cfg, &sched, &sched_kind, &hooks);
    if (rc != CREW_OK)
        return rc; /* with its detail */
    unsigned cpus = crew__cpus_count(&hooks);
    unsigned threads = cfg->threads ? cfg->threads : cpus;
    if (cfg->autosize != CREW_AUTOSIZE_OFF) { /* start inside [min, max] */
        unsigned min = cfg->min_threads ? cfg->min_threads : 1;
        threads = threads < min ? min : threads > cfg->max_threads ? cfg->max_threads : threads;
    }

    crew_pool *p = calloc(1, sizeof *p);
    if (!p) {
        free((void *)hooks.cpus);
        return crew__fail(CREW_ENOMEM, "crew_create: out of memory for the pool");
    }
    /* Relaxed: a counter for names, nothing is ordered by it. */
    p->id = crew__fetch_add_relaxed(&next_id, 1u) + 1;
    const char *name = cfg->name ? cfg->name : "crew";
    snprintf(p->name, sizeof p->name, "%.6s", name);
    p->hooks = hooks; /* from here on crew__modules_free frees the CPU list */
    p->stack_size = cfg->stack_size;
    p->spin = cfg->spin;
    p->cpus = cpus;
    crew__atomic_init(&p->timing, (cfg->monitoring ? CREW__TIMING_MONITOR : 0u) |
                                (cfg->autosize ? CREW__TIMING_AUTOSIZE : 0u));
    crew__sched_select(p, sched, sched_kind);
    crew__atomic_init(&p->state, CREW__OPEN);
    crew__atomic_init(&p->pending, 0);
    crew__atomic_init(&p->array_unclaimed, (size_t)0);
    crew__ec_init(&p->work);
    crew__ec_init(&p->quiet);
    crew__ec_init(&p->waiting);
    crew__ec_init(&p->joined);
    crew__joins_init(&p->joins);
    crew__atomic_init(&p->shutdown_dropped, false);
    crew__atomic_init(&p->lookers, 0u);
    crew__atomic_init(&p->watch, 0u);
    crew__atomic_init(&p->halt, 0u);
    crew__atomic_init(&p->nworkers, 0u);
    crew__atomic_init(&p->target, threads); /* the size requested; set_workers sets it again */
    if ((rc = crew__modules_init(p, cfg)) != CREW_OK)
        return rc; /* p is freed */

    pthread_mutex_lock(&p->resize_lock);
    rc = set_workers(p, threads, "crew_create");
    pthread_mutex_unlock(&p->resize_lock);
    if (rc == CREW_OK)
        rc = crew__modules_start(p);
    if (rc != CREW_OK) {
        crew_shutdown(p, CREW_CANCEL);
        crew__modules_free(p);
        return rc;
    }
    *out = p;
    return CREW_OK;
}

int crew_resize(crew_pool *p, unsigned threads) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_resize: the pool is NULL");
    if (threads == 0)
        return crew__fail(CREW_EINVAL, "crew_resize: threads is 0; a pool needs at least 1");
    if (threads > CREW_MAX_THREADS)
        return crew__fail(CREW_EINVAL, "crew_resize: threads is %u; at most CREW_MAX_THREADS (%u)",
                          threads, CREW_MAX_THREADS);
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_resize: " CREW__FORKED_DETAIL);
    /* Seq_cst: an early answer for a closing pool; set_workers checks again under the lock. */
    if (crew__load_seq_cst(&p->state) != CREW__OPEN)
        return crew__fail(CREW_ESHUTDOWN, "crew_resize: the pool is shutting down or shut down");
    pthread_mutex_lock(&p->resize_lock);
    int rc = set_workers(p, threads, "crew_resize");
    pthread_mutex_unlock(&p->resize_lock);
    return rc;
}

unsigned crew_size(const crew_pool *p) {
    /* Relaxed: see struct crew_pool. The cast drops const only to read an atomic. */
    return p ? crew__load_relaxed(&((crew_pool *)p)->target) : 0;
}

/* crew__join_each's view of the worker records (resize_lock held): a thread started and not yet
 * joined is claimed by marking it joined. */
static unsigned workers_count(void *ctx) { return crew__nworkers(ctx); }
static bool claim_worker(void *ctx, unsigned i, pthread_t *thread) {
    crew__worker *w = crew__worker_at(ctx, i);
    if (!w->started || w->joined)
        return false;
    w->joined = true;
    *thread = w->thread;
    return true;
}

#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (the checked library the tests link, debug.h): called by crew_shutdown between
 * its change of the pool's state and its sweep of the timer heap, to hold that window open. */
void (*crew__test_shutdown_closing)(void);
#endif

int crew_shutdown(crew_pool *p, int how) {
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_shutdown: the pool is NULL");
    if (how != CREW_DRAIN && how != CREW_CANCEL)
        return crew__fail(CREW_EINVAL,
                          "crew_shutdown: how is %d; accepted: CREW_DRAIN (0) or CREW_CANCEL (1)",
                          how);
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_shutdown: " CREW__FORKED_DETAIL);
    if (waits_for_itself(p))
        return deadlock("crew_shutdown", p);

    /* The modules' steps (modules.c: the timers' first, then the strategy's, the blocking
     * threads', the controller's): before the state changes, once it has, with the pause
     * lifted, and once nothing is pending. */
    crew__modules_closing(p, how);
    pthread_mutex_lock(&p->lock);
    /* Seq_cst: pairs with the submitters' pending increment and state load (submit.c). */
    crew__store_seq_cst(&p->state, CREW__CLOSING);
    if (how == CREW_CANCEL) /* relaxed: see crew_pool */
        crew__fetch_or_relaxed(&p->halt, CREW__HALT_CANCELLING);
    pthread_mutex_unlock(&p->lock);
#if defined(CREW_ASSERT) && CREW_ASSERT
    if (crew__test_shutdown_closing)
        crew__test_shutdown_closing();
#endif
    crew__modules_close(p, how);
    /* A paused pool resumes: draining needs its threads. Relaxed: the wake-ups below take the
     * lock (see crew_pool). */
    pthread_mutex_lock(&p->lock);
    crew__fetch_and_relaxed(&p->halt, (unsigned char)~CREW__HALT_PAUSED);
    crew__modules_resume_locked(p);
    pthread_mutex_unlock(&p->lock);
    crew__wake_all(p); /* idle workers: drain, then leave; waiters: recheck their groups */
    crew__help_until_quiet(p);
    crew__modules_stop(p); /* then every worker leaves its loop */

    /* No task runs any more, so none is inside crew_resize; every worker leaves its loop.
     * Each thread is claimed under resize_lock and joined without it: a thread may still be
     * in on_stop, calling crew_resize (which takes the lock and finds the pool closed). A
     * concurrent crew_shutdown claims what is left and then waits for every join to end. */
    pthread_mutex_lock(&p->resize_lock);
    crew__join_each(&p->joins, &p->resize_lock, workers_count, claim_worker, p);
    pthread_mutex_unlock(&p->resize_lock);
    return CREW_OK;
}

int crew_pause(crew_pool *p) {
    int rc = crew__pool_check(p, "crew_pause");
    if (rc != CREW_OK)
        return rc;
    pthread_mutex_lock(&p->lock);
    rc = CREW_ESHUTDOWN;
    if (crew__load_seq_cst(&p->state) == CREW__OPEN) { /* seq_cst: see crew_pool */
        crew__fetch_or_relaxed(&p->halt, CREW__HALT_PAUSED); /* relaxed: see crew_pool */
        rc = CREW_OK;
    }
    pthread_mutex_unlock(&p->lock);
    if (rc != CREW_OK)
        return crew__fail(rc, "crew_pause: the pool is shutting down or shut down");
    return rc;
}

int crew_resume(crew_pool *p) {
    int rc = crew__pool_check(p, "crew_resume");
    if (rc != CREW_OK)
        return rc;
    pthread_mutex_lock(&p->lock);
    /* Relaxed: every sleeper looks for work under this lock, and is woken under it here. */
    crew__fetch_and_relaxed(&p->halt, (unsigned char)~CREW__HALT_PAUSED);
    crew__wake_all_locked(p);
    crew__modules_resume_locked(p);
    pthread_mutex_unlock(&p->lock);
    return CREW_OK;
}

int crew_paused(const crew_pool *p) {
    return p && crew__paused(p); /* relaxed: a snapshot */
}

int crew_destroy(crew_pool *p) {
    if (!p)
        return CREW_OK;
    if (crew__forked(p)) /* nothing freed: see crew.h */
        return crew__fail(CREW_EFORKED, "crew_destroy: " CREW__FORKED_DETAIL
                                        " (nothing is freed: the memory is the parent's copy)");
    if (waits_for_itself(p))
        return deadlock("crew_destroy", p);
    crew_shutdown(p, CREW_DRAIN);
    crew__modules_free(p);
    return CREW_OK;
}
