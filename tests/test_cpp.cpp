// test_cpp.cpp -- the C++17 interface (include/crew.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "crew.hpp"

// crew::options starts from crew_config_init()'s defaults.
TEST(Cpp, OptionsHaveTheCDefaults) {
    crew_config cfg;
    crew_config_init(&cfg);
    crew::options o;
    EXPECT_EQ(o.spin, cfg.spin);
    EXPECT_EQ(o.threads, cfg.threads);
    EXPECT_EQ(o.max_blocking, cfg.max_blocking);
}

TEST(Cpp, SubmitWithArgumentsReturnsAFuture) {
    crew::pool p(crew::options{2});
    auto f = p.submit([](int a, const std::string &b) { return b + std::to_string(a * 2); }, 21,
                      std::string("x"));
    EXPECT_EQ(f.get(), "x42");
    auto v = p.submit([] {});
    v.get(); // std::future<void>
    auto hi = p.submit(0u, [](int x) { return x + 1; }, 1);
    EXPECT_EQ(hi.get(), 2);
}

TEST(Cpp, ExceptionReachesTheFuture) {
    crew::pool p(crew::options{2});
    auto f = p.submit([]() -> int { throw std::runtime_error("boom"); });
    // Let the task finish (it destroys its copy of the exception after setting the future):
    // libstdc++ shares the message between copies with atomics that ThreadSanitizer cannot see.
    p.wait();
    EXPECT_THROW(
        {
            try {
                f.get();
            } catch (const std::runtime_error &e) {
                EXPECT_STREQ(e.what(), "boom");
                throw;
            }
        },
        std::runtime_error);
}

TEST(Cpp, PostedExceptionGoesToTheHandlerNotTerminate) {
    crew::pool p(crew::options{2});
    std::atomic<int> seen{0};
    p.on_error([&](std::exception_ptr e) {
        try {
            std::rethrow_exception(e);
        } catch (const std::logic_error &) {
            seen++;
        }
    });
    for (int i = 0; i < 10; i++)
        p.post([] { throw std::logic_error("posted"); });
    p.wait();
    EXPECT_EQ(seen.load(), 10);
    p.on_error(nullptr); // the default handler prints, and the process goes on
    p.post([] { throw 42; });
    p.wait();
}

TEST(Cpp, GroupRunWaitAndRethrow) {
    crew::pool p(crew::options{2});
    std::atomic<int> n{0};
    {
        crew::group g(p);
        for (int i = 0; i < 1000; i++)
            g.run([&] { n++; });
        g.wait();
        EXPECT_EQ(n.load(), 1000);
        for (int i = 0; i < 10; i++) // the crew group finished: run() opens a new one
            g.run([&] { n++; });
        g.run([] { throw std::out_of_range("in group"); });
        EXPECT_THROW(g.wait(), std::out_of_range);
        EXPECT_EQ(n.load(), 1010);
        g.wait(); // the exception was delivered once
    }
}

static long fib(crew::pool &p, int n) {
    if (n < 2)
        return n;
    long a = 0;
    crew::group g(p);
    g.run([&] { a = fib(p, n - 1); });
    long b = fib(p, n - 2);
    g.wait();
    return a + b;
}

TEST(Cpp, NestedGroupsOnOneThread) {
    crew::pool p(crew::options{1});
#ifdef CREW_SANITIZED
    EXPECT_EQ(fib(p, 18), 2584);
#else
    EXPECT_EQ(fib(p, 24), 46368);
#endif
}

TEST(Cpp, ResizeSizeAndErrorsAsExceptions) {
    crew::pool p(crew::options{2});
    EXPECT_EQ(p.size(), 2u);
    p.resize(4);
    EXPECT_EQ(p.size(), 4u);
    try {
        p.resize(0);
        FAIL() << "resize(0) must throw";
    } catch (const crew::error &e) {
        EXPECT_EQ(e.code(), CREW_EINVAL);
        EXPECT_NE(std::string(e.what()).find("(CREW_EINVAL)"), std::string::npos) << e.what();
    }
    p.join();
    try {
        p.post([] {});
        FAIL() << "post after join must throw";
    } catch (const crew::error &e) {
        EXPECT_EQ(e.code(), CREW_ESHUTDOWN);
    }
}

