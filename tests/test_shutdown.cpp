// test_shutdown.cpp -- both shutdown modes under load with waiters blocked: every accepted task
// runs exactly once (drain) or is reported as dropped through its group (cancel).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

struct Cell {
    std::atomic<int> runs{0};
};
void bump(void *a) { static_cast<Cell *>(a)->runs.fetch_add(1); }

struct Load {
    long per_group = 50;
    long groups;
    std::unique_ptr<Cell[]> cells;
    std::vector<crew_handle> handles;
    std::vector<int> accepted; // per group: tasks accepted
    explicit Load(long g) : groups(g), cells(new Cell[g * 50]), handles(g, CREW_HANDLE_NONE),
                            accepted(g, 0) {}
};

// Submit groups until the pool refuses (shutdown) or all are in.
void produce(crew_pool *p, Load &l, long first, long step) {
    for (long g = first; g < l.groups; g += step)
        for (long i = 0; i < l.per_group; i++) {
            Cell *cell = &l.cells[g * l.per_group + i];
            int rc = crew_submit(p, bump, cell, uint32_t(i % 3), &l.handles[g]);
            if (rc == CREW_ESHUTDOWN)
                return;
            ASSERT_EQ(rc, CREW_OK); // a group held open by its gated task cannot be stale
            l.accepted[g]++;
        }
}

} // namespace

TEST(Shutdown, DrainRunsEveryAcceptedTaskWithWaitersBlocked) {
    crew_pool *p = make_pool(2);
    Load l(scaled(2000));
    Gate gate;
    // Every group starts with a gated task, so every group stays open until the gate opens.
    for (long g = 0; g < l.groups; g++)
        ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &l.handles[g]), CREW_OK);
    std::thread prod1([&] { produce(p, l, 0, 2); });
    std::thread prod2([&] { produce(p, l, 1, 2); });
    std::atomic<int> ok{0};
    std::vector<std::thread> waiters;
    for (int w = 0; w < 4; w++)
        waiters.emplace_back([&, w] {
            for (long g = w; g < l.groups; g += 4)
                ok += crew_wait(p, l.handles[g]) == CREW_OK;
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        gate.open();
    });
    EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    prod1.join();
    prod2.join();
    for (auto &w : waiters)
        w.join();
    opener.join();
    EXPECT_EQ(ok.load(), l.groups);
    long wrong = 0;
    for (long g = 0; g < l.groups; g++)
        for (long i = 0; i < l.per_group; i++)
            wrong += l.cells[g * l.per_group + i].runs.load() != (i < l.accepted[g] ? 1 : 0);
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

namespace {
std::atomic<long> g_dropped{0}; // tasks the cancelling shutdown handed to on_drop
void count_drop(crew_fn, void *, void *) { g_dropped.fetch_add(1); }

// A pool of `threads` workers whose on_drop counts into g_dropped (reset here).
crew_pool *pool_counting_drops(unsigned threads) {
    g_dropped = 0;
    return crewtest::make_pool_on_drop(threads, count_drop);
}
} // namespace

