// test_idle.cpp -- an idle pool sleeps: eight idle workers use well under 1% of a core; and it
// wakes enough of them: a burst of as many tasks as workers runs on all of them at once, although
// a submission wakes nobody while a worker is looking for work (the lookers hand the wake-up
// on: pool.h, worker.c). And CREW_SPIN_AUTO's choice (idle.c): no polls while the pool's awake
// threads outnumber its CPUs, polls once they fit. And a worker's wait for a batch in a
// producer's slot (steal_ext.h: gathering) loses no task and leaves no worker awake, and is
// made only where a batch may be claimed (not while tasks are timed).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <chrono>
#include <thread>
#include <time.h>

#include "common.h"

#if defined(__linux__)
#include <sched.h>
#endif

// idle.c's (internal: the tests link the library's checked build).
extern "C" unsigned crew__idle_polls(crew_pool *p);
extern "C" unsigned crew__cpus_count(const crew_hooks *h);
extern "C" unsigned crew__idle_asleep(crew_pool *p);

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
    for (unsigned spin : {0u, 64u, 1u << 16, CREW_SPIN_AUTO}) {
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

// CREW_SPIN_AUTO: a pool whose workers are all busy and outnumber the CPUs gives an idle stretch
// no polls; once they sleep, polls (64) again.
TEST(Idle, AutoSpinPollsOnlyWhileAwakeThreadsFitTheCpus) {
    const unsigned cpus = crew__cpus_count(nullptr);
    ASSERT_GE(cpus, 1u);
    const unsigned threads = cpus + 1;
    crew_pool *p = crewtest::make_pool(threads); // the default spin: CREW_SPIN_AUTO
    struct Hold {
        std::atomic<unsigned> started{0};
        std::atomic<bool> go{false};
    } hold;
    auto task = [](void *arg) {
        auto *h = static_cast<Hold *>(arg);
        h->started.fetch_add(1);
        while (!h->go.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    for (unsigned i = 0; i < threads; i++)
        ASSERT_EQ(crew_submit(p, task, &hold, 0, nullptr), CREW_OK);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (hold.started.load() < threads && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(hold.started.load(), threads) << "the workers did not all start";
    // Every worker is in a task: threads > cpus awake.
    EXPECT_EQ(crew__idle_polls(p), 0u);
    hold.go.store(true);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    // Idle workers poll, then sleep: then none is awake, which fits any machine.
    unsigned polls = 0;
    until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((polls = crew__idle_polls(p)) == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(polls, 64u) << "the workers never all slept";
    crew_destroy(p);
}

// The CPUs counted for CREW_SPIN_AUTO: those the pool is pinned to (crew_hooks.cpus), each once.
TEST(Idle, AutoSpinCountsThePinnedCpus) {
#if defined(__linux__)
    int cpu = sched_getcpu();
    ASSERT_GE(cpu, 0);
    int list[] = {cpu, cpu, cpu};
    crew_hooks h;
    memset(&h, 0, sizeof h);
    h.size = sizeof h;
    h.cpus = list;
    h.ncpus = 3;
    EXPECT_EQ(crew__cpus_count(&h), 1u);
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    EXPECT_EQ(crew__cpus_count(nullptr), unsigned(CPU_COUNT(&allowed)));
#else
    GTEST_SKIP() << "no CPU affinity here";
#endif
}

// A worker that finds a few tasks in the slot of a producer that is submitting waits a bounded
// moment for more (steal_ext.h: gathering). Each shape here must end with every task run once
// and every worker asleep, whatever the timing: a producer's long burst, then its wait; a
// producer that stops after a few tasks and does not help (it watches a count), so only the
// workers can take them, from a slot nobody adds to any more; and a shutdown right after a
// burst, which runs what is queued.
TEST(Idle, AfterAProducersBurstEveryTaskRunsAndEveryWorkerSleeps) {
    static std::atomic<long> ran{0};
    auto count = [](void *) { ran.fetch_add(1, std::memory_order_relaxed); };
    auto all_asleep = [](crew_pool *p, unsigned n) {
        // A generous bound: this is about reaching the state, not speed.
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        unsigned asleep = 0;
        while ((asleep = crew__idle_asleep(p)) != n && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return asleep;
    };
    const long burst = crewtest::scaled(200000) < 1000 ? 1000 : crewtest::scaled(200000);
    crew_pool *p = crewtest::make_pool(2);
    ran = 0;
    for (long i = 0; i < burst; i++)
        ASSERT_EQ(crew_submit(p, count, nullptr, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(ran.load(), burst) << "crew_wait_all returned before every task ran";
    EXPECT_EQ(all_asleep(p, 2), 2u) << "a worker stayed awake after the burst";
    for (long k : {1L, 2L, 3L, 5L, 11L}) { // fewer than a gathered batch: taken without more
        long before = ran.load();
        for (long i = 0; i < k; i++)
            ASSERT_EQ(crew_submit(p, count, nullptr, 0, nullptr), CREW_OK);
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (ran.load() < before + k && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        EXPECT_EQ(ran.load(), before + k) << k << " tasks of a producer that stopped: not run";
        EXPECT_EQ(all_asleep(p, 2), 2u) << "a worker stayed awake after " << k << " tasks";
    }
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    long before = ran.load();
    for (long i = 0; i < burst; i++)
        ASSERT_EQ(crew_submit(p, count, nullptr, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_EQ(ran.load(), before + burst) << "crew_shutdown returned before every task ran";
    crew_destroy(p);
}

// A worker waits for a batch to form (gathering) only where it may claim one: not while tasks
// are timed (monitoring here; also autosize, a trace), when every task is taken alone
// (sched_steal.c's batch_size), so that a wait would only delay each take. The checked
// library's hook counts the waits begun.
extern "C" void (*crew__test_gather)(void);
static std::atomic<long> g_gathers{0};
static void count_gather() { g_gathers.fetch_add(1, std::memory_order_relaxed); }

TEST(Idle, NoWaitForABatchWhileTasksAreTimed) {
    static std::atomic<long> ran{0};
    auto count = [](void *) { ran.fetch_add(1, std::memory_order_relaxed); };
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.monitoring = 1;
    cfg.scheduler = CREW_SCHED_STEAL; // the only strategy with slots
    g_gathers = 0;
    ran = 0;
    crew__test_gather = count_gather; // set and cleared while no worker runs (a plain pointer)
    crew_pool *p = nullptr;
    int rc = crew_create(&p, &cfg);
    if (rc == CREW_ENOTSUP) {
        crew__test_gather = nullptr;
        GTEST_SKIP() << "this build leaves monitoring out";
    }
    ASSERT_EQ(rc, CREW_OK);
    const long burst = crewtest::scaled(20000) < 500 ? 500 : crewtest::scaled(20000);
    long total = 0;
    for (int round = 0; round < 10; round++) { // each backlog drains through short lengths
        for (long i = 0; i < burst; i++)
            ASSERT_EQ(crew_submit(p, count, nullptr, 0, nullptr), CREW_OK);
        total += burst;
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (ran.load() < total && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        EXPECT_EQ(ran.load(), total) << "round " << round << ": tasks not run";
    }
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
    crew__test_gather = nullptr;
    EXPECT_EQ(g_gathers.load(), 0) << "workers waited for batches they could not claim";
}
