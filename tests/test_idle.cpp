// test_idle.cpp -- an idle pool sleeps: eight idle workers use well under 1% of a core; and it
// wakes enough of them: a burst of as many tasks as workers runs on all of them at once, although
// a submission wakes nobody while a worker is looking for work (the lookers hand the wake-up
// on: pool.h, worker.c).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <time.h>

#include "common.h"

static double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST(Idle, SleepingPoolUsesAlmostNoCpu) {
    if (crewtest::under_valgrind())
        GTEST_SKIP() << "valgrind serialises threads; CPU time means nothing there";
    crew_pool *p = crewtest::make_pool(8);
    // Give the workers a burst of work first, so they have spun and gone back to sleep.
    for (int i = 0; i < 1000; i++)
        crew_submit(p, [](void *) {}, nullptr, 0, nullptr);
    crew_wait_all(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    double before = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    double used = cpu_seconds() - before;
    // This measures behaviour (sleeping, not spinning), not speed: a spinning worker would use
    // a whole second here.
    EXPECT_LT(used, 0.01) << "idle pool used " << used * 100 << "% of a core";
    crew_destroy(p);
}

// A paused pool with tasks queued sleeps too: no worker wakes another for tasks it may not
// take (an earlier version of the lookers' hand-on did, in turn, for ever).
TEST(Idle, PausedPoolWithQueuedTasksSleeps) {
    if (crewtest::under_valgrind())
        GTEST_SKIP() << "valgrind serialises threads; CPU time means nothing there";
    crew_pool *p = crewtest::make_pool(4);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(crew_submit(p, [](void *) {}, nullptr, 0, nullptr), CREW_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    double before = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    double used = cpu_seconds() - before;
    EXPECT_LT(used, 0.01) << "a paused pool used " << used * 200 << "% of a core";
    ASSERT_EQ(crew_resume(p), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

// n tasks that each wait (up to 10 s) until all n have started: they finish only if n workers
// run them at the same time. The submitting thread does not help (it polls a count instead of
// crew_wait_all), so every worker must have been woken.
struct Rendezvous {
    std::atomic<int> arrived{0}, finished{0}, missed{0};
    int n = 0;
    static void task(void *arg) {
        auto *r = static_cast<Rendezvous *>(arg);
        r->arrived.fetch_add(1);
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (r->arrived.load() < r->n)
            if (std::chrono::steady_clock::now() > until) {
                r->missed.fetch_add(1);
                break;
            } else {
                std::this_thread::yield();
            }
        r->finished.fetch_add(1);
    }
};

TEST(Idle, ABurstWakesEveryWorker) {
    for (unsigned spin : {0u, 64u, 1u << 16}) {
        for (unsigned threads : {2u, 4u}) {
            crew_config cfg;
            crew_config_init(&cfg);
            cfg.threads = threads;
            cfg.spin = spin;
            crew_pool *p = crewtest::make_pool(cfg);
            const long rounds = crewtest::scaled(200) < 5 ? 5 : crewtest::scaled(200);
            for (long r = 0; r < rounds; r++) {
                if (r % 10 == 0) // now and then from a pool whose workers are all asleep
                    std::this_thread::sleep_for(std::chrono::milliseconds(3));
                Rendezvous rv;
                rv.n = int(threads);
                for (unsigned i = 0; i < threads; i++)
                    ASSERT_EQ(crew_submit(p, Rendezvous::task, &rv, 0, nullptr), CREW_OK);
                while (rv.finished.load() < rv.n)
                    std::this_thread::yield();
                ASSERT_EQ(rv.missed.load(), 0)
                    << "round " << r << ", " << threads << " workers, spin " << spin
                    << ": a task waited for a worker that nobody woke";
            }
            EXPECT_EQ(crew_wait_all(p), CREW_OK);
            crew_destroy(p);
        }
    }
}
