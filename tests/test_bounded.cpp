// test_bounded.cpp -- the bounded queue (crew_config.queue_capacity) and its full-queue
// policies: block, fail, run in the caller, drop the oldest; crew_try_submit, crew_submit_timed,
// shutdown waking blocked submitters, and exactly-once under load.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;

namespace {

crew_pool *make_bounded(unsigned threads, unsigned capacity, unsigned policy) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.queue_capacity = capacity;
    cfg.full_policy = policy;
    return crewtest::make_pool(cfg);
}

void bump(void *a) { ++*static_cast<std::atomic<int> *>(a); }

// One worker held by a gate: what is submitted next stays queued.
struct Held {
    Gate gate;
    explicit Held(crew_pool *p) {
        EXPECT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
        gate.wait_arrivals(1);
    }
};

} // namespace

TEST(Bounded, FailPolicyRefusesWhenFull) {
    crew_pool *p = make_bounded(1, 4, CREW_FULL_FAIL);
    Held held(p);
    std::atomic<int> runs{0};
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_EFULL);
    EXPECT_EQ(crew_try_submit(p, bump, &runs, 0, nullptr), CREW_EFULL);
    std::vector<crew_task> t(5);
    for (auto &x : t)
        x.fn = bump, x.arg = &runs;
    EXPECT_EQ(crew_enqueue_tasks(p, t.data(), 5, nullptr), CREW_EFULL); // more than the capacity
    held.gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 4);
    // Room again once they started.
    EXPECT_EQ(crew_try_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 5);
    crew_destroy(p);
}

TEST(Bounded, BlockPolicyWaitsForRoom) {
    crew_pool *p = make_bounded(1, 2, CREW_FULL_BLOCK);
    Held held(p);
    std::atomic<int> runs{0};
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    std::atomic<int> rc{1};
    std::thread producer([&] { rc = crew_submit(p, bump, &runs, 0, nullptr); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(rc.load(), 1); // still waiting: the queue is full
    EXPECT_EQ(crew_try_submit(p, bump, &runs, 0, nullptr), CREW_EFULL);
    held.gate.open();
    producer.join();
    EXPECT_EQ(rc.load(), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 3);
    crew_destroy(p);
}

TEST(Bounded, TimedSubmitGivesUp) {
    crew_pool *p = make_bounded(1, 1, CREW_FULL_BLOCK);
    Held held(p);
    std::atomic<int> runs{0};
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(crew_submit_timed(p, bump, &runs, 0, nullptr, 30), CREW_ETIMEDOUT);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(30));
    held.gate.open();
    EXPECT_EQ(crew_submit_timed(p, bump, &runs, 0, nullptr, 10000), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 2);
    crew_destroy(p);
}

TEST(Bounded, ShutdownWakesBlockedSubmitters) {
    crew_pool *p = make_bounded(1, 1, CREW_FULL_BLOCK);
    Held held(p);
    std::atomic<int> runs{0};
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    std::atomic<int> rc{1};
    std::thread producer([&] { rc = crew_submit(p, bump, &runs, 0, nullptr); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::thread closer([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
    producer.join(); // returns although the worker is still held
    EXPECT_EQ(rc.load(), CREW_ESHUTDOWN);
    held.gate.open();
    closer.join();
    EXPECT_EQ(runs.load(), 0); // the queued one was cancelled, the refused one never accepted
    crew_destroy(p);
}

TEST(Bounded, CallerRunsPolicyRunsInTheSubmitter) {
    crew_pool *p = make_bounded(1, 1, CREW_FULL_CALLER_RUNS);
    Held held(p);
    std::atomic<int> runs{0};
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK); // fills the queue
    static thread_local int ran_here;
    ran_here = 0;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, [](void *) { ran_here++; }, nullptr, 0, &g), CREW_OK);
    EXPECT_EQ(ran_here, 1); // ran on this thread, before crew_submit returned
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    held.gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 1);
    crew_destroy(p);
}

TEST(Bounded, DropOldestPolicyReportsTheDrop) {
    crew_pool *p = make_bounded(1, 2, CREW_FULL_DROP_OLDEST);
    ASSERT_EQ(crew_set_monitoring(p, 1), CREW_OK);
    Held held(p);
    std::atomic<int> a{0}, b{0}, c{0};
    crew_handle ga = CREW_HANDLE_NONE, gb = CREW_HANDLE_NONE, gc = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, bump, &a, 0, &ga), CREW_OK);
    ASSERT_EQ(crew_submit(p, bump, &b, 0, &gb), CREW_OK);
    ASSERT_EQ(crew_submit(p, bump, &c, 0, &gc), CREW_OK); // full: a, the oldest, is dropped
    held.gate.open();
    EXPECT_EQ(crew_wait(p, gc), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK); // the drop is the group's to report, not the pool's
    EXPECT_EQ(c.load(), 1);
    if (crewtest::strict_priority()) { // strict order: the oldest is a
        EXPECT_EQ(crew_wait(p, ga), CREW_ECANCELED);
        EXPECT_EQ(crew_wait(p, gb), CREW_OK);
        EXPECT_EQ(a.load(), 0);
        EXPECT_EQ(b.load(), 1);
    } else { // the MultiQueue's relaxed order: one of the two queued before c
        EXPECT_EQ(a.load() + b.load(), 1);
        EXPECT_EQ(crew_wait(p, a.load() ? gb : ga), CREW_ECANCELED);
        EXPECT_EQ(crew_wait(p, a.load() ? ga : gb), CREW_OK);
    }
    crew_stats s;
    s.size = sizeof s;
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(s.cancelled, 1u);
    crew_destroy(p);
}

