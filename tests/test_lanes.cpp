// test_lanes.cpp -- lanes (crew_lane_*): submission order and the concurrency bound under many
// producers; lanes across crew_resize, crew_pause and crew_cancel; groups and statistics;
// many idle lanes; shutdown with tasks waiting in lanes; crew_lane_destroy from tasks; bad
// input; crew::lane.
#include <gtest/gtest.h>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

void bump(void *arg) { static_cast<std::atomic<long> *>(arg)->fetch_add(1); }
void noop(void *) {}

// ---- Order and the concurrency bound --------------------------------------------------------

// One lane's observations: how many of its tasks run now and at most; the order in which each
// producer's tasks started (a strand records it exactly).
struct Observed {
    unsigned bound = 1;
    std::atomic<unsigned> running{0};
    std::atomic<unsigned> peak{0};
    std::atomic<long> runs{0};
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::vector<long>> order; // per producer, the sequence numbers as they started
    std::atomic<bool> overlap_seen{false};
};

struct Item {
    Observed *o;
    int producer;
    long seq;
};

void observe(void *arg) {
    Item *it = static_cast<Item *>(arg);
    Observed *o = it->o;
    unsigned now = o->running.fetch_add(1) + 1;
    unsigned peak = o->peak.load();
    while (now > peak && !o->peak.compare_exchange_weak(peak, now)) {
    }
    {
        std::unique_lock<std::mutex> g(o->m);
        o->order[size_t(it->producer)].push_back(it->seq);
        if (now >= 2) {
            o->overlap_seen = true;
            o->cv.notify_all();
        }
        // The lane's first tasks wait (bounded) for a second one to run alongside, so that a
        // lane with room for two is seen running two; a strand never gets one, so it skips.
        if (o->bound >= 2 && !o->overlap_seen && it->seq < 4)
            o->cv.wait_for(g, std::chrono::seconds(5), [&] { return o->overlap_seen.load(); });
    }
    o->runs.fetch_add(1);
    o->running.fetch_sub(1);
}

class LaneBound : public ::testing::TestWithParam<unsigned> {};

TEST_P(LaneBound, OrderAndBoundUnderManyProducers) {
    const unsigned bound = GetParam();
    const int producers = 4;
    const long per = scaled(3000);
    crew_pool *p = make_pool(4);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, bound, &l), CREW_OK);
    Observed o;
    o.bound = bound;
    o.order.resize(producers);
    std::vector<std::vector<Item>> items(producers);
    for (int k = 0; k < producers; k++)
        for (long i = 0; i < per; i++)
            items[size_t(k)].push_back({&o, k, i});
    std::vector<std::thread> threads;
    for (int k = 0; k < producers; k++)
        threads.emplace_back([&, k] {
            for (long i = 0; i < per; i++) {
                ASSERT_EQ(crew_lane_submit(l, observe, &items[size_t(k)][size_t(i)], nullptr),
                          CREW_OK);
            }
        });
    for (auto &t : threads)
        t.join();
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK); // waits for the lane's tasks
    EXPECT_EQ(o.runs.load(), producers * per);
    EXPECT_LE(o.peak.load(), bound) << "more tasks of the lane ran at once than its bound";
    if (bound >= 2)
        EXPECT_GE(o.peak.load(), 2u) << "a lane with room for " << bound << " never ran two";
    else
        EXPECT_EQ(o.peak.load(), 1u);
    for (int k = 0; k < producers; k++) {
        const auto &seq = o.order[size_t(k)];
        ASSERT_EQ(seq.size(), size_t(per));
        if (bound == 1) { // a strand: each task starts after the previous one ended
            for (long i = 0; i < per; i++)
                ASSERT_EQ(seq[size_t(i)], i) << "producer " << k << ": out of order";
        }
    }
    crew_destroy(p);
}

INSTANTIATE_TEST_SUITE_P(Lanes, LaneBound, ::testing::Values(1u, 2u, 8u));

// Lanes that start tasks in submission order even when each task is short and their runners
// keep stepping back behind other work (more tasks than a runner's batch), with plain tasks and
// other lanes competing for the same pool.
struct Strand {
    crew_lane *l = nullptr;
    std::atomic<long> next{0};
    std::atomic<long> errors{0};
    std::atomic<unsigned> inside{0};
};
struct StrandItem {
    Strand *s;
    long seq;
};
void strand_step(void *arg) {
    auto *it = static_cast<StrandItem *>(arg);
    if (it->s->inside.fetch_add(1) != 0)
        it->s->errors++;
    if (it->s->next.load() != it->seq)
        it->s->errors++;
    it->s->next.store(it->seq + 1);
    it->s->inside.fetch_sub(1);
}

