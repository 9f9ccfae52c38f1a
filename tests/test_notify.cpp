// test_notify.cpp -- crew_notify: a completion callback runs exactly once after its group
// finishes, however it finishes (ran, cancelled, expired), also when registered after the end
// or while the group is ending; in it crew_wait answers at once with the group's result;
// callbacks are counted as accepted work (crew_wait_all and shutdown wait for them) and are
// never dropped (cancelling shutdown, a full queue dropping its oldest); bad input is refused.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::bump;
using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

// Task arrays for crew_enqueue_tasks, kept until the test ends (a queued task's memory must
// live until it starts). Opening a group with all its tasks at once matters: single
// submissions into one handle may find its group finished part-way, and go to a new group.
class arena {
public:
    crew_task *get(size_t n, crew_fn fn, void *arg) {
        std::lock_guard<std::mutex> g(m_);
        v_.emplace_back(n);
        for (crew_task &t : v_.back()) {
            std::memset(&t, 0, sizeof t);
            t.fn = fn;
            t.arg = arg;
        }
        return v_.back().data();
    }

private:
    std::mutex m_;
    std::deque<std::vector<crew_task>> v_;
};

// A new group of n tasks fn(arg); its handle, or CREW_HANDLE_NONE on failure.
crew_handle open_group(crew_pool *p, arena &a, size_t n, crew_fn fn, void *arg) {
    crew_handle g = CREW_HANDLE_NONE;
    if (crew_enqueue_tasks(p, a.get(n, fn, arg), n, &g) != CREW_OK)
        return CREW_HANDLE_NONE;
    return g;
}

// What a callback saw.
struct seen {
    crew_pool *p = nullptr;
    crew_handle g = CREW_HANDLE_NONE;
    std::atomic<long> *tasks = nullptr; // the group's tasks' counter
    std::atomic<int> calls{0};
    std::atomic<long> tasks_at_call{-1};
    std::atomic<int> wait_rc{1};
};

void record(void *arg) {
    auto *s = static_cast<seen *>(arg);
    if (s->tasks)
        s->tasks_at_call.store(s->tasks->load());
    s->wait_rc.store(crew_wait(s->p, s->g)); // must answer at once: the group has finished
    s->calls.fetch_add(1);
}

// Plain data written by the group's tasks and read by the callback, without atomics: the
// callback must happen-after them (ThreadSanitizer checks it).
struct plain {
    crew_pool *p = nullptr;
    crew_handle g = CREW_HANDLE_NONE;
    std::vector<int> v = std::vector<int>(64, 0);
    std::atomic<long> sum{-1};
};

TEST(Notify, RunsAfterEveryTaskRan) {
    crew_pool *p = make_pool(2);
    std::atomic<long> tasks{0};
    seen s;
    s.p = p;
    s.tasks = &tasks;
    const long n = 200;
    arena a;
    s.g = open_group(p, a, size_t(n), bump, &tasks);
    ASSERT_NE(s.g.slot, 0u);
    ASSERT_EQ(crew_notify(p, s.g, record, &s), CREW_OK);
    // The callback holds the pool's pending count: crew_wait_all returns after it ran.
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(s.calls.load(), 1);
    EXPECT_EQ(s.tasks_at_call.load(), n) << "the callback ran before its group finished";
    EXPECT_EQ(s.wait_rc.load(), CREW_OK);
    crew_destroy(p);
}

