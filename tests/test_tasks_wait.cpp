// test_tasks_wait.cpp -- crew_enqueue_tasks_wait (the path without a group, src/join.c, under
// the default strategy: a few tasks one by one, more split in halves; the group path under the
// others): every task runs exactly once, from outside the pool, from a task, from a lane's task
// and nested (fib; arrays of 0 to 1000 tasks three deep, under every strategy), on one thread
// and on several; a monitored pool counts each; a paused pool starts none of them before
// crew_resume; a cancelling shutdown hands what it keeps from running to on_drop and the call
// answers CREW_ECANCELED; and a stress test in which pause, resize and both shutdowns race with
// callers: every task runs once or reaches on_drop, never both, never neither.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;
using crewtest::make_pool;

namespace {

// One task's record: how often it ran, and how often on_drop saw it.
struct Cell {
    std::atomic<int> runs{0};
    std::atomic<int> drops{0};
};

void bump(void *a) { static_cast<Cell *>(a)->runs.fetch_add(1, std::memory_order_relaxed); }

// on_drop for tasks whose arg is a Cell (fn bump) or anything else (counted apart).
struct Dropped {
    std::atomic<long> others{0};
};
void on_drop(crew_fn fn, void *arg, void *hook_arg) {
    if (fn == crewtest::noop_task) // a probe of wait_until_shutdown_began
        return;
    if (fn == bump)
        static_cast<Cell *>(arg)->drops.fetch_add(1, std::memory_order_relaxed);
    else
        static_cast<Dropped *>(hook_arg)->others.fetch_add(1, std::memory_order_relaxed);
}

// n tasks (bump on cells[0..n)), waited for; each must have run exactly once.
void run_n(crew_pool *p, size_t n) {
    std::vector<Cell> cells(n);
    std::vector<crew_task> t(n);
    for (size_t i = 0; i < n; i++)
        t[i].fn = bump, t[i].arg = &cells[i];
    ASSERT_EQ(crew_enqueue_tasks_wait(p, t.data(), n), CREW_OK);
    for (size_t i = 0; i < n; i++)
        EXPECT_EQ(cells[i].runs.load(), 1) << "task " << i << " of " << n;
}

struct Inside {
    crew_pool *p;
    size_t n;
};

TEST(TasksWait, EachTaskOnceFromOutsideAndInside) {
    for (unsigned threads : {1u, 2u, 4u}) {
        crew_pool *p = make_pool(threads);
        for (int round = 0; round < 50; round++) {
            for (size_t n = 1; n <= 12; n++) {
                run_n(p, n);
                // The same from inside a task of the pool.
                Inside in{p, n};
                crew_task t = {};
                t.fn = [](void *a) {
                    auto *q = static_cast<Inside *>(a);
                    run_n(q->p, q->n);
                };
                t.arg = &in;
                ASSERT_EQ(crew_enqueue_tasks_wait(p, &t, 1), CREW_OK);
            }
        }
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

// fib through crew_enqueue_tasks_wait: two tasks a call, nested as deep as n.
struct Fib {
    crew_pool *p;
    int n;
    long r;
    std::atomic<long> *calls;
};
long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }
long fib_calls(int n) { return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2); }
void fib(void *a) {
    auto *f = static_cast<Fib *>(a);
    f->calls->fetch_add(1, std::memory_order_relaxed);
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    Fib x{f->p, f->n - 1, 0, f->calls}, y{f->p, f->n - 2, 0, f->calls};
    crew_task t[2] = {};
    t[0].fn = fib, t[0].arg = &x;
    t[1].fn = fib, t[1].arg = &y;
    if (crew_enqueue_tasks_wait(f->p, t, 2) != CREW_OK)
        std::abort();
    f->r = x.r + y.r;
}

TEST(TasksWait, NestedFib) {
#ifdef CREW_SANITIZED
    const int n = 15;
#else
    const int n = crewtest::under_valgrind() ? 12 : 20;
#endif
    for (unsigned threads : {1u, 2u, 4u}) {
        crew_pool *p = make_pool(threads);
        std::atomic<long> calls{0};
        Fib root{p, n, 0, &calls};
        fib(&root); // the root from outside the pool
        EXPECT_EQ(root.r, fib_seq(n));
        EXPECT_EQ(calls.load(), fib_calls(n)); // every task ran exactly once
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

// Arrays of n tasks nested three deep: each task of the top call makes a call of n tasks, and
// each of those another; every leaf runs exactly once, on one and two threads, under every
// strategy, from outside the pool and from a task (on a one-thread pool, where the only worker
// is the caller: no deadlock).
struct Level {
    crew_pool *p;
    size_t n;
    int depth;
    std::atomic<long> *leaves;
    std::atomic<long> *calls;
};
// A level's task (arg a Level): counts itself, and above the leaves runs n children one level
// down, tasks of fn, through call(p, tasks, n), which answers as crew_enqueue_tasks_wait does.
template <class Call>
void level_of(void *a, crew_fn fn, Call call) {
    auto *l = static_cast<Level *>(a);
    l->calls->fetch_add(1, std::memory_order_relaxed);
    if (l->depth == 0) {
        l->leaves->fetch_add(1, std::memory_order_relaxed);
        return;
    }
    std::vector<Level> child(l->n, Level{l->p, l->n, l->depth - 1, l->leaves, l->calls});
    std::vector<crew_task> t(l->n);
    for (size_t i = 0; i < l->n; i++)
        t[i].fn = fn, t[i].arg = &child[i];
    int rc = call(l->p, t.data(), l->n);
    if (l->n == 0 ? rc != CREW_EINVAL : rc != CREW_OK)
        std::abort();
}
void level(void *a) { level_of(a, level, crew_enqueue_tasks_wait); }

// The leaves (n^depth) and calls (the sum of n^0..n^depth) of a tree of n-task calls, depth
// levels below the top call.
void tree_counts(size_t n, int depth, long *leaves, long *calls) {
    *leaves = 1, *calls = 0;
    for (int d = 0; d <= depth; d++) {
        *calls += *leaves;
        if (d < depth)
            *leaves *= long(n);
    }
}

TEST(TasksWait, AnyCountNestedThreeDeepEveryStrategy) {
    for (unsigned sched : crewtest::kSchedulers)
        for (unsigned threads : {1u, 2u})
            for (size_t n : {0u, 1u, 7u, 8u, 9u, 10u, 64u, 1000u}) {
                // Three levels below the top call (n^3 leaves), two for 64, one for 1000.
                const int depth = n >= 1000 ? 1 : n >= 64 ? 2 : 3;
                long expect_leaves, expect_calls;
                tree_counts(n, depth, &expect_leaves, &expect_calls);
                if (n == 0) // the top call only, refused (CREW_EINVAL)
                    expect_leaves = 0, expect_calls = 1;
                crew_pool *p = make_pool(threads, sched);
                for (int from_task : {0, 1}) {
                    std::atomic<long> leaves{0}, calls{0};
                    Level top{p, n, depth, &leaves, &calls};
                    if (from_task) {
                        crew_task t = {};
                        t.fn = level, t.arg = &top;
                        ASSERT_EQ(crew_enqueue_tasks_wait(p, &t, 1), CREW_OK);
                    } else {
                        level(&top);
                    }
                    EXPECT_EQ(leaves.load(), expect_leaves)
                        << "n " << n << ", " << threads << " threads, scheduler " << sched;
                    EXPECT_EQ(calls.load(), expect_calls)
                        << "n " << n << ", " << threads << " threads, scheduler " << sched;
                }
                EXPECT_EQ(crew_wait_all(p), CREW_OK);
                crew_destroy(p);
            }
}

// The same tree, each level through crew_enqueue_tasks into a new group and crew_wait.
void level_group(void *a) {
    level_of(a, level_group, [](crew_pool *p, crew_task *t, size_t n) {
        crew_handle g = CREW_HANDLE_NONE;
        int rc = crew_enqueue_tasks(p, t, n, &g);
        return rc == CREW_OK ? crew_wait(p, g) : rc;
    });
}

// Run fn(arg) as a task on a worker of p and wait for it without helping (a timed wait runs no
// task), so that every wait inside it is a worker's.
void on_worker(crew_pool *p, crew_fn fn, void *arg) {
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, fn, arg, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait_timed(p, g, 600ull * 1000 * 1000 * 1000), CREW_OK);
}

TEST(EnqueueWait, NestedThreeDeepEveryStrategy) {
    for (unsigned sched : crewtest::kSchedulers)
        for (unsigned threads : {1u, 2u})
            for (size_t n : {1u, 7u, 9u, 10u, 64u}) {
                const int depth = n >= 64 ? 2 : 3;
                long leaves_want, calls_want;
                tree_counts(n, depth, &leaves_want, &calls_want);
                crew_pool *p = make_pool(threads, sched);
                for (int from_worker : {0, 1}) {
                    std::atomic<long> leaves{0}, calls{0};
                    Level top{p, n, depth, &leaves, &calls};
                    if (from_worker)
                        on_worker(p, level_group, &top);
                    else
                        level_group(&top);
                    EXPECT_EQ(leaves.load(), leaves_want) << n << " tasks, scheduler " << sched;
                    EXPECT_EQ(calls.load(), calls_want) << n << " tasks, scheduler " << sched;
                }
                EXPECT_EQ(crew_wait_all(p), CREW_OK);
                crew_destroy(p);
            }
}

// A task of a group queues, without a group, a task that waits for that group; the group's
// last task is still queued below it. On a one-thread pool the worker runs it all: the wait
// inside must end (the tasks that ran are ended in their group before another task runs).
struct Beside {
    crew_pool *p;
    std::atomic<crew_handle> g{CREW_HANDLE_NONE};
    std::atomic<int> inner_rc{1};
    std::atomic<int> ran{0};
};
void beside_waiter(void *a) {
    auto *b = static_cast<Beside *>(a);
    crew_handle g;
    while ((g = b->g.load()).slot == 0) // another worker may take it before the store
        std::this_thread::yield();
    b->inner_rc = crew_wait(b->p, g);
}
void beside_first(void *a) { // the newest of the group: runs first under work stealing
    auto *b = static_cast<Beside *>(a);
    b->ran++;
    if (crew_submit(b->p, beside_waiter, b, 0, nullptr) != CREW_OK)
        std::abort();
}
void beside_other(void *a) { static_cast<Beside *>(a)->ran++; }
void beside_outer(void *a) {
    auto *b = static_cast<Beside *>(a);
    crew_task t[2] = {};
    t[0].fn = beside_other, t[0].arg = b;
    t[1].fn = beside_first, t[1].arg = b;
    crew_handle g = CREW_HANDLE_NONE;
    if (crew_enqueue_tasks(b->p, t, 2, &g) != CREW_OK)
        std::abort();
    b->g = g;
    if (crew_wait(b->p, g) != CREW_OK)
        std::abort();
}

TEST(EnqueueWait, ATaskQueuedBesideWaitsForTheGroup) {
    for (unsigned threads : {1u, 2u}) {
        crew_pool *p = make_pool(threads);
        for (int round = 0; round < 20; round++) {
            Beside b;
            b.p = p;
            on_worker(p, beside_outer, &b);
            EXPECT_EQ(crew_wait_all(p), CREW_OK);
            EXPECT_EQ(b.ran.load(), 2);
            EXPECT_EQ(b.inner_rc.load(), CREW_OK);
        }
        crew_destroy(p);
    }
}

// The first of a group's tasks to run cancels the group: on a one-thread pool, whose only
// worker waits for the group, no other task of it runs, and the wait answers CREW_ECANCELED.
struct Cancels {
    crew_pool *p;
    crew_handle g;
    std::atomic<int> ran{0};
    int rc = 1;
};
void cancels_task(void *a) {
    auto *c = static_cast<Cancels *>(a);
    if (c->ran.fetch_add(1) == 0) {
        EXPECT_EQ(crew_cancel(c->p, c->g), CREW_OK);
    }
}
void cancels_outer(void *a) {
    auto *c = static_cast<Cancels *>(a);
    crew_task t[10] = {};
    for (auto &x : t)
        x.fn = cancels_task, x.arg = c;
    c->g = CREW_HANDLE_NONE;
    // Queued before the worker (this task's thread) can run any: it is busy here.
    if (crew_enqueue_tasks(c->p, t, 10, &c->g) != CREW_OK)
        std::abort();
    c->rc = crew_wait(c->p, c->g);
}

TEST(EnqueueWait, CancelledByItsFirstTask) {
    crew_pool *p = make_pool(1);
    for (int round = 0; round < 20; round++) {
        Cancels c;
        c.p = p;
        on_worker(p, cancels_outer, &c);
        EXPECT_EQ(c.ran.load(), 1);
        EXPECT_EQ(c.rc, CREW_ECANCELED);
    }
    crew_destroy(p);
}

// From a lane's task: the tasks may run anywhere, the lane waits for the task that called.
TEST(TasksWait, FromALaneTask) {
    crew_pool *p = make_pool(2);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::vector<std::unique_ptr<Inside>> ins;
    for (int i = 0; i < 100; i++) {
        ins.push_back(std::make_unique<Inside>(Inside{p, size_t(i % 8) + 1}));
        ASSERT_EQ(crew_lane_submit(
                      l,
                      [](void *a) {
                          auto *q = static_cast<Inside *>(a);
                          run_n(q->p, q->n);
                      },
                      ins.back().get(), nullptr),
                  CREW_OK);
    }
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_destroy(p);
}

// Calls from inside a task run inline answer as from a task: crew_wait_all would wait for the
// caller's own call.
TEST(TasksWait, TasksRunAsTasksOfThePool) {
    crew_pool *p = make_pool(1);
    std::atomic<int> rc{1};
    struct Ctx {
        crew_pool *p;
        std::atomic<int> *rc;
    } c{p, &rc};
    crew_task t = {};
    t.fn = [](void *a) {
        auto *q = static_cast<Ctx *>(a);
        q->rc->store(crew_wait_all(q->p));
    };
    t.arg = &c;
    ASSERT_EQ(crew_enqueue_tasks_wait(p, &t, 1), CREW_OK);
    EXPECT_EQ(rc.load(), CREW_EDEADLK);
    crew_destroy(p);
}

// With monitoring on, every task is counted as for any submission: submitted, completed, and
// in the latencies.
TEST(TasksWait, MonitoredPoolCountsEachTask) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.monitoring = 1;
    crew_pool *p = make_pool(cfg);
    const long calls = 50;
    for (long k = 0; k < calls; k++)
        run_n(p, 2);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_stats s = {};
    s.size = sizeof s;
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(s.submitted, uint64_t(2 * calls));
    EXPECT_EQ(s.completed, uint64_t(2 * calls));
    EXPECT_EQ(s.processing.count, uint64_t(2 * calls));
    crew_destroy(p);
}

// A pause that the caller knows began: none of its tasks starts before crew_resume.
TEST(TasksWait, PausedPoolStartsNothingBeforeResume) {
    crew_pool *p = make_pool(2);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    std::vector<Cell> cells(3);
    std::vector<crew_task> t(3);
    for (size_t i = 0; i < t.size(); i++)
        t[i].fn = bump, t[i].arg = &cells[i];
    std::atomic<int> rc{1};
    std::thread caller([&] { rc = crew_enqueue_tasks_wait(p, t.data(), t.size()); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (auto &c : cells)
        EXPECT_EQ(c.runs.load(), 0) << "a task started on a paused pool";
    EXPECT_EQ(rc.load(), 1);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    caller.join();
    EXPECT_EQ(rc.load(), CREW_OK);
    for (auto &c : cells)
        EXPECT_EQ(c.runs.load(), 1);
    crew_destroy(p);
}

// The first task to start blocks on a gate; the pool's only worker is held too; a cancelling
// shutdown comes meanwhile. The blocked task ran, every other one reached on_drop instead, and
// the call answers CREW_ECANCELED, as crew_wait_all does afterwards.
struct FirstBlocks {
    Gate *gate;
    std::atomic<int> *started;
    Cell *cell;
};
void first_blocks(void *a) {
    auto *f = static_cast<FirstBlocks *>(a);
    f->cell->runs.fetch_add(1);
    if (f->started->fetch_add(1) == 0)
        Gate::block(f->gate);
}

TEST(TasksWait, CancellingShutdownReportsTheRest) {
    for (size_t n : {2u, 3u, 8u, 9u, 10u, 64u}) {
        Dropped d;
        crew_pool *p = crewtest::make_pool_on_drop(1, on_drop, &d);
        Gate gate;
        ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
        gate.wait_arrivals(1);
        std::atomic<int> started{0};
        std::vector<Cell> cells(n);
        std::vector<FirstBlocks> fb(n);
        std::vector<crew_task> t(n);
        for (size_t i = 0; i < n; i++) {
            fb[i] = FirstBlocks{&gate, &started, &cells[i]};
            t[i].fn = first_blocks, t[i].arg = &fb[i];
        }
        int rc = 1;
        std::thread caller([&] { rc = crew_enqueue_tasks_wait(p, t.data(), t.size()); });
        gate.wait_arrivals(2);
        std::thread opener([&] {
            // cancelling is set with the state that refuses submissions (pool.c)
            crewtest::wait_until_shutdown_began(p, 20);
            gate.open();
        });
        EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
        caller.join();
        opener.join();
        EXPECT_EQ(rc, CREW_ECANCELED) << n << " tasks";
        long ran = 0;
        for (auto &c : cells)
            ran += c.runs.load();
        EXPECT_EQ(ran, 1) << n << " tasks";
        // on_drop got each dropped task with its own fn and arg.
        EXPECT_EQ(d.others.load(), long(n) - 1) << n << " tasks";
        EXPECT_EQ(crew_wait_all(p), CREW_ECANCELED);
        crew_destroy(p);
    }
}

// Callers race with pause and resume, resize, and a shutdown of either kind: every task runs
// once or reaches on_drop (never both, never neither), and the call's answer agrees: CREW_OK
// when all ran, CREW_ECANCELED when some were dropped, CREW_ESHUTDOWN when none was taken.
TEST(TasksWait, StressWithPauseResizeAndShutdown) {
    const int rounds = int(crewtest::scaled(8));
    for (int round = 0; round < rounds; round++) {
        const int how = round % 2 ? CREW_CANCEL : CREW_DRAIN;
        Dropped d;
        crew_pool *p = crewtest::make_pool_on_drop(2, on_drop, &d);
        const int callers = 3, calls = int(crewtest::scaled(400));
        const size_t per = 20; // calls of 1..20 tasks: a few, and split in halves
        std::vector<std::vector<Cell>> cells(callers);
        for (auto &c : cells)
            c = std::vector<Cell>(size_t(calls) * per);
        std::atomic<bool> stop{false};
        std::vector<std::thread> th;
        for (int c = 0; c < callers; c++)
            th.emplace_back([&, c] {
                for (int k = 0; k < calls; k++) {
                    size_t n = k % 7 == 6 ? per : size_t(k % int(per)) + 1;
                    crew_task t[per] = {};
                    for (size_t i = 0; i < n; i++)
                        t[i].fn = bump, t[i].arg = &cells[size_t(c)][size_t(k) * per + i];
                    int rc = crew_enqueue_tasks_wait(p, t, n);
                    int ran = 0, dropped = 0;
                    for (size_t i = 0; i < n; i++) {
                        Cell &x = cells[size_t(c)][size_t(k) * per + i];
                        ran += x.runs.load(), dropped += x.drops.load();
                        EXPECT_EQ(x.runs.load() + x.drops.load(), rc == CREW_ESHUTDOWN ? 0 : 1);
                    }
                    if (rc == CREW_OK)
                        EXPECT_EQ(dropped, 0);
                    else if (rc == CREW_ECANCELED)
                        EXPECT_GT(dropped, 0);
                    else
                        EXPECT_EQ(rc, CREW_ESHUTDOWN);
                }
            });
        std::thread ctl([&] {
            for (int i = 0; !stop.load(); i++) {
                if (i % 3 == 0 && crew_pause(p) == CREW_OK) {
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
                    crew_resume(p);
                }
                crew_resize(p, 1 + unsigned(i % 3));
                std::this_thread::sleep_for(std::chrono::microseconds(300));
            }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(5 + 10 * (round % 3)));
        EXPECT_EQ(crew_shutdown(p, how), CREW_OK);
        for (auto &t : th)
            t.join();
        stop = true;
        ctl.join();
        EXPECT_EQ(d.others.load(), 0);
        crew_destroy(p);
    }
}

// A draining shutdown waits for every accepted task, split or not: callers outside the pool and
// tasks on workers make calls of up to a few hundred tasks (split in halves, pieces taken by
// thieves and split again) and wait for groups of their own, while pause, resume and resize
// race with them; once crew_shutdown has returned no task runs any more, and none is lost.
struct Drain {
    crew_pool *p;
    std::atomic<long> runs{0};
    std::atomic<long> started{0};
};
struct DrainTask {
    Drain *d;
    int depth;
    unsigned seed;
};
void drain_task(void *a) {
    auto *x = static_cast<DrainTask *>(a);
    x->d->started.fetch_add(1, std::memory_order_relaxed);
    if (x->depth > 0 && x->seed % 5 == 0) {
        const size_t n = 9 + x->seed % 40;
        std::vector<DrainTask> child(n);
        std::vector<crew_task> t(n);
        for (size_t i = 0; i < n; i++) {
            child[i] = DrainTask{x->d, x->depth - 1, unsigned(x->seed * 31 + i * 7 + 1)};
            t[i].fn = drain_task, t[i].arg = &child[i];
        }
        int rc;
        if (x->seed % 2) {
            rc = crew_enqueue_tasks_wait(x->d->p, t.data(), n);
        } else {
            crew_handle g = CREW_HANDLE_NONE;
            rc = crew_enqueue_tasks(x->d->p, t.data(), n, &g);
            if (rc == CREW_OK)
                rc = crew_wait(x->d->p, g);
        }
        if (rc != CREW_OK && rc != CREW_ESHUTDOWN)
            std::abort();
    }
    x->d->runs.fetch_add(1, std::memory_order_relaxed);
}

TEST(TasksWait, DrainingShutdownWaitsForEverySplitTask) {
    const int rounds = int(crewtest::scaled(6));
    for (int round = 0; round < rounds; round++) {
        Drain d;
        d.p = make_pool(2);
        std::atomic<bool> stop{false};
        std::vector<std::thread> th;
        for (int c = 0; c < 2; c++)
            th.emplace_back([&, c] {
                for (unsigned k = 0; !stop.load(); k++) {
                    const size_t n = 9 + (k * 37 + unsigned(c)) % 300;
                    std::vector<DrainTask> arg(n);
                    std::vector<crew_task> t(n);
                    for (size_t i = 0; i < n; i++) {
                        arg[i] = DrainTask{&d, 2, unsigned(k * 131 + i * 17 + unsigned(c))};
                        t[i].fn = drain_task, t[i].arg = &arg[i];
                    }
                    int rc = crew_enqueue_tasks_wait(d.p, t.data(), n);
                    if (rc == CREW_ESHUTDOWN)
                        break;
                    EXPECT_EQ(rc, CREW_OK);
                }
            });
        std::thread ctl([&] {
            for (int i = 0; !stop.load(); i++) {
                if (i % 3 == 0 && crew_pause(d.p) == CREW_OK) {
                    std::this_thread::sleep_for(std::chrono::microseconds(100));
                    crew_resume(d.p);
                }
                crew_resize(d.p, 1 + unsigned(i % 3));
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(20 + 10 * (round % 3)));
        EXPECT_EQ(crew_shutdown(d.p, CREW_DRAIN), CREW_OK);
        const long at_shutdown = d.runs.load();
        const long started_at = d.started.load();
        stop = true;
        for (auto &t : th)
            t.join();
        ctl.join();
        EXPECT_EQ(d.runs.load(), at_shutdown) << "tasks ran after the draining shutdown returned";
        EXPECT_EQ(d.started.load(), started_at);
        EXPECT_EQ(at_shutdown, started_at);
        crew_destroy(d.p);
    }
}

// A worker waits for group g with g's last task under a task x of no group, both queued by the
// waiting task. x waits for g too (it helps: g's task runs there and g ends), then queues a task
// into a new group (which may get g's slot back) and cancels that group: the cancelled task
// must not run, wherever the first wait finds it. (On a one-thread pool whose only worker runs
// x inside the first wait, no other thread can start y before the cancel.)
struct Reuse {
    crew_pool *p;
    crew_handle g{CREW_HANDLE_NONE}, g2{CREW_HANDLE_NONE};
    std::atomic<int> a_ran{0}, y_ran{0};
    std::atomic<bool> in_outer{false};
    int x_wait = 1, cancel_rc = 1, outer_wait = 1;
    crew_task a{}, y{};
};
void reuse_a(void *arg) { static_cast<Reuse *>(arg)->a_ran++; }
void reuse_y(void *arg) { static_cast<Reuse *>(arg)->y_ran++; }
void reuse_x(void *arg) {
    auto *r = static_cast<Reuse *>(arg);
    r->x_wait = crew_wait(r->p, r->g);
    if (!r->in_outer.load()) // not inside the first wait: another thread could run y at once
        return;
    r->y.fn = reuse_y, r->y.arg = r;
    if (crew_enqueue_tasks(r->p, &r->y, 1, &r->g2) != CREW_OK)
        std::abort();
    r->cancel_rc = crew_cancel(r->p, r->g2);
}
void reuse_outer(void *arg) {
    auto *r = static_cast<Reuse *>(arg);
    r->a.fn = reuse_a, r->a.arg = r;
    if (crew_enqueue_tasks(r->p, &r->a, 1, &r->g) != CREW_OK ||
        crew_submit(r->p, reuse_x, r, 0, nullptr) != CREW_OK)
        std::abort();
    r->in_outer = true;
    r->outer_wait = crew_wait(r->p, r->g);
    r->in_outer = false;
}

TEST(EnqueueWait, ACancelledGroupOnTheSlotOfTheAwaitedOneDoesNotRun) {
    crew_pool *p = make_pool(1);
    for (int round = 0; round < 20; round++) {
        Reuse r;
        r.p = p;
        on_worker(p, reuse_outer, &r);
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(r.a_ran.load(), 1);
        EXPECT_EQ(r.x_wait, CREW_OK);
        if (r.cancel_rc == CREW_OK) { // cancelled before y started
            EXPECT_EQ(r.y_ran.load(), 0) << "round " << round << ", slots " << r.g.slot << " "
                                         << r.g2.slot;
            EXPECT_EQ(crew_wait(p, r.g2), CREW_ECANCELED);
        }
        EXPECT_EQ(r.outer_wait, CREW_OK);
    }
    crew_destroy(p);
}

} // namespace
