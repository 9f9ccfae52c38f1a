// test_graph_opts.cpp -- a graph node's lane (crew_graph_node_lane: at most the lane's
// concurrency of its tasks and nodes at once, across runs; the lane held while a node has it)
// and start-by time (crew_graph_node_start_within: an expired node stops its run, every node
// left unstarted reported once, the wait answering CREW_EEXPIRED; repetitions count from their
// own start); their bad input; crew::graph's node.lane() and node.start_within(); and what the
// other building calls no longer do wrong: DOT output labels nodes with their escaped names,
// crew_graph_destroy's CREW_EBUSY names its cause, and a crew_graph_add_graph's check of a
// child does not make a crew_graph_add on that child answer CREW_EBUSY.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

// A node that counts its runs and, if it is in a lane, how many of the lane's run at once.
struct Node {
    std::atomic<long> runs{0};
    std::atomic<long> dropped{0};
    std::atomic<int> *inside = nullptr; // the lane's count of running nodes and tasks
    std::atomic<int> *most = nullptr;   // the most seen at once
    long sleep_us = 0;                  // busy for this long (to overlap), never a check
};

void enter(std::atomic<int> *inside, std::atomic<int> *most) {
    int now = inside->fetch_add(1) + 1;
    int m = most->load();
    while (now > m && !most->compare_exchange_weak(m, now)) {
    }
}

void node_run(void *arg) {
    auto *n = static_cast<Node *>(arg);
    if (n->inside)
        enter(n->inside, n->most);
    if (n->sleep_us)
        std::this_thread::sleep_for(std::chrono::microseconds(n->sleep_us));
    if (n->inside)
        n->inside->fetch_sub(1);
    n->runs.fetch_add(1);
}

// Runs until crew_now_ns() has passed its own start by arg's nanoseconds (so a node after it
// with a start-by time shorter than that is certainly late, whatever the load).
void busy_for(void *arg) {
    uint64_t until = crew_now_ns() + *static_cast<uint64_t *>(arg);
    while (crew_now_ns() <= until)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
}

void count_drop(crew_fn fn, void *arg, void *) {
    if (fn == node_run)
        static_cast<Node *>(arg)->dropped.fetch_add(1);
}

crew_pool *pool_with_drops(unsigned threads) {
    return crewtest::make_pool_on_drop(threads, count_drop);
}

struct Lane {
    std::atomic<int> inside{0}, most{0};
};

void lane_task(void *arg) {
    auto *l = static_cast<Lane *>(arg);
    enter(&l->inside, &l->most);
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    l->inside.fetch_sub(1);
}

} // namespace

// A fan-out of nodes in a lane of concurrency 2, run by two threads at once while plain tasks
// go to the same lane: never more than 2 of them run at once, and every node runs once a run.
TEST(GraphOpts, LaneBoundsItsNodesAcrossRunsAndOtherTasks) {
    crew_pool *p = make_pool(4);
    crew_lane *lane;
    ASSERT_EQ(crew_lane_create(p, 2, &lane), CREW_OK);
    Lane in;
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    crew_node root, last;
    Node first, end;
    ASSERT_EQ(crew_graph_add(g, node_run, &first, 0, &root), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, node_run, &end, 0, &last), CREW_OK);
    std::vector<Node> nodes(12);
    for (auto &n : nodes) {
        n.inside = &in.inside;
        n.most = &in.most;
        n.sleep_us = 300;
        crew_node x;
        ASSERT_EQ(crew_graph_add(g, node_run, &n, 0, &x), CREW_OK);
        ASSERT_EQ(crew_graph_node_lane(g, x, lane), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, root, x), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, x, last), CREW_OK);
    }
    const int runs = 3;
    auto runner = [&] {
        for (int r = 0; r < runs; r++) {
            crew_handle h = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
            ASSERT_EQ(crew_wait(p, h), CREW_OK);
        }
    };
    std::thread a(runner), b(runner);
    crew_handle tasks = CREW_HANDLE_NONE;
    for (int k = 0; k < 12; k++)
        ASSERT_EQ(crew_lane_submit(lane, lane_task, &in, &tasks), CREW_OK);
    a.join();
    b.join();
    ASSERT_EQ(crew_wait(p, tasks), CREW_OK);
    EXPECT_LE(in.most.load(), 2);
    EXPECT_GE(in.most.load(), 1);
    EXPECT_EQ(first.runs.load(), 2 * runs);
    EXPECT_EQ(end.runs.load(), 2 * runs);
    for (auto &n : nodes)
        EXPECT_EQ(n.runs.load(), 2 * runs);
    // The lane is held while nodes have it; let go by a NULL lane, or by the graph's destroy.
    EXPECT_EQ(crew_lane_destroy(lane), CREW_EBUSY);
    EXPECT_NE(std::string(crew_last_error()).find("crew_graph_node_lane"), std::string::npos)
        << crew_last_error();
    ASSERT_EQ(crew_graph_node_lane(g, root + 2, nullptr), CREW_OK);
    EXPECT_EQ(crew_lane_destroy(lane), CREW_EBUSY);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    EXPECT_EQ(crew_lane_destroy(lane), CREW_OK);
    crew_destroy(p);
}

