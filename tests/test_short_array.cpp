// test_short_array.cpp -- arrays too short to go as runners (crew_enqueue_tasks of fewer than
// 32 tasks, or of several priorities), which the work-stealing strategy queues by value in one
// push (src/submit.c's enqueue_short, the strategy's push_values), and a task's wait for them
// (skynet's shape: crew_enqueue_tasks into a new group, then crew_wait): every task runs exactly
// once, another thread can take any of them, a cancel of the group drops the rest, priorities
// travel with the tasks, and a bad element queues nothing. Under every strategy (the others
// queue them by address).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common.h"

using namespace crewtest;

namespace {

constexpr int kTen = 10;

// A parent's ten children, each counting its runs in its own cell, where they ran (on the
// parent's thread or another) and, for the first child to run on the parent's thread, a wait
// (at most a minute, then it gives up and the test fails) until the other nine have run
// elsewhere: so the parent's wait is held on its first child while other threads must take
// every other child from wherever the parent queued them.
struct Family {
    crew_pool *p = nullptr;
    std::thread::id parent;
    crew_handle g = CREW_HANDLE_NONE;
    crew_task t[kTen] = {};
    struct Child {
        Family *f;
        int i;
    } child[kTen];
    std::atomic<int> ran[kTen] = {}, dropped[kTen] = {};
    std::atomic<int> elsewhere{0}, at_parent{0};
    bool hold_first = false;   // the first child at the parent waits for the other nine
    bool cancel_first = false; // the first child at the parent cancels the group instead
    int enqueue_rc = -1, wait_rc = -1;

    static void run_child(void *arg) {
        auto *c = static_cast<Child *>(arg);
        Family *f = c->f;
        f->ran[c->i].fetch_add(1);
        if (std::this_thread::get_id() != f->parent) {
            f->elsewhere.fetch_add(1);
            return;
        }
        if (f->at_parent.fetch_add(1) != 0)
            return;
        if (f->cancel_first)
            (void)crew_cancel(f->p, f->g);
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (f->hold_first && f->elsewhere.load() < kTen - 1 &&
               std::chrono::steady_clock::now() < until)
            std::this_thread::yield();
    }
    static void on_drop(crew_fn fn, void *task_arg, void *) {
        if (fn == run_child) {
            auto *c = static_cast<Child *>(task_arg);
            c->f->dropped[c->i].fetch_add(1);
        }
    }
    // The parent: its ten children (priorities prio(i)) into a new group, then its wait.
    static void run_parent(void *arg) {
        auto *f = static_cast<Family *>(arg);
        f->parent = std::this_thread::get_id();
        f->enqueue_rc = crew_enqueue_tasks(f->p, f->t, kTen, &f->g);
        if (f->enqueue_rc == CREW_OK)
            f->wait_rc = crew_wait(f->p, f->g);
    }
    void make(crew_pool *pool, uint32_t (*prio)(int)) {
        p = pool;
        for (int i = 0; i < kTen; i++) {
            child[i] = {this, i};
            t[i].fn = run_child;
            t[i].arg = &child[i];
            t[i].priority = prio ? prio(i) : 0;
        }
    }
    // Each child ran or was dropped exactly once; returns how many were dropped.
    int check_once() const {
        int drops = 0;
        for (int i = 0; i < kTen; i++) {
            EXPECT_EQ(ran[i].load() + dropped[i].load(), 1) << "child " << i;
            drops += dropped[i].load();
        }
        return drops;
    }
};

// The parent as a task of the pool (on a worker: the caller waits without helping, so that no
// task runs on it), or (outside) on the calling thread, as bench_peers' skynet runs its root.
void run_family(crew_pool *p, Family &f, bool outside) {
    if (outside) {
        Family::run_parent(&f);
        return;
    }
    crew_handle root = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Family::run_parent, &f, 0, &root), CREW_OK);
    ASSERT_EQ(crew_wait_timed(p, root, UINT64_MAX / 2), CREW_OK);
}

