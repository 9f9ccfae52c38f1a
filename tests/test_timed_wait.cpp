// test_timed_wait.cpp -- waits with a time-out (crew_wait_timed, crew_wait_all_timed, and in
// crew.hpp group/pool::wait_for and wait_until, std::future::wait_for): a time-out returns
// CREW_ETIMEDOUT and leaves the group running, to be waited for again; a timed wait runs no
// task, so no queued task, however long, single or in an array, holds it past its time-out (and
// inside the only worker's task it times out); nested inside tasks, with the same EDEADLK rules
// as crew_wait; a time-out of 0 polls, and huge ones wait without limit (and help, as crew_wait);
// on a paused pool; bad input; many timed waiters at once. Assertions are about what happened,
// never about how long it took: a wait that timed out has returned before a task it would have
// had to run or wait for could have ended.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::bump;
using crewtest::Gate;
using crewtest::last_error_has;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

constexpr uint64_t kMs = 1000000u;         // one millisecond in ns
constexpr uint64_t kLong = 600000u * kMs;  // ten minutes: "long enough" (the watchdog's scale)

void open_gate(void *arg) { static_cast<Gate *>(arg)->open(); }

// ---- Time-outs leave the group running -------------------------------------------------------

TEST(TimedWait, TimesOutThenTheGroupFinishesAndCanBeWaitedFor) {
    crew_pool *p = make_pool(2);
    Gate gate;
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
    gate.wait_arrivals(1);
    EXPECT_EQ(crew_wait_timed(p, g, 2 * kMs), CREW_ETIMEDOUT);
    EXPECT_TRUE(last_error_has("crew_wait_timed")) << crew_last_error();
    EXPECT_TRUE(last_error_has("had not finished")) << crew_last_error();
    // The group is still open: it takes more tasks, and times out again.
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, 1 * kMs), CREW_ETIMEDOUT);
    gate.open();
    EXPECT_EQ(crew_wait_timed(p, g, kLong), CREW_OK);
    EXPECT_EQ(runs.load(), 1);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, 0), CREW_OK); // finished: a poll answers at once
    crew_destroy(p);
}

TEST(TimedWait, ACancelledGroupAnswersCanceledNotTimedOut) {
    crew_pool *p = make_pool(1);
    Gate gate;
    gate.hold(p, 1);
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    // Tasks the cancel could not take out of their queue are dropped when a thread comes to
    // them: the worker, once free (a timed wait runs and drops none).
    gate.open();
    EXPECT_EQ(crew_wait_timed(p, g, kLong), CREW_ECANCELED);
    EXPECT_EQ(crew_wait_timed(p, g, 0), CREW_ECANCELED);
    EXPECT_EQ(runs.load(), 0);
    crew_destroy(p);
}

TEST(TimedWait, AllTimesOutThenTheTasksFinish) {
    crew_pool *p = make_pool(2);
    Gate gate;
    std::atomic<long> runs{0};
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    EXPECT_EQ(crew_wait_all_timed(p, 2 * kMs), CREW_ETIMEDOUT);
    EXPECT_TRUE(last_error_has("crew_wait_all_timed")) << crew_last_error();
    EXPECT_EQ(crew_wait_all_timed(p, 0), CREW_ETIMEDOUT);
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    gate.open();
    EXPECT_EQ(crew_wait_all_timed(p, kLong), CREW_OK);
    EXPECT_EQ(runs.load(), 1);
    EXPECT_EQ(crew_wait_all_timed(p, 0), CREW_OK); // quiet: a poll says so
    crew_destroy(p);
}

// ---- A timed wait runs no task -----------------------------------------------------------------

