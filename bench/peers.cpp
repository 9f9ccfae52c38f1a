// peers.cpp -- crew against the pools C and C++ programmers use today, side by side in one run.
//
// Workloads (all with workers = cores):
//   empty     N empty tasks from one external thread, then wait for all       -> tasks/s
//   forkjoin  R rounds, each forking `cores` tasks of ~1 us (256 LCG steps)
//             from the calling thread and joining them                        -> us per round
//   fib       fib(n), every call with n >= 2 spawning fib(n-1) as a task,
//             computing fib(n-2) itself, then waiting (only pools that can
//             wait inside a task)                                             -> seconds
//             ("crew-coro": the same with C++20 coroutines, crew::when_all of both halves;
//             it runs this workload only)
//   matmul    M 10x10 double matrix multiplications from one producer        -> seconds
//   skynet    the classic "skynet": a 10-ary tree of tasks D levels deep (D = 6: 1,111,111
//             tasks); a leaf returns its number, an inner task spawns its 10 children,
//             waits and sums them; the root's sum must be 10^D (10^D - 1) / 2
//             (499999500000 for D = 6) (only pools that can wait inside a task)  -> seconds
//   wakeup    one task handed to an idle pool (workers asleep for 2 ms) until it
//             starts; the median of 100 trials                               -> microseconds
//   burst     (not with -t) for each P of -P (4,8,16,32): 200 calls, each handing P tasks of
//             work_large (20,000 exp() calls, Jendersie et al.'s pool experiment) to a pool
//             of P threads and waiting; crew, oneTBB, OpenMP and thread-per-request, plus
//             burst-only variants (crew-tasks-wait, crew-nohelp, crew-p-1, crew-spin,
//             crew-spin64, crew-spin0, onetbb-p+1)
//                                                           -> us per call, context switches
//   bounded   (only with -w bounded) one producer offers J jobs of ~L us of CPU work to a pool
//             of W threads (4x the cores) whose queue holds C jobs (1), each with a try-add
//             and, if full, a blocking add (zstd's POOL_tryAdd, then POOL_add); crew, its
//             strategies and the textbook pool with a bounded FIFO         -> ms, csw per job
// crew-enqueue-wait: crew (default strategy) as "crew": skynet's ten children queued with
// crew_enqueue_tasks into a fresh group and waited for with crew_wait; crew-tasks-wait: the same
// with the ten children in one crew_enqueue_tasks_wait call (both shapes a user writes after
// reading crew.h; the name crew-tasks-wait also names a burst variant below).
// crew-join: crew (default strategy) whose fib and skynet spawn with crew_join instead of a group
// per call (skynet's ten children as a binary tree of joins); crew-join-task: the same with the
// root run as one task while the caller blocks without helping, so that every join is a
// worker's (with -t 1 under callgrind: the instructions of a worker's join, alone).
// Peers: crew, OpenMP tasks (libgomp), oneTBB task_group, Boost.Asio thread_pool, GLib
// GThreadPool, a textbook mutex+condvar FIFO pool, and thread-per-task (pthread_create per task,
// on a tenth of the tasks, reported as a rate). A peer whose package was absent at build time is
// listed as skipped.
//
// Each (workload, peer) pair runs -r times, interleaved round-robin so every peer sees the same
// machine noise; the table gives the median with (min..max) and each peer's ratio to crew.
//
// Usage: bench_peers [-w empty,forkjoin,fib,matmul,wakeup,skynet,burst,bounded] [-p crew,...]
//                    [-r repeats] [-t threads] [-n empty_tasks] [-R rounds] [-f fib_n]
//                    [-m matmuls] [-D skynet_depth] [-P burst_sizes] [-C capacity]
//                    [-W workers] [-J jobs] [-L job_us] [-c out.csv]
//                    [-S summary.md]   (a markdown table: crew against the best peer per workload)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <getopt.h>
#include <map>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "bench_util.hpp"
#include "crew.h"
#ifdef CREW_HAVE_CORO
#include "peers_coro.h"
#endif

#ifdef CREW_HAVE_OPENMP
#include <omp.h>
#endif
#ifdef CREW_HAVE_TBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif
#ifdef CREW_HAVE_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#endif
#ifdef CREW_HAVE_GLIB
#include <glib.h>
#endif

using benchutil::Latch; // for the pools without a "wait for all"
using benchutil::Stat;
using benchutil::stat;
using benchutil::split;

