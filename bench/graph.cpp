// graph.cpp -- task graphs: crew's (crew_graph_*) against the same graph written by hand on
// crew's groups (a counter per node; a node's task submits each successor whose counter reaches
// zero into the run's group) and against oneTBB's flow graph (continue_node, make_edge,
// wait_for_all), on four shapes of empty nodes: a linear chain, a binary tree, a wavefront (each
// cell after its left and upper neighbour) and a random DAG of 4 edges a node. For each: the
// time to build (per node, per edge), to run the first time and a second time (per node), the
// memory the graph holds (bytes per node and per edge, counted in a child process of its own),
// and two runs started at once from two threads against the same two one after the other. One
// function times every implementation (measure); sizes scale with --scale and the thread counts
// come from --threads (default 1 and the online cores), so the program runs unchanged on a large
// machine; oneTBB is measured when the build found it.
#include <malloc.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "crew.h"

#ifdef CREW_HAVE_TBB
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>
#endif

extern char **environ;

namespace {

const char usage_text[] =
    "usage: bench_graph [--scale S] [--threads LIST] [--shapes LIST] [--libs LIST] [--reps R]\n"
    "                   [--csv FILE] [--instr N]\n"
    "  Task graphs of empty nodes: crew_graph_* (crew), the same graph by hand on crew's groups\n"
    "  (groups: a counter per node, successors submitted into the run's group) and oneTBB's\n"
    "  flow graph (onetbb, if built with it).\n"
    "  --scale S      size factor (default 1: a chain of 1000000 nodes, a binary tree of 2^20,\n"
    "                 a 1024 x 1024 wavefront, a random DAG of 100000 nodes x 4 edges)\n"
    "  --threads LIST threads, comma-separated (default 1 and the online cores): crew's\n"
    "                 workers (the caller waits asleep) or oneTBB's arena (the caller one of them)\n"
    "  --shapes LIST  chain,tree,wavefront,random (default: all)\n"
    "  --libs LIST    crew,groups,onetbb (default: all this build has)\n"
    "  --reps R       runs of each measurement, interleaved across the libraries; the table\n"
    "                 gives the median (default 3)\n"
    "  --csv FILE     every run as shape,lib,threads,nodes,edges,rep,build_node_ns,\n"
    "                 build_edge_ns,run1_ns,run2_ns,overlap, and the memory as rep -1\n"
    "                 (bytes_node, bytes_edge in the build columns)\n"
    "  --instr N      no table: build a chain of N nodes on 1 thread with the first library of\n"
    "                 --libs and run it R times (for callgrind: instructions per node =\n"
    "                 (Ir(R) - Ir(1)) / ((R - 1) N))\n"
    "  --mem LIB      (used by the program itself) print LIB's bytes per node and per edge for\n"
    "                 the first of --shapes and exit: the child process that counts memory\n"
    "  -h, --help     this text\n"
    "  Columns: build ns per node (adding the nodes) and per edge (adding the edges), in CPU\n"
    "  time of the building thread (steady on a loaded machine); run1 and run2 ns per node,\n"
    "  wall time (crew's first run also builds its successor lists); B/node: memory held once\n"
    "  the nodes are added, over the nodes; B/edge: what the edges and the first run add, over\n"
    "  the edges (both counted as resident memory in a child process, so every allocator\n"
    "  counts); 2at1: the time of two runs started at once from two threads over the same two\n"
    "  runs one after the other (a flow graph's runs cannot overlap: '-').\n"
    "  Exit status 0, 2 on a bad option.\n";

double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
// The calling thread's CPU time: building runs on it alone, so this is what building costs,
// the same as the wall time on a quiet machine and steadier on a loaded one.
double cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Resident memory of this process, in bytes (every allocator's, tbbmalloc's too).
double rss_bytes() {
    FILE *f = std::fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!f)
        return 0;
    if (std::fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = 0;
    std::fclose(f);
    return double(resident) * double(sysconf(_SC_PAGESIZE));
}

[[noreturn]] void die(const char *what) {
    std::fprintf(stderr, "bench_graph: %s: %s\n", what, crew_last_error());
    std::exit(1);
}

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

void nop(void *) {}

// A waiter that sleeps (the caller does not help: the pool's threads are the only runners).
struct Done {
    std::mutex m;
    std::condition_variable cv;
    int left = 1;
    void wait() {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [&] { return left == 0; });
    }
};
void done_fn(void *arg) {
    auto *d = static_cast<Done *>(arg);
    std::lock_guard<std::mutex> g(d->m);
    if (--d->left == 0)
        d->cv.notify_all();
}