TEST(Lanes, ManyStrandsKeepTheirOrderAmongOtherWork) {
    crew_pool *p = make_pool(3);
    const int nlanes = 16;
    const long per = scaled(400);
    std::vector<Strand> lanes(nlanes);
    std::vector<std::vector<StrandItem>> items(nlanes);
    for (int k = 0; k < nlanes; k++) {
        ASSERT_EQ(crew_lane_create(p, 1, &lanes[size_t(k)].l), CREW_OK);
        for (long i = 0; i < per; i++)
            items[size_t(k)].push_back({&lanes[size_t(k)], i});
    }
    std::atomic<long> plain{0};
    for (long i = 0; i < per; i++)
        for (int k = 0; k < nlanes; k++) {
            ASSERT_EQ(crew_lane_submit(lanes[size_t(k)].l, strand_step,
                                       &items[size_t(k)][size_t(i)], nullptr),
                      CREW_OK);
            if (k == 0) {
                ASSERT_EQ(crew_submit(p, bump, &plain, 0, nullptr), CREW_OK);
            }
        }
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    for (auto &s : lanes) {
        EXPECT_EQ(s.next.load(), per);
        EXPECT_EQ(s.errors.load(), 0);
        EXPECT_EQ(crew_lane_destroy(s.l), CREW_OK);
    }
    EXPECT_EQ(plain.load(), per);
    crew_destroy(p);
}

// The lane goes idle and busy again over and over (each round waits for its task), from two
// threads at once: a task that arrives as the last runner leaves must never be stranded (the
// group's crew_wait would then never return).
TEST(Lanes, IdleAndBusyAgainNeverStrandsATask) {
    crew_pool *p = make_pool(2);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::atomic<long> runs{0};
    const long rounds = scaled(3000);
    auto producer = [&] {
        for (long i = 0; i < rounds; i++) {
            crew_handle g = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_OK);
            ASSERT_EQ(crew_wait(p, g), CREW_OK);
        }
    };
    std::thread a(producer), b(producer);
    a.join();
    b.join();
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(runs.load(), 2 * rounds);
    crew_destroy(p);
}

// A strand's task that submits to its own strand: the new task runs after it, in order.
struct Chain {
    crew_lane *l;
    std::atomic<long> depth{0};
    std::atomic<long> errors{0};
    std::atomic<bool> running{false};
};
void chain_step(void *arg) {
    auto *c = static_cast<Chain *>(arg);
    if (c->running.exchange(true))
        c->errors++;
    long d = c->depth.fetch_add(1);
    if (d < 200 && crew_lane_submit(c->l, chain_step, c, nullptr) != CREW_OK)
        c->errors++;
    c->running = false;
}

TEST(Lanes, ATaskSubmitsToItsOwnStrand) {
    crew_pool *p = make_pool(2);
    Chain c;
    ASSERT_EQ(crew_lane_create(p, 1, &c.l), CREW_OK);
    ASSERT_EQ(crew_lane_submit(c.l, chain_step, &c, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK); // counts tasks still in the lane
    EXPECT_EQ(c.depth.load(), 201);
    EXPECT_EQ(c.errors.load(), 0);
    ASSERT_EQ(crew_lane_destroy(c.l), CREW_OK);
    crew_destroy(p);
}

// ---- Resize, pause, cancel, groups, statistics -----------------------------------------------

TEST(Lanes, SurvivesResize) {
    crew_pool *p = make_pool(3);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 2, &l), CREW_OK);
    std::atomic<long> runs{0};
    const long n = scaled(4000);
    std::thread resizer([&] {
        for (unsigned i = 0; i < 20; i++)
            ASSERT_EQ(crew_resize(p, 1 + i % 4), CREW_OK);
    });
    for (long i = 0; i < n; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK);
    resizer.join();
    ASSERT_EQ(crew_resize(p, 1), CREW_OK);
    for (long i = 0; i < n; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(runs.load(), 2 * n);
    crew_destroy(p);
}

TEST(Lanes, PausedPoolStartsNoLaneTaskUntilResumed) {
    crew_pool *p = make_pool(2);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::atomic<long> before{0}, after{0};
    // A lane in full flow when the pause comes: its runner runs the gate's task, and must step
    // back between two tasks rather than go on with those submitted after crew_pause.
    Gate gate;
    ASSERT_EQ(crew_lane_submit(l, Gate::block, &gate, nullptr), CREW_OK);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &before, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &after, nullptr), CREW_OK);
    // A lane that starts while paused.
    crew_lane *l2 = nullptr;
    ASSERT_EQ(crew_lane_create(p, 4, &l2), CREW_OK);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_lane_submit(l2, bump, &after, nullptr), CREW_OK);
    gate.open(); // the running task ends
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(after.load(), 0) << "a lane task submitted after crew_pause started";
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l2), CREW_OK);
    EXPECT_EQ(before.load(), 3);
    EXPECT_EQ(after.load(), 100);
    crew_destroy(p);
}

