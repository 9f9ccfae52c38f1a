// test_cpus.cpp -- the CPUs a pool counts (src/cpus.c): a pool created by a thread whose affinity
// mask holds one CPU sizes itself to 1 by default and counts 1 CPU for CREW_SPIN_AUTO, the
// sizing controller and the MultiQueue (all read crew_pool.cpus, which the spin budget shows);
// and the cgroup v2 quota: cpu.max's text, and the smallest limit on the way up the tree.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

// Internal (the tests link the library's checked build): cpus.c's and idle.c's.
extern "C" unsigned crew__cpus_count(const crew_hooks *h);
extern "C" unsigned crew__cpus_quota(const char *root, const char *path);
extern "C" unsigned crew__cpus_quota_parse(const char *text);
extern "C" unsigned crew__idle_polls(crew_pool *p);

namespace {

#if defined(__linux__)
// Run fn on a new thread whose affinity mask is the first CPU this process may run on (the
// pools it creates start their threads with that mask); this thread's own mask is untouched.
template <class F> void on_one_cpu(F fn) {
    std::thread t([&] {
        cpu_set_t s;
        ASSERT_EQ(sched_getaffinity(0, sizeof s, &s), 0);
        int cpu = 0;
        while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &s))
            cpu++;
        ASSERT_LT(cpu, CPU_SETSIZE);
        CPU_ZERO(&s);
        CPU_SET(cpu, &s);
        ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof s, &s), 0);
        fn();
    });
    t.join();
}
#endif

// The polls CREW_SPIN_AUTO gives p (threads workers) while every worker is inside a task.
unsigned polls_with_all_busy(crew_pool *p, unsigned threads) {
    crewtest::Gate gate;
    gate.hold(p, int(threads));
    unsigned polls = crew__idle_polls(p);
    gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    return polls;
}

} // namespace

TEST(Cpus, OneCpuInTheMaskMeansOneWorkerAndOneCpuCounted) {
#if defined(__linux__)
    cpu_set_t all;
    ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
    if (CPU_COUNT(&all) < 2)
        std::printf("note: this process may run on one CPU only: the pinned case is the default\n");
    on_one_cpu([] {
        EXPECT_EQ(crew__cpus_count(nullptr), 1u);
        // The default size.
        crew_pool *p = nullptr;
        ASSERT_EQ(crew_create(&p, nullptr), CREW_OK);
        EXPECT_EQ(crew_size(p), 1u);
        crew_destroy(p);
        // With automatic sizing, the start inside [min, max] is the CPU count too.
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.autosize = CREW_AUTOSIZE_BALANCE;
        cfg.max_threads = 4;
        p = nullptr;
        ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
        EXPECT_EQ(crew_size(p), 1u);
        crew_destroy(p);
        // The MultiQueue sized from the same count, with more threads than CPUs: runs.
        crew_config_init(&cfg);
        cfg.scheduler = CREW_SCHED_SHARED_LOCKFREE;
        p = nullptr;
        ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
        ASSERT_EQ(crew_resize(p, 3), CREW_OK);
        std::atomic<int> ran{0};
        for (int i = 0; i < 100; i++)
            ASSERT_EQ(crew_submit(
                          p, [](void *a) { static_cast<std::atomic<int> *>(a)->fetch_add(1); },
                          &ran, 0, nullptr),
                      CREW_OK);
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(ran.load(), 100);
        crew_destroy(p);
        // The spin budget: 2 busy workers on 1 CPU outnumber it, so no polls.
        p = crewtest::make_pool(2);
        EXPECT_EQ(polls_with_all_busy(p, 2), 0u);
        crew_destroy(p);
    });
    // The same 2 busy workers where the mask has 2 CPUs or more fit them: polls.
    if (CPU_COUNT(&all) >= 2) {
        crew_pool *p = crewtest::make_pool(2);
        EXPECT_EQ(polls_with_all_busy(p, 2), 64u);
        crew_destroy(p);
    }
#else
    GTEST_SKIP() << "no CPU affinity here";
#endif
}