// A chain whose middle node is in a strand: the order holds, and the chain runs on.
TEST(GraphOpts, ChainThroughAStrandKeepsItsOrder) {
    crew_pool *p = make_pool(2);
    crew_lane *strand;
    ASSERT_EQ(crew_lane_create(p, 1, &strand), CREW_OK);
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    static std::atomic<int> step{0};
    step = 0;
    struct Step {
        int want;
        std::atomic<bool> bad{false};
    };
    Step s[5];
    crew_node ids[5];
    for (int i = 0; i < 5; i++) {
        s[i].want = i;
        ASSERT_EQ(crew_graph_add(
                      g,
                      [](void *a) {
                          auto *st = static_cast<Step *>(a);
                          if (step.load() % 5 != st->want)
                              st->bad = true;
                          step.fetch_add(1);
                      },
                      &s[i], 0, &ids[i]),
                  CREW_OK);
        if (i) {
            ASSERT_EQ(crew_graph_precede(g, ids[i - 1], ids[i]), CREW_OK);
        }
    }
    ASSERT_EQ(crew_graph_node_lane(g, ids[2], strand), CREW_OK);
    ASSERT_EQ(crew_graph_node_lane(g, ids[2], strand), CREW_OK); // again: still one hold
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run_n(g, 20, &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(step.load(), 100);
    for (auto &x : s)
        EXPECT_FALSE(x.bad.load());
    ASSERT_EQ(crew_graph_node_lane(g, ids[2], nullptr), CREW_OK);
    EXPECT_EQ(crew_lane_destroy(strand), CREW_OK); // the graph no longer holds it
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);     // and runs without it
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(step.load(), 105);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

// A node after a slow one, with a start-by time shorter than the slow one takes, expires: it
// never runs, the run stops (its successor does not run), every unstarted node is reported
// once, and the wait answers CREW_EEXPIRED.
TEST(GraphOpts, AnExpiredNodeStopsItsRun) {
    crew_pool *p = pool_with_drops(2);
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    uint64_t slow_ns = 3000000; // 3 ms
    Node late, after, other;
    crew_node slow, x, y, z;
    ASSERT_EQ(crew_graph_add(g, busy_for, &slow_ns, 0, &slow), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, node_run, &late, 0, &x), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, node_run, &after, 0, &y), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, node_run, &other, 0, &z), CREW_OK); // a root of its own
    ASSERT_EQ(crew_graph_precede(g, slow, x), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, x, y), CREW_OK);
    ASSERT_EQ(crew_graph_node_start_within(g, x, 1000000), CREW_OK); // 1 ms
    for (int round = 0; round < 3; round++) {
        crew_handle h = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
        EXPECT_EQ(crew_wait(p, h), CREW_EEXPIRED);
        EXPECT_EQ(late.runs.load(), 0);
        EXPECT_EQ(late.dropped.load(), round + 1);
        EXPECT_EQ(after.runs.load(), 0);
        EXPECT_EQ(after.dropped.load(), round + 1);
        EXPECT_EQ(other.runs.load() + other.dropped.load(), round + 1);
    }
    // run_n: the expiry ends the whole run, no further repetition.
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run_n(g, 5, &h), CREW_OK);
    EXPECT_EQ(crew_wait(p, h), CREW_EEXPIRED);
    EXPECT_EQ(late.dropped.load(), 4);
    EXPECT_EQ(after.dropped.load(), 4);
    EXPECT_EQ(other.runs.load() + other.dropped.load(), 4);
    // Removed, the node runs again.
    ASSERT_EQ(crew_graph_node_start_within(g, x, 0), CREW_OK);
    h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    EXPECT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(late.runs.load(), 1);
    EXPECT_EQ(after.runs.load(), 1);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