TEST(ShortArray, AnotherThreadCanTakeEveryChildButTheOneTheParentRuns) {
    for (unsigned sched : kSchedulers) {
        // PER_WORKER does not steal: a task stays in the queue it was fed to.
        if (sched == CREW_SCHED_PER_WORKER ||
            (sched == CREW_SCHED_DEFAULT && scheduler() == "per-worker"))
            continue;
        for (bool outside : {false, true}) {
            crew_pool *p = make_pool(2, sched);
            Family f;
            f.make(p, nullptr);
            f.hold_first = true;
            run_family(p, f, outside);
            EXPECT_EQ(f.enqueue_rc, CREW_OK);
            EXPECT_EQ(f.wait_rc, CREW_OK);
            EXPECT_EQ(f.check_once(), 0);
            // At most the one it held ran at the parent (none if others took all ten before
            // the parent's wait looked); every other child was taken by another thread.
            EXPECT_EQ(f.at_parent.load() + f.elsewhere.load(), kTen);
            EXPECT_GE(f.elsewhere.load(), kTen - 1) << "sched " << sched << " outside " << outside;
            crew_destroy(p);
        }
    }
}

TEST(ShortArray, EveryChildOnceAcrossManyFamilies) {
    for (unsigned sched : kSchedulers) {
        crew_pool *p = make_pool(2, sched);
        for (int round = 0; round < (slow_build() ? 50 : 500); round++) {
            Family f;
            f.make(p, nullptr);
            run_family(p, f, round % 2 == 1);
            ASSERT_EQ(f.enqueue_rc, CREW_OK);
            ASSERT_EQ(f.wait_rc, CREW_OK);
            ASSERT_EQ(f.check_once(), 0) << "sched " << sched << " round " << round;
        }
        crew_destroy(p);
    }
}

TEST(ShortArray, ACancelOfTheGroupDropsTheChildrenNotStarted) {
    for (unsigned sched : kSchedulers) {
        for (bool outside : {false, true}) {
            crew_config cfg;
            crew_config_init(&cfg);
            cfg.threads = 1;
            cfg.scheduler = sched;
            crew_pool *p = make_pool_on_drop(cfg, Family::on_drop);
            Family f;
            f.make(p, nullptr);
            f.cancel_first = true;
            run_family(p, f, outside);
            EXPECT_EQ(f.enqueue_rc, CREW_OK);
            int drops = f.check_once();
            // The first child at the parent cancelled the group while it ran (so it was open):
            // the wait reports the cancel, and whatever had not started by then is dropped. A
            // parent on the only worker leaves nine (the caller does not help); one outside
            // leaves what the worker has not taken (all ten, if it took them before the parent
            // looked: then nothing was cancelled).
            if (f.at_parent.load() == 0) {
                EXPECT_EQ(f.wait_rc, CREW_OK);
                EXPECT_EQ(drops, 0);
            } else {
                EXPECT_EQ(f.wait_rc, CREW_ECANCELED) << "sched " << sched;
                if (!outside) {
                    EXPECT_EQ(drops, kTen - 1) << "sched " << sched;
                }
            }
            crew_destroy(p);
        }
    }
}

uint32_t mixed(int i) { return (uint32_t)(i % 3) * 7u; } // 0, 7, 14, 0, ...

TEST(ShortArray, PrioritiesTravelWithTheTasksAndTheArrayIsLeftAsItWas) {
    for (unsigned sched : kSchedulers) {
        for (bool outside : {false, true}) {
            crew_pool *p = make_pool(2, sched);
            Family f;
            f.make(p, mixed);
            run_family(p, f, outside);
            EXPECT_EQ(f.enqueue_rc, CREW_OK);
            EXPECT_EQ(f.wait_rc, CREW_OK);
            EXPECT_EQ(f.check_once(), 0);
            for (int i = 0; i < kTen; i++) { // the caller's fields are the caller's
                EXPECT_EQ(f.t[i].fn, Family::run_child);
                EXPECT_EQ(f.t[i].arg, &f.child[i]);
                EXPECT_EQ(f.t[i].priority, mixed(i));
            }
            crew_destroy(p);
        }
    }
}