namespace {

unsigned g_threads = 2;

// ------------------------------------------------------------------------------------------
// Workload kernels
// ------------------------------------------------------------------------------------------
void empty_fn(void *) {}

// Wait until the previous peer's threads have stopped spinning and gone to sleep: libgomp's
// spin after a region, oneTBB's idle workers and crew's polling workers would otherwise take the
// cores from the peer measured next. Settled: the whole process used under 10% of one core over
// 10 ms (a fixed pause cannot know how long each peer spins). At most 2 s, then on regardless.
void settle() {
    auto cpu = [] {
        timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    };
    for (int i = 0; i < 200; i++) {
        double c0 = cpu();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (cpu() - c0 < 0.001)
            return;
    }
}

struct LcgArg {
    uint64_t seed;
    uint64_t out;
};
void lcg_fn(void *a) { // ~1 us: 256 steps of a 64-bit linear congruential generator
    auto *x = static_cast<LcgArg *>(a);
    uint64_t v = x->seed;
    for (int i = 0; i < 256; i++)
        v = v * 6364136223846793005ull + 1442695040888963407ull;
    x->out = v;
}

struct Mat {
    double m[10][10];
};
std::vector<Mat> g_mats; // 64 inputs
std::vector<double> g_mat_out;

void matmul_index(size_t i) {
    const Mat &a = g_mats[i % 64], &b = g_mats[(i * 7 + 3) % 64];
    double trace = 0;
    for (int r = 0; r < 10; r++)
        for (int c = 0; c < 10; c++) {
            double s = 0;
            for (int k = 0; k < 10; k++)
                s += a.m[r][k] * b.m[k][c];
            if (r == c)
                trace += s;
        }
    g_mat_out[i] = trace;
}
void matmul_fn(void *a) { matmul_index(reinterpret_cast<size_t>(a)); }

long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

long skynet_leaves(int depth) { // 10^depth
    long n = 1;
    for (int i = 0; i < depth; i++)
        n *= 10;
    return n;
}

// ------------------------------------------------------------------------------------------
// Peers: each runs the four workloads and returns seconds (or < 0 when it cannot).
// ------------------------------------------------------------------------------------------
struct Peer {
    virtual ~Peer() = default;
    virtual const char *name() const = 0;
    virtual double empty(long n) = 0;
    virtual double forkjoin(long rounds) = 0;
    virtual double fib(int n, long *result) = 0; // < 0: not supported
    virtual double matmul(long m) = 0;
    // Skynet with 10^depth leaves; < 0: not supported (the pool cannot wait inside a task).
    virtual double skynet(int depth, long *result) {
        (void)depth, (void)result;
        return -1;
    }
    // Median seconds from handing one task to an idle pool until it starts (< 0: not measured).
    virtual double wakeup(int trials) {
        (void)trials;
        return -1;
    }
    virtual double scale() const { return 1.0; } // fraction of the tasks it runs (rates scale)
    // Why it has no figure for a workload it did not run.
    virtual const char *not_run(const std::string &w) const {
        return w == "wakeup" ? "n/a (no way to hand over one task from outside)"
                             : "n/a (cannot wait inside a task)";
    }
};

// Wake-up latency: the pool is idle (its workers had 2 ms to go to sleep), one task is handed
// over, and the task records when it starts; the caller spins on that without helping.
std::atomic<int64_t> g_started{0};
int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
void mark_start(void *) { g_started.store(now_ns(), std::memory_order_release); }
std::vector<double> g_wake_last; // the last measure_wakeup's latencies (s), for the p99

double measure_wakeup(int trials, const std::function<void()> &hand_over,
                      const std::function<void()> &after = nullptr) {
    std::vector<double> lat;
    for (int i = 0; i < trials; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        g_started.store(0);
        int64_t t0 = now_ns();
        hand_over();
        int64_t s;
        while ((s = g_started.load(std::memory_order_acquire)) == 0)
            std::this_thread::yield();
        lat.push_back(double(s - t0) * 1e-9);
        if (after)
            after();
    }
    std::sort(lat.begin(), lat.end());
    g_wake_last = lat;
    return lat[lat.size() / 2];
}

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void check(int rc, const char *what) {
    if (rc != CREW_OK) {
        std::fprintf(stderr, "bench_peers: %s: %s\n", what, crew_strerror(rc));
        std::exit(1);
    }
}

// crew with its default scheduler ("crew"), or one named strategy ("crew-shared",
// "crew-shared-spin", "crew-lockfree", "crew-per-worker", "crew-steal"); or crew with its
// default scheduler whose empty tasks go another way, for bench/instr.sh to price that way
// against a plain crew_submit: through one lane of as many tasks at once as threads
// ("crew-lane"), each into a group of its own ("crew-group"), or each into a group of its own
// with a completion callback (crew_notify, an empty function) on it ("crew-notify": the
// callback's cost is this row minus crew-group's).
// "crew-join": fib and skynet through crew_join (no group per call); "crew-join-task": the same,
// the root a task the caller waits for without helping.
enum class EmptyVia { submit, lane, group, notify };

class CrewPeer : public Peer {
    crew_pool *p_ = nullptr;
    std::string name_;
    EmptyVia via_;
    int join_; // 0: groups; 1: crew_join; 2: crew_join, the root a task
    bool tasks_wait_; // skynet's children through crew_enqueue_tasks_wait (join_ 0 only)
    static bool sky_tasks_wait; // tasks_wait_ of the pool skynet_task runs on (one at a time)

public:
    explicit CrewPeer(const std::string &name = "crew", unsigned sched = CREW_SCHED_DEFAULT,
                      unsigned lock = CREW_LOCK_MUTEX, EmptyVia via = EmptyVia::submit,
                      int join = 0, bool tasks_wait = false)
        : name_(name), via_(via), join_(join), tasks_wait_(tasks_wait) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = g_threads;
        cfg.scheduler = sched;
        cfg.lock = lock;
        check(crew_create(&p_, &cfg), "crew_create");
    }
    ~CrewPeer() override { crew_destroy(p_); }
    const char *name() const override { return name_.c_str(); }
    double empty(long n) override {
        crew_lane *lane = nullptr;
        if (via_ == EmptyVia::lane)
            check(crew_lane_create(p_, g_threads, &lane), "crew_lane_create");
        double t = now();
        if (lane) {
            for (long i = 0; i < n; i++)
                check(crew_lane_submit(lane, empty_fn, nullptr, nullptr), "lane submit");
        } else if (via_ == EmptyVia::group || via_ == EmptyVia::notify) {
            for (long i = 0; i < n; i++) {
                crew_handle g = CREW_HANDLE_NONE;
                check(crew_submit(p_, empty_fn, nullptr, 0, &g), "submit");
                if (via_ == EmptyVia::notify)
                    check(crew_notify(p_, g, empty_fn, nullptr), "crew_notify");
            }
        } else {
            for (long i = 0; i < n; i++)
                check(crew_submit(p_, empty_fn, nullptr, 0, nullptr), "submit");
        }
        check(crew_wait_all(p_), "wait_all");
        t = now() - t;
        if (lane)
            check(crew_lane_destroy(lane), "crew_lane_destroy");
        return t;
    }
    double forkjoin(long rounds) override {
        std::vector<LcgArg> args(g_threads);
        std::vector<crew_task> t(g_threads);
        double t0 = now();
        for (long r = 0; r < rounds; r++) {
            for (unsigned i = 0; i < g_threads; i++) {
                args[i].seed = uint64_t(r * 131 + i);
                t[i] = crew_task{};
                t[i].fn = lcg_fn, t[i].arg = &args[i];
            }
            check(crew_enqueue_tasks_wait(p_, t.data(), t.size()), "tasks_wait");
        }
        return now() - t0;
    }
    struct FibArg {
        crew_pool *p;
        int n;
        long r;
    };
    static void fib_task(void *a) {
        auto *f = static_cast<FibArg *>(a);
        if (f->n < 2) {
            f->r = f->n;
            return;
        }
        FibArg child{f->p, f->n - 1, 0};
        crew_handle g = CREW_HANDLE_NONE;
        check(crew_submit(f->p, fib_task, &child, 0, &g), "fib submit");
        FibArg self{f->p, f->n - 2, 0};
        fib_task(&self);
        check(crew_wait(f->p, g), "fib wait");
        f->r = child.r + self.r;
    }
    // The root fn(arg) as one task, waited for without helping (a condition variable).
    void run_root(crew_fn fn, void *arg) {
        struct Root {
            crew_fn fn;
            void *arg;
            std::mutex m;
            std::condition_variable cv;
            bool done = false;
        } r{fn, arg, {}, {}, false};
        auto body = [](void *a) {
            auto *q = static_cast<Root *>(a);
            q->fn(q->arg);
            std::lock_guard<std::mutex> g(q->m);
            q->done = true;
            q->cv.notify_one();
        };
        check(crew_submit(p_, body, &r, 0, nullptr), "root");
        std::unique_lock<std::mutex> g(r.m);
        r.cv.wait(g, [&] { return r.done; });
    }
    // fib(n-2) on the caller, fib(n-1) offered to the others, as fib_task does.
    static void fib_join(void *a) {
        auto *f = static_cast<FibArg *>(a);
        if (f->n < 2) {
            f->r = f->n;
            return;
        }
        FibArg x{f->p, f->n - 2, 0}, y{f->p, f->n - 1, 0};
        check(crew_join(f->p, fib_join, &x, fib_join, &y), "fib join");
        f->r = x.r + y.r;
    }
    double fib(int n, long *result) override {
        FibArg root{p_, n, 0};
        double t = now();
        if (join_ == 2)
            run_root(fib_join, &root);
        else if (join_)
            fib_join(&root); // the caller joins like a worker, through its external slot
        else
            fib_task(&root);
        *result = root.r;
        return now() - t;
    }
    struct SkyArg {
        crew_pool *p;
        long num, size; // first leaf number and leaves below
        long r;
    };
    // All ten children are tasks (the classic skynet), queued as one group in one call and
    // waited for (or, sky_tasks_wait, queued and waited for in one crew_enqueue_tasks_wait).
    static void skynet_task(void *a) {
        auto *s = static_cast<SkyArg *>(a);
        if (s->size == 1) {
            s->r = s->num;
            return;
        }
        long sub = s->size / 10;
        SkyArg child[10];
        crew_task t[10];
        for (int i = 0; i < 10; i++) {
            child[i] = SkyArg{s->p, s->num + i * sub, sub, 0};
            t[i] = crew_task{};
            t[i].fn = skynet_task, t[i].arg = &child[i];
        }
        if (sky_tasks_wait) {
            check(crew_enqueue_tasks_wait(s->p, t, 10), "skynet tasks_wait");
        } else {
            crew_handle g = CREW_HANDLE_NONE;
            check(crew_enqueue_tasks(s->p, t, 10, &g), "skynet enqueue");
            check(crew_wait(s->p, g), "skynet wait");
        }
        long sum = 0;
        for (int i = 0; i < 10; i++)
            sum += child[i].r;
        s->r = sum;
    }
    // skynet through crew_join: children [lo, hi) of a node, halved until one is left.
    struct SkyRange {
        crew_pool *p;
        long num, sub; // the node's first leaf, and leaves below each child
        int lo, hi;
        long r;
    };
    static void sky_range(void *a) {
        auto *s = static_cast<SkyRange *>(a);
        if (s->hi - s->lo == 1) {
            SkyArg c{s->p, s->num + s->lo * s->sub, s->sub, 0};
            skynet_join(&c);
            s->r = c.r;
            return;
        }
        int mid = (s->lo + s->hi) / 2;
        SkyRange x{s->p, s->num, s->sub, s->lo, mid, 0}, y{s->p, s->num, s->sub, mid, s->hi, 0};
        check(crew_join(s->p, sky_range, &x, sky_range, &y), "skynet join");
        s->r = x.r + y.r;
    }
    static void skynet_join(void *a) {
        auto *s = static_cast<SkyArg *>(a);
        if (s->size == 1) {
            s->r = s->num;
            return;
        }
        SkyRange all{s->p, s->num, s->size / 10, 0, 10, 0};
        sky_range(&all);
        s->r = all.r;
    }
    double skynet(int depth, long *result) override {
        SkyArg root{p_, 0, skynet_leaves(depth), 0};
        sky_tasks_wait = tasks_wait_;
        double t = now();
        if (join_ == 2)
            run_root(skynet_join, &root);
        else if (join_)
            skynet_join(&root);
        else
            skynet_task(&root);
        *result = root.r;
        return now() - t;
    }
    double matmul(long m) override {
        double t = now();
        for (long i = 0; i < m; i++)
            check(crew_submit(p_, matmul_fn, reinterpret_cast<void *>(i), 0, nullptr), "submit");
        check(crew_wait_all(p_), "wait_all");
        return now() - t;
    }
    double wakeup(int trials) override {
        return measure_wakeup(trials, [this] {
            check(crew_submit(p_, mark_start, nullptr, 0, nullptr), "submit");
        });
    }
};
bool CrewPeer::sky_tasks_wait = false;

