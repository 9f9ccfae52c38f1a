// test_graph_seen.cpp -- what shows of a task graph's runs: crew_graph_name_node (its bad
// input), crew_diagnose's listing of a stalled run (the nodes ready but not started, the nodes
// waiting and the predecessor each waits for, lists capped with how many more), and a graph
// that outlives its pool. (The timeline's slices and arrows of a run: test_trace.cpp.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "common.h"
#include "crew.h"

using crewtest::Gate;

namespace {

void nothing(void *) {}

// crew_diagnose's report, as text.
std::string diagnose(crew_pool *p) {
    char *buf = nullptr;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    EXPECT_NE(f, nullptr);
    EXPECT_GE(crew_diagnose(p, f), 0);
    fclose(f);
    std::string text(buf ? buf : "");
    free(buf);
    return text;
}

bool has(const std::string &text, const std::string &what) {
    return text.find(what) != std::string::npos;
}

} // namespace

TEST(GraphSeen, NameNodeBadInput) {
    crew_pool *p = crewtest::make_pool(1);
    crew_graph *g = nullptr;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    crew_node a, b;
    ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &b), CREW_OK);

    EXPECT_EQ(crew_graph_name_node(nullptr, a, "x"), CREW_EINVAL);
    EXPECT_TRUE(has(crew_last_error(), "the graph is NULL")) << crew_last_error();
    EXPECT_EQ(crew_graph_name_node(g, 2, "x"), CREW_EINVAL);
    EXPECT_TRUE(has(crew_last_error(), "node 2 is not a node of this graph, which has 2"))
        << crew_last_error();
    EXPECT_EQ(crew_graph_name_node(g, CREW_NODE_NONE, "x"), CREW_EINVAL);
    EXPECT_TRUE(has(crew_last_error(), "CREW_NODE_NONE")) << crew_last_error();
    EXPECT_EQ(crew_graph_name_node(g, a, ""), CREW_EINVAL);
    EXPECT_TRUE(has(crew_last_error(), "the name is empty")) << crew_last_error();
    std::string longest(CREW_GRAPH_NAME_MAX, 'n');
    EXPECT_EQ(crew_graph_name_node(g, a, (longest + "n").c_str()), CREW_EINVAL);
    EXPECT_TRUE(has(crew_last_error(), "256 bytes long; at most 255")) << crew_last_error();
    EXPECT_EQ(crew_graph_name_node(g, a, longest.c_str()), CREW_OK);
    EXPECT_EQ(crew_graph_name_node(g, b, nullptr), CREW_OK); // unnamed: stays "node 1"

    // During a run: EBUSY, and the name stays.
    Gate gate;
    crew_node hold;
    ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &hold), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, hold, "hold"), CREW_OK);
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    gate.wait_arrivals(1);
    EXPECT_EQ(crew_graph_name_node(g, hold, "other"), CREW_EBUSY);
    EXPECT_TRUE(has(crew_last_error(), "crew_graph_name_node: 1 run(s) of the graph are in "
                                       "progress"))
        << crew_last_error();
    std::string text = diagnose(p); // (which of the three started depends on the strategy)
    EXPECT_TRUE(has(text, "  graphs: 1 run(s) in progress\n")) << text;
    EXPECT_TRUE(has(text, "a run of 3 nodes: ")) << text;
    EXPECT_TRUE(has(text, " 0 waiting\n")) << text;
    gate.open();
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

