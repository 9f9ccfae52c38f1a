// test_coro.cpp -- crew_coro.hpp (C++20): crew::task, schedule / schedule_blocking, when_all,
// co_await on a crew::group and on a crew::graph run (through crew_notify), sync_wait; exceptions propagate; coroutines
// whose resumption the pool drops are resumed with the error; sync_wait on a worker helps; deep
// chains of co_awaits (where the compiler guarantees it) and loops of schedule or when_all do
// not grow the stack; when_all's edge cases; frames come from a per-thread cache, are kept by
// the thread that frees them (up to a cap) and given back at thread exit. Built only by a
// compiler with coroutines.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <pthread.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <unistd.h>
#include <utility>
#include <vector>

#include "common.h"
#include "crew_coro.hpp"

using crewtest::scaled;

namespace {

crew::options opts(unsigned threads) {
    crew::options o;
    o.threads = threads;
    return o;
}

std::string thread_name() {
    char buf[32] = {0};
    pthread_getname_np(pthread_self(), buf, sizeof buf);
    return buf;
}

long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

crew::task<long> fib(crew::pool &p, int n) {
    if (n < 2)
        co_return n;
    auto [a, b] = co_await crew::when_all(p, fib(p, n - 1), fib(p, n - 2));
    co_return a + b;
}

crew::task<long> fib_root(crew::pool &p, int n) {
    co_await crew::schedule(p);
    co_return co_await fib(p, n);
}

TEST(Coro, RecursiveFibOnThePool) {
    crew::pool p(opts(2));
    EXPECT_EQ(crew::sync_wait(fib_root(p, 18)), fib_seq(18));
    EXPECT_EQ(crew::sync_wait(fib_root(p, 1)), 1);
}

TEST(Coro, ScheduleMovesOntoAWorkerAndBlockingOntoABlockingThread) {
    crew::pool p(opts(2));
    auto body = [](crew::pool &pl) -> crew::task<std::string> {
        std::string names;
        co_await crew::schedule(pl);
        names += thread_name() + " ";
        co_await crew::schedule_blocking(pl);
        names += thread_name();
        co_return names;
    };
    std::string names = crew::sync_wait(body(p));
    // Workers are named <name>-<id>-w<index>, blocking threads <name>-<id>-b<index>.
    EXPECT_NE(names.find("-w"), std::string::npos) << names;
    EXPECT_NE(names.find("-b"), std::string::npos) << names;
}

// A pipeline: read (blocking I/O on a blocking thread), transform (on a worker), write
// (blocking again), for several files at once.
crew::task<std::string> read_file(crew::pool &p, std::string path) {
    co_await crew::schedule_blocking(p);
    std::string data;
    if (FILE *f = std::fopen(path.c_str(), "rb")) {
        char buf[256];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
            data.append(buf, n);
        std::fclose(f);
    } else {
        throw std::runtime_error("cannot open " + path);
    }
    co_return data;
}

crew::task<size_t> process(crew::pool &p, std::string in, std::string out) {
    std::string data = co_await read_file(p, in);
    co_await crew::schedule(p); // the CPU part on a worker
    for (char &c : data)
        c = char(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    co_await crew::schedule_blocking(p);
    FILE *f = std::fopen(out.c_str(), "wb");
    if (!f)
        throw std::runtime_error("cannot create " + out);
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
    co_return data.size();
}

TEST(Coro, PipelineAwaitsBlockingIo) {
    crew::pool p(opts(2));
    char dir[] = "/tmp/crew-coro-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    std::string d = dir;
    for (int i = 0; i < 3; i++) {
        FILE *f = std::fopen((d + "/in" + std::to_string(i)).c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fprintf(f, "file %d says hello", i);
        std::fclose(f);
    }
    auto all = [](crew::pool &pl, std::string dd) -> crew::task<size_t> {
        co_await crew::schedule(pl);
        auto [a, b, c] = co_await crew::when_all(pl, process(pl, dd + "/in0", dd + "/out0"),
                                                 process(pl, dd + "/in1", dd + "/out1"),
                                                 process(pl, dd + "/in2", dd + "/out2"));
        co_return a + b + c;
    };
    EXPECT_EQ(crew::sync_wait(all(p, d)), 3 * std::string("file 0 says hello").size());
    for (int i = 0; i < 3; i++) {
        FILE *f = std::fopen((d + "/out" + std::to_string(i)).c_str(), "rb");
        ASSERT_NE(f, nullptr);
        char buf[64] = {0};
        (void)!std::fread(buf, 1, sizeof buf - 1, f);
        std::fclose(f);
        EXPECT_EQ(std::string(buf), "FILE " + std::to_string(i) + " SAYS HELLO");
        unlink((d + "/out" + std::to_string(i)).c_str());
        unlink((d + "/in" + std::to_string(i)).c_str());
    }
    rmdir(dir);
    // A failed read's exception reaches the awaiter.
    auto missing = [](crew::pool &pl) -> crew::task<size_t> {
        co_await crew::schedule(pl);
        co_return co_await process(pl, "/nonexistent/crew", "/nonexistent/out");
    };
    EXPECT_THROW(crew::sync_wait(missing(p)), std::runtime_error);
}

crew::task<int> thrower(crew::pool &p, int n) {
    co_await crew::schedule(p);
    if (n == 3)
        throw std::logic_error("three");
    co_return n;
}

TEST(Coro, ExceptionsPropagate) {
    crew::pool p(opts(2));
    auto one = [](crew::pool &pl) -> crew::task<int> { co_return co_await thrower(pl, 3); };
    EXPECT_THROW(crew::sync_wait(one(p)), std::logic_error);
    auto several = [](crew::pool &pl) -> crew::task<int> {
        auto [a, b, c] = co_await crew::when_all(pl, thrower(pl, 1), thrower(pl, 3),
                                                 thrower(pl, 2));
        co_return a + b + c;
    };
    EXPECT_THROW(crew::sync_wait(several(p)), std::logic_error);
    auto caught = [](crew::pool &pl) -> crew::task<int> {
        try {
            co_await thrower(pl, 3);
        } catch (const std::logic_error &) {
            co_return -1;
        }
        co_return 0;
    };
    EXPECT_EQ(crew::sync_wait(caught(p)), -1);
}

crew::task<long> chain(int n) {
    if (n == 0)
        co_return 0;
    co_return 1 + co_await chain(n - 1);
}

// Where symmetric transfer is a guaranteed tail call (the top of crew_coro.hpp): clang at every
// optimisation level, with or without a sanitizer; gcc with -foptimize-sibling-calls (on at -O2,
// -O3 and -Os) and without ASan or TSan. No macro tells gcc's -O1 or -Og from -O2: the builds
// of this project use -O0 (Debug) or -O2 and above.
#if defined(__clang__) || (defined(__OPTIMIZE__) && !defined(CREW_SANITIZED))
constexpr bool flat_chains = true;
#else
constexpr bool flat_chains = false;
#endif

TEST(Coro, DeepChainsDoNotGrowTheStack) {
    // A million levels, far more than a thread's stack could hold as nested calls (8 bytes
    // each would fill 8 MiB): every co_await transfers to the next task and back (symmetric
    // transfer), in builds that make those transfers tail calls; elsewhere a moderate depth,
    // which any build holds.
    const int depth = flat_chains ? 1000000 : 1000;
    crew::pool p(opts(1));
    auto root = [](crew::pool &pl, int dd) -> crew::task<long> {
        co_await crew::schedule(pl);
        co_return co_await chain(dd);
    };
    EXPECT_EQ(crew::sync_wait(root(p, depth)), depth);
    EXPECT_EQ(crew::sync_wait(chain(1000)), 1000); // on this thread, with no pool
}

TEST(Coro, AwaitingAGroupSuspendsUntilItsTasksEnd) {
    crew::pool p(opts(2));
    std::atomic<int> ran{0};
    auto body = [](crew::pool &pl, std::atomic<int> &r) -> crew::task<int> {
        co_await crew::schedule(pl);
        crew::group g(pl);
        for (int i = 0; i < 20; i++)
            g.run([&r] {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                r.fetch_add(1);
            });
        co_await g; // no thread blocked meanwhile
        int seen = r.load();
        crew::group empty(pl);
        co_await empty; // nothing run: resumes at once
        crew::group bad(pl);
        bad.run([] { throw std::runtime_error("task"); });
        try {
            co_await bad;
        } catch (const std::runtime_error &) {
            seen += 1000;
        }
        co_return seen;
    };
    EXPECT_EQ(crew::sync_wait(body(p, ran)), 1020);
}

// co_await on a graph run (crew::graph::execution, through crew_notify): the coroutine resumes
// once every node has run, on a pool thread, holding none meanwhile; a node's exception is
// rethrown by the co_await; an execution waited for already throws crew::error at once.
TEST(Coro, AwaitingAGraphRunSuspendsUntilItEnds) {
    crew::pool p(opts(2));
    crew::graph g(p);
    std::atomic<int> ran{0}, fail{0};
    auto a = g.emplace([&] { ran++; });
    for (int i = 0; i < 10; i++)
        a.precede(g.emplace([&] {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            ran++;
        }));
    auto last = g.emplace([&] {
        if (fail.load())
            throw std::runtime_error("node");
    });
    last.succeed(a);
    auto body = [](crew::pool &pl, crew::graph &gr, std::atomic<int> &r,
                   std::atomic<int> &f) -> crew::task<int> {
        co_await crew::schedule(pl);
        co_await gr.run(); // no thread blocked meanwhile
        int seen = r.load();
        auto e = gr.run_n(2);
        co_await e;
        seen += r.load();
        try {
            co_await e; // waited for already
        } catch (const crew::error &x) {
            if (x.code() == CREW_EINVAL)
                seen += 100;
        }
        f = 1;
        try {
            co_await gr.run();
        } catch (const std::runtime_error &) {
            seen += 1000;
        }
        co_return seen;
    };
    EXPECT_EQ(crew::sync_wait(body(p, g, ran, fail)), 11 + 33 + 100 + 1000);
    // From a coroutine that never moved onto the pool: resumed on a pool thread all the same.
    fail = 0;
    auto off = [](crew::graph &gr) -> crew::task<std::string> {
        co_await gr.run();
        co_return thread_name();
    };
    EXPECT_NE(crew::sync_wait(off(g)).find("-w"), std::string::npos);
}

TEST(Coro, ManyConcurrentWhenAlls) {
    crew::pool p(opts(2));
    const int n = int(scaled(200));
    auto one = [](crew::pool &pl, int i) -> crew::task<long> {
        co_await crew::schedule(pl);
        auto [a, b] = co_await crew::when_all(pl, fib(pl, 6), fib(pl, 5));
        co_return a + b + i;
    };
    auto all = [](crew::pool &pl, int count, decltype(one) f) -> crew::task<long> {
        long total = 0;
        for (int i = 0; i < count; i++) {
            auto [x, y] = co_await crew::when_all(pl, f(pl, i), f(pl, -i));
            total += x + y;
        }
        co_return total;
    };
    EXPECT_EQ(crew::sync_wait(all(p, n, one)), long(n) * 2 * fib_seq(7));
}

// ---------------------------------------------------------------------------------------------
// when_all's edge cases, and the frames' per-thread cache.

crew::task<int> value(int v) { co_return v; }
crew::task<void> nothing(std::atomic<int> &ran) {
    ran.fetch_add(1);
    co_return;
}

TEST(Coro, WhenAllEdgeCases) {
    crew::pool p(opts(2));
    // One task; void tasks (std::monostate); a task awaited before (its result is still there).
    auto body = [](crew::pool &pl, std::atomic<int> &ran) -> crew::task<int> {
        auto [one] = co_await crew::when_all(pl, value(7));
        auto [v1, v2, x] = co_await crew::when_all(pl, nothing(ran), nothing(ran), value(1));
        static_assert(std::is_same_v<decltype(v1), std::monostate>);
        (void)v1, (void)v2;
        crew::task<int> done = value(5);
        int first = co_await std::move(done);
        auto [again, y] = co_await crew::when_all(pl, std::move(done), value(2));
        co_return one + x + first + again + y;
    };
    std::atomic<int> ran{0};
    EXPECT_EQ(crew::sync_wait(body(p, ran)), 7 + 1 + 5 + 5 + 2);
    EXPECT_EQ(ran.load(), 2);

    // A task that was moved from: crew::error (CREW_EINVAL), nothing started.
    auto moved = [](crew::pool &pl) -> crew::task<int> {
        crew::task<int> t = value(1);
        crew::task<int> taken = std::move(t);
        co_await crew::when_all(pl, value(2), std::move(t));
        co_return 0;
    };
    try {
        crew::sync_wait(moved(p));
        ADD_FAILURE() << "no error";
    } catch (const crew::error &e) {
        EXPECT_EQ(e.code(), CREW_EINVAL);
    }

    // Several children throw: the first by position is rethrown once all have ended.
    auto throwing = [](crew::pool &pl, std::atomic<int> &ended) -> crew::task<int> {
        auto child = [](crew::pool &pp, std::atomic<int> &e, int n) -> crew::task<int> {
            co_await crew::schedule(pp);
            e.fetch_add(1);
            if (n != 1)
                throw std::runtime_error(std::to_string(n));
            co_return n;
        };
        co_await crew::when_all(pl, child(pl, ended, 1), child(pl, ended, 2),
                                child(pl, ended, 3), child(pl, ended, 4));
        co_return 0;
    };
    std::atomic<int> ended{0};
    try {
        crew::sync_wait(throwing(p, ended));
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "2");
    }
    EXPECT_EQ(ended.load(), 4);
}

// This thread's cache (crew_coro.hpp, "Frames"): bytes of frames kept.
std::size_t kept() { return crew::detail::tls_frames.kept(); }

// value(v), but its frame is really allocated: a task created and destroyed in one function may
// have its frame on the stack instead (clang elides the allocation where it can prove that).
__attribute__((noinline)) crew::task<int> made(int v) { return value(v); }

TEST(Coro, FramesAreReusedFromTheThreadsCache) {
    if (!CREW_CORO_FRAME_CACHE)
        GTEST_SKIP() << "built with CREW_CORO_FRAME_CACHE=0";
    crew::detail::frame_cache_release(false);
    { crew::task<int> t = made(1); } // a frame of value's size class kept here
    const std::size_t base = kept();
    ASSERT_GT(base, 0u);
    {
        crew::task<int> t = made(2);
        EXPECT_LT(kept(), base); // taken from the cache
    }
    EXPECT_EQ(kept(), base); // and kept again
    // Run on the pool and ended: the frames come back to whichever thread destroys them.
    crew::pool p(opts(2));
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(crew::sync_wait(fib_root(p, 12)), fib_seq(12));
}

TEST(Coro, FramesFreedOnAnotherThreadAreKeptThereUpToTheCap) {
    if (!CREW_CORO_FRAME_CACHE)
        GTEST_SKIP() << "built with CREW_CORO_FRAME_CACHE=0";
    // Frames allocated on another thread (which then exits), destroyed here: kept here.
    crew::detail::frame_cache_release(false);
    ASSERT_EQ(kept(), 0u);
    std::vector<crew::task<int>> ts;
    std::thread([&ts] {
        for (int i = 0; i < 10; i++)
            ts.push_back(made(i));
    }).join();
    ts.clear();
    const std::size_t ten = kept();
    EXPECT_GT(ten, 0u);
    EXPECT_EQ(ten % 10, 0u);
    for (int i = 0; i < 10; i++) { // the same frames come back, none from the heap
        ts.push_back(made(i));
        EXPECT_EQ(kept(), ten - std::size_t(i + 1) * (ten / 10));
    }
    // Far more than the cap: the rest go back to the heap.
    const std::size_t many = 2 * crew::detail::frame_cache::cap / (ten / 10);
    for (std::size_t i = ts.size(); i < many; i++)
        ts.push_back(made(1));
    ts.clear();
    EXPECT_LE(kept(), crew::detail::frame_cache::cap);
    EXPECT_GT(kept(), crew::detail::frame_cache::cap / 2);
    crew::detail::frame_cache_release(false);
    EXPECT_EQ(kept(), 0u);
}

// Destroyed after the thread's frame cache has been released at its exit (constructed before
// the cache's reaper, so destroyed after it): its frame goes to the heap, nothing is kept.
struct late_holder {
    crew::task<int> t{made(0)};
    std::atomic<int> *kept_after = nullptr;
    ~late_holder() {
        t = made(1); // frees the first frame, allocates another
        t = made(2);
        if (kept_after)
            kept_after->store(int(kept()) + (crew::detail::tls_frames.state ==
                                                     crew::detail::frame_cache::ended
                                                 ? 0
                                                 : 1000000));
    }
};

TEST(Coro, ManyThreadsPassFramesAroundAndGiveThemBackAtExit) {
    // Threads that create tasks, hand them to each other to destroy, and exit: no leak
    // (checked by the ASan and valgrind runs), every result right.
    crew::pool p(opts(3));
    const int threads = 16, rounds = int(scaled(50));
    std::vector<std::vector<crew::task<long>>> handed(threads);
    std::vector<std::thread> ts;
    std::atomic<long> sum{0};
    for (int t = 0; t < threads; t++) {
        ts.emplace_back([&, t] {
            std::vector<crew::task<long>> mine;
            for (int r = 0; r < rounds; r++) {
                sum.fetch_add(crew::sync_wait(fib_root(p, 8)));
                mine.push_back(fib(p, r % 5));
            }
            handed[std::size_t(t)] = std::move(mine);
        });
    }
    for (std::thread &t : ts)
        t.join();
    ts.clear();
    EXPECT_EQ(sum.load(), long(threads) * rounds * fib_seq(8));
    for (int t = 0; t < threads; t++) // each destroys another's tasks, then exits
        ts.emplace_back([&handed, t] { handed[std::size_t((t + 1) % threads)].clear(); });
    for (std::thread &t : ts)
        t.join();

    // A frame freed by a thread_local destructor after the cache's own at thread exit.
    if (!CREW_CORO_FRAME_CACHE)
        return;
    std::atomic<int> kept_after{-1};
    std::thread([&kept_after] {
        thread_local late_holder h;
        h.kept_after = &kept_after;
        { crew::task<int> t = made(3); } // keeps a frame: the reaper is armed after h
    }).join();
    EXPECT_EQ(kept_after.load(), 0);
}

// ---------------------------------------------------------------------------------------------
// Coroutines whose resumption a pool drops, sync_wait on a worker, and the stack.

// Counts the destruction of the coroutine frame it is a parameter of (the frame keeps a moved
// copy; the moved-from argument counts nothing).
struct frame_count {
    std::atomic<int> *n;
    explicit frame_count(std::atomic<int> &c) : n(&c) {}
    frame_count(frame_count &&o) noexcept : n(std::exchange(o.n, nullptr)) {}
    frame_count(const frame_count &) = delete;
    ~frame_count() {
        if (n)
            n->fetch_add(1);
    }
};

// Wait until n tasks are queued on p (none starts meanwhile: the test holds its threads).
void wait_queued(crew::pool &p, std::uint64_t n) {
    while (p.stats().queued < n)
        std::this_thread::yield();
}

// Hold p's only worker until p is shut down with CREW_CANCEL; returns once it is held.
void hold_until_cancelled(crew::pool &p) {
    std::atomic<bool> started{false};
    p.post([&started] {
        started.store(true);
        while (!crew_cancelled())
            std::this_thread::yield();
    });
    while (!started.load())
        std::this_thread::yield();
}

// sync_wait(t) on a thread of its own; *code gets the crew::error's code it throws (0 if none).
template <class T> std::thread sync_wait_on_a_thread(crew::task<T> t, int *code) {
    return std::thread([t = std::move(t), code]() mutable {
        try {
            crew::sync_wait(std::move(t));
            *code = 0;
        } catch (const crew::error &e) {
            *code = e.code();
        }
    });
}

crew::task<int> scheduled_once(crew::pool &p, frame_count) {
    co_await crew::schedule(p);
    co_return 1;
}

crew::task<int> blocking_once(crew::pool &p, frame_count) {
    co_await crew::schedule_blocking(p);
    co_return 1;
}

TEST(Coro, ACancelResumesAScheduledCoroutineWithTheError) {
    // pool::cancel() drops the task that was to resume the coroutine: the coroutine is
    // resumed at once with crew::error (CREW_ECANCELED), so sync_wait returns and the frame
    // is destroyed; before, it hung for ever.
    std::atomic<int> destroyed{0};
    int code = -1;
    {
        crew::pool p(opts(1));
        hold_until_cancelled(p);
        std::thread t = sync_wait_on_a_thread(scheduled_once(p, frame_count(destroyed)), &code);
        wait_queued(p, 1);
        p.cancel();
        t.join();
    }
    EXPECT_EQ(code, CREW_ECANCELED);
    EXPECT_EQ(destroyed.load(), 1);

    // The same through the C interface, for a coroutine waiting for a blocking thread.
    destroyed = 0;
    code = -1;
    {
        crew::options o = opts(1);
        o.max_blocking = 1;
        crew::pool p(o);
        std::atomic<bool> started{false};
        auto held = p.submit_blocking([&started] {
            started.store(true);
            while (!crew_cancelled())
                std::this_thread::yield();
        });
        while (!started.load())
            std::this_thread::yield();
        std::thread t = sync_wait_on_a_thread(blocking_once(p, frame_count(destroyed)), &code);
        wait_queued(p, 1);
        EXPECT_EQ(crew_shutdown(p.native(), CREW_CANCEL), CREW_OK);
        t.join();
        held.get();
    }
    EXPECT_EQ(code, CREW_ECANCELED);
    EXPECT_EQ(destroyed.load(), 1);
}

crew::task<int> unscheduled(frame_count) { co_return 1; }

crew::task<int> four_children(crew::pool &p, std::atomic<int> &destroyed) {
    auto [a, b, c, d] = co_await crew::when_all(
        p, unscheduled(frame_count(destroyed)), unscheduled(frame_count(destroyed)),
        unscheduled(frame_count(destroyed)), unscheduled(frame_count(destroyed)));
    co_return a + b + c + d;
}

TEST(Coro, ACancelEndsAWhenAllWhoseChildrenAreQueued) {
    // Three children wait in the queue (the fourth ran in place) when the pool is cancelled:
    // when_all reports CREW_ECANCELED and every child's frame is destroyed (before: 1 of 4).
    std::atomic<int> destroyed{0};
    int code = -1;
    {
        crew::pool p(opts(1));
        hold_until_cancelled(p);
        std::thread t = sync_wait_on_a_thread(four_children(p, destroyed), &code);
        wait_queued(p, 3);
        EXPECT_EQ(crew_shutdown(p.native(), CREW_CANCEL), CREW_OK);
        t.join();
    }
    EXPECT_EQ(code, CREW_ECANCELED);
    EXPECT_EQ(destroyed.load(), 4);
}

TEST(Coro, AFullQueueThatDropsTheOldestResumesTheCoroutineWithTheError) {
    // A bounded queue of one place, full policy CREW_FULL_DROP_OLDEST: a submission drops the
    // coroutine's queued resumption, and the coroutine is resumed with CREW_ECANCELED.
    std::atomic<int> destroyed{0};
    int code = -1;
    std::atomic<bool> ran{false};
    {
        crew::options o = opts(1);
        o.queue_capacity = 1;
        o.full_policy = CREW_FULL_DROP_OLDEST;
        crewtest::Gate gate; // outlives the pool, whose worker may still be leaving wait()
        crew::pool p(o);
        gate.hold(p.native(), 1);
        std::thread t = sync_wait_on_a_thread(scheduled_once(p, frame_count(destroyed)), &code);
        wait_queued(p, 1);
        p.post([&ran] { ran.store(true); }); // takes the place of the coroutine's resumption
        t.join();
        gate.open();
    } // drains: the posted task runs
    EXPECT_EQ(code, CREW_ECANCELED);
    EXPECT_EQ(destroyed.load(), 1);
    EXPECT_TRUE(ran.load());
}

crew::task<int> marks(frame_count, std::atomic<bool> &ran) {
    ran.store(true);
    co_return 1;
}

crew::task<int> three_children(crew::pool &p, std::atomic<int> &destroyed,
                               std::atomic<bool> &last_ran) {
    auto [a, b, c] = co_await crew::when_all(p, unscheduled(frame_count(destroyed)),
                                             unscheduled(frame_count(destroyed)),
                                             marks(frame_count(destroyed), last_ran));
    co_return a + b + c;
}

TEST(Coro, AWhenAllWhoseOwnSubmissionDropsAChildReportsIt) {
    // A queue of one place under CREW_FULL_DROP_OLDEST, its worker held: submitting the second
    // child drops the first one's start, inside when_all's own await_suspend. The when_all
    // still waits for the second (queued) and the third (run in place), then reports
    // CREW_ECANCELED; every frame is destroyed.
    std::atomic<int> destroyed{0};
    int code = -1;
    {
        crew::options o = opts(1);
        o.queue_capacity = 1;
        o.full_policy = CREW_FULL_DROP_OLDEST;
        crewtest::Gate gate; // outlives the pool, whose worker may still be leaving wait()
        crew::pool p(o);
        gate.hold(p.native(), 1);
        std::atomic<bool> last_ran{false};
        std::thread t = sync_wait_on_a_thread(three_children(p, destroyed, last_ran), &code);
        while (!last_ran.load()) // the third runs in place, after both submissions
            std::this_thread::yield();
        gate.open(); // the second runs and resumes the when_all
        t.join();
    }
    EXPECT_EQ(code, CREW_ECANCELED);
    EXPECT_EQ(destroyed.load(), 3);
}

crew::task<long> after_both_arrive(crew::pool &p, std::atomic<int> &arrived, int n) {
    // Both workers are inside sync_wait before either coroutine leaves its thread.
    arrived.fetch_add(1);
    while (arrived.load() < 2)
        std::this_thread::yield();
    co_await crew::schedule(p);
    co_return co_await fib(p, n);
}

TEST(Coro, SyncWaitOnAWorkerHelps) {
    // sync_wait on the only worker: the coroutine's tasks are queued on that worker's pool, so
    // the waiting worker runs them itself (as crew::group::wait does); before, it deadlocked.
    {
        crew::pool p(opts(1));
        auto f = p.submit([&p] { return crew::sync_wait(fib_root(p, 12)); });
        EXPECT_EQ(f.get(), fib_seq(12));
        // Nested: a coroutine on the worker calls sync_wait.
        auto nested = [](crew::pool &pl) -> crew::task<long> {
            co_await crew::schedule(pl);
            co_return crew::sync_wait(fib_root(pl, 10)) + 1;
        };
        EXPECT_EQ(crew::sync_wait(nested(p)), fib_seq(10) + 1);
    }
    // Both workers of a pool of two in sync_wait at once.
    {
        crew::pool p(opts(2));
        std::atomic<int> arrived{0};
        auto a = p.submit([&] { return crew::sync_wait(after_both_arrive(p, arrived, 11)); });
        auto b = p.submit([&] { return crew::sync_wait(after_both_arrive(p, arrived, 12)); });
        EXPECT_EQ(a.get(), fib_seq(11));
        EXPECT_EQ(b.get(), fib_seq(12));
    }
}

TEST(Coro, SyncWaitOnAWorkerReportsADropBeforeTheTaskStarts) {
    // sync_wait on a worker first parks a blocking task (to keep a group open while it helps).
    // A cancelling shutdown that drops it before it starts ends sync_wait with CREW_ECANCELED,
    // the task destroyed unstarted, instead of blocking the worker.
    std::atomic<int> destroyed{0};
    int code = -1;
    {
        crew::options o = opts(1);
        o.max_blocking = 1;
        crew::pool p(o);
        std::atomic<bool> started{false};
        auto held = p.submit_blocking([&started] { // the only blocking thread
            started.store(true);
            while (!crew_cancelled())
                std::this_thread::yield();
        });
        while (!started.load())
            std::this_thread::yield();
        std::atomic<bool> running{false};
        auto f = p.submit([&destroyed, &code, &running] {
            running.store(true);
            try {
                crew::sync_wait(unscheduled(frame_count(destroyed)));
                code = 0;
            } catch (const crew::error &e) {
                code = e.code();
            }
        });
        while (!running.load())
            std::this_thread::yield();
        wait_queued(p, 1); // the parked task, waiting for the blocking thread
        p.cancel();
        f.get();
        held.get();
    }
    EXPECT_EQ(code, CREW_ECANCELED);
    EXPECT_EQ(destroyed.load(), 1);
}

// The address of a frame on this thread's stack now (noinline: one more frame than the caller).
__attribute__((noinline)) std::uintptr_t stack_depth_marker() {
    return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
}

// The lowest and highest marker seen.
struct stack_span {
    std::uintptr_t lo = UINTPTR_MAX, hi = 0;
    void see() {
        std::uintptr_t a = stack_depth_marker();
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
    }
    std::uintptr_t bytes() const { return hi - lo; }
};

// Bound on the spread of a loop's stack: a few frames, however many iterations. The loops below
// run enough iterations (or nest enough coroutines) that a frame more each would pass it.
constexpr std::uintptr_t flat_stack = 16 * 1024;
constexpr int stack_loop = 10000;

crew::task<int> one() { co_return 1; }

crew::task<long> when_all_loop(crew::pool &p, int n, stack_span &s) {
    long sum = 0;
    for (int i = 0; i < n; i++) {
        auto [x] = co_await crew::when_all(p, one()); // the only child runs in place, ends last
        sum += x;
        s.see();
    }
    co_return sum;
}

TEST(Coro, WhenAllInALoopDoesNotGrowTheStack) {
    // The in-place child ends before the awaiter could suspend: the awaiter goes on without
    // suspending, instead of being resumed inside its own await_suspend one frame deeper on
    // every iteration (before: about 100 bytes each, a crash after some 65,000).
    crew::pool p(opts(2));
    stack_span s;
    EXPECT_EQ(crew::sync_wait(when_all_loop(p, stack_loop, s)), stack_loop);
    EXPECT_LT(s.bytes(), flat_stack);
}

crew::task<long> schedule_loop(crew::pool &p, int n, stack_span &s) {
    long sum = 0;
    for (int i = 0; i < n; i++) {
        co_await crew::schedule(p);
        sum++;
        s.see();
    }
    co_return sum;
}

TEST(Coro, ScheduleOnAFullCallerRunsQueueDoesNotGrowTheStack) {
    // A full queue under CREW_FULL_CALLER_RUNS runs the resumption in the submitting thread,
    // inside crew::schedule's await_suspend: the coroutine goes on without suspending instead
    // of being resumed there, one frame deeper each time.
    crew::options o = opts(1);
    o.queue_capacity = 1;
    o.full_policy = CREW_FULL_CALLER_RUNS;
    crewtest::Gate gate; // outlives the pool, whose worker may still be leaving wait()
    crew::pool p(o);
    gate.hold(p.native(), 1);
    p.post([] {}); // the queue's one place
    stack_span s;
    EXPECT_EQ(crew::sync_wait(schedule_loop(p, stack_loop, s)), stack_loop);
    EXPECT_LT(s.bytes(), flat_stack);
    gate.open();
}

// A coroutine that schedules itself again after each drop, posting a task first: on a full
// queue under CREW_FULL_DROP_OLDEST each of those submissions may drop another coroutine's
// resumption, so one drop sets off more, on the thread that made the first.
struct cascade {
    cascade(crew::pool &pl, int lim) : p(pl), limit(lim) {}
    crew::pool &p;
    int limit;                                         // drops after which the coroutines give up
    std::thread::id where = std::this_thread::get_id(); // the thread whose stack is measured
    std::atomic<int> drops{0};
    stack_span s;
};

crew::task<int> resubmit_after_drops(cascade &c) {
    for (;;) {
        try {
            co_await crew::schedule(c.p);
            co_return 0;
        } catch (const crew::error &e) {
            if (e.code() != CREW_ECANCELED)
                co_return -1;
        }
        if (std::this_thread::get_id() == c.where)
            c.s.see();
        if (c.drops.fetch_add(1) >= c.limit)
            co_return 1;
        c.p.post([] {});
    }
}

TEST(Coro, DropsThatCauseDropsRunOneAfterAnother) {
    // A coroutine resumed with the error by a drop submits, and that drops the next one's
    // resumption: its coroutine runs after the first has suspended again, not nested inside
    // its submission, so the cascade does not grow the dropping thread's stack.
    constexpr int n = 64;
    crew::options o = opts(1);
    o.queue_capacity = n;
    o.full_policy = CREW_FULL_DROP_OLDEST;
    crewtest::Gate gate; // outlives the pool, whose worker may still be leaving wait()
    crew::pool p(o);
    gate.hold(p.native(), 1);
    cascade c(p, stack_loop);
    int codes[n];
    std::vector<std::thread> threads;
    for (int i = 0; i < n; i++)
        threads.push_back(sync_wait_on_a_thread(resubmit_after_drops(c), &codes[i]));
    wait_queued(p, n);
    p.post([] {}); // the first drop, and the cascade, on this thread
    gate.open();
    for (std::thread &t : threads)
        t.join();
    for (int code : codes)
        EXPECT_EQ(code, 0);
    EXPECT_GE(c.drops.load(), c.limit);
    EXPECT_LT(c.s.bytes(), flat_stack);
}

// ---------------------------------------------------------------------------------------------
// when_all on a worker of its pool: the children are started through crew_join (offered to the
// other threads, taken back and run in place when none took them); elsewhere as tasks.

// The crew::pool whose worker runs this (crew.hpp's detail::worker_of), or nullptr.
const crew::pool *worker_pool() { return crew::detail::worker_of; }

// Spin (yielding) until flag is set, for at most 10 seconds: whether it was.
bool await_flag(const std::atomic<bool> &flag) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!flag.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
    return flag.load();
}

crew::task<long> fib_where(crew::pool &p, int n, std::atomic<int> &off_worker) {
    if (worker_pool() != &p)
        off_worker.fetch_add(1);
    if (n < 2)
        co_return n;
    auto [a, b] = co_await crew::when_all(p, fib_where(p, n - 1, off_worker),
                                          fib_where(p, n - 2, off_worker));
    co_return a + b;
}

TEST(Coro, WhenAllOnAWorkerSubmitsNoTaskForAChildNobodyTook) {
    // A one-thread pool under work stealing: every child is offered on the worker's own deque
    // and taken back, so the only task submitted is crew::schedule's (before: one per when_all
    // as well, 88 for fib(10)), and every child runs on the worker.
    crew::options o = opts(1);
    o.monitoring = true;
    o.scheduler = CREW_SCHED_STEAL;
    crew::pool p(o);
    std::atomic<int> off_worker{0};
    auto root = [](crew::pool &pl, std::atomic<int> &off) -> crew::task<long> {
        co_await crew::schedule(pl);
        co_return co_await fib_where(pl, 10, off);
    };
    EXPECT_EQ(crew::sync_wait(root(p, off_worker)), fib_seq(10));
    EXPECT_EQ(off_worker.load(), 0);
    EXPECT_EQ(p.stats().submitted, 1u);
}

// Children of the next test: the offered one marks that it started and where, then goes on
// after a crew::schedule (it suspends on the thread that took it); the one in place waits until
// the offered one has started, so that only another worker can have taken it.
crew::task<int> offered_child(crew::pool &p, std::atomic<bool> &started,
                              std::atomic<const void *> &where, int v) {
    where.store(static_cast<const void *>(worker_pool()));
    started.store(true);
    co_await crew::schedule(p);
    if (v < 0)
        throw std::runtime_error("offered");
    co_return v;
}
crew::task<int> in_place_child(std::atomic<bool> &started, std::atomic<bool> &saw, int v) {
    saw.store(await_flag(started));
    if (v < 0)
        throw std::runtime_error("in place");
    co_return v;
}

TEST(Coro, WhenAllWhoseOfferedChildAnotherWorkerTookGoesOnAfterBoth) {
    // Two workers under work stealing (a strategy whose workers keep their own queues, as
    // per-worker does, lets no other worker take it): the in-place child runs until another
    // worker has taken the offered one, which suspends there; the when_all goes on once both
    // have ended, with both results, or with the first exception by position, whichever child
    // threw it.
    crew::options o = opts(2);
    o.scheduler = CREW_SCHED_STEAL;
    crew::pool p(o);
    for (int a : {1, -1}) {
        for (int b : {2, -2}) {
            std::atomic<bool> started{false}, saw{false};
            std::atomic<const void *> where{nullptr};
            auto root = [](crew::pool &pl, std::atomic<bool> &st, std::atomic<bool> &sw,
                           std::atomic<const void *> &wh, int x, int y) -> crew::task<int> {
                co_await crew::schedule(pl);
                auto [u, v] = co_await crew::when_all(pl, offered_child(pl, st, wh, x),
                                                      in_place_child(st, sw, y));
                co_return u + v;
            };
            try {
                int r = crew::sync_wait(root(p, started, saw, where, a, b));
                EXPECT_TRUE(a > 0 && b > 0);
                EXPECT_EQ(r, a + b);
            } catch (const std::runtime_error &e) {
                EXPECT_FALSE(a > 0 && b > 0);
                EXPECT_STREQ(e.what(), a < 0 ? "offered" : "in place");
            }
            EXPECT_TRUE(saw.load()) << "the offered child never started while the other ran";
            EXPECT_EQ(where.load(), static_cast<const void *>(&p)); // on a worker of p
        }
    }
}

crew::task<int> maybe_throw(crew::pool &p, frame_count, int v, bool suspend) {
    if (suspend)
        co_await crew::schedule(p);
    if (v < 0)
        throw std::runtime_error(std::to_string(v));
    co_return v;
}

TEST(Coro, WhenAllOnAOneThreadPoolRethrowsEitherChildsException) {
    // One worker, so no child is ever taken by another thread: either child's exception, or
    // the first by position of both, is rethrown once both have ended, with or without the
    // children suspending; every child's frame is destroyed.
    crew::pool p(opts(1));
    for (bool suspend : {false, true}) {
        for (int a : {1, -1}) {
            for (int b : {2, -2}) {
                std::atomic<int> destroyed{0};
                auto root = [](crew::pool &pl, std::atomic<int> &d, int x, int y,
                               bool s) -> crew::task<int> {
                    co_await crew::schedule(pl);
                    auto [u, v] = co_await crew::when_all(pl, maybe_throw(pl, frame_count(d), x, s),
                                                          maybe_throw(pl, frame_count(d), y, s));
                    co_return u + v;
                };
                try {
                    EXPECT_EQ(crew::sync_wait(root(p, destroyed, a, b, suspend)), a + b);
                    EXPECT_TRUE(a > 0 && b > 0);
                } catch (const std::runtime_error &e) {
                    EXPECT_STREQ(e.what(), std::to_string(a < 0 ? a : b).c_str());
                }
                EXPECT_EQ(destroyed.load(), 2);
            }
        }
    }
}

// when_alls nested d deep, each of a deeper level and a leaf; leaves at odd depths suspend
// (crew::schedule) before they end, so some levels end on another thread than they began.
crew::task<long> nested(crew::pool &p, int d) {
    if (d == 0)
        co_return 0;
    auto leaf = [](crew::pool &pl, int dd) -> crew::task<long> {
        if (dd % 2)
            co_await crew::schedule(pl);
        co_return dd;
    };
    auto [a, b] = co_await crew::when_all(p, nested(p, d - 1), leaf(p, d));
    co_return a + b;
}

TEST(Coro, WhenAllsNestedThirtyDeep) {
    for (unsigned threads : {1u, 2u}) {
        crew::pool p(opts(threads));
        auto root = [](crew::pool &pl) -> crew::task<long> {
            co_await crew::schedule(pl);
            long sum = 0;
            for (int i = 0; i < 20; i++)
                sum += co_await nested(pl, 30);
            co_return sum;
        };
        EXPECT_EQ(crew::sync_wait(root(p)), 20 * 30 * 31 / 2) << threads << " threads";
    }
}

TEST(Coro, WhenAllOfSeveralOnAWorker) {
    // Three, four and five children on a worker (crew_join nested over halves of the list):
    // results in order, void children, one awaited before, and of several that throw, the
    // first by position, once all have ended.
    for (unsigned threads : {1u, 2u}) {
        crew::pool p(opts(threads));
        auto body = [](crew::pool &pl, std::atomic<int> &ran) -> crew::task<int> {
            co_await crew::schedule(pl);
            auto [a, b, c] = co_await crew::when_all(pl, value(1), value(2), value(3));
            crew::task<int> done = value(4);
            int first = co_await std::move(done);
            auto [v1, d, e, v2] = co_await crew::when_all(pl, nothing(ran), std::move(done),
                                                          value(5), nothing(ran));
            (void)v1, (void)v2;
            auto [f, g, h, i, j] = co_await crew::when_all(pl, value(6), value(7), value(8),
                                                           value(9), value(10));
            co_return a * 1 + b * 2 + c * 3 + first + d + e + f + g + h + i + j;
        };
        std::atomic<int> ran{0};
        EXPECT_EQ(crew::sync_wait(body(p, ran)), 1 + 4 + 9 + 4 + 4 + 5 + 6 + 7 + 8 + 9 + 10);
        EXPECT_EQ(ran.load(), 2);

        auto throwing = [](crew::pool &pl, std::atomic<int> &d) -> crew::task<int> {
            co_await crew::schedule(pl);
            auto [a, b, c, e] = co_await crew::when_all(
                pl, maybe_throw(pl, frame_count(d), 1, false),
                maybe_throw(pl, frame_count(d), -2, true),
                maybe_throw(pl, frame_count(d), -3, false),
                maybe_throw(pl, frame_count(d), 4, true));
            co_return a + b + c + e;
        };
        std::atomic<int> destroyed{0};
        try {
            crew::sync_wait(throwing(p, destroyed));
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error &e) {
            EXPECT_STREQ(e.what(), "-2");
        }
        EXPECT_EQ(destroyed.load(), 4);
    }
}

crew::task<const void *> pool_here() { co_return static_cast<const void *>(worker_pool()); }

TEST(Coro, WhenAllOffThePoolStartsAllButTheLastAsTasksOfThePool) {
    // From a thread outside the pool (main, and a worker of another pool), the children but the
    // last start on the pool's workers, the last in place, as before.
    crew::pool p(opts(2)), other(opts(1));
    auto root = [](crew::pool &pl) -> crew::task<bool> {
        const void *here = static_cast<const void *>(worker_pool());
        auto [a, b, c] = co_await crew::when_all(pl, pool_here(), pool_here(), pool_here());
        co_return a == &pl && b == &pl && c == here;
    };
    EXPECT_TRUE(crew::sync_wait(root(p)));
    EXPECT_TRUE(other.submit([&p, root] { return crew::sync_wait(root(p)); }).get());
}

crew::task<int> cancels_its_pool(crew::pool &p, frame_count, std::thread &shut) {
    shut = std::thread([&p] { crew_shutdown(p.native(), CREW_CANCEL); });
    while (!crew_cancelled()) // the pool shuts down with CREW_CANCEL
        std::this_thread::yield();
    co_return 1;
}

TEST(Coro, WhenAllOnAWorkerReportsAChildNotStartedBeforeACancel) {
    // The in-place child runs while the pool is cancelled: the offered child, not started yet,
    // is destroyed unstarted and the when_all throws crew::error (CREW_ECANCELED), as for a
    // dropped start (without the check, it ran and the when_all returned 2).
    std::atomic<int> destroyed{0};
    std::thread shut;
    int code = -1;
    {
        crew::pool p(opts(1));
        auto root = [](crew::pool &pl, std::atomic<int> &d, std::thread &t) -> crew::task<int> {
            co_await crew::schedule(pl);
            auto [a, b] = co_await crew::when_all(pl, maybe_throw(pl, frame_count(d), 1, false),
                                                  cancels_its_pool(pl, frame_count(d), t));
            co_return a + b;
        };
        try {
            crew::sync_wait(root(p, destroyed, shut));
            code = 0;
        } catch (const crew::error &e) {
            code = e.code();
        }
        shut.join();
    }
    EXPECT_EQ(code, CREW_ECANCELED);
    EXPECT_EQ(destroyed.load(), 2);
}

} // namespace
