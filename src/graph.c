/*
 * graph.c -- task graphs (crew.h: crew_graph_*): building a graph of nodes and edges, the
 * checks of every building call, turning the edges into successor arrays when a run first
 * needs them (with the cycle check), starting runs, and destroying the graph. A run's tasks
 * are graph_run.c's (the graph node kind); graph_int.h has the structures both use.
 *
 * Building is paid once. A node is 32 bytes in one growing array; an edge is a (before, after)
 * pair appended to another. The first run after a change builds, under the graph's lock, the
 * successor arrays in one counting pass (every node's successors in link order, then the
 * roots: compressed sparse rows, 4 bytes an edge) and each node's count of predecessors that
 * are not conditions, checks for a cycle no condition closes (Kahn's algorithm over those
 * edges), and frees the pairs; a later change of the nodes or edges unfolds the rows back into
 * pairs first (a change of a setting, a name, a lane or a start-by time, keeps them). A run
 * takes one block of 16 bytes a node from the graph's cache (allocated only when the cache has
 * none), so runs after the first allocate nothing.
 *
 * A run's block is on the graph's list of runs in progress (crew_graph.live) from its start
 * to its end, under the lock it takes anyway, for crew_diagnose (graph_seen.c).
 *
 * Changes and runs exclude each other through one word (crew_graph.state): a change or the
 * destroy takes it from 0 to CHANGING, a run adds RUN_ONE unless CHANGING is set, so a change
 * during a run, a run during a change, and two changes at once each fail with CREW_EBUSY and
 * change nothing; any number of runs share the graph.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "graph_int.h"
#include "pool.h"
#include "submit.h"
#include "trace.h"

int crew_graph_create(crew_pool *p, crew_graph **out) {
    if (out)
        *out = NULL;
    if (!p)
        return crew__fail(CREW_EINVAL, "crew_graph_create: the pool is NULL");
    if (!out)
        return crew__fail(CREW_EINVAL, "crew_graph_create: out is NULL");
    if (crew__forked(p))
        return crew__fail(CREW_EFORKED, "crew_graph_create: " CREW__FORKED_DETAIL);
    crew_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->node = malloc(sizeof *g->node))) { /* room for the source */
        free(g);
        return crew__fail(CREW_ENOMEM, "crew_graph_create: out of memory for the graph");
    }
    g->pool = p;
    crew__atomic_init(&g->state, 0u);
    crew__atomic_init(&g->ready, false);
    crew__atomic_init(&g->users, 0u);
    if (pthread_mutex_init(&g->lock, NULL) != 0 || crew__graph_register(g) != CREW_OK) {
        free(g->node);
        free(g);
        return crew__fail(CREW_ENOMEM, "crew_graph_create: out of memory for the graph");
    }
    *out = g;
    return CREW_OK;
}

/* The detail of a graph that is busy (state s) for who. */
static int busy(uint64_t s, const char *who) {
    if (s & CREW__GRAPH_CHANGING)
        return crew__fail(CREW_EBUSY, "%s: another call is changing or destroying the graph "
                                      "right now; a graph is built from one thread at a time",
                          who);
    return crew__fail(CREW_EBUSY,
                      "%s: %" PRIu64 " run(s) of the graph are in progress (or a "
                      "crew_graph_dump_dot is reading it); wait for their groups (crew_wait) "
                      "before changing or destroying it",
                      who, s / CREW__GRAPH_RUN_ONE);
}

/* The pairs back from the successor rows (a change after a build); CREW_OK or CREW_ENOMEM
 * with nothing changed. */
static int unfold(crew_graph *g) {
    size_t ne = g->nedge;
    uint32_t *pairs = malloc((ne ? ne : 1) * 2 * sizeof *pairs);
    if (!pairs)
        return CREW_ENOMEM;
    size_t k = 0;
    for (uint32_t b = 0; b < g->n; b++) {
        const crew__gnode *nd = &g->node[b];
        for (uint32_t j = 0; j < (nd->nsucc & CREW__GNODE_SUCC); j++) {
            pairs[2 * k] = b;
            pairs[2 * k + 1] = g->succ[nd->first + j];
            k++;
        }
    }
    free(g->succ);
    g->succ = NULL;
    g->edge = pairs;
    g->edge_cap = ne ? ne : 1;
    g->in_csr = false;
    return CREW_OK;
}