// One implementation of a graph, built and run the same way by measure(). run(slot) starts
// one run and returns when it has finished; runs on different slots (0, 1) may overlap when
// overlaps() says so.
struct Impl {
    virtual ~Impl() = default;
    virtual void add_nodes(const Shape &s) = 0;
    virtual void add_edges(const Shape &s) = 0;
    virtual void run(int slot) = 0;
    virtual bool overlaps() const { return true; }
};

crew_pool *make_pool(unsigned threads) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    crew_pool *p = nullptr;
    if (crew_create(&p, &cfg) != CREW_OK)
        die("crew_create");
    return p;
}

// crew's graph: one crew_graph, each run waited for through its group.
struct CrewGraph final : Impl {
    crew_pool *p;
    crew_graph *g = nullptr;
    explicit CrewGraph(crew_pool *pool) : p(pool) {
        if (crew_graph_create(p, &g) != CREW_OK)
            die("crew_graph_create");
    }
    ~CrewGraph() override { crew_graph_destroy(g); }
    void add_nodes(const Shape &s) override {
        for (uint32_t i = 0; i < s.n; i++)
            if (crew_graph_add(g, nop, nullptr, 0, nullptr) != CREW_OK)
                die("crew_graph_add");
    }
    void add_edges(const Shape &s) override {
        for (auto &e : s.edges)
            if (crew_graph_precede(g, e.first, e.second) != CREW_OK)
                die("crew_graph_precede");
    }
    void run(int) override {
        Done d;
        crew_handle h = CREW_HANDLE_NONE;
        if (crew_graph_run(g, &h) != CREW_OK || crew_notify(p, h, done_fn, &d) != CREW_OK)
            die("crew_graph_run");
        d.wait();
    }
};

// The graph by hand, as a user of crew's groups would write it without crew_graph: each node
// its successor list and its number of predecessors; a run a counter per node (reset at the
// start of the run), the roots submitted into a new group, and each node's task submitting the
// successors whose counter it takes to zero into the same group.
struct Groups final : Impl {
    struct Run;
    struct Slot {
        std::atomic<uint32_t> left; // acq_rel: the last predecessor's writes reach the successor
        Run *run;
    };
    struct Run {
        Groups *graph;
        std::unique_ptr<Slot[]> slots;
        size_t size = 0;
        crew_handle group;
    };
    crew_pool *p;
    std::vector<std::vector<uint32_t>> succ;
    std::vector<uint32_t> preds, roots;
    Run runs[2];
    explicit Groups(crew_pool *pool) : p(pool) {}
    void add_nodes(const Shape &s) override {
        succ.resize(s.n);
        preds.assign(s.n, 0);
    }
    void add_edges(const Shape &s) override {
        for (auto &e : s.edges) {
            succ[e.first].push_back(e.second);
            preds[e.second]++;
        }
        for (uint32_t i = 0; i < preds.size(); i++)
            if (preds[i] == 0)
                roots.push_back(i);
    }
    static void node(void *arg) {
        Slot *me = static_cast<Slot *>(arg);
        Run *r = me->run;
        Groups *g = r->graph;
        nop(nullptr); // the node's work
        for (uint32_t j : g->succ[size_t(me - r->slots.get())]) {
            Slot *next = &r->slots[j];
            if (next->left.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
                crew_submit(g->p, node, next, 0, &r->group) != CREW_OK)
                die("crew_submit");
        }
    }
    void run(int slot) override {
        Run &r = runs[slot];
        size_t n = preds.size();
        if (!r.slots || r.size != n) {
            r.graph = this;
            r.slots.reset(new Slot[n]);
            r.size = n;
            for (size_t i = 0; i < n; i++)
                r.slots[i].run = &r;
        }
        for (size_t i = 0; i < n; i++)
            r.slots[i].left.store(preds[i], std::memory_order_relaxed); // published by submit
        r.group = CREW_HANDLE_NONE;
        Done d;
        for (uint32_t i : roots)
            if (crew_submit(p, node, &r.slots[i], 0, &r.group) != CREW_OK)
                die("crew_submit");
        if (crew_notify(p, r.group, done_fn, &d) != CREW_OK)
            die("crew_notify");
        d.wait();
    }
};

