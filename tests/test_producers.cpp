// test_producers.cpp -- two threads outside the pool that submit at once: one keeps a backlog of
// tasks queued without a break, the other submits a single task. The single task must not wait
// behind the busy producer's backlog for as long as that producer keeps it full: it starts after
// at most a few backlogs' worth of the busy producer's tasks, under every strategy (the
// work-stealing strategy keeps one queue per submitting thread, and a worker that keeps taking
// from the queue where it last found work would serve the busy one alone).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common.h"

using namespace crewtest;

namespace {

struct Flood {
    std::atomic<long> started{0};     // the busy producer's tasks that have started
    std::atomic<long> started_at_b{-1}; // started, as the single task starts
    std::atomic<bool> stop{false};
};

void busy_task(void *arg) {
    static_cast<Flood *>(arg)->started.fetch_add(1, std::memory_order_relaxed);
    volatile unsigned x = 0; // a little work (a count, not a time): the backlog drains slowly
    for (unsigned i = 0; i < 400; i++)
        x = x + i;
}

void single_task(void *arg) {
    auto *f = static_cast<Flood *>(arg);
    f->started_at_b.store(f->started.load());
}

TEST(Producers, ASingleTaskIsNotHeldBehindABusyProducersBacklog) {
    const long backlog = 2000;          // the busy producer keeps about this many queued
    const long limit = 50 * backlog;    // then it gives up (the single task waited too long)
    for (unsigned sched : kSchedulers) {
        SCOPED_TRACE(sched);
        crew_pool *p = make_pool(1, sched);
        Flood f;
        long submitted = 0;
        std::thread busy([&] {
            while (!f.stop.load()) {
                if (submitted - f.started.load() < backlog) {
                    if (crew_submit(p, busy_task, &f, 0, nullptr) != CREW_OK)
                        std::abort();
                    submitted++;
                } else {
                    std::this_thread::yield();
                }
            }
        });
        while (f.started.load() < 100) // the flood runs, its backlog formed
            std::this_thread::yield();
        // The MultiQueue's order is relaxed by design (a take pops the better of two random
        // queues): the single task waits behind its own queue's share of the backlog and loses
        // some draws, so its bound is looser; it must still start long before the limit.
        bool relaxed = sched == CREW_SCHED_SHARED_LOCKFREE ||
                       (sched == CREW_SCHED_DEFAULT && !strict_priority());
        // Several single tasks, one at a time, each from a thread of its own, while the flood
        // goes on: where the pool looks first decides each one's wait, so one may be lucky.
        for (int round = 0; round < 4; round++) {
            SCOPED_TRACE(round);
            f.started_at_b.store(-1);
            long before = 0;
            // `before` is read once the task is queued: read before the submission, a
            // preemption in between would count tasks that started before it was queued.
            std::thread single([&] {
                if (crew_submit(p, single_task, &f, 0, nullptr) != CREW_OK)
                    std::abort();
                before = f.started.load();
            });
            single.join();
            // Wait (not through the pool: a waiting submitter would run its own task) until the
            // single task starts, or the busy producer's tasks have run far past its backlog.
            auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
            while (f.started_at_b.load() < 0 && f.started.load() - before < limit &&
                   std::chrono::steady_clock::now() < until)
                std::this_thread::yield();
            if (f.started_at_b.load() < 0) { // still queued: stop the flood, let it run
                f.stop.store(true);
                busy.join();
                ASSERT_EQ(crew_wait_all(p), CREW_OK);
            }
            long at = f.started_at_b.load();
            ASSERT_GE(at, 0) << "the single task never started";
            EXPECT_LT(at - before, (relaxed ? 15 : 3) * backlog)
                << "the single task started after " << (at - before)
                << " of the busy producer's tasks (its backlog: about " << backlog << ")";
            if (f.stop.load())
                break;
        }
        if (!f.stop.load()) {
            f.stop.store(true);
            busy.join();
        }
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(f.started.load(), submitted);
        crew_destroy(p);
    }
}

} // namespace