TEST(Notify, CallbackSeesTheTasksWrites) {
    crew_pool *p = make_pool(2);
    auto *d = new plain;
    d->p = p;
    std::vector<crew_task> ts(64);
    for (size_t i = 0; i < ts.size(); i++) {
        std::memset(&ts[i], 0, sizeof ts[i]);
        ts[i].fn = [](void *a) { *static_cast<int *>(a) = 1; };
        ts[i].arg = &d->v[i];
    }
    ASSERT_EQ(crew_enqueue_tasks(p, ts.data(), ts.size(), &d->g), CREW_OK);
    ASSERT_EQ(crew_notify(p, d->g,
                          [](void *a) {
                              auto *x = static_cast<plain *>(a);
                              long t = 0;
                              for (int e : x->v)
                                  t += e;
                              x->sum.store(t);
                          },
                          d),
              CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(d->sum.load(), 64);
    crew_destroy(p);
    delete d;
}

TEST(Notify, SeveralCallbacksAllRunOnce) {
    crew_pool *p = make_pool(2);
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
    const int k = 50;
    std::vector<std::unique_ptr<seen>> cbs;
    for (int i = 0; i < k; i++) {
        cbs.push_back(std::make_unique<seen>());
        cbs.back()->p = p;
        cbs.back()->g = g;
        ASSERT_EQ(crew_notify(p, g, record, cbs.back().get()), CREW_OK);
    }
    gate.wait_arrivals(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (auto &c : cbs)
        EXPECT_EQ(c->calls.load(), 0) << "a callback ran while its group was open";
    gate.open();
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    for (auto &c : cbs) {
        EXPECT_EQ(c->calls.load(), 1);
        EXPECT_EQ(c->wait_rc.load(), CREW_OK);
    }
    crew_destroy(p);
}

TEST(Notify, AlreadyFinishedAndStaleHandles) {
    crew_pool *p = make_pool(2);
    std::atomic<long> tasks{0};
    seen s;
    s.p = p;
    ASSERT_EQ(crew_submit(p, bump, &tasks, 0, &s.g), CREW_OK);
    ASSERT_EQ(crew_wait(p, s.g), CREW_OK);
    ASSERT_EQ(crew_notify(p, s.g, record, &s), CREW_OK); // finished: runs soon
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(s.calls.load(), 1);
    EXPECT_EQ(s.wait_rc.load(), CREW_OK);
    // Stale: the slot is reused by many later groups; the old handle still names a finished
    // group.
    for (int i = 0; i < 100; i++) {
        crew_handle h = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_submit(p, bump, &tasks, 0, &h), CREW_OK);
        ASSERT_EQ(crew_wait(p, h), CREW_OK);
    }
    seen s2;
    s2.p = p;
    s2.g = s.g;
    ASSERT_EQ(crew_notify(p, s.g, record, &s2), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(s2.calls.load(), 1);
    EXPECT_EQ(s2.wait_rc.load(), CREW_OK);
    crew_destroy(p);
}

TEST(Notify, CancelledGroupReportsCancelled) {
    crew_pool *p = make_pool(2);
    std::atomic<long> tasks{0};
    seen s, late;
    s.p = late.p = p;
    ASSERT_EQ(crew_pause(p), CREW_OK);
    arena a;
    s.g = open_group(p, a, 20, bump, &tasks);
    ASSERT_NE(s.g.slot, 0u);
    late.g = s.g;
    ASSERT_EQ(crew_notify(p, s.g, record, &s), CREW_OK);
    ASSERT_EQ(crew_cancel(p, s.g), CREW_OK);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    EXPECT_EQ(crew_wait(p, s.g), CREW_ECANCELED);
    ASSERT_EQ(crew_notify(p, s.g, record, &late), CREW_OK); // after the end
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(s.calls.load(), 1);
    EXPECT_EQ(s.wait_rc.load(), CREW_ECANCELED);
    EXPECT_EQ(late.calls.load(), 1);
    EXPECT_EQ(late.wait_rc.load(), CREW_ECANCELED);
    crew_destroy(p);
}

TEST(Notify, ExpiredGroupReportsExpired) {
    crew_pool *p = make_pool(1);
    std::atomic<long> tasks{0};
    seen s;
    s.p = p;
    ASSERT_EQ(crew_pause(p), CREW_OK);
    ASSERT_EQ(crew_submit_deadline(p, bump, &tasks, 0, 0, 1, &s.g), CREW_OK); // long past
    ASSERT_EQ(crew_notify(p, s.g, record, &s), CREW_OK);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(tasks.load(), 0);
    EXPECT_EQ(s.calls.load(), 1);
    EXPECT_EQ(s.wait_rc.load(), CREW_EEXPIRED);
    crew_destroy(p);
}

// A callback that opens the next group and registers itself on it, depth times.
struct chain {
    crew_pool *p = nullptr;
    arena tasks_memory;
    std::atomic<long> tasks{0};
    std::atomic<int> links{0};
    int depth = 0;
    std::atomic<int> failures{0};
};

void next_link(void *arg) {
    auto *c = static_cast<chain *>(arg);
    if (c->links.fetch_add(1) + 1 >= c->depth)
        return;
    crew_handle g = open_group(c->p, c->tasks_memory, 4, bump, &c->tasks);
    if (g.slot == 0 || crew_notify(c->p, g, next_link, c) != CREW_OK)
        c->failures.fetch_add(1);
}

TEST(Notify, CallbackSubmitsAndNotifiesAgain) {
    crew_pool *p = make_pool(2);
    chain c;
    c.p = p;
    c.depth = 10;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, bump, &c.tasks, 0, &g), CREW_OK);
    ASSERT_EQ(crew_notify(p, g, next_link, &c), CREW_OK);
    // Each link is registered (and counted) before the callback that registers it returns, so
    // one crew_wait_all sees the whole chain.
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(c.links.load(), 10);
    EXPECT_EQ(c.tasks.load(), 1 + 9 * 4);
    EXPECT_EQ(c.failures.load(), 0);
    crew_destroy(p);
}

