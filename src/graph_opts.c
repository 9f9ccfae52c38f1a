/*
 * graph_opts.c -- a task graph node's settings beyond its function and priority: the lane its
 * turns go through (crew_graph_node_lane), and the time after its repetition's start by which
 * it must have started (crew_graph_node_start_within). They live beside the nodes, in an array
 * made when a first node gets one (crew_graph.opts), so a node stays 32 bytes; a node that has
 * one is marked OPTS in its successor count, where a run tests for it together with the
 * condition mark (graph_run.c queues such a node through its gate). Setting one is a change of
 * the graph that leaves its edges built (crew__graph_begin_change): not during a run.
 *
 * A lane is held while a node has it (crew__lane_hold, lane.h): crew_lane_destroy answers
 * CREW_EBUSY until the node lets it go (a NULL lane, or the graph's destroy), so a run never
 * meets a freed lane.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_int.h"
#include "lane.h"

/* Check that node is one of g's (g taken for a change) for who. */
static int check_node(const crew_graph *g, crew_node node, const char *who) {
    if (node < g->n)
        return CREW_OK;
    if (node == CREW_NODE_NONE)
        return crew__fail(CREW_EINVAL, "%s: the node is CREW_NODE_NONE (what a failed "
                                       "crew_graph_add gives), not a node", who);
    return crew__fail(CREW_EINVAL, "%s: node %u is not a node of this graph, which has %u "
                                   "node(s)", who, node, g->n);
}

/* Room in g's settings for node (CREW_OK), or CREW_ENOMEM for who, nothing changed. */
static int room(crew_graph *g, crew_node node, const char *who) {
    if (node < g->opts_len)
        return CREW_OK;
    uint32_t len = g->cap; /* room for every node the graph has room for */
    crew__gopts *o = realloc(g->opts, (size_t)len * sizeof *o);
    if (!o)
        return crew__fail(CREW_ENOMEM, "%s: out of memory for the node's settings", who);
    memset(o + g->opts_len, 0, (size_t)(len - g->opts_len) * sizeof *o);
    g->opts = o;
    g->opts_len = len;
    return CREW_OK;
}

/* Node i's OPTS mark, from its settings (the built successor count keeps it). */
static void mark(crew_graph *g, crew_node i) {
    if (g->opts[i].lane || g->opts[i].within)
        g->node[i].nsucc |= CREW__GNODE_OPTS;
    else
        g->node[i].nsucc &= ~CREW__GNODE_OPTS;
}

int crew_graph_node_lane(crew_graph *g, crew_node node, crew_lane *lane) {
    static const char who[] = "crew_graph_node_lane";
    if (g && lane && crew__lane_pool(lane) != g->pool) /* g->pool is fixed */
        return crew__fail(CREW_EINVAL, "%s: the lane belongs to another pool than the graph; a "
                                       "node's lane must be of the graph's pool", who);
    int rc = crew__graph_begin_change(g, who);
    if (rc != CREW_OK)
        return rc;
    if ((rc = check_node(g, node, who)) != CREW_OK)
        return crew__graph_end_change(g, rc);
    if (!lane && node >= g->opts_len) /* nothing to take back */
        return crew__graph_end_change(g, CREW_OK);
    if ((rc = room(g, node, who)) != CREW_OK)
        return crew__graph_end_change(g, rc);
    crew_lane *old = g->opts[node].lane;
    if (lane)
        crew__lane_hold(lane);
    if (old) /* no run uses it now (the graph is taken for a change) */
        crew__lane_let_go(old);
    g->opts[node].lane = lane;
    mark(g, node);
    return crew__graph_end_change(g, CREW_OK);
}

int crew_graph_node_start_within(crew_graph *g, crew_node node, uint64_t ns) {
    static const char who[] = "crew_graph_node_start_within";
    int rc = crew__graph_begin_change(g, who);
    if (rc != CREW_OK)
        return rc;
    if ((rc = check_node(g, node, who)) != CREW_OK)
        return crew__graph_end_change(g, rc);
    if (!ns && node >= g->opts_len) /* nothing to take back */
        return crew__graph_end_change(g, CREW_OK);
    if ((rc = room(g, node, who)) != CREW_OK)
        return crew__graph_end_change(g, rc);
    uint64_t old = g->opts[node].within;
    if (ns && !old) /* the runs read the clock while any node is timed */
        g->timed++;
    else if (!ns && old)
        g->timed--;
    g->opts[node].within = ns;
    mark(g, node);
    return crew__graph_end_change(g, CREW_OK);
}

void crew__graph_opts_free(crew_graph *g) {
    for (uint32_t i = 0; i < g->opts_len; i++)
        if (g->opts[i].lane) /* release: this graph's runs have ended (lane.h) */
            crew__lane_let_go(g->opts[i].lane);
    free(g->opts);
    g->opts = NULL;
    g->opts_len = g->timed = 0;
}
