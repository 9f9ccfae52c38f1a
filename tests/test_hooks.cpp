// test_hooks.cpp -- crew_config.hooks: on_start / on_stop on every pool thread (workers across
// resizes, blocking threads), on the thread itself and before its first task; CPU affinity; bad
// hooks get CREW_EINVAL; the pool keeps its own copy.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <sched.h>
#include <set>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;
using crewtest::make_pool;

namespace {

struct Record {
    std::mutex m;
    std::multiset<unsigned> started, stopped;
    std::atomic<int> live{0};
};

thread_local unsigned tls_index = ~0u; // set by on_start, read by tasks

void on_start(unsigned index, void *arg) {
    auto *r = static_cast<Record *>(arg);
    tls_index = index;
    std::lock_guard<std::mutex> g(r->m);
    r->started.insert(index);
    r->live++;
}

void on_stop(unsigned index, void *arg) {
    auto *r = static_cast<Record *>(arg);
    EXPECT_EQ(tls_index, index) << "on_stop ran on another thread than on_start";
    std::lock_guard<std::mutex> g(r->m);
    r->stopped.insert(index);
    r->live--;
}

crew_config hooked(unsigned threads, const crew_hooks *h) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.hooks = h;
    return cfg;
}

void record_index(void *arg) { static_cast<std::atomic<unsigned> *>(arg)->store(tls_index); }

TEST(Hooks, EveryThreadStartsAndStopsOnce) {
    Record r;
    crew_hooks h{};
    h.size = sizeof h;
    h.on_start = on_start;
    h.on_stop = on_stop;
    h.arg = &r;
    crew_config cfg = hooked(3, &h);
    crew_pool *p = make_pool(cfg);
    // A task sees what on_start set up on its thread (the hooks run before any task).
    std::atomic<unsigned> seen{~0u - 1};
    ASSERT_EQ(crew_submit(p, record_index, &seen, 0, nullptr), CREW_OK);
    while (seen.load() == ~0u - 1) // no crew_wait_all: this thread must not run it
        std::this_thread::yield();
    EXPECT_LT(seen.load(), 3u);
    // Shrink, then grow: the leaving workers stop, the returning ones start again.
    ASSERT_EQ(crew_resize(p, 1), CREW_OK);
    for (int i = 0; i < 2000 && r.live.load() != 1; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(r.live.load(), 1);
    ASSERT_EQ(crew_resize(p, 3), CREW_OK);
    // A blocking thread gets an index past the workers'.
    std::atomic<unsigned> bseen{~0u};
    ASSERT_EQ(crew_submit_ex(p, record_index, &bseen, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK); // blocking tasks are never run by waiters
    EXPECT_GE(bseen.load(), CREW_MAX_THREADS);
    ASSERT_EQ(crew_destroy(p), CREW_OK);
    EXPECT_EQ(r.live.load(), 0);
    EXPECT_EQ(r.started, r.stopped);
    EXPECT_GE(r.started.count(0), 1u);
    EXPECT_GE(r.started.count(1), 1u);
    EXPECT_GE(r.started.count(2), 1u);
}

TEST(Hooks, NullFunctionsAndOlderSizesAreFine) {
    crew_hooks h{};
    h.size = offsetof(crew_hooks, cpus); // a caller compiled before the CPU list existed
    crew_config cfg = hooked(2, &h);
    crew_pool *p = make_pool(cfg);
    std::atomic<unsigned> seen{0};
    ASSERT_EQ(crew_submit(p, record_index, &seen, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

int first_allowed_cpu() {
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s))
            return c;
    return -1;
}

void record_cpu(void *arg) { static_cast<std::atomic<int> *>(arg)->store(sched_getcpu()); }

TEST(Hooks, AffinityPinsWorkersAndThePoolKeepsItsOwnCopy) {
    int cpu = first_allowed_cpu();
    ASSERT_GE(cpu, 0);
    std::vector<int> cpus{cpu};
    crew_hooks h{};
    h.size = sizeof h;
    h.cpus = cpus.data();
    h.ncpus = cpus.size();
    crew_config cfg = hooked(2, &h);
    crew_pool *p = make_pool(cfg);
    cpus[0] = -1; // the caller's array may change or go once crew_create returns
    h.ncpus = 0;
    ASSERT_EQ(crew_resize(p, 4), CREW_OK); // workers started now use the pool's copy
    for (int i = 0; i < 50; i++) {
        std::atomic<int> where{-2};
        ASSERT_EQ(crew_submit(p, record_cpu, &where, 0, nullptr), CREW_OK);
        // Wait without helping, so a worker (not this thread) runs the task.
        while (where.load() == -2)
            std::this_thread::yield();
        EXPECT_EQ(where.load(), cpu);
    }
    crew_destroy(p);
}

TEST(Hooks, BadHooksGetEinval) {
    crew_pool *p = nullptr;
    crew_hooks h{};
    h.size = 0; // not set
    crew_config cfg = hooked(1, &h);
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    h.size = sizeof h;
    h.ncpus = 1; // cpus NULL
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    int bad[] = {-1};
    h.cpus = bad;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    int huge[] = {1 << 20};
    h.cpus = huge;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    int ok[] = {first_allowed_cpu()};
    h.cpus = ok;
    h.ncpus = 0; // a list without a length
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    EXPECT_EQ(p, nullptr);
}

} // namespace