#ifdef CREW_HAVE_OPENMP
long fib_omp(int n) {
    if (n < 2)
        return n;
    long a = 0;
#pragma omp task shared(a)
    a = fib_omp(n - 1);
    long b = fib_omp(n - 2);
#pragma omp taskwait
    return a + b;
}

long skynet_omp(long num, long size) {
    if (size == 1)
        return num;
    long r[10], sub = size / 10;
    for (int i = 0; i < 10; i++) {
#pragma omp task shared(r) firstprivate(i)
        r[i] = skynet_omp(num + i * sub, sub);
    }
#pragma omp taskwait
    long sum = 0;
    for (int i = 0; i < 10; i++)
        sum += r[i];
    return sum;
}

class OmpPeer : public Peer {
public:
    const char *name() const override { return "openmp"; }
    double empty(long n) override {
        double t = now();
#pragma omp parallel num_threads(g_threads)
#pragma omp single
        {
            for (long i = 0; i < n; i++) {
#pragma omp task
                empty_fn(nullptr);
            }
#pragma omp taskwait
        }
        return now() - t;
    }
    double forkjoin(long rounds) override {
        std::vector<LcgArg> args(g_threads);
        double t = now();
#pragma omp parallel num_threads(g_threads)
#pragma omp single
        for (long r = 0; r < rounds; r++) {
            for (unsigned i = 0; i < g_threads; i++) {
                args[i].seed = uint64_t(r * 131 + i);
                LcgArg *a = &args[i];
#pragma omp task firstprivate(a)
                lcg_fn(a);
            }
#pragma omp taskwait
        }
        return now() - t;
    }
    double fib(int n, long *result) override {
        long r = 0;
        double t = now();
#pragma omp parallel num_threads(g_threads)
#pragma omp single
        r = fib_omp(n);
        *result = r;
        return now() - t;
    }
    double skynet(int depth, long *result) override {
        long r = 0;
        double t = now();
#pragma omp parallel num_threads(g_threads)
#pragma omp single
        r = skynet_omp(0, skynet_leaves(depth));
        *result = r;
        return now() - t;
    }
    double matmul(long m) override {
        double t = now();
#pragma omp parallel num_threads(g_threads)
#pragma omp single
        {
            for (long i = 0; i < m; i++) {
#pragma omp task firstprivate(i)
                matmul_index(size_t(i));
            }
#pragma omp taskwait
        }
        return now() - t;
    }
};
#endif

#ifdef CREW_HAVE_TBB
long fib_tbb(int n) {
    if (n < 2)
        return n;
    long a = 0;
    tbb::task_group g;
    g.run([&] { a = fib_tbb(n - 1); });
    long b = fib_tbb(n - 2);
    g.wait();
    return a + b;
}

long skynet_tbb(long num, long size) {
    if (size == 1)
        return num;
    long r[10], sub = size / 10;
    tbb::task_group g;
    for (int i = 0; i < 10; i++)
        g.run([&r, i, num, sub] { r[i] = skynet_tbb(num + i * sub, sub); });
    g.wait();
    long sum = 0;
    for (int i = 0; i < 10; i++)
        sum += r[i];
    return sum;
}

class TbbPeer : public Peer {
    tbb::global_control limit_{tbb::global_control::max_allowed_parallelism, g_threads};
    tbb::task_arena arena_{int(g_threads)};

public:
    const char *name() const override { return "onetbb"; }
    double empty(long n) override {
        double t = now();
        arena_.execute([&] {
            tbb::task_group g;
            for (long i = 0; i < n; i++)
                g.run([] { empty_fn(nullptr); });
            g.wait();
        });
        return now() - t;
    }
    double forkjoin(long rounds) override {
        std::vector<LcgArg> args(g_threads);
        double t = now();
        arena_.execute([&] {
            for (long r = 0; r < rounds; r++) {
                tbb::task_group g;
                for (unsigned i = 0; i < g_threads; i++) {
                    args[i].seed = uint64_t(r * 131 + i);
                    LcgArg *a = &args[i];
                    g.run([a] { lcg_fn(a); });
                }
                g.wait();
            }
        });
        return now() - t;
    }
    double fib(int n, long *result) override {
        double t = now();
        arena_.execute([&] { *result = fib_tbb(n); });
        return now() - t;
    }
    double skynet(int depth, long *result) override {
        double t = now();
        arena_.execute([&] { *result = skynet_tbb(0, skynet_leaves(depth)); });
        return now() - t;
    }
    double wakeup(int trials) override {
        return measure_wakeup(trials, [this] { arena_.enqueue([] { mark_start(nullptr); }); });
    }
    double matmul(long m) override {
        double t = now();
        arena_.execute([&] {
            tbb::task_group g;
            for (long i = 0; i < m; i++)
                g.run([i] { matmul_index(size_t(i)); });
            g.wait();
        });
        return now() - t;
    }
};
#endif

// A job for the pools without a "wait for all": it runs fn(arg), then counts down the latch.
struct Job {
    void (*fn)(void *);
    void *arg;
    Latch *latch;
    void run() {
        fn(arg);
        latch->count_down();
    }
};

// The peers that only take fire-and-forget jobs (Boost.Asio, GLib, the textbook pool): the
// workloads are written once, over post(); completion is a latch. None can wait inside a task.
class LatchedPeer : public Peer {
protected:
    Latch latch_;
    std::vector<Job> jobs_;
    virtual void post(Job *j) = 0; // run j->run() on the pool

    // Post n jobs fn(arg(i)) and wait for all; the jobs are built before the clock starts.
    double run_all(long n, void (*fn)(void *), const std::function<void *(long)> &arg) {
        jobs_.assign(size_t(n), Job{fn, nullptr, &latch_});
        for (long i = 0; i < n; i++)
            jobs_[size_t(i)].arg = arg(i);
        latch_.reset(n);
        double t = now();
        for (long i = 0; i < n; i++)
            post(&jobs_[size_t(i)]);
        latch_.wait();
        return now() - t;
    }

public:
    double empty(long n) override {
        return run_all(n, empty_fn, [](long) -> void * { return nullptr; });
    }
    double forkjoin(long rounds) override {
        std::vector<LcgArg> args(g_threads);
        std::vector<Job> jobs(g_threads);
        double t = now();
        for (long r = 0; r < rounds; r++) {
            latch_.reset(g_threads);
            for (unsigned i = 0; i < g_threads; i++) {
                args[i].seed = uint64_t(r * 131 + i);
                jobs[i] = Job{lcg_fn, &args[i], &latch_};
                post(&jobs[i]);
            }
            latch_.wait();
        }
        return now() - t;
    }
    double fib(int, long *) override { return -1; }
    double matmul(long m) override {
        return run_all(m, matmul_fn, [](long i) { return reinterpret_cast<void *>(i); });
    }
    double wakeup(int trials) override {
        Job j{mark_start, nullptr, &latch_};
        return measure_wakeup(
            trials,
            [&] {
                latch_.reset(1);
                post(&j);
            },
            [&] { latch_.wait(); });
    }
};

#ifdef CREW_HAVE_ASIO
class AsioPeer final : public LatchedPeer {
    boost::asio::thread_pool pool_{g_threads};
    void post(Job *j) override { boost::asio::post(pool_, [j] { j->run(); }); }

public:
    ~AsioPeer() override { pool_.join(); }
    const char *name() const override { return "boost.asio"; }
};
#endif

#ifdef CREW_HAVE_GLIB
class GlibPeer final : public LatchedPeer {
    GThreadPool *pool_;
    static void run(gpointer data, gpointer) { static_cast<Job *>(data)->run(); }
    void post(Job *j) override { g_thread_pool_push(pool_, j, nullptr); }

public:
    GlibPeer() { pool_ = g_thread_pool_new(run, nullptr, int(g_threads), TRUE, nullptr); }
    ~GlibPeer() override { g_thread_pool_free(pool_, FALSE, TRUE); }
    const char *name() const override { return "glib"; }
};
#endif

// The textbook pool's threads, for the textbook peer and the textbook bounded queue
// (bq::TextbookQueue): one FIFO of jobs under one mutex, one condition variable for work; each
// thread takes the oldest job and hands it, the lock released, to Owner::ran (a direct call,
// inlined), until stop() and the FIFO is empty. The owner calls stop() in its destructor.
template <class Owner, class J>
class TextbookThreads {
    bool stop_ = false; // first: m_ is not at the object's address (no null test when locked)
    std::vector<std::thread> threads_;

protected:
    std::mutex m_;
    std::condition_variable work_;
    std::deque<J *> q_;

