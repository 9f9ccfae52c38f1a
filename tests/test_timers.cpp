// test_timers.cpp -- time: delayed tasks (crew_submit_after, crew_submit_at, crew_submit_at_ex)
// and periodic timers (crew_timer_start / crew_timer_stop): a delay is "not before"; delayed
// tasks count in their group and in crew_wait_all from their submission, crew_cancel drops them
// at once, shutdowns run or report every one; timers at a fixed rate or with a fixed delay never
// overlap, stop from inside and outside, run once at a resume; re-entrancy, diagnostics, the
// timeline, fork, a million pending entries and a stress run under resizes and pauses; the
// timer thread, which wakes a little early and polls, never starts a task early, polls only
// when something is due soon, and sleeps without timer slack, leaving the caller's own. Every
// assertion is about behaviour, never about how late something ran.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <dirent.h>
#include <sys/wait.h>
#include <time.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <thread>
#include <unistd.h>
#include <vector>

#include "common.h"
#include "crew.h"
#include "crew.hpp"
#define CREW_CORO_OPTIONAL 1 // crew::sleep_for only where the compiler has coroutines
#include "crew_coro.hpp"
#if defined(__cpp_impl_coroutine) && __cpp_impl_coroutine >= 201902L && __has_include(<coroutine>)
#define TEST_CORO 1
#endif

using crewtest::bump;
using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

// Outside the anonymous namespace: the timeline names it by its exported symbol.
void crew_timers_test_tick(void *arg) { static_cast<std::atomic<long> *>(arg)->fetch_add(1); }

// Test hooks of the checked library the tests link (CREW_ASSERT): each holds a window open.
extern "C" void (*crew__test_cancel_between)(void);
extern "C" void (*crew__test_shutdown_closing)(void);
extern "C" void (*crew__test_timer_exit)(void);

namespace {

constexpr uint64_t kMs = 1000000u;
constexpr uint64_t kHour = 3600ull * 1000 * kMs;

std::atomic<long> drops{0};
void count_drop(crew_fn, void *, void *) { drops.fetch_add(1); }

// A pool whose on_drop counts in drops.
crew_pool *pool_with(unsigned threads) {
    drops = 0;
    return crewtest::make_pool_on_drop(threads, count_drop);
}

void sleep_ms(long ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

struct Stamp {
    std::atomic<uint64_t> at{0};
    std::atomic<int> runs{0};
};
void stamp(void *arg) {
    auto *s = static_cast<Stamp *>(arg);
    s->at = crew_now_ns();
    s->runs.fetch_add(1);
}

TEST(Timers, DelayedTaskRunsNotBeforeItsTime) {
    crew_pool *p = make_pool(2);
    Stamp s;
    crew_handle g = CREW_HANDLE_NONE;
    uint64_t t0 = crew_now_ns();
    ASSERT_EQ(crew_submit_after(p, 20 * kMs, stamp, &s, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK); // the group waits for it from its submission on
    EXPECT_EQ(s.runs.load(), 1);
    EXPECT_GE(s.at.load(), t0 + 20 * kMs);
    // crew_submit_at: an absolute time; one already past runs at once.
    uint64_t when = crew_now_ns() + 10 * kMs;
    ASSERT_EQ(crew_submit_at(p, when, stamp, &s, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK); // and so does crew_wait_all
    EXPECT_EQ(s.runs.load(), 2);
    EXPECT_GE(s.at.load(), when);
    ASSERT_EQ(crew_submit_at(p, 1, stamp, &s, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(s.runs.load(), 3);
    crew_destroy(p);
}

std::mutex order_m;
std::vector<int> order;
void record(void *arg) {
    std::lock_guard<std::mutex> g(order_m);
    order.push_back(static_cast<int>(reinterpret_cast<intptr_t>(arg)));
}

TEST(Timers, DelaysRunInTheOrderOfTheirTimes) {
    crew_pool *p = make_pool(1);
    order.clear();
    uint64_t base = crew_now_ns() + 20 * kMs;
    // Submitted latest first; equal times keep their submission order.
    for (int i = 9; i >= 0; i--)
        ASSERT_EQ(crew_submit_at(p, base + static_cast<uint64_t>(i / 2) * 5 * kMs, record,
                                 reinterpret_cast<void *>(static_cast<intptr_t>(i)), 0, nullptr),
                  CREW_OK);
    // Not crew_wait_all while they come due: a waiting caller runs queued tasks too, and two
    // threads running them would race to record.
    for (;;) {
        {
            std::lock_guard<std::mutex> g(order_m);
            if (order.size() == 10u)
                break;
        }
        sleep_ms(1);
    }
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    ASSERT_EQ(order.size(), 10u);
    std::vector<int> want = {1, 0, 3, 2, 5, 4, 7, 6, 9, 8};
    if (crewtest::strict_priority()) {
        EXPECT_EQ(order, want);
    }
    std::sort(order.begin(), order.end());
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(order[static_cast<size_t>(i)], i); // each ran once
    crew_destroy(p);
}

// A delayed task never starts before its due time, though the timer thread wakes a little
// before it and polls the rest (timer.c): one at a time, so that it learns how early to wake,
// and many at once from several threads, due within microseconds of each other, so that new
// earliest entries arrive while it polls. Under each polling setting of the pool (the timer
// thread polls as its idle threads may: CREW_SPIN_AUTO, a number, never).
struct DueCheck {
    uint64_t when = 0;
    std::atomic<int> *early = nullptr, *ran = nullptr;
};
void due_check(void *arg) {
    auto *d = static_cast<DueCheck *>(arg);
    if (crew_now_ns() < d->when)
        d->early->fetch_add(1);
    d->ran->fetch_add(1);
}

TEST(Timers, ADelayedTaskNeverStartsBeforeItsDueTime) {
    for (unsigned spin : {CREW_SPIN_AUTO, 64u, 0u}) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = 2;
        cfg.spin = spin;
        crew_pool *p = make_pool(cfg);
        std::atomic<int> early{0}, ran{0};
        const long one_by_one = scaled(100);
        std::vector<DueCheck> seq(static_cast<size_t>(one_by_one));
        for (auto &d : seq) {
            d.early = &early, d.ran = &ran;
            d.when = crew_now_ns() + kMs;
            crew_handle g = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_submit_at(p, d.when, due_check, &d, 0, &g), CREW_OK);
            ASSERT_EQ(crew_wait(p, g), CREW_OK);
        }
        const int threads = 3;
        const long each = scaled(300);
        std::vector<std::vector<DueCheck>> burst(threads,
                                                 std::vector<DueCheck>(static_cast<size_t>(each)));
        std::vector<std::thread> ts;
        for (int i = 0; i < threads; i++)
            ts.emplace_back([&, i] {
                std::mt19937_64 rng(static_cast<uint64_t>(i) + 1);
                for (auto &d : burst[static_cast<size_t>(i)]) {
                    d.early = &early, d.ran = &ran;
                    d.when = crew_now_ns() + rng() % (2 * kMs); // due within 0..2 ms
                    EXPECT_EQ(crew_submit_at(p, d.when, due_check, &d, 0, nullptr), CREW_OK);
                }
            });
        for (auto &t : ts)
            t.join();
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(ran.load(), one_by_one + threads * each);
        EXPECT_EQ(early.load(), 0) << "spin " << spin << ": tasks started before their time";
        crew_destroy(p);
    }
}

double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The timer thread polls only when an entry is due within microseconds: a pool whose timers
// and delayed tasks are all far off sleeps (well under 1% of a core), also once its timer
// thread has learnt to wake early; one with a 5 ms periodic timer polls a little before each
// run, never through the period (that would be a whole core).
TEST(Timers, TheTimerThreadPollsOnlyWhenSomethingIsDueSoon) {
    if (crewtest::under_valgrind())
        GTEST_SKIP() << "valgrind serialises threads; CPU time means nothing there";
    crew_pool *p = make_pool(2);
    std::atomic<long> ran{0};
    for (int i = 0; i < 100; i++) { // it learns how early to wake
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_submit_after(p, kMs, bump, &ran, 0, &g), CREW_OK);
        ASSERT_EQ(crew_wait(p, g), CREW_OK);
    }
    crew_handle far = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_after(p, kHour, bump, &ran, 0, &far), CREW_OK);
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, kHour, kMs, CREW_TIMER_FIXED_RATE, bump, &ran, &t), CREW_OK);
    sleep_ms(100);
    double before = cpu_seconds();
    sleep_ms(1000);
    double used = cpu_seconds() - before;
    EXPECT_LT(used, 0.01) << "a pool with only far timers used " << used * 100 << "% of a core";
    ASSERT_EQ(crew_timer_stop(t), CREW_OK);
    ASSERT_EQ(crew_cancel(p, far), CREW_OK);

