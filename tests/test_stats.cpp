// test_stats.cpp -- monitoring: statistics add up, timestamps are ordered, cancellations and
// rejections are counted, toggling on a live pool is safe, reset, the per-worker array, the
// versioned struct, and JSON that parses.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;
using crewtest::scaled;

namespace {

crew_pool *monitored_pool(unsigned threads, bool on = true) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.monitoring = on;
    crew_pool *p = nullptr;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_OK);
    return p;
}

crew_stats get(crew_pool *p) {
    crew_stats s;
    std::memset(&s, 0xff, sizeof s);
    s.size = sizeof s;
    EXPECT_EQ(crew_stats_get(p, &s), CREW_OK);
    return s;
}

void noop(void *) {}
void sleep2ms(void *) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }

void expect_ordered(const crew_latency &l, const char *what) {
    EXPECT_LE(l.p50_ns, l.p90_ns) << what;
    EXPECT_LE(l.p90_ns, l.p99_ns) << what;
    EXPECT_LE(l.p99_ns, l.max_ns) << what;
    EXPECT_LE(l.mean_ns, double(l.max_ns)) << what;
}

// A minimal JSON syntax checker (objects, arrays, strings, numbers, true/false/null).
struct Json {
    const char *p;
    void ws() {
        while (std::isspace(static_cast<unsigned char>(*p)))
            p++;
    }
    bool value() {
        ws();
        if (*p == '{') {
            p++;
            ws();
            if (*p == '}')
                return p++, true;
            for (;;) {
                ws();
                if (!string())
                    return false;
                ws();
                if (*p++ != ':' || !value())
                    return false;
                ws();
                if (*p == ',') {
                    p++;
                    continue;
                }
                return *p++ == '}';
            }
        }
        if (*p == '[') {
            p++;
            ws();
            if (*p == ']')
                return p++, true;
            for (;;) {
                if (!value())
                    return false;
                ws();
                if (*p == ',') {
                    p++;
                    continue;
                }
                return *p++ == ']';
            }
        }
        if (*p == '"')
            return string();
        for (const char *w : {"true", "false", "null"})
            if (std::strncmp(p, w, std::strlen(w)) == 0)
                return p += std::strlen(w), true;
        char *end;
        std::strtod(p, &end);
        if (end == p)
            return false;
        p = end;
        return true;
    }
    bool string() {
        if (*p++ != '"')
            return false;
        while (*p && *p != '"')
            p++;
        return *p++ == '"';
    }
};

} // namespace

TEST(Stats, OffByDefaultCountsNothing) {
    crew_pool *p = monitored_pool(2, false);
    for (int i = 0; i < 100; i++)
        crew_submit(p, noop, nullptr, 0, nullptr);
    crew_wait_all(p);
    crew_stats s = get(p);
    EXPECT_EQ(s.monitoring, 0);
    EXPECT_EQ(s.submitted, 0u);
    EXPECT_EQ(s.completed, 0u);
    EXPECT_EQ(s.processing.count, 0u);
    EXPECT_EQ(s.threads, 2u);
    crew_destroy(p);
}

