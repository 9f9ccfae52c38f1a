/*
 * graph_run.c -- a task graph's runs (the graph node kind, kind.h): what a run's tasks do, how
 * a node releases its successors, how a run ends, is repeated, or reports the nodes it never
 * started. The graph itself (nodes, edges, the successor arrays, the checks) is graph.c's;
 * graph_int.h holds what the two share.
 *
 * A run is one block (grun): the graph, the count of its node tasks queued or running
 * (outstanding), why it stopped early (stopped), and two words per node (crew__gword): its join
 * counter (a signed 32-bit atomic of its own) and its number (never changed during the run; bit
 * 31 set once it has started: RAN). A node's task carries a pointer to its words, from which the
 * number, then the block, are found; so a node task is a plain task by value (function, argument,
 * priority, group), queued through the strategy like crew_submit's, and one graph may have any
 * number of runs at once, each with its own block.
 *
 * A run starts with one task, the source (the word after the last node's), submitted into the
 * caller's group as crew_submit would; the source starts every node without a predecessor.
 * When a node's function returns, each of its successors' counters is decremented once
 * (acq_rel: the finisher that takes it to 0 sees every predecessor's effects); those that
 * reach 0 are ready. A condition node decrements nothing: the one successor its function
 * chose is ready. Of the ready nodes, the one of highest priority (lowest number; the first
 * on a tie) runs next on this thread, in the same task (no queue round trip: a chain runs as a
 * loop), unless the pool is paused; the others are submitted into the run's group
 * (crew__submit_in_group: counted in the group and in pending, pushed through the strategy).
 * The finisher that takes a counter to 0 re-arms it at once, by adding the node's count of
 * plain predecessors (never by a store: a decrement that came early, for a later turn, is
 * kept), so that a loop closed by a condition finds it ready to count again. In a loop,
 * predecessors may finish again while a turn of the node is still queued: the counter goes
 * below 0, and a re-arm that leaves it at 0 or below makes the node ready once more (queued,
 * and re-armed again). So every npred decrements yield exactly one start, and turns of one
 * node may overlap. A condition's choice starts the node without touching its counter. A
 * node is reported unstarted (exactly once) only if no turn of it started.
 *
 * The run ends when outstanding reaches 0 (acq_rel: whoever takes it there sees every node's
 * marks). That thread repeats the run (crew_graph_run_n), or, if nodes were left unstarted
 * (the group was cancelled, the pool shut down cancelling, a queued node was dropped), reports
 * every node without its RAN mark to on_drop (drop.c's crew__not_started), then gives the
 * block back to the graph's cache and the run back to the graph. All of that happens inside a
 * task of the run's group, so crew_wait on the group returns only after it.
 *
 * Seen from outside (graph_seen.c): a node queued as a task carries QUEUED in its owed word
 * until that task starts it (two RMWs a queued node, none on a chain), and the source marks
 * itself RAN, so crew_diagnose tells ready nodes from waiting ones. A run started while a
 * trace is on has its own task function (crew__graph_node_traced, the kind's second row): the
 * same loop, compiled a second time with tracing in it, records each node's turn and the edges
 * it took (trace.h); an untraced run's loop has no trace of it.
 *
 * A node with a lane or a start-by time (graph_opts.c; marked OPTS) is never run straight from
 * its predecessor: a run that reaches it, on a chain or among ready nodes, queues it through
 * its gate, a task of the gated kind (crew__graph_node_gated, the kind's third row) submitted
 * with the node's lane and start-by time as crew_submit_with would (submit_kind.c), so the
 * lane bounds its concurrency and the run path drops it as expired as it drops any task whose
 * start-by time has passed (drop.c, the kind's expired row). That task starts the node past
 * its gate (admitted) and goes on from it as any node task does. An expired node stops the
 * run (CREW__GRAPH_STOP_EXPIRED): no further node starts from a queue or a gate (a chain under
 * way on a thread finishes its stretch), no repetition follows, and the end reports every node
 * not started to on_drop, the group answering CREW_EEXPIRED (its mark from the expired task's
 * end). The test costs a plain node nothing: it shares the condition's test of the node's
 * successor count, and queued nodes pay one test of the run's stop word.
 *
 * A node that cannot be submitted (a draining pool refuses new tasks, no memory) runs on this
 * thread instead, after this chain: it goes on a list of turns owed (owe) that run_from's outer
 * loop takes from, never a call deeper (a long comb of refusals would overflow the stack):
 * accepted work always runs. One whose group was cancelled,
 * or whose pool shuts down cancelling, is left unstarted and reported at the end.
 */