/* Take g for a change (CREW_OK) or say why not; who: the public call. edges: the change may
 * touch the nodes or edges (the successor lists are unfolded, and built again by the next
 * run); a setting's change (a name, a lane, a start-by time) leaves them built. */
static int begin(crew_graph *g, const char *who, bool edges) {
    if (!g)
        return crew__fail(CREW_EINVAL, "%s: the graph is NULL", who);
    uint64_t s = 0;
    /* Acquire: after every run's end (its release), so no run reads what is changed. */
    if (!crew__cas_acquire(&g->state, &s, CREW__GRAPH_CHANGING))
        return busy(s, who);
    if (!edges)
        return CREW_OK;
    if (g->in_csr && unfold(g) != CREW_OK) {
        crew__store_release(&g->state, 0u); /* release: as end_change */
        return crew__fail(CREW_ENOMEM, "%s: out of memory to reopen the graph's edges", who);
    }
    crew__store_relaxed(&g->ready, false); /* relaxed: no run reads it while CHANGING */
    return CREW_OK;
}

static int begin_change(crew_graph *g, const char *who) { return begin(g, who, true); }

/* Give g back after a change; rc passes through. Release: the next run or change sees it. */
static int end_change(crew_graph *g, int rc) {
    crew__store_release(&g->state, 0u);
    return rc;
}

int crew__graph_begin_change(crew_graph *g, const char *who) { return begin(g, who, false); }
int crew__graph_end_change(crew_graph *g, int rc) { return end_change(g, rc); }

int crew__graph_add_node(crew_graph *g, crew_fn fn, uint32_t (*cond)(void *), void *arg,
                         uint32_t priority, crew_node *out, const char *who) {
    if (out)
        *out = CREW_NODE_NONE;
    if (!g)
        return crew__fail(CREW_EINVAL, "%s: the graph is NULL", who);
    if (!fn && !cond)
        return crew__fail(CREW_EINVAL, "%s: fn is NULL; a node needs a function", who);
    int rc = begin_change(g, who);
    if (rc != CREW_OK)
        return rc;
    if (g->n >= CREW__GRAPH_NODES_MAX)
        return end_change(g, crew__fail(CREW_ERANGE, "%s: the graph has %u nodes, the most it "
                                                     "can hold", who, g->n));
    if (g->n == g->cap) {
        uint32_t cap = g->cap < 16 ? 16 : g->cap > CREW__GRAPH_NODES_MAX / 2
                                               ? CREW__GRAPH_NODES_MAX : 2 * g->cap;
        crew__gnode *nodes = realloc(g->node, ((size_t)cap + 1) * sizeof *nodes);
        if (!nodes)
            return end_change(g, crew__fail(CREW_ENOMEM, "%s: out of memory for the node", who));
        g->node = nodes;
        g->cap = cap;
    }
    crew__gnode *nd = &g->node[g->n];
    memset(nd, 0, sizeof *nd);
    if (cond) {
        nd->f.cond = cond;
        nd->nsucc = CREW__GNODE_COND;
    } else {
        nd->f.fn = fn;
    }
    nd->arg = arg;
    nd->priority = priority;
    if (out)
        *out = g->n;
    g->n++;
    return end_change(g, CREW_OK);
}

int crew_graph_add(crew_graph *g, crew_fn fn, void *arg, uint32_t priority, crew_node *out) {
    return crew__graph_add_node(g, fn, NULL, arg, priority, out, "crew_graph_add");
}

int crew_graph_add_condition(crew_graph *g, uint32_t (*fn)(void *arg), void *arg,
                             uint32_t priority, crew_node *out) {
    if (out)
        *out = CREW_NODE_NONE;
    if (g && !fn)
        return crew__fail(CREW_EINVAL, "crew_graph_add_condition: fn is NULL; a condition "
                                       "node needs a function");
    return crew__graph_add_node(g, NULL, fn, arg, priority, out, "crew_graph_add_condition");
}