    void start(unsigned n) {
        for (unsigned i = 0; i < n; i++)
            threads_.emplace_back([this] { worker(); });
    }
    void stop() {
        {
            std::lock_guard<std::mutex> g(m_);
            stop_ = true;
        }
        work_.notify_all();
        for (auto &t : threads_)
            t.join();
    }

private:
    void worker() {
        for (;;) {
            J *j;
            {
                std::unique_lock<std::mutex> g(m_);
                work_.wait(g, [&] { return stop_ || !q_.empty(); });
                if (q_.empty())
                    return;
                j = q_.front();
                q_.pop_front();
            }
            static_cast<Owner *>(this)->ran(j);
        }
    }
};

// The textbook pool: one FIFO under one mutex, one condition variable for work.
class TextbookPeer final : public LatchedPeer, private TextbookThreads<TextbookPeer, Job> {
    friend class TextbookThreads<TextbookPeer, Job>;
    void ran(Job *j) { j->run(); }
    void post(Job *j) override {
        {
            std::lock_guard<std::mutex> g(m_);
            q_.push_back(j);
        }
        work_.notify_one();
    }

public:
    TextbookPeer() { start(g_threads); }
    ~TextbookPeer() override { stop(); }
    const char *name() const override { return "textbook"; }
};

// Thread-per-task, BOLSTER's approach (Jendersie et al., Fig. 5): runs a tenth of the tasks.
class ThreadPerTaskPeer : public Peer {
    struct Arg {
        void (*fn)(void *);
        void *arg;
    };
    static void *trampoline(void *a) {
        auto *x = static_cast<Arg *>(a);
        x->fn(x->arg);
        return nullptr;
    }
    // Runs n tasks, at most `cores` threads alive at once (so it does not exhaust the system).
    static void run(long n, void (*fn)(void *), std::function<void *(long)> arg) {
        std::vector<pthread_t> th(g_threads);
        std::vector<Arg> args(g_threads);
        for (long i = 0; i < n; i += g_threads) {
            unsigned k = 0;
            for (; k < g_threads && i + k < n; k++) {
                args[k] = Arg{fn, arg(i + long(k))};
                if (pthread_create(&th[k], nullptr, trampoline, &args[k]) != 0) {
                    std::fprintf(stderr, "bench_peers: pthread_create failed\n");
                    std::exit(1);
                }
            }
            for (unsigned j = 0; j < k; j++)
                pthread_join(th[j], nullptr);
        }
    }

public:
    const char *name() const override { return "thread/task"; }
    double scale() const override { return 0.1; }
    double empty(long n) override {
        double t = now();
        run(n / 10, empty_fn, [](long) -> void * { return nullptr; });
        return now() - t;
    }
    double forkjoin(long rounds) override {
        std::vector<LcgArg> args(g_threads);
        double t = now();
        for (long r = 0; r < rounds / 10; r++)
            run(long(g_threads), lcg_fn, [&](long i) -> void * {
                args[size_t(i)].seed = uint64_t(r * 131 + i);
                return &args[size_t(i)];
            });
        return now() - t;
    }
    double fib(int, long *) override { return -1; }
    double matmul(long m) override {
        double t = now();
        run(m / 10, matmul_fn, [](long i) { return reinterpret_cast<void *>(i); });
        return now() - t;
    }
    double wakeup(int trials) override { // thread creation to start
        pthread_t th;
        Arg a{mark_start, nullptr};
        return measure_wakeup(
            trials, [&] { pthread_create(&th, nullptr, trampoline, &a); },
            [&] { pthread_join(th, nullptr); });
    }
};

#ifdef CREW_HAVE_CORO
// crew with C++20 coroutines (peers_coro.h): the fib workload only.
class CoroPeer : public Peer {
    CoroFib *f_;

public:
    CoroPeer() : f_(coro_fib_create(g_threads)) {
        if (!f_) {
            std::fprintf(stderr, "bench_peers: crew-coro: cannot create its pool\n");
            std::exit(1);
        }
    }
    ~CoroPeer() override { coro_fib_destroy(f_); }
    const char *name() const override { return "crew-coro"; }
    double empty(long) override { return -1; }
    double forkjoin(long) override { return -1; }
    double fib(int n, long *result) override {
        double t = now();
        *result = coro_fib(f_, n);
        return now() - t;
    }
    double matmul(long) override { return -1; }
    const char *not_run(const std::string &) const override { return "n/a (fib only)"; }
};
#endif

// ------------------------------------------------------------------------------------------
// The timing frame of the burst and the bounded queue (below): each run of a peer timed as a
// whole, with the process's context switches and CPU time over it, and the summary row that
// sets crew against the best other peer (also the other workloads', in main).
// ------------------------------------------------------------------------------------------
struct Usage {
    double csw, cpu; // voluntary + involuntary context switches; user + system seconds
};
Usage usage() { // of every thread of the process so far
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return {double(u.ru_nvcsw) + double(u.ru_nivcsw),
            double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6};
}

// One run's figures: its seconds, and the process's context switches and CPU seconds over it.
struct Timed {
    double s, csw, cpu;
};

// Runs run() once the previous peer has settled, and times it.
template <class Run>
Timed timed(Run run) {
    settle();
    Usage u0 = usage();
    double t0 = now();
    run();
    double s = now() - t0;
    Usage u1 = usage();
    return {s, u1.csw - u0.csw, u1.cpu - u0.cpu};
}

// The lowest median figure among the live peers that are not crew or one of its strategies,
// the first such in live's order on a tie; its name empty when there is none.
template <class Live>
std::pair<std::string, double> best_other(const Live &live,
                                          std::map<std::string, std::vector<double>> &figures) {
    std::string best_name;
    double best = 0;
    for (auto &l : live) {
        double m = stat(figures[l.first]).median;
        if (l.first.rfind("crew", 0) != 0 && (best_name.empty() || m < best))
            best = m, best_name = l.first;
    }
    return {best_name, best};
}

// A row of the summary table (-S): crew's figure in unit, the best other peer's, and the ratio
// (>= 1: crew ahead).
void summary_row(FILE *sum, const std::string &what, double crew, const char *unit,
                 const std::string &best_name, double best, double ratio) {
    std::fprintf(sum, "| %s | %.4g %s | %s | %.4g | %.2f (%s) |\n", what.c_str(), crew, unit,
                 best_name.c_str(), best, ratio, ratio >= 1 ? "crew ahead" : "crew behind");
}

// ------------------------------------------------------------------------------------------
// burst: Jendersie et al.'s pool experiment (Fig. 6; bench/fig7_pool_vs_tpr.c): each call hands
// P tasks of work_large to a pool of P threads and waits for them. Kept apart from the Peer
// interface because it needs a pool of a different size per P; every runner below builds its
// own. Each call's P results are checked, and the process's context switches (getrusage: all
// threads) are counted per call.
// ------------------------------------------------------------------------------------------
namespace burst {

constexpr int kCalls = 200;        // calls per run
constexpr long kExpCalls = 20000;  // exponentials per work_large, as fig7's default

// "calculates a huge amount of exponential values in a loop" (Jendersie et al., Section V-B).
void compute(double *r) {
    double x = *r;
    for (long i = 0; i < kExpCalls; i++)
        x += std::exp(-double(i % 1024) / 1024.0);
    *r = x;
}

// The current call's results, and when each of its tasks started and ended (ns): each task
// writes its own entries, the caller reads them after its wait (which orders them).
double *g_base;
int64_t g_start[64], g_end[64];

void work_large(void *arg) {
    double *r = static_cast<double *>(arg);
    size_t i = size_t(r - g_base);
    g_start[i] = now_ns();
    compute(r);
    g_end[i] = now_ns();
}

// One runner per (peer, P): call() runs work_large on r[0..P-1] on its pool and waits.
struct Runner {
    virtual ~Runner() = default;
    virtual void call(double *r) = 0;
};

// crew as the seeds use it: P workers, crew_enqueue_tasks + crew_wait_all (the caller helps);
// or the same through crew_enqueue_tasks_wait ("crew-tasks-wait"); or a caller that does not
// help but sleeps on a latch the tasks count down ("crew-nohelp"); or P - 1 workers and the
// helping caller, P runners in all, as oneTBB's task_arena(P) ("crew-p-1"); or P workers that
// poll 4096 times (crew_config.spin) before they sleep, about as long as a call ("crew-spin"),
// 64 times whatever the load (the fixed default before CREW_SPIN_AUTO, "crew-spin64"), or not
// at all ("crew-spin0").
class CrewRunner : public Runner {
public:
    enum Mode { wait_all, tasks_wait, nohelp, p_minus_1, spin, spin64, spin0 };
    CrewRunner(unsigned P, Mode m) : P_(P), m_(m), t_(P), args_(P) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = m == p_minus_1 ? (P > 1 ? P - 1 : 1) : P;
        if (m == spin || m == spin64 || m == spin0)
            cfg.spin = m == spin ? 4096 : m == spin64 ? 64 : 0;
        check(crew_create(&p_, &cfg), "crew_create (burst)");
    }
    ~CrewRunner() override { crew_destroy(p_); }
    void call(double *r) override {
        if (m_ == nohelp)
            latch_.reset(long(P_));
        for (unsigned i = 0; i < P_; i++) {
            t_[i] = crew_task{};
            args_[i] = Arg{r + i, &latch_};
            t_[i].fn = m_ == nohelp ? counted : work_large;
            t_[i].arg = m_ == nohelp ? static_cast<void *>(&args_[i]) : r + i;
        }
        if (m_ == tasks_wait) {
            check(crew_enqueue_tasks_wait(p_, t_.data(), P_), "crew_enqueue_tasks_wait");
            return;
        }
        check(crew_enqueue_tasks(p_, t_.data(), P_, nullptr), "crew_enqueue_tasks");
        if (m_ == nohelp)
            latch_.wait();
        else
            check(crew_wait_all(p_), "crew_wait_all");
    }

private:
    struct Arg {
        double *r;
        Latch *latch;
    };
    static void counted(void *a) {
        auto *x = static_cast<Arg *>(a);
        work_large(x->r);
        x->latch->count_down();
    }
    crew_pool *p_ = nullptr;
    unsigned P_;
    Mode m_;
    std::vector<crew_task> t_;
    std::vector<Arg> args_;
    Latch latch_;
};

