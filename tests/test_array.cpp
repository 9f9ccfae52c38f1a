// test_array.cpp -- long arrays (crew_enqueue_tasks of at least 32 tasks of priority 0), which
// the pool queues as a few runners that claim the array's tasks a chunk at a time (src/array.c):
// every task runs exactly once or is handed to on_drop, under cancel, both shutdowns, pause,
// resize and groups; arrays that do not qualify (other priorities, a bounded queue) keep their
// rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common.h"

namespace {

// One array of n tasks, each counting its runs and drops in its own cell.
struct Cells {
    explicit Cells(size_t n) : ran(n), dropped(n), tasks(n), slots(n) {
        for (size_t i = 0; i < n; i++) {
            slots[i] = {this, i}; // each task's arg: its cell
            tasks[i].fn = run;
            tasks[i].arg = &slots[i];
        }
    }
    struct Slot {
        Cells *c;
        size_t i;
    };
    static void run(void *arg) {
        auto *s = static_cast<Slot *>(arg);
        s->c->ran[s->i].fetch_add(1);
        if (s->c->spin_us) {
            auto until = std::chrono::steady_clock::now() +
                         std::chrono::microseconds(s->c->spin_us);
            while (std::chrono::steady_clock::now() < until) {
            }
        }
        s->c->started.fetch_add(1);
    }
    static void on_drop(crew_fn fn, void *task_arg, void *arg) {
        (void)arg;
        if (fn != run)
            return;
        auto *s = static_cast<Slot *>(task_arg);
        s->c->dropped[s->i].fetch_add(1);
    }
    // Every task ran or was dropped, exactly once. Returns how many were dropped.
    size_t check_once() const {
        size_t drops = 0;
        for (size_t i = 0; i < ran.size(); i++) {
            EXPECT_EQ(ran[i].load() + dropped[i].load(), 1) << "task " << i;
            drops += (size_t)dropped[i].load();
        }
        return drops;
    }
    std::vector<std::atomic<int>> ran, dropped;
    std::vector<crew_task> tasks;
    std::vector<Slot> slots;
    std::atomic<size_t> started{0};
    int spin_us = 0;
};

crew_pool *make_pool(unsigned threads, const crew_hooks *hooks = nullptr) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.hooks = hooks;
    crew_pool *p = nullptr;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_OK);
    return p;
}

crew_hooks drop_hooks() {
    crew_hooks h{};
    h.size = sizeof h;
    h.on_drop = Cells::on_drop;
    return h;
}

} // namespace

TEST(Array, EveryTaskOnceAtEverySize) {
    for (unsigned threads : {1u, 2u, 4u}) {
        crew_pool *p = make_pool(threads);
        for (size_t n : {31u, 32u, 33u, 64u, 1000u, 20000u}) {
            Cells c(n);
            crew_handle g = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), n, &g), CREW_OK);
            EXPECT_EQ(crew_wait(p, g), CREW_OK);
            EXPECT_EQ(c.check_once(), 0u);
            Cells d(n); // no group: crew_wait_all
            ASSERT_EQ(crew_enqueue_tasks(p, d.tasks.data(), n, nullptr), CREW_OK);
            EXPECT_EQ(crew_wait_all(p), CREW_OK);
            EXPECT_EQ(d.check_once(), 0u);
        }
        crew_destroy(p);
    }
}

// A task that queues an array into a new group and waits for it, on a pool of one thread: the
// waiter itself must run the array (its runners are its group's tasks).
struct Nested {
    crew_pool *p;
    Cells *c;
    int rc = -1;
};
static void nested_task(void *arg) {
    auto *x = static_cast<Nested *>(arg);
    crew_handle g = CREW_HANDLE_NONE;
    x->rc = crew_enqueue_tasks(x->p, x->c->tasks.data(), x->c->tasks.size(), &g);
    if (x->rc == CREW_OK)
        x->rc = crew_wait(x->p, g);
}