// crew::error's text leads with the call the program made, then what was wrong, then the
// code; never a C function the program did not call.
TEST(Cpp, ErrorTextsLeadWithWhatTheProgramDid) {
    crew::pool p(crew::options{1});
    auto text = [](auto &&call) -> std::string {
        try {
            call();
        } catch (const crew::error &e) {
            return e.what();
        }
        return "(no exception)";
    };
    EXPECT_EQ(text([&] { p.resize(0); }),
              "crew::pool::resize: threads is 0; a pool needs at least 1 (CREW_EINVAL)");
    p.join();
    const std::string closed =
        ": the pool is shutting down or shut down; it accepts no more tasks (CREW_ESHUTDOWN)";
    EXPECT_EQ(text([&] { p.post([] {}); }), "crew::pool::post" + closed);
    EXPECT_EQ(text([&] { p.post(3, [] {}); }), "crew::pool::post" + closed);
    EXPECT_EQ(text([&] { p.post_by(std::chrono::steady_clock::now(), [] {}); }),
              "crew::pool::post_by" + closed);
    EXPECT_EQ(text([&] { (void)p.submit([] { return 1; }); }), "crew::pool::submit" + closed);
    EXPECT_EQ(text([&] { (void)p.submit_blocking([] { return 1; }); }),
              "crew::pool::submit_blocking" + closed);
    EXPECT_EQ(text([&] { (void)p.submit_by(std::chrono::steady_clock::now(), [] {}); }),
              "crew::pool::submit_by" + closed);
    EXPECT_EQ(text([&] { (void)p.submit_after(std::chrono::milliseconds(1), [] {}); }),
              "crew::pool::submit_after" + closed);
    // A detail given by the wrapper itself, and none at all: the code's own words.
    EXPECT_EQ(crew::error(CREW_EINVAL, "crew::x", "a thing was wrong").what(),
              std::string("crew::x: a thing was wrong (CREW_EINVAL)"));
    EXPECT_EQ(crew::error(CREW_ENOMEM, "crew::x", "").what(),
              std::string("crew::x: out of memory (CREW_ENOMEM)"));
    // A detail that does not start with a C call's name is kept whole.
    EXPECT_EQ(crew::error(CREW_EINVAL, "crew::x", "crew_ is a prefix").what(),
              std::string("crew::x: crew_ is a prefix (CREW_EINVAL)"));
}

// Jue's Boost.Asio example, line by line: a pool of N threads, one lambda per target that
// stores its result by index, then join().
TEST(Cpp, JuesAsioExampleTranslatesLineByLine) {
    std::vector<std::string> websites = {"a.example", "b.example", "c.example", "d.example"};
    std::vector<int> results(websites.size());
    auto ping = [](const std::string &site) { return int(site.size()); };

    crew::pool pool(crew::options{3}); // boost::asio::thread_pool pool(3);
    for (size_t i = 0; i < websites.size(); i++)
        pool.post([&, i] { results[i] = ping(websites[i]); }); // boost::asio::post(pool, ...)
    pool.join();                                               // pool.join();

    for (size_t i = 0; i < websites.size(); i++)
        EXPECT_EQ(results[i], int(websites[i].size()));
}

TEST(Cpp, DestructorDrains) {
    std::atomic<int> n{0};
    {
        crew::pool p(crew::options{2});
        for (int i = 0; i < 5000; i++)
            p.post([&] { n++; });
    }
    EXPECT_EQ(n.load(), 5000);
}

TEST(Cpp, ParallelForReduceFilter) {
    crew::pool p(crew::options{2});
    std::vector<int> v(100000);
    crew::parallel_for(p, 0, v.size(), [&](size_t i) { v[i] = int(i % 10); });
    long s = crew::parallel_reduce(
        p, 0, v.size(), 0L,
        [&](size_t b, size_t e, long acc) {
            for (size_t i = b; i < e; i++)
                acc += v[i];
            return acc;
        },
        [](long a, long b) { return a + b; });
    EXPECT_EQ(s, 450000);
    auto odd = crew::parallel_filter(p, v, [](int x) { return x % 2 == 1; });
    ASSERT_EQ(odd.size(), 50000u);
    EXPECT_EQ(odd[0], 1);
    EXPECT_EQ(odd[1], 3);
    EXPECT_EQ(odd.back(), 9);
    std::atomic<long> ranges{0};
    crew::parallel_for(p, 0, 1000, [&](size_t b, size_t e) { ranges += long(e - b); }, 10);
    EXPECT_EQ(ranges.load(), 1000);
}

TEST(Cpp, ParallelForRethrowsTheBodysException) {
    crew::pool p(crew::options{2});
    EXPECT_THROW(crew::parallel_for(p, 0, 10000,
                                    [](size_t i) {
                                        if (i == 5000)
                                            throw std::invalid_argument("bad element");
                                    }),
                 std::invalid_argument);
    p.wait(); // the pool is still usable
    auto f = p.submit([] { return 7; });
    EXPECT_EQ(f.get(), 7);
}