/* Check an edge's two nodes for who (g taken for a change). */
static int check_edge(const crew_graph *g, crew_node before, crew_node after, const char *who) {
    if (before >= g->n || after >= g->n) {
        crew_node bad = before >= g->n ? before : after;
        if (bad == CREW_NODE_NONE)
            return crew__fail(CREW_EINVAL, "%s: a node is CREW_NODE_NONE (what a failed "
                                           "crew_graph_add gives), not a node", who);
        if (g->n == 0)
            return crew__fail(CREW_EINVAL, "%s: node %u is not a node of this graph, which has "
                                           "no nodes yet", who, bad);
        return crew__fail(CREW_EINVAL,
                          "%s: node %u is not a node of this graph, which has nodes 0 to %u (a "
                          "node of another graph?)",
                          who, bad, g->n - 1);
    }
    if (before == after)
        return crew__fail(CREW_EINVAL,
                          "%s: an edge from node %u to itself would make it wait for itself; "
                          "a loop goes through a condition node (crew_graph_add_condition)",
                          who, before);
    return CREW_OK;
}

int crew_graph_precede(crew_graph *g, crew_node before, crew_node after) {
    static const char who[] = "crew_graph_precede";
    int rc = begin_change(g, who);
    if (rc != CREW_OK)
        return rc;
    if ((rc = check_edge(g, before, after, who)) != CREW_OK)
        return end_change(g, rc);
    if (g->nedge >= CREW__GRAPH_EDGES_MAX)
        return end_change(g, crew__fail(CREW_ERANGE, "%s: the graph has %zu edges, the most it "
                                                     "can hold", who, g->nedge));
    if (g->nedge == g->edge_cap) {
        size_t cap = g->edge_cap < 16 ? 16 : 2 * g->edge_cap;
        uint32_t *pairs = realloc(g->edge, cap * 2 * sizeof *pairs);
        if (!pairs)
            return end_change(g, crew__fail(CREW_ENOMEM, "%s: out of memory for the edge", who));
        g->edge = pairs;
        g->edge_cap = cap;
    }
    g->edge[2 * g->nedge] = before;
    g->edge[2 * g->nedge + 1] = after;
    g->nedge++;
    return end_change(g, CREW_OK);
}

int crew_graph_remove_edge(crew_graph *g, crew_node before, crew_node after) {
    static const char who[] = "crew_graph_remove_edge";
    int rc = begin_change(g, who);
    if (rc != CREW_OK)
        return rc;
    if ((rc = check_edge(g, before, after, who)) != CREW_OK)
        return end_change(g, rc);
    for (size_t k = 0; k < g->nedge; k++) {
        if (g->edge[2 * k] == before && g->edge[2 * k + 1] == after) {
            memmove(&g->edge[2 * k], &g->edge[2 * k + 2],
                    (g->nedge - k - 1) * 2 * sizeof(uint32_t));
            g->nedge--;
            return end_change(g, CREW_OK);
        }
    }
    return end_change(g, crew__fail(CREW_EINVAL, "%s: there is no edge from node %u to node %u",
                                    who, before, after));
}

/* Kahn's algorithm over the edges that are not a condition's (q, indeg: n words each, indeg
 * holding the join counts): records a cycle no condition closes in g->cycle, if any. */
static void find_cycle(crew_graph *g, uint32_t *q, uint32_t *indeg) {
    uint32_t n = g->n, head = 0, tail = 0;
    for (uint32_t i = 0; i < n; i++)
        if (indeg[i] == 0)
            q[tail++] = i;
    while (head < tail) {
        const crew__gnode *nd = &g->node[q[head++]];
        if (nd->nsucc & CREW__GNODE_COND)
            continue;
        for (uint32_t j = 0; j < (nd->nsucc & CREW__GNODE_SUCC); j++)
            if (--indeg[g->succ[nd->first + j]] == 0)
                q[tail++] = g->succ[nd->first + j];
    }
    g->cycle_len = 0;
    if (tail == n)
        return;
    /* Every node left has a predecessor left, by an edge that is no condition's: note one in
     * q (pick), then walk back n steps from any of them, which ends on a cycle. */
    uint32_t start = CREW_NODE_NONE;
    for (uint32_t v = 0; v < n; v++) {
        const crew__gnode *nd = &g->node[v];
        if (indeg[v] == 0 || (nd->nsucc & CREW__GNODE_COND))
            continue;
        for (uint32_t j = 0; j < (nd->nsucc & CREW__GNODE_SUCC); j++)
            if (indeg[g->succ[nd->first + j]] != 0)
                q[g->succ[nd->first + j]] = v, start = v;
    }
    for (uint32_t k = 0; k < n; k++)
        start = q[start];
    uint32_t back[8], len = 0, v = start;
    do {
        if (len < 8)
            back[len] = v;
        len++;
        v = q[v];
    } while (v != start && len <= 8);
    g->cycle_whole = v == start && len <= 8;
    g->cycle_len = len < 8 ? len : 8;
    uint32_t m = 0; /* a whole cycle is told from its lowest node on */
    for (uint32_t k = 1; g->cycle_whole && k < g->cycle_len; k++)
        if (back[k] < back[m])
            m = k;
    for (uint32_t k = 0; k < g->cycle_len; k++) /* back walks backwards: reverse it */
        g->cycle[k] = g->cycle_whole ? back[(m + g->cycle_len - k) % g->cycle_len]
                                     : back[g->cycle_len - 1 - k]; /* a part: no wrap */
}