TEST(Array, FromATaskWaitingForItsGroup) {
    for (unsigned threads : {1u, 2u}) {
        crew_pool *p = make_pool(threads);
        Cells c(500);
        Nested x{p, &c};
        ASSERT_EQ(crew_submit(p, nested_task, &x, 0, nullptr), CREW_OK);
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(x.rc, CREW_OK);
        EXPECT_EQ(c.check_once(), 0u);
        crew_destroy(p);
    }
}

TEST(Array, CancelledGroupRunsOrReportsEachTaskOnce) {
    crew_hooks h = drop_hooks();
    crew_pool *p = make_pool(2, &h);
    crewtest::Gate gate;
    gate.hold(p, 2); // the workers are busy: the array waits in the queue
    Cells c(3000);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), &g), CREW_OK);
    EXPECT_EQ(crew_cancel(p, g), CREW_OK);
    gate.open();
    // crew_wait helps: it may only drop these, never run them
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(c.check_once(), c.tasks.size()); // none had started: all dropped
    crew_destroy(p);
}

TEST(Array, CancelWhileRunning) {
    crew_hooks h = drop_hooks();
    crew_pool *p = make_pool(2, &h);
    Cells c(20000);
    c.spin_us = 1;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), &g), CREW_OK);
    while (c.started.load() < 100)
        std::this_thread::yield();
    crew_cancel(p, g);
    int rc = crew_wait(p, g);
    EXPECT_TRUE(rc == CREW_ECANCELED || rc == CREW_OK) << rc;
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    c.check_once();
    crew_destroy(p);
}

// The gate opens from on_drop: the cancelling shutdown's sweep has begun, with the workers
// still held, so every task of the array is still queued and must be reported.
static crewtest::Gate *g_shutdown_gate;
static void drop_and_open(crew_fn fn, void *task_arg, void *arg) {
    Cells::on_drop(fn, task_arg, arg);
    g_shutdown_gate->open();
}

TEST(Array, CancellingShutdownReportsTheQueuedArray) {
    crew_hooks h = drop_hooks();
    h.on_drop = drop_and_open;
    crew_pool *p = make_pool(2, &h);
    crewtest::Gate gate;
    g_shutdown_gate = &gate;
    gate.hold(p, 2);
    Cells c(5000);
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), nullptr), CREW_OK);
    EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    EXPECT_EQ(c.check_once(), c.tasks.size());
    crew_destroy(p);
}

TEST(Array, CancellingShutdownWhileRunning) {
    crew_hooks h = drop_hooks();
    crew_pool *p = make_pool(3, &h);
    Cells c(50000);
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), nullptr), CREW_OK);
    while (c.started.load() < 10)
        std::this_thread::yield();
    EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    c.check_once();
    crew_destroy(p);
}

TEST(Array, DrainingShutdownRunsEveryTask) {
    crew_hooks h = drop_hooks();
    crew_pool *p = make_pool(2, &h);
    Cells c(30000);
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), nullptr), CREW_OK);
    EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_EQ(c.check_once(), 0u);
    crew_destroy(p);
}

// Arrays queued while another thread shuts the pool down: each call either queued its whole
// array (every task runs once) or none of it (CREW_ESHUTDOWN).
TEST(Array, EnqueueRacingShutdown) {
    for (int round = 0; round < 20; round++) {
        crew_hooks h = drop_hooks();
        crew_pool *p = make_pool(2, &h);
        std::vector<std::unique_ptr<Cells>> arrays;
        std::vector<int> rcs;
        std::atomic<bool> go{false};
        std::thread producer([&] {
            while (!go.load())
                std::this_thread::yield();
            for (int i = 0; i < 50; i++) {
                arrays.push_back(std::make_unique<Cells>(40));
                rcs.push_back(crew_enqueue_tasks(p, arrays.back()->tasks.data(), 40, nullptr));
            }
        });
        go.store(true);
        EXPECT_EQ(crew_shutdown(p, round % 2 ? CREW_CANCEL : CREW_DRAIN), CREW_OK);
        producer.join();
        for (size_t i = 0; i < arrays.size(); i++) {
            if (rcs[i] == CREW_OK) {
                arrays[i]->check_once();
            } else {
                EXPECT_EQ(rcs[i], CREW_ESHUTDOWN);
                for (auto &r : arrays[i]->ran)
                    EXPECT_EQ(r.load(), 0);
                for (auto &d : arrays[i]->dropped)
                    EXPECT_EQ(d.load(), 0);
            }
        }
        crew_destroy(p);
    }
}