struct DropLog {
    std::atomic<long> dropped{0}; // the lanes' tasks (bump) dropped
    std::atomic<long> plain{0};   // anything else but noop (a runner must never show up here)
};
void on_drop(crew_fn fn, void *, void *arg) {
    auto *d = static_cast<DropLog *>(arg);
    if (fn == bump)
        d->dropped++;
    else if (fn != noop)
        d->plain++;
}

crew_pool *pool_with_drop_log(unsigned threads, DropLog *log) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    crew_hooks hooks{};
    hooks.size = sizeof hooks;
    hooks.on_drop = on_drop;
    hooks.arg = log;
    cfg.hooks = &hooks;
    return make_pool(cfg);
}

TEST(Lanes, CancelledGroupDropsItsLaneTasksAndTheLaneGoesOn) {
    DropLog log;
    crew_pool *p = pool_with_drop_log(2, &log);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    Gate gate;
    std::atomic<long> runs{0}, other{0};
    ASSERT_EQ(crew_lane_submit(l, Gate::block, &gate, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    crew_handle g = CREW_HANDLE_NONE, keep = CREW_HANDLE_NONE;
    for (int i = 0; i < 20; i++) {
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_OK);
        ASSERT_EQ(crew_lane_submit(l, bump, &other, &keep), CREW_OK);
    }
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    EXPECT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_ECANCELED);
    gate.open();
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED); // counted from crew_lane_submit on
    EXPECT_EQ(crew_wait(p, keep), CREW_OK);
    EXPECT_EQ(runs.load(), 0);
    EXPECT_EQ(other.load(), 20);
    EXPECT_EQ(log.dropped.load(), 20);
    EXPECT_EQ(log.plain.load(), 0) << "on_drop saw something other than the lane's tasks";
    // The lane goes on.
    ASSERT_EQ(crew_lane_submit(l, bump, &other, nullptr), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(other.load(), 21);
    crew_destroy(p);
}

TEST(Lanes, GroupWaitsForTasksStillInTheLaneAndStatisticsCountThem) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.monitoring = 1;
    crew_pool *p = make_pool(cfg);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::atomic<long> runs{0};
    const long n = 100;
    // The group's tasks wait in the lane behind a held task (the group cannot finish early).
    Gate gate;
    ASSERT_EQ(crew_lane_submit(l, Gate::block, &gate, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    crew_handle g = CREW_HANDLE_NONE;
    for (long i = 0; i < n; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_OK);
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        gate.open();
    });
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(runs.load(), n) << "crew_wait returned before the group's lane tasks ran";
    opener.join();
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_stats s;
    s.size = sizeof s;
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(s.submitted, uint64_t(n + 1)); // the lane's tasks, not its runners
    EXPECT_EQ(s.completed, uint64_t(n + 1));
    crew_destroy(p);
}

// ---- Many lanes ----------------------------------------------------------------------------

TEST(Lanes, HundredThousandLanes) {
    crew_pool *p = make_pool(2);
    const long n = scaled(100000);
    std::vector<crew_lane *> lanes(size_t(n), nullptr);
    struct mallinfo2 before = mallinfo2();
    for (auto &l : lanes)
        ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    struct mallinfo2 after = mallinfo2();
    double per_lane = double(after.uordblks - before.uordblks) / double(n);
    std::printf("[ info ] %ld idle lanes: %.1f bytes of heap each\n", n, per_lane);
    RecordProperty("bytes_per_idle_lane", std::to_string(per_lane));
    EXPECT_LE(per_lane, 128.0) << "an idle lane should cost a few dozen bytes";
    std::atomic<long> runs{0};
    for (auto l : lanes)
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK);
    for (auto l : lanes)
        ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(runs.load(), n);
    crew_destroy(p);
}

// ---- Shutdown with tasks waiting in lanes ----------------------------------------------------

