// test_groups.cpp -- group handles on the slot map: opening, joining, finishing, stale handles,
// slot reuse with generations, many groups at once, and the caller helping.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

// The wake-ups this thread has had in crew's sleeps (src/ec.c; the tests link the library's
// internals): how a test sees that a sleeper was not woken for someone else's event.
extern "C" unsigned long crew__ec_thread_wakeups(void);

namespace {
void count(void *arg) { static_cast<std::atomic<int> *>(arg)->fetch_add(1); }
} // namespace

TEST(Groups, NoneOpensAGroupAndWaitSeesEveryWrite) {
    crew_pool *p = make_pool(2);
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK); // keeps the group open
    EXPECT_NE(g.slot, 0u);
    EXPECT_NE(g.gen, 0u);
    const crew_handle opened = g;
    std::vector<long> out(1000, 0); // plain memory: the wait must make the writes visible
    struct Arg {
        long *cell;
        long v;
    };
    std::vector<Arg> args(out.size());
    for (size_t i = 0; i < out.size(); i++) {
        args[i] = {&out[i], long(i) * 3 + 1};
        ASSERT_EQ(crew_submit(
                      p, [](void *a) { auto *x = static_cast<Arg *>(a); *x->cell = x->v; },
                      &args[i], 0, &g),
                  CREW_OK);
        ASSERT_EQ(g.slot, opened.slot); // joining leaves the handle as it is
        ASSERT_EQ(g.gen, opened.gen);
    }
    gate.open();
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    for (size_t i = 0; i < out.size(); i++)
        ASSERT_EQ(out[i], long(i) * 3 + 1) << i;
    crew_destroy(p);
}

