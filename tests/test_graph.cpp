// test_graph.cpp -- task graphs (crew_graph_*): the order of a chain, a diamond, a wide fan-out;
// a loop closed by a condition node; a cycle refused with its nodes named; runs of one graph
// from two threads at once; repeated runs (crew_graph_run_n); nodes that wait and run other
// graphs on one thread; crew_cancel of a run and a cancelling shutdown (every node that did not
// run reported once to on_drop); a paused pool; every bad input; DOT output; a stress test in
// which runs of one graph, with nodes in a lane and nodes with start-by times, overlap while
// the pool resizes, pauses, cancels runs and shuts down;
// crew::graph (emplace, precede/succeed, conditions, run().wait() rethrowing a node's
// exception).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

// One node's record: how often it ran, and what the test checks inside it.
struct Rec {
    std::atomic<long> runs{0};
    std::atomic<long> dropped{0};
    std::vector<Rec *> preds; // each must have run at least as often as this node, plus one
    std::atomic<bool> bad{false};
    std::atomic<int> *lane_in = nullptr; // a node in a lane: the lane's nodes running now
    int lane_max = 0;                    // the lane's concurrency
};

void rec_run(void *arg) {
    auto *r = static_cast<Rec *>(arg);
    if (r->lane_in && r->lane_in->fetch_add(1) + 1 > r->lane_max)
        r->bad = true; // more of its lane's nodes at once than the lane allows
    long mine = r->runs.load() + 1;
    for (Rec *q : r->preds)
        if (q->runs.load() < mine)
            r->bad = true; // started before a predecessor of this run had finished
    if (r->lane_in)
        r->lane_in->fetch_sub(1);
    r->runs.fetch_add(1);
}

void drop_count(crew_fn fn, void *task_arg, void *) {
    if (fn == rec_run)
        static_cast<Rec *>(task_arg)->dropped.fetch_add(1);
}

crew_pool *pool_with_drops(unsigned threads) {
    return crewtest::make_pool_on_drop(threads, drop_count);
}

// A graph of recs: node i runs rec_run(&recs[i]); edges also set the preds the nodes check.
struct Built {
    crew_graph *g = nullptr;
    std::vector<Rec> recs;
    std::vector<crew_node> ids;
    Built(crew_pool *p, size_t n) : recs(n), ids(n) {
        EXPECT_EQ(crew_graph_create(p, &g), CREW_OK);
        for (size_t i = 0; i < n; i++)
            EXPECT_EQ(crew_graph_add(g, rec_run, &recs[i], 0, &ids[i]), CREW_OK);
    }
    void edge(size_t a, size_t b) {
        EXPECT_EQ(crew_graph_precede(g, ids[a], ids[b]), CREW_OK);
        recs[b].preds.push_back(&recs[a]);
    }
    ~Built() { EXPECT_EQ(crew_graph_destroy(g), CREW_OK); }
    void expect_runs(long k) {
        for (size_t i = 0; i < recs.size(); i++) {
            EXPECT_EQ(recs[i].runs.load(), k) << "node " << i;
            EXPECT_FALSE(recs[i].bad.load()) << "node " << i << " started before a predecessor";
        }
    }
};

void run_and_wait(crew_pool *p, crew_graph *g) {
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
}

TEST(Graph, ChainRunsInOrderAndAgain) {
    crew_pool *p = make_pool(2);
    Built b(p, 1000);
    for (size_t i = 1; i < 1000; i++)
        b.edge(i - 1, i);
    for (int k = 1; k <= 5; k++) {
        run_and_wait(p, b.g);
        b.expect_runs(k);
    }
    crew_destroy(p);
}

TEST(Graph, DiamondAndWideFanOut) {
    crew_pool *p = make_pool(3);
    Built d(p, 4);
    d.edge(0, 1), d.edge(0, 2), d.edge(1, 3), d.edge(2, 3);
    for (int k = 1; k <= 200; k++)
        run_and_wait(p, d.g);
    d.expect_runs(200);

    const size_t wide = size_t(scaled(20000));
    Built f(p, wide + 2); // 0 -> each of 1..wide -> wide + 1
    for (size_t i = 1; i <= wide; i++)
        f.edge(0, i), f.edge(i, wide + 1);
    run_and_wait(p, f.g);
    run_and_wait(p, f.g);
    f.expect_runs(2);
    crew_destroy(p);
}

// A loop: init -> body -> cond, cond's successor 0 is body (again), 1 is done.
struct Loop {
    std::atomic<int> body{0}, init{0}, done{0};
    int turns = 10;
};
void loop_init(void *a) { static_cast<Loop *>(a)->init++; }
void loop_body(void *a) { static_cast<Loop *>(a)->body++; }
void loop_done(void *a) { static_cast<Loop *>(a)->done++; }
uint32_t loop_cond(void *a) {
    auto *l = static_cast<Loop *>(a);
    return l->body.load() % l->turns == 0 ? 1u : 0u;
}

