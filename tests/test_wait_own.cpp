// test_wait_own.cpp -- crew_wait's first steps (src/wait_own.c): a thread that waits for a group
// whose tasks it queued itself runs them, newest first, and ends them in the group together; a
// worker whose own tasks end the group answers from their end. The answers must be those of
// any wait: a loss (a cancel by the group's last task) answered by every wait, before and after
// its report, also by another thread's wait on the same handle; a handle whose group has ended
// (its slot now another group's) or was never issued runs none of the slot's tasks. And a
// thread outside the pool whose own queued task, its group's last, a cancelling shutdown drops
// from under its wait answers CREW_ECANCELED, however many losses are reported meanwhile.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "common.h"

using crewtest::kSchedulers;
using crewtest::make_pool;

namespace {

// Run fn(arg) as one task of p and return once it has ended, without helping (so that it runs
// on a worker, and the waits inside it are a worker's).
void run_on_worker(crew_pool *p, crew_fn fn, void *arg) {
    struct Root {
        crew_fn fn;
        void *arg;
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
    } r{fn, arg, {}, {}, false};
    auto body = [](void *a) {
        auto *q = static_cast<Root *>(a);
        q->fn(q->arg);
        std::lock_guard<std::mutex> g(q->m);
        q->done = true;
        q->cv.notify_one();
    };
    ASSERT_EQ(crew_submit(p, body, &r, 0, nullptr), CREW_OK);
    std::unique_lock<std::mutex> g(r.m);
    r.cv.wait(g, [&] { return r.done; });
}

constexpr int kTen = 10;

// Queue ten tasks fn(arg), made in t (the caller's: queued by address, it must outlive them),
// into a new group (*g); false if crew_enqueue_tasks refused them.
bool enqueue_ten(crew_pool *p, crew_task (&t)[kTen], crew_fn fn, void *arg, crew_handle *g) {
    for (auto &x : t) {
        x = crew_task{};
        x.fn = fn, x.arg = arg;
    }
    return crew_enqueue_tasks(p, t, kTen, g) == CREW_OK;
}

// Ten tasks into a new group; the last of them to run cancels it (the group is open: its own
// task has not ended), and each notes the group it ran in.
struct LossCase {
    crew_pool *p;
    std::atomic<int> ran{0};
    std::atomic<int> cancel_rc{-1};
    std::atomic<int> wrong_group{0};
    crew_handle g = CREW_HANDLE_NONE;
    std::atomic<uint32_t> g_slot{0}, g_gen{0};
    int first = -1, second = -1;
    bool unlimited = false; // the first wait is crew_wait_timed(UINT64_MAX): crew_wait's way
};

void loss_leaf(void *a) {
    auto *c = static_cast<LossCase *>(a);
    crew_handle cur = crew_current_group();
    // Published before the enqueue returned to the waiter: a leaf that runs later sees it.
    uint32_t slot = c->g_slot.load(), gen = c->g_gen.load();
    if (slot != 0 && (cur.slot != slot || cur.gen != gen))
        c->wrong_group.fetch_add(1);
    if (c->ran.fetch_add(1) + 1 == kTen)
        c->cancel_rc.store(crew_cancel(c->p, cur));
}

// loss_leaf's ten (in t, as enqueue_ten's) into c's group, its handle published for the
// leaves' check.
bool enqueue_losses(LossCase *c, crew_task (&t)[kTen]) {
    if (!enqueue_ten(c->p, t, loss_leaf, c, &c->g))
        return false;
    c->g_gen.store(c->g.gen);
    c->g_slot.store(c->g.slot);
    return true;
}

void loss_root(void *a) {
    auto *c = static_cast<LossCase *>(a);
    crew_task t[kTen];
    if (!enqueue_losses(c, t))
        return;
    c->first = c->unlimited ? crew_wait_timed(c->p, c->g, UINT64_MAX) : crew_wait(c->p, c->g);
    c->second = crew_wait(c->p, c->g);
}

TEST(WaitOwn, ALossByTheGroupsLastTaskIsEveryWaitsAnswer) {
    for (unsigned sched : kSchedulers) {
        crew_pool *p = make_pool(1, sched);
        for (int way = 0; way < 4; way++) { // on a worker or outside; crew_wait or timed, no limit
            int worker = way & 1;
            LossCase c;
            c.p = p;
            c.unlimited = way >> 1;
            if (worker)
                run_on_worker(p, loss_root, &c);
            else
                loss_root(&c);
            EXPECT_EQ(c.ran.load(), kTen) << sched;
            EXPECT_EQ(c.cancel_rc.load(), CREW_OK) << sched;
            EXPECT_EQ(c.wrong_group.load(), 0) << "crew_current_group in its tasks, " << sched;
            EXPECT_EQ(c.first, CREW_ECANCELED) << sched << " " << worker << " " << c.unlimited;
            EXPECT_EQ(c.second, CREW_ECANCELED) << "kept once reported, " << sched;
            EXPECT_EQ(crew_wait(p, c.g), CREW_ECANCELED) << "another thread's wait, " << sched;
        }
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

// A worker's group whose handle another thread waits for at the same time (while the worker
// runs the group's tasks in its own wait, and ends them): both get the loss.
struct SharedCase {
    LossCase c;
    std::atomic<bool> published{false};
};

void shared_root(void *a) {
    auto *s = static_cast<SharedCase *>(a);
    LossCase *c = &s->c;
    crew_task t[kTen];
    if (!enqueue_losses(c, t))
        return;
    s->published.store(true);
    c->first = crew_wait(c->p, c->g);
}

TEST(WaitOwn, AnotherThreadWaitingForAWorkersGroupGetsItsAnswer) {
    const int rounds = crewtest::scaled(200);
    for (unsigned sched : kSchedulers) {
        crew_pool *p = make_pool(2, sched);
        for (int i = 0; i < rounds; i++) {
            SharedCase s;
            s.c.p = p;
            crew_handle root = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_submit(p, shared_root, &s, 0, &root), CREW_OK);
            while (!s.published.load() && crew_wait_timed(p, root, 0) == CREW_ETIMEDOUT)
                std::this_thread::yield();
            ASSERT_TRUE(s.published.load());
            crew_handle g = {s.c.g_slot.load(), s.c.g_gen.load()};
            EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED) << sched << " round " << i;
            EXPECT_EQ(crew_wait(p, root), CREW_OK);
            EXPECT_EQ(s.c.first, CREW_ECANCELED) << sched << " round " << i;
            EXPECT_EQ(s.c.ran.load(), kTen);
        }
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

// Inside a worker's task: a group A, finished; then a group B, likely on A's slot (the worker
// keeps its freed slots); a wait for A (stale) and one for a generation of B's slot never
// issued (forged) must run none of B's queued tasks, and answer CREW_OK and CREW_EINVAL.
thread_local bool in_other_wait = false;

struct StaleCase {
    crew_pool *p;
    std::atomic<int> b_ran{0};
    std::atomic<int> ran_inside{0};
    int stale = -1, forged = -1, b = -1, a = -1;
    bool same_slot = false;
};

void b_leaf(void *a) {
    auto *c = static_cast<StaleCase *>(a);
    if (in_other_wait)
        c->ran_inside.fetch_add(1);
    c->b_ran.fetch_add(1);
}

void stale_root(void *a) {
    auto *c = static_cast<StaleCase *>(a);
    crew_task ta{};
    ta.fn = crewtest::noop_task;
    crew_handle ga = CREW_HANDLE_NONE;
    if (crew_enqueue_tasks(c->p, &ta, 1, &ga) != CREW_OK)
        return;
    c->a = crew_wait(c->p, ga);
    crew_task tb[kTen];
    crew_handle gb = CREW_HANDLE_NONE;
    if (!enqueue_ten(c->p, tb, b_leaf, c, &gb))
        return;
    c->same_slot = gb.slot == ga.slot;
    in_other_wait = true;
    c->stale = crew_wait(c->p, ga);
    c->forged = crew_wait(c->p, crew_handle{gb.slot, gb.gen + 5});
    in_other_wait = false;
    c->b = crew_wait(c->p, gb);
}

TEST(WaitOwn, AStaleOrForgedHandleRunsNoneOfTheSlotsTasks) {
    for (unsigned sched : kSchedulers) {
        crew_pool *p = make_pool(1, sched);
        StaleCase c;
        c.p = p;
        run_on_worker(p, stale_root, &c);
        EXPECT_EQ(c.a, CREW_OK) << sched;
        EXPECT_EQ(c.stale, CREW_OK) << sched << (c.same_slot ? " (same slot)" : "");
        EXPECT_EQ(c.forged, CREW_EINVAL) << sched;
        EXPECT_EQ(c.ran_inside.load(), 0) << sched << (c.same_slot ? " (same slot)" : "");
        EXPECT_EQ(c.b, CREW_OK) << sched;
        EXPECT_EQ(c.b_ran.load(), kTen) << sched;
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

// A worker whose own tasks end its group (the end that holds no slot) while another thread
// cancels the group: the cancel lands (CREW_OK) exactly when the waits answer CREW_ECANCELED,
// else it answers CREW_ESTALE and the waits CREW_OK; the group's callback runs once either way.
struct RaceCase {
    crew_pool *p;
    std::atomic<int> ran{0};
    std::atomic<int> notified{0};
    std::atomic<bool> published{false}, go{false};
    crew_handle g = CREW_HANDLE_NONE;
    int first = -1, notify_rc = -1, spin = 0;
};

void race_leaf(void *a) {
    auto *c = static_cast<RaceCase *>(a);
    for (int k = 0; k < c->spin; k++)
        std::this_thread::yield();
    c->ran.fetch_add(1);
}

void race_notified(void *a) {
    static_cast<RaceCase *>(a)->notified.fetch_add(1);
}

void race_root(void *a) {
    auto *c = static_cast<RaceCase *>(a);
    crew_task t[kTen];
    crew_handle g = CREW_HANDLE_NONE;
    if (!enqueue_ten(c->p, t, race_leaf, c, &g))
        return;
    c->notify_rc = crew_notify(c->p, g, race_notified, c);
    c->g = g;
    c->published.store(true);
    while (!c->go.load()) // the cancel comes while this thread runs the group's tasks
        std::this_thread::yield();
    c->first = crew_wait(c->p, g);
}

TEST(WaitOwn, ACancelRacingTheEndOfAWorkersOwnTasksLandsOrIsStale) {
    const int rounds = crewtest::scaled(300);
    for (unsigned sched : kSchedulers) {
        crew_pool *p = make_pool(2, sched);
        int landed = 0, stale = 0;
        for (int i = 0; i < rounds; i++) {
            RaceCase c;
            c.p = p;
            c.spin = i % 3;
            crew_handle root = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_submit(p, race_root, &c, 0, &root), CREW_OK);
            while (!c.published.load() && crew_wait_timed(p, root, 0) == CREW_ETIMEDOUT)
                std::this_thread::yield();
            ASSERT_TRUE(c.published.load());
            c.go.store(true);
            for (int k = 0; k < i % 7; k++)
                std::this_thread::yield();
            int cancel_rc = crew_cancel(p, c.g);
            int second = crew_wait(p, c.g);
            EXPECT_EQ(crew_wait(p, root), CREW_OK);
            ASSERT_TRUE(cancel_rc == CREW_OK || cancel_rc == CREW_ESTALE) << cancel_rc;
            int want = cancel_rc == CREW_OK ? CREW_ECANCELED : CREW_OK;
            (cancel_rc == CREW_OK ? landed : stale)++;
            EXPECT_EQ(c.first, want) << sched << " round " << i << " cancel " << cancel_rc;
            EXPECT_EQ(second, want) << sched << " round " << i << " cancel " << cancel_rc;
            if (cancel_rc == CREW_ESTALE) {
                EXPECT_EQ(c.ran.load(), kTen);
            }
            EXPECT_EQ(crew_wait_all(p), CREW_OK);
            EXPECT_EQ(c.notify_rc, CREW_OK);
            EXPECT_EQ(c.notified.load(), 1) << sched << " round " << i;
        }
        RecordProperty("landed_stale_" + std::to_string(sched),
                       std::to_string(landed) + "/" + std::to_string(stale));
        crew_destroy(p);
    }
}

// The checked library's hooks (debug.h): wait_own.c's own_take, after a take (0) and after a
// task it took was held back (1); crew_shutdown, once the pool's halt is set.
extern "C" void (*crew__test_own_take)(int held_back);
extern "C" void (*crew__test_shutdown_closing)(void);

// A waiter outside the pool (thread W) took its group's last task from its own queue; a
// cancelling shutdown begins before W looks at the halt, so W drops the task: the group ends
// with a loss that W's wait must answer. Meanwhile another thread reports that loss and more
// than 256 others (crew.h: a reported loss is kept only so long, unless a wait holds it): W
// holds its wait on the group from before the drop, so its answer stays CREW_ECANCELED.
struct DropCase {
    std::mutex m;
    std::condition_variable cv;
    int step = 0; // 1: W took its task; 2: go on; 3: W dropped it; 4: go on
    bool halted = false, w_done = false;
    int w_rc = -1;
    crew_handle g = CREW_HANDLE_NONE; // W's group
    void set(int s) {
        std::lock_guard<std::mutex> g(m);
        step = s;
        cv.notify_all();
    }
    template <class F> void until(F f) {
        std::unique_lock<std::mutex> g(m);
        cv.wait(g, f);
    }
};
DropCase *drop_case;
thread_local bool is_drop_waiter = false;

void on_own_take(int held_back) {
    if (!is_drop_waiter)
        return;
    DropCase *c = drop_case;
    int at = held_back ? 3 : 1;
    {
        std::lock_guard<std::mutex> g(c->m);
        if (c->step >= at) // a later take (the wait goes on after a put-back): not held
            return;
    }
    c->set(at);
    c->until([&] { return c->step >= at + 1; });
}

void on_closing() {
    std::lock_guard<std::mutex> g(drop_case->m);
    drop_case->halted = true;
    drop_case->cv.notify_all();
}

TEST(WaitOwn, AnOutsideWaitersTaskDroppedByAShutdownIsItsLoss) {
    constexpr int kOthers = 300; // losses reported while W waits: more than the 256 kept
    for (unsigned sched : kSchedulers) {
        crew_pool *p = make_pool(1, sched);
        crewtest::Gate gate;
        gate.hold(p, 1); // the one worker: nothing else takes a queued task
        std::vector<crew_handle> others(kOthers, CREW_HANDLE_NONE);
        for (auto &h : others)
            ASSERT_EQ(crew_submit(p, crewtest::noop_task, nullptr, 0, &h), CREW_OK);
        DropCase c;
        drop_case = &c;
        crew__test_own_take = on_own_take; // set before the threads that call them start
        crew__test_shutdown_closing = on_closing;
        std::thread w([&] {
            is_drop_waiter = true;
            crew_handle mine = CREW_HANDLE_NONE; // its own task, the newest in its queue
            int rc = crew_submit(p, crewtest::noop_task, nullptr, 0, &mine);
            {
                std::lock_guard<std::mutex> l(c.m);
                c.g = mine;
            }
            if (rc == CREW_OK)
                rc = crew_wait(p, mine);
            std::lock_guard<std::mutex> l(c.m);
            c.w_rc = rc;
            c.w_done = true;
            c.cv.notify_all();
        });
        c.until([&] { return c.step == 1 || c.w_done; });
        bool reached = c.step == 1;
        std::thread s;
        int group_rc = -1;
        if (reached) {
            s = std::thread([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
            c.until([&] { return c.halted; });
            gate.open();
            c.set(2); // W looks at the halt: it drops its task
            c.until([&] { return c.step == 3 || c.w_done; });
            EXPECT_EQ(c.step, 3) << sched << ": W's task was not held back";
            group_rc = crew_wait(p, c.g); // W's loss, reported first (before the others)
            for (auto &h : others)
                EXPECT_EQ(crew_wait(p, h), CREW_ECANCELED) << sched;
            c.set(4);
        } else {
            gate.open();
        }
        w.join();
        if (s.joinable())
            s.join();
        crew__test_own_take = nullptr;
        crew__test_shutdown_closing = nullptr;
        if (reached) {
            EXPECT_EQ(c.w_rc, CREW_ECANCELED) << sched;
            EXPECT_EQ(group_rc, CREW_ECANCELED) << sched;
        } else {
            EXPECT_EQ(c.w_rc, CREW_OK) << sched; // it ran its task before any shutdown
        }
        // Under work stealing W takes its task from its own external slot: the window is there.
        if (sched == CREW_SCHED_STEAL) {
            EXPECT_TRUE(reached);
        }
        RecordProperty("reached_" + std::to_string(sched), reached ? 1 : 0);
        crew_destroy(p);
    }
}

} // namespace