// One worker, held by node 0 (a gate), which the run's first task runs itself: the other
// roots wait in the queue (ready, not started), and the nodes after them wait.
TEST(GraphSeen, DiagnoseNamesReadyAndWaitingNodesOfAStalledRun) {
    crew_pool *p = crewtest::make_pool(1);
    crew_graph *g = nullptr;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    Gate gate;
    crew_node hold, x, y, w, z, v;
    ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &hold), CREW_OK); // 0
    ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &x), CREW_OK);      // 1
    ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &y), CREW_OK);      // 2
    ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &w), CREW_OK);      // 3
    ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &z), CREW_OK);      // 4
    ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &v), CREW_OK);      // 5
    ASSERT_EQ(crew_graph_precede(g, hold, w), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, x, z), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, hold, v), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, x, v), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, hold, "gate"), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, x, "x"), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, w, "w"), CREW_OK);

    EXPECT_FALSE(has(diagnose(p), "graphs:")); // no run in progress
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    gate.wait_arrivals(1);
    std::string text = diagnose(p);
    EXPECT_TRUE(has(text, "  graphs: 1 run(s) in progress\n")) << text;
    EXPECT_TRUE(has(text, "a run of 6 nodes: 1 started, 2 ready but not started, 3 waiting\n"))
        << text;
    EXPECT_TRUE(has(text, "      ready, not started: node 1 \"x\", node 2\n")) << text;
    EXPECT_TRUE(has(text, "      waiting: node 3 \"w\" for node 0 \"gate\" (started, not "
                          "finished); 1 of its 1 predecessor(s) left\n"))
        << text;
    EXPECT_TRUE(has(text, "      waiting: node 4 for node 1 \"x\" (not started); 1 of its 1 "
                          "predecessor(s) left\n"))
        << text;
    EXPECT_TRUE(has(text, "      waiting: node 5 for node 0 \"gate\" (started, not finished); "
                          "2 of its 2 predecessor(s) left\n"))
        << text;
    gate.open();
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_FALSE(has(diagnose(p), "graphs:")) << "the run has ended";
    EXPECT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

// Long lists are capped: 10 nodes named per list, then how many more.
TEST(GraphSeen, DiagnoseCapsLongLists) {
    crew_pool *p = crewtest::make_pool(1);
    crew_graph *g = nullptr;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    Gate gate;
    crew_node hold;
    ASSERT_EQ(crew_graph_add(g, Gate::block, &gate, 0, &hold), CREW_OK);
    for (int i = 0; i < 25; i++) {
        crew_node r, after;
        ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 1, &r), CREW_OK); // a root, queued
        ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &after), CREW_OK);
        ASSERT_EQ(crew_graph_precede(g, hold, after), CREW_OK);
    }
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    gate.wait_arrivals(1);
    std::string text = diagnose(p);
    EXPECT_TRUE(has(text, "a run of 51 nodes: 1 started, 25 ready but not started, 25 waiting"))
        << text;
    EXPECT_TRUE(has(text, ", node 19 ... and 15 more\n")) << text;
    EXPECT_TRUE(has(text, "      ... and 15 more waiting\n")) << text;
    size_t lines = 0;
    for (size_t at = 0; (at = text.find("      waiting: ", at)) != std::string::npos; at++)
        lines++;
    EXPECT_EQ(lines, 10u);
    gate.open();
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

