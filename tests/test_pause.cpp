// test_pause.cpp -- crew_pause / crew_resume: paused threads finish what they run and take
// nothing new (workers, blocking threads, helping waiters); submissions queue; resume runs
// everything exactly once; shutdown resumes; safe against concurrent resize and submissions.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::bump;
using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

TEST(Pause, PausedPoolQueuesAndResumeRunsEverything) {
    crew_pool *p = make_pool(2);
    std::atomic<long> runs{0};
    ASSERT_EQ(crew_paused(p), 0);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    ASSERT_EQ(crew_pause(p), CREW_OK); // twice is once
    EXPECT_EQ(crew_paused(p), 1);
    settle(); // workers that were polling see the pause
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, uint32_t(i % 3), nullptr), CREW_OK);
    std::vector<crew_task> arr(50);
    for (auto &t : arr)
        t.fn = bump, t.arg = &runs;
    ASSERT_EQ(crew_enqueue_tasks(p, arr.data(), arr.size(), nullptr), CREW_OK);
    settle();
    EXPECT_EQ(runs.load(), 0) << "a paused pool started tasks";
    ASSERT_EQ(crew_resume(p), CREW_OK);
    EXPECT_EQ(crew_paused(p), 0);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 150);
    EXPECT_EQ(crew_resume(p), CREW_OK); // resuming a running pool changes nothing
    crew_destroy(p);
}

TEST(Pause, TheRunningTaskFinishesAndNothingElseStarts) {
    crew_pool *p = make_pool(1);
    Gate gate;
    std::atomic<long> runs{0};
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    gate.open(); // the running task finishes...
    settle();
    EXPECT_EQ(runs.load(), 0); // ...and the worker takes nothing new
    crew_stats s;
    s.size = sizeof s;
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(s.queued, 10u);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 10);
    crew_destroy(p);
}

// A caller waiting for its group does not run the group's tasks while the pool is paused; the
// wait returns once the pool resumes and they have run.
TEST(Pause, WaitersDoNotHelpWhilePaused) {
    crew_pool *p = make_pool(2);
    std::atomic<long> runs{0};
    ASSERT_EQ(crew_pause(p), CREW_OK);
    settle();
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 20; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    std::atomic<int> rc{1};
    std::thread waiter([&] { rc = crew_wait(p, g); });
    settle();
    EXPECT_EQ(runs.load(), 0);
    EXPECT_EQ(rc.load(), 1) << "the wait returned on a paused pool";
    ASSERT_EQ(crew_resume(p), CREW_OK);
    waiter.join();
    EXPECT_EQ(rc.load(), CREW_OK);
    EXPECT_EQ(runs.load(), 20);
    crew_destroy(p);
}

TEST(Pause, BlockingTasksWaitToo) {
    crew_pool *p = make_pool(1);
    std::atomic<long> runs{0};
    ASSERT_EQ(crew_submit_ex(p, bump, &runs, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK); // a blocking thread exists and is idle now
    ASSERT_EQ(crew_pause(p), CREW_OK);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(crew_submit_ex(p, bump, &runs, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
    settle();
    EXPECT_EQ(runs.load(), 1);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 6);
    crew_destroy(p);
}

// Shutdown resumes a paused pool: draining runs every queued task, cancelling reports them.
TEST(Pause, ShutdownOfAPausedPool) {
    for (int how : {CREW_DRAIN, CREW_CANCEL}) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = 2;
        cfg.monitoring = 1;
        crew_pool *p = make_pool(cfg);
        std::atomic<long> runs{0};
        ASSERT_EQ(crew_pause(p), CREW_OK);
        settle();
        for (int i = 0; i < 200; i++)
            ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
        ASSERT_EQ(crew_shutdown(p, how), CREW_OK);
        EXPECT_EQ(crew_paused(p), 0);
        EXPECT_EQ(crew_pause(p), CREW_ESHUTDOWN);
        crew_stats s;
        s.size = sizeof s;
        ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
        if (how == CREW_DRAIN) {
            EXPECT_EQ(runs.load(), 200);
        } else {
            EXPECT_EQ(uint64_t(runs.load()) + s.cancelled, 200u); // each ran or was reported
            EXPECT_EQ(crew_wait_all(p), CREW_ECANCELED);
        }
        crew_destroy(p);
    }
}

// Pause and resume racing resizes and submissions from several threads: every task runs
// exactly once and nothing hangs.
TEST(Pause, RacingResizeAndSubmitters) {
    crew_pool *p = make_pool(2);
    const long per = scaled(20000);
    std::atomic<bool> stop{false};
    std::atomic<long> runs{0};
    std::thread toggler([&] {
        for (unsigned i = 0; !stop; i++) {
            if (i % 2)
                crew_pause(p);
            else
                crew_resume(p);
            crew_resize(p, 1 + i % 4);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        crew_resume(p);
    });
    std::vector<std::thread> prod;
    for (int k = 0; k < 3; k++)
        prod.emplace_back([&] {
            for (long i = 0; i < per; i++)
                ASSERT_EQ(crew_submit(p, bump, &runs, uint32_t(i % 2), nullptr), CREW_OK);
        });
    for (auto &t : prod)
        t.join();
    stop = true;
    toggler.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 3 * per);
    crew_destroy(p);
}

// A task submitted after crew_pause returned never starts before crew_resume, also when a worker,
// a blocking thread or a helping waiter was in the middle of a look for work as the pause began
// (workers that poll long are always in one). Each task knows its round; the test records, under
// a mutex, the last round it resumed: a task that finds its own round not yet resumed started
// too early.
TEST(Pause, NothingSubmittedAfterThePauseStartsBeforeTheResume) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.spin = 1u << 20; // idle workers keep polling
    crew_pool *p = make_pool(cfg);
    struct Probe {
        std::mutex m;
        long resumed = -1, early = 0, runs = 0;
    } probe;
    struct Round {
        Probe *probe;
        long i;
    };
    auto check = [](void *arg) {
        auto *r = static_cast<Round *>(arg);
        std::lock_guard<std::mutex> lock(r->probe->m);
        r->probe->early += r->probe->resumed < r->i;
        r->probe->runs++;
    };
    auto resume = [&](long i) {
        {
            std::lock_guard<std::mutex> lock(probe.m);
            probe.resumed = i;
        }
        EXPECT_EQ(crew_resume(p), CREW_OK);
    };
    const long rounds = scaled(5000);
    std::vector<Round> rs(static_cast<size_t>(rounds));
    long submitted = 0;
    for (long i = 0; i < rounds; i++) {
        rs[size_t(i)] = Round{&probe, i};
        ASSERT_EQ(crew_pause(p), CREW_OK);
        unsigned flags = i % 4 == 3 ? CREW_TASK_BLOCKING : 0u;
        ASSERT_EQ(crew_submit_ex(p, check, &rs[size_t(i)], 0, flags, nullptr), CREW_OK);
        submitted++;
        if (i % 16 == 0) { // and a waiter that would help: it must not take it either
            crew_handle g = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_submit(p, check, &rs[size_t(i)], 0, &g), CREW_OK);
            submitted++;
            std::thread resumer([&] {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
                resume(i);
            });
            EXPECT_EQ(crew_wait(p, g), CREW_OK);
            resumer.join();
        } else {
            resume(i);
        }
    }
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(probe.early, 0) << "tasks started while the pool was paused";
    EXPECT_EQ(probe.runs, submitted);
    crew_destroy(p);
}

TEST(Pause, BadArguments) {
    EXPECT_EQ(crew_pause(nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_resume(nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_paused(nullptr), 0);
}

} // namespace
