// End-to-end replays through the library: short traces (<= 1 s), counts that add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>

#include "gen.h"
#include "replay.h"

namespace {

// Writes a generated trace to a temporary file; removed by the destructor.
struct TempTrace {
    std::string path;
    long long n = 0;
    TempTrace(double rate, double duration, const char *exec, unsigned apps, uint64_t seed)
    {
        char tmpl[] = "/tmp/crew-sim-test-XXXXXX";
        int fd = mkstemp(tmpl);
        EXPECT_GE(fd, 0);
        path = tmpl;
        FILE *f = fdopen(fd, "w");
        gen_opts o{};
        o.arrivals = GEN_POISSON;
        o.rate = rate;
        o.duration_s = duration;
        o.apps = apps;
        o.seed = seed;
        char err[256];
        EXPECT_EQ(gen_dist_parse(exec, &o.exec, err, sizeof err), 0);
        n = gen_write(&o, f);
        fclose(f);
    }
    explicit TempTrace(const std::string &text)
    {
        char tmpl[] = "/tmp/crew-sim-test-XXXXXX";
        int fd = mkstemp(tmpl);
        path = tmpl;
        FILE *f = fdopen(fd, "w");
        fputs(text.c_str(), f);
        fclose(f);
    }
    ~TempTrace() { unlink(path.c_str()); }
};

void expect_consistent(const replay_result &r)
{
    EXPECT_EQ(r.submitted, r.completed + r.cancelled);
    EXPECT_EQ(r.overall.submitted, r.submitted);
    EXPECT_EQ(r.overall.completed, r.completed);
    EXPECT_EQ(r.overall.cancelled, r.cancelled);
    uint64_t s = 0, c = 0, x = 0, turn = 0;
    for (size_t i = 0; i < r.napps; i++) {
        const app_row &a = r.apps[i];
        EXPECT_EQ(a.submitted, a.completed + a.cancelled) << "app " << a.app_id;
        s += a.submitted;
        c += a.completed;
        x += a.cancelled;
        turn += a.m[M_TURNAROUND].count;
        if (i > 0) {
            EXPECT_LT(r.apps[i - 1].app_id, a.app_id);
        }
    }
    EXPECT_EQ(s, r.overall.submitted);
    EXPECT_EQ(c, r.overall.completed);
    EXPECT_EQ(x, r.overall.cancelled);
    EXPECT_EQ(turn, r.overall.m[M_TURNAROUND].count);
    EXPECT_EQ(r.overall.m[M_TURNAROUND].count, r.completed);
}

replay_opts base(const std::string &trace)
{
    replay_opts o;
    replay_opts_init(&o);
    o.trace = trace.c_str();
    o.threads = 2;
    o.loops_per_us = 300; // fixed: the test does not depend on this machine's speed
    o.free_workload = 50;
    return o;
}

TEST(SimReplay, ShortTraceCountsAddUp)
{
    TempTrace t(400, 0.5, "const:200", 3, 2026); // about 200 tasks over half a second
    ASSERT_GT(t.n, 150);
    replay_opts o = base(t.path);
    char *buf = nullptr;
    size_t len = 0;
    o.timeseries = open_memstream(&buf, &len);
    replay_result r;
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(replay_run(&o, &r), 0) << r.err;
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fclose(o.timeseries);
    EXPECT_EQ(r.records, (uint64_t)t.n);
    EXPECT_EQ(r.submitted, (uint64_t)t.n);
    EXPECT_EQ(r.completed, (uint64_t)t.n);
    EXPECT_EQ(r.cancelled, 0u);
    EXPECT_EQ(r.napps, 3u);
    EXPECT_FALSE(r.interrupted);
    expect_consistent(r);
    // Real time: the run lasts about the trace span, not much less.
    EXPECT_GE(el, r.trace_s * 0.9);
    EXPECT_GT(r.trace_s, 0.3);
    // Processing is at least the 100 us sleep of a 200 us task at free-workload 50.
    EXPECT_GE(r.overall.m[M_PROCESSING].mean, 100e3);
    if (r.monitoring) {
        EXPECT_EQ(r.crew.completed, (uint64_t)t.n);
        EXPECT_NE(r.crew_json, nullptr);
    }
    std::string ts(buf, len);
    free(buf);
    EXPECT_EQ(ts.rfind("t_s,submitted,completed", 0), 0u);
    EXPECT_GE(std::count(ts.begin(), ts.end(), '\n'), 4);
    char dir[] = "/tmp/crew-sim-out-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    EXPECT_EQ(replay_write_summary(dir, &o, &r), 0);
    for (const char *f : {"summary.csv", "summary.json"}) {
        std::string p = std::string(dir) + "/" + f;
        EXPECT_EQ(access(p.c_str(), R_OK), 0) << p;
        unlink(p.c_str());
    }
    rmdir(dir);
    replay_result_free(&r);
}

TEST(SimReplay, StopMidRunCountsCancelled)
{
    // Overloaded on purpose: 1 thread, 2 ms of computing per task, 2000 tasks/s for 1 s.
    TempTrace t(2000, 1.0, "const:2000", 2, 7);
    replay_opts o = base(t.path);
    o.threads = 1;
    o.free_workload = 0;
    replay_stop_reset();
    std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        replay_stop();
    });
    replay_result r;
    auto t0 = std::chrono::steady_clock::now();
    int rc = replay_run(&o, &r);
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stopper.join();
    replay_stop_reset();
    ASSERT_EQ(rc, 0) << r.err;
    EXPECT_TRUE(r.interrupted);
    EXPECT_LT(r.submitted, (uint64_t)t.n);
    EXPECT_GT(r.cancelled, 0u);
    EXPECT_LT(el, 5.0); // stopped, not run to the end (about 4 s of work)
    expect_consistent(r);
    replay_result_free(&r);
}