// Lanes full of tasks behind workers held at a gate, then a shutdown; every task ran or was
// reported as dropped (on_drop, and its group's crew_wait).
void shutdown_with_full_lanes(int how) {
    DropLog log;
    crew_pool *p = pool_with_drop_log(2, &log);
    Gate gate;
    gate.hold(p, 2);
    const int nlanes = 50, per = 20;
    std::vector<crew_lane *> lanes(nlanes, nullptr);
    std::vector<crew_handle> groups(nlanes, CREW_HANDLE_NONE);
    std::atomic<long> runs{0};
    for (int k = 0; k < nlanes; k++) {
        ASSERT_EQ(crew_lane_create(p, k % 3 + 1, &lanes[size_t(k)]), CREW_OK);
        for (int i = 0; i < per; i++)
            ASSERT_EQ(crew_lane_submit(lanes[size_t(k)], bump, &runs, &groups[size_t(k)]),
                      CREW_OK);
    }
    std::thread closer([&] { EXPECT_EQ(crew_shutdown(p, how), CREW_OK); });
    // Open the gate once the shutdown has begun (submissions refused).
    while (crew_submit(p, noop, nullptr, 0, nullptr) == CREW_OK)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(crew_lane_submit(lanes[0], bump, &runs, nullptr), CREW_ESHUTDOWN);
    gate.open();
    closer.join();
    const long total = long(nlanes) * per;
    EXPECT_EQ(log.plain.load(), 0) << "on_drop saw something other than the tasks submitted";
    EXPECT_EQ(runs.load() + log.dropped.load(), total)
        << "a lane task was neither run nor reported";
    if (how == CREW_DRAIN) {
        EXPECT_EQ(runs.load(), total);
        EXPECT_EQ(log.dropped.load(), 0);
    } else {
        EXPECT_GT(log.dropped.load(), 0);
    }
    for (int k = 0; k < nlanes; k++) {
        int rc = crew_wait(p, groups[size_t(k)]);
        EXPECT_TRUE(rc == CREW_OK || (how == CREW_CANCEL && rc == CREW_ECANCELED)) << rc;
        EXPECT_EQ(crew_lane_destroy(lanes[size_t(k)]), CREW_OK); // after shutdown: at once
    }
    crew_destroy(p);
}

TEST(Lanes, DrainingShutdownRunsTheTasksInLanes) { shutdown_with_full_lanes(CREW_DRAIN); }
TEST(Lanes, CancellingShutdownDropsTheTasksInLanes) { shutdown_with_full_lanes(CREW_CANCEL); }

// A full bounded queue that drops its oldest task may pick a lane's queued runner: the lane's
// waiting tasks are then dropped with it and reported, never lost, and the lane goes on.
TEST(Lanes, DropOldestThatPicksARunnerReportsTheLanesTasks) {
    DropLog log;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.queue_capacity = 2;
    cfg.full_policy = CREW_FULL_DROP_OLDEST;
    crew_hooks hooks{};
    hooks.size = sizeof hooks;
    hooks.on_drop = on_drop;
    hooks.arg = &log;
    cfg.hooks = &hooks;
    crew_pool *p = make_pool(cfg);
    Gate gate;
    gate.hold(p, 1);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::atomic<long> runs{0};
    const int n = 30;
    for (int i = 0; i < n; i++) // no place taken: the lane is their waiting room
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK);
    for (int i = 0; i < 6; i++) // fill the queue, then make it drop
        ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
    gate.open();
    crew_wait_all(p); // CREW_ECANCELED: the queue dropped tasks
    EXPECT_EQ(log.plain.load(), 0) << "on_drop was handed a runner";
    EXPECT_EQ(runs.load() + log.dropped.load(), n) << "a lane task was neither run nor reported";
    ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK); // the lane goes on
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(runs.load() + log.dropped.load(), n + 1);
    crew_destroy(p);
}

// ---- crew_lane_destroy from tasks ------------------------------------------------------------

struct SelfDestroy {
    crew_lane *l;
    std::atomic<int> rc{1};
    std::string detail;
};
void destroy_own_lane(void *arg) {
    auto *s = static_cast<SelfDestroy *>(arg);
    int rc = crew_lane_destroy(s->l);
    s->detail = crew_last_error();
    s->rc = rc;
}

TEST(Lanes, DestroyFromOneOfItsOwnTasksIsEdeadlk) {
    crew_pool *p = make_pool(2);
    for (unsigned bound : {1u, 3u}) {
        SelfDestroy s;
        ASSERT_EQ(crew_lane_create(p, bound, &s.l), CREW_OK);
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_lane_submit(s.l, destroy_own_lane, &s, &g), CREW_OK);
        ASSERT_EQ(crew_wait(p, g), CREW_OK);
        EXPECT_EQ(s.rc.load(), CREW_EDEADLK);
        EXPECT_NE(s.detail.find("crew_lane_destroy"), std::string::npos) << s.detail;
        EXPECT_EQ(crew_lane_destroy(s.l), CREW_OK); // still alive: destroyed from outside
    }
    crew_destroy(p);
}

