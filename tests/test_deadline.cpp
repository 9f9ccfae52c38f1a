// test_deadline.cpp -- crew_submit_deadline: a task no thread has started by its start-by time
// is dropped, never run, and reported (crew_hooks.on_drop, crew_stats.expired, its group's
// crew_wait returns CREW_EEXPIRED); tasks in time run; every task runs exactly once or is
// reported, in every scheduler, for blocking tasks and in a bounded queue; and the C++ wrapper's
// submit_by / post_by / group::run_by.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::bump;
using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

std::atomic<long> drops{0};
void count_drop(crew_fn, void *, void *) { drops.fetch_add(1); }

// A monitored pool that counts dropped tasks in drops; base: other settings (NULL: defaults).
crew_pool *pool_with(unsigned threads, const crew_config *base = nullptr) {
    crew_config cfg;
    if (base)
        cfg = *base;
    else
        crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.monitoring = 1;
    return crewtest::make_pool_on_drop(cfg, count_drop);
}

crew_stats stats_of(crew_pool *p) {
    crew_stats s;
    s.size = sizeof s;
    EXPECT_EQ(crew_stats_get(p, &s), CREW_OK);
    return s;
}

uint64_t ms_from_now(long ms) { return crew_now_ns() + uint64_t(ms) * 1000000u; }

TEST(Deadline, LateTasksAreDroppedAndReportedOthersRun) {
    drops = 0;
    crew_pool *p = pool_with(2);
    std::atomic<long> late{0}, plain{0}, early{0};
    // Both workers held, so everything stays queued past the short deadline. (Not crew_pause:
    // it is prompt, not instant, and a worker may still take one task as it begins.)
    Gate gate;
    gate.hold(p, 2);
    crew_handle g = CREW_HANDLE_NONE, h = CREW_HANDLE_NONE, k = CREW_HANDLE_NONE;
    uint64_t soon = ms_from_now(20), later = ms_from_now(60000);
    for (int i = 0; i < 50; i++) {
        ASSERT_EQ(crew_submit_deadline(p, bump, &late, uint32_t(i % 3), 0, soon, &g), CREW_OK);
        ASSERT_EQ(crew_submit(p, bump, &plain, 0, &h), CREW_OK);
        ASSERT_EQ(crew_submit_deadline(p, bump, &early, 0, 0, later, &k), CREW_OK);
        ASSERT_EQ(crew_submit_deadline(p, bump, &plain, 1, 0, 0, nullptr), CREW_OK); // 0: none
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    gate.open();
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    EXPECT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(crew_wait(p, k), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK) << "deadlines are the group's business, not the pool's";
    EXPECT_EQ(late.load(), 0);
    EXPECT_EQ(plain.load(), 100);
    EXPECT_EQ(early.load(), 50);
    EXPECT_EQ(drops.load(), 50);
    crew_stats s = stats_of(p);
    EXPECT_EQ(s.expired, 50u);
    EXPECT_EQ(s.cancelled, 0u);
    EXPECT_EQ(s.completed, 152u); // with the two gate tasks
    EXPECT_EQ(s.completed + s.expired + s.cancelled, s.submitted);
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED) << "the answer must last";
    // A submission through the handle of a group whose loss a wait has reported opens a new
    // group that starts clean (test_losses.cpp: an unreported loss carries over); the old
    // handle keeps its answer a while yet (crew.h).
    const crew_handle ended = g;
    EXPECT_EQ(crew_submit(p, bump, &late, 0, &g), CREW_OK);
    EXPECT_FALSE(g.slot == ended.slot && g.gen == ended.gen) << "a new group";
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(crew_wait(p, ended), CREW_EEXPIRED);
    EXPECT_EQ(late.load(), 1);
    crew_destroy(p);
}

TEST(Deadline, PastDeadlineIsAcceptedThenDroppedNeverRun) {
    drops = 0;
    crew_pool *p = pool_with(1);
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, 1, &g), CREW_OK); // 1 ns: long past
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    EXPECT_EQ(runs.load(), 0);
    EXPECT_EQ(drops.load(), 1);
    crew_destroy(p);
}

// A group that lost tasks to both crew_cancel and deadlines reports the cancel.
TEST(Deadline, CancelTakesPrecedenceOverExpiry) {
    crew_pool *p = pool_with(1);
    std::atomic<long> runs{0};
    Gate gate;
    gate.hold(p, 1); // the only worker
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, 1, &g), CREW_OK);
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    gate.open();
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    EXPECT_EQ(runs.load(), 0);
    crew_destroy(p);
}

// Some tasks of a group in time, some late: the group reports the loss; the others ran.
TEST(Deadline, PartlyExpiredGroup) {
    crew_pool *p = pool_with(1);
    std::atomic<long> runs{0};
    Gate gate;
    gate.hold(p, 1); // the only worker
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, i % 2 ? 1 : ms_from_now(60000), &g),
                  CREW_OK);
    gate.open();
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    EXPECT_EQ(runs.load(), 5);
    crew_destroy(p);
}