TEST(Groups, ArrayJoinsOneGroupAtomicallyAndWaitSeesEveryWrite) {
    crew_pool *p = make_pool(2);
    const size_t n = 10000;
    std::vector<long> out(n, 0);
    std::vector<crew_task> t(n);
    struct Arg {
        long *slot;
        long v;
    };
    std::vector<Arg> args(n);
    for (size_t i = 0; i < n; i++) {
        args[i] = {&out[i], long(i) + 1};
        t[i].fn = [](void *a) { auto *x = static_cast<Arg *>(a); *x->slot = x->v; };
        t[i].arg = &args[i];
    }
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks(p, t.data(), n, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(out[i], long(i) + 1) << i;
    crew_destroy(p);
}

TEST(Groups, AddingToAFinishedGroupOpensANewOneInTheHandlesPlace) {
    crew_pool *p = make_pool(1);
    Gate gate;
    std::atomic<int> n{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
    const crew_handle first = g;
    for (int i = 0; i < 10; i++) {
        ASSERT_EQ(crew_submit(p, count, &n, 0, &g), CREW_OK); // open: the gate holds it
        ASSERT_TRUE(g.slot == first.slot && g.gen == first.gen) << "an open group is joined";
    }
    gate.open();
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(n.load(), 10);
    // Finished: the next submission through the variable opens a new group and stores it.
    ASSERT_EQ(crew_submit(p, count, &n, 0, &g), CREW_OK);
    EXPECT_FALSE(g.slot == first.slot && g.gen == first.gen);
    EXPECT_EQ(crew_wait(p, first), CREW_OK); // finished: returns at once
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(n.load(), 11);
    // An array into a finished group: all of it joins one new group.
    crew_task t[3] = {{count, &n, 0, 0, {}}, {count, &n, 0, 0, {}}, {count, &n, 0, 0, {}}};
    const crew_handle second = g;
    ASSERT_EQ(crew_enqueue_tasks(p, t, 3, &g), CREW_OK);
    EXPECT_FALSE(g.slot == second.slot && g.gen == second.gen);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(n.load(), 14);
    crew_destroy(p);
}

// The loop a newcomer writes: one task at a time into one handle variable, then one wait. The
// earlier tasks may all have finished between two submissions; none may be skipped, and the
// wait must cover them all. Every strategy runs this (CTest), on the submission paths that
// differ: crew_submit's fast path, the general one (crew_enqueue_task), a lane, and from
// inside a task (a worker's own group slots).
namespace {
struct LoopRound {
    crew_pool *p;
    crew_lane *lane;
    int how; // 0 crew_submit, 1 crew_enqueue_task, 2 crew_lane_submit
    int tasks;
    std::atomic<int> *ran;
    int refused = 0;
    int waited = CREW_EINVAL;
    std::vector<crew_task> t;
    void run() {
        t.assign(size_t(tasks), crew_task{count, ran, 0, 0, {}});
        crew_handle g = CREW_HANDLE_NONE;
        for (int i = 0; i < tasks; i++) {
            int rc = how == 0   ? crew_submit(p, count, ran, 0, &g)
                     : how == 1 ? crew_enqueue_task(p, &t[size_t(i)], &g)
                                : crew_lane_submit(lane, count, ran, &g);
            refused += rc != CREW_OK;
            if (i % 97 == 0)
                std::this_thread::yield(); // let the tasks so far finish, now and then
        }
        waited = crew_wait(p, g);
    }
};
} // namespace

TEST(Groups, SingleSubmissionsIntoOneHandleNeverSkipATask) {
    crew_pool *p = make_pool(2);
    crew_lane *lane = nullptr;
    ASSERT_EQ(crew_lane_create(p, 2, &lane), CREW_OK);
    const long rounds = scaled(60);
    for (int how = 0; how < 3; how++) {
        for (long r = 0; r < rounds; r++) {
            std::atomic<int> ran{0};
            LoopRound round{p, lane, how, 1000, &ran, 0, CREW_EINVAL, {}};
            round.run();
            ASSERT_EQ(round.refused, 0) << "how " << how << ", round " << r;
            ASSERT_EQ(round.waited, CREW_OK);
            // The wait covered every task: none still running, none skipped.
            ASSERT_EQ(ran.load(), 1000) << "how " << how << ", round " << r;
        }
    }
    // From inside a task, as nested parallelism does it.
    std::atomic<int> ran{0};
    LoopRound inner{p, nullptr, 0, 1000, &ran, 0, CREW_EINVAL, {}};
    crew_handle outer = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(
                  p, [](void *a) { static_cast<LoopRound *>(a)->run(); }, &inner, 0, &outer),
              CREW_OK);
    ASSERT_EQ(crew_wait(p, outer), CREW_OK);
    EXPECT_EQ(inner.refused, 0);
    EXPECT_EQ(inner.waited, CREW_OK);
    EXPECT_EQ(ran.load(), 1000);
    EXPECT_EQ(crew_lane_destroy(lane), CREW_OK);
    crew_destroy(p);
}

// A handle of a generation this slot never reached is forged, like any other handle the pool
// never issued: every call that takes a handle refuses it, on a slot whose group is open and on
// one whose group has finished.
TEST(Groups, HandlesOfAGenerationNeverIssuedAreRefused) {
    crew_pool *p = make_pool(1);
    Gate gate;
    crew_handle live = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &live), CREW_OK);
    std::atomic<int> n{0};
    for (uint32_t ahead : {1u, 1000u}) {
        crew_handle forged = {live.slot, live.gen + ahead};
        EXPECT_EQ(crew_wait(p, forged), CREW_EINVAL) << ahead;
        EXPECT_NE(std::string(crew_last_error()).find("not one this pool issued"),
                  std::string::npos)
            << crew_last_error();
        EXPECT_EQ(crew_notify(p, forged, count, &n), CREW_EINVAL) << ahead;
        EXPECT_EQ(crew_cancel(p, forged), CREW_EINVAL) << ahead;
        crew_handle into = forged;
        EXPECT_EQ(crew_submit(p, count, &n, 0, &into), CREW_EINVAL) << ahead;
        EXPECT_TRUE(into.slot == forged.slot && into.gen == forged.gen) << "left alone";
    }
    gate.open();
    ASSERT_EQ(crew_wait(p, live), CREW_OK);
    // Finished now: the handle itself stays good, later generations stay forged.
    EXPECT_EQ(crew_wait(p, live), CREW_OK);
    crew_handle next = {live.slot, live.gen + 1000};
    EXPECT_EQ(crew_wait(p, next), CREW_EINVAL);
    EXPECT_EQ(crew_notify(p, next, count, &n), CREW_EINVAL);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), 0) << "no callback may run for a forged handle";
    crew_destroy(p);
}

