// test_blocking.cpp -- blocking tasks (CREW_TASK_BLOCKING): they run on extra threads, never on
// the workers, so short tasks are not held up; limits, idle retirement, cancellation, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;
using Clock = std::chrono::steady_clock;

namespace {

crew_pool *make_blocking_pool(unsigned threads, unsigned max_blocking, unsigned idle_ms) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.max_blocking = max_blocking;
    cfg.blocking_idle_ms = idle_ms;
    return crewtest::make_pool(cfg);
}

// Blocking tasks stay blocked until every short task has run, or for at most a minute: if a
// blocking task held a worker, the short tasks behind it would wait out that minute, and the
// first blocking task would end before the last short one. So the test needs no timing.
struct Timeline {
    std::atomic<int64_t> first_blocking_done{INT64_MAX};
    std::atomic<int64_t> last_short_done{0};
    std::atomic<int> blocking_runs{0}, short_runs{0};
    int n_short = 0;
    std::mutex m;
    std::condition_variable all_short_done;
};

int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
        .count();
}

void blocking_task(void *a) {
    auto *tl = static_cast<Timeline *>(a);
    {
        std::unique_lock<std::mutex> g(tl->m);
        tl->all_short_done.wait_for(g, std::chrono::minutes(1),
                                    [&] { return tl->short_runs.load() == tl->n_short; });
    }
    int64_t t = now_us(), cur = tl->first_blocking_done.load();
    while (t < cur && !tl->first_blocking_done.compare_exchange_weak(cur, t)) {
    }
    tl->blocking_runs++;
}

void short_task(void *a) {
    auto *tl = static_cast<Timeline *>(a);
    volatile uint64_t x = 1;
    for (int i = 0; i < 100; i++)
        x = x * 6364136223846793005ull + 1;
    int64_t t = now_us(), cur = tl->last_short_done.load();
    while (t > cur && !tl->last_short_done.compare_exchange_weak(cur, t)) {
    }
    if (++tl->short_runs == tl->n_short) {
        std::lock_guard<std::mutex> g(tl->m);
        tl->all_short_done.notify_all();
    }
}

} // namespace