TEST(Stats, CountersAddUpAndLatenciesAreOrdered) {
    crew_pool *p = monitored_pool(2);
    const long n = scaled(20000);
    std::vector<crew_task> arr(100);
    for (auto &t : arr)
        t.fn = noop;
    long submitted = 0;
    for (long i = 0; i < n; i++, submitted++)
        ASSERT_EQ(crew_submit(p, noop, nullptr, uint32_t(i % 3), nullptr), CREW_OK);
    ASSERT_EQ(crew_enqueue_tasks_wait(p, arr.data(), arr.size()), CREW_OK);
    submitted += long(arr.size());
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_stats s = get(p);
    EXPECT_EQ(s.monitoring, 1);
    EXPECT_EQ(s.submitted, uint64_t(submitted));
    EXPECT_EQ(s.completed, uint64_t(submitted));
    EXPECT_EQ(s.cancelled, 0u);
    EXPECT_EQ(s.queued, 0u);
    EXPECT_EQ(s.running, 0u);
    EXPECT_EQ(s.completed, s.submitted - s.cancelled - s.queued - s.running);
    EXPECT_GE(s.queued_peak, 1u);
    EXPECT_EQ(s.threads, 2u);
    EXPECT_GE(s.threads_peak, 2u);
    EXPECT_GT(s.uptime_ns, 0u);
    EXPECT_GT(s.throughput, 0.0);
    for (auto *l : {&s.response, &s.idle, &s.processing, &s.turnaround})
        EXPECT_EQ(l->count, uint64_t(submitted));
    expect_ordered(s.response, "response");
    expect_ordered(s.idle, "idle");
    expect_ordered(s.processing, "processing");
    expect_ordered(s.turnaround, "turnaround");
    // Per task: submitted <= accepted <= started <= finished, so turnaround covers the rest.
    EXPECT_GE(s.turnaround.mean_ns + 1, s.idle.mean_ns + s.processing.mean_ns);
    EXPECT_GE(s.turnaround.max_ns, s.processing.max_ns);
    // Workers' task counts plus what helping callers ran add up to the total.
    size_t nw = 0;
    ASSERT_EQ(crew_stats_threads(p, nullptr, 0, &nw), CREW_OK);
    ASSERT_EQ(nw, 2u);
    std::vector<crew_thread_stats> ts(nw);
    ASSERT_EQ(crew_stats_threads(p, ts.data(), ts.size(), &nw), CREW_OK);
    uint64_t by_workers = 0;
    for (auto &t : ts) {
        EXPECT_EQ(t.state, 0);
        // A stolen task is run by its thief: never more steals than tasks; none without stealing.
        EXPECT_LE(t.stolen, t.tasks);
        if (crewtest::scheduler() != "steal") {
            EXPECT_EQ(t.stolen, 0u);
        }
        by_workers += t.tasks;
    }
    EXPECT_LE(by_workers, s.completed);
    crew_destroy(p);
}

TEST(Stats, ProcessingTimeReflectsTheWork) {
    crew_pool *p = monitored_pool(2);
    for (int i = 0; i < 20; i++)
        crew_submit(p, sleep2ms, nullptr, 0, nullptr);
    // Not crew_wait_all, which helps: on a loaded machine this thread could run every task
    // itself, and the workers' busy time below would be 0.
    crew_stats s = get(p);
    for (int spins = 0; s.completed < 20 && spins < 60000; spins++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        s = get(p);
    }
    ASSERT_EQ(s.completed, 20u);
    // Each task sleeps at least 2 ms; buckets are within 12.5%.
    EXPECT_GE(s.processing.p50_ns, 1750000u);
    EXPECT_GE(s.processing.mean_ns, 2000000.0);
    size_t n = 2;
    crew_thread_stats ts[2];
    crew_stats_threads(p, ts, 2, &n);
    EXPECT_GE(ts[0].busy_ns + ts[1].busy_ns, 20 * 2000000u); // the workers ran all 20
    crew_destroy(p);
}

TEST(Stats, CancelledAndRejectedAreCounted) {
    crew_pool *p = monitored_pool(1);
    Gate gate;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_submit(p, nullptr, nullptr, 0, nullptr), CREW_EINVAL); // rejected
    crew_handle never = {999, 1};
    EXPECT_EQ(crew_submit(p, noop, nullptr, 0, &never), CREW_EINVAL); // rejected
    crew_stats before = get(p);
    EXPECT_EQ(before.queued, 50u);
    EXPECT_EQ(before.running, 1u);
    EXPECT_EQ(before.completed, before.submitted - before.cancelled - before.queued -
                                    before.running);
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        gate.open();
    });
    ASSERT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    opener.join();
    EXPECT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_ESHUTDOWN); // rejected
    crew_stats s = get(p);
    EXPECT_EQ(s.submitted, 51u);
    EXPECT_EQ(s.cancelled, 50u);
    EXPECT_EQ(s.completed, 1u);
    EXPECT_EQ(s.rejected, 3u);
    EXPECT_EQ(s.completed, s.submitted - s.cancelled - s.queued - s.running);
    crew_destroy(p);
}

