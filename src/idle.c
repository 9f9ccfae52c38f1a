/*
 * idle.c -- how long an idle thread polls for work before it sleeps, under CREW_SPIN_AUTO (the
 * default of crew_config.spin; a number the user sets is used as it is, by dispatch.h).
 *
 * Polling before sleeping pays when the thread has a CPU to itself: a task queued within the
 * polls starts without a wake-up (fork-join rounds, spawn-and-wait). It costs when the pool's
 * awake threads outnumber the CPUs: each poll is then CPU time taken from a thread that still
 * has a task, and the idle thread finds nothing sooner for it (the burst of docs/benchmarks.md:
 * P workers and the caller on 2 cores, where the polls were 4-13% of a call's CPU time). So an
 * idle stretch polls CREW__IDLE_POLLS times while the awake threads are no more than the CPUs,
 * and not at all while they are more (oneTBB's workers, which yield instead, measure the same).
 *
 * Awake threads: the pool's workers (the size last asked for) less those asleep on pool->work.
 * Callers waiting from outside are not counted, though they run tasks when they help: counting
 * the asking one (a waiter from outside, one runner more) stopped the polls of fib's waits on 2
 * workers and 2 cores, where they pay (measured slower), and counting every one would cost each
 * outside wait two read-modify-writes on a shared line. A guess, read once as each idle stretch
 * begins, without a fence or a lock: the sleepers on pool->work include outside callers asleep
 * in a wait that may take any task (so it may count awake workers too few, and poll where the
 * old fixed default polled too), a worker blocked inside its task counts as awake, and other
 * processes' threads are not seen at all.
 */
#include "atomic.h"
#include "ec.h"
#include "pool.h"
#include "idle.h"

unsigned crew__idle_polls(crew_pool *p) {
    /* Relaxed: a plain number (see crew_pool.target), and this is a guess. */
    unsigned threads = crew__load_relaxed(&p->target);
    unsigned asleep = crew__ec_sleepers_hint(&p->work);
    unsigned awake = threads > asleep ? threads - asleep : 0;
    return awake <= p->cpus ? CREW__IDLE_POLLS : 0;
}

unsigned crew__idle_asleep(crew_pool *p) { return crew__ec_sleepers_hint(&p->work); }