// The experiment: 2 workers, 50 blocking tasks and 10,000 short tasks (1,000 under
// valgrind). Every short task finishes before the first blocking one does, since no blocking
// task occupies a worker (the blocking tasks wait for the short ones: see Timeline).
TEST(Blocking, ShortTasksAreNotHeldUpByBlockingOnes) {
    crew_pool *p = make_blocking_pool(2, 64, 10000);
    Timeline tl;
    const int n_short = crewtest::under_valgrind() ? 1000 : 10000;
    tl.n_short = n_short;
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_submit_ex(p, blocking_task, &tl, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
    for (int i = 0; i < n_short; i++)
        ASSERT_EQ(crew_submit(p, short_task, &tl, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(tl.blocking_runs.load(), 50);
    EXPECT_EQ(tl.short_runs.load(), n_short);
    EXPECT_LE(tl.last_short_done.load(), tl.first_blocking_done.load());
    crew_destroy(p);
}

// A worker never runs a blocking task, even when every worker is idle.
TEST(Blocking, RunsOnBlockingThreadsOnlyAndInAGroup) {
    crew_pool *p = make_blocking_pool(2, 4, 10000);
    std::vector<std::string> names(40);
    std::vector<crew_task> t(names.size());
    struct Arg {
        std::string *name;
    };
    std::vector<Arg> args(names.size());
    for (size_t i = 0; i < t.size(); i++) {
        args[i].name = &names[i];
        t[i] = crew_task{};
        t[i].fn = [](void *a) {
            char buf[16] = {0};
            pthread_getname_np(pthread_self(), buf, sizeof buf);
            *static_cast<Arg *>(a)->name = buf;
        };
        t[i].arg = &args[i];
    }
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks_ex(p, t.data(), t.size(), &g, CREW_TASK_BLOCKING), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    for (auto &n : names)
        EXPECT_NE(n.find("-b"), std::string::npos) << n; // "crew-<id>-b<k>", not "-w<k>"
    crew_destroy(p);
}

// At most max_blocking blocking tasks run at once; the rest wait their turn.
TEST(Blocking, AtMostMaxBlockingAtOnce) {
    crew_pool *p = make_blocking_pool(1, 3, 10000);
    std::atomic<int> now{0}, peak{0}, runs{0};
    struct Arg {
        std::atomic<int> *now, *peak, *runs;
    } arg{&now, &peak, &runs};
    const int n = 30;
    for (int i = 0; i < n; i++)
        ASSERT_EQ(crew_submit_ex(
                      p,
                      [](void *a) {
                          auto *x = static_cast<Arg *>(a);
                          int v = ++*x->now, cur = x->peak->load();
                          while (v > cur && !x->peak->compare_exchange_weak(cur, v)) {
                          }
                          std::this_thread::sleep_for(std::chrono::milliseconds(5));
                          --*x->now;
                          ++*x->runs;
                      },
                      &arg, 0, CREW_TASK_BLOCKING, nullptr),
                  CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), n);
    EXPECT_LE(peak.load(), 3);
    EXPECT_GE(peak.load(), 1);
    crew_destroy(p);
}

// Idle blocking threads exit after blocking_idle_ms; new ones come when work comes again.
TEST(Blocking, IdleThreadsRetireAndComeBack) {
    crew_pool *p = make_blocking_pool(1, 8, 50);
    auto blocking_threads = [] {
        auto names = crewtest::thread_names();
        return std::count_if(names.begin(), names.end(), [](const std::string &s) {
            return s.find("-b") != std::string::npos;
        });
    };
    // Counts the runs on a blocking thread (checked by the thread's own name, not by counting
    // threads after the wait: an idle thread may retire 50 ms after its last task, before a
    // loaded machine gets round to looking).
    std::atomic<int> runs{0};
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 4; i++)
            ASSERT_EQ(crew_submit_ex(
                          p,
                          [](void *a) {
                              std::this_thread::sleep_for(std::chrono::milliseconds(10));
                              char name[16] = {0};
                              pthread_getname_np(pthread_self(), name, sizeof name);
                              if (std::strstr(name, "-b"))
                                  ++*static_cast<std::atomic<int> *>(a);
                          },
                          &runs, 0, CREW_TASK_BLOCKING, nullptr),
                      CREW_OK);
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(runs.load(), 4 * (round + 1));
        auto until = Clock::now() + std::chrono::seconds(20);
        while (blocking_threads() != 0 && Clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        EXPECT_EQ(blocking_threads(), 0);
    }
    EXPECT_EQ(runs.load(), 8);
    crew_destroy(p);
}

// A cancelling shutdown drops queued blocking tasks (reported), lets the running one finish.
TEST(Blocking, CancelDropsQueuedBlockingTasks) {
    crew_pool *p = make_blocking_pool(1, 1, 10000);
    Gate gate;
    std::atomic<int> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_ex(p, Gate::block, &gate, 0, CREW_TASK_BLOCKING, &g), CREW_OK);
    gate.wait_arrivals(1); // the only blocking thread is busy: the rest queue
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(crew_submit_ex(
                      p, [](void *a) { ++*static_cast<std::atomic<int> *>(a); }, &runs, 0,
                      CREW_TASK_BLOCKING, &g),
                  CREW_OK);
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        gate.open();
    });
    EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    opener.join();
    EXPECT_EQ(runs.load(), 0);
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    crew_destroy(p);
}

TEST(Blocking, BadFlagsAndSettings) {
    crew_pool *p = make_blocking_pool(1, 2, 100);
    EXPECT_EQ(crew_submit_ex(p, [](void *) {}, nullptr, 0, 0x80u, nullptr), CREW_EINVAL);
    crew_task t{};
    t.fn = [](void *) {};
    EXPECT_EQ(crew_enqueue_tasks_ex(p, &t, 1, nullptr, 0x80u), CREW_EINVAL);
    EXPECT_EQ(crew_submit_ex(nullptr, [](void *) {}, nullptr, 0, 0, nullptr), CREW_EINVAL);
    crew_destroy(p);
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.max_blocking = CREW_MAX_THREADS + 1;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
}