TEST(SimReplay, AutosizeBalanceAndAit)
{
    TempTrace t(300, 0.4, "exp:300", 2, 3);
    for (unsigned a : {(unsigned)CREW_AUTOSIZE_BALANCE, (unsigned)CREW_AUTOSIZE_AIT}) {
        replay_opts o = base(t.path);
        o.autosize = a;
        o.min_threads = 1;
        o.max_threads = 8;
        o.threads = 1;
        replay_result r;
        int rc = replay_run(&o, &r);
        if (rc == 3 && std::string(r.err).find("crew_create") != std::string::npos) {
            replay_result_free(&r);
            GTEST_SKIP() << "no monitoring in this build: " << r.err;
        }
        ASSERT_EQ(rc, 0) << r.err;
        EXPECT_EQ(r.completed, (uint64_t)t.n);
        expect_consistent(r);
        replay_result_free(&r);
    }
}

TEST(SimReplay, DryRunAndSpeed)
{
    TempTrace t(1000, 10, "exp:500", 4, 9); // 10 s of trace, replayed 1000x faster
    replay_opts o = base(t.path);
    o.dry_run = 1;
    o.speed = 1000;
    replay_result r;
    ASSERT_EQ(replay_run(&o, &r), 0) << r.err;
    EXPECT_EQ(r.records, (uint64_t)t.n);
    EXPECT_EQ(r.submitted, 0u);
    EXPECT_LT(r.trace_s, 0.011);
    replay_result_free(&r);
}

TEST(SimReplay, BadLineStopsWithItsPosition)
{
    TempTrace t("request_id,app_id,start_us,exec_us\n1,0,0,10\n2,0,100,10\n3,0,abc,10\n4,0,9,1\n");
    replay_opts o = base(t.path);
    replay_result r;
    EXPECT_EQ(replay_run(&o, &r), 1);
    EXPECT_EQ(std::string(r.err), t.path + ":4:5: start_us: expected a non-negative integer "
                                           "(microseconds), got \"abc\"");
    EXPECT_EQ(r.submitted, 2u);
    expect_consistent(r);
    replay_result_free(&r);
}

TEST(SimReplay, SplitFollowsTheSeed)
{
    double c, w;
    replay_split(1000, 0, &c, &w);
    EXPECT_EQ(c, 1000);
    EXPECT_EQ(w, 0);
    replay_split(1000, 25, &c, &w);
    EXPECT_EQ(c, 750);
    EXPECT_EQ(w, 250);
    replay_split(1000, 100, &c, &w);
    EXPECT_EQ(c, 0);
    EXPECT_EQ(w, 1000);
}

} // namespace