// A task of the pool (not of the lane) destroys a lane whose runner is queued behind it, on a
// pool of one worker: the destroyer runs the queued runner itself.
struct OtherDestroy {
    crew_lane *l;
    std::atomic<long> *runs;
    std::atomic<int> rc{1};
};
void submit_then_destroy(void *arg) {
    auto *s = static_cast<OtherDestroy *>(arg);
    for (int i = 0; i < 40; i++)
        if (crew_lane_submit(s->l, bump, s->runs, nullptr) != CREW_OK)
            return;
    s->rc = crew_lane_destroy(s->l);
}

TEST(Lanes, DestroyFromAnotherTaskOfThePoolHelps) {
    crew_pool *p = make_pool(1);
    std::atomic<long> runs{0};
    OtherDestroy s;
    s.runs = &runs;
    ASSERT_EQ(crew_lane_create(p, 2, &s.l), CREW_OK);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, submit_then_destroy, &s, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(s.rc.load(), CREW_OK);
    EXPECT_EQ(runs.load(), 40);
    crew_destroy(p);
}

// ---- Bad input -------------------------------------------------------------------------------

TEST(Lanes, BadInput) {
    crew_pool *p = make_pool(1);
    crew_lane *l = nullptr;
    EXPECT_EQ(crew_lane_create(nullptr, 1, &l), CREW_EINVAL);
    EXPECT_EQ(crew_lane_create(p, 1, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_lane_create(p, 0, &l), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "max_concurrency is 0"), nullptr)
        << crew_last_error();
    EXPECT_EQ(l, nullptr);
    EXPECT_EQ(crew_lane_submit(nullptr, noop, nullptr, nullptr), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "lane is NULL"), nullptr) << crew_last_error();
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    EXPECT_EQ(crew_lane_submit(l, nullptr, nullptr, nullptr), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "fn is NULL"), nullptr) << crew_last_error();
    crew_handle bogus = {12345, 7};
    EXPECT_EQ(crew_lane_submit(l, noop, nullptr, &bogus), CREW_EINVAL);
    crew_handle done = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_lane_submit(l, noop, nullptr, &done), CREW_OK);
    ASSERT_EQ(crew_wait(p, done), CREW_OK);
    const crew_handle finished = done; // a finished group: a new one opens in its place
    EXPECT_EQ(crew_lane_submit(l, noop, nullptr, &done), CREW_OK);
    EXPECT_FALSE(done.slot == finished.slot && done.gen == finished.gen);
    EXPECT_EQ(crew_wait(p, done), CREW_OK);
    EXPECT_EQ(crew_lane_destroy(nullptr), CREW_OK);
    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_EQ(crew_lane_submit(l, noop, nullptr, nullptr), CREW_ESHUTDOWN);
    crew_lane *late = nullptr;
    EXPECT_EQ(crew_lane_create(p, 1, &late), CREW_ESHUTDOWN);
    EXPECT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_destroy(p);
}

// ---- C++ -------------------------------------------------------------------------------------

TEST(Lanes, CppLane) {
    crew::pool pool(crew::options{2});
    std::mutex m;
    std::vector<std::exception_ptr> errors;
    pool.on_error([&](std::exception_ptr e) {
        std::lock_guard<std::mutex> g(m);
        errors.push_back(e);
    });
    std::vector<int> seen;
    {
        crew::lane strand(pool); // a strand: no lock needed for seen
        for (int i = 0; i < 100; i++)
            strand.post([&seen, i] { seen.push_back(i); });
        auto f = strand.submit([](int x) { return x * 2; }, 21);
        auto bad = strand.submit([]() -> int { throw std::runtime_error("lane boom"); });
        strand.post([] { throw std::runtime_error("posted boom"); });
        EXPECT_EQ(f.get(), 42);
        EXPECT_THROW(bad.get(), std::runtime_error);
        crew::lane moved(std::move(strand));
        moved.post([&seen] { seen.push_back(100); });
        EXPECT_EQ(strand.native(), nullptr);
        EXPECT_THROW(strand.post([] {}), crew::error);
    } // waits for the lane's tasks
    ASSERT_EQ(seen.size(), 101u);
    for (int i = 0; i <= 100; i++)
        EXPECT_EQ(seen[size_t(i)], i);
    {
        std::lock_guard<std::mutex> g(m);
        ASSERT_EQ(errors.size(), 1u);
        EXPECT_THROW(std::rethrow_exception(errors[0]), std::runtime_error);
    }
    EXPECT_THROW(crew::lane(pool, 0), crew::error);
}

} // namespace