// A task of the array pauses the pool: the runners stop and hand the rest back; nothing starts
// until crew_resume, then every task runs once.
static crew_pool *g_pause_pool;
static void pausing(void *arg) {
    auto *s = static_cast<Cells::Slot *>(arg);
    if (s->i == 100)
        crew_pause(g_pause_pool);
    Cells::run(arg);
}

TEST(Array, PauseStopsTheRunners) {
    crew_pool *p = make_pool(2);
    Cells c(5000);
    for (auto &t : c.tasks)
        t.fn = pausing;
    g_pause_pool = p;
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), nullptr), CREW_OK);
    while (!crew_paused(p))
        std::this_thread::yield();
    // Tasks taken as the pause began may still start; then nothing does.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    size_t before = c.started.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(c.started.load(), before);
    EXPECT_LT(before, c.tasks.size());
    EXPECT_EQ(crew_resume(p), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(c.check_once(), 0u);
    crew_destroy(p);
}

TEST(Array, ResizeWhileRunning) {
    crew_pool *p = make_pool(4);
    Cells c(100000);
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), nullptr), CREW_OK);
    for (int i = 0; i < 20; i++)
        crew_resize(p, i % 2 ? 3u : 1u);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(c.check_once(), 0u);
    crew_destroy(p);
}

// An array of another priority keeps the priority order: a priority-0 task queued after it, on a
// held single worker, starts first.
static std::atomic<int> g_order{0};
static int g_first_seen = -1;
static void record_first(void *arg) {
    int me = (int)(intptr_t)arg;
    int k = g_order.fetch_add(1);
    if (k == 0)
        g_first_seen = me;
}

TEST(Array, OtherPrioritiesKeepTheirOrder) {
    g_order.store(0);
    g_first_seen = -1;
    crew_pool *p = make_pool(1);
    crewtest::Gate gate;
    gate.hold(p, 1);
    std::vector<crew_task> t(64);
    for (auto &x : t) {
        x.fn = record_first;
        x.arg = (void *)(intptr_t)1;
        x.priority = 3;
    }
    ASSERT_EQ(crew_enqueue_tasks(p, t.data(), t.size(), nullptr), CREW_OK);
    ASSERT_EQ(crew_submit(p, record_first, (void *)(intptr_t)2, 0, nullptr), CREW_OK);
    gate.open();
    // Not crew_wait_all at once: it helps, and a second thread taking tasks could run its
    // priority-3 task before the worker's priority-0 one, though it took it after.
    while (g_order.load() < 65)
        std::this_thread::yield();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    if (crewtest::strict_priority()) { // not the MultiQueue: relaxed by design
        EXPECT_EQ(g_first_seen, 2);
    }
    EXPECT_EQ(g_order.load(), 65);
    crew_destroy(p);
}

// Priority 0: the array's tasks start in order, and before a task queued after it (one worker;
// not under the MultiQueue, whose order is relaxed; each task still runs once there).
static int g_seq[101];
static std::atomic<int> g_seq_n{0};
static void record_seq(void *arg) {
    g_seq[g_seq_n.load(std::memory_order_relaxed)] = (int)(intptr_t)arg;
    g_seq_n.fetch_add(1, std::memory_order_release);
}