#ifdef CREW_HAVE_TBB
// oneTBB's flow graph in an arena of as many threads.
struct Tbb final : Impl {
    using node_t = oneapi::tbb::flow::continue_node<oneapi::tbb::flow::continue_msg>;
    oneapi::tbb::task_arena &arena;
    std::unique_ptr<oneapi::tbb::flow::graph> gr;
    std::vector<std::unique_ptr<node_t>> nodes;
    std::vector<uint32_t> roots;
    explicit Tbb(oneapi::tbb::task_arena &a) : arena(a) {
        arena.execute([&] { gr = std::make_unique<oneapi::tbb::flow::graph>(); });
    }
    ~Tbb() override {
        arena.execute([&] {
            nodes.clear();
            gr.reset();
        });
    }
    void add_nodes(const Shape &s) override {
        arena.execute([&] {
            nodes.reserve(s.n);
            for (uint32_t i = 0; i < s.n; i++)
                nodes.emplace_back(new node_t(*gr, [](const oneapi::tbb::flow::continue_msg &) {
                    return oneapi::tbb::flow::continue_msg();
                }));
        });
    }
    void add_edges(const Shape &s) override {
        arena.execute([&] {
            for (auto &e : s.edges)
                oneapi::tbb::flow::make_edge(*nodes[e.first], *nodes[e.second]);
        });
        std::vector<char> has_pred(s.n, 0);
        for (auto &e : s.edges)
            has_pred[e.second] = 1;
        for (uint32_t i = 0; i < s.n; i++)
            if (!has_pred[i])
                roots.push_back(i);
    }
    void run(int) override {
        arena.execute([&] {
            for (uint32_t i : roots)
                nodes[i]->try_put(oneapi::tbb::flow::continue_msg());
            gr->wait_for_all();
        });
    }
    // Two runs at once in one flow graph would merge (a continue_node counts messages from any
    // run), so a flow graph's runs cannot overlap.
    bool overlaps() const override { return false; }
};
#endif

// One library at one thread count: makes an Impl per repetition, owns the pool or arena.
struct Lib {
    std::string name;
    std::function<std::unique_ptr<Impl>()> make;
    std::function<void()> close;
};

Lib open_lib(const std::string &name, unsigned threads) {
    Lib l;
    l.name = name;
    if (name == "crew" || name == "groups") {
        crew_pool *p = make_pool(threads);
        if (name == "crew")
            l.make = [p] { return std::unique_ptr<Impl>(new CrewGraph(p)); };
        else
            l.make = [p] { return std::unique_ptr<Impl>(new Groups(p)); };
        l.close = [p] { crew_destroy(p); };
    }
#ifdef CREW_HAVE_TBB
    else if (name == "onetbb") {
        // The caller is one of the arena's threads (a slot reserved for it): it runs nodes in
        // wait_for_all, as a flow graph's user would have it.
        auto arena = std::make_shared<oneapi::tbb::task_arena>(int(threads), 1);
        arena->initialize();
        l.make = [arena] { return std::unique_ptr<Impl>(new Tbb(*arena)); };
        l.close = [arena] {};
    }
#endif
    return l;
}

struct Times {
    double build_node, build_edge, run1, run2, overlap; // overlap < 0: not measured
};

// The one timing loop: build (nodes, then edges: the caller's CPU time), run a first and a
// second time (wall time), then two runs one after the other against the same two started at
// once from this thread and a second one.
Times measure(Impl &g, const Shape &s) {
    Times r;
    double t0 = cpu_s();
    g.add_nodes(s);
    double t1 = cpu_s();
    g.add_edges(s);
    double t2 = cpu_s();
    double t2w = now_s();
    g.run(0);
    double t3 = now_s();
    g.run(0);
    double t4 = now_s();
    r.build_node = (t1 - t0) * 1e9 / s.n;
    r.build_edge = s.edges.empty() ? 0 : (t2 - t1) * 1e9 / double(s.edges.size());
    r.run1 = (t3 - t2w) * 1e9 / s.n;
    r.run2 = (t4 - t3) * 1e9 / s.n;
    r.overlap = -1;
    if (!g.overlaps())
        return r;
    g.run(0);
    g.run(1);
    double t5 = now_s();
    // The second thread is started first and waits for the go, so its start is not timed.
    std::mutex m;
    std::condition_variable cv;
    bool go = false;
    std::thread other([&] {
        {
            std::unique_lock<std::mutex> l(m);
            cv.wait(l, [&] { return go; });
        }
        g.run(1);
    });
    double t6 = now_s();
    {
        std::lock_guard<std::mutex> l(m);
        go = true;
    }
    cv.notify_one();
    g.run(0);
    other.join();
    double t7 = now_s();
    r.overlap = (t7 - t6) / (t5 - t4);
    return r;
}