TEST(Notify, TaskRegistersOnItsOwnGroup) {
    crew_pool *p = make_pool(2);
    struct ctx {
        crew_pool *p;
        crew_handle g;
        Gate ready; // opened once g is set
        std::atomic<int> rc{1};
        std::atomic<bool> task_done{false};
        std::atomic<int> order_ok{-1};
    } c{p, CREW_HANDLE_NONE, {}};
    ASSERT_EQ(crew_submit(
                  p,
                  [](void *a) {
                      auto *x = static_cast<ctx *>(a);
                      x->ready.wait();
                      x->rc.store(crew_notify(x->p, x->g,
                                              [](void *b) {
                                                  auto *y = static_cast<ctx *>(b);
                                                  y->order_ok.store(y->task_done.load() ? 1 : 0);
                                              },
                                              x));
                      std::this_thread::sleep_for(std::chrono::milliseconds(2));
                      x->task_done.store(true);
                  },
                  &c, 0, &c.g),
              CREW_OK);
    c.ready.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(c.rc.load(), CREW_OK);
    EXPECT_EQ(c.order_ok.load(), 1) << "the callback ran before its group's own task returned";
    crew_destroy(p);
}

// Many threads register callbacks on a group while its tasks finish: each callback runs exactly
// once, after the group's end, whichever side of the end its registration fell on.
struct race_cb {
    crew_pool *p;
    crew_handle g;
    std::atomic<long> *tasks;
    long n;
    std::atomic<int> calls{0};
    std::atomic<bool> early{false};
    std::atomic<int> rc{1};
};

void race_record(void *arg) {
    auto *r = static_cast<race_cb *>(arg);
    if (r->tasks->load() != r->n)
        r->early.store(true);
    r->rc.store(crew_wait(r->p, r->g));
    r->calls.fetch_add(1);
}

TEST(Notify, RegistrationRacesTheFinish) {
    crew_pool *p = make_pool(2);
    const int rounds = int(scaled(200)), threads = 3, per_thread = 20;
    const long n = 8;
    arena a;
    for (int round = 0; round < rounds; round++) {
        std::atomic<long> tasks{0};
        crew_handle g = open_group(p, a, size_t(n), bump, &tasks);
        ASSERT_NE(g.slot, 0u);
        std::vector<std::unique_ptr<race_cb>> cbs;
        for (int i = 0; i < threads * per_thread; i++)
            cbs.push_back(std::unique_ptr<race_cb>(new race_cb{p, g, &tasks, n}));
        std::atomic<int> refused{0};
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; t++)
            ts.emplace_back([&, t] {
                for (int i = 0; i < per_thread; i++)
                    if (crew_notify(p, g, race_record, cbs[size_t(t * per_thread + i)].get()) !=
                        CREW_OK)
                        refused.fetch_add(1);
            });
        for (auto &t : ts)
            t.join();
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        ASSERT_EQ(refused.load(), 0);
        for (auto &c : cbs) {
            ASSERT_EQ(c->calls.load(), 1) << "round " << round;
            ASSERT_FALSE(c->early.load()) << "round " << round;
            ASSERT_EQ(c->rc.load(), CREW_OK) << "round " << round;
        }
    }
    crew_destroy(p);
}