TEST(Graph, ConditionClosesALoop) {
    crew_pool *p = make_pool(2);
    Loop l;
    crew_graph *g;
    crew_node init, body, cond, done, never;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, loop_init, &l, 0, &init), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, loop_body, &l, 0, &body), CREW_OK);
    ASSERT_EQ(crew_graph_add_condition(g, loop_cond, &l, 0, &cond), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, loop_done, &l, 0, &done), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, loop_done, &l, 0, &never), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, init, body), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, body, cond), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, cond, body), CREW_OK); // index 0
    ASSERT_EQ(crew_graph_precede(g, cond, done), CREW_OK); // index 1
    ASSERT_EQ(crew_graph_precede(g, done, never), CREW_OK);
    ASSERT_EQ(crew_graph_remove_edge(g, done, never), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, cond, never), CREW_OK); // index 2: never chosen
    for (int k = 1; k <= 3; k++) {
        run_and_wait(p, g);
        EXPECT_EQ(l.init.load(), k);
        EXPECT_EQ(l.body.load(), 10 * k);
        EXPECT_EQ(l.done.load(), k);
    }
    // Repetitions: three more loops of ten in one run.
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run_n(g, 3, &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(l.body.load(), 60);
    EXPECT_EQ(l.done.load(), 6);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

// A plain successor B of a node A inside a condition loop: A finishes again while B (a worse
// priority than the condition) is still queued. Each turn of A must count for one turn of B,
// and B's early counts must not corrupt the run (they once underflowed into B's number).
std::atomic<long> lp_a{0}, lp_b{0}, lp_d{0}, lp_turns{0};
void lp_fa(void *) { lp_a.fetch_add(1); }
void lp_fb(void *) { lp_b.fetch_add(1); }
void lp_fd(void *) { lp_d.fetch_add(1); }
void lp_init(void *) {}
uint32_t lp_cond(void *limit) {
    return lp_turns.fetch_add(1) % *static_cast<long *>(limit) < *static_cast<long *>(limit) - 1
               ? 0u
               : 1u;
}

TEST(Graph, PlainSuccessorOfALoopNodeRunsEveryTurn) {
    for (unsigned threads : {1u, 2u}) {
        crew_pool *p = make_pool(threads);
        long limit = 50;
        lp_a = 0, lp_b = 0, lp_d = 0, lp_turns = 0;
        crew_graph *g;
        crew_node I, A, B, C, D;
        ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
        ASSERT_EQ(crew_graph_add(g, lp_init, nullptr, 0, &I), CREW_OK);
        ASSERT_EQ(crew_graph_add(g, lp_fa, nullptr, 0, &A), CREW_OK);
        ASSERT_EQ(crew_graph_add(g, lp_fb, nullptr, 5, &B), CREW_OK); // worse than C: queued
        ASSERT_EQ(crew_graph_add_condition(g, lp_cond, &limit, 0, &C), CREW_OK);
        ASSERT_EQ(crew_graph_add(g, lp_fd, nullptr, 0, &D), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, I, A), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, A, B), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, A, C), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, C, A), CREW_OK); // index 0: again
        ASSERT_EQ(crew_graph_precede(g, C, D), CREW_OK); // index 1: out
        for (long k = 1; k <= 4; k++) {
            run_and_wait(p, g);
            EXPECT_EQ(lp_a.load(), limit * k) << threads << " threads";
            EXPECT_EQ(lp_b.load(), limit * k) << threads << " threads";
            EXPECT_EQ(lp_d.load(), k) << threads << " threads";
        }
        ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
        crew_destroy(p);
    }
}

// A draining shutdown refuses every submission: a run already started must still run every
// node, on the threads it has, however long the chain of refused successors (a comb: each
// spine node's first successor, a leaf, runs inline; the next spine node is refused). Such
// refusals once nested one call per tooth and overflowed the stack.
crew_pool *comb_pool;
std::atomic<long> comb_ran{0};
void comb_noop(void *) {}
void comb_f(void *) { comb_ran.fetch_add(1); }
void comb_first(void *) {
    while (crew_submit(comb_pool, comb_noop, nullptr, 0, nullptr) != CREW_ESHUTDOWN)
        std::this_thread::yield(); // until the shutdown below has begun draining
    comb_ran.fetch_add(1);
}

TEST(Graph, DrainingShutdownRunsALongCombOfRefusedNodes) {
    const long teeth = 100000; // the old code overflowed an 8 MiB stack at about 54000
    crew_pool *p = comb_pool = make_pool(2);
    comb_ran = 0;
    crew_graph *g;
    crew_node prev, leaf, spine;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, comb_first, nullptr, 0, &prev), CREW_OK);
    for (long i = 0; i < teeth; i++) {
        ASSERT_EQ(crew_graph_add(g, comb_f, nullptr, 0, &leaf), CREW_OK);
        ASSERT_EQ(crew_graph_add(g, comb_f, nullptr, 0, &spine), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, prev, leaf), CREW_OK); // first: runs inline
        ASSERT_EQ(crew_graph_precede(g, prev, spine), CREW_OK); // submitted: refused
        prev = spine;
    }
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_EQ(comb_ran.load(), 2 * teeth + 1);
    EXPECT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

TEST(Graph, CycleIsRefusedNamingItsNodes) {
    crew_pool *p = make_pool(1);
    Built b(p, 5);
    b.edge(0, 1), b.edge(1, 2), b.edge(2, 3), b.edge(3, 1), b.edge(3, 4);
    crew_handle h = CREW_HANDLE_NONE;
    EXPECT_EQ(crew_graph_run(b.g, &h), CREW_EINVAL);
    std::string e = crew_last_error();
    EXPECT_NE(e.find("crew_graph_run"), std::string::npos) << e;
    EXPECT_NE(e.find("cycle"), std::string::npos) << e;
    EXPECT_NE(e.find("1 -> 2 -> 3 -> 1"), std::string::npos) << e;
    EXPECT_EQ(h.slot, 0u); // nothing opened
    EXPECT_EQ(crew_graph_run(b.g, &h), CREW_EINVAL); // still refused
    // Breaking the cycle makes it runnable.
    ASSERT_EQ(crew_graph_remove_edge(b.g, 3, 1), CREW_OK);
    b.recs[1].preds.pop_back();
    run_and_wait(p, b.g);
    b.expect_runs(1);
    crew_destroy(p);
}

TEST(Graph, ALongCycleIsToldByItsEdges) {
    crew_pool *p = make_pool(1);
    Built b(p, 11); // 0 -> 1 -> ... -> 10 -> 1: a cycle of 10 nodes, longer than the text's 8
    for (size_t i = 0; i < 10; i++)
        b.edge(i, i + 1);
    b.edge(10, 1);
    crew_handle h = CREW_HANDLE_NONE;
    EXPECT_EQ(crew_graph_run(b.g, &h), CREW_EINVAL);
    std::string e = crew_last_error();
    size_t open = e.find('('), close = e.rfind(')');
    ASSERT_NE(open, std::string::npos) << e;
    ASSERT_NE(close, std::string::npos) << e;
    std::string path = e.substr(open + 1, close - open - 1); // "a -> b -> ... -> h -> ..."
    std::vector<long> nodes;
    size_t at = 0;
    while (at < path.size() && path.compare(at, 3, "...") != 0) {
        nodes.push_back(std::stol(path.substr(at)));
        size_t arrow = path.find(" -> ", at);
        ASSERT_NE(arrow, std::string::npos) << e;
        at = arrow + 4;
    }
    EXPECT_EQ(path.substr(at), "...") << e; // a part of the cycle
    ASSERT_EQ(nodes.size(), 8u) << e;
    for (size_t k = 0; k + 1 < nodes.size(); k++) { // every arrow printed is an edge
        long a = nodes[k], c = nodes[k + 1];
        EXPECT_TRUE(c == a + 1 || (a == 10 && c == 1)) << a << " -> " << c << " in " << e;
    }
    char named[32];
    std::snprintf(named, sizeof named, "node %ld is on it", nodes[0]);
    EXPECT_NE(e.find(named), std::string::npos) << e;
    crew_destroy(p);
}