#ifdef CREW_HAVE_TBB
// oneTBB as its users would: an arena of P slots (P - 1 workers and the calling thread, the
// default one slot reserved for it) and task_group::run + wait (run() holds a global_control
// that lets more threads than cores exist); "onetbb-p+1": P + 1 slots, as many runners as
// crew's P workers plus its helping caller.
class TbbRunner : public Runner {
public:
    TbbRunner(unsigned P, unsigned extra) : P_(P), arena_(int(P + extra)) {}
    void call(double *r) override {
        arena_.execute([&] {
            tbb::task_group g;
            for (unsigned i = 0; i < P_; i++)
                g.run([r, i] { work_large(r + i); });
            g.wait();
        });
    }

private:
    unsigned P_;
    tbb::task_arena arena_;
};
#endif

#ifdef CREW_HAVE_OPENMP
// OpenMP: a parallel loop of P iterations on a team of P threads (the caller is one of them).
class OmpRunner : public Runner {
public:
    explicit OmpRunner(unsigned P) : P_(P) {}
    void call(double *r) override {
        const int n = int(P_);
#pragma omp parallel for num_threads(P_) schedule(static, 1)
        for (int i = 0; i < n; i++)
            work_large(r + i);
    }

private:
    unsigned P_;
};
#endif

// Thread-per-request (Jendersie et al., Fig. 5): P - 1 new threads, the caller runs one task.
class TprRunner : public Runner {
public:
    explicit TprRunner(unsigned P) : P_(P), th_(P) {}
    void call(double *r) override {
        for (unsigned i = 1; i < P_; i++)
            if (pthread_create(&th_[i], nullptr, run, r + i) != 0) {
                std::fprintf(stderr, "bench_peers: pthread_create failed\n");
                std::exit(1);
            }
        work_large(r);
        for (unsigned i = 1; i < P_; i++)
            pthread_join(th_[i], nullptr);
    }

private:
    static void *run(void *a) {
        work_large(a);
        return nullptr;
    }
    unsigned P_;
    std::vector<pthread_t> th_;
};

std::unique_ptr<Runner> make_runner(const std::string &name, unsigned P) {
    if (name == "crew")
        return std::make_unique<CrewRunner>(P, CrewRunner::wait_all);
    if (name == "crew-tasks-wait")
        return std::make_unique<CrewRunner>(P, CrewRunner::tasks_wait);
    if (name == "crew-nohelp")
        return std::make_unique<CrewRunner>(P, CrewRunner::nohelp);
    if (name == "crew-p-1")
        return std::make_unique<CrewRunner>(P, CrewRunner::p_minus_1);
    if (name == "crew-spin")
        return std::make_unique<CrewRunner>(P, CrewRunner::spin);
    if (name == "crew-spin64")
        return std::make_unique<CrewRunner>(P, CrewRunner::spin64);
    if (name == "crew-spin0")
        return std::make_unique<CrewRunner>(P, CrewRunner::spin0);
#ifdef CREW_HAVE_TBB
    if (name == "onetbb")
        return std::make_unique<TbbRunner>(P, 0);
    if (name == "onetbb-p+1")
        return std::make_unique<TbbRunner>(P, 1);
#endif
#ifdef CREW_HAVE_OPENMP
    if (name == "openmp")
        return std::make_unique<OmpRunner>(P);
#endif
    if (name == "thread/task")
        return std::make_unique<TprRunner>(P);
    return nullptr;
}

// The burst's own variants, which the other workloads do not know (crew-tasks-wait, a burst
// variant too, is also a peer of the others: skynet through crew_enqueue_tasks_wait).
bool only(const std::string &name) {
    return name == "crew-nohelp" || name == "crew-p-1" ||
           name == "crew-spin" || name == "crew-spin64" || name == "crew-spin0" ||
           name == "onetbb-p+1";
}

// Runs the burst for every P and every peer that has a runner, `repeats` times interleaved,
// and prints per P: us per call (median, min..max), and context switches and CPU time (all
// threads) per call (medians).
int run(const std::vector<std::string> &peers, const std::vector<unsigned> &sizes, int repeats,
        FILE *csv, FILE *sum) {
#ifdef CREW_HAVE_TBB
    unsigned most = *std::max_element(sizes.begin(), sizes.end());
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, most + 1);
#endif
    std::vector<double> expect(64);
    for (size_t i = 0; i < expect.size(); i++) {
        expect[i] = double(i + 1);
        compute(&expect[i]);
    }
    std::printf("\nburst: %d calls, each P tasks of work_large (%ld exp() calls) on a pool of P "
                "threads, then a wait (us/call; per call, the process's context switches "
                "and CPU time)\n",
                kCalls, kExpCalls);
    for (unsigned P : sizes) {
        std::vector<std::pair<std::string, std::unique_ptr<Runner>>> live;
        for (auto &n : peers) {
            auto r = make_runner(n, P);
            if (r)
                live.emplace_back(n, std::move(r));
        }
        std::map<std::string, std::vector<double>> us, csw, cpu;
        // Per call (us): its length; from its start, the second task's start, the last start
        // and the last end; and from the last end to the call's return.
        std::map<std::string, std::vector<double>> one, second, last_start, last_end, ret;
        std::vector<double> res(P);
        g_base = res.data();
        for (auto &l : live) { // warm-up: threads started, stacks touched
            for (unsigned i = 0; i < P; i++)
                res[i] = double(i + 1);
            l.second->call(res.data());
        }
        for (int rep = 0; rep < repeats; rep++)
            for (auto &l : live) {
                bool wrong = false;
                Timed r = timed([&] {
                    for (int c = 0; c < kCalls && !wrong; c++) {
                        for (unsigned i = 0; i < P; i++)
                            res[i] = double(i + 1);
                        int64_t c0 = now_ns();
                        l.second->call(res.data());
                        int64_t c1 = now_ns();
                        std::vector<int64_t> st(g_start, g_start + P);
                        std::sort(st.begin(), st.end());
                        int64_t end = *std::max_element(g_end, g_end + P);
                        one[l.first].push_back(double(c1 - c0) * 1e-3);
                        second[l.first].push_back(double(st[P > 1 ? 1 : 0] - c0) * 1e-3);
                        last_start[l.first].push_back(double(st[P - 1] - c0) * 1e-3);
                        last_end[l.first].push_back(double(end - c0) * 1e-3);
                        ret[l.first].push_back(double(c1 - end) * 1e-3);
                        for (unsigned i = 0; i < P; i++)
                            wrong |= res[i] != expect[i];
                    }
                });
                if (wrong) {
                    std::fprintf(stderr, "bench_peers: burst %s P=%u: wrong result\n",
                                 l.first.c_str(), P);
                    return 1;
                }
                us[l.first].push_back(r.s * 1e6 / kCalls);
                csw[l.first].push_back(r.csw / kCalls);
                cpu[l.first].push_back(r.cpu * 1e6 / kCalls);
                if (csv)
                    std::fprintf(csv, "burst-P%u,%s,%d,%.6f,%.6f\n", P, l.first.c_str(), rep,
                                 r.s, r.s * 1e6 / kCalls);
            }
        std::printf("\nburst P=%u (us/call)\n%-16s %14s %30s %8s %10s %12s\n", P, "peer",
                    "median", "(min..max)", "ratio", "csw/call", "cpu us/call");
        double ref = us.count("crew") ? stat(us["crew"]).median : 0;
        for (auto &l : live) {
            Stat s = stat(us[l.first]);
            std::printf("%-16s %14.1f   (%12.1f..%12.1f) %8.2f %10.1f %12.1f\n",
                        l.first.c_str(), s.median, s.min, s.max, ref > 0 ? s.median / ref : 0,
                        stat(csw[l.first]).median, stat(cpu[l.first]).median);
        }
        auto best = best_other(live, us);
        for (auto &n : peers)
            if (!us.count(n))
                std::printf("%-16s %14s\n", n.c_str(), "n/a (no burst runner)");
        std::printf("per call, medians over all calls (us): the call; from its start, the second "
                    "task's start, the last start, the last end; the last end to the return\n");
        for (auto &l : live)
            std::printf("%-16s %10.1f %10.1f %10.1f %10.1f %10.1f\n", l.first.c_str(),
                        stat(one[l.first]).median, stat(second[l.first]).median,
                        stat(last_start[l.first]).median, stat(last_end[l.first]).median,
                        stat(ret[l.first]).median);
        if (sum && ref > 0 && !best.first.empty())
            summary_row(sum, "burst P=" + std::to_string(P) + ", " + std::to_string(kCalls) +
                                 " calls",
                        ref, "us/call", best.first, best.second, best.second / ref);
        std::fflush(stdout);
    }
    return 0;
}

} // namespace burst