/* Build the successor rows from the pairs (lock held, no change in progress). CREW_OK or
 * CREW_ENOMEM with nothing changed. */
static int build(crew_graph *g) {
    uint32_t n = g->n;
    size_t ne = g->nedge;
    uint32_t *tmp = malloc(((size_t)n + 1) * 2 * sizeof *tmp);
    if (!tmp)
        return CREW_ENOMEM;
    uint32_t *cursor = tmp, *any = tmp + n + 1;
    for (uint32_t i = 0; i < n; i++) {
        g->node[i].nsucc &= CREW__GNODE_COND | CREW__GNODE_OPTS;
        g->node[i].npred = 0;
        any[i] = 0;
    }
    for (size_t k = 0; k < ne; k++) {
        uint32_t b = g->edge[2 * k], a = g->edge[2 * k + 1];
        if ((g->node[b].nsucc & CREW__GNODE_SUCC) == CREW__GNODE_SUCC) { /* see EDGES_MAX */
            free(tmp);
            g->bad = b;
            return CREW_ERANGE; /* the counts are made again by the next build */
        }
        g->node[b].nsucc++;
        any[a] = 1;
        if (!(g->node[b].nsucc & CREW__GNODE_COND))
            g->node[a].npred++;
    }
    uint32_t roots = 0, prio = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (!any[i]) {
            roots++;
            if (g->node[i].priority < prio)
                prio = g->node[i].priority;
        }
    uint32_t *succ = malloc((ne + roots ? ne + roots : 1) * sizeof *succ);
    if (!succ) {
        free(tmp);
        return CREW_ENOMEM;
    }
    uint32_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        g->node[i].first = cursor[i] = pos;
        pos += g->node[i].nsucc & CREW__GNODE_SUCC;
    }
    for (size_t k = 0; k < ne; k++)
        succ[cursor[g->edge[2 * k]]++] = g->edge[2 * k + 1];
    crew__gnode *src = &g->node[n];
    memset(src, 0, sizeof *src);
    src->first = pos;
    src->nsucc = roots;
    src->priority = roots ? prio : 0;
    for (uint32_t i = 0; i < n; i++)
        if (!any[i])
            succ[pos++] = i;
    free(g->succ);
    g->succ = succ;
    for (uint32_t i = 0; i < n; i++) /* the cycle check counts down a copy of the joins */
        any[i] = g->node[i].npred;
    find_cycle(g, cursor, any);
    free(tmp);
    free(g->edge);
    g->edge = NULL;
    g->edge_cap = 0;
    g->in_csr = true;
    return CREW_OK;
}

/* The detail of a cycle's refusal for who. */
static int cycle_fail(const crew_graph *g, const char *who) {
    char path[8 * 12 + 16];
    size_t at = 0;
    for (uint32_t k = 0; k < g->cycle_len; k++)
        at += (size_t)snprintf(path + at, sizeof path - at, "%u -> ", g->cycle[k]);
    snprintf(path + at, sizeof path - at, g->cycle_whole ? "%u" : "...", g->cycle[0]);
    return crew__fail(CREW_EINVAL,
                      "%s: the graph has a cycle that no condition node closes, so its nodes "
                      "would wait for each other for ever: node %u is on it (%s)",
                      who, g->cycle[0], path);
}

/* Put r first on g's runs in progress, not shown yet (lock held). */
static void link_live(crew_graph *g, grun *r) {
    crew__store_relaxed(&r->shown, false); /* relaxed: the lock publishes it */
    r->prev = NULL;
    r->next = g->live;
    if (g->live)
        g->live->prev = r;
    g->live = r;
}