// Registrations for old handles while their slot is reused by later groups: a worker opens and
// waits for one group after another (its slot cache hands it the same slot each time) while
// another thread registers callbacks on the newest handle it has seen. Each callback runs once,
// and none waits for a later group of its slot: the last group stays open (gated) while every
// callback registered before must still run.
struct reuse {
    crew_pool *p;
    int rounds;
    std::atomic<uint64_t> newest{0}; // slot << 32 | gen of the newest group, 0 = none yet
    std::atomic<uint64_t> seen{0};   // the newest the registrar has read
    std::atomic<bool> done{false};
    std::atomic<long> tasks{0};
    Gate last; // blocks the last group's task
};

uint64_t pack(crew_handle h) { return uint64_t(h.slot) << 32 | h.gen; }
crew_handle unpack(uint64_t v) { return crew_handle{uint32_t(v >> 32), uint32_t(v)}; }

TEST(Notify, StaleRegistrationsDoNotJoinALaterGroup) {
    crew_pool *p = make_pool(2);
    reuse r{p, int(scaled(2000)), {0}, {0}, {false}, {0}, {}};
    ASSERT_EQ(crew_submit(
                  p,
                  [](void *a) {
                      auto *x = static_cast<reuse *>(a);
                      for (int i = 0; i < x->rounds; i++) {
                          crew_handle h = CREW_HANDLE_NONE;
                          if (crew_submit(x->p, bump, &x->tasks, 0, &h) != CREW_OK)
                              std::abort();
                          x->newest.store(pack(h));
                          // Let the registrar see it, so that its registration races the
                          // group's end (bounded: the registrar may have stopped registering).
                          for (int spin = 0; spin < 10000 && x->seen.load() != pack(h); spin++)
                              std::this_thread::yield();
                          if (crew_wait(x->p, h) != CREW_OK)
                              std::abort();
                      }
                      crew_handle h = CREW_HANDLE_NONE;
                      // On a blocking thread: the workers stay free to run the callbacks
                      // (PER_WORKER's queues are not stolen from).
                      if (crew_submit_ex(x->p, Gate::block, &x->last, 0, CREW_TASK_BLOCKING,
                                         &h) != CREW_OK)
                          std::abort();
                      x->newest.store(pack(h));
                      x->done.store(true);
                  },
                  &r, 0, nullptr),
              CREW_OK);
    std::atomic<long> calls{0};
    long registered = 0, on_last = 0;
    std::vector<uint64_t> seen_handles;
    std::map<uint64_t, long> per_handle; // registrations on each handle
    while (!r.done.load()) {
        uint64_t v = r.newest.load();
        if (v == 0)
            continue;
        r.seen.store(v);
        if (seen_handles.empty() || seen_handles.back() != v)
            seen_handles.push_back(v);
        if (registered < 20000 && crew_notify(p, unpack(v), bump, &calls) == CREW_OK) {
            registered++;
            per_handle[v]++;
        }
    }
    uint64_t last = r.newest.load();
    on_last = per_handle[last];
    for (uint64_t v : seen_handles) { // every handle once more, the old ones surely finished
        if (crew_notify(p, unpack(v), bump, &calls) != CREW_OK)
            continue;
        registered++;
        if (v == last)
            on_last++;
    }
    if (on_last == 0) { // and the last one, open, at least once
        ASSERT_EQ(crew_notify(p, unpack(last), bump, &calls), CREW_OK);
        registered++;
        on_last++;
    }
    r.last.wait_arrivals(1);
    // Those registered on the last group wait for it; all the others run now.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (calls.load() < registered - on_last && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(calls.load(), registered - on_last)
        << "callbacks of finished groups were held back, or the open group's ran early";
    r.last.open();
    if (std::getenv("NOTIFY_DEBUG"))
        std::fprintf(stderr, "registered %ld, on the last group %ld, handles %zu\n", registered,
                     on_last, seen_handles.size());
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(calls.load(), registered) << "a callback ran twice or never";
    crew_destroy(p);
}