#include <stdlib.h>

#include "clock.h"
#include "drop.h"
#include "graph.h"
#include "graph_int.h"
#include "kind.h"
#include "pool.h"
#include "stats.h"
#include "submit.h"
#include "trace.h"
#include "worker.h"

/* Ready nodes gathered before they are submitted (one add to outstanding for all of them). */
#define BATCH 32u

/* The run of e (a node's word in its block), and the node's number. */
static grun *run_of(void *arg, uint32_t *node) {
    crew__gword *e = arg;
    /* Relaxed: the number is written at the run's start, before any of its tasks is queued;
     * later stores only add RAN. */
    uint32_t i = crew__load_relaxed(&e->id) & ~CREW__GRAPH_RAN;
    *node = i;
    return (grun *)(void *)((char *)(e - i) - offsetof(grun, e));
}

/* Why the run must start no further node now: 0, or a CREW__GRAPH_STOP_* reason. */
static unsigned halted(crew_pool *p, crew__slot *sl, uint32_t gen) {
    if (crew__cancelling(p)) /* relaxed: see struct crew_pool */
        return CREW__GRAPH_STOP_SHUTDOWN;
    return sl && crew__slot_cancelled(sl, gen) ? CREW__GRAPH_STOP_CANCEL : 0u;
}

static void stop(grun *r, unsigned why) {
    /* Relaxed: read by the run's finisher, after the acq_rel decrement of outstanding that
     * follows this store on this thread. */
    crew__fetch_or_relaxed(&r->stopped, why);
}

/* One more turn of node s is owed to the caller's run_from (its submission was refused; its
 * unit of outstanding is held): counted in s's owed, and s put on the caller's list (todo)
 * unless it is on a list already (a list holds a node once, with all its owed turns). */
static void owe(grun *r, uint32_t s, uint32_t *todo) {
    /* Acq_rel: the thread that takes owed from 0 owns s's link until it takes it back to 0. */
    if ((crew__fetch_add_acq_rel(&r->e[s].owed, 1u) & CREW__GWORD_OWED) == 0u) {
        r->e[s].link = *todo;
        *todo = s;
    }
}

/* Take one owed turn of the first node on the list todo (not empty). */
static uint32_t pop_owed(grun *r, uint32_t *todo) {
    uint32_t x = *todo;
    *todo = r->e[x].link;
    /* Acq_rel: see owe(). Its QUEUED mark goes too: it runs here, not from a queue. */
    uint32_t was = crew__fetch_sub_acq_rel(&r->e[x].owed, 1u);
    crew__fetch_and_relaxed(&r->e[x].owed, ~CREW__GWORD_QUEUED); /* relaxed: a hint */
    if ((was & CREW__GWORD_OWED) != 1u) {
        r->e[x].link = *todo; /* more turns owed: it stays first */
        *todo = x;
    }
    return x;
}

/* Queue node s (marked OPTS) of r through its gate: a task of the gated kind into the run's
 * group h, with the node's start-by time (from its repetition's start) and lane. */
static __attribute__((noinline, cold)) int submit_gated(grun *r, uint32_t s, crew_handle h) {
    const crew_graph *g = r->g;
    const crew__gopts *o = &g->opts[s];
    uint64_t by = 0;
    if (o->within)
        by = o->within > UINT64_MAX - r->t0 ? UINT64_MAX : r->t0 + o->within;
    return crew__submit_in_group_opts(g->pool, crew__graph_node_gated, &r->e[s],
                                      g->node[s].priority, h, by, o->lane);
}

/* Submit the m ready nodes of buf into the run's group (h), counted in outstanding first: the
 * caller holds a unit of it, so it cannot reach 0 meanwhile. */