// The same node in a lane too: expired as it comes out of the lane.
TEST(GraphOpts, AnExpiredNodeInALaneStopsItsRun) {
    crew_pool *p = pool_with_drops(2);
    crew_lane *lane;
    ASSERT_EQ(crew_lane_create(p, 1, &lane), CREW_OK);
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    uint64_t slow_ns = 3000000;
    Node late, after;
    crew_node slow, x, y;
    ASSERT_EQ(crew_graph_add(g, busy_for, &slow_ns, 0, &slow), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, node_run, &late, 0, &x), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, node_run, &after, 0, &y), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, slow, x), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, x, y), CREW_OK);
    ASSERT_EQ(crew_graph_node_start_within(g, x, 1000000), CREW_OK);
    ASSERT_EQ(crew_graph_node_lane(g, x, lane), CREW_OK);
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    EXPECT_EQ(crew_wait(p, h), CREW_EEXPIRED);
    EXPECT_EQ(late.runs.load() + after.runs.load(), 0);
    EXPECT_EQ(late.dropped.load(), 1);
    EXPECT_EQ(after.dropped.load(), 1);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    EXPECT_EQ(crew_lane_destroy(lane), CREW_OK);
    crew_destroy(p);
}

// crew_graph_run_n: each repetition's start-by times count from that repetition's start. A
// node with a generous start-by time comes first; the one after it takes longer than that
// time, so counted from the run's start the second repetition's first node would expire.
TEST(GraphOpts, StartByTimesCountFromEachRepetition) {
    crew_pool *p = pool_with_drops(2);
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    uint64_t slow_ns = 600000000; // 600 ms, after the timed node
    Node first;
    crew_node a, b;
    ASSERT_EQ(crew_graph_add(g, node_run, &first, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, busy_for, &slow_ns, 0, &b), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, a, b), CREW_OK);
    ASSERT_EQ(crew_graph_node_start_within(g, a, 500000000), CREW_OK); // 500 ms
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run_n(g, 2, &h), CREW_OK);
    EXPECT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(first.runs.load(), 2);
    EXPECT_EQ(first.dropped.load(), 0);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

TEST(GraphOpts, BadInputIsRefusedAndChangesNothing) {
    crew_pool *p = make_pool(2), *q = make_pool(1);
    crew_lane *mine, *theirs;
    ASSERT_EQ(crew_lane_create(p, 2, &mine), CREW_OK);
    ASSERT_EQ(crew_lane_create(q, 2, &theirs), CREW_OK);
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    EXPECT_EQ(crew_graph_node_lane(nullptr, 0, mine), CREW_EINVAL);
    EXPECT_EQ(crew_graph_node_start_within(nullptr, 0, 5), CREW_EINVAL);
    EXPECT_EQ(crew_graph_node_lane(g, 0, mine), CREW_EINVAL); // no nodes yet
    EXPECT_NE(std::string(crew_last_error()).find("not a node"), std::string::npos);
    Gate gate;
    crew_node a, b;
    ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &b), CREW_OK);
    EXPECT_EQ(crew_graph_node_lane(g, a, theirs), CREW_EINVAL);
    EXPECT_NE(std::string(crew_last_error()).find("another pool"), std::string::npos)
        << crew_last_error();
    EXPECT_EQ(crew_lane_destroy(theirs), CREW_OK); // not held: the call changed nothing
    EXPECT_EQ(crew_graph_node_lane(g, CREW_NODE_NONE, mine), CREW_EINVAL);
    EXPECT_EQ(crew_graph_node_start_within(g, 7, 5), CREW_EINVAL);
    EXPECT_EQ(crew_graph_node_lane(g, b, nullptr), CREW_OK);   // none to take back
    EXPECT_EQ(crew_graph_node_start_within(g, b, 0), CREW_OK); // the same
    // During a run: refused, as every building call.
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    gate.wait_arrivals(1);
    EXPECT_EQ(crew_graph_node_lane(g, a, mine), CREW_EBUSY);
    EXPECT_EQ(crew_graph_node_start_within(g, a, 5), CREW_EBUSY);
    EXPECT_EQ(crew_lane_destroy(mine), CREW_OK); // so it was not taken
    gate.open();
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(q);
    crew_destroy(p);
}