// A task that lasts until it is released, or at most kCap: long enough that a wait that ran it,
// or waited for it, could not have returned before the test released it. It records whether it
// ran on the waiting thread.
constexpr auto kCap = std::chrono::seconds(5);
struct Slow {
    std::atomic<bool> released{false};
    std::atomic<int> started{0}, finished{0}, on_waiter{0};
    std::thread::id waiter = std::this_thread::get_id();
    std::chrono::nanoseconds len = kCap; // a task's length unless released earlier
};
void slow_task(void *arg) {
    auto *s = static_cast<Slow *>(arg);
    s->started++;
    if (std::this_thread::get_id() == s->waiter)
        s->on_waiter++;
    auto end = std::chrono::steady_clock::now() + s->len;
    while (!s->released.load() && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    s->finished++;
}

// The frame of the tests below: a pool whose only worker is held at a gate by a task (of group
// held, or of no group), and slow tasks (group g) queued behind it; release() lets them all end.
struct Held {
    crew_pool *p = make_pool(1);
    Gate gate;
    crew_handle held = CREW_HANDLE_NONE; // the holding task's group, if it has one
    Slow s;
    crew_handle g = CREW_HANDLE_NONE;
    std::vector<crew_task> t; // enqueue_array's tasks
    explicit Held(bool grouped = false) {
        if (!grouped) {
            gate.hold(p, 1);
            return;
        }
        if (crew_submit(p, Gate::block, &gate, 0, &held) != CREW_OK)
            std::abort();
        gate.wait_arrivals(1);
    }
    void release() {
        s.released = true;
        gate.open();
    }
    void enqueue_array();
};

// The only worker is held; the group's one task would take seconds. The timed wait must not run
// it: it gives up at its time-out, long before the task could have ended.
TEST(TimedWait, ALongTaskOfTheGroupDoesNotHoldTheWaitPastItsTimeOut) {
    Held h;
    ASSERT_EQ(crew_submit(h.p, slow_task, &h.s, 0, &h.g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(h.p, h.g, 20 * kMs), CREW_ETIMEDOUT);
    EXPECT_EQ(h.s.finished.load(), 0) << "the wait returned only after the task it waited for";
    EXPECT_EQ(h.s.on_waiter.load(), 0);
    h.release();
    EXPECT_EQ(crew_wait(h.p, h.g), CREW_OK);
    EXPECT_EQ(h.s.finished.load(), 1);
    crew_destroy(h.p);
}

TEST(TimedWait, AllALongQueuedTaskDoesNotHoldTheWaitPastItsTimeOut) {
    Held h;
    ASSERT_EQ(crew_submit(h.p, slow_task, &h.s, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_wait_all_timed(h.p, 20 * kMs), CREW_ETIMEDOUT);
    EXPECT_EQ(h.s.finished.load(), 0) << "the wait returned only after a task it ran";
    h.release();
    EXPECT_EQ(crew_wait_all(h.p), CREW_OK);
    EXPECT_EQ(h.s.finished.load(), 1);
    crew_destroy(h.p);
}

// An array (crew_enqueue_tasks of 200 tasks: runners that claim chunks) of 2 ms tasks behind a
// held worker: whether the wait is for the array's group, for another group, or for the whole
// pool, it gives up without having run them (at most one may have started on its thread
// before its time-out, and none is allowed to by the rule; the bound checked is the rule's).
constexpr int kArray = 200;
void Held::enqueue_array() {
    s.len = std::chrono::milliseconds(2);
    t.assign(kArray, crew_task{});
    for (auto &x : t) {
        x.fn = slow_task;
        x.arg = &s;
    }
    ASSERT_EQ(crew_enqueue_tasks(p, t.data(), t.size(), &g), CREW_OK);
}

TEST(TimedWait, AnArrayOfTheGroupIsNotRunByTheWaiter) {
    Held h;
    h.enqueue_array();
    EXPECT_EQ(crew_wait_timed(h.p, h.g, 10 * kMs), CREW_ETIMEDOUT);
    EXPECT_LE(h.s.on_waiter.load(), 1) << "the timed wait ran the array's tasks";
    h.release();
    EXPECT_EQ(crew_wait(h.p, h.g), CREW_OK);
    EXPECT_EQ(h.s.finished.load(), kArray);
    crew_destroy(h.p);
}

TEST(TimedWait, AnArrayOfAnotherGroupIsNotRunByTheWaiter) {
    Held h(true); // the group waited for: its task holds the worker
    h.enqueue_array();
    EXPECT_EQ(crew_wait_timed(h.p, h.held, 10 * kMs), CREW_ETIMEDOUT);
    EXPECT_LE(h.s.on_waiter.load(), 1) << "the timed wait ran another group's tasks";
    h.release();
    EXPECT_EQ(crew_wait(h.p, h.g), CREW_OK);
    EXPECT_EQ(crew_wait(h.p, h.held), CREW_OK);
    EXPECT_EQ(h.s.finished.load(), kArray);
    crew_destroy(h.p);
}

TEST(TimedWait, AllAnArrayIsNotRunByTheWaiter) {
    Held h;
    h.enqueue_array();
    EXPECT_EQ(crew_wait_all_timed(h.p, 10 * kMs), CREW_ETIMEDOUT);
    EXPECT_LE(h.s.on_waiter.load(), 1) << "the timed wait ran the array's tasks";
    h.release();
    EXPECT_EQ(crew_wait_all(h.p), CREW_OK);
    EXPECT_EQ(h.s.finished.load(), kArray);
    crew_destroy(h.p);
}

// Queued tasks that only a caller's help could run (the only worker is held until the last of
// them opens the gate): the timed wait leaves them queued and times out; crew_wait, which
// helps, then runs them.
TEST(TimedWait, LeavesQueuedTasksToTheWorkers) {
    crew_pool *p = make_pool(1);
    Gate gate;
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
    gate.wait_arrivals(1);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    ASSERT_EQ(crew_submit(p, open_gate, &gate, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, 5 * kMs), CREW_ETIMEDOUT);
    EXPECT_EQ(runs.load(), 0) << "a timed wait ran a task";
    EXPECT_EQ(crew_wait_all_timed(p, 5 * kMs), CREW_ETIMEDOUT);
    EXPECT_EQ(runs.load(), 0) << "a timed wait ran a task";
    EXPECT_EQ(crew_wait(p, g), CREW_OK); // helps: runs them, and open_gate frees the worker
    EXPECT_EQ(runs.load(), 50);
    crew_destroy(p);
}

// Inside the only worker's task, a timed wait for tasks that task queued cannot be helped by
// anyone: it times out (no deadlock), and an untimed crew_wait then runs them itself.
struct OneThread {
    crew_pool *p;
    std::atomic<long> runs{0};
    int timed = 1, ran_before = -1, untimed = 1;
};
void wait_children_timed(void *arg) {
    auto *o = static_cast<OneThread *>(arg);
    crew_handle c = CREW_HANDLE_NONE;
    for (int i = 0; i < 5; i++)
        if (crew_submit(o->p, bump, &o->runs, 0, &c) != CREW_OK)
            std::abort();
    o->timed = crew_wait_timed(o->p, c, 20 * kMs);
    o->ran_before = int(o->runs.load());
    o->untimed = crew_wait(o->p, c);
}

TEST(TimedWait, InsideTheOnlyWorkersTaskTimesOut) {
    crew_pool *p = make_pool(1);
    OneThread o{p};
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, wait_children_timed, &o, 0, &h), CREW_OK);
    ASSERT_EQ(crew_wait_timed(p, h, kLong), CREW_OK);
    EXPECT_EQ(o.timed, CREW_ETIMEDOUT);
    EXPECT_EQ(o.ran_before, 0);
    EXPECT_EQ(o.untimed, CREW_OK);
    EXPECT_EQ(o.runs.load(), 5);
    crew_destroy(p);
}

// ---- Nested inside tasks ---------------------------------------------------------------------

struct Nest {
    crew_pool *p;
    Gate *gate;
    std::atomic<long> runs{0};
    int timed_out = 0, after = 0, own = 0, own_poll = 0, all = 0;
};

void nested_parent(void *arg) {
    auto *n = static_cast<Nest *>(arg);
    // Children the parent helps with: the timed wait returns once they ran.
    crew_handle c = CREW_HANDLE_NONE;
    for (int i = 0; i < 20; i++)
        if (crew_submit(n->p, bump, &n->runs, 0, &c) != CREW_OK)
            std::abort();
    n->after = crew_wait_timed(n->p, c, kLong);
    // A child held at a gate: the timed wait gives up, and the child's group goes on.
    crew_handle held = CREW_HANDLE_NONE;
    if (crew_submit(n->p, Gate::block, n->gate, 0, &held) != CREW_OK)
        std::abort();
    n->gate->wait_arrivals(1);
    n->timed_out = crew_wait_timed(n->p, held, 2 * kMs);
    n->gate->open();
    if (crew_wait(n->p, held) != CREW_OK)
        std::abort();
}

void wait_all_inside(void *arg) {
    auto *n = static_cast<Nest *>(arg);
    n->all = crew_wait_all_timed(n->p, kLong);
}

struct Self {
    crew_pool *p;
    crew_handle g;
    std::atomic<int> rc{1}, poll{1};
};
void wait_own(void *arg) {
    auto *s = static_cast<Self *>(arg);
    s->rc = crew_wait_timed(s->p, s->g, kLong);
    s->poll = crew_wait_timed(s->p, s->g, 0);
}

TEST(TimedWait, NestedInsideTasks) {
    crew_pool *p = make_pool(2);
    Gate gate;
    Nest n{p, &gate};
    crew_handle outer = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, nested_parent, &n, 0, &outer), CREW_OK);
    ASSERT_EQ(crew_wait(p, outer), CREW_OK);
    EXPECT_EQ(n.after, CREW_OK);
    EXPECT_EQ(n.runs.load(), 20);
    EXPECT_EQ(n.timed_out, CREW_ETIMEDOUT);
    // crew_wait_all_timed from a task: EDEADLK, as crew_wait_all.
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, wait_all_inside, &n, 0, &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(n.all, CREW_EDEADLK);
    crew_destroy(p);
}

