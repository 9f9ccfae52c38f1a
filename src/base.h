/*
 * base.h -- what every module of crew shares: the task flags and node, thread-local storage,
 * the pause of a spinning thread, the debug-yield points, a thread's number and a per-thread
 * random number.
 */
#ifndef CREW_BASE_H
#define CREW_BASE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "crew.h"
#include "error.h" /* crew__fail: every module reports failures */

/* A waiter runs tasks outside its own group only while fewer task frames than this are on its
 * stack, so helping cannot nest unrelated tasks until the stack overflows. */
#define CREW__HELP_DEPTH_MAX 8u

/* crew_task.crew_flags_ bits. */
#define CREW__TASK_NODE 1u    /* the pool allocated this task (crew_submit): recycle it */
#define CREW__TASK_STAMPED 2u /* timed (monitoring or autosize): see crew__task_submitted_ns */
#define CREW__TASK_COUNTED 4u /* submitted while monitoring was on: counted in the statistics */
#define CREW__TASK_BOUNDED 8u /* holds a place in the bounded queue (pool->bounded.admitted)
                                 until it starts or is dropped */
#define CREW__TASK_DEADLINE 16u /* a crew__node with a start-by time (crew_submit_deadline) */
#define CREW__TASK_BLOCKING 32u /* queued for the blocking threads (CREW_TASK_BLOCKING) */
/* A take's copy of a task that a deque held by value (deque.h), in the taker's buffer: valid
 * until that thread's next take; to queue it again, push it by value or give it a node
 * (crew__task_keep, nodes.c). */
#define CREW__TASK_COPY 64u
#define CREW__TASK_NOTIFY 128u /* a completion callback (crew_notify): never dropped (notify.c) */
#define CREW__TASK_BARRIER 256u /* a lane's barrier (crew_lane_barrier): runs alone (lane.c) */
/* An array's runner (array.c): the run path's rare branch (worker.c) decides whether it runs to
 * its end or a turn at a time, so a thread that runs tasks tests no function per task. */
#define CREW__TASK_RUNNER 512u

/* A timed task's clock readings, in crew_task's private fields (whose public names are fixed
 * by crew.h): when its submission began (ns, crew_now_ns's clock), and how long acceptance
 * took after that (ns, saturated at 2^32 - 1): accepted = submitted + response. */
#define crew__task_submitted_ns(t) ((t)->crew_private_.reserved)
#define crew__task_response_ns(t) ((t)->crew_private_.spare)

/* A crew_submit task: the pool's own memory (nodes.c), with room for a start-by time. */
typedef struct crew__node {
    crew_task task; /* first: a crew_task * of a node points at its crew__node */
    uint64_t start_by; /* CREW__TASK_DEADLINE: drop it if it has not started by then (ns) */
} crew__node;

/* Free crew_submit nodes cached by one thread (a worker's, or a producer's: nodes.h). */
typedef struct crew__node_list {
    crew_task *head; /* linked by crew_private_.gnext */
    unsigned n;
} crew__node_list;

/* crew_pool.timing bits. */
#define CREW__TIMING_MONITOR 1u  /* monitoring is on */
#define CREW__TIMING_AUTOSIZE 2u /* an autosize controller runs */
#define CREW__TIMING_FORKED 4u   /* set in a forked child: sends crew_submit off its fast path */
#define CREW__TIMING_TRACE 8u    /* crew_trace_start: tasks are stamped and recorded (trace.h) */

#define crew__unused(x) ((void)(x))

/* Thread-local variables of the library: the initial-exec model, so that reading one is a single
 * %fs-relative load rather than a call to __tls_get_addr (the default for code compiled as
 * position-independent). crew's few words fit in the static TLS that the C library reserves
 * for libraries loaded later with dlopen. */
#define CREW__TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* The pause between two polls of an idle thread (crew_config.spin counts the polls). Pausing
 * only: yielding in the second half of the spin was measured slower (fork-join on 2 cores with
 * 3 threads: about 1.8 us a round against 0.9-1.9 us; a sched_yield costs about a microsecond). */
static inline void crew__poll_pause(void) {
    for (int k = 0; k < 16; k++)
        crew__cpu_relax();
}

/* Debug-yield (liburcu's DEBUG_YIELD): built with CREW_DEBUG_YIELD, the points marked with
 * crew__debug_yield() give up the processor at random (one time in four), to shake out races
 * in tests; otherwise they compile to nothing. */
#ifdef CREW_DEBUG_YIELD
void crew__debug_yield(void);
#else
#define crew__debug_yield() ((void)0)
#endif

typedef struct crew__worker crew__worker; /* pool.h */

/* A small number for the calling thread, the same in every pool (spreads threads over
 * statistics stripes and external slots; pool.c): inline, since a waiter outside the pool asks
 * for it on every look at its external slot. */
extern CREW__TLS unsigned crew__tls_number; /* crew__thread_number() + 1, or 0 before the first */
unsigned crew__thread_number_first(void);
static inline unsigned crew__thread_number(void) {
    return __builtin_expect(crew__tls_number != 0, 1) ? crew__tls_number - 1
                                                      : crew__thread_number_first();
}

/* A per-thread xorshift generator (no shared state to perturb): victim and queue choice, and
 * the debug-yield points. */
extern CREW__TLS uint32_t crew__tls_rng;
static inline uint32_t crew__rand(void) {
    uint32_t x = crew__tls_rng;
    if (x == 0)
        x = (uint32_t)(uintptr_t)&crew__tls_rng | 1u;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    crew__tls_rng = x;
    return x;
}
/* A random number in [0, n). */
static inline uint32_t crew__rand_below(uint32_t n) {
    return (uint32_t)(((uint64_t)crew__rand() * n) >> 32);
}

#endif /* CREW_BASE_H */
