// test_coro.cpp -- crew_coro.hpp (C++20): crew::task, schedule / schedule_blocking, when_all,
// co_await on a crew::group (through crew_notify), sync_wait; exceptions propagate, deep chains
// of co_awaits do not grow the stack. Built only by a compiler with coroutines.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <pthread.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>

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

TEST(Coro, DeepChainsDoNotGrowTheStack) {
    // Far deeper than a thread's stack could hold as nested calls (8 MiB / 100k frames):
    // every co_await transfers to the next task and back (symmetric transfer). Only where the
    // compiler makes those transfers tail calls, as optimised gcc and clang builds do.
#if defined(__OPTIMIZE__) && !defined(CREW_SANITIZED)
    const int depth = 1000000;
#else
    const int depth = 1000;
#endif
    crew::pool p(opts(1));
    auto root = [](crew::pool &pl, int dd) -> crew::task<long> {
        co_await crew::schedule(pl);
        co_return co_await chain(dd);
    };
    EXPECT_EQ(crew::sync_wait(root(p, depth)), depth);
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

} // namespace