static void submit_ready(grun *r, const uint32_t *buf, unsigned m, crew_handle h,
                         crew__slot *sl, uint32_t *todo) {
    crew_graph *g = r->g;
    crew_pool *p = g->pool;
    /* Relaxed: see stop(); an expiry seen late only lets a node more start. */
    unsigned why = halted(p, sl, h.gen) |
                   (crew__load_relaxed(&r->stopped) & CREW__GRAPH_STOP_EXPIRED);
    if (why) {
        stop(r, why); /* unstarted: reported when the run ends */
        return;
    }
    /* Relaxed: each task submitted below decrements after its queue handed it over (release,
     * acquire), so this add comes first in outstanding's order. */
    crew__fetch_add_relaxed(&r->outstanding, m);
    crew_fn fn = r->task_fn;
    for (unsigned k = 0; k < m; k++) {
        uint32_t s = buf[k];
        /* Relaxed: a hint for crew_diagnose (see crew__gword.owed). */
        crew__fetch_or_relaxed(&r->e[s].owed, CREW__GWORD_QUEUED);
        bool gated = g->node[s].nsucc & CREW__GNODE_OPTS;
        int rc = __builtin_expect(gated, 0)
                     ? submit_gated(r, s, h)
                     : crew__submit_in_group(p, fn, &r->e[s], g->node[s].priority, h);
        if (rc == CREW_OK)
            continue;
        why = halted(p, sl, h.gen);
        if ((rc == CREW_ECANCELED || gated) && !why) /* a gated node never runs unqueued */
            why = CREW__GRAPH_STOP_CANCEL;
        if (why) {
            crew__fetch_and_relaxed(&r->e[s].owed, ~CREW__GWORD_QUEUED); /* relaxed: above */
            stop(r, why);
            crew__fetch_sub_relaxed(&r->outstanding, 1u); /* ours is held: never 0 here */
        } else { /* refused for want of memory, or a draining pool: run it here, later */
            owe(r, s, todo);
        }
    }
}

/* Reset every node's word for a new run (or repetition) of r's graph. */
void crew__graph_run_init(grun *r) {
    const crew_graph *g = r->g;
    uint32_t n = g->n;
    const crew__gnode *nd = g->node;
    crew__gword *e = r->e;
    for (uint32_t i = 0; i < n; i++) { /* relaxed: the block is this thread's until queued */
        crew__store_relaxed(&e[i].cnt, (int32_t)nd[i].npred);
        crew__store_relaxed(&e[i].id, i);
    }
    crew__store_relaxed(&e[n].cnt, 0);
    crew__store_relaxed(&e[n].id, n);
    crew__store_relaxed(&r->outstanding, 1u); /* the source */
    r->t0 = g->timed ? crew__now_ns() : 0; /* the start-by times count from here */
}

/* With monitoring on, a turn of run r has ended (why: it stopped early, its unstarted nodes are
 * reported to on_drop): its nodes count in crew_stats as tasks, so that .cancelled never
 * exceeds .submitted: each node that started as submitted and completed (once, however many
 * times a loop ran it), each unstarted one of a stopped turn as submitted and cancelled. A
 * node that no condition chose in a turn that did not stop counts nowhere. */
static void count(const grun *r, unsigned why) {
    crew_pool *p = r->g->pool;
    if (!(crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR)) /* relaxed: see crew_pool */
        return;
    uint64_t ran = 0, n = r->g->n;
    for (uint32_t i = 0; i < n; i++) /* relaxed: as in finish() */
        ran += (crew__load_relaxed(&r->e[i].id) & CREW__GRAPH_RAN) != 0;
    crew__stats_graph(p, ran, why ? n - ran : 0);
}

/* outstanding reached 0: repeat the run (true: the caller runs the source again), or end it:
 * report the nodes it never started, if it stopped early, and give the block and the run
 * back. */
