/*
 * graph.h -- task graphs (graph.c): nodes and edges built once, run many times, each run a
 * set of tasks of the graph node kind (kind.h) in the run's group. The public calls are
 * crew.h's crew_graph_*; this header gives the kind's task function, by which the kind's row
 * recognises a node's task.
 */
#ifndef CREW_GRAPH_H
#define CREW_GRAPH_H

#include "base.h"

/* The function of every task of a graph run (arg: the node's join counter in its run's block,
 * from which the run and the node are found): runs the node, releases its successors, and
 * ends the run when its last node ends. */
void crew__graph_node(void *arg);

#endif /* CREW_GRAPH_H */
