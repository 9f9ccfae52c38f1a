/*
 * graph.h -- task graphs (graph.c): nodes and edges built once, run many times, each run a
 * set of tasks of the graph node kind (kind.h) in the run's group. The public calls are
 * crew.h's crew_graph_*; this header gives the kind's task functions, by which the kind's rows
 * recognise a node's task, and what the pool's other modules (modules.c, diagnose.c) call.
 */
#ifndef CREW_GRAPH_H
#define CREW_GRAPH_H

#include "base.h"

/* The function of every task of a graph run (arg: the node's join counter in its run's block,
 * from which the run and the node are found): runs the node, releases its successors, and
 * ends the run when its last node ends. */
void crew__graph_node(void *arg);
/* The same for a run started while a trace was on: each node's turn is recorded (trace.h). */
void crew__graph_node_traced(void *arg);

/* The pool's registry of its graphs (graph_seen.c), a module of the pool (modules.c): made by
 * crew_create, let go by crew_destroy (it lives on while a graph holds it). */
int crew__graphs_init(crew_pool *p);
void crew__graphs_free(crew_pool *p);
/* For crew_diagnose: every graph run of p in progress, described in lines indented by four
 * spaces, made under the graphs' locks and returned to be written after them: malloc'd text
 * (the caller frees it; NULL when no run is in progress, or out of memory). OUT: *runs, the
 * runs in progress. */
char *crew__graph_runs_describe(crew_pool *p, size_t *runs);

#endif /* CREW_GRAPH_H */