static bool finish(grun *r, crew_handle h, crew__slot *sl) {
    crew_graph *g = r->g;
    crew_pool *p = g->pool;
    unsigned why = crew__load_relaxed(&r->stopped); /* relaxed: see stop() */
    if (!why && r->reps != 0) {
        why = halted(p, sl, h.gen);
        count(r, 0); /* this turn ran to its end */
        crew__graph_run_init(r);
        if (!why) {
            r->reps--;
            crew__graph_trace_number(r);
            return true;
        }
    }
    if (why) {
        uint32_t slot = crew__slot_index(h.slot);
        bool by_shutdown = why & CREW__GRAPH_STOP_SHUTDOWN;
        /* Stopped by an expired node alone: the group has its EXPIRED mark from that node's
         * task (drop.c), so the others go to on_drop without a mark of a cancel's loss. */
        bool lost = why & (CREW__GRAPH_STOP_CANCEL | CREW__GRAPH_STOP_SHUTDOWN);
        for (uint32_t i = 0; i < g->n; i++) {
            /* Relaxed: every node's start happens-before this (outstanding's acq_rel). */
            if (crew__load_relaxed(&r->e[i].id) & CREW__GRAPH_RAN)
                continue;
            const crew__gnode *nd = &g->node[i];
            if (lost)
                crew__not_started(p, slot, crew__gnode_fn(nd), nd->arg, by_shutdown);
            else
                crew__on_drop(p, slot, crew__gnode_fn(nd), nd->arg);
        }
    }
    count(r, why);
    crew__graph_run_done(g, r); /* g is not read after this */
    return false;
}

static void set_aside(grun *r, uint32_t next, crew_handle h, crew__slot *sl, uint32_t *todo);

/* Node x's counter, re-armed from old (below 0), is at v: while v <= 0, its predecessors have
 * finished for one more turn already: one more start of it, queued, and re-armed again. */
static __attribute__((noinline, cold)) void ready_again(grun *r, uint32_t x, int32_t v,
                                                        crew_handle h, crew__slot *sl,
                                                        uint32_t *todo) {
    int32_t np = (int32_t)r->g->node[x].npred;
    while (v <= 0) {
        set_aside(r, x, h, sl, todo);
        v = crew__fetch_add_acq_rel(&r->e[x].cnt, np) + np; /* acq_rel: see rearm() */
    }
}

/* Node x was just made ready by the decrement that took its counter to 0: re-arm the counter
 * for its next turn at once (decrements that came meanwhile count for that turn). Acq_rel: a
 * further start needs the early finishers' effects (acquire), a later finisher that counts it
 * to 0 after this needs them too (release: the counter's RMWs form one release sequence). */
static inline void rearm(grun *r, const crew__gnode *nodes, uint32_t x, crew_handle h,
                         crew__slot *sl, uint32_t *todo) {
    int32_t np = (int32_t)nodes[x].npred;
    int32_t old = crew__fetch_add_acq_rel(&r->e[x].cnt, np);
    if (__builtin_expect(old < 0, 0))
        ready_again(r, x, old + np, h, sl, todo);
}

/* The successors s[0..ns) of a node that has finished, from the second on (the caller found
 * the first ready one, first, or none): each counted down, the ready ones taken in priority
 * order (the best is returned, to run next; the others are submitted in batches). all: the
 * source's roots, ready without a count. Out of line: a chain never comes here. */
static __attribute__((noinline)) uint32_t release_rest(grun *r, const uint32_t *s, uint32_t ns,
                                                       bool all, uint32_t first, crew_handle h,
                                                       crew__slot *sl, uint32_t *todo) {
    uint32_t best = first, *next = &best;
    const crew__gnode *nodes = r->g->node;
    uint32_t buf[BATCH];
    unsigned nb = 0;
    for (uint32_t k = 0; k < ns; k++) {
        uint32_t x = s[k];
        /* Acq_rel: see the top of this file. */
        if (!all) {
            if (crew__fetch_sub_acq_rel(&r->e[x].cnt, 1) != 1)
                continue;
            rearm(r, nodes, x, h, sl, todo);
        }
        if (*next == CREW_NODE_NONE) {
            *next = x;
            continue;
        }
        if (nodes[x].priority < nodes[*next].priority) {
            uint32_t t = *next;
            *next = x;
            x = t;
        }
        buf[nb++] = x;
        if (nb == BATCH) {
            submit_ready(r, buf, nb, h, sl, todo);
            nb = 0;
        }
    }
    if (nb)
        submit_ready(r, buf, nb, h, sl, todo);
    return best;
}

