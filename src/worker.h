/*
 * worker.h -- a worker's record (made by pool.c), and the worker loop, running a task and
 * counting it finished (worker.c).
 */
#ifndef CREW_WORKER_H
#define CREW_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "diagnose.h" /* crew__busy */
#include "ec.h"
#include "drop.h" /* crew__task_dropped: whoever runs tasks may drop one instead */
#include "group.h"
#include "schedule.h" /* crew__sched_local */

struct crew__tstats; /* stats.h */

enum crew__worker_state {
    CREW__W_RUNNING = 0, /* takes tasks */
    CREW__W_MARKED = 1,  /* resize asked it to exit after its current task; may be revived */
    CREW__W_EXITED = 2   /* left its loop (it may still be in on_stop: joinable once gone) */
};

typedef struct crew__worker {
    crew_pool *pool;  /* owner */
    pthread_t thread; /* valid when started */
    unsigned index;   /* position in pool->workers, for the thread name */
    /* Transitions under pool->lock by compare-and-swap (Jendersie et al., §III-E): relaxed, the
     * lock orders them; lock-free readers take it as a hint, and a worker re-checks its own
     * state after taking a task (worker.c). */
    _Atomic int state;
    bool started; /* resize_lock: thread was created */
    bool joined;  /* resize_lock: thread was joined, or claimed by crew_shutdown to join */
    /* Returned from on_stop, touches nothing more: release by the thread, acquire by the join. */
    _Atomic bool gone;
    crew__ec_sleeper sleeper; /* its sleep on pool->work (node data: this record); its own */
    struct crew__tstats *_Atomic stats; /* monitoring block, made on first use (release) */
    _Atomic uint64_t stolen; /* tasks it stole: written by it, read by statistics (relaxed) */
    uint64_t stolen_base;    /* stats_lock: stolen at the last crew_stats_reset */
    crew__slot_cache slots;  /* owner: free group slots cached by this worker */
    crew__node_list nodes;   /* owner: free crew_submit nodes cached by this worker */
    /* Units of pool->pending it holds but no task uses (pending.h): written by the owner only
     * (relaxed), read relaxed by crew_stats_get. */
    _Atomic size_t credit;
    crew__sched_local sched; /* the strategy's part of this worker (schedule.h) */
    crew__busy busy;         /* its task now, for crew_diagnose */
} crew__worker;

/* A task running on this thread; frames chain through the stack when a waiting task helps. */
typedef struct crew__frame {
    crew_pool *pool;         /* whose task this is */
    struct crew__frame *up;  /* the frame below, or NULL */
    unsigned depth;          /* frames on the stack, this one included */
    crew_handle group;       /* the task's own group, {0, 0} if none */
    int64_t mark;            /* crew__sched_mark when the task started */
} crew__frame;

/* The innermost running task on this thread, NULL outside tasks. */
extern CREW__TLS crew__frame *crew__tls_frame;
/* The worker this thread is, NULL for other threads. */
extern CREW__TLS crew__worker *crew__tls_worker;

void *crew__worker_main(void *arg);
/* Name the calling thread "<pool name>-<pool id>-<role>" (cut to what the system keeps). */
void crew__name_thread(const crew_pool *p, const char *role);
/* Is a task of p running on this thread (anywhere on its stack)? */
bool crew__in_task_of(const crew_pool *p);
/* Is a task of group g of p running on this thread (anywhere on its stack)? */
bool crew__in_group(const crew_pool *p, crew_handle g);
/* Run a task taken with crew__sched_take*, then count it finished (the caller has woken
 * sleepers for the tasks the take put back). */
void crew__run(crew_pool *p, crew_task *t);
/* Which array runners (array.h) a thread runs to their end (crew__run_helping's whole): all,
 * none (each a turn at a time: worker.c's run_runner), or a group slot's (any other value). */
#define CREW__RUNNERS_WHOLE UINT32_MAX
#define CREW__RUNNERS_TURNS (UINT32_MAX - 1u)
/* The same for a thread that helps while it waits, whose worker record for p is self
 * (crew__self): a task of no group that it runs outside a worker is counted in *finished, which
 * it returns with crew__pending_sub (pending.h) before it looks for sleep or stops looking. An
 * array's runner runs to its end if its wait covers it (whole: a wait for a quiet pool, or for
 * the runner's own group), else one turn (then it is queued again, so that the waiter goes back
 * to its wait, which may be over, instead of running until the whole array is claimed). top:
 * the frame the task runs in, its pool, up (crew__tls_frame) and depth set by the caller once
 * for all the tasks it runs; the group and mark are set here per task. */
void crew__run_helping(crew_pool *p, crew__worker *self, crew_task *t, size_t *finished,
                       crew__frame *top, uint32_t whole);

/* STEAL's run_batch (schedule.h; sched_steal.c's table): worker w's loop runs its shared batch
 * (steal_batch.h, worker_batch.c) after a task that its take said came from one
 * (crew__take_ctx.batch): the batch's plain tasks, each claimed as it comes up, in frame (the
 * loop's: pool, up and depth set). Returns a task it claimed but did not run (not plain, or
 * something to check: the caller runs it as a taken task, then calls again), or NULL: the
 * batch is empty, or w's own deque holds a task. */
crew_task *crew__batch_run(crew_pool *p, crew__worker *w, crew__frame *frame);

#if defined(CREW_ASSERT) && CREW_ASSERT
/* Tests only (the checked library the tests link, debug.h; defined in worker.c): called with
 * each task a worker has taken, before it checks whether resize marked it. */
extern void (*crew__test_after_take)(crew_task *t);
#define CREW__TEST_AFTER_TAKE_SET (crew__test_after_take != NULL)
#else
#define CREW__TEST_AFTER_TAKE_SET false
#endif

#endif /* CREW_WORKER_H */