// ------------------------------------------------------------------------------------------
// The bounded queue (-w bounded; not with -t): the shape of zstd's multi-threaded compression
// when its own pool is replaced. A pool of W threads (-W, default 4x the cores: more workers than
// CPUs) whose queue holds C jobs that have not started (-C, default 1: fewer places than
// workers); one producer offers J jobs (-J) of about L us of CPU work each (-L, default 500: a
// chain of LCG steps, no sleep), each first with a try-add and, when the queue is full, again
// with a blocking add that sleeps until a place frees (zstd's POOL_tryAdd, then POOL_add); then
// it waits for all. Every job must run exactly once. crew (and its strategies) get
// crew_config.queue_capacity = C under CREW_FULL_BLOCK (crew_try_submit, then crew_submit); the
// textbook pool the same semantics by hand: a FIFO of at most C jobs under its mutex, a
// condition variable for work and one for room, signalled once per job taken.
// ------------------------------------------------------------------------------------------
namespace bq {

// LCG steps per microsecond of one job, as measured on the 2-core machine of docs/benchmarks.md
// (a fixed count, so that separate runs and builds do the same work; main prints what a job
// takes here).
constexpr long kStepsPerUs = 900;

struct Job {
    uint64_t seed, out;
    long steps;
    std::atomic<int> runs{0};
};

void job_fn(void *a) {
    auto *j = static_cast<Job *>(a);
    uint64_t v = j->seed;
    for (long i = 0; i < j->steps; i++)
        v = v * 6364136223846793005ull + 1442695040888963407ull;
    j->out = v;
    j->runs.fetch_add(1, std::memory_order_relaxed);
}

// One pool with a bounded queue: try_add (false: full), add (waits for room), wait_all.
struct Queue {
    virtual ~Queue() = default;
    virtual bool try_add(Job *j) = 0;
    virtual void add(Job *j) = 0;
    virtual void wait_all() = 0;
};

class CrewQueue : public Queue {
    crew_pool *p_ = nullptr;

public:
    CrewQueue(unsigned workers, unsigned capacity, unsigned sched, unsigned spin) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = workers;
        cfg.scheduler = sched;
        cfg.queue_capacity = capacity;
        cfg.full_policy = CREW_FULL_BLOCK;
        cfg.spin = spin;
        check(crew_create(&p_, &cfg), "crew_create (bounded)");
    }
    ~CrewQueue() override { crew_destroy(p_); }
    bool try_add(Job *j) override {
        int rc = crew_try_submit(p_, job_fn, j, 0, nullptr);
        if (rc == CREW_EFULL)
            return false;
        check(rc, "crew_try_submit");
        return true;
    }
    void add(Job *j) override { check(crew_submit(p_, job_fn, j, 0, nullptr), "crew_submit"); }
    void wait_all() override { check(crew_wait_all(p_), "crew_wait_all"); }
};

class TextbookQueue : public Queue, private TextbookThreads<TextbookQueue, Job> {
    friend class TextbookThreads<TextbookQueue, Job>;
    std::condition_variable room_, idle_;
    size_t cap_;
    long busy_ = 0; // queued or running

    void ran(Job *j) {
        room_.notify_one(); // one place freed: one producer may use it
        job_fn(j);
        std::lock_guard<std::mutex> g(m_);
        if (--busy_ == 0)
            idle_.notify_all();
    }
    void push(Job *j) { // m_ held, room checked
        q_.push_back(j);
        busy_++;
    }

public:
    TextbookQueue(unsigned workers, unsigned capacity) : cap_(capacity) { start(workers); }
    ~TextbookQueue() override { stop(); }
    bool try_add(Job *j) override {
        {
            std::lock_guard<std::mutex> g(m_);
            if (q_.size() >= cap_)
                return false;
            push(j);
        }
        work_.notify_one();
        return true;
    }
    void add(Job *j) override {
        {
            std::unique_lock<std::mutex> g(m_);
            room_.wait(g, [&] { return q_.size() < cap_; });
            push(j);
        }
        work_.notify_one();
    }
    void wait_all() override {
        std::unique_lock<std::mutex> g(m_);
        idle_.wait(g, [&] { return busy_ == 0; });
    }
};

std::unique_ptr<Queue> make_queue(const std::string &name, unsigned workers, unsigned capacity) {
    static const std::map<std::string, unsigned> crews = {
        {"crew", CREW_SCHED_DEFAULT},          {"crew-steal", CREW_SCHED_STEAL},
        {"crew-shared", CREW_SCHED_SHARED},    {"crew-lockfree", CREW_SCHED_SHARED_LOCKFREE},
        {"crew-per-worker", CREW_SCHED_PER_WORKER}};
    auto c = crews.find(name);
    if (c != crews.end())
        return std::make_unique<CrewQueue>(workers, capacity, c->second, CREW_SPIN_AUTO);
    if (name == "crew-spin64" || name == "crew-spin0")
        return std::make_unique<CrewQueue>(workers, capacity, CREW_SCHED_DEFAULT,
                                           name == "crew-spin64" ? 64 : 0);
    if (name == "textbook")
        return std::make_unique<TextbookQueue>(workers, capacity);
    return nullptr;
}

// Seconds of one job alone on this thread (the median of 9), to print what -L gives here.
double job_seconds(long steps) {
    std::vector<double> v;
    for (int i = 0; i < 9; i++) {
        Job j;
        j.seed = uint64_t(i), j.steps = steps;
        double t = now();
        job_fn(&j);
        v.push_back(now() - t);
    }
    return stat(v).median;
}