TEST(Groups, SlotReuseMovesTheGenerationOnAndOldHandlesStayFinished) {
    crew_pool *p = make_pool(2);
    const long rounds = scaled(100000);
    std::atomic<int> n{0};
    crew_handle first = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, count, &n, 0, &first), CREW_OK);
    ASSERT_EQ(crew_wait(p, first), CREW_OK);
    bool reused = false;
    crew_handle prev = first;
    std::map<uint32_t, uint32_t> last_gen{{first.slot, first.gen}}; // slot -> latest generation
    for (long i = 0; i < rounds; i++) {
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_submit(p, count, &n, 0, &g), CREW_OK);
        auto it = last_gen.find(g.slot);
        if (it != last_gen.end()) { // a reused slot: its generation has moved on
            reused = true;
            EXPECT_NE(g.gen, it->second);
        }
        last_gen[g.slot] = g.gen;
        ASSERT_EQ(crew_wait(p, g), CREW_OK);
        // Every finished handle stays finished, reused slot or not; a submission through it
        // opens a new group (never joins the group that reuses the slot).
        ASSERT_EQ(crew_wait(p, prev), CREW_OK);
        crew_handle again = prev;
        ASSERT_EQ(crew_submit(p, count, &n, 0, &again), CREW_OK);
        ASSERT_FALSE(again.slot == prev.slot && again.gen == prev.gen);
        ASSERT_FALSE(again.slot == g.slot && again.gen == g.gen);
        ASSERT_EQ(crew_wait(p, again), CREW_OK);
        prev = g;
    }
    EXPECT_TRUE(reused);
    EXPECT_EQ(crew_wait(p, first), CREW_OK);
    EXPECT_EQ(n.load(), 2 * rounds + 1);
    crew_destroy(p);
}

TEST(Groups, HundredThousandGroupsOpenAtOnce) {
    crew_pool *p = make_pool(1);
    const long groups = scaled(100000);
    Gate gate;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    std::atomic<int> n{0};
    std::vector<crew_handle> h(groups, CREW_HANDLE_NONE);
    for (long i = 0; i < groups; i++)
        ASSERT_EQ(crew_submit(p, count, &n, 0, &h[i]), CREW_OK);
    for (long i = 1; i < groups; i++)
        ASSERT_FALSE(h[i].slot == h[i - 1].slot) << i; // all open at once: distinct slots
    gate.open();
    for (long i = groups - 1; i >= 0; i--)
        ASSERT_EQ(crew_wait(p, h[i]), CREW_OK);
    EXPECT_EQ(n.load(), groups);
    crew_destroy(p);
}

TEST(Groups, CallerHelpsWhenEveryWorkerIsBlocked) {
    crew_pool *p = make_pool(2);
    Gate gate;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(2);
    std::atomic<int> n{0};
    std::vector<crew_task> t(100);
    for (auto &x : t)
        x.fn = count, x.arg = &n;
    EXPECT_EQ(crew_enqueue_tasks_wait(p, t.data(), t.size()), CREW_OK);
    EXPECT_EQ(n.load(), 100);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks(p, t.data(), t.size(), &g), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(n.load(), 200);
    gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

// An outside thread keeps the group slots it frees for the groups it opens next; they go back
// to the pool when the thread exits or turns to another pool, so threads that come and go do
// not make the slot map grow. Here every worker is held, so each thread runs (and finishes)
// its own groups while it waits; without the give-back, each thread would keep 10 slots.
TEST(Groups, OutsideThreadsGiveTheirCachedSlotsBack) {
    crew_pool *p = make_pool(1), *other = make_pool(1);
    Gate gate;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    std::atomic<int> n{0};
    uint32_t top = 0; // the highest slot index handed out
    auto round = [&](bool switch_pools) {
        crew_handle g[10];
        for (auto &h : g) {
            h = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_submit(p, count, &n, 0, &h), CREW_OK);
            top = std::max(top, h.slot & 0xffffffu);
        }
        for (auto &h : g)
            ASSERT_EQ(crew_wait(p, h), CREW_OK); // run here: the only worker is held
        if (switch_pools) { // a group on another pool: this thread's cache turns to it
            crew_handle h = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_submit(other, count, &n, 0, &h), CREW_OK);
            ASSERT_EQ(crew_wait(other, h), CREW_OK);
        }
    };
    for (int i = 0; i < 100; i++)
        std::thread(round, false).join();
    for (int i = 0; i < 100; i++)
        round(true); // the same thread, turning from pool to pool
    EXPECT_EQ(n.load(), 2100);
    EXPECT_LE(top, 30u) << "slots kept by threads that exited or turned to another pool";
    gate.open();
    crew_destroy(other);
    crew_destroy(p);
}