TEST(Stats, TogglingOnALivePoolIsSafe) {
    crew_pool *p = monitored_pool(2, false);
    std::atomic<bool> stop{false};
    std::thread toggler([&] {
        for (int i = 0; !stop; i++) {
            crew_set_monitoring(p, i % 2);
            crew_stats s;
            s.size = sizeof s;
            crew_stats_get(p, &s);
            std::this_thread::yield();
        }
    });
    const long n = scaled(100000);
    for (long i = 0; i < n; i++)
        ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
    stop = true;
    toggler.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_stats s = get(p);
    EXPECT_LE(s.submitted, uint64_t(n));
    EXPECT_EQ(s.completed, s.submitted); // every timed task was counted when it finished
    EXPECT_EQ(crew_set_monitoring(nullptr, 1), CREW_EINVAL);
    crew_destroy(p);
}

TEST(Stats, ResetZeroes) {
    crew_pool *p = monitored_pool(2);
    for (int i = 0; i < 100; i++)
        crew_submit(p, noop, nullptr, 0, nullptr);
    crew_wait_all(p);
    EXPECT_EQ(crew_stats_reset(p), CREW_OK);
    crew_stats s = get(p);
    EXPECT_EQ(s.submitted, 0u);
    EXPECT_EQ(s.completed, 0u);
    EXPECT_EQ(s.turnaround.count, 0u);
    size_t n = 2;
    crew_thread_stats ts[2];
    crew_stats_threads(p, ts, 2, &n);
    EXPECT_EQ(ts[0].tasks + ts[1].tasks, 0u);
    EXPECT_EQ(crew_stats_reset(nullptr), CREW_EINVAL);
    crew_destroy(p);
}

// Recording takes no lock: workers write their own blocks and other threads share a few
// striped ones. More submitting threads than stripes, readers and resets racing them: once the
// pool is quiet and reset, the counts of a known batch are exact, whoever recorded them.
TEST(Stats, ExactAcrossThreadsAfterRacingReadsAndResets) {
    crew_pool *p = monitored_pool(2);
    std::atomic<bool> stop{false};
    std::thread reader([&] {
        for (int i = 0; !stop; i++) {
            crew_stats s = get(p);
            EXPECT_LE(s.completed, s.submitted + 1000000); // sane while moving
            size_t n = 0;
            crew_thread_stats ts[4];
            crew_stats_threads(p, ts, 4, &n);
            if (i % 8 == 0)
                crew_stats_reset(p);
            std::this_thread::yield();
        }
    });
    const unsigned producers = 12; // more than the shared blocks
    const long each = scaled(20000);
    std::vector<std::thread> prod;
    for (unsigned i = 0; i < producers; i++)
        prod.emplace_back([&] {
            for (long k = 0; k < each; k++)
                ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
        });
    for (auto &t : prod)
        t.join();
    stop = true;
    reader.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);

    ASSERT_EQ(crew_stats_reset(p), CREW_OK);
    crew_stats s = get(p);
    EXPECT_EQ(s.submitted, 0u);
    EXPECT_EQ(s.completed, 0u);
    EXPECT_EQ(s.response.count, 0u);
    std::vector<std::thread> batch;
    for (unsigned i = 0; i < producers; i++)
        batch.emplace_back([&] {
            for (int k = 0; k < 100; k++)
                ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
        });
    for (auto &t : batch)
        t.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    s = get(p);
    EXPECT_EQ(s.submitted, producers * 100u);
    EXPECT_EQ(s.completed, producers * 100u);
    EXPECT_EQ(s.response.count, producers * 100u);
    EXPECT_EQ(s.turnaround.count, producers * 100u);
    size_t n = 0;
    crew_thread_stats ts[2];
    ASSERT_EQ(crew_stats_threads(p, ts, 2, &n), CREW_OK);
    ASSERT_EQ(n, 2u);
    // Workers ran some of the batch (the waiting caller may have run the rest), none more.
    EXPECT_LE(ts[0].tasks + ts[1].tasks, producers * 100u);
    EXPECT_LE(ts[0].stolen, ts[0].tasks);
    EXPECT_LE(ts[1].stolen, ts[1].tasks);
    crew_destroy(p);
}