// A task that queues a short array with a NULL fn in the middle: refused whole (EINVAL, the
// element named), no group opened, nothing queued; then the same array, fixed, into a group it
// joins, and a bad one into that group changes nothing of it.
struct BadArray {
    crew_pool *p;
    std::atomic<long> ran{0};
    int rc_new = -1, rc_join = -1, rc_bad_join = -1, rc_wait = -1;
    bool named = false, still_none = false;
    static void run(void *arg) {
        auto *b = static_cast<BadArray *>(arg);
        crew_task t[kTen] = {};
        for (auto &x : t)
            x.fn = bump, x.arg = &b->ran;
        t[5].fn = nullptr;
        crew_handle g = CREW_HANDLE_NONE;
        b->rc_new = crew_enqueue_tasks(b->p, t, kTen, &g);
        b->named = last_error_has("task 5's fn is NULL");
        b->still_none = g.slot == 0 && g.gen == 0;
        t[5].fn = bump;
        b->rc_join = crew_enqueue_tasks(b->p, t + 5, 3, &g); // the caller's until they ran
        t[1].fn = nullptr;
        b->rc_bad_join = crew_enqueue_tasks(b->p, t, 5, &g);
        b->rc_wait = crew_wait(b->p, g);
    }
};

TEST(ShortArray, ABadElementQueuesNothing) {
    for (unsigned sched : kSchedulers) {
        for (bool outside : {false, true}) {
            crew_pool *p = make_pool(2, sched);
            BadArray b;
            b.p = p;
            if (outside) {
                BadArray::run(&b);
            } else {
                crew_handle root = CREW_HANDLE_NONE;
                ASSERT_EQ(crew_submit(p, BadArray::run, &b, 0, &root), CREW_OK);
                ASSERT_EQ(crew_wait_timed(p, root, UINT64_MAX / 2), CREW_OK);
            }
            EXPECT_EQ(b.rc_new, CREW_EINVAL);
            EXPECT_TRUE(b.named);
            EXPECT_TRUE(b.still_none);
            EXPECT_EQ(b.rc_join, CREW_OK);
            EXPECT_EQ(b.rc_bad_join, CREW_EINVAL);
            EXPECT_EQ(b.rc_wait, CREW_OK);
            EXPECT_EQ(crew_wait_all(p), CREW_OK);
            EXPECT_EQ(b.ran.load(), 3); // only the three of the good call
            crew_destroy(p);
        }
    }
}

// A thread outside the pool whose first look finds on top of its own queue a task of the
// awaited group's slot that is not the group's (a later group in that slot, or a forged
// generation): the task goes back untouched while the workers take from the same queue, and
// the wait answers for the handle it was given. Every task runs exactly once.
TEST(ShortArray, AStaleOrForgedWaitPutsTheSlotsTaskBack) {
    for (unsigned sched : kSchedulers) {
        crew_pool *p = make_pool(2, sched);
        int reused = 0;
        for (int round = 0; round < (slow_build() ? 100 : 1000); round++) {
            std::atomic<long> first{0}, runs[kTen] = {};
            crew_task one = {};
            one.fn = bump, one.arg = &first;
            crew_handle old = CREW_HANDLE_NONE, g = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_enqueue_tasks(p, &one, 1, &old), CREW_OK);
            ASSERT_EQ(crew_wait(p, old), CREW_OK);
            crew_task t[kTen] = {};
            for (int i = 0; i < kTen; i++)
                t[i].fn = bump, t[i].arg = &runs[i];
            ASSERT_EQ(crew_enqueue_tasks(p, t, kTen, &g), CREW_OK);
            reused += g.slot == old.slot;
            EXPECT_EQ(crew_wait(p, old), CREW_OK); // finished: its slot has moved on
            crew_handle forged{g.slot, g.gen + 1000};
            EXPECT_EQ(crew_wait(p, forged), CREW_EINVAL);
            EXPECT_EQ(crew_wait(p, g), CREW_OK);
            EXPECT_EQ(crew_wait_all(p), CREW_OK);
            ASSERT_EQ(first.load(), 1);
            for (int i = 0; i < kTen; i++)
                ASSERT_EQ(runs[i].load(), 1) << "sched " << sched << " round " << round;
        }
        EXPECT_GT(reused, 0) << "a finished group's slot was never reused";
        crew_destroy(p);
    }
}

} // namespace
