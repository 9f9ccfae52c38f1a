// test_resize.cpp -- lazy resizing: under load, the bound on workers starting tasks after a
// shrink, reviving marked workers, and thread counts settling.
#include <gtest/gtest.h>

#include <atomic>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

// The checked library's hook (src/worker.c): each task a worker takes, before it checks whether
// resize marked it.
extern "C" void (*crew__test_after_take)(crew_task *t);

namespace {

// Threads alive now whose name starts with prefix.
int live_workers(const char *prefix) {
    int n = 0;
    for (auto &s : crewtest::thread_names())
        n += s.rfind(prefix, 0) == 0;
    return n;
}

crew_pool *named_pool(unsigned threads, const char *name) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.name = name;
    crew_pool *p = nullptr;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_OK);
    return p;
}

} // namespace

TEST(Resize, UpAndDownInALoopUnderLoad) {
    crew_pool *p = make_pool(4);
    const long total = scaled(300000);
    std::unique_ptr<std::atomic<uint8_t>[]> runs(new std::atomic<uint8_t>[total]());
    std::atomic<bool> done{false};
    std::thread producer([&] {
        for (long i = 0; i < total; i++)
            ASSERT_EQ(crew_submit(
                          p, [](void *a) { static_cast<std::atomic<uint8_t> *>(a)->fetch_add(1); },
                          &runs[i], uint32_t(i % 4), nullptr),
                      CREW_OK);
        done = true;
    });
    std::mt19937 rng(7);
    int resizes = 0;
    while (!done || resizes < 50) {
        unsigned n = 1 + rng() % 8;
        ASSERT_EQ(crew_resize(p, n), CREW_OK);
        ASSERT_EQ(crew_size(p), n);
        resizes++;
        if (resizes % 10 == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    producer.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    long wrong = 0;
    for (long i = 0; i < total; i++)
        wrong += runs[i].load() != 1;
    EXPECT_EQ(wrong, 0);
    crew_destroy(p);
}

TEST(Resize, AfterShrinkAtMostNWorkersStartTasks) {
    crew_pool *p = make_pool(4);
    Gate gate;
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(4); // all four workers are inside a task
    ASSERT_EQ(crew_resize(p, 1), CREW_OK);
    struct Conc {
        std::atomic<int> now{0}, max{0}, done{0};
    } c;
    const int n = 2000;
    for (int i = 0; i < n; i++)
        ASSERT_EQ(crew_submit(
                      p,
                      [](void *a) {
                          auto *c = static_cast<Conc *>(a);
                          int v = c->now.fetch_add(1) + 1;
                          int m = c->max.load();
                          while (v > m && !c->max.compare_exchange_weak(m, v)) {
                          }
                          std::this_thread::yield();
                          c->now.fetch_sub(1);
                          c->done.fetch_add(1);
                      },
                      &c, 0, nullptr),
                  CREW_OK);
    gate.open();
    while (c.done.load() < n) // wait without helping: only workers run tasks
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(c.max.load(), 1);
    crew_destroy(p);
}

TEST(Resize, ThreadsSettleAtTheRequestedSize) {
    crew_pool *p = named_pool(2, "rsz");
    auto settle = [&](int want) {
        for (int i = 0; i < 2000 && live_workers("rsz-") != want; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return live_workers("rsz-");
    };
    EXPECT_EQ(settle(2), 2);
    ASSERT_EQ(crew_resize(p, 6), CREW_OK);
    EXPECT_EQ(settle(6), 6);
    ASSERT_EQ(crew_resize(p, 3), CREW_OK);
    EXPECT_EQ(settle(3), 3);
    ASSERT_EQ(crew_resize(p, 1), CREW_OK);
    ASSERT_EQ(crew_resize(p, 5), CREW_OK); // revives marked workers, starts the rest
    EXPECT_EQ(settle(5), 5);
    std::atomic<int> n{0};
    for (int i = 0; i < 1000; i++)
        crew_submit(p, [](void *a) { static_cast<std::atomic<int> *>(a)->fetch_add(1); }, &n, 0,
                    nullptr);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), 1000);
    crew_destroy(p);
    EXPECT_EQ(live_workers("rsz-"), 0);
}

TEST(Resize, GrowingRevivesMarkedWorkersInsteadOfStartingNewOnes) {
    crew_pool *p = named_pool(4, "rev");
    Gate gate;
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(4);
    ASSERT_EQ(crew_resize(p, 1), CREW_OK); // marks three busy workers
    ASSERT_EQ(crew_resize(p, 4), CREW_OK); // revives them: no new thread is needed
    EXPECT_EQ(live_workers("rev-"), 4);
    gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(live_workers("rev-"), 4);
    crew_destroy(p);
}

// A waiter that may take only its own group's tasks (here: at the helping depth bound) is woken
// when a worker that resize marked puts back the group's task it had just taken. Worker 0 nests
// spawn-and-wait 8 deep, submits T into a new group G there, and once worker 1 holds T (the hook
// keeps it between its take and its check for a mark) the pool shrinks to one worker, then
// worker 0 waits for G: T is in no queue, so it sleeps. Worker 1 puts T back and leaves; the
// put-back must wake worker 0 (it named no group before, and the wait never ended).
namespace {
struct Nest {
    crew_pool *p;
    int t_marker;
    std::atomic<bool> grow{false}, taken{false}, shrunk{false}, t_ran{false};
    std::atomic<int> rc{-1};
};
Nest *g_nest;

void nest_t(void *a) { static_cast<Nest *>(a)->t_ran = true; }
void after_take(crew_task *t) {
    if (g_nest && t->arg == g_nest && t->fn == nest_t) {
        g_nest->taken = true;
        while (!g_nest->shrunk) // the window: taken, its mark not yet checked
            std::this_thread::yield();
    }
}
void nest(void *a) {
    auto level = reinterpret_cast<intptr_t>(a);
    Nest *n = g_nest;
    crew_handle g = CREW_HANDLE_NONE;
    if (level < 8) {
        crew_submit(n->p, nest, reinterpret_cast<void *>(level + 1), 0, &g);
        crew_wait(n->p, g); // one worker so far: it runs the next level itself
        return;
    }
    crew_submit(n->p, nest_t, n, 0, &g);
    n->grow = true; // a second worker starts and takes T
    while (!n->taken)
        std::this_thread::yield();
    n->rc = crew_wait(n->p, g); // depth 8: only G's tasks
}
} // namespace

TEST(Resize, TaskPutBackByAMarkedWorkerWakesItsGroupsWaiter) {
    if (crewtest::scheduler() == "per-worker")
        GTEST_SKIP() << "per-worker queues: the second worker cannot take the first one's task";
    Nest n;
    g_nest = &n;
    crew__test_after_take = after_take;
    crew_pool *p = make_pool(1);
    n.p = p;
    ASSERT_EQ(crew_submit(p, nest, reinterpret_cast<void *>(1), 0, nullptr), CREW_OK);
    while (!n.grow)
        std::this_thread::yield();
    ASSERT_EQ(crew_resize(p, 2), CREW_OK);
    while (!n.taken)
        std::this_thread::yield();
    ASSERT_EQ(crew_resize(p, 1), CREW_OK); // marks worker 1, which holds T
    n.shrunk = true;
    // This thread must not help (it would run T itself): it only watches. A minute is a hang.
    auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (n.rc == -1 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_NE(n.rc.load(), -1) << "the depth-8 waiter never woke: T put back, nobody told";
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.rc.load(), CREW_OK);
    EXPECT_TRUE(n.t_ran.load());
    crew__test_after_take = nullptr;
    g_nest = nullptr;
    crew_destroy(p);
}
