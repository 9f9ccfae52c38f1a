/*
 * graph_seen.c -- what shows of a task graph outside its runs: node names
 * (crew_graph_name_node), which the timeline gives a node's slices, the pool's registry of its
 * graphs (a module of the pool, modules.c), and crew_diagnose's description of every run in
 * progress: which nodes have started, which are ready but not started, and which wait, for
 * which predecessor.
 *
 * The registry (crew__graphs) is a list of the pool's graphs under a lock, made by crew_create
 * and counted: the pool holds one reference, each graph another, so a graph destroyed after
 * its pool (crew.h allows it) still finds the registry. A graph's runs in progress are listed
 * on the graph itself (crew_graph.live, under its lock, which a run takes anyway to take and
 * give back its block), so a run costs the registry nothing. crew_diagnose takes the registry's
 * lock, then each graph's: a run it finds there cannot end (its end takes the graph's lock)
 * and its graph cannot change (a change waits for every run's end), so its words and the
 * graph's arrays are read safely; the words are atomics that the run's threads change as it
 * goes, read relaxed: a description of a moving run is a snapshot, exact for a stalled one.
 *
 * What a run's words tell (graph_int.h): a node's id has RAN once it started; its owed word
 * has QUEUED while a turn of it waits in a queue; its counter holds the predecessors it still
 * waits for. So a node is started, ready (queued), or waiting: for its predecessors not
 * started (certainly unfinished), or, when it has been counted down by fewer of them than
 * have started, for one that started and still runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "graph_int.h"
#include "pool.h"

struct crew__graphs {
    pthread_mutex_t lock; /* list, and every graph's reg_next, reg_prev */
    crew_graph *list;
    /* The pool's reference and one per graph: acq_rel (the last one frees it). */
    _Atomic uint32_t refs;
};

static void let_go(crew__graphs *reg) {
    if (crew__fetch_sub_acq_rel(&reg->refs, 1u) == 1u) { /* acq_rel: see refs */
        pthread_mutex_destroy(&reg->lock);
        free(reg);
    }
}

int crew__graphs_init(crew_pool *p) {
    crew__graphs *reg = calloc(1, sizeof *reg);
    if (!reg || pthread_mutex_init(&reg->lock, NULL) != 0) {
        free(reg);
        return CREW_ENOMEM;
    }
    crew__atomic_init(&reg->refs, 1u);
    p->graphs = reg;
    return CREW_OK;
}

void crew__graphs_free(crew_pool *p) {
    let_go(p->graphs);
    p->graphs = NULL;
}

/* fork(): a child process has none of the parent's threads, and a lock one of them held (the
 * registry's, a graph's) stays held. Each fork increments, in the child, a count that every
 * graph notes at its creation; a graph whose note differs was made before a fork, in the
 * parent, and crew_graph_destroy refuses it before any lock (CREW_EFORKED, as crew_destroy
 * refuses a pool). Relaxed: written only by the child's only thread, before any code of the
 * child, and never in a process that does not fork. */
static _Atomic unsigned forks;
static void forked_child(void) { crew__fetch_add_relaxed(&forks, 1u); }
static void watch_forks(void) { pthread_atfork(NULL, NULL, forked_child); }

bool crew__graph_forked(const crew_graph *g) {
    return g->forks != crew__load_relaxed(&forks); /* relaxed: see forks */
}

int crew__graph_register(crew_graph *g) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, watch_forks);
    g->forks = crew__load_relaxed(&forks); /* relaxed: see forks */
    crew__graphs *reg = g->pool->graphs;
    crew__fetch_add_relaxed(&reg->refs, 1u); /* relaxed: the pool's reference is held */
    pthread_mutex_lock(&reg->lock);
    g->reg_prev = NULL;
    g->reg_next = reg->list;
    if (reg->list)
        reg->list->reg_prev = g;
    reg->list = g;
    pthread_mutex_unlock(&reg->lock);
    g->reg = reg;
    return CREW_OK;
}

void crew__graph_unregister(crew_graph *g) {
    crew__graphs *reg = g->reg;
    pthread_mutex_lock(&reg->lock);
    if (g->reg_prev)
        g->reg_prev->reg_next = g->reg_next;
    else
        reg->list = g->reg_next;
    if (g->reg_next)
        g->reg_next->reg_prev = g->reg_prev;
    pthread_mutex_unlock(&reg->lock);
    let_go(reg);
}

/* ---------------------------------------------------------------------------------------------
 * Names.
 * ------------------------------------------------------------------------------------------- */

void crew__graph_names_free(crew_graph *g) {
    for (uint32_t i = 0; i < g->names_len; i++)
        free(g->names[i]);
    free(g->names);
    g->names = NULL;
    g->names_len = 0;
}

