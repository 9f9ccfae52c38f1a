/*
 * trace.h -- the task timeline (trace.c; trace_json.c writes its file): crew_trace_start/stop
 * record, per thread, when each task ran, when a thread waited in crew_wait or crew_wait_all,
 * and when it slept, and write them as Chrome Trace Event Format JSON (Perfetto,
 * chrome://tracing).
 *
 * A task graph's run started while a trace runs is recorded node by node (graph_run.c calls
 * crew__trace_node for each node's turn): a slice per turn, named after the node, and an edge
 * event per edge the node took, which the writer matches with the successor's slice and writes
 * as a pair of flow events (Perfetto and chrome://tracing draw them as arrows).
 *
 * Recording costs a task nothing while no trace runs: crew_trace_start sets
 * CREW__TIMING_TRACE in pool->timing, so tasks submitted from then on are stamped like
 * monitoring's and take worker.c's cold run_timed, which records them here. Sleeps and waits
 * are recorded on paths that already sleep or wait.
 *
 * Memory. Each thread that records gets a ring of its own (a fixed number of events; when it
 * is full the oldest event is overwritten and counted as dropped), written by that thread
 * alone, without a lock. The ring's header lives until crew_destroy (threads keep a pointer to
 * it in a thread-local cache); its events are allocated by the owner at its first event of a
 * trace and freed by crew_trace_stop.
 *
 * Handshake between a recording thread and crew_trace_stop (Dekker's pattern, all seq_cst):
 *   owner:  busy = 1;  if (state is on) write the event;  busy = 0 (release)
 *   stop:   state = off;  for each ring: wait until busy == 0 (acquire);  read the rings
 * Either the owner sees the trace off and writes nothing, or stop sees busy set and waits for
 * the write to end: once stop has seen every busy at 0 after turning the trace off, no thread
 * touches a ring's events until the next crew_trace_start, which publishes its settings by its
 * (seq_cst) store of state.
 */
#ifndef CREW_TRACE_H
#define CREW_TRACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base.h"

#define CREW__TRACE_DEFAULT_EVENTS 65536u /* events per thread (crew_trace_start) */
#define CREW__TRACE_MAX_EVENTS (1u << 24) /* at most, per thread (crew_trace_start_ex) */

/* What an event is. */
enum crew__trace_kind {
    CREW__TR_TASK = 0, /* a task, run by a worker or a blocking thread from its loop */
    CREW__TR_HELP = 1, /* a task run by a thread that was waiting (crew_wait, crew_wait_all) */
    CREW__TR_WAIT = 2, /* crew_wait or crew_wait_all, from its first look to its return */
    CREW__TR_SLEEP = 3, /* the thread was asleep (a worker idle, or a waiter) */
    CREW__TR_NODE = 4,  /* a turn of a graph node (run, node; fn: its name, or 0) */
    CREW__TR_EDGE = 5   /* an edge a node took (run, node -> to; start, end: the node's turn) */
};

typedef struct crew__trace_ev {
    uint64_t start_ns, end_ns; /* crew_now_ns's clock */
    uintptr_t fn;              /* the task's function (0 for waits and sleeps); NODE: its
                                  name as interned in the ring (0: "node N") */
    uint32_t slot, gen;        /* the group, as its public handle (0/0: none) */
    uint32_t run, node, to;    /* NODE, EDGE: the graph run's number, the node; EDGE: the
                                  successor */
    uint8_t kind;              /* enum crew__trace_kind */
    uint8_t stolen;            /* taken by a steal (the work-stealing strategy) */
} crew__trace_ev;

