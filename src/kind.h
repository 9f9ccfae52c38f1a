/*
 * kind.h -- the kinds of task (kind.c): what a special task does where it differs from a plain
 * one, so that the generic code (drop.c, a pause's or a resize's put-back, the timeline, the
 * diagnostics) never asks which kind it holds.
 *
 * A plain task (the user's fn, a completion callback, a delayed task) has no kind: NULL. A
 * special task is recognised by its function, which only its own module's code puts in a task;
 * each kind's row (a crew__kind) is defined in that module, beside the function, and the one
 * table of kind.c lists the rows. Adding a kind is one module that defines its row, one extern
 * below and one line in kind.c's table; no other file learns of it (oneTBB gives each task type
 * its own execute and cancel in the same way).
 *
 * The rows are consulted only on rare paths: a drop, a put-back, a timed (monitored or traced)
 * run, crew_diagnose. The run path never looks a task's kind up: it runs t->fn(t->arg), which is
 * each kind's run. Its one exception is the array runner's, which the run path's single test of
 * the flags singles out by CREW__TASK_RUNNER (base.h), set where array.c makes its runners, so
 * that a waiter can run a runner a turn at a time, and so that a runner, which holds no unit of
 * its group (outside_group), is run without a look at its group (worker.c's run_runner).
 */
#ifndef CREW_KIND_H
#define CREW_KIND_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"

/* One kind of special task: its module's row. */
typedef struct crew__kind {
    crew_fn fn;       /* the function of its tasks: how one is recognised */
    const char *name; /* what it is, for the diagnostics and the tests: "join half", ... */
    /* Its drop loses no task: it ends as run (CREW__RAN), counts in no drop statistic, and a
     * cancelling shutdown that drops it has not lost a task for it (crew_wait_all). */
    bool not_lost;
    /* Its task names a group's slot (so that the group's waiters find it) but holds no unit of
     * the group's count, which may have finished, the slot passed to a later group: its end,
     * or its drop, counts in pending only, and the slot's state is never taken for its group's
     * (an array's runner, array.c). */
    bool outside_group;
    /* A queued task of the kind (its arg; slot: its group's, 0 if outside_group) is dropped
     * instead of run, by drop.c, after its place and node are given back and before it is
     * counted finished (by_shutdown: a cancelling shutdown's drop, as crew__task_dropped's).
     * Done in place of on_drop(fn, arg); NULL: on_drop as for a plain task. */
    void (*dropped)(crew_pool *p, void *arg, uint32_t slot, bool by_shutdown);
    /* The same for a task of the kind whose start-by time passed (crew__task_expired), in
     * place of dropped; NULL: dropped (with by_shutdown false). */
    void (*expired)(crew_pool *p, void *arg, uint32_t slot);
    /* A thread took t but a pause or a resize keeps it from running it: its own way back (it
     * then ends t), in place of a requeue in front of its queue; NULL: requeued. */
    void (*hand_back)(crew_pool *p, crew_task *t);
    /* The function t is named by in the timeline and crew_diagnose; NULL: t->fn. */
    crew_fn (*fn_of)(const crew_task *t);
} crew__kind;

/* The rows, each defined in its kind's module (kind.c's table lists them). */
extern const crew__kind crew__join_kind;  /* join.c: a crew_join's offered half */
extern const crew__kind crew__array_kind; /* array.c: an array's runner */
extern const crew__kind crew__lane_kind;  /* lane.c: a lane's runner */
extern const crew__kind crew__timer_kind; /* timer.c: a periodic timer's run */
extern const crew__kind crew__graph_kind; /* graph_run.c: a task of a graph's run */
extern const crew__kind crew__graph_traced_kind; /* graph_run.c: the same, its run traced */
extern const crew__kind crew__graph_gated_kind; /* graph_run.c: a node with a lane or start-by */

/* The kind of t, NULL for a plain task. Walks the table: for the rare paths only. */
const crew__kind *crew__kind_of(const crew_task *t);
/* The function t is named by (the timeline, crew_diagnose): its kind's fn_of, else t->fn. */
crew_fn crew__kind_fn_of(const crew_task *t);
/* A pause or a resize keeps the thread that took t from running it: true if t's kind took it
 * back its own way (t has ended), false if the caller must requeue it. */
bool crew__kind_hand_back(crew_pool *p, crew_task *t);

#endif /* CREW_KIND_H */