/* Node next is ready but the pool is paused, or the run must stop: queue it (a pause holds
 * it) or leave it unstarted (reported at the end). */
static __attribute__((noinline, cold)) void set_aside(grun *r, uint32_t next, crew_handle h,
                                                      crew__slot *sl, uint32_t *todo) {
    unsigned why = halted(r->g->pool, sl, h.gen);
    if (why)
        stop(r, why);
    else
        submit_ready(r, &next, 1, h, sl, todo);
}

/* A traced run's node i has run from t0 until now: its slice and the edges it took (s[0..ns),
 * its successors, all counted down; or for a condition node the one it chose, if any). */
static __attribute__((noinline, cold)) void trace_node(grun *r, uint32_t i, uint64_t t0,
                                                       const uint32_t *s, uint32_t ns,
                                                       crew_handle h) {
    uint64_t t1 = crew__now_ns();
    crew_graph *g = r->g;
    crew__trace_node(g->pool, h, r->trace_run, i, crew__graph_name(g, i), t0, t1, s, ns);
}

void crew__graph_trace_number(grun *r) {
    if (r->task_fn == crew__graph_node_traced)
        r->trace_run = crew__trace_run_number(r->g->pool);
}

/* Node i (nd: its node among nodes, s[0..ns): its successors), not a condition, has started:
 * run it, count its successors down, and return the one to run next on this thread (the
 * others are queued), or CREW_NODE_NONE. */
static inline __attribute__((always_inline)) uint32_t run_plain(grun *r,
                                                                const crew__gnode *nodes,
                                                                uint32_t i, const crew__gnode *nd,
                                                                const uint32_t *s, uint32_t ns,
                                                                crew_handle h, crew__slot *sl,
                                                                uint32_t *todo, const bool traced,
                                                                uint64_t t0) {
    nd->f.fn(nd->arg);
    if (traced)
        trace_node(r, i, t0, s, ns, h);
    uint32_t k = 0, next = CREW_NODE_NONE;
    while (k < ns) { /* acq_rel: see the top of this file */
        uint32_t x = s[k++];
        if (crew__fetch_sub_acq_rel(&r->e[x].cnt, 1) == 1) {
            rearm(r, nodes, x, h, sl, todo);
            next = x;
            break;
        }
    }
    if (__builtin_expect(k < ns, 0))
        next = release_rest(r, s + k, ns - k, false, next, h, sl, todo);
    return next;
}

/* Run node i of r and what follows it on this thread (see the top of this file); i == n: the
 * source. Holds one unit of outstanding, given up at the end. traced: a constant, each of the
 * task functions below has its own copy, so an untraced run pays nothing for tracing.
 * admitted: a node that has passed its gate (the gated kind's task starts it), else
 * CREW_NODE_NONE. */