std::atomic<int> nw_ran{0};
void nw_f(void *) { nw_ran.fetch_add(1); }
uint32_t nw_cond(void *) {
    nw_ran.fetch_add(1);
    return 0;
}

TEST(Graph, ALoopWithNoWayInIsRefused) {
    crew_pool *p = make_pool(1);
    nw_ran = 0;
    crew_graph *g;
    crew_node R, X, C, E;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, nw_f, nullptr, 0, &R), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, nw_f, nullptr, 0, &X), CREW_OK);
    ASSERT_EQ(crew_graph_add_condition(g, nw_cond, nullptr, 0, &C), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, R, X), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, X, C), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, C, R), CREW_OK); // R -> X -> C? -> R: no way in
    crew_handle h = CREW_HANDLE_NONE;
    EXPECT_EQ(crew_graph_run(g, &h), CREW_EINVAL);
    std::string e = crew_last_error();
    EXPECT_NE(e.find("crew_graph_run"), std::string::npos) << e;
    EXPECT_NE(e.find("entry node"), std::string::npos) << e;
    EXPECT_EQ(h.slot, 0u); // nothing opened
    EXPECT_EQ(crew_graph_run_n(g, 2, &h), CREW_EINVAL);
    EXPECT_EQ(nw_ran.load(), 0);
    // An entry node before the loop, and a way out: it runs.
    ASSERT_EQ(crew_graph_add(g, nw_f, nullptr, 0, &E), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, E, R), CREW_OK);
    ASSERT_EQ(crew_graph_remove_edge(g, C, R), CREW_OK);
    run_and_wait(p, g);
    EXPECT_EQ(nw_ran.load(), 4);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

TEST(Graph, ConcurrentRunsFromTwoThreads) {
    crew_pool *p = make_pool(2);
    Built b(p, 6);
    b.edge(0, 1), b.edge(0, 2), b.edge(1, 3), b.edge(2, 3), b.edge(3, 4), b.edge(3, 5);
    const int per = int(scaled(400));
    auto runner = [&] {
        for (int k = 0; k < per; k++) {
            crew_handle h = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_graph_run(b.g, &h), CREW_OK);
            ASSERT_EQ(crew_wait(p, h), CREW_OK);
        }
    };
    std::thread t1(runner), t2(runner);
    t1.join();
    t2.join();
    // Overlapping runs: a node's count only bounds by its predecessors' (checked in rec_run).
    b.expect_runs(2 * per);
    crew_destroy(p);
}

// A node that runs another graph and waits for it, on a pool of one thread: it helps.
struct Nested {
    crew_pool *p;
    crew_graph *inner;
    std::atomic<int> ok{0};
};
void run_inner(void *a) {
    auto *n = static_cast<Nested *>(a);
    crew_handle h = CREW_HANDLE_NONE;
    if (crew_graph_run(n->inner, &h) == CREW_OK && crew_wait(n->p, h) == CREW_OK)
        n->ok++;
}

TEST(Graph, NodesThatWaitHelpOnOneThread) {
    crew_pool *p = make_pool(1);
    Built inner(p, 50);
    for (size_t i = 1; i < 50; i++)
        inner.edge(0, i);
    Nested n{p, inner.g};
    crew_graph *outer;
    ASSERT_EQ(crew_graph_create(p, &outer), CREW_OK);
    crew_node a, b, c;
    ASSERT_EQ(crew_graph_add(outer, run_inner, &n, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(outer, run_inner, &n, 0, &b), CREW_OK);
    ASSERT_EQ(crew_graph_add(outer, run_inner, &n, 0, &c), CREW_OK);
    ASSERT_EQ(crew_graph_precede(outer, a, c), CREW_OK);
    ASSERT_EQ(crew_graph_precede(outer, b, c), CREW_OK);
    run_and_wait(p, outer);
    EXPECT_EQ(n.ok.load(), 3);
    inner.expect_runs(3);
    // The inner graph cannot change from inside its own run; the outer one not from its node.
    ASSERT_EQ(crew_graph_destroy(outer), CREW_OK);
    crew_destroy(p);
}

// Cancel: a gate node before many; crew_cancel while it holds; every other node reported.
TEST(Graph, CancelReportsEveryUnstartedNode) {
    crew_pool *p = pool_with_drops(2);
    Gate gate;
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    crew_node hold;
    ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &hold), CREW_OK);
    std::vector<Rec> recs(300);
    for (size_t i = 0; i < recs.size(); i++) {
        crew_node x;
        ASSERT_EQ(crew_graph_add(g, rec_run, &recs[i], 0, &x), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, i < 100 ? hold : x - 100, x), CREW_OK);
    }
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    gate.wait_arrivals(1);
    EXPECT_EQ(crew_graph_destroy(g), CREW_EBUSY);
    EXPECT_NE(std::string(crew_last_error()).find("in progress"), std::string::npos);
    EXPECT_EQ(crew_graph_add(g, rec_run, nullptr, 0, nullptr), CREW_EBUSY);
    ASSERT_EQ(crew_cancel(p, h), CREW_OK);
    gate.open();
    EXPECT_EQ(crew_wait(p, h), CREW_ECANCELED);
    for (auto &r : recs) {
        EXPECT_EQ(r.runs.load(), 0);
        EXPECT_EQ(r.dropped.load(), 1);
    }
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