TEST(TimedWait, OwnGroupFromInsideIsEdeadlkAlsoForAPoll) {
    crew_pool *p = make_pool(2);
    Self s;
    s.p = p;
    // The group's handle is known before its task runs: the task waits behind a gate task.
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
    gate.wait_arrivals(1);
    s.g = g;
    ASSERT_EQ(crew_submit(p, wait_own, &s, 0, &g), CREW_OK);
    // The task's waits return (EDEADLK) while the gate task still holds the group open.
    while (s.poll.load() == 1) {
        EXPECT_EQ(crew_wait_timed(p, g, 0), CREW_ETIMEDOUT); // from outside: a plain poll
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gate.open();
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(s.rc.load(), CREW_EDEADLK);
    EXPECT_EQ(s.poll.load(), CREW_EDEADLK);
    crew_destroy(p);
}

// ---- 0, huge time-outs, pause -----------------------------------------------------------------

TEST(TimedWait, ZeroPollsAndRunsNothing) {
    crew_pool *p = make_pool(1);
    Gate gate;
    gate.hold(p, 1);
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, 0), CREW_ETIMEDOUT);
    EXPECT_EQ(crew_wait_all_timed(p, 0), CREW_ETIMEDOUT);
    EXPECT_EQ(runs.load(), 0) << "a poll ran a task";
    EXPECT_EQ(crew_wait(p, g), CREW_OK); // the caller helps: the worker is still held
    EXPECT_EQ(runs.load(), 5);
    gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

