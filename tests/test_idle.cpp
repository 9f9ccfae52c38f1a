// test_idle.cpp -- an idle pool sleeps: eight idle workers use well under 1% of a core.
#include <gtest/gtest.h>

#include <thread>
#include <time.h>

#include "common.h"

static double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST(Idle, SleepingPoolUsesAlmostNoCpu) {
    if (crewtest::under_valgrind())
        GTEST_SKIP() << "valgrind serialises threads; CPU time means nothing there";
    crew_pool *p = crewtest::make_pool(8);
    // Give the workers a burst of work first, so they have spun and gone back to sleep.
    for (int i = 0; i < 1000; i++)
        crew_submit(p, [](void *) {}, nullptr, 0, nullptr);
    crew_wait_all(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    double before = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    double used = cpu_seconds() - before;
    // This measures behaviour (sleeping, not spinning), not speed: a spinning worker would use
    // a whole second here.
    EXPECT_LT(used, 0.01) << "idle pool used " << used * 100 << "% of a core";
    crew_destroy(p);
}