// The default size is the calling thread's CPU count (at most the cgroup quota).
TEST(Cpus, DefaultSizeIsTheCount) {
    crew_pool *p = nullptr;
    ASSERT_EQ(crew_create(&p, nullptr), CREW_OK);
    EXPECT_EQ(crew_size(p), crew__cpus_count(nullptr));
    crew_destroy(p);
}

TEST(Cpus, QuotaText) {
    EXPECT_EQ(crew__cpus_quota_parse("max 100000\n"), 0u);
    EXPECT_EQ(crew__cpus_quota_parse("max"), 0u);
    EXPECT_EQ(crew__cpus_quota_parse("200000 100000\n"), 2u);
    EXPECT_EQ(crew__cpus_quota_parse("150000 100000\n"), 2u); // rounded up
    EXPECT_EQ(crew__cpus_quota_parse("50000 100000\n"), 1u);
    EXPECT_EQ(crew__cpus_quota_parse("1000 100000"), 1u);
    EXPECT_EQ(crew__cpus_quota_parse(""), 0u);
    EXPECT_EQ(crew__cpus_quota_parse("garbage"), 0u);
    EXPECT_EQ(crew__cpus_quota_parse("100000"), 0u);  // no period
    EXPECT_EQ(crew__cpus_quota_parse("0 100000"), 0u); // not a limit
    EXPECT_EQ(crew__cpus_quota_parse("100000 0"), 0u);
    EXPECT_EQ(crew__cpus_quota_parse("-1 100000"), 0u);
    EXPECT_EQ(crew__cpus_quota_parse(nullptr), 0u);
    EXPECT_EQ(crew__cpus_quota_parse("99999999999999 1"), CREW_MAX_THREADS);
}

// A cgroup's limit is the smallest of its own and its ancestors' (each bounds the sub-tree);
// missing files mean no limit at that level.
TEST(Cpus, QuotaIsTheSmallestOnTheWayUp) {
    char tmpl[] = "/tmp/crew_cpus_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string root = tmpl;
    auto write = [](const std::string &file, const char *text) {
        FILE *f = std::fopen(file.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs(text, f);
        std::fclose(f);
    };
    ASSERT_EQ(mkdir((root + "/a").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((root + "/a/b").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((root + "/a/b/c").c_str(), 0700), 0);
    EXPECT_EQ(crew__cpus_quota(root.c_str(), "/a/b/c"), 0u); // no files: no quota
    EXPECT_EQ(crew__cpus_quota(root.c_str(), "/"), 0u);
    write(root + "/a/b/c/cpu.max", "max 100000\n");
    write(root + "/a/b/cpu.max", "300000 100000\n");
    write(root + "/a/cpu.max", "250000 100000\n");
    EXPECT_EQ(crew__cpus_quota(root.c_str(), "/a/b/c"), 3u); // a's 2.5, rounded up
    write(root + "/a/b/cpu.max", "100000 100000\n");
    EXPECT_EQ(crew__cpus_quota(root.c_str(), "/a/b/c"), 1u);
    EXPECT_EQ(crew__cpus_quota(root.c_str(), "/a"), 3u);  // its own; not its children's
    write(root + "/cpu.max", "200000 100000\n");            // the mount's own
    EXPECT_EQ(crew__cpus_quota(root.c_str(), "/a"), 2u);
    EXPECT_EQ(crew__cpus_quota(root.c_str(), "/"), 2u);
    EXPECT_EQ(crew__cpus_quota(root.c_str(), "/x/y"), 2u); // missing levels: no limit there
    for (const char *f : {"/a/b/c/cpu.max", "/a/b/cpu.max", "/a/cpu.max", "/cpu.max"})
        std::remove((root + f).c_str());
    for (const char *d : {"/a/b/c", "/a/b", "/a", ""})
        rmdir((root + d).c_str());
}