TEST(Cpp, Stats) {
    crew::options o;
    o.threads = 2;
    o.monitoring = true;
    crew::pool p(o);
    for (int i = 0; i < 100; i++)
        p.post([] {});
    p.wait();
    crew_stats s = p.stats();
    EXPECT_EQ(s.submitted, 100u);
    EXPECT_EQ(s.completed, 100u);
    p.monitoring(false);
    p.post([] {});
    p.wait();
    EXPECT_EQ(p.stats().completed, 100u);
}

TEST(Cpp, BlockingTasksAndStrategyOptions) {
    crew::options o;
    o.threads = 1;
    o.scheduler = CREW_SCHED_SHARED;
    o.lock = CREW_LOCK_SPIN;
    o.queue_capacity = 16;
    o.full_policy = CREW_FULL_CALLER_RUNS;
    crew::pool p(o);
    auto b = p.submit_blocking([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return 7;
    });
    std::vector<std::future<int>> fs;
    for (int i = 0; i < 100; i++) // more than the capacity: the overflow runs here
        fs.push_back(p.submit([i] { return i; }));
    int sum = 0;
    for (auto &f : fs)
        sum += f.get();
    EXPECT_EQ(sum, 4950);
    EXPECT_EQ(b.get(), 7);
}

// Jobs dropped without running (a group cancel, a cancelling shutdown) are freed, closures and
// all: their futures report a broken promise (ASan and valgrind check nothing leaks).
TEST(Cpp, PauseCancelAndDroppedJobsAreFreed) {
    crew::pool p(crew::options{1});
    p.pause();
    auto shared = std::make_shared<int>(7); // held by every queued closure
    crew::group g(p);
    std::atomic<int> ran{0};
    for (int i = 0; i < 50; i++)
        g.run([&ran, shared] { ran++; });
    auto fut = p.submit([shared] { return *shared; });
    g.cancel();
    p.resume();
    try {
        g.wait();
        ADD_FAILURE() << "a cancelled group's wait did not throw";
    } catch (const crew::error &e) {
        EXPECT_EQ(e.code(), CREW_ECANCELED);
    }
    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(fut.get(), 7); // not in the group: it ran
    p.pause();
    auto dropped = p.submit([shared] { return 1; });
    p.cancel(); // a cancelling shutdown drops it
    EXPECT_THROW(dropped.get(), std::future_error);
    EXPECT_EQ(shared.use_count(), 1) << "a dropped job's closure was not freed";
}

// A group destroyed without wait() waits for its tasks (they may use the enclosing scope), and
// the exception a task threw goes to the pool's error handler, once, instead of being dropped.
TEST(Cpp, GroupDestroyedWithoutWaitReportsTheException) {
    crew::pool p(crew::options{2});
    std::atomic<int> handled{0}, ran{0};
    std::string message;
    p.on_error([&](std::exception_ptr e) {
        try {
            std::rethrow_exception(e);
        } catch (const std::runtime_error &x) {
            message = x.what();
            handled++;
        }
    });
    {
        crew::group g(p);
        for (int i = 0; i < 100; i++)
            g.run([&] {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
                ran++;
            });
        g.run([] { throw std::runtime_error("never waited for"); });
    } // no wait(): the destructor waits, then reports
    EXPECT_EQ(ran.load(), 100);
    EXPECT_EQ(handled.load(), 1);
    EXPECT_EQ(message, "never waited for");

    { // wait() delivered it: the destructor has nothing left to report
        crew::group g(p);
        g.run([] { throw std::runtime_error("delivered"); });
        EXPECT_THROW(g.wait(), std::runtime_error);
    }
    { // an exception after the last wait() is reported
        crew::group g(p);
        g.run([] {});
        g.wait();
        g.run([] { throw std::runtime_error("after the wait"); });
    }
    EXPECT_EQ(handled.load(), 2);
    EXPECT_EQ(message, "after the wait");

    { // a cancel the caller asked for is not an error to report
        p.pause();
        crew::group g(p);
        for (int i = 0; i < 10; i++)
            g.run([&] { ran++; });
        g.cancel();
        p.resume();
    }
    EXPECT_EQ(handled.load(), 2);
    EXPECT_EQ(ran.load(), 100);
}

// Without a handler, the report is one line on stderr naming the group; the program goes on.
TEST(Cpp, GroupDestroyedWithoutWaitPrintsByDefault) {
    crew::pool p(crew::options{1});
    testing::internal::CaptureStderr();
    {
        crew::group g(p);
        g.run([] { throw std::logic_error("lost exception"); });
    }
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("crew::group destroyed without wait()"), std::string::npos) << err;
    EXPECT_NE(err.find("lost exception"), std::string::npos) << err;
    auto f = p.submit([] { return 3; });
    EXPECT_EQ(f.get(), 3);
}