TEST(Shutdown, CancelDropsQueuedTasksAndGroupsReportIt) {
    crew_pool *p = pool_counting_drops(2);
    Load l(scaled(2000));
    Gate gate;
    for (long g = 0; g < l.groups; g++)
        ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &l.handles[g]), CREW_OK);
    gate.wait_arrivals(2); // both workers are held; everything else queues
    std::thread prod1([&] { produce(p, l, 0, 2); });
    std::thread prod2([&] { produce(p, l, 1, 2); });
    std::vector<int> rc(l.groups, 1);
    std::vector<std::thread> waiters;
    for (int w = 0; w < 4; w++)
        waiters.emplace_back([&, w] {
            for (long g = w; g < l.groups; g += 4)
                rc[g] = crew_wait(p, l.handles[g]);
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    // The gate opens only once the shutdown's sweep has dropped a task (on_drop was called):
    // a gate opened on a timer, even one started when submissions were first refused, let a
    // loaded machine preempt the shutdown between its refusing and its sweep for longer than
    // the timer, run every group, and lose none. After 10 s it opens anyway, so that a sweep
    // that never comes fails the test below instead of hanging it.
    std::thread opener([&] {
        auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (g_dropped.load() == 0 && std::chrono::steady_clock::now() < give_up)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        gate.open();
    });
    EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    prod1.join();
    prod2.join();
    for (auto &w : waiters)
        w.join();
    opener.join();
    // Each task ran at most once; a group whose tasks all ran reports OK, one that lost any
    // reports ECANCELED. (Waiters help, so some groups may have run completely.)
    long lost_groups = 0;
    for (long g = 0; g < l.groups; g++) {
        long ran_here = 0;
        for (long i = 0; i < l.per_group; i++) {
            int r = l.cells[g * l.per_group + i].runs.load();
            ASSERT_LE(r, 1);
            ASSERT_TRUE(i < l.accepted[g] || r == 0);
            ran_here += r;
        }
        // The gated first task of each group ran only if a worker or helper took it.
        bool all_ran_would_be_ok = ran_here == l.accepted[g];
        if (rc[g] == CREW_ECANCELED) {
            lost_groups++;
        } else {
            EXPECT_EQ(rc[g], CREW_OK) << g;
            EXPECT_TRUE(all_ran_would_be_ok) << "group " << g << " says OK but lost tasks";
        }
    }
    EXPECT_GT(lost_groups, 0);
    EXPECT_GT(g_dropped.load(), 0);
    EXPECT_EQ(crew_wait_all(p), CREW_ECANCELED);
    crew_destroy(p);
}

TEST(Shutdown, EnqueueTasksWaitReportsCancellation) {
    crew_pool *p = pool_counting_drops(1);
    Gate gate;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    // The caller helps with its own group newest first: make the newest task block on the gate,
    // so the others stay queued until the shutdown drops them. Priority 1: the call's way with a
    // group (tasks of priority 0 take the way without one, tested in test_tasks_wait.cpp).
    std::vector<Cell> cells(10);
    std::vector<crew_task> t(11);
    for (int i = 0; i < 10; i++)
        t[i].fn = bump, t[i].arg = &cells[i], t[i].priority = 1;
    t[10].fn = Gate::block, t[10].arg = &gate, t[10].priority = 1;
    int rc = 1;
    std::thread caller([&] { rc = crew_enqueue_tasks_wait(p, t.data(), t.size()); });
    gate.wait_arrivals(2);
    std::thread opener([&] { // once the shutdown's sweep has dropped a task (see above)
        auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (g_dropped.load() == 0 && std::chrono::steady_clock::now() < give_up)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        gate.open();
    });
    EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    caller.join();
    opener.join();
    EXPECT_EQ(rc, CREW_ECANCELED);
    for (auto &c : cells)
        EXPECT_EQ(c.runs.load(), 0);
    EXPECT_EQ(g_dropped.load(), 10);
    crew_destroy(p);
}

TEST(Shutdown, ConcurrentShutdownsAndACancelDuringADrain) {
    for (int round = 0; round < 20; round++) {
        crew_pool *p = make_pool(2);
        std::vector<Cell> cells(2000);
        std::vector<crew_task> t(cells.size());
        for (size_t i = 0; i < t.size(); i++)
            t[i].fn = bump, t[i].arg = &cells[i];
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_enqueue_tasks(p, t.data(), t.size(), &g), CREW_OK);
        std::thread a([&] { EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK); });
        std::thread b([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
        a.join();
        b.join();
        int rc = crew_wait(p, g);
        long ran = 0;
        for (auto &c : cells) {
            ASSERT_LE(c.runs.load(), 1);
            ran += c.runs.load();
        }
        if (ran == long(cells.size())) {
            EXPECT_EQ(rc, CREW_OK);
        } else {
            EXPECT_EQ(rc, CREW_ECANCELED);
        }
        EXPECT_EQ(crew_destroy(p), CREW_OK);
    }
}

TEST(Shutdown, DestroyWithQueuedWorkDrainsIt) {
    crew_pool *p = make_pool(2);
    std::vector<Cell> cells(10000);
    for (auto &c : cells)
        ASSERT_EQ(crew_submit(p, bump, &c, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    for (auto &c : cells)
        ASSERT_EQ(c.runs.load(), 1);
}

// Submissions racing a shutdown (they raise pending for a moment after it reached 0, then see
// the pool closing and take it back): the shutdown still ends, every time (a lost wake-up of
// sleeping workers once made it wait forever in the join).
TEST(Shutdown, SubmittersRacingShutdownNeverHangIt) {
    const long rounds = crewtest::scaled(300);
    for (long r = 0; r < rounds; r++) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = 3;
        cfg.spin = 0; // sleep at once: the racy path
        crew_pool *p = nullptr;
        ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
        std::atomic<bool> stop{false};
        std::vector<std::thread> subs;
        for (int k = 0; k < 2; k++)
            subs.emplace_back([&] {
                while (!stop) { // on through the shutdown: refused submissions still count
                    int rc = crew_submit(p, [](void *) {}, nullptr, 0, nullptr);
                    EXPECT_TRUE(rc == CREW_OK || rc == CREW_ESHUTDOWN) << crew_strerror(rc);
                    // Refused: leave the processor to the draining workers now and then (two
                    // spinning submitters on 2 cores slowed a drain under TSan's debug-yield
                    // build to 170 us a task, 68 s for the test).
                    if (rc == CREW_ESHUTDOWN)
                        std::this_thread::yield();
                }
            });
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        EXPECT_EQ(crew_shutdown(p, r % 2 ? CREW_CANCEL : CREW_DRAIN), CREW_OK);
        stop = true;
        for (auto &t : subs)
            t.join();
        crew_destroy(p);
    }
}

// Two shutdowns at once on a pool with blocking threads: each thread is joined once.
TEST(Shutdown, ConcurrentShutdownsJoinBlockingThreadsOnce) {
    const long rounds = crewtest::scaled(100);
    for (long r = 0; r < rounds; r++) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = 2;
        crew_pool *p = nullptr;
        ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
        for (int k = 0; k < 8; k++)
            ASSERT_EQ(crew_submit_ex(p, [](void *) {}, nullptr, 0, CREW_TASK_BLOCKING, nullptr),
                      CREW_OK);
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        std::thread a([&] { EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK); });
        std::thread b([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
        a.join();
        b.join();
        crew_destroy(p);
    }
}

// A cancelling shutdown drops every task not yet started, also those queued behind a task that
// a thread outside the pool runs while it helps in a wait: here the waiter's wait ends (its
// group finished) after the shutdown's sweep, with tasks of no group submitted after its
// group's task and never started; none may run, each is reported dropped.
TEST(Shutdown, CancelDropsTasksAWaiterClaimedAndDidNotStart) {
    static std::atomic<int> dropped{0};
    dropped = 0;
    crew_pool *p = crewtest::make_pool_on_drop(1, [](crew_fn fn, void *, void *) {
        if (fn == bump)
            dropped.fetch_add(1);
    });
    Gate worker, first;
    worker.hold(p, 1); // the only worker: the waiter below is alone to take tasks
    Cell ran;
    const int n = 8;
    std::thread waiter([&] {
        crew_handle g = CREW_HANDLE_NONE;
        // The group's task first (oldest), blocking until the sweep is over, then tasks of no
        // group behind it, which the helping waiter could take next.
        ASSERT_EQ(crew_submit(p, Gate::block, &first, 0, &g), CREW_OK);
        for (int i = 1; i < n; i++)
            ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK);
        EXPECT_EQ(crew_wait(p, g), CREW_OK);
    });
    first.wait_arrivals(1); // the group's task runs, on the waiter (the worker is held)
    std::thread closer([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
    // The sweep drops what is still queued (every task a take has not returned) and ends.
    while (crew_submit(p, [](void *) {}, nullptr, 0, nullptr) != CREW_ESHUTDOWN)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // Until every queued task was dropped (10 s at most: then the checks below fail), rather
    // than a fixed pause after the first drop, which a preempted sweep could outlast.
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (dropped.load() < n - 1 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    first.open(); // the waiter's group finishes: its wait ends
    waiter.join();
    worker.open();
    closer.join();
    EXPECT_EQ(ran.runs.load(), 0);
    EXPECT_EQ(dropped.load(), n - 1);
    crew_destroy(p);
}

extern "C" void (*crew__test_shutdown_closing)(void); // the checked library's hook (debug.h)

namespace {
// The window between a cancelling shutdown's flag and its sweep, held open until a thread has
// run or dropped a task of `ran`/`dropped` (10 s at most: then the test's checks fail).
Cell *window_ran;
std::atomic<int> *window_dropped;
void hold_window() {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (window_ran->runs.load() + window_dropped->load() == 0 &&
           std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
// crew_shutdown(p, CREW_CANCEL) with that window held open.
void cancel_holding_the_window(crew_pool *p, Cell *ran, std::atomic<int> *dropped) {
    window_ran = ran;
    window_dropped = dropped;
    crew__test_shutdown_closing = hold_window;
    EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    crew__test_shutdown_closing = nullptr;
}

std::atomic<int> after_seen_dropped{0};
Cell after_seen_ran;
void spin_until_cancelled(void *started) {
    static_cast<std::atomic<bool> *>(started)->store(true);
    while (!crew_cancelled())
        std::this_thread::yield();
}
} // namespace

TEST(Shutdown, NoQueuedTaskStartsOnceAThreadHasSeenTheCancel) {
    // The only worker runs a task that polls crew_cancelled(); n tasks wait behind it. A
    // cancelling shutdown sets its flag before it sweeps the queues; the hook holds that window
    // open until the freed worker has taken the next task, which it must drop, not run (it did
    // run it: a coroutine meant to be resumed with CREW_ECANCELED was resumed normally).
    after_seen_dropped = 0;
    after_seen_ran.runs = 0;
    crew_pool *p = crewtest::make_pool_on_drop(1, [](crew_fn fn, void *, void *) {
        if (fn == bump)
            after_seen_dropped.fetch_add(1);
    });
    std::atomic<bool> started{false};
    ASSERT_EQ(crew_submit(p, spin_until_cancelled, &started, 0, nullptr), CREW_OK);
    while (!started.load())
        std::this_thread::yield();
    const int n = 4;
    for (int i = 0; i < n; i++)
        ASSERT_EQ(crew_submit(p, bump, &after_seen_ran, 0, nullptr), CREW_OK);
    cancel_holding_the_window(p, &after_seen_ran, &after_seen_dropped);
    EXPECT_EQ(after_seen_ran.runs.load(), 0);
    EXPECT_EQ(after_seen_dropped.load(), n);
    EXPECT_EQ(crew_wait_all(p), CREW_ECANCELED);
    crew_destroy(p);
}

namespace {
struct SeesThenWaits {
    crew_pool *p = nullptr;
    crew_handle g = CREW_HANDLE_NONE;
    std::atomic<bool> started{false}, go{false}; // go: g is set (release/acquire)
    std::atomic<int> wait_rc{-1};
};
void see_cancel_then_wait(void *a) {
    auto *s = static_cast<SeesThenWaits *>(a);
    s->started.store(true);
    while (!s->go.load() || !crew_cancelled())
        std::this_thread::yield();
    s->wait_rc = crew_wait(s->p, s->g); // helps: takes the group's queued tasks
}
} // namespace

TEST(Shutdown, AHelpingWaiterThatHasSeenTheCancelStartsNoQueuedTask) {
    // As above, but the thread that has seen the cancel then waits for a group whose tasks are
    // queued: its helping wait takes them (wait.c), and must drop them, not run them.
    after_seen_dropped = 0;
    after_seen_ran.runs = 0;
    crew_pool *p = crewtest::make_pool_on_drop(1, [](crew_fn fn, void *, void *) {
        if (fn == bump)
            after_seen_dropped.fetch_add(1);
    });
    SeesThenWaits s;
    s.p = p;
    ASSERT_EQ(crew_submit(p, see_cancel_then_wait, &s, 0, nullptr), CREW_OK);
    while (!s.started.load())
        std::this_thread::yield();
    const int n = 4;
    for (int i = 0; i < n; i++)
        ASSERT_EQ(crew_submit(p, bump, &after_seen_ran, 0, &s.g), CREW_OK);
    s.go.store(true);
    cancel_holding_the_window(p, &after_seen_ran, &after_seen_dropped);
    EXPECT_EQ(after_seen_ran.runs.load(), 0);
    EXPECT_EQ(after_seen_dropped.load(), n);
    EXPECT_EQ(s.wait_rc.load(), CREW_ECANCELED);
    EXPECT_EQ(crew_wait_all(p), CREW_ECANCELED);
    crew_destroy(p);
}

namespace {
Cell callback_ran;
std::atomic<int> callback_dropped{0};
void callback(void *a) { static_cast<Cell *>(a)->runs.fetch_add(1); }
} // namespace

TEST(Shutdown, ACallbackTakenOnceAThreadHasSeenTheCancelRuns) {
    // A completion callback is never dropped: the thread that has seen the cancel and takes
    // one (before the sweep, held off by the hook) runs it, as the drain after the sweep would.
    callback_ran.runs = 0;
    callback_dropped = 0;
    crew_pool *p = crewtest::make_pool_on_drop(1, [](crew_fn fn, void *, void *) {
        if (fn == callback)
            callback_dropped.fetch_add(1);
    });
    Cell ran;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, bump, &ran, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK); // finished: the callback below is queued at once
    std::atomic<bool> started{false};
    ASSERT_EQ(crew_submit(p, spin_until_cancelled, &started, 0, nullptr), CREW_OK);
    while (!started.load())
        std::this_thread::yield();
    ASSERT_EQ(crew_notify(p, g, callback, &callback_ran), CREW_OK);
    cancel_holding_the_window(p, &callback_ran, &callback_dropped);
    EXPECT_EQ(callback_ran.runs.load(), 1);
    EXPECT_EQ(callback_dropped.load(), 0);
    crew_destroy(p);
}