    long runs_before = ran.load();
    ASSERT_EQ(crew_timer_start(p, 5 * kMs, 5 * kMs, CREW_TIMER_FIXED_RATE, bump, &ran, &t),
              CREW_OK);
    before = cpu_seconds();
    sleep_ms(1000);
    used = cpu_seconds() - before;
    ASSERT_EQ(crew_timer_stop(t), CREW_OK);
    EXPECT_GT(ran.load(), runs_before); // it ran
    EXPECT_LT(used, 0.25) << "a 5 ms timer cost " << used * 100 << "% of a core";
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

#if defined(__linux__)
// The timer thread's timed sleeps have no timer slack (1 ns, the least Linux takes), and the
// thread that made it keeps its own: crew changes the slack of no thread of the user's.
TEST(Timers, TheTimerThreadSleepsWithoutSlackAndTheCallerKeepsItsOwn) {
    const unsigned long mine = 200000; // 200 us, so that an inherited slack would show
    unsigned long old = static_cast<unsigned long>(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
    ASSERT_EQ(prctl(PR_SET_TIMERSLACK, mine, 0, 0, 0), 0);
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.name = "tslk";
    crew_pool *p = make_pool(cfg); // its timer thread is made by this thread, below
    std::atomic<long> ran{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_after(p, kMs, bump, &ran, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(static_cast<unsigned long>(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)), mine);
    std::string slack; // the timer thread's, from /proc
    if (DIR *d = opendir("/proc/self/task")) {
        while (dirent *e = readdir(d)) {
            std::string dir = std::string("/proc/self/task/") + e->d_name;
            std::ifstream comm(dir + "/comm");
            std::string name;
            if (!(comm >> name) || name.rfind("tslk-", 0) != 0 ||
                name.size() < 6 || name.compare(name.size() - 6, 6, "-timer") != 0)
                continue;
            std::ifstream f(std::string("/proc/") + e->d_name + "/timerslack_ns"); // not in task/
            f >> slack;
        }
        closedir(d);
    }
    crew_destroy(p);
    prctl(PR_SET_TIMERSLACK, old, 0, 0, 0);
    if (slack.empty())
        GTEST_SKIP() << "no /proc/<tid>/timerslack_ns here";
    EXPECT_EQ(slack, "1");
}
#endif

TEST(Timers, CancelDropsDelayedTasksAtOnce) {
    crew_pool *p = pool_with(2);
    std::atomic<long> ran{0};
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(crew_submit_after(p, kHour, bump, &ran, 0, &g), CREW_OK);
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    EXPECT_EQ(drops.load(), 100); // reported by the time crew_cancel returns
    // Until a wait has reported the cancel, the group takes no more tasks (crew.h).
    EXPECT_EQ(crew_submit_after(p, kMs, bump, &ran, 0, &g), CREW_ECANCELED);
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    EXPECT_EQ(ran.load(), 0);
    // Another group's delayed tasks are untouched.
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_after(p, 5 * kMs, bump, &ran, 0, &h), CREW_OK);
    EXPECT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(ran.load(), 1);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

// A delayed task that comes due while crew_cancel runs is dropped by crew_cancel all the same:
// the hook holds crew_cancel between its two sweeps (the heap's, the queues') until the timer
// thread has fired the task into a queue of the paused pool.
TEST(Timers, CancelDropsADelayedTaskThatFiresDuringTheCancel) {
    crew_pool *p = pool_with(2);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    std::atomic<long> ran{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_after(p, 20 * kMs, bump, &ran, 0, &g), CREW_OK);
    crew__test_cancel_between = [] { sleep_ms(150); }; // the task comes due and fires
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    crew__test_cancel_between = nullptr;
    EXPECT_EQ(drops.load(), 1); // reported by the time crew_cancel returns
    ASSERT_EQ(crew_resume(p), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    EXPECT_EQ(ran.load(), 0);
    crew_destroy(p);
}

// crew_cancel finds a group's delayed tasks by a count per group slot: the count follows the
// tasks that fire and those cancelled, and a later group of the same slot is counted afresh.
// (What the count saves, a pass over every pending entry for a group that has none, is time,
// which no test asserts.)
TEST(Timers, CancelCountsEachGroupsDelayedTasks) {
    crew_pool *p = pool_with(1);
    std::atomic<long> ran{0}, other{0};
    for (int i = 0; i < 1000; i++) // of no group: never touched by the cancels below
        ASSERT_EQ(crew_submit_after(p, kHour, bump, &other, 0, nullptr), CREW_OK);
    for (int round = 0; round < 3; round++) {
        drops = 0;
        ran = 0;
        crew_handle g = CREW_HANDLE_NONE;
        for (int i = 0; i < 10; i++) // half fire at once, half wait
            ASSERT_EQ(crew_submit_after(p, i % 2 ? kHour : 0, bump, &ran, 0, &g), CREW_OK);
        while (ran.load() < 5)
            sleep_ms(1);
        ASSERT_EQ(crew_pause(p), CREW_OK);
        crew_handle plain = CREW_HANDLE_NONE; // a group with one queued task, no delayed one
        ASSERT_EQ(crew_submit(p, bump, &ran, 0, &plain), CREW_OK);
        ASSERT_EQ(crew_cancel(p, plain), CREW_OK);
        ASSERT_EQ(crew_resume(p), CREW_OK);
        EXPECT_EQ(crew_wait(p, plain), CREW_ECANCELED);
        long d0 = drops.load(); // plain's task, dropped
        ASSERT_EQ(crew_cancel(p, g), CREW_OK);
        EXPECT_EQ(drops.load() - d0, 5) << "round " << round;
        EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    }
    EXPECT_EQ(other.load(), 0);
    long d0 = drops.load();
    ASSERT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    EXPECT_EQ(drops.load() - d0, 1000);
    crew_destroy(p);
}

TEST(Timers, BadInputIsRefused) {
    crew_pool *p = make_pool(1);
    crew_timer *t = nullptr;
    std::atomic<long> n{0};
    EXPECT_EQ(crew_submit_after(nullptr, 0, bump, &n, 0, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_submit_after(p, 0, nullptr, &n, 0, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_submit_at_ex(p, crew_now_ns(), bump, &n, 0, 4u, 0, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_submit_at_ex(p, 100, bump, &n, 0, 0, 50, nullptr), CREW_EINVAL);
    // Due at its own start-by time: it would reach a thread after it, so always expire.
    EXPECT_EQ(crew_submit_at_ex(p, 100, bump, &n, 0, 0, 100, nullptr), CREW_EINVAL);
    EXPECT_NE(std::string(crew_last_error()).find("not after the due time"), std::string::npos);
    EXPECT_EQ(crew_submit_at_ex(nullptr, 100, bump, &n, 0, 0, 50, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_timer_start(nullptr, 0, kMs, 0, bump, &n, &t), CREW_EINVAL);
    EXPECT_EQ(crew_timer_start(p, 0, kMs, 0, nullptr, &n, &t), CREW_EINVAL);
    EXPECT_EQ(crew_timer_start(p, 0, kMs, 0, bump, &n, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_timer_start(p, 0, kMs, 2u, bump, &n, &t), CREW_EINVAL);
    EXPECT_EQ(t, nullptr);
    EXPECT_EQ(crew_timer_stop(nullptr), CREW_OK);
    crew_handle forged = {7, 3};
    EXPECT_EQ(crew_submit_after(p, 0, bump, &n, 0, &forged), CREW_EINVAL);
    crew_destroy(p);
    EXPECT_EQ(n.load(), 0);
}

// A periodic callback that checks it never overlaps itself.
struct Periodic {
    std::atomic<int> inside{0};
    std::atomic<int> runs{0};
    std::atomic<bool> overlap{false};
    long sleep_ms = 0;
    int stop_at = 0; // stop itself from inside on this run (0: never)
    crew_timer *self = nullptr;
    std::atomic<int> stop_rc{1};
    std::vector<uint64_t> starts; // guarded by never overlapping
};
void periodic(void *arg) {
    auto *c = static_cast<Periodic *>(arg);
    if (c->inside.fetch_add(1) != 0)
        c->overlap = true;
    c->starts.push_back(crew_now_ns());
    int r = c->runs.fetch_add(1) + 1;
    if (c->sleep_ms)
        sleep_ms(c->sleep_ms);
    if (r == c->stop_at)
        c->stop_rc = crew_timer_stop(c->self); // returns at once from inside
    c->inside.fetch_sub(1);
}

void wait_runs(const Periodic &c, int n) {
    while (c.runs.load() < n)
        sleep_ms(1);
}

TEST(Timers, FixedRateAndFixedDelayRunRepeatedlyWithoutOverlap) {
    crew_pool *p = make_pool(4);
    for (unsigned flags : {CREW_TIMER_FIXED_RATE, CREW_TIMER_FIXED_DELAY}) {
        Periodic c;
        c.sleep_ms = 3; // longer than the period: the runs must still never overlap
        crew_timer *t = nullptr;
        uint64_t t0 = crew_now_ns();
        ASSERT_EQ(crew_timer_start(p, 5 * kMs, kMs, flags, periodic, &c, &t), CREW_OK);
        wait_runs(c, 6);
        ASSERT_EQ(crew_timer_stop(t), CREW_OK);
        int after = c.runs.load();
        EXPECT_EQ(c.inside.load(), 0); // no run in progress once stop returned
        sleep_ms(20);
        EXPECT_EQ(c.runs.load(), after); // and none started after
        EXPECT_FALSE(c.overlap.load());
        EXPECT_GE(c.starts[0], t0 + 5 * kMs);
        for (size_t i = 1; i < c.starts.size(); i++) // each after the previous one's end
            EXPECT_GE(c.starts[i], c.starts[i - 1] + 3 * kMs);
    }
    crew_destroy(p);
}

TEST(Timers, FixedRateStaysOnItsGridAndFixedDelayCountsFromTheEnd) {
    crew_pool *p = make_pool(2);
    Periodic c;
    crew_timer *t = nullptr;
    uint64_t t0 = crew_now_ns();
    const uint64_t period = 10 * kMs;
    ASSERT_EQ(crew_timer_start(p, period, period, CREW_TIMER_FIXED_RATE, periodic, &c, &t),
              CREW_OK);
    wait_runs(c, 5);
    ASSERT_EQ(crew_timer_stop(t), CREW_OK);
    // Run k (from 0) never starts before first + k * period.
    for (size_t k = 0; k < c.starts.size(); k++)
        EXPECT_GE(c.starts[k], t0 + period + k * period) << k;

    Periodic d;
    d.sleep_ms = 5;
    ASSERT_EQ(crew_timer_start(p, 0, period, CREW_TIMER_FIXED_DELAY, periodic, &d, &t), CREW_OK);
    wait_runs(d, 4);
    ASSERT_EQ(crew_timer_stop(t), CREW_OK);
    for (size_t k = 1; k < d.starts.size(); k++) // period after the previous run's end
        EXPECT_GE(d.starts[k], d.starts[k - 1] + 5 * kMs + period) << k;
    crew_destroy(p);
}

TEST(Timers, OneShotTimerRunsOnce) {
    crew_pool *p = make_pool(2);
    Periodic c;
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, 2 * kMs, 0, CREW_TIMER_FIXED_RATE, periodic, &c, &t), CREW_OK);
    wait_runs(c, 1);
    sleep_ms(20);
    EXPECT_EQ(c.runs.load(), 1);
    EXPECT_EQ(crew_timer_stop(t), CREW_OK);
    crew_destroy(p);
}

TEST(Timers, StopFromInsideReturnsAtOnce) {
    crew_pool *p = make_pool(2);
    Periodic c;
    c.stop_at = 3;
    ASSERT_EQ(crew_timer_start(p, 0, kMs, CREW_TIMER_FIXED_RATE, periodic, &c, &c.self), CREW_OK);
    wait_runs(c, 3);
    while (c.stop_rc.load() == 1)
        sleep_ms(1);
    EXPECT_EQ(c.stop_rc.load(), CREW_OK);
    sleep_ms(20);
    EXPECT_EQ(c.runs.load(), 3);
    crew_destroy(p);
}

struct Blocking {
    Gate gate;
    std::atomic<bool> entered{false}, left{false};
};
void blocking_run(void *arg) {
    auto *b = static_cast<Blocking *>(arg);
    b->entered = true;
    b->gate.wait();
    sleep_ms(5);
    b->left = true;
}

TEST(Timers, StopFromOutsideWaitsForTheRunInProgress) {
    crew_pool *p = make_pool(2);
    Blocking b;
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, 0, kMs, CREW_TIMER_FIXED_RATE, blocking_run, &b, &t), CREW_OK);
    while (!b.entered.load())
        sleep_ms(1);
    std::atomic<bool> stopped{false};
    std::thread stopper([&] {
        EXPECT_EQ(crew_timer_stop(t), CREW_OK);
        stopped = true;
    });
    sleep_ms(10);
    EXPECT_FALSE(stopped.load()); // the run is still in progress
    b.gate.open();
    stopper.join();
    EXPECT_TRUE(b.left.load()); // stop returned after the run ended
    crew_destroy(p);
}

TEST(Timers, QueuedRunOfAStoppedTimerNeverStarts) {
    crew_pool *p = make_pool(1);
    Gate g;
    g.hold(p, 1); // the only worker is busy: the timer's run stays queued
    Periodic c;
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, 0, kMs, CREW_TIMER_FIXED_RATE, periodic, &c, &t), CREW_OK);
    sleep_ms(20); // due, and queued behind the held worker
    ASSERT_EQ(crew_timer_stop(t), CREW_OK); // returns at once: nothing runs
    g.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(c.runs.load(), 0);
    crew_destroy(p);
}

TEST(Timers, PauseRunsADueTimerOnceAtTheResume) {
    crew_pool *p = make_pool(2);
    for (unsigned flags : {CREW_TIMER_FIXED_RATE, CREW_TIMER_FIXED_DELAY}) {
        Periodic c;
        crew_timer *t = nullptr;
        const uint64_t period = 10 * kMs;
        uint64_t o0 = crew_now_ns() + period; // the grid's origin lies in [o0, o1]
        ASSERT_EQ(crew_timer_start(p, period, period, flags, periodic, &c, &t), CREW_OK);
        uint64_t o1 = crew_now_ns() + period;
        wait_runs(c, 1);
        ASSERT_EQ(crew_pause(p), CREW_OK);
        int at_pause = c.runs.load();
        sleep_ms(100); // many periods
        EXPECT_LE(c.runs.load(), at_pause + 1); // at most a run taken as the pause began
        int before_resume = c.runs.load();
        uint64_t r0 = crew_now_ns(); // no run starts between this and the resume
        ASSERT_EQ(crew_resume(p), CREW_OK);
        wait_runs(c, before_resume + 2);
        ASSERT_EQ(crew_timer_stop(t), CREW_OK);
        // The run at the resume, then the next one by the timer's rule: no catch-up runs in
        // between. Fixed rate: the first grid point after the resume (whichever origin in
        // [o0, o1] it has: the smaller bound, less the interval).
        uint64_t first = c.starts[static_cast<size_t>(before_resume)];
        uint64_t second = c.starts[static_cast<size_t>(before_resume) + 1];
        ASSERT_GE(first, r0);
        if (flags == CREW_TIMER_FIXED_RATE) {
            auto grid_after = [&](uint64_t o) { return o + ((r0 - o) / period + 1) * period; };
            uint64_t bound = std::min(grid_after(o0), grid_after(o1)) - (o1 - o0);
            EXPECT_GE(second, bound);
        } else {
            EXPECT_GE(second, first + period);
        }
        EXPECT_FALSE(c.overlap.load());
    }
    crew_destroy(p);
}

TEST(Timers, DelayedTasksDueWhilePausedRunAtTheResume) {
    crew_pool *p = make_pool(2);
    std::atomic<long> ran{0};
    ASSERT_EQ(crew_pause(p), CREW_OK);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(crew_submit_after(p, kMs, bump, &ran, 0, nullptr), CREW_OK);
    sleep_ms(30);
    EXPECT_EQ(ran.load(), 0);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(ran.load(), 10);
    crew_destroy(p);
}

TEST(Timers, DrainingShutdownRunsEveryDelayedTaskAndStopsTimers) {
    crew_pool *p = pool_with(2);
    std::atomic<long> ran{0};
    const int n = 200;
    for (int i = 0; i < n; i++)
        ASSERT_EQ(crew_submit_after(p, static_cast<uint64_t>(i % 20) * kMs, bump, &ran, 0,
                                    nullptr),
                  CREW_OK);
    Periodic c;
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, 0, kMs, CREW_TIMER_FIXED_RATE, periodic, &c, &t), CREW_OK);
    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_EQ(ran.load(), n);
    EXPECT_EQ(drops.load(), 0);
    int runs = c.runs.load();
    sleep_ms(10);
    EXPECT_EQ(c.runs.load(), runs); // no run after the shutdown
    EXPECT_EQ(crew_submit_after(p, 0, bump, &ran, 0, nullptr), CREW_ESHUTDOWN);
    crew_timer *u = nullptr;
    EXPECT_EQ(crew_timer_start(p, 0, kMs, 0, bump, &ran, &u), CREW_ESHUTDOWN);
    EXPECT_EQ(crew_timer_stop(t), CREW_OK); // allowed after the shutdown
    crew_destroy(p);
}

TEST(Timers, CancellingShutdownDropsDelayedTasksAndReportsThem) {
    crew_pool *p = pool_with(2);
    std::atomic<long> ran{0};
    const int n = 300;
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < n; i++)
        ASSERT_EQ(crew_submit_after(p, i % 3 == 0 ? 0 : kHour, bump, &ran, 0, &g), CREW_OK);
    crew_timer *t = nullptr; // never stopped: crew_destroy frees it
    ASSERT_EQ(crew_timer_start(p, kHour, kMs, CREW_TIMER_FIXED_RATE, bump, &ran, &t), CREW_OK);
    ASSERT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); // returns long before an hour
    EXPECT_EQ(ran.load() + drops.load(), n);            // each ran once or was reported
    EXPECT_GE(drops.load(), 2 * n / 3);
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    crew_destroy(p);
}

