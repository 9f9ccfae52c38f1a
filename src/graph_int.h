/*
 * graph_int.h -- what graph.c (building a graph, the public calls), graph_run.c (its runs),
 * graph_sub.c (nodes that run another graph), graph_opts.c (a node's lane and start-by time)
 * and graph_seen.c (names, the pool's registry of graphs, crew_diagnose's view of runs) share:
 * the graph, its nodes, a run's block. No other file includes it.
 */
#ifndef CREW_GRAPH_INT_H
#define CREW_GRAPH_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

/* A node's id in a run (crew__gword.id): bit 31 of its number once it has started. */
#define CREW__GRAPH_RAN 0x80000000u
/* Node numbers are below this (the source takes number n, and RAN must stay clear). */
#define CREW__GRAPH_NODES_MAX 0x7ffffffeu
/* Edges in a graph, at most; a node's successors, at most CREW__GNODE_SUCC (its count keeps
 * bits 31 and 30 for COND and OPTS: a run refuses a graph with more, CREW_ERANGE). */
#define CREW__GRAPH_EDGES_MAX 0x7fffffffu

/* crew__gword.owed: bit 31 while a turn of the node is queued as a task (set before it is
 * submitted, cleared when that task starts it or is dropped), for crew_diagnose; the other bits
 * count owed turns. */
#define CREW__GWORD_QUEUED 0x80000000u
#define CREW__GWORD_OWED 0x7fffffffu

/* crew__gnode.nsucc: bit 31 marks a condition node, bit 30 a node with a lane or a start-by
 * time (crew_graph.opts; a run queues it through its gate, graph_run.c), the rest counts its
 * successors. The source's (never COND nor OPTS) counts the roots in all 31 bits. */
#define CREW__GNODE_COND 0x80000000u
#define CREW__GNODE_OPTS 0x40000000u
#define CREW__GNODE_SUCC 0x3fffffffu

/* One node: 32 bytes. */
typedef struct crew__gnode {
    union {
        crew_fn fn;                 /* a plain node */
        uint32_t (*cond)(void *arg); /* a condition node (CREW__GNODE_COND) */
    } f;
    void *arg;
    uint32_t priority;
    uint32_t npred; /* predecessors that are not condition nodes (its join count); built */
    uint32_t first; /* its first successor in crew_graph.succ; built */
    uint32_t nsucc; /* CREW__GNODE_COND | CREW__GNODE_OPTS | successors; built */
} crew__gnode;

/* A node's settings beyond its function (graph_opts.c), for the nodes marked OPTS. */
typedef struct crew__gopts {
    crew_lane *lane; /* its tasks go through this lane (a reference held: lane.h), or NULL */
    uint64_t within; /* ns after its repetition's start by which it must start, or 0 */
} crew__gopts;

/* The function a node is reported and named by: a condition's converted (never called so). */
static inline crew_fn crew__gnode_fn(const crew__gnode *nd) {
    return nd->nsucc & CREW__GNODE_COND ? (crew_fn)(void (*)(void))nd->f.cond : nd->f.fn;
}

/* Why a run left nodes unstarted (grun.stopped, bits). */
#define CREW__GRAPH_STOP_CANCEL 1u   /* its group was cancelled, or a queued node dropped */
#define CREW__GRAPH_STOP_SHUTDOWN 2u /* a cancelling shutdown */
#define CREW__GRAPH_STOP_EXPIRED 4u  /* a node's start-by time passed (graph_opts.c) */

typedef struct crew__grun grun;
typedef struct crew__graphs crew__graphs;

/* crew_graph.state: CHANGING while a call changes (or destroys) the graph, plus RUN_ONE per
 * run in progress (and per crew_graph_dump_dot reading it). */
#define CREW__GRAPH_CHANGING 1u
#define CREW__GRAPH_RUN_ONE 2u

struct crew_graph {
    crew_pool *pool; /* fixed */
    /* See CREW__GRAPH_CHANGING. A change takes it from 0 by CAS (acquire: after every run's
     * end), a run adds RUN_ONE by CAS unless CHANGING is set (acquire: after the last change),
     * and gives it back with release once it no longer reads the graph. */
    _Atomic uint64_t state;
    /* The successor arrays are built for the graph as it is (release by the builder under
     * lock, acquire by a run that finds it set; cleared by a change, when no run reads it). */
    _Atomic bool ready;
    pthread_mutex_t lock; /* building the successor arrays; the cache of run blocks */
    crew__gnode *node;    /* n nodes, then the source (room for cap + 1) */
    uint32_t n, cap;
    /* While changed: the edges in the order they were linked, (before, after) pairs; NULL once
     * built into succ (in_csr), until the next change unfolds them again. */
    uint32_t *edge;
    size_t nedge, edge_cap;
    bool in_csr;
    /* Built: every node's successors in link order (node[i].first, nsucc), then the roots
     * (the source's successors); nedge + roots entries. */
    uint32_t *succ;
    /* Built: a cycle that no condition closes, up to 8 of its nodes in edge order (cycle_len
     * 0: none; cycle_whole: the 8 are all of it). */
    uint32_t cycle_len;
    bool cycle_whole;
    uint32_t cycle[8];
    uint32_t bad; /* a build's CREW_ERANGE: the node with too many successors (lock held) */
    grun *free_runs; /* lock: run blocks to reuse */
    grun *live;      /* lock: the runs in progress (crew_diagnose reads them under lock) */
    /* Node names (crew_graph_name_node): names_len entries, NULL for "node N"; changed only
     * as the graph is (CHANGING), read by runs and, under lock with a run live, diagnose. */
    char **names;
    uint32_t names_len;
    /* The pool's registry (graph_seen.c), which outlives the pool while a graph holds it; the
     * links are the registry's lock's. */
    crew__graphs *reg;
    crew_graph *reg_next, *reg_prev;
    /* Node settings (graph_opts.c): opts_len entries (a node marked OPTS is below it), and how
     * many nodes have a start-by time (a run reads the clock at its start only if any do).
     * Changed only as the graph is (CHANGING), read by runs. */
    crew__gopts *opts;
    uint32_t opts_len, timed;
    /* The graphs this graph's nodes run (graph_sub.c: children_len entries, one per such
     * node), under graph_sub.c's lock of the process. */
    crew_graph **children;
    uint32_t children_len, children_cap;
    unsigned forks; /* the process's fork count at its creation (graph_seen.c) */
    /* Nodes of other graphs that run this one (graph_sub.c); while not 0, crew_graph_destroy
     * answers CREW_EBUSY. Changed and read under graph_sub.c's lock of the process (relaxed:
     * the lock orders them). */
    _Atomic uint32_t users;
};