// crew_graph_dump_dot labels a named node with its name, escaped for DOT.
TEST(GraphOpts, DotLabelsNodesWithTheirEscapedNames) {
    crew_pool *p = make_pool(1);
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    Node n;
    crew_node a, b;
    ASSERT_EQ(crew_graph_add(g, node_run, &n, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, node_run, &n, 0, &b), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, a, b), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, a, "load \"x\" \\ 2\nlines"), CREW_OK);
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(crew_graph_dump_dot(g, f), CREW_OK);
    fclose(f);
    std::string dot(buf, len);
    free(buf);
    EXPECT_NE(dot.find("n0 [label=\"load \\\"x\\\" \\\\ 2\\nlines\"]"), std::string::npos) << dot;
    EXPECT_NE(dot.find("n1 [label=\"1\"]"), std::string::npos) << dot;
    // Naming after a run keeps the graph runnable as it was.
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, b, "save"), CREW_OK);
    h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(n.runs.load(), 4);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

// crew_graph_destroy's CREW_EBUSY says why: a run in progress, or a parent graph.
TEST(GraphOpts, DestroyTellsWhyItIsBusy) {
    crew_pool *p = make_pool(2);
    crew_graph *parent, *child;
    ASSERT_EQ(crew_graph_create(p, &parent), CREW_OK);
    ASSERT_EQ(crew_graph_create(p, &child), CREW_OK);
    Gate gate;
    ASSERT_EQ(crew_graph_add(child, Gate::block, &gate, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_graph_add_graph(parent, child, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_graph_destroy(child), CREW_EBUSY);
    EXPECT_NE(std::string(crew_last_error()).find("a node of 1 other graph"), std::string::npos)
        << crew_last_error();
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(parent, &h), CREW_OK);
    gate.wait_arrivals(1);
    EXPECT_EQ(crew_graph_destroy(parent), CREW_EBUSY);
    EXPECT_NE(std::string(crew_last_error()).find("in progress"), std::string::npos)
        << crew_last_error();
    gate.open();
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(parent), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(child), CREW_OK);
    crew_destroy(p);
}

// crew_graph_add_graph's check of the child holds no graph: crew_graph_add on the child (and on
// the graphs it runs) meanwhile never answers CREW_EBUSY.
TEST(GraphOpts, AddingAChildNeverMakesTheChildBusy) {
    crew_pool *p = make_pool(2);
    crew_graph *child, *grandchild;
    ASSERT_EQ(crew_graph_create(p, &child), CREW_OK);
    ASSERT_EQ(crew_graph_create(p, &grandchild), CREW_OK);
    ASSERT_EQ(crew_graph_add_graph(child, grandchild, 0, nullptr), CREW_OK);
    Node n;
    const int rounds = int(scaled(2000));
    std::atomic<bool> done{false};
    std::atomic<int> busy{0};
    std::thread adder([&] {
        std::vector<crew_graph *> parents;
        for (int r = 0; r < rounds; r++) {
            crew_graph *parent;
            ASSERT_EQ(crew_graph_create(p, &parent), CREW_OK);
            ASSERT_EQ(crew_graph_add_graph(parent, child, 0, nullptr), CREW_OK);
            parents.push_back(parent);
        }
        done = true;
        for (crew_graph *parent : parents)
            ASSERT_EQ(crew_graph_destroy(parent), CREW_OK);
    });
    int added = 0;
    while (!done.load() || added < 10) {
        if (crew_graph_add(grandchild, node_run, &n, 0, nullptr) == CREW_EBUSY)
            busy++;
        if (crew_graph_add(child, node_run, &n, 0, nullptr) == CREW_EBUSY)
            busy++;
        added++;
    }
    adder.join();
    EXPECT_EQ(busy.load(), 0);
    ASSERT_EQ(crew_graph_destroy(child), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(grandchild), CREW_OK);
    crew_destroy(p);
}