// No timer's run is queued once a shutdown began: the hook holds crew_shutdown between its
// change of the pool's state and its sweep of the timer heap, while a 1 ms timer comes due
// many times. A run queued just before the shutdown may still start (one at most).
std::atomic<bool> shutdown_began{false};
std::atomic<int> runs_after_shutdown_began{0};
void count_late_run(void *arg) {
    static_cast<std::atomic<long> *>(arg)->fetch_add(1);
    if (shutdown_began)
        runs_after_shutdown_began.fetch_add(1);
}

TEST(Timers, NoRunIsQueuedOnceAShutdownBegan) {
    for (int how : {CREW_DRAIN, CREW_CANCEL}) {
        crew_pool *p = make_pool(2);
        std::atomic<long> n{0};
        shutdown_began = false;
        runs_after_shutdown_began = 0;
        crew_timer *t = nullptr;
        ASSERT_EQ(crew_timer_start(p, 0, kMs, CREW_TIMER_FIXED_RATE, count_late_run, &n, &t),
                  CREW_OK);
        while (n.load() < 2)
            sleep_ms(1);
        crew__test_shutdown_closing = [] {
            shutdown_began = true;
            sleep_ms(50);
        };
        ASSERT_EQ(crew_shutdown(p, how), CREW_OK);
        crew__test_shutdown_closing = nullptr;
        EXPECT_LE(runs_after_shutdown_began.load(), 1) << "how " << how;
        EXPECT_EQ(crew_timer_stop(t), CREW_OK);
        crew_destroy(p);
    }
}