// Memory: built and run once in a child process of its own (so nothing an earlier graph freed
// is reused), resident memory before, after the nodes and after the edges and a first run.
int mem_mode(const std::string &lib, const Shape &s) {
    Lib l = open_lib(lib, 1);
    if (!l.make)
        return 2;
    std::unique_ptr<Impl> g = l.make();
    double before = rss_bytes();
    g->add_nodes(s);
    double nodes = rss_bytes();
    g->add_edges(s);
    g->run(0);
    double all = rss_bytes();
    std::printf("%.1f %.1f\n", (nodes - before) / s.n,
                s.edges.empty() ? 0 : (all - nodes) / double(s.edges.size()));
    g.reset();
    l.close();
    return 0;
}

bool child_mem(const std::string &lib, const std::string &shape, double scale, double *per_node,
               double *per_edge) {
    char self[4096];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0)
        return false;
    self[k] = 0;
    char scale_s[64];
    std::snprintf(scale_s, sizeof scale_s, "%.17g", scale);
    int fd[2];
    if (pipe(fd) != 0)
        return false;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    std::string l = lib, sh = shape;
    char mem_opt[] = "--mem", scale_opt[] = "--scale", shapes_opt[] = "--shapes";
    char *argv[] = {self, mem_opt, &l[0], scale_opt, scale_s, shapes_opt, &sh[0], nullptr};
    pid_t pid;
    int rc = posix_spawn(&pid, self, &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        return false;
    }
    char buf[128] = {0};
    ssize_t got = 0, n;
    while (got < ssize_t(sizeof buf) - 1 && (n = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += n;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
           std::sscanf(buf, "%lf %lf", per_node, per_edge) == 2;
}

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

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int instr_mode(const std::string &lib, uint32_t n, int runs) {
    Shape s;
    s.name = "chain";
    s.n = n;
    for (uint32_t i = 1; i < n; i++)
        s.edges.push_back({i - 1, i});
    Lib l = open_lib(lib, 1);
    if (!l.make)
        return 2;
    std::unique_ptr<Impl> g = l.make();
    g->add_nodes(s);
    g->add_edges(s);
    for (int k = 0; k < runs; k++)
        g->run(0);
    g.reset();
    l.close();
    return 0;
}

bool have_lib(const std::string &name) {
#ifdef CREW_HAVE_TBB
    if (name == "onetbb")
        return true;
#endif
    return name == "crew" || name == "groups";
}

} // namespace