int crew_graph_name_node(crew_graph *g, crew_node node, const char *name) {
    static const char who[] = "crew_graph_name_node";
    if (name && !*name)
        return crew__fail(CREW_EINVAL, "%s: the name is empty; NULL gives node %u its default "
                                       "name (\"node %u\")", who, node, node);
    size_t len = name ? strlen(name) : 0;
    if (len > CREW_GRAPH_NAME_MAX)
        return crew__fail(CREW_EINVAL, "%s: the name is %zu bytes long; at most %d", who, len,
                          CREW_GRAPH_NAME_MAX);
    int rc = crew__graph_begin_change(g, who);
    if (rc != CREW_OK)
        return rc;
    if (node >= g->n) {
        if (node == CREW_NODE_NONE)
            return crew__graph_end_change(
                g, crew__fail(CREW_EINVAL, "%s: the node is CREW_NODE_NONE (what a failed "
                                           "crew_graph_add gives), not a node", who));
        return crew__graph_end_change(
            g, crew__fail(CREW_EINVAL, "%s: node %u is not a node of this graph, which has %u "
                                       "node(s)", who, node, g->n));
    }
    char *copy = NULL;
    if (name && !(copy = strdup(name)))
        return crew__graph_end_change(g, crew__fail(CREW_ENOMEM, "%s: out of memory for the "
                                                                 "name", who));
    if (node >= g->names_len) {
        if (!copy) /* no name to take back */
            return crew__graph_end_change(g, CREW_OK);
        uint32_t len2 = g->cap; /* room for every node the graph has room for */
        char **names = realloc(g->names, (size_t)len2 * sizeof *names);
        if (!names) {
            free(copy);
            return crew__graph_end_change(g, crew__fail(CREW_ENOMEM, "%s: out of memory for "
                                                                     "the names", who));
        }
        memset(names + g->names_len, 0, (size_t)(len2 - g->names_len) * sizeof *names);
        g->names = names;
        g->names_len = len2;
    }
    free(g->names[node]);
    g->names[node] = copy;
    return crew__graph_end_change(g, CREW_OK);
}

/* ---------------------------------------------------------------------------------------------
 * crew_diagnose's view of the runs in progress.
 * ------------------------------------------------------------------------------------------- */

/* Runs described at most, and nodes named at most per run in each list. */
#define RUNS_SHOWN 8u
#define NODES_SHOWN 10u

static void say_node(FILE *f, const crew_graph *g, uint32_t i) {
    const char *name = crew__graph_name(g, i);
    if (name)
        fprintf(f, "node %u \"%s\"", i, name);
    else
        fprintf(f, "node %u", i);
}

/* What node i waits for, in its run r (neither started nor queued, with predecessors). */
typedef struct waits {
    uint32_t node;
    uint32_t left;   /* predecessors it still waits for (0: none counted) */
    uint32_t pred;   /* the first of them it names, CREW_NODE_NONE: none */
    const char *how; /* what is known of pred */
} waits;

