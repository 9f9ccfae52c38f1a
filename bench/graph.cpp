// graph.cpp -- task graphs: crew's (crew_graph_*) against oneTBB's flow graph (continue_node,
// make_edge, wait_for_all) on four shapes of empty nodes: a linear chain, a binary tree, a
// wavefront (each cell after its left and upper neighbour) and a random DAG of 4 edges a node.
// For each: the time to build (per node, per edge), to run the first time and a second time
// (per node), the memory the graph holds after its first run (bytes per node, per edge), and
// two runs started at once against the same two one after the other. Sizes scale with
// --scale and the thread counts come from --threads, so the program runs unchanged on a large
// machine; oneTBB is measured when the build found it.
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "crew.h"

#ifdef CREW_HAVE_TBB
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>
#endif

namespace {

const char usage_text[] =
    "usage: bench_graph [--scale S] [--threads LIST] [--shapes LIST] [--reps R] [--instr N]\n"
    "  Task graphs of empty nodes, crew_graph_* against oneTBB's flow graph (if built with it).\n"
    "  --scale S      size factor (default 1: a chain of 1000000 nodes, a binary tree of 2^20,\n"
    "                 a 1024 x 1024 wavefront, a random DAG of 100000 nodes x 4 edges)\n"
    "  --threads LIST worker threads, comma-separated (default 1,2); the caller waits asleep\n"
    "  --shapes LIST  chain,tree,wavefront,random (default: all)\n"
    "  --reps R       repetitions of each measurement, the best is shown (default 3)\n"
    "  --instr N      no table: build a chain of N nodes on 1 thread and run it R times (for\n"
    "                 callgrind: instructions per node = (Ir(R) - Ir(1)) / ((R - 1) N))\n"
    "  -h, --help     this text\n"
    "  Columns: build ns per node (adding the nodes) and per edge (adding the edges); run1 and\n"
    "  run2 ns per node (crew's first run also builds its successor lists); bytes per node\n"
    "  held after the first run, all memory counted; 2at1 the time of two runs started at once\n"
    "  divided by two runs one after the other. Exit status 0, 2 on a bad option.\n";

double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
size_t heap_bytes() { return mallinfo2().uordblks + mallinfo2().hblkhd; }

struct Shape {
    std::string name;
    uint32_t n = 0;
    std::vector<std::pair<uint32_t, uint32_t>> edges;
};

Shape make_shape(const std::string &name, double scale) {
    Shape s;
    s.name = name;
    if (name == "chain") {
        s.n = uint32_t(std::max(2.0, 1000000 * scale));
        for (uint32_t i = 1; i < s.n; i++)
            s.edges.push_back({i - 1, i});
    } else if (name == "tree") {
        s.n = uint32_t(std::max(3.0, 1048576 * scale)) - 1;
        for (uint32_t i = 0; 2 * i + 2 < s.n; i++)
            s.edges.push_back({i, 2 * i + 1}), s.edges.push_back({i, 2 * i + 2});
    } else if (name == "wavefront") {
        uint32_t w = uint32_t(std::max(2.0, 1024 * std::sqrt(scale)));
        s.n = w * w;
        for (uint32_t i = 0; i < w; i++)
            for (uint32_t j = 0; j < w; j++) {
                if (i)
                    s.edges.push_back({(i - 1) * w + j, i * w + j});
                if (j)
                    s.edges.push_back({i * w + j - 1, i * w + j});
            }
    } else if (name == "random") {
        s.n = uint32_t(std::max(8.0, 100000 * scale));
        std::mt19937 rng(12345);
        for (uint32_t i = 0; i + 1 < s.n; i++)
            for (int k = 0; k < 4; k++) {
                std::uniform_int_distribution<uint32_t> d(i + 1, s.n - 1);
                s.edges.push_back({i, d(rng)});
            }
    }
    return s;
}

struct Result {
    double build_node = 1e30, build_edge = 1e30, run1 = 1e30, run2 = 1e30, bytes = 0,
           overlap = 1e30;
};

void nop(void *) {}

// A waiter that sleeps (the caller does not help: the pool's threads are the only ones).
struct Done {
    std::mutex m;
    std::condition_variable cv;
    int left = 0;
};
void done_fn(void *arg) {
    auto *d = static_cast<Done *>(arg);
    std::lock_guard<std::mutex> g(d->m);
    if (--d->left == 0)
        d->cv.notify_all();
}

// k runs of g started at once from this thread, waited for asleep.
void crew_runs(crew_pool *p, crew_graph *g, int k) {
    Done d;
    d.left = k;
    for (int i = 0; i < k; i++) {
        crew_handle h = CREW_HANDLE_NONE;
        if (crew_graph_run(g, &h) != CREW_OK || crew_notify(p, h, done_fn, &d) != CREW_OK) {
            std::fprintf(stderr, "bench_graph: %s\n", crew_last_error());
            std::exit(1);
        }
    }
    std::unique_lock<std::mutex> l(d.m);
    d.cv.wait(l, [&] { return d.left == 0; });
}

Result bench_crew(const Shape &s, unsigned threads, int reps) {
    Result r;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    crew_pool *p = nullptr;
    if (crew_create(&p, &cfg) != CREW_OK)
        std::exit(1);
    for (int rep = 0; rep < reps; rep++) {
        size_t before = heap_bytes();
        crew_graph *g = nullptr;
        double t0 = now_s();
        crew_graph_create(p, &g);
        for (uint32_t i = 0; i < s.n; i++)
            crew_graph_add(g, nop, nullptr, 0, nullptr);
        double t1 = now_s();
        for (auto &e : s.edges)
            crew_graph_precede(g, e.first, e.second);
        double t2 = now_s();
        crew_runs(p, g, 1);
        double t3 = now_s();
        size_t after = heap_bytes();
        crew_runs(p, g, 1);
        double t4 = now_s();
        crew_runs(p, g, 1);
        crew_runs(p, g, 1);
        double t5 = now_s();
        crew_runs(p, g, 2);
        double t6 = now_s();
        r.build_node = std::min(r.build_node, (t1 - t0) * 1e9 / s.n);
        r.build_edge =
            std::min(r.build_edge, s.edges.empty() ? 0 : (t2 - t1) * 1e9 / s.edges.size());
        r.run1 = std::min(r.run1, (t3 - t2) * 1e9 / s.n);
        r.run2 = std::min(r.run2, (t4 - t3) * 1e9 / s.n);
        r.bytes = double(after - before) / s.n;
        r.overlap = std::min(r.overlap, (t6 - t5) / (t5 - t4));
        crew_graph_destroy(g);
    }
    crew_destroy(p);
    return r;
}

#ifdef CREW_HAVE_TBB
Result bench_tbb(const Shape &s, unsigned threads, int reps) {
    using namespace oneapi::tbb::flow;
    Result r;
    oneapi::tbb::task_arena arena(int(threads), 1);
    for (int rep = 0; rep < reps; rep++) {
        arena.execute([&] {
            size_t before = heap_bytes();
            double t0 = now_s();
            auto gr = std::make_unique<graph>();
            std::vector<std::unique_ptr<continue_node<continue_msg>>> nodes;
            nodes.reserve(s.n);
            for (uint32_t i = 0; i < s.n; i++)
                nodes.emplace_back(new continue_node<continue_msg>(*gr, [](const continue_msg &) {
                    return continue_msg();
                }));
            double t1 = now_s();
            std::vector<char> has_pred(s.n, 0);
            for (auto &e : s.edges)
                make_edge(*nodes[e.first], *nodes[e.second]);
            double t2 = now_s();
            for (auto &e : s.edges)
                has_pred[e.second] = 1;
            std::vector<uint32_t> roots;
            for (uint32_t i = 0; i < s.n; i++)
                if (!has_pred[i])
                    roots.push_back(i);
            auto run = [&](int k) {
                for (int j = 0; j < k; j++)
                    for (uint32_t i : roots)
                        nodes[i]->try_put(continue_msg());
                gr->wait_for_all();
            };
            double t2b = now_s();
            run(1);
            double t3 = now_s();
            size_t after = heap_bytes();
            run(1);
            double t4 = now_s();
            run(1);
            run(1);
            double t5 = now_s();
            // Two runs at once in one flow graph would merge (a continue_node counts messages
            // from any run): the overlap of oneTBB is two graphs' runs, not measured here.
            r.build_node = std::min(r.build_node, (t1 - t0) * 1e9 / s.n);
            r.build_edge =
                std::min(r.build_edge, s.edges.empty() ? 0 : (t2 - t1) * 1e9 / s.edges.size());
            r.run1 = std::min(r.run1, (t3 - t2b) * 1e9 / s.n);
            r.run2 = std::min(r.run2, (t4 - t3) * 1e9 / s.n);
            r.bytes = double(after - before) / s.n;
            (void)t5;
            r.overlap = 0;
        });
    }
    return r;
}
#endif

std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= s.size()) {
        size_t c = s.find(',', at);
        if (c == std::string::npos)
            c = s.size();
        if (c > at)
            out.push_back(s.substr(at, c - at));
        at = c + 1;
    }
    return out;
}