// Runs the shape for every peer that has a bounded queue, `repeats` times interleaved; prints
// per peer the milliseconds of a run (median, min..max), the ratio to crew, and per job the
// process's context switches, its CPU time and the share of jobs whose try-add found no room.
int run(const std::vector<std::string> &peers, unsigned workers, unsigned capacity, long jobs,
        long job_us, int repeats, FILE *csv, FILE *sum) {
    const long steps = job_us * kStepsPerUs;
    std::vector<std::pair<std::string, std::unique_ptr<Queue>>> live;
    for (auto &n : peers) {
        auto q = make_queue(n, workers, capacity);
        if (q)
            live.emplace_back(n, std::move(q));
    }
    std::printf("\nbounded: %ld jobs of ~%ld us (%.0f us measured alone) from one producer "
                "(try-add, then a blocking add) into a queue of %u places on a pool of %u "
                "threads, then a wait (ms; per job: the process's context switches, the CPU "
                "time of all its threads, the share of try-adds that found no room, the "
                "producer's own sleeps)\n",
                jobs, job_us, job_seconds(steps) * 1e6, capacity, workers);
    std::vector<Job> js(static_cast<size_t>(jobs));
    for (auto &l : live) { // warm-up: threads started, stacks touched
        for (long i = 0; i < std::min(jobs, long(4 * workers)); i++) {
            js[size_t(i)].steps = 1000;
            if (!l.second->try_add(&js[size_t(i)]))
                l.second->add(&js[size_t(i)]);
        }
        l.second->wait_all();
    }
    std::map<std::string, std::vector<double>> ms, csw, cpu, full, psw;
    for (int rep = 0; rep < repeats; rep++)
        for (auto &l : live) {
            for (long i = 0; i < jobs; i++) {
                Job &j = js[size_t(i)];
                j.seed = uint64_t(i * 31 + rep), j.out = 0, j.steps = steps;
                j.runs.store(0, std::memory_order_relaxed);
            }
            rusage p0, p1; // the producer's own sleeps (voluntary switches)
            long fulls = 0;
            Timed r = timed([&] {
                getrusage(RUSAGE_THREAD, &p0);
                for (long i = 0; i < jobs; i++)
                    if (!l.second->try_add(&js[size_t(i)])) {
                        fulls++;
                        l.second->add(&js[size_t(i)]);
                    }
                getrusage(RUSAGE_THREAD, &p1);
                l.second->wait_all();
            });
            for (long i = 0; i < jobs; i++)
                if (js[size_t(i)].runs.load(std::memory_order_relaxed) != 1) {
                    std::fprintf(stderr, "bench_peers: bounded %s: job %ld ran %d times\n",
                                 l.first.c_str(), i, js[size_t(i)].runs.load());
                    return 1;
                }
            ms[l.first].push_back(r.s * 1e3);
            csw[l.first].push_back(r.csw / double(jobs));
            cpu[l.first].push_back(r.cpu * 1e6 / double(jobs));
            psw[l.first].push_back(double(p1.ru_nvcsw - p0.ru_nvcsw) / double(jobs));
            full[l.first].push_back(double(fulls) / double(jobs));
            if (csv)
                std::fprintf(csv, "bounded-C%u-W%u,%s,%d,%.6f,%.6f\n", capacity, workers,
                             l.first.c_str(), rep, r.s, r.s * 1e3);
        }
    std::printf("%-16s %14s %30s %8s %10s %12s %10s %10s\n", "peer", "median", "(min..max)",
                "ratio", "csw/job", "cpu us/job", "full/job", "prod/job");
    double ref = ms.count("crew") ? stat(ms["crew"]).median
                 : live.empty()   ? 0
                                  : stat(ms[live.front().first]).median;
    for (auto &l : live) {
        Stat s = stat(ms[l.first]);
        std::printf("%-16s %14.4g   (%12.4g..%12.4g) %8.2f %10.2f %12.1f %10.2f %10.2f\n",
                    l.first.c_str(), s.median, s.min, s.max, ref > 0 ? s.median / ref : 0,
                    stat(csw[l.first]).median, stat(cpu[l.first]).median,
                    stat(full[l.first]).median, stat(psw[l.first]).median);
    }
    auto best = best_other(live, ms);
    for (auto &n : peers)
        if (!ms.count(n) && !burst::only(n))
            std::printf("%-16s %14s\n", n.c_str(), "n/a (no bounded queue)");
    if (sum && ref > 0 && !best.first.empty())
        summary_row(sum,
                    "bounded queue C=" + std::to_string(capacity) + ", " +
                        std::to_string(workers) + " threads, " + std::to_string(jobs) +
                        " jobs of " + std::to_string(job_us) + " us",
                    ref, "ms", best.first, best.second, best.second / ref);
    std::fflush(stdout);
    return 0;
}

} // namespace bq

std::unique_ptr<Peer> make_peer(const std::string &name) {
    if (name == "crew")
        return std::make_unique<CrewPeer>();
    if (name == "crew-steal")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_STEAL);
    if (name == "crew-shared")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_SHARED);
    if (name == "crew-shared-spin")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_SHARED, CREW_LOCK_SPIN);
    if (name == "crew-lockfree")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_SHARED_LOCKFREE);
    if (name == "crew-per-worker")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_PER_WORKER);
    if (name == "crew-lane")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_DEFAULT, CREW_LOCK_MUTEX,
                                          EmptyVia::lane);
    if (name == "crew-group")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_DEFAULT, CREW_LOCK_MUTEX,
                                          EmptyVia::group);
    if (name == "crew-notify")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_DEFAULT, CREW_LOCK_MUTEX,
                                          EmptyVia::notify);
#ifdef CREW_HAVE_CORO
    if (name == "crew-coro")
        return std::make_unique<CoroPeer>();
#endif
    if (name == "crew-enqueue-wait")
        return std::make_unique<CrewPeer>(name);
    if (name == "crew-tasks-wait")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_DEFAULT, CREW_LOCK_MUTEX,
                                          EmptyVia::submit, 0, true);
    if (name == "crew-join" || name == "crew-join-task")
        return std::make_unique<CrewPeer>(name, CREW_SCHED_DEFAULT, CREW_LOCK_MUTEX,
                                          EmptyVia::submit, name == "crew-join" ? 1 : 2);
#ifdef CREW_HAVE_OPENMP
    if (name == "openmp")
        return std::make_unique<OmpPeer>();
#endif
#ifdef CREW_HAVE_TBB
    if (name == "onetbb")
        return std::make_unique<TbbPeer>();
#endif
#ifdef CREW_HAVE_ASIO
    if (name == "boost.asio")
        return std::make_unique<AsioPeer>();
#endif
#ifdef CREW_HAVE_GLIB
    if (name == "glib")
        return std::make_unique<GlibPeer>();
#endif
    if (name == "textbook")
        return std::make_unique<TextbookPeer>();
    if (name == "thread/task")
        return std::make_unique<ThreadPerTaskPeer>();
    return nullptr;
}


} // namespace