// Two crew_shutdown calls at once: neither returns before the timer thread is gone (the hook
// holds its exit open).
std::atomic<bool> timer_thread_gone{false};

TEST(Timers, ConcurrentShutdownsBothWaitForTheTimerThread) {
    crew_pool *p = make_pool(2);
    std::atomic<long> n{0};
    ASSERT_EQ(crew_submit_after(p, 0, bump, &n, 0, nullptr), CREW_OK); // makes the thread
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    timer_thread_gone = false;
    crew__test_timer_exit = [] {
        sleep_ms(100);
        timer_thread_gone = true;
    };
    std::atomic<int> early{0};
    auto shut = [&] {
        EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
        if (!timer_thread_gone)
            early.fetch_add(1);
    };
    std::thread a(shut), b(shut);
    a.join();
    b.join();
    crew__test_timer_exit = nullptr;
    EXPECT_EQ(early.load(), 0);
    EXPECT_EQ(n.load(), 1);
    crew_destroy(p);
}

// on_drop of a timer's run dropped by a cancelling shutdown: a crew_timer_stop from another
// thread waits for it, so the arg its caller frees afterwards is not in use. on_drop holds the
// window open; it would see the arg freed if the stop returned while it ran.
struct DropWatch {
    std::atomic<bool> entered{false}, freed{false}, used_after_free{false};
};
DropWatch *drop_watch;
void slow_timer_drop(crew_fn fn, void *task_arg, void *) {
    if (fn != bump || task_arg == nullptr)
        return;
    drop_watch->entered = true;
    sleep_ms(100);
    if (drop_watch->freed)
        drop_watch->used_after_free = true;
}