int instr_mode(uint32_t n, int runs) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    crew_pool *p = nullptr;
    crew_graph *g = nullptr;
    if (crew_create(&p, &cfg) != CREW_OK || crew_graph_create(p, &g) != CREW_OK)
        return 1;
    for (uint32_t i = 0; i < n; i++)
        crew_graph_add(g, nop, nullptr, 0, nullptr);
    for (uint32_t i = 1; i < n; i++)
        crew_graph_precede(g, i - 1, i);
    for (int k = 0; k < runs; k++)
        crew_runs(p, g, 1);
    crew_graph_destroy(g);
    crew_destroy(p);
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    double scale = 1;
    std::string threads = "1,2", shapes = "chain,tree,wavefront,random";
    int reps = 3;
    long instr = 0;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_graph: %s needs a value\n%s", a.c_str(), usage_text);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::fputs(usage_text, stdout);
            return 0;
        } else if (a == "--scale") {
            scale = std::atof(value().c_str());
        } else if (a == "--threads") {
            threads = value();
        } else if (a == "--shapes") {
            shapes = value();
        } else if (a == "--reps") {
            reps = std::atoi(value().c_str());
        } else if (a == "--instr") {
            instr = std::atol(value().c_str());
        } else {
            std::fprintf(stderr, "bench_graph: unknown option '%s'\n%s", a.c_str(), usage_text);
            return 2;
        }
    }
    if (scale <= 0 || reps < 1 || instr < 0) {
        std::fprintf(stderr, "bench_graph: --scale, --reps and --instr must be positive\n%s",
                     usage_text);
        return 2;
    }
    if (instr)
        return instr_mode(uint32_t(instr), reps);
    std::printf("%-10s %8s %9s %-6s %3s %8s %8s %8s %8s %8s %6s\n", "shape", "nodes", "edges",
                "lib", "thr", "bld/node", "bld/edge", "run1", "run2", "B/node", "2at1");
    for (const std::string &name : split(shapes)) {
        Shape s = make_shape(name, scale);
        if (s.n == 0) {
            std::fprintf(stderr, "bench_graph: unknown shape '%s'\n%s", name.c_str(), usage_text);
            return 2;
        }
        for (const std::string &t : split(threads)) {
            unsigned th = unsigned(std::atoi(t.c_str()));
            if (th == 0) {
                std::fprintf(stderr, "bench_graph: bad thread count '%s'\n", t.c_str());
                return 2;
            }
            Result c = bench_crew(s, th, reps);
            std::printf("%-10s %8u %9zu %-6s %3u %8.1f %8.1f %8.1f %8.1f %8.1f %6.2f\n",
                        name.c_str(), s.n, s.edges.size(), "crew", th, c.build_node, c.build_edge,
                        c.run1, c.run2, c.bytes, c.overlap);
#ifdef CREW_HAVE_TBB
            Result b = bench_tbb(s, th, reps);
            std::printf("%-10s %8u %9zu %-6s %3u %8.1f %8.1f %8.1f %8.1f %8.1f %6s\n",
                        name.c_str(), s.n, s.edges.size(), "onetbb", th, b.build_node,
                        b.build_edge, b.run1, b.run2, b.bytes, "-");
#endif
            std::fflush(stdout);
        }
    }
    return 0;
}
