// test_stress.cpp -- many tasks from several producers, mixed priorities and groups, each
// counted to have run exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::make_pool;
using crewtest::scaled;

namespace {

struct Counter {
    std::atomic<uint8_t> runs{0};
};

void bump(void *arg) { static_cast<Counter *>(arg)->runs.fetch_add(1, std::memory_order_relaxed); }

} // namespace

TEST(Stress, MillionTasksFromFourProducersRunExactlyOnce) {
    const long total = scaled(1000000);
    const int producers = 4;
    crew_pool *p = make_pool(2);
    std::unique_ptr<Counter[]> c(new Counter[total]);
    std::vector<std::thread> ts;
    for (int k = 0; k < producers; k++)
        ts.emplace_back([&, k] {
            std::mt19937 rng(k);
            std::vector<crew_task> batch(64);
            crew_handle g = CREW_HANDLE_NONE;
            long i = k;
            while (i < total) {
                switch (rng() % 4) {
                case 0: // single, no group
                    ASSERT_EQ(crew_submit(p, bump, &c[i], rng() % 16, nullptr), CREW_OK);
                    i += producers;
                    break;
                case 1: { // single into a running group; reopen when it has finished
                    int rc = crew_submit(p, bump, &c[i], rng() % 16, &g);
                    if (rc == CREW_ESTALE) {
                        g = CREW_HANDLE_NONE;
                        rc = crew_submit(p, bump, &c[i], rng() % 16, &g);
                    }
                    ASSERT_EQ(rc, CREW_OK);
                    i += producers;
                    break;
                }
                case 2: { // an array into a new group, sometimes waited for
                    size_t n = 0;
                    for (; n < batch.size() && i < total; n++, i += producers) {
                        batch[n] = crew_task{};
                        batch[n].fn = bump, batch[n].arg = &c[i], batch[n].priority = rng() % 16;
                    }
                    crew_handle h = CREW_HANDLE_NONE;
                    ASSERT_EQ(crew_enqueue_tasks(p, batch.data(), n, &h), CREW_OK);
                    ASSERT_EQ(crew_wait(p, h), CREW_OK); // the batch must outlive its queueing
                    break;
                }
                default: { // enqueue-and-wait
                    size_t n = 0;
                    for (; n < 8 && i < total; n++, i += producers) {
                        batch[n] = crew_task{};
                        batch[n].fn = bump, batch[n].arg = &c[i], batch[n].priority = rng() % 16;
                    }
                    ASSERT_EQ(crew_enqueue_tasks_wait(p, batch.data(), n), CREW_OK);
                }
                }
            }
        });
    for (auto &t : ts)
        t.join();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    long wrong = 0, first = -1;
    for (long i = 0; i < total; i++)
        if (c[i].runs.load() != 1 && wrong++ == 0)
            first = i;
    EXPECT_EQ(wrong, 0) << "first task not run exactly once: " << first;
    crew_destroy(p);
}

TEST(Stress, OneProducerManyEmptyTasks) {
    const long total = scaled(1000000);
    crew_pool *p = make_pool(2);
    std::atomic<long> n{0};
    auto inc = [](void *a) {
        static_cast<std::atomic<long> *>(a)->fetch_add(1, std::memory_order_relaxed);
    };
    for (long i = 0; i < total; i++)
        ASSERT_EQ(crew_submit(p, inc, &n, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), total);
    crew_destroy(p);
}