// With monitoring on, every node a cancelled run reports to on_drop counts in
// crew_stats.cancelled, as any dropped task does; the run itself counts as one task.
TEST(Graph, UnstartedNodesCountAsCancelledInTheStatistics) {
    crew_pool *p = pool_with_drops(2);
    ASSERT_EQ(crew_set_monitoring(p, 1), CREW_OK);
    Gate gate;
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    crew_node hold;
    ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &hold), CREW_OK);
    std::vector<Rec> recs(50);
    for (size_t i = 0; i < recs.size(); i++) {
        crew_node x;
        ASSERT_EQ(crew_graph_add(g, rec_run, &recs[i], 0, &x), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, i < 10 ? hold : x - 10, x), CREW_OK);
    }
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    gate.wait_arrivals(1);
    ASSERT_EQ(crew_cancel(p, h), CREW_OK);
    gate.open();
    EXPECT_EQ(crew_wait(p, h), CREW_ECANCELED);
    crew_stats st{};
    st.size = sizeof st;
    ASSERT_EQ(crew_stats_get(p, &st), CREW_OK);
    long reported = 0;
    for (auto &r : recs)
        reported += r.dropped.load();
    EXPECT_EQ(reported, long(recs.size()));
    // Every node reported counts as cancelled; each node counts as submitted, so that
    // cancelled never exceeds submitted: the run's first task, hold (ran) and the 50 unstarted.
    EXPECT_EQ(st.cancelled, uint64_t(recs.size()));
    EXPECT_EQ(st.submitted, 1u + 1u + recs.size());
    EXPECT_LE(st.cancelled + 1u, st.submitted);
    // Monitoring off: nothing more is counted.
    ASSERT_EQ(crew_stats_reset(p), CREW_OK);
    ASSERT_EQ(crew_set_monitoring(p, 0), CREW_OK);
    h = CREW_HANDLE_NONE;
    Gate again;
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, Gate::block, &again, 0, &hold), CREW_OK);
    crew_node x;
    ASSERT_EQ(crew_graph_add(g, rec_run, &recs[0], 0, &x), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, hold, x), CREW_OK);
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    again.wait_arrivals(1);
    ASSERT_EQ(crew_cancel(p, h), CREW_OK);
    again.open();
    EXPECT_EQ(crew_wait(p, h), CREW_ECANCELED);
    EXPECT_EQ(recs[0].dropped.load(), 2);
    ASSERT_EQ(crew_stats_get(p, &st), CREW_OK);
    EXPECT_EQ(st.cancelled, 0u);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

uint32_t pick_first(void *) { return 0; }

// A run that ends normally counts each node that started once (a loop's turns, a repetition's
// nodes), and a node its condition did not choose nowhere: submitted == completed.
TEST(Graph, StatisticsCountNodesThatRanAcrossRepetitions) {
    crew_pool *p = pool_with_drops(2);
    ASSERT_EQ(crew_set_monitoring(p, 1), CREW_OK);
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    Rec chosen, other;
    crew_node c, a, b;
    ASSERT_EQ(crew_graph_add_condition(g, pick_first, nullptr, 0, &c), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, rec_run, &chosen, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, rec_run, &other, 0, &b), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, c, a), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, c, b), CREW_OK);
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run_n(g, 3, &h), CREW_OK);
    EXPECT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(chosen.runs.load(), 3);
    EXPECT_EQ(other.runs.load(), 0);
    crew_stats st{};
    st.size = sizeof st;
    ASSERT_EQ(crew_stats_get(p, &st), CREW_OK);
    EXPECT_EQ(st.submitted, 1u + 3u * 2u); // the first task, then c and a in each repetition
    EXPECT_EQ(st.completed, st.submitted);
    EXPECT_EQ(st.cancelled, 0u);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

TEST(Graph, CancellingShutdownReportsAndDrainingRuns) {
    for (int how : {CREW_CANCEL, CREW_DRAIN}) {
        crew_pool *p = pool_with_drops(2);
        Gate gate;
        crew_graph *g;
        ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
        crew_node hold, x;
        ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &hold), CREW_OK);
        std::vector<Rec> recs(200);
        for (size_t i = 0; i < recs.size(); i++) {
            ASSERT_EQ(crew_graph_add(g, rec_run, &recs[i], 0, &x), CREW_OK);
            ASSERT_EQ(crew_graph_precede(g, i % 2 ? hold : x - 1, x), CREW_OK);
        }
        crew_handle h = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
        gate.wait_arrivals(1);
        std::thread closer([&] { EXPECT_EQ(crew_shutdown(p, how), CREW_OK); });
        crewtest::wait_until_shutdown_began(p, 5);
        gate.open();
        closer.join();
        for (auto &r : recs) {
            if (how == CREW_DRAIN) {
                EXPECT_EQ(r.runs.load(), 1);
                EXPECT_EQ(r.dropped.load(), 0);
            } else {
                EXPECT_EQ(r.runs.load() + r.dropped.load(), 1);
            }
        }
        EXPECT_EQ(crew_graph_destroy(g), CREW_OK);
        crew_destroy(p);
    }
}

// A node made ready while the pool is paused does not start before crew_resume (a chain's next
// node is not run on the finishing node's thread then).
TEST(Graph, PausedPoolStartsNoFurtherNode) {
    crew_pool *p = make_pool(2);
    Gate gate;
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    crew_node hold, x, y;
    Rec rx, ry;
    ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &hold), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, rec_run, &rx, 0, &x), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, rec_run, &ry, 0, &y), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, hold, x), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, hold, y), CREW_OK);
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    gate.wait_arrivals(1);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    gate.open();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_EQ(rx.runs.load() + ry.runs.load(), 0) << "a node started while the pool was paused";
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(rx.runs.load() + ry.runs.load(), 2);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