/* One thread's events. */
typedef struct crew__trace_ring {
    struct crew__trace_ring *next; /* trace.lock: the pool's list */
    pthread_t owner;               /* the thread that records here */
    long tid;                      /* its kernel thread id (Linux), for the JSON */
    char name[16];                 /* its name when the ring was made */
    /* 1 while the owner looks at the trace's state and writes an event (see the top of this
     * file): stored seq_cst (1) and release (0) by the owner, loaded seq_cst by stop. */
    _Atomic int busy;
    /* Written by the owner while busy, and by crew_trace_stop once every owner is quiet: */
    uint64_t session;   /* the trace these events belong to */
    uint64_t head;      /* events recorded in that trace (the ring keeps the last cap) */
    uint64_t lost;      /* events lost because their buffer could not be allocated */
    size_t cap;         /* events room */
    crew__trace_ev *ev; /* NULL until the owner's first event in a trace */
    uint64_t last_stolen; /* owner: its worker's steal count at its last task (trace.c) */
    /* Node names copied in this trace (NODE events point to them), an open-addressing table
     * of names_cap entries (a power of 2, 0 until the first); as ev. */
    char **names;
    uint32_t names_cap, nnames;
} crew__trace_ring;

/* Tracing's state, which struct crew_pool points to (crew__trace_init makes it). */
typedef struct crew__trace {
    /* (session number << 1) | on. Stored seq_cst under lock by start and stop; loaded seq_cst by
     * recording threads (see the top of this file). */
    _Atomic uint64_t state;
    pthread_mutex_t lock; /* start and stop, the fields below, the list of rings */
    crew__trace_ring *rings, **tail;
    uint64_t sessions;  /* the last session number */
    FILE *f;            /* the trace's output, opened by start */
    size_t cap;         /* events per thread in this trace */
    uint64_t t0;        /* when it started (ns) */
    /* The last number given to a traced graph run (relaxed: a number, nothing more). */
    _Atomic uint32_t graph_runs;
} crew__trace;

/* A task about to run under a trace (worker.c's run_timed): what it records at the end. */
typedef struct crew__trace_task {
    crew__trace_ring *ring;
    crew__trace_ev ev;
} crew__trace_task;

/* Is a trace on? A hint (relaxed: see struct crew_pool's timing); recording re-checks. */
#define crew__tracing(p) ((crew__load_relaxed(&(p)->timing) & CREW__TIMING_TRACE) != 0)

/* Before t runs (its fields are read here, while the pool still owns them): false if nothing
 * is to be recorded (no memory for the thread's ring). */
bool crew__trace_task_begin(crew_pool *p, const crew_task *t, crew__trace_task *tt);
void crew__trace_task_end(crew_pool *p, crew__trace_task *tt, uint64_t start_ns,
                          uint64_t end_ns);
/* A wait (group: the local handle waited for, or CREW_HANDLE_NONE for crew_wait_all) or a
 * sleep that began at start_ns and ends now. */
void crew__trace_span(crew_pool *p, enum crew__trace_kind kind, crew_handle group,
                      uint64_t start_ns);

/* A task graph's run (or repetition), when it starts while a trace is on: its number. */
uint32_t crew__trace_run_number(crew_pool *p);
/* A turn of node `node` of the traced graph run `run` (in group, the local handle) ran from
 * start_ns to end_ns; name: the node's name (copied here) or NULL ("node N"); to[0..nto): the
 * successors its end released (the edges it took), each drawn as an arrow to that successor's
 * first turn in the run that starts after end_ns. */
void crew__trace_node(crew_pool *p, crew_handle group, uint32_t run, uint32_t node,
                      const char *name, uint64_t start_ns, uint64_t end_ns, const uint32_t *to,
                      uint32_t nto);

/* trace_json.c: write the trace of session to p->trace->f (every ring's owner quiet; the
 * rings' events are sorted in place). OUT: events written (the slices), and dropped. */
void crew__trace_write(crew_pool *p, uint64_t session, uint64_t *events, uint64_t *dropped);

int crew__trace_init(crew_pool *p);  /* crew_create */
/* crew_destroy, after every pool thread has stopped: a trace still running is written as by
 * crew_trace_stop (a failure is not reported), then everything is freed. */
void crew__trace_free(crew_pool *p);

#endif /* CREW_TRACE_H */