TEST(Notify, ShutdownRunsCallbacksOfCancelledGroups) {
    for (int how : {CREW_CANCEL, CREW_DRAIN}) {
        arena a;
        crew_pool *p = make_pool(2);
        std::atomic<long> tasks{0};
        const int groups = 20;
        std::vector<std::unique_ptr<seen>> cbs;
        ASSERT_EQ(crew_pause(p), CREW_OK); // everything stays queued until the shutdown
        for (int i = 0; i < groups; i++) {
            cbs.push_back(std::make_unique<seen>());
            seen &s = *cbs.back();
            s.p = p;
            s.g = open_group(p, a, 5, bump, &tasks);
            ASSERT_NE(s.g.slot, 0u);
            ASSERT_EQ(crew_notify(p, s.g, record, &s), CREW_OK);
            ASSERT_EQ(crew_notify(p, s.g, record, &s), CREW_OK); // two per group
        }
        ASSERT_EQ(crew_shutdown(p, how), CREW_OK);
        for (auto &c : cbs) {
            EXPECT_EQ(c->calls.load(), 2) << "a callback was lost by the shutdown (how " << how
                                          << ")";
            EXPECT_EQ(c->wait_rc.load(), how == CREW_CANCEL ? CREW_ECANCELED : CREW_OK);
        }
        if (how == CREW_DRAIN) {
            EXPECT_EQ(tasks.load(), groups * 5);
        }
        // After the shutdown began: refused, never silently lost.
        seen late;
        late.p = p;
        late.g = cbs[0]->g;
        EXPECT_EQ(crew_notify(p, late.g, record, &late), CREW_ESHUTDOWN);
        EXPECT_NE(std::strstr(crew_last_error(), "crew_notify"), nullptr);
        crew_destroy(p);
        EXPECT_EQ(late.calls.load(), 0);
    }
}

TEST(Notify, DestroyWaitsForARunningCallback) {
    crew_pool *p = make_pool(2);
    struct ctx {
        std::atomic<bool> started{false};
        std::atomic<bool> finished{false};
    } c;
    crew_handle g = CREW_HANDLE_NONE;
    std::atomic<long> tasks{0};
    ASSERT_EQ(crew_submit(p, bump, &tasks, 0, &g), CREW_OK);
    ASSERT_EQ(crew_notify(p, g,
                          [](void *a) {
                              auto *x = static_cast<ctx *>(a);
                              x->started.store(true);
                              std::this_thread::sleep_for(std::chrono::milliseconds(20));
                              x->finished.store(true);
                          },
                          &c),
              CREW_OK);
    crew_destroy(p); // drains: the callback is accepted work
    EXPECT_TRUE(c.started.load());
    EXPECT_TRUE(c.finished.load());
}

TEST(Notify, PausedPoolHoldsCallbacksUntilResume) {
    crew_pool *p = make_pool(2);
    std::atomic<long> tasks{0};
    seen s;
    s.p = p;
    ASSERT_EQ(crew_submit(p, bump, &tasks, 0, &s.g), CREW_OK);
    ASSERT_EQ(crew_wait(p, s.g), CREW_OK);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    ASSERT_EQ(crew_notify(p, s.g, record, &s), CREW_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(s.calls.load(), 0) << "a callback ran on a paused pool";
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(s.calls.load(), 1);
    crew_destroy(p);
}

// A full queue that drops its oldest task meets a queued callback: the callback runs (in the
// submitting thread), it is never handed to on_drop.
std::atomic<int> drops{0};
void on_drop(crew_fn, void *, void *) { drops.fetch_add(1); }

TEST(Notify, DropOldestNeverDropsACallback) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.queue_capacity = 2;
    cfg.full_policy = CREW_FULL_DROP_OLDEST;
    crew_pool *p = crewtest::make_pool_on_drop(cfg, on_drop);
    drops.store(0);
    Gate gate;
    gate.hold(p, 1); // the only worker is busy
    std::atomic<long> tasks{0};
    seen s;
    s.p = p;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, bump, &tasks, 1, &g), CREW_OK);
    ASSERT_EQ(crew_cancel(p, g), CREW_OK); // ends once its task is dropped or reached
    s.g = g;
    // Finished already (a locked queue gave the task up) or not (a deque keeps it): either
    // way the callback is queued at once or when the worker reaches the task.
    ASSERT_EQ(crew_notify(p, g, record, &s), CREW_OK);
    for (int i = 0; i < 6; i++) // overfill: each drops the oldest
        ASSERT_EQ(crew_submit(p, bump, &tasks, 1, nullptr), CREW_OK);
    gate.open();
    EXPECT_EQ(crew_wait_all(p), CREW_OK); // the full queue's drops are not the pool's failure
    EXPECT_EQ(s.calls.load(), 1);
    EXPECT_EQ(s.wait_rc.load(), CREW_ECANCELED);
    EXPECT_GE(drops.load(), 1); // the path was taken: the full queue dropped something
    crew_destroy(p);
}

