/*
 * graph_sub.c -- a node that runs a whole other graph (crew_graph_add_graph): the node's
 * function starts one run of the child graph and waits for it (crew_wait: the thread helps),
 * so the child runs as one node of its parent. It owns the checks that keep such nodes
 * sound: a graph never contains itself, however deep, and a graph that is a node of another
 * is not destroyed while that other exists (crew_graph.users). The graph's building and runs
 * are graph.c's and graph_run.c's; this file adds its nodes through graph.c's.
 *
 * Every crew_graph_add_graph call runs under one lock of the process (add_lock), so two calls
 * that would each close half of a cycle of graphs cannot both pass the check. The check walks
 * the graphs the child contains, reading each one's nodes while holding it as a reader (a
 * RUN_ONE unit of its state, as a run does), so that no change or destroy overlaps the walk.
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

/* Hold g as a reader (true), unless a change or a destroy holds it. */
static bool pin(crew_graph *g) {
    uint64_t s = crew__load_relaxed(&g->state); /* relaxed: the CAS below decides */
    do {
        if (s & CREW__GRAPH_CHANGING)
            return false;
    } while (!crew__cas_acquire(&g->state, &s, s + CREW__GRAPH_RUN_ONE)); /* acquire: see g */
    return true;
}

static void unpin(crew_graph *g) {
    crew__fetch_sub_release(&g->state, CREW__GRAPH_RUN_ONE); /* release: as a run's end */
}

/* Room for need entries in both arrays (0), or CREW_ENOMEM (both as they were). */
static int grow(crew_graph ***stack, crew_graph ***seen, size_t *cap, size_t need) {
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? 2 * *cap : 16;
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
 * CREW_EBUSY (a graph on the way is being changed), CREW_ENOMEM. add_lock held. */
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
            if (!pin(g)) {
                rc = CREW_EBUSY;
                break;
            }
            rc = grow(&stack, &seen, &cap, nseen + 1);
            for (uint32_t i = 0; i < g->n && rc == 0; i++) {
                const crew__gnode *nd = &g->node[i];
                if ((nd->nsucc & CREW__GNODE_COND) || nd->f.fn != run_child)
                    continue;
                if ((rc = grow(&stack, &seen, &cap, ns + 1)) == 0)
                    stack[ns++] = nd->arg;
            }
            unpin(g);
            if (rc != 0)
                break;
            seen[nseen++] = g; /* room: grown above */
        }
        if (ns == 0)
            break;
        g = stack[--ns];
    }
    free(stack);
    free(seen);
    return rc;
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
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, watch_forks);
    pthread_mutex_lock(&add_lock);
    int rc = contains(child, g);
    if (rc == 1) {
        rc = crew__fail(CREW_EINVAL, "%s: the child graph already runs this graph through its "
                                     "own nodes: each would run the other for ever", who);
    } else if (rc == CREW_EBUSY) {
        rc = crew__fail(CREW_EBUSY, "%s: a graph that the child runs (or the child itself) is "
                                    "being changed or destroyed right now", who);
    } else if (rc == CREW_ENOMEM) {
        rc = crew__fail(CREW_ENOMEM, "%s: out of memory to check the child graph", who);
    } else if (!pin(child)) { /* no destroy of the child while it is counted */
        rc = crew__fail(CREW_EBUSY, "%s: the child graph is being changed or destroyed right "
                                    "now", who);
    } else {
        /* Relaxed: the pin's release (unpin) orders it before a destroy's acquire. */
        crew__fetch_add_relaxed(&child->users, 1u);
        unpin(child);
        rc = crew__graph_add_node(g, run_child, NULL, child, priority, out, who);
        if (rc != CREW_OK) /* release: as crew__graph_drop_children */
            crew__fetch_sub_release(&child->users, 1u);
    }
    pthread_mutex_unlock(&add_lock);
    return rc;
}

void crew__graph_drop_children(crew_graph *g) {
    for (uint32_t i = 0; i < g->n; i++) {
        const crew__gnode *nd = &g->node[i];
        if (!(nd->nsucc & CREW__GNODE_COND) && nd->f.fn == run_child) {
            crew_graph *c = nd->arg;
            /* Release: this graph's last reads of the child come before the child's destroy
             * (its acquire load of users). */
            crew__fetch_sub_release(&c->users, 1u);
        }
    }
}