/* Describe run r of g (both locks held) on f. */
static void describe_run(FILE *f, const crew_graph *g, grun *r) {
    uint32_t n = g->n;
    const crew__gnode *nodes = g->node;
    const uint32_t *succ = g->succ;
    /* Per node: the first predecessor not started, the first started one, started ones. */
    uint32_t *not_started = malloc((size_t)(n ? n : 1) * 3 * sizeof *not_started);
    uint32_t *started_pred = not_started ? not_started + n : NULL;
    uint32_t *nstarted = not_started ? not_started + 2 * (size_t)n : NULL;
    if (not_started) {
        for (uint32_t i = 0; i < n; i++)
            not_started[i] = started_pred[i] = CREW_NODE_NONE, nstarted[i] = 0;
        for (uint32_t b = 0; b < n; b++) {
            /* Relaxed, here and below: a snapshot (see the top of this file). */
            bool ran = crew__load_relaxed(&r->e[b].id) & CREW__GRAPH_RAN;
            const crew__gnode *nd = &nodes[b];
            bool cond = nd->nsucc & CREW__GNODE_COND;
            for (uint32_t j = 0; j < (nd->nsucc & CREW__GNODE_SUCC); j++) {
                uint32_t a = succ[nd->first + j];
                if (cond) { /* only its choice starts a: named when a has no other wait */
                    if (nodes[a].npred == 0 && started_pred[a] == CREW_NODE_NONE)
                        started_pred[a] = b;
                } else if (ran) {
                    if (started_pred[a] == CREW_NODE_NONE)
                        started_pred[a] = b;
                    nstarted[a]++;
                } else if (not_started[a] == CREW_NODE_NONE) {
                    not_started[a] = b;
                }
            }
        }
    }
    uint32_t nran = 0, nready = 0, nwait = 0;
    uint32_t ready[NODES_SHOWN];
    waits wait[NODES_SHOWN];
    bool begun = crew__load_relaxed(&r->e[n].id) & CREW__GRAPH_RAN; /* the source ran */
    for (uint32_t i = 0; i < n; i++) {
        const crew__gword *e = &r->e[i];
        if (crew__load_relaxed(&e->id) & CREW__GRAPH_RAN) {
            nran++;
            continue;
        }
        uint32_t npred = nodes[i].npred;
        int32_t cnt = crew__load_relaxed(&e->cnt);
        bool queued = crew__load_relaxed(&e->owed) & CREW__GWORD_QUEUED;
        uint32_t cpred = not_started && npred == 0 ? started_pred[i] : CREW_NODE_NONE;
        if (queued || (npred == 0 && cpred == CREW_NODE_NONE && begun) ||
            (npred != 0 && cnt <= 0)) {
            if (nready < NODES_SHOWN)
                ready[nready] = i;
            nready++;
            continue;
        }
        waits w = {i, 0, CREW_NODE_NONE, ""};
        if (npred == 0 && cpred == CREW_NODE_NONE) {
            w.how = "the run's start (its first task has not run yet)";
        } else if (npred == 0) {
            w.pred = cpred;
            w.how = "condition node, to choose it";
        } else {
            w.left = cnt > (int32_t)npred ? npred : (uint32_t)cnt;
            uint32_t done = npred - w.left; /* predecessors that counted it down */
            if (!not_started) {
                w.how = "its predecessors (no memory to name them)";
            } else if (nstarted[i] <= done) { /* the started ones have all finished */
                w.pred = not_started[i];
                w.how = "not started";
            } else if (not_started[i] != CREW_NODE_NONE &&
                       (done != 0 || started_pred[i] > not_started[i])) {
                w.pred = not_started[i];
                w.how = "not started";
            } else {
                w.pred = started_pred[i];
                w.how = done == 0 ? "started, not finished"
                                  : "started; one of its started predecessors is still running";
            }
        }
        if (w.pred == CREW_NODE_NONE && npred != 0) /* a snapshot taken as nodes ended */
            w.how = "its predecessors";
        if (nwait < NODES_SHOWN)
            wait[nwait] = w;
        nwait++;
    }
    free(not_started);
    fprintf(f, "    graph %p, a run of %u nodes: %u started, %u ready but not started, %u "
               "waiting\n", (const void *)g, n, nran, nready, nwait);
    if (nready) {
        fprintf(f, "      ready, not started:");
        for (uint32_t k = 0; k < nready && k < NODES_SHOWN; k++) {
            fprintf(f, k ? ", " : " ");
            say_node(f, g, ready[k]);
        }
        if (nready > NODES_SHOWN)
            fprintf(f, " ... and %u more", nready - NODES_SHOWN);
        fprintf(f, "\n");
    }
    for (uint32_t k = 0; k < nwait && k < NODES_SHOWN; k++) {
        const waits *w = &wait[k];
        fprintf(f, "      waiting: ");
        say_node(f, g, w->node);
        fprintf(f, " for ");
        if (w->pred != CREW_NODE_NONE) {
            say_node(f, g, w->pred);
            fprintf(f, " (%s)", w->how);
        } else {
            fprintf(f, "%s", w->how);
        }
        if (w->left)
            fprintf(f, "; %u of its %u predecessor(s) left", w->left, nodes[w->node].npred);
        fprintf(f, "\n");
    }
    if (nwait > NODES_SHOWN)
        fprintf(f, "      ... and %u more waiting\n", nwait - NODES_SHOWN);
}

char *crew__graph_runs_describe(crew_pool *p, size_t *runs) {
    crew__graphs *reg = p->graphs;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    *runs = 0;
    pthread_mutex_lock(&reg->lock);
    for (crew_graph *g = reg->list; g; g = g->reg_next) {
        pthread_mutex_lock(&g->lock);
        for (grun *r = g->live; r; r = r->next) {
            /* Acquire: see grun.shown. */
            if (f && *runs < RUNS_SHOWN && crew__load_acquire(&r->shown))
                describe_run(f, g, r);
            ++*runs;
        }
        pthread_mutex_unlock(&g->lock);
    }
    pthread_mutex_unlock(&reg->lock);
    if (!f)
        return NULL;
    if (*runs > RUNS_SHOWN)
        fprintf(f, "    ... and %zu more runs\n", *runs - RUNS_SHOWN);
    if (fclose(f) != 0 || *runs == 0) {
        free(text);
        return NULL;
    }
    return text;
}