int main(int argc, char **argv) {
    double scale = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    std::string threads = cores > 1 ? "1," + std::to_string(cores) : "1";
    std::string shapes = "chain,tree,wavefront,random", libs = "crew,groups,onetbb", csv_path,
                mem_lib;
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
        } else if (a == "--libs") {
            libs = value();
        } else if (a == "--reps") {
            reps = std::atoi(value().c_str());
        } else if (a == "--csv") {
            csv_path = value();
        } else if (a == "--instr") {
            instr = std::atol(value().c_str());
        } else if (a == "--mem") { // the child process of child_mem
            mem_lib = value();
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
    std::vector<std::string> lib_list;
    for (const std::string &l : split(libs)) {
        if (l != "crew" && l != "groups" && l != "onetbb") {
            std::fprintf(stderr, "bench_graph: unknown library '%s'\n%s", l.c_str(), usage_text);
            return 2;
        }
        if (have_lib(l))
            lib_list.push_back(l);
    }
    if (lib_list.empty()) {
        std::fprintf(stderr, "bench_graph: none of '%s' is in this build\n", libs.c_str());
        return 2;
    }
    if (!mem_lib.empty())
        return mem_mode(mem_lib, make_shape(split(shapes).at(0), scale));
    if (instr)
        return instr_mode(lib_list[0], uint32_t(instr), reps);
    std::vector<unsigned> thread_list;
    for (const std::string &t : split(threads)) {
        int th = std::atoi(t.c_str());
        if (th <= 0) {
            std::fprintf(stderr, "bench_graph: bad thread count '%s'\n%s", t.c_str(), usage_text);
            return 2;
        }
        thread_list.push_back(unsigned(th));
    }
    std::vector<Shape> shape_list;
    for (const std::string &name : split(shapes)) {
        shape_list.push_back(make_shape(name, scale));
        if (shape_list.back().n == 0) {
            std::fprintf(stderr, "bench_graph: unknown shape '%s'\n%s", name.c_str(), usage_text);
            return 2;
        }
    }
    FILE *csv = nullptr;
    if (!csv_path.empty()) {
        csv = std::fopen(csv_path.c_str(), "w");
        if (!csv) {
            std::perror(csv_path.c_str());
            return 1;
        }
        std::fprintf(csv, "shape,lib,threads,nodes,edges,rep,build_node_ns,build_edge_ns,"
                          "run1_ns,run2_ns,overlap\n");
    }
    std::printf("%d runs of each, interleaved; medians, ns per node or edge\n", reps);
    std::printf("%-10s %8s %9s %-6s %3s %8s %8s %8s %8s %6s %6s %5s\n", "shape", "nodes",
                "edges", "lib", "thr", "bld/node", "bld/edge", "run1", "run2", "B/node",
                "B/edge", "2at1");
    for (const Shape &s : shape_list) {
        std::vector<double> mem_node(lib_list.size(), -1), mem_edge(lib_list.size(), -1);
        for (size_t li = 0; li < lib_list.size(); li++) {
            if (!child_mem(lib_list[li], s.name, scale, &mem_node[li], &mem_edge[li]))
                mem_node[li] = mem_edge[li] = -1;
            else if (csv)
                std::fprintf(csv, "%s,%s,1,%u,%zu,-1,%.1f,%.1f,,,\n", s.name.c_str(),
                             lib_list[li].c_str(), s.n, s.edges.size(), mem_node[li],
                             mem_edge[li]);
        }
        for (unsigned th : thread_list) {
            std::vector<Lib> open;
            for (const std::string &name : lib_list)
                open.push_back(open_lib(name, th));
            std::vector<std::vector<Times>> runs(open.size());
            for (int rep = 0; rep < reps; rep++)
                for (size_t li = 0; li < open.size(); li++) {
                    std::unique_ptr<Impl> g = open[li].make();
                    Times r = measure(*g, s);
                    runs[li].push_back(r);
                    if (csv) {
                        std::fprintf(csv, "%s,%s,%u,%u,%zu,%d,%.2f,%.2f,%.2f,%.2f,", s.name.c_str(),
                                     open[li].name.c_str(), th, s.n, s.edges.size(), rep,
                                     r.build_node, r.build_edge, r.run1, r.run2);
                        if (r.overlap >= 0)
                            std::fprintf(csv, "%.3f", r.overlap);
                        std::fprintf(csv, "\n");
                    }
                }
            for (size_t li = 0; li < open.size(); li++) {
                auto med = [&](double Times::*f) {
                    std::vector<double> v;
                    for (const Times &r : runs[li])
                        v.push_back(r.*f);
                    return median(v);
                };
                char b_node[32] = "-", b_edge[32] = "-", ov[32] = "-";
                if (mem_node[li] >= 0) {
                    std::snprintf(b_node, sizeof b_node, "%.1f", mem_node[li]);
                    std::snprintf(b_edge, sizeof b_edge, "%.1f", mem_edge[li]);
                }
                if (runs[li][0].overlap >= 0)
                    std::snprintf(ov, sizeof ov, "%.2f", med(&Times::overlap));
                std::printf("%-10s %8u %9zu %-6s %3u %8.1f %8.1f %8.1f %8.1f %6s %6s %5s\n",
                            s.name.c_str(), s.n, s.edges.size(), open[li].name.c_str(), th,
                            med(&Times::build_node), med(&Times::build_edge), med(&Times::run1),
                            med(&Times::run2), b_node, b_edge, ov);
            }
            for (Lib &l : open)
                l.close();
            std::fflush(stdout);
        }
    }
    if (csv)
        std::fclose(csv);
    return 0;
}