TEST(Timers, StopWaitsForTheOnDropOfADroppedRun) {
    DropWatch w;
    drop_watch = &w;
    crew_config cfg;
    crew_config_init(&cfg);
    static crew_hooks hooks{};
    hooks.size = sizeof hooks;
    hooks.on_drop = slow_timer_drop;
    cfg.threads = 1;
    cfg.hooks = &hooks;
    crew_pool *p = make_pool(cfg);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    std::atomic<long> n{0};
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, 0, kHour, CREW_TIMER_FIXED_RATE, bump, &n, &t), CREW_OK);
    for (;;) { // its run is queued on the paused pool
        crew_stats st{};
        st.size = sizeof st;
        ASSERT_EQ(crew_stats_get(p, &st), CREW_OK);
        if (st.queued != 0)
            break;
        sleep_ms(1);
    }
    std::thread shut([p] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
    while (!w.entered)
        sleep_ms(1);
    EXPECT_EQ(crew_timer_stop(t), CREW_OK); // waits for on_drop
    w.freed = true;
    shut.join();
    EXPECT_FALSE(w.used_after_free.load());
    EXPECT_EQ(n.load(), 0);
    crew_destroy(p);
}

// Re-entrancy: a timer's function that starts another timer, submits a delayed task into a
// group and waits for it, then stops its own timer.
struct Reentry {
    crew_pool *p;
    crew_timer *self = nullptr;
    crew_timer *other = nullptr;
    Stamp inner;
    std::atomic<int> wait_rc{1}, stop_rc{1}, start_rc{1};
    std::atomic<long> other_runs{0};
};
void reentrant(void *arg) {
    auto *r = static_cast<Reentry *>(arg);
    r->start_rc = crew_timer_start(r->p, kMs, 0, 0, bump, &r->other_runs, &r->other);
    crew_handle g = CREW_HANDLE_NONE;
    if (crew_submit_after(r->p, 2 * kMs, stamp, &r->inner, 0, &g) == CREW_OK)
        r->wait_rc = crew_wait(r->p, g);
    r->stop_rc = crew_timer_stop(r->self);
}