/* Node i's name, or NULL (then it is "node i"). */
static inline const char *crew__graph_name(const crew_graph *g, uint32_t i) {
    return i < g->names_len ? g->names[i] : NULL;
}

/* A node's words in a run's block (see graph_run.c). */
typedef struct crew__gword {
    /* Its join counter: predecessors still to finish for its next turn (below 0: some
     * finished for the turn after already). Counted down with acq_rel by its predecessors;
     * re-armed (+npred, acq_rel) by the one that took it to 0 (graph_run.c: rearm). */
    _Atomic int32_t cnt;
    /* Its number, never changed during a run (a queued task finds its block from it), | RAN
     * once it has started. Relaxed: written before its task is queued or by the node itself;
     * RAN read by the run's finisher after outstanding's acq_rel. */
    _Atomic uint32_t id;
    /* Turns of it whose submission was refused, owed to the run_from that holds it on its
     * list (graph_run.c: owe), | CREW__GWORD_QUEUED; 0 between runs (the block is zeroed when
     * made). Changed by RMWs only (several threads may): acq_rel for the count (see owe),
     * relaxed for QUEUED (a hint for crew_diagnose). */
    _Atomic uint32_t owed;
    uint32_t link; /* the next node on that list: its owner's alone (see owe) */
} crew__gword;

/* A run's block (see graph_run.c). */
struct crew__grun {
    crew_graph *g;
    grun *next, *prev; /* g->lock: in g->free_runs (next only), or in g->live */
    crew_fn task_fn;   /* its tasks' function: crew__graph_node, or _traced (fixed per run) */
    uint32_t trace_run; /* traced: its number in the trace, per repetition (one writer a time) */
    uint64_t t0; /* its repetition's start (crew_now_ns), if its graph has timed nodes, else 0 */
    /* Its words are set for the run (release, after crew__graph_run_init; acquire by
     * crew_diagnose, which skips a run not yet shown). */
    _Atomic bool shown;
    uint64_t reps; /* repetitions still to start after this one: its finisher's alone */
    uint32_t cap;  /* nodes it has room for */
    /* The run's node tasks queued or running (a node run on its finisher's thread inherits its
     * unit), 1 for the source at the start; see graph_run.c for the orders. */
    _Atomic uint32_t outstanding;
    _Atomic unsigned stopped; /* CREW__GRAPH_STOP_* bits; relaxed (graph_run.c: stop) */
    crew__gword e[]; /* cap + 1: the nodes', then the source's */
};

/* graph.c: add a node (fn, or a condition cond) as crew_graph_add does; who: the public call. */
int crew__graph_add_node(crew_graph *g, crew_fn fn, uint32_t (*cond)(void *), void *arg,
                         uint32_t priority, crew_node *out, const char *who);
/* graph_sub.c: g is to be destroyed (CHANGING held): CREW_OK, and the graphs its nodes run are
 * no longer used by it; or CREW_EBUSY (with its detail) if g is a node of another graph. */
int crew__graph_drop_children(crew_graph *g);
/* graph_opts.c: g is being destroyed: its nodes' lanes are let go, the settings freed. */
void crew__graph_opts_free(crew_graph *g);
/* graph_run.c: the function of a gated node's task (arg: its word), which starts the node
 * without its gate; kind.h's graph gated row. */
void crew__graph_node_gated(void *arg);

/* graph_run.c: every node's word reset for a run of r->g (outstanding: 1). */
void crew__graph_run_init(grun *r);
/* graph.c: run r has ended: its block back to the cache, the run back to g (release); g is
 * not read after this. */
void crew__graph_run_done(crew_graph *g, grun *r);

/* graph.c: take g for a change of a setting that leaves its edges as they are (a name, a
 * lane, a start-by time: the successor lists stay built) (CREW_OK; or the error, for who, the
 * public call), and give it back (rc passes through). */
int crew__graph_begin_change(crew_graph *g, const char *who);
int crew__graph_end_change(crew_graph *g, int rc);

/* graph_seen.c: enter g in its pool's registry (crew_graph_create; CREW_OK or CREW_ENOMEM),
 * and take it out (crew_graph_destroy; the registry may outlive the pool). */
int crew__graph_register(crew_graph *g);
void crew__graph_unregister(crew_graph *g);
/* graph_seen.c: was g made in a parent process, before a fork()? (Then it is the parent's.) */
bool crew__graph_forked(const crew_graph *g);
/* graph_seen.c: free g's names (crew_graph_destroy). */
void crew__graph_names_free(crew_graph *g);
/* graph_run.c: a traced run's next repetition gets its number in the trace. */
void crew__graph_trace_number(grun *r);

#endif /* CREW_GRAPH_INT_H */
