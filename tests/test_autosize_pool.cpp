// test_autosize_pool.cpp -- automatic sizing through the public API: bad settings get named
// errors, the start size is clamped, and under CPU-bound and blocking workloads both controllers
// keep the pool within [min, max] (and move it), then shut down cleanly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common.h"

namespace {

crew_config sized(unsigned mode, unsigned min, unsigned max, unsigned threads = 0) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.autosize = mode;
    cfg.min_threads = min;
    cfg.max_threads = max;
    cfg.threads = threads;
    cfg.autosize_period_ms = 20;
    return cfg;
}

std::atomic<int> outstanding{0}; // tasks submitted by drive() and not finished

void spin50us(void *) {
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (std::chrono::steady_clock::now() < until) {
    }
    outstanding--;
}
void sleep1ms(void *) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    outstanding--;
}

// Keep the pool busy with fn for ms milliseconds; return the smallest and largest size seen.
std::pair<unsigned, unsigned> drive(crew_pool *p, crew_fn fn, int ms) {
    unsigned lo = crew_size(p), hi = lo;
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
        while (outstanding.load() < 64) { // a steady backlog, not an ever-growing one
            outstanding++;
            EXPECT_EQ(crew_submit(p, fn, nullptr, 0, nullptr), CREW_OK);
        }
        unsigned s = crew_size(p);
        lo = std::min(lo, s);
        hi = std::max(hi, s);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    return {lo, hi};
}

} // namespace

TEST(Autosize, BadSettingsGetNamedErrors) {
    crew_pool *p = nullptr;
    crew_config cfg = sized(CREW_AUTOSIZE_AIT, 1, 0);
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL); // max = 0
    cfg = sized(CREW_AUTOSIZE_BALANCE, 8, 4);
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL); // min > max
    cfg = sized(7, 1, 4);
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL); // unknown controller
    cfg = sized(CREW_AUTOSIZE_AIT, 1, CREW_MAX_THREADS + 1);
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    EXPECT_EQ(p, nullptr);
    cfg = sized(CREW_AUTOSIZE_OFF, 8, 4); // bounds are ignored when autosize is off
    ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
    crew_destroy(p);
}

TEST(Autosize, StartSizeIsClampedIntoTheBounds) {
    crew_pool *p = nullptr;
    crew_config cfg = sized(CREW_AUTOSIZE_BALANCE, 3, 5, 1);
    ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
    EXPECT_GE(crew_size(p), 3u);
    EXPECT_LE(crew_size(p), 5u);
    crew_destroy(p);
    cfg = sized(CREW_AUTOSIZE_AIT, 1, 2, 9);
    ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
    EXPECT_LE(crew_size(p), 2u);
    crew_destroy(p);
}

class AutosizeBounds : public testing::TestWithParam<unsigned> {};

TEST_P(AutosizeBounds, StaysWithinMinAndMaxAndMoves) {
    crew_pool *p = nullptr;
    crew_config cfg = sized(GetParam(), 2, 6, 2);
    ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
    auto blocking = drive(p, sleep1ms, crewtest::under_valgrind() ? 300 : 600);
    auto cpu = drive(p, spin50us, 300);
    for (auto r : {blocking, cpu}) {
        EXPECT_GE(r.first, 2u);
        EXPECT_LE(r.second, 6u);
    }
#ifndef CREW_SANITIZED
    // Blocked workers and a backlog: both controllers grow. Not asserted under sanitizers or
    // valgrind, whose own CPU use makes the process look CPU-bound to BALANCE.
    if (!crewtest::under_valgrind()) {
        EXPECT_GT(blocking.second, 2u);
    }
#endif
    EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK); // stops the controller too
    EXPECT_EQ(crew_destroy(p), CREW_OK);
}

INSTANTIATE_TEST_SUITE_P(Controllers, AutosizeBounds,
                         testing::Values(unsigned(CREW_AUTOSIZE_AIT),
                                         unsigned(CREW_AUTOSIZE_BALANCE)),
                         [](const testing::TestParamInfo<unsigned> &i) {
                             return i.param == CREW_AUTOSIZE_AIT ? "AIT" : "BALANCE";
                         });

TEST(Autosize, TimingForTheControllerDoesNotCountAsMonitoring) {
    crew_pool *p = nullptr;
    crew_config cfg = sized(CREW_AUTOSIZE_BALANCE, 1, 4);
    ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
    for (int i = 0; i < 100; i++)
        crew_submit(p, [](void *) {}, nullptr, 0, nullptr);
    crew_wait_all(p);
    crew_stats s;
    s.size = sizeof s;
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(s.submitted, 0u);
    EXPECT_EQ(s.completed, 0u);
    crew_destroy(p);
}

// Several crew_shutdown calls at once on a pool whose controller is busy resizing: the
// controller is joined once (thread.c's crew__join_once), every call returns only once it is
// gone, and none sleeps on a lock held across the join.
TEST(Autosize, ConcurrentShutdownsJoinTheControllerOnce) {
    for (int round = 0; round < 5; round++) {
        crew_pool *p = nullptr;
        crew_config cfg = sized(CREW_AUTOSIZE_BALANCE, 1, 8, 2);
        cfg.autosize_period_ms = 1;
        ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
        for (int i = 0; i < 200; i++) {
            outstanding++;
            ASSERT_EQ(crew_submit(p, sleep1ms, nullptr, 0, nullptr), CREW_OK);
        }
        std::atomic<int> done{0};
        auto shut = [&] {
            EXPECT_EQ(crew_shutdown(p, round % 2 ? CREW_CANCEL : CREW_DRAIN), CREW_OK);
            done++;
        };
        std::thread a(shut), b(shut), c(shut);
        a.join();
        b.join();
        c.join();
        EXPECT_EQ(done.load(), 3);
        crew_destroy(p);
        outstanding = 0; // a cancelling shutdown dropped some
    }
}