// Blocking tasks carry deadlines too: one blocking thread, held; the next one expires.
TEST(Deadline, BlockingTaskExpires) {
    drops = 0;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.max_blocking = 1;
    crew_pool *p = pool_with(1, &cfg);
    std::atomic<long> runs{0};
    Gate gate;
    ASSERT_EQ(crew_submit_ex(p, Gate::block, &gate, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, CREW_TASK_BLOCKING, ms_from_now(10), &g),
              CREW_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate.open();
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    EXPECT_EQ(runs.load(), 0);
    EXPECT_EQ(drops.load(), 1);
    crew_destroy(p);
}

// Expired tasks give back their places in a bounded queue. (The only worker is held by a task
// that has started, so holds no place: a pause would be prompt, not instant.)
TEST(Deadline, ExpiredTasksFreeBoundedPlaces) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.queue_capacity = 4;
    cfg.full_policy = CREW_FULL_FAIL;
    crew_pool *p = pool_with(1, &cfg);
    std::atomic<long> runs{0};
    for (int round = 0; round < 20; round++) {
        Gate gate;
        gate.hold(p, 1);
        crew_handle g = CREW_HANDLE_NONE;
        for (int i = 0; i < 4; i++)
            ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, 1, &g), CREW_OK) << round;
        EXPECT_EQ(crew_try_submit(p, bump, &runs, 0, nullptr), CREW_EFULL);
        gate.open();
        EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
    }
    EXPECT_EQ(runs.load(), 0);
    crew_destroy(p);
}

// Under load: producers submit with tight random deadlines while the workers run; every task
// either ran or was dropped, once, and the counts agree.
TEST(Deadline, EveryTaskRunsOnceOrIsReportedUnderLoad) {
    drops = 0;
    crew_pool *p = pool_with(3);
    const int producers = 4, each = int(scaled(20000));
    std::atomic<long> runs{0}, grouped_runs{0};
    std::atomic<int> expired_groups{0}, ok_groups{0};
    std::vector<std::thread> th;
    for (int t = 0; t < producers; t++)
        th.emplace_back([&, t] {
            std::mt19937 rng(unsigned(t) + 1u);
            crew_handle g = CREW_HANDLE_NONE;
            for (int i = 0; i < each; i++) {
                uint64_t by = rng() % 4 == 0 ? 0 : crew_now_ns() + rng() % 200000u; // < 0.2 ms
                bool grouped = i % 4 == 0;
                std::atomic<long> *c = grouped ? &grouped_runs : &runs;
                int rc = crew_submit_deadline(p, bump, c, rng() % 4, 0, by, grouped ? &g : nullptr);
                if (rc == CREW_ESTALE) { // the group had ended: a new one
                    int w = crew_wait(p, g);
                    (w == CREW_EEXPIRED ? expired_groups : ok_groups)++;
                    ASSERT_TRUE(w == CREW_OK || w == CREW_EEXPIRED) << w;
                    g = CREW_HANDLE_NONE;
                    rc = crew_submit_deadline(p, bump, c, 0, 0, by, &g);
                }
                ASSERT_EQ(rc, CREW_OK);
            }
            if (g.slot) {
                int w = crew_wait(p, g);
                ASSERT_TRUE(w == CREW_OK || w == CREW_EEXPIRED) << w;
            }
        });
    for (auto &x : th)
        x.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_stats s = stats_of(p);
    long total = long(producers) * each;
    EXPECT_EQ(runs.load() + grouped_runs.load() + drops.load(), total);
    EXPECT_EQ(long(s.submitted), total);
    EXPECT_EQ(long(s.completed), runs.load() + grouped_runs.load());
    EXPECT_EQ(long(s.expired), drops.load());
    crew_destroy(p);
}

TEST(Deadline, BadInput) {
    crew_pool *p = pool_with(1);
    std::atomic<long> runs{0};
    EXPECT_EQ(crew_submit_deadline(nullptr, bump, &runs, 0, 0, 1, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_submit_deadline(p, nullptr, &runs, 0, 0, 1, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0x80u, 1, nullptr), CREW_EINVAL);
    crew_handle forged = {12345, 7};
    EXPECT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, 1, &forged), CREW_EINVAL);
    EXPECT_STREQ(crew_err_name(CREW_EEXPIRED), "EEXPIRED");
    EXPECT_NE(std::string(crew_strerror(CREW_EEXPIRED)).find("start-by"), std::string::npos);
    crew_shutdown(p, CREW_DRAIN);
    EXPECT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, 1, nullptr), CREW_ESHUTDOWN);
    crew_destroy(p);
    EXPECT_EQ(runs.load(), 0);
}

TEST(Deadline, CppWrapper) {
    crew::options o;
    o.threads = 1;
    crew::pool pool(o);
    std::promise<void> hold;
    std::shared_future<void> held = hold.get_future().share();
    pool.post([held] { held.wait(); }); // holds the only worker
    auto past = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
    auto future = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    std::atomic<int> posted{0};
    auto late = pool.submit_by(past, [] { return 1; });
    auto fine = pool.submit_by(future, [](int x) { return x + 1; }, 41);
    pool.post_by(past, [&] { posted++; });
    pool.post_by(future, [&] { posted += 10; });
    crew::group g(pool);
    g.run_by(past, [&] { posted += 100; });
    g.run([&] { posted += 1000; });
    hold.set_value();
    // Every drop done (the hook destroys the job, and with it the promise) before the futures
    // are read: otherwise the last reference to the broken promise's exception may drop on the
    // worker, through reference counts inside libstdc++ that ThreadSanitizer cannot see.
    pool.wait();
    EXPECT_EQ(pool.diagnose(nullptr), 0) << "nothing is stuck";
    EXPECT_EQ(fine.get(), 42);
    try {
        late.get();
        ADD_FAILURE() << "a task past its deadline ran";
    } catch (const std::future_error &e) {
        EXPECT_EQ(e.code(), std::make_error_code(std::future_errc::broken_promise));
    }
    try {
        g.wait();
        ADD_FAILURE() << "the group lost a task but wait() did not say so";
    } catch (const crew::error &e) {
        EXPECT_EQ(e.code(), CREW_EEXPIRED);
    }
    EXPECT_EQ(posted.load(), 1010);
}

} // namespace
