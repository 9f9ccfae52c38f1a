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