// A time-out so long that now + timeout_ns overflows waits without limit (it must not wrap into
// a time already past).
TEST(TimedWait, HugeTimeoutsWaitWithoutLimit) {
    for (uint64_t timeout :
         {UINT64_MAX, UINT64_MAX - 1, UINT64_MAX / 2 + 12345, uint64_t(1) << 62}) {
        crew_pool *p = make_pool(2);
        Gate gate;
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
        std::thread opener([&] {
            gate.wait_arrivals(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            gate.open();
        });
        EXPECT_EQ(crew_wait_timed(p, g, timeout), CREW_OK) << timeout;
        ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK); // open: returns
        EXPECT_EQ(crew_wait_all_timed(p, timeout), CREW_OK) << timeout;
        opener.join();
        crew_destroy(p);
    }
}

TEST(TimedWait, PausedPoolTimesOutAndResumes) {
    crew_pool *p = make_pool(2);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, 2 * kMs), CREW_ETIMEDOUT);
    EXPECT_EQ(crew_wait_all_timed(p, 2 * kMs), CREW_ETIMEDOUT);
    EXPECT_EQ(runs.load(), 0) << "a paused pool ran a task";
    ASSERT_EQ(crew_resume(p), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, kLong), CREW_OK);
    EXPECT_EQ(runs.load(), 10);
    crew_destroy(p);
}