/* A run block for g's n nodes: the cache's, or a new one (NULL: no memory), on g's runs in
 * progress. */
static grun *take_block(crew_graph *g) {
    pthread_mutex_lock(&g->lock);
    grun *r = g->free_runs;
    while (r && r->cap < g->n) { /* built for fewer nodes: the graph grew since */
        grun *next = r->next;
        free(r);
        r = next;
    }
    g->free_runs = r ? r->next : NULL;
    if (r)
        link_live(g, r);
    pthread_mutex_unlock(&g->lock);
    if (!r && (r = calloc(1, sizeof *r + ((size_t)g->n + 1) * sizeof r->e[0]))) {
        r->g = g;
        r->cap = g->n;
        pthread_mutex_lock(&g->lock);
        link_live(g, r);
        pthread_mutex_unlock(&g->lock);
    }
    return r;
}

/* Take r off g's runs in progress and put it in the cache (lock held). */
static void cache_block(crew_graph *g, grun *r) {
    if (r->prev)
        r->prev->next = r->next;
    else
        g->live = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->next = g->free_runs;
    g->free_runs = r;
}

void crew__graph_run_done(crew_graph *g, grun *r) {
    pthread_mutex_lock(&g->lock);
    cache_block(g, r);
    pthread_mutex_unlock(&g->lock);
    /* Release: every read of the graph by this run happens-before a change's acquire. */
    crew__fetch_sub_release(&g->state, CREW__GRAPH_RUN_ONE);
}

/* Take g for a run or a reading (CREW_OK), built; else the error, g not taken. */
static int begin_run(crew_graph *g, const char *who) {
    if (!g)
        return crew__fail(CREW_EINVAL, "%s: the graph is NULL", who);
    uint64_t s = crew__load_relaxed(&g->state); /* relaxed: the CAS below decides */
    do {
        if (s & CREW__GRAPH_CHANGING)
            return busy(s, who);
    } while (!crew__cas_acquire(&g->state, &s, s + CREW__GRAPH_RUN_ONE)); /* acquire: see g */
    if (!crew__load_acquire(&g->ready)) { /* acquire: see crew_graph.ready */
        pthread_mutex_lock(&g->lock);
        int rc = crew__load_relaxed(&g->ready) ? CREW_OK : build(g); /* relaxed: lock held */
        if (rc == CREW_OK)
            crew__store_release(&g->ready, true); /* release: see crew_graph.ready */
        uint32_t bad = g->bad;
        pthread_mutex_unlock(&g->lock);
        if (rc != CREW_OK) { /* release: as crew__graph_run_done */
            crew__fetch_sub_release(&g->state, CREW__GRAPH_RUN_ONE);
            if (rc == CREW_ERANGE)
                return crew__fail(rc, "%s: node %u has more than %u successors, the most a node "
                                      "can have", who, bad, CREW__GNODE_SUCC);
            return crew__fail(rc, "%s: out of memory to build the graph's successor lists", who);
        }
    }
    return CREW_OK;
}

static int start_run(crew_graph *g, crew_handle *group, uint64_t reps, const char *who) {
    if (g && crew__forked(g->pool)) /* before the graph's lock, which a parent's thread may hold */
        return crew__fail(CREW_EFORKED, "%s: " CREW__FORKED_DETAIL, who);
    int rc = begin_run(g, who);
    if (rc != CREW_OK)
        return rc;
    if (g->cycle_len != 0) {
        rc = cycle_fail(g, who);
    } else if (g->n != 0 && g->node[g->n].nsucc == 0) { /* the source would start nothing */
        rc = crew__fail(CREW_EINVAL,
                        "%s: no node can start: every node waits on a predecessor or a "
                        "condition; add an entry node before the loop",
                        who);
    } else {
        grun *r = take_block(g);
        if (!r) {
            rc = crew__fail(CREW_ENOMEM, "%s: out of memory for the run's %u join counters",
                            who, g->n);
        } else {
            r->reps = reps;
            crew__atomic_init(&r->stopped, 0u); /* not shared until the source is queued */
            /* A run started while a trace is on is traced, every repetition of it. */
            r->task_fn = crew__tracing(g->pool) ? crew__graph_node_traced : crew__graph_node;
            crew__graph_trace_number(r);
            crew__graph_run_init(r);
            crew__store_release(&r->shown, true); /* release: see grun.shown */
            rc = crew__submit_as(g->pool, r->task_fn, &r->e[g->n], g->node[g->n].priority,
                                 group, who);
            if (rc == CREW_OK)
                return CREW_OK; /* the run gives g back when it ends */
            pthread_mutex_lock(&g->lock);
            cache_block(g, r);
            pthread_mutex_unlock(&g->lock);
        }
    }
    crew__fetch_sub_release(&g->state, CREW__GRAPH_RUN_ONE); /* release: as run_done */
    return rc;
}