TEST(Array, FifoWithOneWorker) {
    g_seq_n.store(0);
    crew_pool *p = make_pool(1);
    crewtest::Gate gate;
    gate.hold(p, 1);
    std::vector<crew_task> t(100);
    for (size_t i = 0; i < t.size(); i++) {
        t[i].fn = record_seq;
        t[i].arg = (void *)(intptr_t)i;
    }
    ASSERT_EQ(crew_enqueue_tasks(p, t.data(), t.size(), nullptr), CREW_OK);
    ASSERT_EQ(crew_submit(p, record_seq, (void *)(intptr_t)1000, 0, nullptr), CREW_OK);
    gate.open();
    // Not crew_wait_all first: this thread would help, and run tasks out of the worker's order.
    while (g_seq_n.load(std::memory_order_acquire) < 101)
        std::this_thread::yield();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
    if (!crewtest::strict_priority()) // the MultiQueue's order is relaxed by design
        return;
    for (size_t i = 0; i < 100; i++)
        EXPECT_EQ(g_seq[i], (int)i);
    EXPECT_EQ(g_seq[100], 1000);
}

// A bounded queue admits an array all or nothing (such arrays are queued task by task).
TEST(Array, BoundedQueueAdmitsAllOrNothing) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.queue_capacity = 64;
    cfg.full_policy = CREW_FULL_FAIL;
    crew_pool *p = nullptr;
    ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
    crewtest::Gate gate;
    gate.hold(p, 1);
    Cells a(40), b(40);
    EXPECT_EQ(crew_enqueue_tasks(p, a.tasks.data(), 40, nullptr), CREW_OK);
    EXPECT_EQ(crew_enqueue_tasks(p, b.tasks.data(), 40, nullptr), CREW_EFULL);
    gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(a.check_once(), 0u);
    for (auto &r : b.ran)
        EXPECT_EQ(r.load(), 0);
    crew_destroy(p);
}

// crew_stats.queued while every worker is held: exactly the array's tasks, none of its runners;
// 0 once they have run.
TEST(Array, StatsQueuedIsExactlyTheTasks) {
    crew_pool *p = make_pool(2);
    crewtest::Gate gate;
    gate.hold(p, 2);
    Cells c(1000);
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), nullptr), CREW_OK);
    crew_stats s;
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(s.queued, 1000u);
    gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(s.queued, 0u);
    EXPECT_EQ(c.check_once(), 0u);
    crew_destroy(p);
}

// A cancelling shutdown that begins while a runner is in a chunk: the chunk's tasks that have
// not started are queued tasks, and CREW_CANCEL drops them (as it drops the tasks behind a
// running task in a deque); only the task that was running when it began runs.
static std::atomic<int> g_cs_drops{0};
static std::atomic<bool> g_cs_first{false};
static Cells *g_cs_cells;
static void cs_on_drop(crew_fn fn, void *task_arg, void *arg) {
    Cells::on_drop(fn, task_arg, arg);
    g_cs_drops.fetch_add(1);
}
static void cs_first(void *arg) {
    Cells::run(arg);
    g_cs_first.store(true);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (g_cs_drops.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::yield(); // the shutdown's sweep has begun once a task is dropped
}
TEST(Array, CancellingShutdownDropsTheClaimedChunk) {
    g_cs_drops.store(0);
    g_cs_first.store(false);
    crew_hooks h = drop_hooks();
    h.on_drop = cs_on_drop;
    crew_pool *p = make_pool(1, &h);
    Cells c(256);
    g_cs_cells = &c;
    c.tasks[0].fn = cs_first;
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), nullptr), CREW_OK);
    while (!g_cs_first.load())
        std::this_thread::yield();
    EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    EXPECT_GT(g_cs_drops.load(), 0);
    EXPECT_EQ(c.check_once(), c.tasks.size() - 1); // task 0 ran, every other was dropped
    crew_destroy(p);
}