TEST(Graph, BadInputIsRefusedAndChangesNothing) {
    crew_pool *p = make_pool(1);
    crew_graph *g = nullptr;
    auto says = [](const char *what) {
        std::string e = crew_last_error();
        EXPECT_NE(e.find(what), std::string::npos) << e;
    };
    EXPECT_EQ(crew_graph_create(nullptr, &g), CREW_EINVAL);
    EXPECT_EQ(crew_graph_create(p, nullptr), CREW_EINVAL);
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    crew_node a = 7, b, c;
    EXPECT_EQ(crew_graph_add(nullptr, rec_run, nullptr, 0, &a), CREW_EINVAL);
    EXPECT_EQ(a, CREW_NODE_NONE);
    EXPECT_EQ(crew_graph_add(g, nullptr, nullptr, 0, &a), CREW_EINVAL);
    says("fn is NULL");
    EXPECT_EQ(crew_graph_add_condition(g, nullptr, nullptr, 0, &a), CREW_EINVAL);
    EXPECT_EQ(crew_graph_precede(g, 0, 1), CREW_EINVAL);
    says("no nodes");
    Rec ra, rb, rc;
    ASSERT_EQ(crew_graph_add(g, rec_run, &ra, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, rec_run, &rb, 0, &b), CREW_OK);
    EXPECT_EQ(a, 0u);
    EXPECT_EQ(b, 1u);
    EXPECT_EQ(crew_graph_precede(g, a, 2), CREW_EINVAL);
    says("node 2 is not a node of this graph");
    EXPECT_EQ(crew_graph_precede(g, CREW_NODE_NONE, a), CREW_EINVAL);
    says("CREW_NODE_NONE");
    EXPECT_EQ(crew_graph_precede(g, a, a), CREW_EINVAL);
    says("to itself");
    EXPECT_EQ(crew_graph_precede(nullptr, a, b), CREW_EINVAL);
    EXPECT_EQ(crew_graph_remove_edge(g, a, b), CREW_EINVAL);
    says("no edge");
    ASSERT_EQ(crew_graph_precede(g, a, b), CREW_OK);
    EXPECT_EQ(crew_graph_run(nullptr, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_graph_run_n(g, 0, nullptr), CREW_EINVAL);
    crew_handle forged = {12345, 6};
    EXPECT_EQ(crew_graph_run(g, &forged), CREW_EINVAL);
    EXPECT_EQ(crew_graph_dump_dot(g, nullptr), CREW_EINVAL);
    // The failed calls changed nothing: two nodes, one edge, and nothing ran.
    char *text = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ASSERT_EQ(crew_graph_dump_dot(g, f), CREW_OK);
    fclose(f);
    std::string dot(text, len);
    free(text);
    EXPECT_NE(dot.find("n0 -> n1;"), std::string::npos) << dot;
    EXPECT_EQ(dot.find("n2"), std::string::npos) << dot;
    EXPECT_EQ(ra.runs.load() + rb.runs.load(), 0);
    // A change after a run unfolds the edges again; the run sees the new one.
    run_and_wait(p, g);
    ASSERT_EQ(crew_graph_add(g, rec_run, &rc, 0, &c), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, b, c), CREW_OK);
    rc.preds.push_back(&rb);
    run_and_wait(p, g);
    EXPECT_EQ(rc.runs.load(), 1);
    EXPECT_FALSE(rc.bad.load());
    // A pool shut down refuses runs; the graph is destroyed after it.
    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_EQ(crew_graph_run(g, nullptr), CREW_ESHUTDOWN);
    EXPECT_EQ(crew_graph_destroy(g), CREW_OK);
    EXPECT_EQ(crew_graph_destroy(nullptr), CREW_OK);
    crew_destroy(p);
}

// A node that runs a whole other graph (crew_graph_add_graph): the nodes after it start once
// every node of the child's run has finished; a child used by two parents, and twice in one,
// runs once per use; on one thread the waits help.
struct After {
    Rec *last_of_child;
    long per_run; // the child's last node runs this many times per run of the parent
    std::atomic<long> runs{0};
    std::atomic<bool> bad{false};
};
void after_child(void *a) {
    auto *x = static_cast<After *>(a);
    long k = x->runs.fetch_add(1) + 1;
    if (x->last_of_child->runs.load() < k * x->per_run)
        x->bad = true;
}

TEST(Graph, ANodeRunsAWholeChildGraph) {
    for (unsigned threads : {1u, 2u}) {
        crew_pool *p = pool_with_drops(threads);
        Built child(p, 10); // a chain
        for (size_t i = 1; i < 10; i++)
            child.edge(i - 1, i);
        After after{&child.recs[9], 2};
        crew_graph *g;
        crew_node first, second, x;
        ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
        ASSERT_EQ(crew_graph_add_graph(g, child.g, 0, &first), CREW_OK);
        ASSERT_EQ(crew_graph_add_graph(g, child.g, 0, &second), CREW_OK); // twice, concurrently
        ASSERT_EQ(crew_graph_add(g, after_child, &after, 0, &x), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, first, x), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, second, x), CREW_OK);
        crew_graph *top; // a graph of that graph: two levels
        crew_node only;
        ASSERT_EQ(crew_graph_create(p, &top), CREW_OK);
        ASSERT_EQ(crew_graph_add_graph(top, g, 0, &only), CREW_OK);
        for (int k = 1; k <= 3; k++) {
            run_and_wait(p, g);
            run_and_wait(p, top);
        }
        child.expect_runs(12);
        EXPECT_EQ(after.runs.load(), 6);
        EXPECT_FALSE(after.bad.load()) << "a node after the child started before it ended";
        // While a graph runs it, the child cannot be destroyed; nor can g while top runs it.
        EXPECT_EQ(crew_graph_destroy(child.g), CREW_EBUSY);
        EXPECT_NE(std::string(crew_last_error()).find("crew_graph_add_graph"), std::string::npos);
        EXPECT_EQ(crew_graph_destroy(g), CREW_EBUSY);
        ASSERT_EQ(crew_graph_destroy(top), CREW_OK);
        ASSERT_EQ(crew_graph_destroy(g), CREW_OK); // child's destroy: Built's, after g's
        crew_destroy(p);
    }
}