static inline __attribute__((always_inline)) void run_from(grun *r, uint32_t i, crew_handle h,
                                                           const bool traced,
                                                           uint32_t admitted) {
    crew_graph *g = r->g;
    crew_pool *p = g->pool;
    const crew__gnode *nodes = g->node;
    const uint32_t *succ = g->succ;
    const uint32_t n = g->n;
    crew__slot *sl = h.slot != 0 ? crew__slot_at(&p->groups, crew__slot_index(h.slot)) : NULL;
    uint32_t list = CREW_NODE_NONE, *todo = &list; /* turns owed (see owe()), run below */
    /* The group's state word: while this task of the run is open, the group is, at h.gen, so
     * its CANCEL bit alone says whether crew_cancel took effect (crew__slot_cancelled). Without
     * a group: a word of this thread that never has the bit (the loop tests no NULL). */
    _Atomic uint64_t never_cancelled = 0;
    _Atomic uint64_t *state = sl ? &sl->state : &never_cancelled;
    for (;;) {
        uint32_t next = CREW_NODE_NONE;
        if (__builtin_expect(i == n, 0)) { /* the source starts every root */
            const crew__gnode *src = &nodes[n];
            /* Relaxed: for crew_diagnose (the roots are released), as crew__gword's id. */
            crew__store_relaxed(&r->e[n].id, n | CREW__GRAPH_RAN);
            next = release_rest(r, succ + src->first, src->nsucc, true, next, h, sl, todo);
        }
        while (__builtin_expect(i != n, 1)) {
            const crew__gnode *nd = &nodes[i];
            uint32_t ns = nd->nsucc;
            const uint32_t *s = succ + nd->first;
            if (__builtin_expect(ns & (CREW__GNODE_COND | CREW__GNODE_OPTS), 0)) {
                if (ns & CREW__GNODE_OPTS) {
                    if (i != admitted) { /* queued through its gate (lane, start-by time) */
                        set_aside(r, i, h, sl, todo);
                        next = CREW_NODE_NONE;
                        break;
                    }
                    admitted = CREW_NODE_NONE; /* a later turn of it goes through the gate */
                    ns &= ~CREW__GNODE_OPTS;
                }
                /* Relaxed: see crew__gword. */
                crew__store_relaxed(&r->e[i].id, i | CREW__GRAPH_RAN);
                uint64_t t0 = traced ? crew__now_ns() : 0;
                if (ns & CREW__GNODE_COND) {
                    uint32_t c = nd->f.cond(nd->arg);
                    next = c < (ns & CREW__GNODE_SUCC) ? s[c] : CREW_NODE_NONE;
                    if (traced)
                        trace_node(r, i, t0, next != CREW_NODE_NONE ? s + c : s,
                                   next != CREW_NODE_NONE, h);
                } else {
                    next = run_plain(r, nodes, i, nd, s, ns, h, sl, todo, traced, t0);
                }
            } else {
                /* Relaxed: see crew__gword. */
                crew__store_relaxed(&r->e[i].id, i | CREW__GRAPH_RAN);
                uint64_t t0 = traced ? crew__now_ns() : 0;
                next = run_plain(r, nodes, i, nd, s, ns, h, sl, todo, traced, t0);
            }
            if (next == CREW_NODE_NONE)
                break;
            /* Relaxed: see struct crew_pool (halt) and halted(). */
            if (__builtin_expect(crew__halted(p) |
                                     ((crew__load_relaxed(state) & CREW__ST_CANCEL) != 0),
                                 0)) {
                set_aside(r, next, h, sl, todo);
                next = CREW_NODE_NONE;
                break;
            }
            i = next;
        }
        if (i == n && next != CREW_NODE_NONE) { /* the source's first root */
            if (halted(p, sl, h.gen) || crew__paused(p)) { /* relaxed: above */
                set_aside(r, next, h, sl, todo);
            } else {
                i = next;
                continue;
            }
        }
        for (;;) {
            /* This chain's unit; acq_rel: see the top of this file. Never the last while a
             * turn is owed: each holds a unit. */
            if (crew__fetch_sub_acq_rel(&r->outstanding, 1u) == 1u) {
                if (!finish(r, h, sl))
                    return;
                i = n; /* the next repetition */
                break;
            }
            if (__builtin_expect(list == CREW_NODE_NONE, 1))
                return;
            i = pop_owed(r, todo); /* a refused node's turn: here, in this loop, no deeper */
            unsigned why = halted(p, sl, h.gen);
            if (!why)
                break;
            stop(r, why); /* left unstarted; its unit is given up in the next round */
        }
    }
}

/* A task of a run starts node i (queued: its QUEUED mark goes; the source has none). */
static inline __attribute__((always_inline)) grun *task_start(void *arg, uint32_t *i) {
    grun *r = run_of(arg, i);
    crew__gword *e = arg;
    /* Relaxed: a hint for crew_diagnose (see crew__gword.owed). */
    if (crew__load_relaxed(&e->owed) & CREW__GWORD_QUEUED)
        crew__fetch_and_relaxed(&e->owed, ~CREW__GWORD_QUEUED);
    return r;
}

/* A queued task of run r that finds the run stopped by an expired node: its node does not
 * start (reported at the run's end); the task's unit of outstanding is given up. */
static __attribute__((noinline, cold)) void skip(grun *r, crew_handle h) {
    crew_pool *p = r->g->pool;
    crew__slot *sl = h.slot != 0 ? crew__slot_at(&p->groups, crew__slot_index(h.slot)) : NULL;
    if (crew__fetch_sub_acq_rel(&r->outstanding, 1u) == 1u) /* acq_rel: see run_from */
        (void)finish(r, h, sl); /* stopped: never repeats */
}