int crew_graph_run(crew_graph *g, crew_handle *group) {
    return start_run(g, group, 0, "crew_graph_run");
}

int crew_graph_run_n(crew_graph *g, uint64_t n, crew_handle *group) {
    if (n == 0)
        return crew__fail(CREW_EINVAL, "crew_graph_run_n: n is 0; a run has at least 1 "
                                       "repetition");
    return start_run(g, group, n - 1, "crew_graph_run_n");
}

int crew_graph_destroy(crew_graph *g) {
    if (!g)
        return CREW_OK;
    if (crew__graph_forked(g)) /* before any lock, which a parent's thread may hold */
        return crew__fail(CREW_EFORKED, "crew_graph_destroy: the graph was made before fork(), "
                                        "in the parent process; it is the parent's to destroy");
    uint64_t s = 0;
    /* Acquire: after every run's end. */
    if (!crew__cas_acquire(&g->state, &s, CREW__GRAPH_CHANGING))
        return busy(s, "crew_graph_destroy");
    if (crew__graph_drop_children(g) != CREW_OK) /* a node of another graph */
        return end_change(g, CREW_EBUSY);
    crew__graph_unregister(g); /* crew_diagnose no longer finds it */
    crew__graph_names_free(g);
    crew__graph_opts_free(g);
    for (grun *r = g->free_runs, *next; r; r = next) {
        next = r->next;
        free(r);
    }
    pthread_mutex_destroy(&g->lock);
    free(g->succ);
    free(g->edge);
    free(g->node);
    free(g);
    return CREW_OK;
}

/* Node i's label in a DOT string, without the quotes: its name (crew_graph_name_node) with
 * '"' and '\\' escaped and line ends as \\n, or its number. False if writing failed. */
static bool dot_label(FILE *out, const crew_graph *g, uint32_t i) {
    const char *name = crew__graph_name(g, i);
    if (!name)
        return fprintf(out, "%u", i) >= 0;
    for (const char *c = name; *c; c++) {
        int rc = *c == '"' || *c == '\\' ? fprintf(out, "\\%c", *c)
                 : *c == '\n'             ? fputs("\\n", out)
                 : *c == '\r'             ? 0
                                          : fputc(*c, out);
        if (rc < 0)
            return false;
    }
    return true;
}

int crew_graph_dump_dot(crew_graph *g, FILE *out) {
    static const char who[] = "crew_graph_dump_dot";
    if (!out)
        return crew__fail(CREW_EINVAL, "%s: out is NULL", who);
    int rc = begin_run(g, who); /* built, and no change meanwhile */
    if (rc != CREW_OK)
        return rc;
    bool ok = fprintf(out, "digraph crew_graph {\n") >= 0;
    for (uint32_t i = 0; i < g->n && ok; i++) {
        const crew__gnode *nd = &g->node[i];
        bool cond = nd->nsucc & CREW__GNODE_COND;
        ok = fprintf(out, "  n%u [label=\"", i) >= 0 && dot_label(out, g, i) &&
             fprintf(out, "%s\"%s];\n", cond ? "?" : "", cond ? ", shape=diamond" : "") >= 0;
        for (uint32_t j = 0; j < (nd->nsucc & CREW__GNODE_SUCC) && ok; j++) {
            if (cond)
                ok = fprintf(out, "  n%u -> n%u [style=dashed, label=\"%u\"];\n", i,
                             g->succ[nd->first + j], j) >= 0;
            else
                ok = fprintf(out, "  n%u -> n%u;\n", i, g->succ[nd->first + j]) >= 0;
        }
    }
    ok = ok && fprintf(out, "}\n") >= 0 && fflush(out) == 0;
    crew__fetch_sub_release(&g->state, CREW__GRAPH_RUN_ONE); /* release: as run_done */
    return ok ? CREW_OK : crew__fail(CREW_EIO, "%s: writing the output failed", who);
}
