// test_bounded.cpp -- the bounded queue (crew_config.queue_capacity) and its full-queue
// policies: block, fail, run in the caller, drop the oldest; crew_try_submit, crew_submit_timed,
// shutdown waking blocked submitters, exactly-once under load, and the oversubscribed shape of
// a compressor's pool (a queue of one place, more workers than CPUs, try-add then add).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <string>
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
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.queue_capacity = 2;
    cfg.full_policy = CREW_FULL_DROP_OLDEST;
    crew_pool *p = crewtest::make_pool_on_drop(cfg, count_drop);
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

namespace {

// A job of the oversubscribed shape: a little real CPU work, then its run counted.
struct ShapeJob {
    std::atomic<int> runs{0};
    uint64_t out = 0;
};
void shape_job(void *a) {
    auto *j = static_cast<ShapeJob *>(a);
    uint64_t v = uint64_t(reinterpret_cast<uintptr_t>(a));
    for (int i = 0; i < 2000; i++)
        v = v * 6364136223846793005ull + 1442695040888963407ull;
    j->out = v;
    j->runs.fetch_add(1);
}

// zstd's POOL_tryAdd, then POOL_add: CREW_OK, or what the blocking add answered. *fulls counts
// the try-adds that found no room.
int try_then_add(crew_pool *p, ShapeJob *j, long *fulls) {
    int rc = crew_try_submit(p, shape_job, j, 0, nullptr);
    if (rc != CREW_EFULL)
        return rc;
    ++*fulls;
    return crew_submit(p, shape_job, j, 0, nullptr);
}

// Submitters that crew_diagnose lists as asleep waiting for room now (listed by their last
// look before they sleep, on a lent sleeper or their own).
int waiting_for_room(crew_pool *p) {
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    EXPECT_GE(crew_diagnose_ex(p, f, UINT_MAX, UINT_MAX, 0), 0);
    fclose(f);
    int n = 0;
    for (const char *s = buf; (s = std::strstr(s, "for room")) != nullptr; s++)
        n++;
    free(buf);
    return n;
}

// Until n submitters wait for room (they get there: nothing frees a place meanwhile).
void await_waiting_for_room(crew_pool *p, int n) {
    while (waiting_for_room(p) < n)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

} // namespace

extern "C" unsigned crew__test_room_lent(crew_pool *p); // bounded.c, in the checked library

// The shape of a compressor's pool: a queue of one place, four times as many workers as CPUs,
// producers that try to add and then wait for room. Every job runs exactly once, and the
// producers' waits (on the sleepers the queue lends, and on their own when two wait at once
// beyond those) always end.
TEST(Bounded, OversubscribedQueueOfOneRunsEveryJobOnce) {
    unsigned cpus = std::max(2u, std::thread::hardware_concurrency());
    crew_pool *p = make_bounded(4 * cpus, 1, CREW_FULL_BLOCK);
    for (int producers : {1, 6}) { // 6: more than the sleepers the queue lends
        const long each = crewtest::scaled(3000);
        std::vector<ShapeJob> jobs(size_t(producers * each));
        std::vector<std::thread> th;
        std::atomic<long> fulls{0};
        for (int k = 0; k < producers; k++)
            th.emplace_back([&, k] {
                long f = 0;
                for (long i = 0; i < each; i++)
                    ASSERT_EQ(try_then_add(p, &jobs[size_t(k * each + i)], &f), CREW_OK);
                fulls += f;
            });
        for (auto &t : th)
            t.join();
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        for (auto &j : jobs)
            ASSERT_EQ(j.runs.load(), 1);
    }
    crew_destroy(p);
}

// Every worker busy and the one place taken: a try-add is refused, a blocking add sleeps, and
// it resumes, its job accepted, once a worker takes the queued job.
TEST(Bounded, BlockedProducerResumesWhenAWorkerTakesTheQueuedJob) {
    const unsigned workers = 8;
    crew_pool *p = make_bounded(workers, 1, CREW_FULL_BLOCK);
    Gate gate;
    gate.hold(p, int(workers));
    ShapeJob queued, waiting;
    long fulls = 0;
    ASSERT_EQ(try_then_add(p, &queued, &fulls), CREW_OK);
    EXPECT_EQ(fulls, 0);
    std::atomic<int> tried{1}, rc{1};
    std::thread producer([&] { // try_then_add, with the try-add's answer shown
        tried = crew_try_submit(p, shape_job, &waiting, 0, nullptr);
        rc = tried == CREW_EFULL ? crew_submit(p, shape_job, &waiting, 0, nullptr) : tried.load();
    });
    while (tried.load() == 1)
        std::this_thread::yield();
    EXPECT_EQ(tried.load(), CREW_EFULL); // no room: every worker is held
    await_waiting_for_room(p, 1);         // asleep in the blocking add
    EXPECT_EQ(rc.load(), 1);              // nothing can free the place
    gate.open();
    producer.join();
    EXPECT_EQ(rc.load(), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(queued.runs.load(), 1);
    EXPECT_EQ(waiting.runs.load(), 1);
    crew_destroy(p);
}

// More producers asleep for room than the queue lends sleepers (all seven at once, as
// crew_diagnose lists them: four on lent sleepers, three on their own): every one resumes as
// places free (the first round), or is answered CREW_ESHUTDOWN, with a detail that says why, by
// a shutdown while they sleep (the second); none of the refused jobs runs, and every lent
// sleeper is given back.
TEST(Bounded, ManyBlockedProducersResumeOrHearTheShutdown) {
    for (bool shut : {false, true}) {
        const unsigned workers = 2;
        const int producers = 7;
        crew_pool *p = make_bounded(workers, 1, CREW_FULL_BLOCK);
        Gate gate;
        gate.hold(p, int(workers));
        ShapeJob first;
        long fulls = 0;
        ASSERT_EQ(try_then_add(p, &first, &fulls), CREW_OK);
        std::vector<ShapeJob> jobs(producers);
        std::vector<std::atomic<int>> rc(producers);
        std::vector<std::string> detail(producers);
        std::vector<std::thread> th;
        for (int k = 0; k < producers; k++) {
            rc[size_t(k)] = 1;
            th.emplace_back([&, k] {
                long f = 0;
                rc[size_t(k)] = try_then_add(p, &jobs[size_t(k)], &f);
                if (rc[size_t(k)] != CREW_OK)
                    detail[size_t(k)] = crew_last_error();
            });
        }
        await_waiting_for_room(p, producers); // all asleep: the place taken, the workers held
        EXPECT_EQ(crew__test_room_lent(p), 4u); // the queue's four lent, three on their stacks
        for (auto &r : rc)
            EXPECT_EQ(r.load(), 1);
        std::thread closer;
        if (shut)
            closer = std::thread([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
        else
            gate.open();
        for (auto &t : th)
            t.join(); // with shut, while the workers are still held
        int ran = 0;
        for (int k = 0; k < producers; k++) {
            if (shut) {
                EXPECT_EQ(rc[size_t(k)].load(), CREW_ESHUTDOWN);
                EXPECT_NE(detail[size_t(k)].find("shut"), std::string::npos) << detail[size_t(k)];
            } else {
                EXPECT_EQ(rc[size_t(k)].load(), CREW_OK);
            }
        }
        if (shut) {
            gate.open();
            closer.join();
        } else {
            ASSERT_EQ(crew_wait_all(p), CREW_OK);
        }
        for (auto &j : jobs)
            ran += j.runs.load();
        EXPECT_EQ(ran, shut ? 0 : producers);
        EXPECT_EQ(crew__test_room_lent(p), 0u); // every lent sleeper given back
        EXPECT_EQ(first.runs.load(), shut ? 0 : 1); // a cancelling shutdown drops the queued one
        crew_destroy(p);
    }
}

// A submitter whose timed wait for room ran out gives the lent sleeper back (five in turn, more
// than the queue lends): a later blocking add on the same pool sleeps on a lent one and is woken.
TEST(Bounded, TimedOutWaitLeavesTheSleeperUsable) {
    crew_pool *p = make_bounded(1, 1, CREW_FULL_BLOCK);
    Gate gate;
    gate.hold(p, 1);
    std::atomic<int> runs{0};
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    for (int i = 0; i < 5; i++) // more than the queue lends: each gives its sleeper back
        EXPECT_EQ(crew_submit_timed(p, bump, &runs, 0, nullptr, 5), CREW_ETIMEDOUT);
    EXPECT_EQ(crew__test_room_lent(p), 0u);
    std::atomic<int> rc{1};
    std::thread producer([&] { rc = crew_submit(p, bump, &runs, 0, nullptr); });
    await_waiting_for_room(p, 1);
    EXPECT_EQ(crew__test_room_lent(p), 1u); // it sleeps on a lent sleeper
    EXPECT_EQ(rc.load(), 1);
    gate.open();
    producer.join();
    EXPECT_EQ(rc.load(), CREW_OK);
    EXPECT_EQ(crew__test_room_lent(p), 0u);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 2);
    crew_destroy(p);
}
