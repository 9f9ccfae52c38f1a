/*
 * graph_sub.c -- a node that runs a whole other graph (crew_graph_add_graph): the node's
 * function starts one run of the child graph and waits for it (crew_wait: the thread helps),
 * so the child runs as one node of its parent. It owns the checks that keep such nodes
 * sound: a graph never contains itself, however deep, and a graph that is a node of another
 * is not destroyed while that other exists (crew_graph.users). The graph's building and runs
 * are graph.c's and graph_run.c's; this file adds its nodes through graph.c's.
 *
 * Every crew_graph_add_graph call runs under one lock of the process (add_lock), so two calls
 * that would each close half of a cycle of graphs cannot both pass the check. Each graph keeps
 * the list of the graphs its nodes run (crew_graph.children), changed and read only under
 * add_lock, and the check walks those lists: it reads no node and holds no graph, so a
 * building call or a run of a graph on the way is never refused for it. The count of
 * a graph's users (crew_graph.users) is changed and read under add_lock too, by the destroy
 * of the graph (which refuses while it is not 0) and of its parents (which let it go).
 */
#include <pthread.h>
#include <stdlib.h>

#include "graph.h"
#include "graph_int.h"
#include "pool.h"
#include "worker.h"

static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;

/* fork(): add_lock is held across it (no lock is taken under add_lock but a graph's state,
 * by compare-and-swap), so the child's copy is free, whatever the parent's threads did. */
static void fork_prepare(void) { pthread_mutex_lock(&add_lock); }
static void fork_done(void) { pthread_mutex_unlock(&add_lock); }
static void watch_forks(void) { pthread_atfork(fork_prepare, fork_done, fork_done); }
static pthread_once_t watching = PTHREAD_ONCE_INIT;

/* Take add_lock (watching for fork() first: every taker of the lock does). */
static void lock_add(void) {
    pthread_once(&watching, watch_forks);
    pthread_mutex_lock(&add_lock);
}

/* The function of a node that runs a graph (arg: the child). A child run that cannot start or
 * that ends cancelled cancels the parent's run, so that the nodes after this one do not start
 * and the parent's wait reports CREW_ECANCELED. */
static void run_child(void *arg) {
    crew_graph *c = arg;
    crew_handle h = CREW_HANDLE_NONE;
    int rc = crew_graph_run(c, &h);
    if (rc == CREW_OK)
        rc = crew_wait(c->pool, h);
    if (rc != CREW_OK) {
        crew_handle me = crew_current_group();
        if (me.slot != 0 && crew__tls_frame)
            (void)crew_cancel(crew__tls_frame->pool, me);
    }
}

/* Room for need entries in both arrays (0), or CREW_ENOMEM (both as they were). */
static int grow(crew_graph ***stack, crew_graph ***seen, size_t *cap, size_t need) {
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) /* a graph may run more graphs than twice the room so far */
        nc *= 2;
    crew_graph **a = realloc(*stack, nc * sizeof *a);
    if (!a)
        return CREW_ENOMEM;
    *stack = a;
    crew_graph **b = realloc(*seen, nc * sizeof *b);
    if (!b)
        return CREW_ENOMEM;
    *seen = b;
    *cap = nc;
    return 0;
}

/* Whether from contains target (is it, or runs it through nodes, however deep): 1 yes, 0 no,
 * CREW_ENOMEM. add_lock held. */
static int contains(crew_graph *from, const crew_graph *target) {
    crew_graph **stack = NULL, **seen = NULL;
    size_t ns = 0, nseen = 0, cap = 0;
    int rc = 0;
    crew_graph *g = from;
    for (;;) {
        if (g == target) {
            rc = 1;
            break;
        }
        bool visited = false;
        for (size_t k = 0; k < nseen && !visited; k++)
            visited = seen[k] == g;
        if (!visited) {
            /* The stack may hold more than the graphs seen (a graph run by several nodes,
             * or by several graphs, is pushed once for each until it is visited). */
            size_t need = ns + g->children_len > nseen + 1 ? ns + g->children_len : nseen + 1;
            rc = grow(&stack, &seen, &cap, need);
            if (rc != 0)
                break;
            for (uint32_t i = 0; i < g->children_len; i++)
                stack[ns++] = g->children[i];
            seen[nseen++] = g;
        }
        if (ns == 0)
            break;
        g = stack[--ns];
    }
    free(stack);
    free(seen);
    return rc;
}

/* Room for one more entry in g's list of children (add_lock held): false out of memory. */
static bool room_for_child(crew_graph *g) {
    if (g->children_len < g->children_cap)
        return true;
    uint32_t cap = g->children_cap ? 2 * g->children_cap : 4;
    crew_graph **a = realloc(g->children, (size_t)cap * sizeof *a);
    if (!a)
        return false;
    g->children = a;
    g->children_cap = cap;
    return true;
}

int crew_graph_add_graph(crew_graph *g, crew_graph *child, uint32_t priority, crew_node *out) {
    static const char who[] = "crew_graph_add_graph";
    if (out)
        *out = CREW_NODE_NONE;
    if (!g || !child)
        return crew__fail(CREW_EINVAL, "%s: %s is NULL", who, !g ? "the graph" : "the child graph");
    if (g == child)
        return crew__fail(CREW_EINVAL, "%s: a graph cannot be a node of itself (it would run "
                                       "itself for ever)", who);
    if (crew__forked(g->pool) || crew__forked(child->pool)) /* before add_lock (fork: crew.h) */
        return crew__fail(CREW_EFORKED, "%s: " CREW__FORKED_DETAIL, who);
    lock_add();
    int rc = contains(child, g);
    if (rc == 1) {
        rc = crew__fail(CREW_EINVAL, "%s: the child graph already runs this graph through its "
                                     "own nodes: each would run the other for ever", who);
    } else if (rc == CREW_ENOMEM || !room_for_child(g)) {
        rc = crew__fail(CREW_ENOMEM, "%s: out of memory to check the child graph", who);
    } else {
        rc = crew__graph_add_node(g, run_child, NULL, child, priority, out, who);
        if (rc == CREW_OK) {
            g->children[g->children_len++] = child; /* room made above */
            /* Relaxed: add_lock orders it with the child's destroy. */
            crew__fetch_add_relaxed(&child->users, 1u);
        }
    }
    pthread_mutex_unlock(&add_lock);
    return rc;
}

int crew__graph_drop_children(crew_graph *g) {
    lock_add();
    uint32_t users = crew__load_relaxed(&g->users); /* relaxed: add_lock held */
    if (users != 0) {
        pthread_mutex_unlock(&add_lock);
        return crew__fail(CREW_EBUSY, "crew_graph_destroy: the graph is a node of %u other "
                                      "graph(s) (crew_graph_add_graph), which may run it; "
                                      "destroy them first", users);
    }
    for (uint32_t i = 0; i < g->children_len; i++)
        crew__fetch_sub_relaxed(&g->children[i]->users, 1u); /* relaxed: add_lock held */
    pthread_mutex_unlock(&add_lock);
    free(g->children);
    g->children = NULL;
    g->children_len = g->children_cap = 0;
    return CREW_OK;
}