TEST(Groups, WaitersOnManyThreadsAllReturn) {
    crew_pool *p = make_pool(2);
    const int waiters = 8;
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
    gate.wait_arrivals(1);
    std::atomic<int> returned{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < waiters; i++)
        ts.emplace_back([&] {
            EXPECT_EQ(crew_wait(p, g), CREW_OK);
            returned++;
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(returned.load(), 0);
    gate.open();
    for (auto &t : ts)
        t.join();
    EXPECT_EQ(returned.load(), waiters);
    crew_destroy(p);
}

TEST(Groups, ConcurrentProducersEachWithTheirOwnGroups) {
    crew_pool *p = make_pool(2);
    const long per = scaled(20000);
    std::atomic<long> n{0};
    std::vector<std::thread> ts;
    for (int k = 0; k < 4; k++)
        ts.emplace_back([&] {
            for (long i = 0; i < per; i += 10) {
                crew_task t[10] = {};
                for (auto &x : t)
                    x.fn = [](void *a) { static_cast<std::atomic<long> *>(a)->fetch_add(1); },
                    x.arg = &n;
                crew_handle g = CREW_HANDLE_NONE;
                ASSERT_EQ(crew_enqueue_tasks(p, t, 10, &g), CREW_OK);
                ASSERT_EQ(crew_wait(p, g), CREW_OK);
            }
        });
    for (auto &t : ts)
        t.join();
    EXPECT_EQ(n.load(), 4 * ((per + 9) / 10) * 10);
    crew_destroy(p);
}

TEST(Groups, WaitersWithHandlesRacingSlotReuseNeverHangOrErr) {
    crew_pool *p = make_pool(2);
    const long rounds = scaled(50000);
    std::atomic<uint64_t> published{0}; // slot << 32 | gen of the newest group
    std::atomic<bool> stop{false};
    std::atomic<long> waits{0};
    std::vector<std::thread> waiters;
    for (int w = 0; w < 3; w++)
        waiters.emplace_back([&] {
            while (!stop.load()) {
                uint64_t v = published.load();
                if (v == 0)
                    continue;
                crew_handle h = {uint32_t(v >> 32), uint32_t(v)};
                ASSERT_EQ(crew_wait(p, h), CREW_OK); // finished or not, reused or not
                waits++;
            }
        });
    std::atomic<long> ran{0};
    auto inc = [](void *a) { static_cast<std::atomic<long> *>(a)->fetch_add(1); };
    for (long i = 0; i < rounds; i++) {
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_submit(p, inc, &ran, 0, &g), CREW_OK);
        published.store(uint64_t(g.slot) << 32 | g.gen);
        if (i % 3 == 0) {
            ASSERT_EQ(crew_wait(p, g), CREW_OK);
        }
    }
    while (waits.load() == 0) // slow schedulers (valgrind) may not have run a waiter yet
        std::this_thread::yield();
    stop = true;
    for (auto &t : waiters)
        t.join();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(ran.load(), rounds);
    EXPECT_GT(waits.load(), 0);
    crew_destroy(p);
}

// A group that finishes wakes its own waiters and nobody else's: N threads each wait for their
// own group (one task held on a blocking thread of its own, whatever the strategy); once all of
// them sleep, the groups finish one by one, and each waiter has been woken exactly once. (When
// every group's waiters shared one condition variable, each finish woke all N.)
TEST(Groups, FinishingAGroupWakesOnlyItsOwnWaiters) {
    const int n = 6;
    crew_pool *p = make_pool(2);
    std::vector<Gate> gates(n);
    std::vector<crew_handle> g(n, CREW_HANDLE_NONE);
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(crew_submit_ex(p, Gate::block, &gates[i], 0, CREW_TASK_BLOCKING, &g[i]),
                  CREW_OK);
        gates[i].wait_arrivals(1);
    }
    std::vector<unsigned long> wakeups(n, 0);
    std::vector<int> rc(n, -1);
    std::atomic<int> returned{0};
    std::vector<std::thread> waiters;
    for (int i = 0; i < n; i++)
        waiters.emplace_back([&, i] {
            unsigned long before = crew__ec_thread_wakeups();
            rc[i] = crew_wait(p, g[i]);
            wakeups[i] = crew__ec_thread_wakeups() - before;
            returned.fetch_add(1);
        });
    // Every waiter asleep in crew_wait: crew_diagnose lists each one (blocked for 0 ms or more).
    while (crew_diagnose_ex(p, nullptr, 1u << 30, 1u << 30, 0) < n)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < n; i++) {
        gates[i].open();
        waiters[i].join();
        EXPECT_EQ(rc[i], CREW_OK);
        EXPECT_EQ(wakeups[i], 1u) << "waiter " << i << " was woken for other groups";
    }
    EXPECT_EQ(returned.load(), n);
    crew_destroy(p);
}