TEST(GraphOpts, CppNodeLaneAndStartWithin) {
    crew::pool p(crew::options{2});
    crew::lane strand(p, 1);
    std::atomic<int> inside{0}, most{0};
    std::atomic<int> ran{0};
    {
        crew::graph g(p);
        auto root = g.emplace([] {});
        for (int i = 0; i < 6; i++) {
            auto n = g.emplace([&] {
                enter(&inside, &most);
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                inside.fetch_sub(1);
                ran.fetch_add(1);
            });
            n.lane(strand).succeed(root);
        }
        g.run().wait();
        g.run_n(2).wait();
        EXPECT_EQ(ran.load(), 18);
        EXPECT_EQ(most.load(), 1);
        // A late node: its run's wait throws CREW_EEXPIRED, and its successor never runs.
        auto slow = g.emplace([] { std::this_thread::sleep_for(std::chrono::milliseconds(3)); });
        bool late_ran = false, after_ran = false;
        auto late = g.emplace([&] { late_ran = true; });
        auto after = g.emplace([&] { after_ran = true; });
        slow.precede(late);
        late.precede(after);
        late.start_within(std::chrono::microseconds(500)).lane(nullptr);
        try {
            g.run().wait();
            ADD_FAILURE() << "no exception";
        } catch (const crew::error &e) {
            EXPECT_EQ(e.code(), CREW_EEXPIRED) << e.what();
        }
        EXPECT_FALSE(late_ran);
        EXPECT_FALSE(after_ran);
        late.start_within(std::chrono::seconds(0)); // removed
        g.run().wait();
        EXPECT_TRUE(late_ran);
        EXPECT_TRUE(after_ran);
    } // the graph lets the lane go: the strand is destroyed without a report
}