TEST(Timers, CallbacksMayStartTimersWaitOnGroupsAndStopThemselves) {
    crew_pool *p = make_pool(1); // one worker: the wait inside the run must not need another
    Reentry r;
    r.p = p;
    ASSERT_EQ(crew_timer_start(p, 0, kMs, CREW_TIMER_FIXED_RATE, reentrant, &r, &r.self), CREW_OK);
    while (r.stop_rc.load() == 1)
        sleep_ms(1);
    EXPECT_EQ(r.start_rc.load(), CREW_OK);
    EXPECT_EQ(r.wait_rc.load(), CREW_OK);
    EXPECT_EQ(r.inner.runs.load(), 1);
    EXPECT_EQ(r.stop_rc.load(), CREW_OK);
    while (r.other_runs.load() < 1)
        sleep_ms(1);
    EXPECT_EQ(crew_timer_stop(r.other), CREW_OK);
    crew_destroy(p);
}

TEST(Timers, DeadlineOfADelayedTask) {
    crew_pool *p = pool_with(1);
    Gate g;
    g.hold(p, 1);
    std::atomic<long> ran{0};
    crew_handle h = CREW_HANDLE_NONE;
    uint64_t when = crew_now_ns() + 2 * kMs;
    ASSERT_EQ(crew_submit_at_ex(p, when, bump, &ran, 0, 0, when + kMs, &h), CREW_OK);
    while (crew_now_ns() <= when + kMs) // past its start-by time, the worker still held
        sleep_ms(1);
    g.open();
    EXPECT_EQ(crew_wait(p, h), CREW_EEXPIRED);
    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(drops.load(), 1);
    // In time, and as a blocking task.
    crew_handle k = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_at_ex(p, crew_now_ns() + kMs, bump, &ran, 0, CREW_TASK_BLOCKING,
                                crew_now_ns() + kHour, &k),
              CREW_OK);
    EXPECT_EQ(crew_wait(p, k), CREW_OK);
    EXPECT_EQ(ran.load(), 1);
    crew_destroy(p);
}