// A thread outside the pool that helps while it waits takes queued tasks besides its group's.
// When its wait ends, every task it has not started must still be where others take it: here
// the waiting thread ends right after its wait, and crew_wait_all must still see every task run.
TEST(Groups, AWaitThatEndsLeavesNoClaimedTaskBehind) {
    crew_pool *p = make_pool(1);
    Gate gate;
    gate.hold(p, 1); // the only worker: the waiter below is alone to take tasks
    std::atomic<int> ran{0};
    const int n = 64;
    std::thread waiter([&] {
        crew_handle g = CREW_HANDLE_NONE;
        // The group's task first (oldest), then tasks of no group behind it, which the group
        // does not need: its wait may end with them queued.
        ASSERT_EQ(crew_submit(p, count, &ran, 0, &g), CREW_OK);
        for (int i = 1; i < n; i++)
            ASSERT_EQ(crew_submit(p, count, &ran, 0, nullptr), CREW_OK);
        EXPECT_EQ(crew_wait(p, g), CREW_OK);
    });
    waiter.join();
    EXPECT_GE(ran.load(), 1);
    gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(ran.load(), n);
    crew_destroy(p);
}

// Tasks of equal priority that one thread submits start in submission order (crew.h). A thread
// that helps while it waits takes some of them; when its wait ends with others not started,
// those must keep their place before the ones submitted after them. The only worker runs
// them, one at a time.
TEST(Groups, TasksAWaitLeavesUnstartedKeepTheirOrder) {
    if (!crewtest::strict_priority())
        GTEST_SKIP() << "the MultiQueue's order is approximate by design";
    crew_pool *p = make_pool(1);
    Gate gate;
    gate.hold(p, 1); // the only worker: the waiter below is alone to take tasks
    struct Rec {
        std::mutex m;
        std::vector<int> order;
    } rec;
    struct Arg {
        Rec *rec;
        int i;
    };
    const int n = 32;
    std::vector<Arg> args(n);
    auto note = [](void *a) {
        Arg *x = static_cast<Arg *>(a);
        std::lock_guard<std::mutex> l(x->rec->m);
        x->rec->order.push_back(x->i);
    };
    std::thread waiter([&] {
        crew_handle g = CREW_HANDLE_NONE;
        // The group's task first (oldest), then tasks of no group behind it.
        args[0] = {&rec, 0};
        ASSERT_EQ(crew_submit(p, note, &args[0], 0, &g), CREW_OK);
        for (int i = 1; i < n; i++) {
            args[i] = {&rec, i};
            ASSERT_EQ(crew_submit(p, note, &args[i], 0, nullptr), CREW_OK);
        }
        EXPECT_EQ(crew_wait(p, g), CREW_OK);
    });
    waiter.join();
    gate.open();
    // No helping wait here: the worker alone takes the rest, in queue order.
    for (;;) {
        {
            std::lock_guard<std::mutex> l(rec.m);
            if (rec.order.size() == size_t(n))
                break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    std::vector<int> want(n);
    for (int i = 0; i < n; i++)
        want[i] = i;
    EXPECT_EQ(rec.order, want);
    crew_destroy(p);
}

// A thread that helps in crew_wait_all runs a task that waits, outside crew, for the tasks
// submitted after it; the worker is idle meanwhile and must be able to take and run them: a
// helper's take leaves every task but the one it runs where other threads take it (else they
// would wait until its task returned: here never, but for the time limit that turns the hang
// into a failure).
TEST(Groups, TasksAfterOneAHelperRunsStayTakeable) {
    crew_pool *p = make_pool(1);
    Gate gate;
    gate.hold(p, 1); // the only worker, until the first task below starts
    struct State {
        Gate *gate;
        std::atomic<int> ran{0};
        bool saw_all = false;
    } st;
    st.gate = &gate;
    const int later = 15;
    auto first = [](void *a) {
        State *s = static_cast<State *>(a);
        s->gate->open(); // the worker is free from here on
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (s->ran.load() < later && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        s->saw_all = s->ran.load() == later;
    };
    auto bump = [](void *a) { static_cast<State *>(a)->ran.fetch_add(1); };
    ASSERT_EQ(crew_submit(p, first, &st, 0, nullptr), CREW_OK);
    for (int i = 0; i < later; i++)
        ASSERT_EQ(crew_submit(p, bump, &st, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK); // takes the first task (the worker is held)
    EXPECT_TRUE(st.saw_all);
    crew_destroy(p);
}