// crew_graph_add_graph's check walks the lists of graphs that nodes run: a child with many
// nodes that run graphs (more than its walk's first room, and repeats of one graph that are
// on its stack more than once) is checked without writing past the walk's arrays (ASan), and a
// cycle through it is still refused.
TEST(GraphOpts, AddGraphChecksAChildThatRunsManyGraphs) {
    crew_pool *p = make_pool(2);
    crew_graph *parent, *child, *leaf;
    ASSERT_EQ(crew_graph_create(p, &parent), CREW_OK);
    ASSERT_EQ(crew_graph_create(p, &child), CREW_OK);
    ASSERT_EQ(crew_graph_create(p, &leaf), CREW_OK);
    std::vector<crew_graph *> mids;
    for (int i = 0; i < 40; i++) { // child runs leaf 40 times
        ASSERT_EQ(crew_graph_add_graph(child, leaf, 0, nullptr), CREW_OK);
    }
    // A fan of graphs, each running a few copies of the next: the walk's stack holds many
    // repeats of graphs it has not visited yet.
    crew_graph *prev = leaf;
    for (int i = 0; i < 12; i++) {
        crew_graph *m;
        ASSERT_EQ(crew_graph_create(p, &m), CREW_OK);
        for (int k = 0; k <= i % 4 + 1; k++)
            ASSERT_EQ(crew_graph_add_graph(m, prev, 0, nullptr), CREW_OK);
        mids.push_back(m);
        prev = m;
    }
    for (int i = 0; i < 15; i++)
        ASSERT_EQ(crew_graph_add_graph(child, prev, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_graph_add_graph(parent, child, 0, nullptr), CREW_OK);
    crew_node n = 0;
    EXPECT_EQ(crew_graph_add_graph(leaf, parent, 0, &n), CREW_EINVAL); // leaf would run itself
    EXPECT_EQ(n, CREW_NODE_NONE);
    ASSERT_EQ(crew_graph_destroy(parent), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(child), CREW_OK);
    for (auto it = mids.rbegin(); it != mids.rend(); ++it)
        ASSERT_EQ(crew_graph_destroy(*it), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(leaf), CREW_OK);
    crew_destroy(p);
}

// Gated nodes (lanes, start-by times) under runs cancelled at random moments, expiries racing
// their nodes' starts, and then a cancelling shutdown over runs in progress: every node of
// every run either runs once or is reported to on_drop once, never both, never neither.
TEST(GraphOpts, GatedNodesRunOnceOrAreReportedOnceUnderCancelAndShutdown) {
    for (int round = 0; round < 3; round++) {
        crew_pool *p = pool_with_drops(2);
        crew_lane *strand, *pair;
        ASSERT_EQ(crew_lane_create(p, 1, &strand), CREW_OK);
        ASSERT_EQ(crew_lane_create(p, 2, &pair), CREW_OK);
        crew_graph *g;
        ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
        const int kMid = 6;
        Node nodes[kMid + 2];
        crew_node root, join, mid[kMid];
        ASSERT_EQ(crew_graph_add(g, node_run, &nodes[0], 0, &root), CREW_OK);
        ASSERT_EQ(crew_graph_add(g, node_run, &nodes[kMid + 1], 0, &join), CREW_OK);
        for (int i = 0; i < kMid; i++) {
            ASSERT_EQ(crew_graph_add(g, node_run, &nodes[i + 1], 0, &mid[i]), CREW_OK);
            ASSERT_EQ(crew_graph_precede(g, root, mid[i]), CREW_OK);
            ASSERT_EQ(crew_graph_precede(g, mid[i], join), CREW_OK);
        }
        ASSERT_EQ(crew_graph_node_lane(g, mid[0], strand), CREW_OK);
        ASSERT_EQ(crew_graph_node_lane(g, mid[1], strand), CREW_OK);
        ASSERT_EQ(crew_graph_node_lane(g, mid[2], pair), CREW_OK);
        ASSERT_EQ(crew_graph_node_start_within(g, mid[3], 20000 * (round + 1)), CREW_OK);
        ASSERT_EQ(crew_graph_node_lane(g, mid[4], pair), CREW_OK);
        ASSERT_EQ(crew_graph_node_start_within(g, mid[4], 40000 * (round + 1)), CREW_OK);
        ASSERT_EQ(crew_graph_node_lane(g, join, strand), CREW_OK);
        std::atomic<long> started{0};
        std::atomic<bool> stop{false}, go{false};
        std::atomic<int> waited{0}; // 2 a runner: past its waited runs, its last started
        const int runs = int(scaled(150));
        auto runner = [&](int who) {
            for (int r = 0; r < runs; r++) {
                crew_handle h = CREW_HANDLE_NONE;
                ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
                started++;
                if ((r + who) % 3 == 0) {
                    for (int k = 0; k < r % 50; k++)
                        std::this_thread::yield();
                    crew_cancel(p, h);
                }
                int rc = crew_wait(p, h);
                EXPECT_TRUE(rc == CREW_OK || rc == CREW_ECANCELED || rc == CREW_EEXPIRED) << rc;
            }
            waited++;
            while (!go.load())
                std::this_thread::yield();
            // A few runs left in progress for a cancelling shutdown (a bounded number: an
            // endless stream would starve the other runner's wait under a FIFO strategy).
            for (int r = 0; r < 20 && !stop.load(); r++) {
                crew_handle h = CREW_HANDLE_NONE;
                if (crew_graph_run(g, &h) != CREW_OK)
                    break;
                started++;
            }
            waited++;
        };
        std::thread a(runner, 0), b(runner, 1);
        while (waited.load() < 2)
            std::this_thread::yield();
        if (round == 1) { // the last runs wait in the queues, for the shutdown to drop
            ASSERT_EQ(crew_pause(p), CREW_OK);
        }
        go = true;
        while (waited.load() < 4) // both runners started their last runs
            std::this_thread::yield();
        ASSERT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
        stop = true;
        a.join();
        b.join();
        long total = 0;
        for (auto &n : nodes)
            total += n.runs.load() + n.dropped.load();
        EXPECT_EQ(total, started.load() * (kMid + 2))
            << "round " << round << ": each node of each run runs or is reported, once";
        ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
        ASSERT_EQ(crew_lane_destroy(strand), CREW_OK);
        ASSERT_EQ(crew_lane_destroy(pair), CREW_OK);
        crew_destroy(p);
    }
}