// A waiter whose group has not finished helps with any queued task, and may take a runner of an
// unrelated long array; once its group has finished it must go back to its wait after the
// chunk it is running, not stay until the whole array is claimed.
static std::atomic<int> g_h_started{0};
static std::atomic<bool> g_h_returned{false}, g_h_running{false};
static void h_array_task(void *) {
    g_h_started.fetch_add(1);
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
    while (!g_h_returned.load() && std::chrono::steady_clock::now() < until) {
    }
}
static void h_group_task(void *) {
    g_h_running.store(true);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (g_h_started.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::yield(); // the waiter has taken a runner
}
TEST(Array, WaiterIsNotKeptByAnUnrelatedArray) {
    g_h_started.store(0);
    g_h_returned.store(false);
    g_h_running.store(false);
    crew_pool *p = make_pool(1);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, h_group_task, nullptr, 0, &g), CREW_OK);
    while (!g_h_running.load()) // on the worker, so that this thread's wait helps generally
        std::this_thread::yield();
    const size_t n = 20000;
    std::vector<crew_task> t(n);
    for (auto &x : t) {
        x = crew_task{};
        x.fn = h_array_task;
    }
    ASSERT_EQ(crew_enqueue_tasks(p, t.data(), n, nullptr), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    int at_return = g_h_started.load();
    g_h_returned.store(true);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_LT((size_t)at_return, n / 2) << "started when crew_wait returned";
    EXPECT_EQ(g_h_started.load(), (int)n);
    crew_destroy(p);
}

// The group of an array ends with the array's last task, not with its last runner. One worker
// is held; a thread's crew_wait runs the whole array through one runner (the only thread that
// runs tasks), and the array's last task pauses the pool, so the other runner stays queued with
// nothing left to claim (a paused pool's threads take nothing). The group has finished: a poll
// says so, the waiter returns while the pool is still paused, and the callback is queued.
static crew_pool *g_end_pool;
static void pause_after_last(void *arg) {
    auto *s = static_cast<Cells::Slot *>(arg);
    Cells::run(arg);
    if (s->i + 1 == s->c->tasks.size())
        crew_pause(g_end_pool);
}
struct EndSeen {
    Cells *c;
    std::atomic<int> fired{0};
    std::atomic<size_t> ended_at_fire{0};
};
static void end_seen(void *arg) {
    auto *e = static_cast<EndSeen *>(arg);
    e->ended_at_fire.store(e->c->started.load());
    e->fired.fetch_add(1);
}