TEST(Timers, DiagnoseListsWhatWaits) {
    crew_pool *p = make_pool(1);
    std::atomic<long> n{0};
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, kHour, kMs, CREW_TIMER_FIXED_RATE, crew_timers_test_tick, &n, &t),
              CREW_OK);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_after(p, kHour, bump, &n, 0, &g), CREW_OK);
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT_GE(crew_diagnose(p, f), 0);
    fclose(f);
    std::string out(buf, len);
    free(buf);
    EXPECT_NE(out.find("1 delayed tasks waiting, 1 periodic timers (1 armed)"), std::string::npos)
        << out;
    EXPECT_NE(out.find("every 1.000 ms, armed, next run in"), std::string::npos) << out;
    // The timer's function by its symbol (this program exports them; the name as the linker
    // knows it, mangled in C++) and by object and offset.
    size_t sym = out.find("crew_timers_test_tick");
    ASSERT_NE(sym, std::string::npos) << out;
    EXPECT_EQ(out.find("+0x0, /", sym), out.find("+0x", sym)) << out;
    EXPECT_NE(out.find("/test_timers+0x", sym), std::string::npos) << out;
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    ASSERT_EQ(crew_timer_stop(t), CREW_OK);
    f = open_memstream(&buf, &len);
    ASSERT_GE(crew_diagnose(p, f), 0);
    fclose(f);
    out.assign(buf, len);
    free(buf);
    EXPECT_EQ(out.find("delayed tasks waiting"), std::string::npos) << out;
    crew_destroy(p);
}

TEST(Timers, TimerRunsAppearInTheTimelineUnderTheirFunction) {
    crew_pool *p = make_pool(1);
    // One file per process: ctest runs this test under several strategies at once.
    std::string path =
        testing::TempDir() + "crew_timers_trace." + std::to_string(getpid()) + ".json";
    int rc = crew_trace_start(p, path.c_str());
    if (rc == CREW_ENOTSUP) {
        crew_destroy(p);
        GTEST_SKIP() << "built without monitoring";
    }
    ASSERT_EQ(rc, CREW_OK);
    std::atomic<long> n{0};
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, 0, kMs, CREW_TIMER_FIXED_RATE, crew_timers_test_tick, &n, &t),
              CREW_OK);
    while (n.load() < 3)
        sleep_ms(1);
    ASSERT_EQ(crew_timer_stop(t), CREW_OK);
    ASSERT_EQ(crew_trace_stop(p), CREW_OK);
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string json = ss.str();
    EXPECT_NE(json.find("crew_timers_test_tick"), std::string::npos) << json;
    EXPECT_EQ(json.find("crew__timer_run"), std::string::npos);
    std::remove(path.c_str());
    crew_destroy(p);
}

TEST(Timers, ForkedChildCannotUseTheParentsTimers) {
    crew_pool *p = make_pool(1);
    Periodic c;
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, 0, kMs, CREW_TIMER_FIXED_RATE, periodic, &c, &t), CREW_OK);
    wait_runs(c, 1);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        std::atomic<long> n{0};
        crew_timer *u = nullptr;
        int ok = crew_submit_after(p, 0, bump, &n, 0, nullptr) == CREW_EFORKED &&
                 crew_timer_start(p, 0, kMs, 0, bump, &n, &u) == CREW_EFORKED &&
                 crew_timer_stop(t) == CREW_EFORKED;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int runs = c.runs.load();
    wait_runs(c, runs + 2); // the parent's timer goes on
    EXPECT_EQ(crew_timer_stop(t), CREW_OK);
    crew_destroy(p);
}