int main(int argc, char **argv) {
    std::vector<std::string> workloads = {"empty", "forkjoin", "fib", "matmul", "wakeup",
                                          "skynet", "burst"};
    std::vector<std::string> peers = {"crew",     "openmp",     "onetbb",     "boost.asio",
                                      "glib",     "textbook",   "thread/task"};
#ifdef CREW_HAVE_CORO
    peers.insert(peers.begin() + 1, "crew-coro"); // beside crew's C fib
#endif
    int repeats = 5, fib_n = 30, wake_trials = 100, sky_depth = 6;
    std::vector<unsigned> burst_sizes = {4, 8, 16, 32};
    long empty_n = 1000000, rounds = 20000, matmuls = 500000;
    long bq_jobs = 2000, bq_us = 500;
    unsigned bq_cap = 1, bq_workers = 4 * unsigned(sysconf(_SC_NPROCESSORS_ONLN));
    const char *csv = nullptr, *summary = nullptr;
    g_threads = unsigned(sysconf(_SC_NPROCESSORS_ONLN));
    int opt;
    static const option longopts[] = {{"help", no_argument, nullptr, 'h'}, {}};
    while ((opt = getopt_long(argc, argv, "w:p:r:t:n:R:f:m:D:P:C:W:J:L:c:S:h", longopts, nullptr)) != -1) {
        switch (opt) {
        case 'w': workloads = split(optarg); break;
        case 'p': peers = split(optarg); break;
        case 'r': repeats = std::atoi(optarg); break;
        case 't': g_threads = unsigned(std::atoi(optarg)); break;
        case 'n': empty_n = std::atol(optarg); break;
        case 'R': rounds = std::atol(optarg); break;
        case 'f': fib_n = std::atoi(optarg); break;
        case 'm': matmuls = std::atol(optarg); break;
        case 'D': sky_depth = std::atoi(optarg); break;
        case 'P':
            burst_sizes.clear();
            for (auto &x : split(optarg))
                burst_sizes.push_back(unsigned(std::atoi(x.c_str())));
            break;
        case 'C': bq_cap = unsigned(std::atoi(optarg)); break;
        case 'W': bq_workers = unsigned(std::atoi(optarg)); break;
        case 'J': bq_jobs = std::atol(optarg); break;
        case 'L': bq_us = std::atol(optarg); break;
        case 'c': csv = optarg; break;
        case 'S': summary = optarg; break;
        default:
            std::fprintf(opt == 'h' ? stdout : stderr,
                         "usage: %s [-w empty,forkjoin,fib,matmul,wakeup,skynet,burst,bounded] "
                         "[-p crew,"
                         "openmp,onetbb,boost.asio,glib,textbook,thread/task,crew-steal,"
                         "crew-shared,crew-shared-spin,crew-lockfree,crew-per-worker,crew-lane,"
                         "crew-group,crew-notify,crew-coro,crew-join,crew-join-task,"
                         "crew-enqueue-wait,crew-tasks-wait] [-r repeats] "
                         "[-t threads] [-n empty_tasks] [-R rounds] [-f fib_n] [-m matmuls] "
                         "[-D skynet_depth: 10^D leaves, 6] [-P burst pool sizes: 4,8,16,32] "
                         "[-c out.csv] [-S summary.md]\n"
                         "  burst only: -p crew-tasks-wait,crew-nohelp,crew-p-1,crew-spin,"
                         "crew-spin64,crew-spin0,onetbb-p+1\n"
                         "  bounded (only with -w: not in the default set): one producer, a "
                         "try-add then a blocking add per job, into a queue of -C places (1) "
                         "on a pool of -W threads (4x the cores), -J jobs (2000) of -L us of "
                         "CPU work (500); peers crew, crew-<strategy>, textbook\n"
                         "  -h, --help  this text\n",
                         argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (repeats < 1 || repeats > 1000 || g_threads < 1 || g_threads > 1024 || empty_n < 10 ||
        rounds < 10 || fib_n < 2 || fib_n > 40 || matmuls < 10 || sky_depth < 1 ||
        sky_depth > 8 || bq_cap < 1 || bq_cap > 1000000 || bq_workers < 1 ||
        bq_workers > 1024 || bq_jobs < 1 || bq_jobs > 100000000 || bq_us < 1 ||
        bq_us > 1000000) {
        std::fprintf(stderr, "bench_peers: out of range: -r 1..1000, -t 1..1024, -n/-R/-m >= 10,"
                             " -f 2..40, -D 1..8, -C 1..1000000, -W 1..1024, -J 1..1e8,"
                             " -L 1..1000000\n");
        return 2;
    }
    g_mats.resize(64);
    for (size_t i = 0; i < g_mats.size(); i++)
        for (int r = 0; r < 10; r++)
            for (int c = 0; c < 10; c++)
                g_mats[i].m[r][c] = double((i * 31 + size_t(r) * 7 + size_t(c)) % 17) / 8.0;
    g_mat_out.assign(size_t(matmuls), 0);

    FILE *out = csv ? std::fopen(csv, "w") : nullptr;
    if (csv && !out) {
        std::perror(csv);
        return 1;
    }
    if (out)
        std::fprintf(out, "workload,peer,run,seconds,metric\n");
    FILE *sum = summary ? std::fopen(summary, "w") : nullptr;
    if (summary && !sum) {
        std::perror(summary);
        return 1;
    }
    if (sum)
        std::fprintf(sum, "| workload | crew | best peer | its figure | crew / best |\n"
                          "|---|---|---|---|---|\n");
    std::printf("%u worker threads, %d runs each, medians with (min..max); ratio > 1 means crew "
                "(or the first crew strategy listed) is ahead (peer time / crew time, or crew rate "
                "/ peer rate)\n",
                g_threads, repeats);

    // The burst first, before the other peers exist (oneTBB's global_control of a live
    // TbbPeer would cap the burst's arenas at -t threads).
    auto bw = std::find(workloads.begin(), workloads.end(), "burst");
    if (bw != workloads.end()) {
        for (unsigned P : burst_sizes)
            if (P < 1 || P > 64) {
                std::fprintf(stderr, "bench_peers: -P sizes must be 1..64, got %u\n", P);
                return 2;
            }
        if (burst::run(peers, burst_sizes, repeats, out, sum) != 0)
            return 1;
        workloads.erase(bw);
    }
    auto qw = std::find(workloads.begin(), workloads.end(), "bounded");
    if (qw != workloads.end()) {
        if (bq::run(peers, bq_workers, bq_cap, bq_jobs, bq_us, repeats, out, sum) != 0)
            return 1;
        workloads.erase(qw);
    }
    std::vector<std::unique_ptr<Peer>> live;
    for (auto &n : peers) {
        auto p = make_peer(n);
        if (p)
            live.push_back(std::move(p));
        else if (!burst::only(n))
            std::printf("note: peer %s is not available in this build (package absent?)\n",
                        n.c_str());
    }

    long sky_tasks = 0; // 1 + 10 + ... + 10^D
    for (int i = 0; i <= sky_depth; i++)
        sky_tasks += skynet_leaves(i);
    for (auto &w : workloads) {
        std::map<std::string, std::vector<double>> metric; // tasks/s, us/round or s
        std::map<std::string, std::vector<double>> wake_all; // wakeup: every trial's latency
        const long expect_fib = fib_seq(fib_n);
        for (int r = 0; r < repeats; r++)
            for (auto &p : live) {
                settle();
                double s = -1, m = 0;
                if (w == "empty") {
                    s = p->empty(empty_n);
                    m = empty_n * p->scale() / s;
                } else if (w == "forkjoin") {
                    s = p->forkjoin(rounds);
                    m = s * 1e6 / (rounds * p->scale());
                } else if (w == "fib") {
                    long res = 0;
                    s = p->fib(fib_n, &res);
                    if (s >= 0 && res != expect_fib) {
                        std::fprintf(stderr, "bench_peers: %s fib(%d) = %ld, expected %ld\n",
                                     p->name(), fib_n, res, expect_fib);
                        return 1;
                    }
                    m = s;
                } else if (w == "skynet") {
                    long res = 0;
                    const long leaves = skynet_leaves(sky_depth);
                    s = p->skynet(sky_depth, &res);
                    if (s >= 0 && res != leaves * (leaves - 1) / 2) {
                        std::fprintf(stderr,
                                     "bench_peers: %s skynet(depth %d) = %ld, expected %ld\n",
                                     p->name(), sky_depth, res, leaves * (leaves - 1) / 2);
                        return 1;
                    }
                    m = s;
                } else if (w == "matmul") {
                    s = p->matmul(matmuls);
                    m = s / p->scale();
                } else if (w == "wakeup") {
                    g_wake_last.clear();
                    s = p->wakeup(wake_trials);
                    m = s * 1e6;
                    auto &all = wake_all[p->name()];
                    all.insert(all.end(), g_wake_last.begin(), g_wake_last.end());
                } else {
                    std::fprintf(stderr, "bench_peers: unknown workload %s\n", w.c_str());
                    return 2;
                }
                if (s < 0)
                    continue;
                metric[p->name()].push_back(m);
                if (out)
                    std::fprintf(out, "%s,%s,%d,%.6f,%.6f\n", w.c_str(), p->name(), r, s, m);
            }
        const bool rate = w == "empty";
        const char *unit = w == "empty"      ? "tasks/s"
                           : w == "forkjoin" ? "us/round"
                           : w == "wakeup"   ? "us, median"
                                             : "s";
        std::string what = w == "empty"      ? std::to_string(empty_n) + " empty tasks"
                           : w == "forkjoin" ? std::to_string(rounds) + " fork-join rounds"
                           : w == "fib"      ? "fib(" + std::to_string(fib_n) + ")"
                           : w == "skynet"   ? "skynet, " + std::to_string(sky_tasks) + " tasks"
                           : w == "wakeup"   ? "wake-up latency of one task into an idle pool"
                                             : std::to_string(matmuls) + " 10x10 matmuls";
        std::printf("\n%s (%s)\n%-16s %14s %30s %8s\n", what.c_str(), unit, "peer", "median",
                    "(min..max)", "ratio");
        // Ratios are against "crew", or else against the first crew strategy in the list.
        std::string ref = "crew";
        for (auto &p : live)
            if (!metric.count(ref) && std::string(p->name()).rfind("crew", 0) == 0 &&
                metric.count(p->name()))
                ref = p->name();
        double crew_med = metric.count(ref) ? stat(metric[ref]).median : 0;
        if (sum && crew_med > 0) { /* the best peer other than crew, and where crew stands */
            std::string best_name;
            double best = 0;
            for (auto &kv : metric) {
                double m = stat(kv.second).median;
                bool is_crew = kv.first.rfind("crew", 0) == 0; // crew and its strategies
                if (!is_crew && (best_name.empty() || (rate ? m > best : m < best))) {
                    best = m;
                    best_name = kv.first;
                }
            }
            if (!best_name.empty())
                summary_row(sum, what, crew_med, unit, best_name, best,
                            rate ? crew_med / best : best / crew_med);
        }
        for (auto &p : live) {
            auto it = metric.find(p->name());
            if (it == metric.end()) {
                std::printf("%-16s %14s\n", p->name(), p->not_run(w));
                continue;
            }
            Stat s = stat(it->second);
            double ratio = crew_med == 0 ? 0 : rate ? crew_med / s.median : s.median / crew_med;
            bool scaled = p->scale() < 1 && w != "wakeup";
            std::printf("%-16s %14.4g   (%12.4g..%12.4g) %8.2f%s\n", p->name(), s.median, s.min,
                        s.max, ratio, scaled ? "  (1/10 of the tasks, scaled)" : "");
        }
        for (auto &kv : wake_all) { // the tail, over every run's trials together
            std::vector<double> &v = kv.second;
            if (v.empty())
                continue;
            std::sort(v.begin(), v.end());
            std::printf("%-16s p99 %.4g us, max %.4g us (of %zu trials)\n", kv.first.c_str(),
                        v[(v.size() * 99) / 100] * 1e6, v.back() * 1e6, v.size());
        }
        std::fflush(stdout);
    }
    if (out)
        std::fclose(out);
    if (sum)
        std::fclose(sum);
    return 0;
}