// A graph may be destroyed after its pool (the registry it is listed in outlives the pool).
TEST(GraphSeen, GraphOutlivesItsPool) {
    crew_pool *p = crewtest::make_pool(2);
    std::vector<crew_graph *> gs(3);
    for (auto &g : gs) {
        ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
        crew_node a;
        ASSERT_EQ(crew_graph_add(g, nothing, nullptr, 0, &a), CREW_OK);
        ASSERT_EQ(crew_graph_name_node(g, a, "a"), CREW_OK);
    }
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(gs[1], &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(crew_graph_destroy(gs[0]), CREW_OK);
    crew_destroy(p);
    EXPECT_EQ(crew_graph_destroy(gs[2]), CREW_OK);
    EXPECT_EQ(crew_graph_destroy(gs[1]), CREW_OK);
}

namespace {
std::atomic<long> node_runs{0};
void count_node(void *) { node_runs.fetch_add(1); }
} // namespace

// crew_diagnose and a trace while runs of one graph overlap, start and end: every node of
// every run runs once, and the trace is written (the sanitizers check the reading).
TEST(GraphSeen, DiagnoseAndTraceWhileRunsOverlap) {
    crew_pool *p = crewtest::make_pool(2);
    crew_graph *g = nullptr;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    const int n = 24;
    std::vector<crew_node> id(n);
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(crew_graph_add(g, count_node, nullptr, static_cast<uint32_t>(i % 3), &id[i]),
                  CREW_OK);
        if (i % 2 == 0) {
            ASSERT_EQ(crew_graph_name_node(g, id[i], ("n" + std::to_string(i)).c_str()),
                      CREW_OK);
        }
        if (i > 0) {
            ASSERT_EQ(crew_graph_precede(g, id[(i - 1) / 2], id[i]), CREW_OK); // a tree
        }
        if (i > 2) {
            ASSERT_EQ(crew_graph_precede(g, id[i - 3], id[i]), CREW_OK);
        }
    }
    std::string path = testing::TempDir() + "crew_graph_seen_" + std::to_string(getpid()) +
                       ".json";
    ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
    node_runs = 0;
    const long runs = crewtest::scaled(200);
    std::atomic<int> done{0};
    auto runner = [&] {
        for (long r = 0; r < runs; r++) {
            crew_handle h = CREW_HANDLE_NONE;
            if (crew_graph_run(g, &h) != CREW_OK || crew_wait(p, h) != CREW_OK)
                std::abort();
        }
        done.fetch_add(1);
    };
    std::thread a(runner), b(runner);
    long looks = 0;
    while (done.load() < 2 || looks == 0) {
        std::string text = diagnose(p);
        EXPECT_TRUE(has(text, "crew_diagnose: pool ")) << text;
        looks++;
    }
    a.join();
    b.join();
    EXPECT_EQ(crew_trace_stop(p), CREW_OK);
    EXPECT_EQ(node_runs.load(), 2 * runs * n);
    EXPECT_FALSE(has(diagnose(p), "graphs:"));
    EXPECT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
    std::remove(path.c_str());
}

namespace {
crew_pool *inner_pool = nullptr;
std::atomic<long> inner_looks{0};
// A node that runs crew_diagnose on its own pool: its own run is listed (the registry's and
// the graph's locks are free while a node runs).
void diagnose_inside(void *) {
    if (has(diagnose(inner_pool), "graphs: "))
        inner_looks.fetch_add(1);
}
} // namespace

// crew_diagnose from inside nodes, from outside, while other threads create, run, rename and
// destroy graphs of the same pool: no lock is taken in two orders (TSan), every node runs once,
// and each inner look lists the runs in progress.
TEST(GraphSeen, DiagnoseFromNodesWhileGraphsComeAndGo) {
    crew_pool *p = crewtest::make_pool(2);
    inner_pool = p;
    inner_looks = 0;
    node_runs = 0;
    const long rounds = crewtest::scaled(100);
    std::atomic<int> done{0};
    auto churn = [&](int k) {
        for (long r = 0; r < rounds; r++) {
            crew_graph *g = nullptr;
            crew_node a, b, c;
            if (crew_graph_create(p, &g) != CREW_OK ||
                crew_graph_add(g, k ? count_node : diagnose_inside, nullptr, 0, &a) != CREW_OK ||
                crew_graph_add(g, count_node, nullptr, 0, &b) != CREW_OK ||
                crew_graph_add(g, count_node, nullptr, 0, &c) != CREW_OK ||
                crew_graph_precede(g, a, b) != CREW_OK || crew_graph_precede(g, a, c) != CREW_OK ||
                crew_graph_name_node(g, b, "b") != CREW_OK)
                std::abort();
            crew_handle h = CREW_HANDLE_NONE;
            if (crew_graph_run_n(g, 2, &h) != CREW_OK || crew_wait(p, h) != CREW_OK ||
                crew_graph_name_node(g, c, "c") != CREW_OK || crew_graph_destroy(g) != CREW_OK)
                std::abort();
        }
        done.fetch_add(1);
    };
    std::thread a(churn, 0), b(churn, 1);
    while (done.load() < 2)
        EXPECT_TRUE(has(diagnose(p), "crew_diagnose: pool "));
    a.join();
    b.join();
    EXPECT_EQ(node_runs.load(), 10 * rounds); // 2 + 3 counting nodes, 2 repetitions a round
    EXPECT_EQ(inner_looks.load(), 2 * rounds);
    crew_destroy(p);
}
