/*
 * dispatch.h -- the one loop by which every kind of crew thread finds work, runs it, spins,
 * sleeps and stops (oneTBB's waiters.h in C): a worker (worker.c), a caller waiting for a group
 * or for a quiet pool, also from inside a task (wait.c), and a blocking thread (blocking.c).
 *
 *   loop:  done?            stop                       (a waiter: its group finished)
 *          take a task      -> run it; stop if run says so
 *          none: idle?      stop                       (a worker: resize marked it)
 *                spin a while, looking again (crew_config.spin polls; CREW_SPIN_AUTO: idle.h)
 *                sleep      (the last look, then the eventcount's sleep, ec.h); stop if told
 *
 * A policy says what the thread may take, when it must stop, and how it sleeps; the loop is the
 * same for all. It is inlined into each caller with the policy a compile-time constant, so the
 * compiler calls the policy's functions directly (the worker's hot loop pays nothing for the
 * abstraction: bench/instr.sh counts the same instructions per task).
 */
#ifndef CREW_DISPATCH_H
#define CREW_DISPATCH_H

#include <stdbool.h>

#include "base.h"
#include "schedule.h"

typedef struct crew__policy {
    /* Optional: checked before each look; true = stop (a waiter whose wait is over). */
    bool (*done)(void *ctx);
    /* A task for this thread, or NULL; what the take did goes to *tc (schedule.h: a lost race
     * that may hide a task, tasks put back). */
    crew_task *(*take)(void *ctx, crew__take_ctx *tc);
    /* Optional: the look found nothing; true = stop (a worker that must leave). */
    bool (*idle)(void *ctx);
    /* The last look and the sleep: returns a task found on the last look, or NULL after
     * waking up; *stop set to end the loop instead (a blocking thread idle too long, a wait
     * that would deadlock). First wakes sleepers for the tasks tc->pushed_back counts. */
    crew_task *(*sleep)(void *ctx, crew__take_ctx *tc, bool *stop);
    /* Run t (or put it back); true = stop after it. First wakes sleepers for the tasks
     * tc->pushed_back counts (put back by the take that found t). */
    bool (*run)(void *ctx, crew_task *t, crew__take_ctx *tc);
    /* Optional: the polls of an idle stretch that begins now, when the pool's spin is
     * CREW_SPIN_AUTO (idle.h); NULL: none. */
    unsigned (*polls)(void *ctx);
    /* After a lost race: look again at once (a waiter, whose own task is probably the one
     * contended for), rather than after a pause counted as a spin (a worker, which backs off). */
    bool retry_at_once;
} crew__policy;

/* Run the loop until the policy says stop. tc: the takes' context, the caller's (its inputs
 * set; tasks the takes put back and no one has woken a thread for yet are left in
 * tc->pushed_back when the loop stops: the caller wakes sleepers for them). spin: polls
 * before sleeping (crew_config.spin), or CREW_SPIN_AUTO: pol->polls's, asked as each idle
 * stretch begins (its first look that finds nothing). */
static inline __attribute__((always_inline)) void crew__dispatch(const crew__policy *pol,
                                                                 void *ctx, crew__take_ctx *tc,
                                                                 unsigned spin) {
    unsigned spins = 0, polls = 0; /* polls: this idle stretch's, set as it begins */
    for (;;) {
        if (pol->done && pol->done(ctx))
            return;
        tc->retry = false;
        crew_task *t = pol->take(ctx, tc);
        if (!t) {
            if (pol->idle && pol->idle(ctx))
                return;
            if (tc->retry && pol->retry_at_once)
                continue;
            if (spins == 0)
                polls = spin != CREW_SPIN_AUTO ? spin : pol->polls ? pol->polls(ctx) : 0;
            if (tc->retry || spins < polls) {
                spins++;
                crew__poll_pause();
                continue;
            }
            spins = 0;
            bool stop = false;
            t = pol->sleep(ctx, tc, &stop);
            if (stop)
                return;
            if (!t)
                continue;
        }
        if (pol->run(ctx, t, tc))
            return;
        spins = 0;
    }
}

#endif /* CREW_DISPATCH_H */