TEST(Notify, BadInputIsRefused) {
    crew_pool *p = make_pool(1);
    crew_pool *other = make_pool(1);
    std::atomic<long> tasks{0};
    crew_handle g = CREW_HANDLE_NONE, foreign = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, bump, &tasks, 0, &g), CREW_OK);
    ASSERT_EQ(crew_submit(other, bump, &tasks, 0, &foreign), CREW_OK);
    EXPECT_EQ(crew_notify(nullptr, g, bump, &tasks), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "pool is NULL"), nullptr) << crew_last_error();
    EXPECT_EQ(crew_notify(p, g, nullptr, &tasks), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "fn is NULL"), nullptr) << crew_last_error();
    EXPECT_EQ(crew_notify(p, CREW_HANDLE_NONE, bump, &tasks), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "CREW_HANDLE_NONE"), nullptr) << crew_last_error();
    crew_handle gen0 = g;
    gen0.gen = 0;
    EXPECT_EQ(crew_notify(p, gen0, bump, &tasks), CREW_EINVAL);
    EXPECT_EQ(crew_notify(p, foreign, bump, &tasks), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "crew_notify"), nullptr) << crew_last_error();
    crew_handle never = g;
    never.slot += 1000; // a slot this pool never issued
    EXPECT_EQ(crew_notify(p, never, bump, &tasks), CREW_EINVAL);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    ASSERT_EQ(crew_wait_all(other), CREW_OK);
    EXPECT_EQ(tasks.load(), 2) << "a refused callback ran";
    crew_destroy(other);
    crew_destroy(p);
}

// C++: crew::group::on_done and crew::pool::notify; exceptions reach pool::on_error.
TEST(NotifyCpp, GroupOnDoneRunsAfterTheTasks) {
    crew::options o;
    o.threads = 2;
    crew::pool p(o);
    std::atomic<int> ran{0}, done_calls{0}, seen_at_done{-1};
    {
        crew::group g(p);
        for (int i = 0; i < 50; i++)
            g.run([&] { ran.fetch_add(1); });
        g.on_done([&] {
            seen_at_done.store(ran.load());
            done_calls.fetch_add(1);
        });
        g.wait();
    }
    p.wait(); // the callback is accepted work
    EXPECT_EQ(done_calls.load(), 1);
    EXPECT_EQ(seen_at_done.load(), 50);
    crew::group empty(p);
    empty.on_done([&] { done_calls.fetch_add(1); }); // nothing run: done already
    p.wait();
    EXPECT_EQ(done_calls.load(), 2);
}

TEST(NotifyCpp, ExceptionsGoToTheErrorHandler) {
    crew::options o;
    o.threads = 2;
    crew::pool p(o);
    std::mutex m;
    std::vector<std::string> errors;
    p.on_error([&](std::exception_ptr e) {
        try {
            std::rethrow_exception(e);
        } catch (const std::exception &x) {
            std::lock_guard<std::mutex> lk(m);
            errors.push_back(x.what());
        }
    });
    crew::group g(p);
    g.run([] {});
    g.on_done([] { throw std::runtime_error("from on_done"); });
    g.wait();
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p.native(), [](void *) {}, nullptr, 0, &h), CREW_OK);
    std::atomic<int> wait_rc{1};
    p.notify(h, [&] {
        wait_rc.store(crew_wait(p.native(), h));
        throw std::runtime_error("from notify");
    });
    p.wait();
    EXPECT_EQ(wait_rc.load(), CREW_OK);
    std::lock_guard<std::mutex> lk(m);
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_TRUE((errors[0] == "from on_done" && errors[1] == "from notify") ||
                (errors[1] == "from on_done" && errors[0] == "from notify"));
    EXPECT_THROW(p.notify(CREW_HANDLE_NONE, [] {}), crew::error);
}

} // namespace