// A graph never contains itself, however deep; a child that cannot run (a cycle) or that is
// cancelled cancels the parent's run, whose later nodes are reported to on_drop.
TEST(Graph, ChildGraphsRefuseCyclesAndPassOnFailure) {
    crew_pool *p = pool_with_drops(2);
    crew_graph *a, *b, *c;
    ASSERT_EQ(crew_graph_create(p, &a), CREW_OK);
    ASSERT_EQ(crew_graph_create(p, &b), CREW_OK);
    ASSERT_EQ(crew_graph_create(p, &c), CREW_OK);
    crew_node n = 7;
    EXPECT_EQ(crew_graph_add_graph(a, a, 0, &n), CREW_EINVAL);
    EXPECT_EQ(n, CREW_NODE_NONE);
    EXPECT_NE(std::string(crew_last_error()).find("itself"), std::string::npos);
    EXPECT_EQ(crew_graph_add_graph(nullptr, a, 0, &n), CREW_EINVAL);
    EXPECT_EQ(crew_graph_add_graph(a, nullptr, 0, &n), CREW_EINVAL);
    ASSERT_EQ(crew_graph_add_graph(a, b, 0, &n), CREW_OK); // a runs b
    ASSERT_EQ(crew_graph_add_graph(b, c, 0, &n), CREW_OK); // b runs c
    EXPECT_EQ(crew_graph_add_graph(c, a, 0, &n), CREW_EINVAL); // c would run a: a cycle
    EXPECT_NE(std::string(crew_last_error()).find("for ever"), std::string::npos);
    EXPECT_EQ(crew_graph_add_graph(b, a, 0, &n), CREW_EINVAL);
    // c: a cycle of plain edges, refused when b's node runs it: b's and a's runs are cancelled.
    Rec r1, r2, later;
    crew_node x, y, z;
    ASSERT_EQ(crew_graph_add(c, rec_run, &r1, 0, &x), CREW_OK);
    ASSERT_EQ(crew_graph_add(c, rec_run, &r2, 0, &y), CREW_OK);
    ASSERT_EQ(crew_graph_precede(c, x, y), CREW_OK);
    ASSERT_EQ(crew_graph_precede(c, y, x), CREW_OK);
    ASSERT_EQ(crew_graph_add(a, rec_run, &later, 0, &z), CREW_OK);
    ASSERT_EQ(crew_graph_precede(a, 0, z), CREW_OK); // after a's node that runs b
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(a, &h), CREW_OK);
    EXPECT_EQ(crew_wait(p, h), CREW_ECANCELED);
    EXPECT_EQ(later.runs.load(), 0);
    EXPECT_EQ(later.dropped.load(), 1);
    EXPECT_EQ(r1.runs.load() + r2.runs.load(), 0);
    // Fixed, it runs through both levels.
    ASSERT_EQ(crew_graph_remove_edge(c, y, x), CREW_OK);
    r2.preds.push_back(&r1);
    later.dropped = 0;
    run_and_wait(p, a);
    EXPECT_EQ(r1.runs.load(), 1);
    EXPECT_EQ(r2.runs.load(), 1);
    EXPECT_EQ(later.runs.load(), 1);
    EXPECT_FALSE(r2.bad.load());
    EXPECT_EQ(crew_graph_destroy(c), CREW_EBUSY);
    EXPECT_EQ(crew_graph_destroy(b), CREW_EBUSY);
    ASSERT_EQ(crew_graph_destroy(a), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(b), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(c), CREW_OK);
    crew_destroy(p);
}

// A node changes or destroys its own graph: CREW_EBUSY.
struct SelfChange {
    crew_graph *g;
    std::atomic<int> busy{0};
};
void change_own(void *a) {
    auto *s = static_cast<SelfChange *>(a);
    s->busy += crew_graph_add(s->g, crewtest::noop_task, nullptr, 0, nullptr) == CREW_EBUSY;
    s->busy += crew_graph_precede(s->g, 0, 1) == CREW_EBUSY;
    s->busy += crew_graph_destroy(s->g) == CREW_EBUSY;
}