// ---- Bad input ---------------------------------------------------------------------------------

TEST(TimedWait, BadInput) {
    crew_pool *p = make_pool(1);
    EXPECT_EQ(crew_wait_timed(nullptr, CREW_HANDLE_NONE, 0), CREW_EINVAL);
    EXPECT_EQ(crew_wait_timed(p, CREW_HANDLE_NONE, kMs), CREW_EINVAL);
    EXPECT_TRUE(last_error_has("crew_wait_timed")) << crew_last_error();
    crew_handle bogus = {12345, 7};
    EXPECT_EQ(crew_wait_timed(p, bogus, kMs), CREW_EINVAL);
    crew_handle g = CREW_HANDLE_NONE;
    std::atomic<long> runs{0};
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    crew_handle never = {g.slot, g.gen + 1000}; // a generation its slot never reached
    EXPECT_EQ(crew_wait_timed(p, never, 0), CREW_EINVAL);
    EXPECT_EQ(crew_wait_timed(p, never, kMs), CREW_EINVAL);
    EXPECT_EQ(crew_wait_all_timed(nullptr, kMs), CREW_EINVAL);
    EXPECT_TRUE(last_error_has("crew_wait_all_timed")) << crew_last_error();
    EXPECT_STREQ(crew_err_name(CREW_ETIMEDOUT), "ETIMEDOUT");
    EXPECT_NE(std::strstr(crew_strerror(CREW_ETIMEDOUT), "timed wait"), nullptr);
    crew_destroy(p);
}

// ---- Many timed waiters ------------------------------------------------------------------------

// Threads wait with short time-outs, again and again, for groups whose tasks finish at various
// times, while other tasks keep the pool busy: each wait answers CREW_OK or CREW_ETIMEDOUT, and
// every group finishes with every task run once.
TEST(TimedWait, ManyTimedWaitersWhileGroupsFinish) {
    crew_pool *p = make_pool(3);
    const int nthreads = 4, rounds = int(scaled(200));
    std::atomic<long> runs{0}, bad{0}, timeouts{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < nthreads; t++)
        ts.emplace_back([&, t] {
            for (int r = 0; r < rounds; r++) {
                crew_handle g = CREW_HANDLE_NONE;
                for (int i = 0; i < 1 + (r + t) % 7; i++)
                    if (crew_submit(p, bump, &runs, uint32_t(i % 3), &g) != CREW_OK)
                        bad++;
                int rc;
                while ((rc = crew_wait_timed(p, g, uint64_t((r % 4)) * 50000u)) ==
                       CREW_ETIMEDOUT) {
                    timeouts++;
                    std::this_thread::yield(); // a poll (r % 4 == 0) runs nothing itself
                }
                if (rc != CREW_OK)
                    bad++;
                if (r % 16 == 0 && crew_wait_all_timed(p, 100000u) != CREW_OK)
                    timeouts++; // others' tasks may still run: either answer is fine
            }
        });
    for (auto &th : ts)
        th.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(crew_wait_all_timed(p, kLong), CREW_OK);
    long expect = 0;
    for (int t = 0; t < nthreads; t++)
        for (int r = 0; r < rounds; r++)
            expect += 1 + (r + t) % 7;
    EXPECT_EQ(runs.load(), expect);
    std::printf("[ info ] %ld timed waits timed out\n", timeouts.load());
    crew_destroy(p);
}