TEST(Array, GroupEndsWithItsLastTaskNotItsLastRunner) {
    crew_pool *p = make_pool(1);
    g_end_pool = p;
    crewtest::Gate gate;
    gate.hold(p, 1);
    Cells c(40);
    for (auto &t : c.tasks)
        t.fn = pause_after_last;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), &g), CREW_OK);
    EndSeen e{&c};
    ASSERT_EQ(crew_notify(p, g, end_seen, &e), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, 0), CREW_ETIMEDOUT); // nothing has run yet
    std::atomic<int> waited{1};
    std::thread waiter([&] { waited.store(crew_wait(p, g)); });
    while (c.started.load() < c.tasks.size() || !crew_paused(p))
        std::this_thread::yield();
    // The last task has returned; its end in the group follows at once. The bound only keeps
    // a failure from hanging the test.
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::seconds(crewtest::slow_build() ? 60 : 20);
    int rc;
    while ((rc = crew_wait_timed(p, g, 0)) == CREW_ETIMEDOUT &&
           std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(rc, CREW_OK) << "all " << c.tasks.size() << " tasks ended, the group is open";
    while (waited.load() == 1 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(waited.load(), CREW_OK) << "the waiter returned with the group, the pool paused";
    EXPECT_EQ(crew_paused(p), 1);
    EXPECT_EQ(e.fired.load(), 0); // queued, but the pool is paused
    EXPECT_EQ(crew_resume(p), CREW_OK);
    gate.open();
    waiter.join();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(e.fired.load(), 1);
    EXPECT_EQ(e.ended_at_fire.load(), c.tasks.size());
    EXPECT_EQ(c.check_once(), 0u);
    crew_destroy(p);
}

// Arrays into groups under a held worker, resizes, pauses and cancels from another thread, and
// a shutdown (draining or cancelling) with arrays still queued: every task runs once or goes to
// on_drop once, a group finishes only once all its tasks have ended (its crew_wait, a poll and
// its callback all see them ended) and every group finishes, its callback firing once.
namespace {
struct StressGroup {
    explicit StressGroup(size_t n) : cells(n) {}
    Cells cells;
    crew_handle g = CREW_HANDLE_NONE;
    bool lead_in = false; // a plain task opened the group before the array joined it
    std::atomic<int> lead_ran{0}, lead_dropped{0};
    std::atomic<int> fired{0}, early{0};
    size_t expected() const { return cells.tasks.size() + (lead_in ? 1 : 0); }
    size_t ended() const {
        size_t n = cells.started.load();
        if (lead_in)
            n += (size_t)(lead_ran.load() + lead_dropped.load());
        for (auto &d : cells.dropped)
            n += (size_t)d.load();
        return n;
    }
};
void stress_lead(void *arg) { static_cast<StressGroup *>(arg)->lead_ran.fetch_add(1); }
void stress_drop(crew_fn fn, void *task_arg, void *arg) {
    if (fn == stress_lead)
        static_cast<StressGroup *>(task_arg)->lead_dropped.fetch_add(1);
    else
        Cells::on_drop(fn, task_arg, arg);
}
void stress_end(void *arg) {
    auto *s = static_cast<StressGroup *>(arg);
    if (s->ended() != s->expected())
        s->early.fetch_add(1);
    s->fired.fetch_add(1);
}
} // namespace

TEST(Array, StressGroupsEndWithTheirTasks) {
    const int pools = 6, groups = (int)crewtest::scaled(160);
    for (int round = 0; round < pools; round++) {
        crew_hooks h = drop_hooks();
        h.on_drop = stress_drop;
        crew_pool *p = make_pool(3, &h);
        crewtest::Gate gate;
        gate.hold_each(p, 1); // one worker busy throughout
        std::vector<std::unique_ptr<StressGroup>> gs;
        std::mutex m;
        std::vector<crew_handle> published;
        std::atomic<bool> stop{false};
        std::thread chaos([&] {
            unsigned r = 12345u + (unsigned)round;
            while (!stop.load()) {
                r = r * 1103515245u + 12345u;
                switch ((r >> 16) % 4) {
                case 0:
                    if (crew_pause(p) == CREW_OK) {
                        std::this_thread::sleep_for(std::chrono::microseconds(200));
                        crew_resume(p);
                    }
                    break;
                case 1:
                    crew_resize(p, 1u + (r >> 20) % 4u);
                    break;
                case 2: {
                    crew_handle victim = CREW_HANDLE_NONE;
                    {
                        std::lock_guard<std::mutex> l(m);
                        if (!published.empty() && (r >> 20) % 3 == 0)
                            victim = published[(r >> 8) % published.size()];
                    }
                    if (victim.gen != 0)
                        crew_cancel(p, victim);
                    break;
                }
                default:
                    std::this_thread::sleep_for(std::chrono::microseconds(50));
                }
            }
            crew_resume(p);
        });
        for (int i = 0; i < groups; i++) {
            gs.push_back(std::make_unique<StressGroup>(32 + (size_t)(i * 37) % 200));
            StressGroup &s = *gs.back();
            if (i % 8 == 7)
                s.cells.spin_us = 5;
            if (i % 3 == 0) {
                ASSERT_EQ(crew_submit(p, stress_lead, &s, 0, &s.g), CREW_OK);
                crew_handle lead_group = s.g;
                ASSERT_EQ(crew_enqueue_tasks(p, s.cells.tasks.data(), s.cells.tasks.size(), &s.g),
                          CREW_OK);
                // joined the lead's group, or opened a new one if the lead had finished
                s.lead_in = s.g.slot == lead_group.slot && s.g.gen == lead_group.gen;
            } else {
                ASSERT_EQ(crew_enqueue_tasks(p, s.cells.tasks.data(), s.cells.tasks.size(), &s.g),
                          CREW_OK);
            }
            ASSERT_EQ(crew_notify(p, s.g, stress_end, &s), CREW_OK);
            {
                std::lock_guard<std::mutex> l(m);
                published.push_back(s.g);
            }
            // The last groups stay queued for the shutdown.
            if (i < groups * 3 / 4 && i % 4 == 0) {
                int rc = crew_wait(p, s.g);
                EXPECT_TRUE(rc == CREW_OK || rc == CREW_ECANCELED) << rc;
                EXPECT_EQ(s.ended(), s.expected()) << "crew_wait returned before the tasks ended";
            } else if (i % 4 == 1) {
                int rc = crew_wait_timed(p, gs[(size_t)i / 2]->g, 0);
                if (rc != CREW_ETIMEDOUT) {
                    EXPECT_EQ(gs[(size_t)i / 2]->ended(), gs[(size_t)i / 2]->expected())
                        << "a poll saw the group finished before its tasks";
                }
            }
        }
        gate.open();
        EXPECT_EQ(crew_shutdown(p, round % 2 ? CREW_CANCEL : CREW_DRAIN), CREW_OK);
        stop.store(true);
        chaos.join();
        for (auto &sp : gs) {
            StressGroup &s = *sp;
            s.cells.check_once();
            if (s.lead_in) {
                EXPECT_EQ(s.lead_ran.load() + s.lead_dropped.load(), 1);
            }
            EXPECT_EQ(s.fired.load(), 1);
            EXPECT_EQ(s.early.load(), 0) << "the callback fired before every task had ended";
            int rc = crew_wait_timed(p, s.g, 0);
            EXPECT_TRUE(rc == CREW_OK || rc == CREW_ECANCELED) << rc;
        }
        crew_destroy(p);
    }
}

// A thread that is no worker queues arrays into groups and waits for each, the one worker held
// busy: the waiter runs each array whole, and the array's other runners, with nothing left to
// claim, do not stay queued behind the busy worker (each keeping its record alive) once the
// wait has returned: the live records stay at most one array's runners, not one per array.
extern "C" size_t crew__test_arrays_live(void); // array.c, in the checked library
TEST(Array, WaiterLeavesNoRunnersBehind) {
    crew_pool *p = make_pool(1);
    crewtest::Gate gate;
    gate.hold(p, 1);
    const size_t m = 2; // runners per array: the worker and a helping caller
    const size_t before = crew__test_arrays_live();
    const int arrays = 1000;
    Cells c(64);
    size_t most = 0;
    int k = 0;
    for (; k < arrays && most <= m; k++) { // the worker stays held: no ASSERT in the loop
        crew_handle g = CREW_HANDLE_NONE;
        if (crew_enqueue_tasks(p, c.tasks.data(), c.tasks.size(), &g) != CREW_OK ||
            crew_wait(p, g) != CREW_OK)
            break;
        most = std::max(most, crew__test_arrays_live() - before);
    }
    EXPECT_EQ(k, arrays) << "stopped early";
    EXPECT_LE(most, m) << "records of arrays long finished are still alive";
    gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    for (size_t i = 0; i < c.ran.size(); i++)
        EXPECT_EQ(c.ran[i].load(), k) << "task " << i;
    EXPECT_EQ(crew__test_arrays_live(), before);
    crew_destroy(p);
}