TEST(Graph, ANodeCannotChangeItsOwnGraph) {
    crew_pool *p = make_pool(1);
    SelfChange s;
    ASSERT_EQ(crew_graph_create(p, &s.g), CREW_OK);
    ASSERT_EQ(crew_graph_add(s.g, change_own, &s, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_graph_add(s.g, change_own, &s, 0, nullptr), CREW_OK);
    run_and_wait(p, s.g);
    EXPECT_EQ(s.busy.load(), 6);
    ASSERT_EQ(crew_graph_destroy(s.g), CREW_OK);
    crew_destroy(p);
}

// Runs of one graph overlap from several threads while the pool resizes, pauses, some runs are
// cancelled, and the pool shuts down: each node of each accepted run runs once or is reported
// once (on_drop), and nothing else happens.
TEST(Graph, StressOverlappingRunsWithResizePauseCancelShutdown) {
    for (int how : {CREW_CANCEL, CREW_DRAIN}) {
        crew_pool *p = pool_with_drops(3);
        const size_t n = 64;
        Built b(p, n); // a layered DAG: node i after i - 1 and, for even i, after i / 2
        for (size_t i = 1; i < n; i++) {
            b.edge(i - 1, i);
            if (i % 2 == 0 && i / 2 != i - 1)
                b.edge(i / 2, i);
        }
        // Some nodes in a lane of concurrency 2 (never more at once, across the runs), some
        // with a start-by time (short: a pause or a loaded machine expires them, which stops
        // their run; long: they never expire).
        crew_lane *lane;
        ASSERT_EQ(crew_lane_create(p, 2, &lane), CREW_OK);
        std::atomic<int> lane_in{0};
        for (size_t i = 0; i < n; i++) {
            if (i % 5 == 1) {
                ASSERT_EQ(crew_graph_node_lane(b.g, b.ids[i], lane), CREW_OK);
                b.recs[i].lane_in = &lane_in;
                b.recs[i].lane_max = 2;
            }
            uint64_t within = i < 32 ? 300000u : 5000000000u; // 0.3 ms, 5 s
            if (i % 16 == 7) {
                ASSERT_EQ(crew_graph_node_start_within(b.g, b.ids[i], within), CREW_OK);
            }
        }
        std::atomic<long> accepted{0};
        std::atomic<bool> stop{false};
        auto runner = [&](int seed) {
            unsigned x = unsigned(seed) * 2654435761u + 1;
            while (!stop.load()) {
                crew_handle h = CREW_HANDLE_NONE;
                int rc = crew_graph_run(b.g, &h);
                if (rc == CREW_ESHUTDOWN)
                    break;
                ASSERT_EQ(rc, CREW_OK);
                accepted++;
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                if (x % 5 == 0)
                    crew_cancel(p, h);
                if (x % 3 != 0) {
                    rc = crew_wait(p, h);
                    ASSERT_TRUE(rc == CREW_OK || rc == CREW_ECANCELED || rc == CREW_EEXPIRED ||
                                rc == CREW_ESHUTDOWN)
                        << rc;
                }
            }
        };
        std::vector<std::thread> ts;
        for (int k = 0; k < 3; k++)
            ts.emplace_back(runner, k + 1);
        // The runners' first runs before the storm (on a loaded machine a thread may not start
        // within the rounds below): up to 10 s, after which EXPECT_GT(runs, 0) fails.
        for (int i = 0; i < 10000 && accepted.load() == 0; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const int rounds = int(scaled(40));
        for (int r = 0; r < rounds; r++) {
            crew_resize(p, 1 + unsigned(r % 4));
            if (r % 7 == 3) {
                crew_pause(p);
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                crew_resume(p);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        ASSERT_EQ(crew_shutdown(p, how), CREW_OK);
        stop = true;
        for (auto &t : ts)
            t.join();
        long runs = accepted.load();
        EXPECT_GT(runs, 0);
        for (size_t i = 0; i < n; i++) {
            EXPECT_EQ(b.recs[i].runs.load() + b.recs[i].dropped.load(), runs) << "node " << i;
            EXPECT_FALSE(b.recs[i].bad.load()) << "node " << i;
        }
        EXPECT_EQ(crew_lane_destroy(lane), CREW_EBUSY); // the graph holds it
        for (size_t i = 1; i < n; i += 5)
            ASSERT_EQ(crew_graph_node_lane(b.g, b.ids[i], nullptr), CREW_OK);
        EXPECT_EQ(crew_lane_destroy(lane), CREW_OK);
        crew_destroy(p);
    }
}


TEST(GraphCpp, EmplacePrecedeConditionAndExceptions) {
    crew::pool p(crew::options{2});
    crew::graph g(p);
    std::atomic<int> a{0}, b{0}, c{0}, turns{0};
    auto na = g.emplace([&] { a++; });
    auto nb = g.emplace([&] { b += a.load(); });
    auto nc = g.emplace([&] { c++; });
    auto loop = g.emplace([&] { return ++turns % 3 == 0 ? 1 : 0; }); // a condition
    na.precede(nb);
    nc.succeed(nb);
    nc.precede(loop);
    loop.precede(nc); // 0: again
    auto done = g.emplace([] {});
    loop.precede(done); // 1: out
    g.run().wait();
    EXPECT_EQ(a.load(), 1);
    EXPECT_EQ(b.load(), 1);
    EXPECT_EQ(c.load(), 3);
    auto e1 = g.run(), e2 = g.run(); // two runs at once
    e1.wait();
    e2.wait();
    EXPECT_EQ(a.load(), 3);
    EXPECT_EQ(c.load(), 9);
    EXPECT_NO_THROW(g.emplace([] {})); // between runs the graph may change
}

TEST(GraphCpp, ANodeThatThrowsCancelsTheRestOfItsRun) {
    crew::pool p(crew::options{2});
    crew::graph g(p);
    std::atomic<int> after{0};
    auto boom = g.emplace([] { throw std::runtime_error("boom"); });
    for (int i = 0; i < 20; i++)
        boom.precede(g.emplace([&] { after++; }));
    auto e = g.run();
    try {
        e.wait();
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error &x) {
        EXPECT_STREQ(x.what(), "boom");
    }
    EXPECT_EQ(after.load(), 0);
    // A cycle of plain edges: crew::error with CREW_EINVAL at run().
    crew::graph cyc(p);
    auto x = cyc.emplace([] {}), y = cyc.emplace([] {});
    x.precede(y);
    y.precede(x);
    try {
        cyc.run();
        ADD_FAILURE() << "a cycle was run";
    } catch (const crew::error &err) {
        EXPECT_EQ(err.code(), CREW_EINVAL);
    }
}

// A node that throws cancels the rest of its run, whatever the shape: two failing branches
// (wait rethrows one of the two, the first kept), a condition that throws, a repeated run
// stopped in its repetition; a run after a failed one starts afresh. No exception reaches the
// pool's error handler (every one is delivered to a wait, or is a second one of its run).
TEST(GraphCpp, ExceptionsCancelTheirRunInEveryShape) {
    crew::pool p(crew::options{2});
    std::atomic<int> reported{0};
    p.on_error([&](std::exception_ptr) { reported++; });
    crew::graph g(p);
    std::atomic<int> after{0}, turns{0}, fail{1};
    auto root = g.emplace([] {});
    auto left = g.emplace([&] {
        if (fail.load())
            throw std::runtime_error("left");
    });
    auto right = g.emplace([&] {
        if (fail.load())
            throw std::logic_error("right");
    });
    auto join = g.emplace([&] { after++; });
    root.precede(left), root.precede(right);
    join.succeed(left).succeed(right);
    for (int k = 0; k < 20; k++) {
        int which = 0;
        try {
            g.run().wait();
        } catch (const std::runtime_error &x) {
            EXPECT_STREQ(x.what(), "left");
            which = 1;
        } catch (const std::logic_error &x) {
            EXPECT_STREQ(x.what(), "right");
            which = 2;
        }
        EXPECT_NE(which, 0);
    }
    EXPECT_EQ(after.load(), 0);
    fail = 0;
    g.run().wait(); // the next run starts afresh
    EXPECT_EQ(after.load(), 1);

    crew::graph c(p); // a condition node that throws: its loop ends there
    std::atomic<int> body{0}, out{0};
    auto init = c.emplace([] {});
    auto b = c.emplace([&] { body++; });
    auto cond = c.emplace([&]() -> int {
        if (++turns == 3)
            throw std::runtime_error("cond");
        return 0;
    });
    auto done = c.emplace([&] { out++; });
    init.precede(b);
    b.precede(cond);
    cond.precede(b); // 0: again
    cond.precede(done);
    EXPECT_THROW(c.run().wait(), std::runtime_error);
    EXPECT_EQ(body.load(), 3);
    EXPECT_EQ(out.load(), 0);

    crew::graph r(p); // run_n: a throw in the third repetition ends the run
    std::atomic<int> reps{0}, tail{0};
    auto first = r.emplace([&] {
        if (++reps == 3)
            throw std::runtime_error("third");
    });
    first.precede(r.emplace([&] { tail++; }));
    EXPECT_THROW(r.run_n(10).wait(), std::runtime_error);
    EXPECT_EQ(reps.load(), 3);
    EXPECT_EQ(tail.load(), 2);
    r.run_n(2).wait();
    EXPECT_EQ(tail.load(), 4);
    EXPECT_THROW(r.run_n(0), crew::error);
    EXPECT_EQ(reported.load(), 0);
}

// The destructor of a graph whose run is in progress waits for the run (helping), then frees
// the graph: the node that ends later, and the execution waited for after the graph is gone,
// touch nothing freed. It once freed the wrapper under the run, reporting CREW_EBUSY.
TEST(GraphCpp, DestructorWaitsForItsRunsInProgress) {
    for (unsigned threads : {1u, 2u}) {
        crew::pool p(crew::options{threads});
        std::atomic<int> reported{0};
        p.on_error([&](std::exception_ptr) { reported++; });
        Gate gate;
        std::atomic<int> a{0}, b{0};
        std::optional<crew::graph::execution> e;
        auto g = std::make_unique<crew::graph>(p);
        auto hold = g->emplace([&] {
            Gate::block(&gate);
            a++;
        });
        hold.precede(g->emplace([&] {
            b++;
            throw std::runtime_error("after the gate");
        }));
        e.emplace(g->run());
        gate.wait_arrivals(1);
        std::thread opener([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20)); // let the reset begin
            gate.open();
        });
        g.reset(); // waits for the run (helping)
        EXPECT_EQ(a.load(), 1);
        EXPECT_EQ(b.load(), 1);
        opener.join();
        EXPECT_EQ(reported.load(), 0);
        try {
            e->wait();
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error &x) {
            EXPECT_STREQ(x.what(), "after the gate");
        }
        // An execution not waited for, destroyed after its graph: its exception is reported.
        auto g2 = std::make_unique<crew::graph>(p);
        g2->emplace([] { throw std::runtime_error("unwaited"); });
        e.emplace(g2->run());
        g2.reset();
        e.reset();
        EXPECT_EQ(reported.load(), 1);
    }
}

// run() holds no lock while its run starts: a run() blocked for room in a full bounded queue
// must not keep a node that throws (on the pool's only worker) from recording its exception.
// It once held the graph's mutex across crew_graph_run: the node waited for the mutex, the
// worker never freed the place, and both waited for ever.
TEST(GraphCpp, ARunWaitingForRoomDoesNotBlockAThrowingNode) {
    crew::options o{1};
    o.queue_capacity = 1;
    o.full_policy = CREW_FULL_BLOCK;
    crew::pool p(o);
    crew::graph g(p);
    Gate gate;
    std::atomic<int> throws{0};
    g.emplace([&] {
        if (throws.load() == 0)
            Gate::block(&gate);
        throws++;
        throw std::runtime_error("node");
    });
    auto e1 = g.run();
    gate.wait_arrivals(1); // the only worker holds the node
    p.post([] {});         // takes the only place
    std::thread second([&] { EXPECT_THROW(g.run().wait(), std::runtime_error); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20)); // let it block for room
    gate.open();
    second.join(); // joined first: this thread must not help (it would run the queued task)
    EXPECT_THROW(e1.wait(), std::runtime_error);
    EXPECT_EQ(throws.load(), 2);
}

// Two threads run one graph concurrently, many times, and a third waits for their runs: each
// run's exception reaches that run's wait, exactly once, and nothing else (ThreadSanitizer
// checks the wrapper's state).
TEST(GraphCpp, ConcurrentRunsFromTwoThreadsWaitedByAThird) {
    crew::pool p(crew::options{2});
    std::atomic<int> reported{0};
    p.on_error([&](std::exception_ptr) { reported++; });
    crew::graph g(p);
    std::atomic<long> calls{0}, thrown{0}, tails{0};
    auto a = g.emplace([] {}), b = g.emplace([] {}), c = g.emplace([] {});
    auto maybe = g.emplace([&] {
        if (calls.fetch_add(1) % 3 == 0) {
            thrown++;
            throw std::runtime_error("every third");
        }
    });
    auto tail = g.emplace([&] { tails++; });
    a.precede(b), a.precede(c);
    maybe.succeed(b).succeed(c);
    maybe.precede(tail);
    const int per = int(scaled(300));
    std::mutex m;
    std::condition_variable cv;
    std::vector<crew::graph::execution> queue;
    int producers = 2;
    auto producer = [&] {
        for (int k = 0; k < per; k++) {
            auto e = g.run();
            std::lock_guard<std::mutex> l(m);
            queue.push_back(std::move(e));
            cv.notify_one();
        }
        std::lock_guard<std::mutex> l(m);
        producers--;
        cv.notify_one();
    };
    long ok = 0, caught = 0;
    std::thread waiter([&] {
        for (;;) {
            std::unique_lock<std::mutex> l(m);
            cv.wait(l, [&] { return !queue.empty() || producers == 0; });
            if (queue.empty())
                return;
            auto e = std::move(queue.back());
            queue.pop_back();
            l.unlock();
            try {
                e.wait();
                ok++;
            } catch (const std::runtime_error &) {
                caught++;
            }
        }
    });
    std::thread t1(producer), t2(producer);
    t1.join();
    t2.join();
    waiter.join();
    EXPECT_EQ(ok + caught, 2L * per);
    EXPECT_EQ(caught, thrown.load());
    EXPECT_EQ(tails.load(), ok);
    EXPECT_EQ(calls.load(), 2L * per);
    EXPECT_EQ(reported.load(), 0);
}

} // namespace