// crew_wait_all answers CREW_ECANCELED once a cancelling shutdown has dropped tasks (crew.h), not
// for the drops of a full queue's CREW_FULL_DROP_OLDEST: those are the configured policy's, and
// are reported to the dropped task's group, to on_drop and in crew_stats. (It used to answer
// CREW_ECANCELED for ever after one such drop.)
static std::atomic<int> drop_oldest_drops{0};
static void count_drop(crew_fn, void *, void *) { drop_oldest_drops++; }

TEST(Bounded, DropOldestDropsDoNotMakeWaitAllFail) {
    crew_hooks hooks{};
    hooks.size = sizeof hooks;
    hooks.on_drop = count_drop;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.queue_capacity = 2;
    cfg.full_policy = CREW_FULL_DROP_OLDEST;
    cfg.hooks = &hooks;
    crew_pool *p = crewtest::make_pool(cfg);
    drop_oldest_drops = 0;
    std::atomic<int> runs{0};
    Held first(p); // lives on: its task may still be leaving the gate when the scope ends
    for (int i = 0; i < 6; i++) // capacity 2: four of them drop the oldest
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    first.gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK); // and it stays so
    EXPECT_EQ(drop_oldest_drops.load(), 4);
    EXPECT_EQ(runs.load(), 2);
    // A cancelling shutdown that drops a queued task: from then on CREW_ECANCELED.
    Held held(p);
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    std::thread closer([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
    while (crew_submit(p, bump, &runs, 0, nullptr) == CREW_OK) // until the shutdown has begun
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    held.gate.open();
    closer.join();
    EXPECT_GE(drop_oldest_drops.load(), 5);
    EXPECT_EQ(crew_wait_all(p), CREW_ECANCELED);
    crew_destroy(p);
}

// Several producers against a small bounded queue: every task runs exactly once, and the queue
// never holds more than its capacity.
TEST(Bounded, ExactlyOnceUnderLoad) {
    const unsigned cap = 8;
    crew_pool *p = make_bounded(2, cap, CREW_FULL_BLOCK);
    const int producers = 4, each = int(crewtest::scaled(20000));
    std::vector<std::atomic<uint8_t>> runs(size_t(producers) * each);
    std::atomic<size_t> max_queued{0};
    std::vector<std::thread> th;
    for (int k = 0; k < producers; k++)
        th.emplace_back([&, k] {
            for (int i = 0; i < each; i++) {
                ASSERT_EQ(crew_submit(
                              p,
                              [](void *a) {
                                  static_cast<std::atomic<uint8_t> *>(a)->fetch_add(1);
                              },
                              &runs[size_t(k) * each + i], 0, nullptr),
                          CREW_OK);
                if (i % 64 == 0) {
                    crew_stats s;
                    s.size = sizeof s;
                    if (crew_stats_get(p, &s) == CREW_OK && s.queued > max_queued)
                        max_queued = s.queued;
                }
            }
        });
    for (auto &t : th)
        t.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    for (auto &r : runs)
        ASSERT_EQ(r.load(), 1);
    EXPECT_LE(max_queued.load(), cap);
    crew_destroy(p);
}

TEST(Bounded, QueuedAndItsPeakNeverExceedTheCapacity) {
    // The queue lengths are summed without a consistent view (a task moving between queues,
    // as a steal does, can count twice); the statistics cap them by the places held.
    const unsigned cap = 4;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 4; // more thieves than cores: steals interleave with the sums
    cfg.queue_capacity = cap;
    cfg.monitoring = 1;
    crew_pool *p = crewtest::make_pool(cfg);
    std::atomic<int> n{0};
    const int producers = 4, each = int(crewtest::scaled(20000));
    std::atomic<uint64_t> max_queued{0};
    std::vector<std::thread> th;
    for (int k = 0; k < producers; k++)
        th.emplace_back([&] {
            for (int i = 0; i < each; i++) {
                ASSERT_EQ(crew_submit(p, bump, &n, 0, nullptr), CREW_OK);
                if (i % 16 == 0) {
                    crew_stats s;
                    s.size = sizeof s;
                    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
                    if (s.queued > max_queued)
                        max_queued = s.queued;
                }
            }
        });
    for (auto &t : th)
        t.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), producers * each);
    crew_stats s;
    s.size = sizeof s;
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_LE(max_queued.load(), cap);
    EXPECT_LE(s.queued_peak, cap);
    EXPECT_GE(s.queued_peak, 1u);
    crew_destroy(p);
}

TEST(Bounded, BadSettings) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.full_policy = 7;
    crew_pool *p = nullptr;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    EXPECT_STREQ(crew_err_name(CREW_EFULL), "EFULL");
    EXPECT_STREQ(crew_err_name(CREW_ETIMEDOUT), "ETIMEDOUT");
}