// ---- C++ -----------------------------------------------------------------------------------

TEST(TimedWait, CppGroupWaitFor) {
    crew::pool pool(crew::options{2});
    Gate gate;
    crew::group g(pool);
    std::atomic<long> runs{0};
    g.run([&] { gate.block(&gate); });
    gate.wait_arrivals(1);
    g.run([&] { runs++; });
    EXPECT_FALSE(g.wait_for(std::chrono::milliseconds(2)));
    EXPECT_FALSE(g.wait_for(std::chrono::seconds(0)));
    EXPECT_FALSE(g.wait_for(std::chrono::milliseconds(-5)));
    EXPECT_FALSE(g.wait_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(2)));
    EXPECT_FALSE(pool.wait_for(std::chrono::milliseconds(2)));
    gate.open();
    EXPECT_TRUE(g.wait_for(std::chrono::hours(1)));
    EXPECT_EQ(runs.load(), 1);
    EXPECT_TRUE(pool.wait_until(std::chrono::steady_clock::now() + std::chrono::hours(1)));
    EXPECT_TRUE(pool.wait_for(std::chrono::seconds(0)));
    // No overflow for the longest durations: they wait without limit.
    g.run([&] { runs++; });
    EXPECT_TRUE(g.wait_for(std::chrono::hours::max()));
    EXPECT_TRUE(g.wait_for(std::chrono::nanoseconds::max()));
    EXPECT_TRUE(pool.wait_for(std::chrono::duration<double>(1e300)));
    EXPECT_EQ(runs.load(), 2);
    // A finished wait rethrows the first exception, as wait() does.
    g.run([] { throw std::runtime_error("timed boom"); });
    EXPECT_THROW(g.wait_for(std::chrono::hours(1)), std::runtime_error);
    // A cancelled group: crew::error (CREW_ECANCELED), as wait().
    Gate gate2;
    crew::group c(pool);
    c.run([&] { gate2.block(&gate2); });
    gate2.wait_arrivals(1);
    pool.pause();
    c.run([&] { runs++; });
    c.cancel();
    pool.resume();
    gate2.open();
    try {
        c.wait_for(std::chrono::hours(1));
        ADD_FAILURE() << "no exception";
    } catch (const crew::error &e) {
        EXPECT_EQ(e.code(), CREW_ECANCELED);
    }
}

TEST(TimedWait, CppGroupWaitForInsideATaskTimesOutOnOneThread) {
    crew::pool pool(crew::options{1});
    std::atomic<long> runs{0};
    auto f = pool.submit([&] {
        crew::group g(pool);
        for (int i = 0; i < 20; i++)
            g.run([&] { runs++; });
        // The only worker: nobody else runs them, and a timed wait runs none.
        bool in_time = g.wait_for(std::chrono::milliseconds(20));
        long before = runs.load();
        g.wait(); // helps: runs them itself
        return std::make_pair(in_time, before);
    });
    auto r = f.get();
    EXPECT_FALSE(r.first);
    EXPECT_EQ(r.second, 0);
    EXPECT_EQ(runs.load(), 20);
}

// The futures submit() returns are std::future: wait_for answers timeout while the task is held,
// ready once it has run. It does not help: with the only worker held and the task queued behind
// it, wait_for times out although a crew wait from this thread would have run the task.
TEST(TimedWait, CppFutureWaitForDoesNotHelp) {
    crew::pool pool(crew::options{1});
    Gate gate;
    pool.post([&] { gate.block(&gate); });
    gate.wait_arrivals(1);
    auto f = pool.submit([] { return 7; });
    EXPECT_EQ(f.wait_for(std::chrono::milliseconds(2)), std::future_status::timeout);
    EXPECT_EQ(f.wait_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(1)),
              std::future_status::timeout);
    gate.open();
    EXPECT_EQ(f.wait_for(std::chrono::hours(1)), std::future_status::ready);
    EXPECT_EQ(f.get(), 7);
}

} // namespace