long rss_kb() {
    std::ifstream f("/proc/self/statm");
    long size = 0, resident = 0;
    f >> size >> resident;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

TEST(Timers, AMillionPendingEntriesAreCreatedAndCancelled) {
    crew_pool *p = pool_with(2);
    const long n = scaled(1000000);
    std::atomic<long> ran{0};
    std::vector<crew_timer *> timers(static_cast<size_t>(n / 4));
    long peak_growth = 0;
    for (int round = 0; round < 2; round++) {
        long before = rss_kb();
        crew_handle g = CREW_HANDLE_NONE;
        drops = 0;
        for (long i = 0; i < n; i++)
            ASSERT_EQ(crew_submit_after(p, kHour + static_cast<uint64_t>(i % 1000) * kMs, bump,
                                        &ran, 0, &g),
                      CREW_OK);
        for (auto &t : timers)
            ASSERT_EQ(crew_timer_start(p, kHour, kMs, CREW_TIMER_FIXED_RATE, bump, &ran, &t),
                      CREW_OK);
        ASSERT_EQ(crew_cancel(p, g), CREW_OK);
        EXPECT_EQ(drops.load(), n);
        EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
        for (auto *t : timers)
            ASSERT_EQ(crew_timer_stop(t), CREW_OK);
        long growth = rss_kb() - before;
        // The second round reuses the memory of the first: nothing accumulates. Not under
        // sanitizers or valgrind: their allocators hold freed memory back (ASan's quarantine).
        if (round == 0) {
            peak_growth = growth;
        } else if (!crewtest::slow_build()) {
            EXPECT_LT(growth, std::max(peak_growth / 2, 16L * 1024)) << growth;
        }
    }
    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

// Stress: 8 threads submit delayed tasks (some into groups they cancel), start and stop timers,
// while the main thread resizes and pauses the pool, then shuts it down (draining or
// cancelling): every delayed task accepted runs exactly once or is reported exactly once.
struct StressTask {
    std::atomic<int> ran{0}, dropped{0};
};
void stress_run(void *arg) { static_cast<StressTask *>(arg)->ran.fetch_add(1); }
void stress_tick(void *) {}
void stress_drop(crew_fn fn, void *arg, void *) {
    if (fn == stress_run)
        static_cast<StressTask *>(arg)->dropped.fetch_add(1);
}

TEST(Timers, StressAddCancelStopWhileResizingPausingAndShuttingDown) {
    for (int how : {CREW_DRAIN, CREW_CANCEL}) {
        crew_config cfg;
        crew_config_init(&cfg);
        static crew_hooks hooks{};
        hooks.size = sizeof hooks;
        hooks.on_drop = stress_drop;
        cfg.threads = 4;
        cfg.hooks = &hooks;
        crew_pool *p = make_pool(cfg);
        const int threads = 8;
        const long per = scaled(4000);
        std::vector<StressTask> tasks(static_cast<size_t>(threads * per));
        std::vector<int> accepted(tasks.size(), 0);
        std::atomic<bool> done{false};
        std::atomic<int> finished{0};
        std::vector<std::vector<crew_timer *>> left(threads);
        std::vector<std::thread> ts;
        for (int k = 0; k < threads; k++)
            ts.emplace_back([&, k] {
                std::mt19937 rng(static_cast<unsigned>(k));
                crew_handle g = CREW_HANDLE_NONE;
                std::vector<crew_timer *> mine;
                for (long i = 0; i < per; i++) {
                    size_t id = static_cast<size_t>(k * per + i);
                    uint64_t delay = (rng() % 2000) * 1000; // up to 2 ms
                    int rc = crew_submit_after(p, delay, stress_run, &tasks[id], 0,
                                               rng() % 4 == 0 ? &g : nullptr);
                    if (rc == CREW_ECANCELED) { // the group was cancelled: a new one
                        g = CREW_HANDLE_NONE;
                        rc = crew_submit_after(p, delay, stress_run, &tasks[id], 0, nullptr);
                    }
                    accepted[id] = rc == CREW_OK;
                    if (rc != CREW_OK && rc != CREW_ESHUTDOWN)
                        ADD_FAILURE() << crew_strerror(rc);
                    if (rng() % 64 == 0 && !(g.slot == 0 && g.gen == 0))
                        crew_cancel(p, g); // CREW_ESTALE if it finished: fine
                    if (rng() % 32 == 0) {
                        crew_timer *t = nullptr;
                        if (crew_timer_start(p, rng() % 1000 * 1000, 100000 + rng() % 500000,
                                             rng() % 2, stress_tick, nullptr, &t) == CREW_OK)
                            mine.push_back(t);
                    }
                    if (!mine.empty() && rng() % 48 == 0) {
                        EXPECT_EQ(crew_timer_stop(mine.back()), CREW_OK);
                        mine.pop_back();
                    }
                }
                left[static_cast<size_t>(k)] = mine;
                finished.fetch_add(1);
            });
        std::thread shaker([&] {
            unsigned sizes[] = {1, 3, 2, 6, 1, 4};
            for (int i = 0; !done.load(); i++) {
                crew_resize(p, sizes[i % 6]);
                if (i % 3 == 0) {
                    crew_pause(p);
                    sleep_ms(1);
                    crew_resume(p);
                }
                sleep_ms(1);
            }
        });
        while (finished.load() < threads / 2) // shut down while half of them still submit
            sleep_ms(1);
        done = true;
        shaker.join();
        ASSERT_EQ(crew_shutdown(p, how), CREW_OK);
        for (auto &t : ts)
            t.join();
        for (auto &mine : left)
            for (auto *t : mine)
                EXPECT_EQ(crew_timer_stop(t), CREW_OK);
        for (size_t i = 0; i < tasks.size(); i++) {
            int seen = tasks[i].ran.load() + tasks[i].dropped.load();
            ASSERT_EQ(seen, accepted[i]) << "task " << i << " how " << how;
        }
        crew_destroy(p);
    }
}

// C++: pool::submit_after returns a future; crew::timer stops in its destructor.
TEST(TimersCpp, SubmitAfterAndTimer) {
    crew::options o;
    o.threads = 2;
    crew::pool p(o);
    auto t0 = std::chrono::steady_clock::now();
    auto fut = p.submit_after(std::chrono::milliseconds(10), [](int x) { return x * 2; }, 21);
    EXPECT_EQ(fut.get(), 42);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(10));
    std::atomic<int> runs{0};
    {
        crew::timer t(p, std::chrono::milliseconds(1), std::chrono::milliseconds(1),
                      [&] { runs.fetch_add(1); });
        EXPECT_TRUE(t.running());
        while (runs.load() < 3)
            sleep_ms(1);
    } // stopped here
    int after = runs.load();
    sleep_ms(10);
    EXPECT_EQ(runs.load(), after);
    // Stopped from inside its own function; and a throwing function goes to on_error.
    std::atomic<int> errors{0};
    p.on_error([&](std::exception_ptr) { errors.fetch_add(1); });
    crew::timer self;
    std::mutex self_m; // orders the assignment to self before the run that stops it
    std::atomic<int> n{0};
    std::atomic<bool> stopped{false};
    {
        std::lock_guard<std::mutex> g(self_m);
        self = crew::timer(p, std::chrono::milliseconds(0), std::chrono::milliseconds(1), [&] {
            if (n.fetch_add(1) == 1) {
                {
                    std::lock_guard<std::mutex> l(self_m);
                    self.stop();
                }
                stopped = true;
                throw std::runtime_error("reported");
            }
        });
    }
    while (!stopped.load())
        sleep_ms(1);
    sleep_ms(10);
    EXPECT_EQ(n.load(), 2);
    while (errors.load() < 1)
        sleep_ms(1);
    EXPECT_EQ(errors.load(), 1);
    p.join();
    EXPECT_THROW(p.submit_after(std::chrono::milliseconds(1), [] {}), crew::error);
}

#ifdef TEST_CORO
crew::task<long> nap(crew::pool &p, std::chrono::milliseconds d) {
    auto t0 = std::chrono::steady_clock::now();
    co_await crew::sleep_for(p, d);
    co_return std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - t0)
        .count();
}

TEST(TimersCpp, SleepForBlocksNoThread) {
    crew::options o;
    o.threads = 1;
    crew::pool p(o);
    std::atomic<bool> ran_during{false}, woke{false};
    std::thread sleeper([&] {
        EXPECT_GE(crew::sync_wait(nap(p, std::chrono::milliseconds(300))), 300);
        woke = true;
    });
    sleep_ms(5);
    // The only worker is free while the coroutine sleeps: a task runs meanwhile.
    p.submit([&] { ran_during = !woke.load(); }).get();
    EXPECT_TRUE(ran_during.load());
    sleeper.join();
}
#endif

} // namespace