// running counts tasks being run, not the units of the pending count that workers hold as
// credit (it once read 37 with 2 workers): a task that spawns children takes credit, then
// blocks while holding it.
struct SpawnAndBlock {
    crew_pool *p;
    Gate *gate;
};

void spawn_and_block(void *arg) {
    auto *s = static_cast<SpawnAndBlock *>(arg);
    for (int i = 0; i < 10; i++)
        crew_submit(s->p, noop, nullptr, 0, nullptr);
    Gate::block(s->gate);
}

TEST(Stats, RunningCountsTheTasksBeingRun) {
    crew_pool *p = monitored_pool(2);
    Gate gate;
    SpawnAndBlock sb{p, &gate};
    ASSERT_EQ(crew_submit(p, spawn_and_block, &sb, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    // The children run on the other worker (with a queue per worker and no stealing they wait
    // for the blocked one instead); either way, wait until they stop moving.
    crew_stats s = get(p);
    for (int i = 0; i < 500 && s.completed < 10; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        s = get(p);
    }
    EXPECT_EQ(s.completed + s.queued, 10u);
    EXPECT_EQ(s.running, 1u);
    gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

TEST(Stats, VersionedStructAndBadArguments) {
    crew_pool *p = monitored_pool(1);
    crew_submit(p, noop, nullptr, 0, nullptr);
    crew_wait_all(p);
    // An older caller that knows the struct only up to `throughput`: nothing past it is written.
    unsigned char buf[sizeof(crew_stats) + 16];
    std::memset(buf, 0xab, sizeof buf);
    crew_stats *s = reinterpret_cast<crew_stats *>(buf);
    s->size = offsetof(crew_stats, response);
    ASSERT_EQ(crew_stats_get(p, s), CREW_OK);
    EXPECT_EQ(s->completed, 1u);
    for (size_t i = offsetof(crew_stats, response); i < sizeof buf; i++)
        ASSERT_EQ(buf[i], 0xab) << i;
    s->size = 4;
    EXPECT_EQ(crew_stats_get(p, s), CREW_EINVAL);
    EXPECT_EQ(crew_stats_get(p, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_stats_get(nullptr, s), CREW_EINVAL);
    size_t n;
    EXPECT_EQ(crew_stats_threads(p, nullptr, 1, &n), CREW_EINVAL);
    EXPECT_EQ(crew_stats_threads(p, nullptr, 0, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_stats_write_json(p, nullptr), CREW_EINVAL);
    crew_destroy(p);
}

TEST(Stats, JsonParses) {
    crew_pool *p = monitored_pool(2);
    for (int i = 0; i < 100; i++)
        crew_submit(p, noop, nullptr, 0, nullptr);
    crew_wait_all(p);
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT_EQ(crew_stats_write_json(p, f), CREW_OK);
    fclose(f);
    std::string text(buf, len);
    free(buf);
    Json j{text.c_str()};
    EXPECT_TRUE(j.value()) << text;
    j.ws();
    EXPECT_EQ(*j.p, '\0') << text;
    EXPECT_NE(text.find("\"completed\": 100"), std::string::npos) << text;
    EXPECT_NE(text.find("\"workers\": ["), std::string::npos) << text;
    crew_destroy(p);
}