/* Has run r been stopped by an expired node? (Relaxed: see stop(); a promptness only.) */
static inline bool expired_run(grun *r) {
    return __builtin_expect(crew__load_relaxed(&r->stopped) & CREW__GRAPH_STOP_EXPIRED, 0);
}

void crew__graph_node(void *arg) {
    uint32_t i;
    grun *r = task_start(arg, &i);
    crew_handle h = crew__tls_frame->group; /* the run's group: this task's frame's */
    if (expired_run(r))
        skip(r, h);
    else
        run_from(r, i, h, false, CREW_NODE_NONE);
}

void crew__graph_node_traced(void *arg) {
    uint32_t i;
    grun *r = task_start(arg, &i);
    crew_handle h = crew__tls_frame->group;
    if (expired_run(r))
        skip(r, h);
    else
        run_from(r, i, h, true, CREW_NODE_NONE);
}

void crew__graph_node_gated(void *arg) {
    uint32_t i;
    grun *r = task_start(arg, &i);
    crew_handle h = crew__tls_frame->group;
    if (expired_run(r))
        skip(r, h);
    else if (r->task_fn == crew__graph_node_traced)
        run_from(r, i, h, true, i);
    else
        run_from(r, i, h, false, i);
}

/* The graph node kinds' drop (kind.h): a queued node of a run (arg: its word) was dropped (why:
 * its stop reason): it never starts, the run goes on to its end without it (its successors are
 * never released), and the end reports it with every other node left unstarted. */
static void node_lost(crew_pool *p, void *arg, uint32_t slot, unsigned why) {
    uint32_t i;
    grun *r = run_of(arg, &i);
    crew__fetch_and_relaxed(&r->e[i].owed, ~CREW__GWORD_QUEUED); /* relaxed: a hint */
    stop(r, why);
    crew_handle h = {slot, 0};
    crew__slot *sl = NULL;
    if (slot != 0) { /* open: this task is unfinished. Relaxed: as in drop.c */
        sl = crew__slot_at(&p->groups, slot);
        h.gen = crew__gen_of(crew__load_relaxed(&sl->state));
    }
    if (crew__fetch_sub_acq_rel(&r->outstanding, 1u) == 1u) /* acq_rel: see run_from */
        (void)finish(r, h, sl); /* stopped: never repeats */
}

static void node_dropped(crew_pool *p, void *arg, uint32_t slot, bool by_shutdown) {
    node_lost(p, arg, slot, by_shutdown ? CREW__GRAPH_STOP_SHUTDOWN : CREW__GRAPH_STOP_CANCEL);
}

/* The gated kind's expiry (kind.h): a gated node's task came up past its start-by time: it
 * never starts, and it stops its run (see the top of this file). */
static void node_expired(crew_pool *p, void *arg, uint32_t slot) {
    node_lost(p, arg, slot, CREW__GRAPH_STOP_EXPIRED);
}

/* A node's task is named by the node's function (the source's by its own). */
static crew_fn node_fn_of(const crew_task *t) {
    uint32_t i;
    const grun *r = run_of(t->arg, &i);
    return i == r->g->n ? t->fn : crew__gnode_fn(&r->g->node[i]);
}

const crew__kind crew__graph_kind = {
    .fn = crew__graph_node,
    .name = "graph node",
    .dropped = node_dropped,
    .fn_of = node_fn_of,
};

/* The same for a run started while a trace was on (its nodes are recorded, trace.h). */
const crew__kind crew__graph_traced_kind = {
    .fn = crew__graph_node_traced,
    .name = "graph node (traced)",
    .dropped = node_dropped,
    .fn_of = node_fn_of,
};

/* A node with a lane or a start-by time, queued through its gate (either kind of run). */
const crew__kind crew__graph_gated_kind = {
    .fn = crew__graph_node_gated,
    .name = "graph node (gated)",
    .dropped = node_dropped,
    .expired = node_expired,
    .fn_of = node_fn_of,
};
