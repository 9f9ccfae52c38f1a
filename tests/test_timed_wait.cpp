// test_timed_wait.cpp -- waits with a time-out (crew_wait_timed, crew_wait_all_timed, and in
// crew.hpp group/pool::wait_for and wait_until, std::future::wait_for): a time-out returns
// CREW_ETIMEDOUT and leaves the group running, to be waited for again; the timed wait helps;
// nested inside tasks, with the same EDEADLK rules as crew_wait; a time-out of 0 polls without
// running anything, and huge ones wait without limit; on a paused pool; bad input; many timed
// waiters at once. Assertions are about what happened, never about how long it took: a wait
// that timed out has returned, and what it ran has finished.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

constexpr uint64_t kMs = 1000000u;         // one millisecond in ns
constexpr uint64_t kLong = 600000u * kMs;  // ten minutes: "long enough" (the watchdog's scale)

void bump(void *arg) { static_cast<std::atomic<long> *>(arg)->fetch_add(1); }

void open_gate(void *arg) { static_cast<Gate *>(arg)->open(); }

bool last_error_has(const char *text) { return std::strstr(crew_last_error(), text) != nullptr; }

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
    EXPECT_EQ(crew_wait_timed(p, g, kLong), CREW_ECANCELED);
    EXPECT_EQ(crew_wait_timed(p, g, 0), CREW_ECANCELED);
    EXPECT_EQ(runs.load(), 0);
    gate.open();
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

// ---- The timed wait helps ----------------------------------------------------------------------

// The only worker is held by a task that only a queued task of the same group releases: the
// group can finish only if the waiting caller runs that task.
TEST(TimedWait, HelpsRunTheGroupsTasks) {
    crew_pool *p = make_pool(1);
    Gate gate;
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
    gate.wait_arrivals(1);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    ASSERT_EQ(crew_submit(p, open_gate, &gate, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, kLong), CREW_OK);
    EXPECT_EQ(runs.load(), 50);
    crew_destroy(p);
}

TEST(TimedWait, AllHelpsRunQueuedTasks) {
    crew_pool *p = make_pool(1);
    Gate gate;
    std::atomic<long> runs{0};
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_submit(p, open_gate, &gate, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_wait_all_timed(p, kLong), CREW_OK);
    EXPECT_EQ(runs.load(), 50);
    crew_destroy(p);
}

// A task the helper took runs to its end: the wait returns after it, never in its middle, even
// when the time-out passes while it runs (the task outlasts the wait's time-out on purpose).
struct Long {
    std::atomic<int> started{0}, finished{0};
    std::atomic<uint64_t> outlast{0}; // crew_now_ns() the task runs past
};
void long_task(void *arg) {
    auto *l = static_cast<Long *>(arg);
    l->started++;
    while (crew_now_ns() < l->outlast.load())
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    l->finished++;
}

TEST(TimedWait, AHelperReturnsOnlyAfterTheTaskItRuns) {
    crew_pool *p = make_pool(1);
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK); // g cannot finish
    gate.wait_arrivals(1);
    Long l;
    const uint64_t timeout = 50 * kMs;
    l.outlast = crew_now_ns() + 2 * timeout;
    ASSERT_EQ(crew_submit(p, long_task, &l, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, timeout), CREW_ETIMEDOUT);
    EXPECT_EQ(l.started.load(), l.finished.load()) << "the wait returned in the middle of a task";
    EXPECT_GE(crew_now_ns(), l.started.load() ? l.outlast.load() : 0);
    gate.open();
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(l.finished.load(), 1);
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

TEST(TimedWait, CppGroupWaitForInsideATaskHelps) {
    crew::pool pool(crew::options{1});
    std::atomic<long> runs{0};
    auto f = pool.submit([&] {
        crew::group g(pool);
        for (int i = 0; i < 20; i++)
            g.run([&] { runs++; });
        return g.wait_for(std::chrono::hours(1)); // the only worker: it runs them itself
    });
    EXPECT_TRUE(f.get());
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
