// test_reentry.cpp -- crew.h's re-entrancy table, call by call: every public call made from
// every kind of callback (a task body, on_start and on_stop of workers and blocking threads,
// on_drop on the thread that drops, C++'s on_error) returns what the table says, and every task
// accepted on the way runs once or is reported dropped. Plus the two hangs this table was made
// for: an on_drop that submits into a full CREW_FULL_DROP_OLDEST queue, and a worker's on_stop
// that submits after a shrink.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::Gate;
using crewtest::make_pool;

namespace {

enum Where { TASK, ON_START, ON_STOP, ON_DROP, ON_ERROR, NWHERE };
const char *const where_name[NWHERE] = {"task", "on_start", "on_stop", "on_drop", "on_error"};

// One test's pool and its books. The hooks find it through hooks.arg.
struct Ctx {
    std::atomic<crew_pool *> pool{nullptr};
    std::atomic<bool> closing{false};     // a shutdown has begun: submissions may be refused
    std::atomic<int> budget[NWHERE];      // exercises left per kind of callback
    std::atomic<int> exercised[NWHERE];   // exercises done per kind of callback
    std::atomic<long> accepted{0}, ran{0}, dropped{0};
    std::mutex m;
    std::vector<std::string> failures;
    explicit Ctx(int per_kind) {
        for (int i = 0; i < NWHERE; i++) {
            budget[i] = per_kind;
            exercised[i] = 0;
        }
    }
    void fail(Where w, const char *call, int rc) {
        std::lock_guard<std::mutex> g(m);
        failures.push_back(std::string(where_name[w]) + ": " + call + " returned " +
                           crew_err_name(rc));
    }
};

void count_task(void *arg) { static_cast<Ctx *>(arg)->ran++; }

void add_range(size_t b, size_t e, void *arg) {
    static_cast<std::atomic<size_t> *>(arg)->fetch_add(e - b);
}

// rc must be one of the listed codes.
void expect_in(Ctx *c, Where w, const char *call, int rc, std::initializer_list<int> ok) {
    for (int v : ok)
        if (rc == v)
            return;
    c->fail(w, call, rc);
}

// A submission: counted if accepted; refused only with ESHUTDOWN once a shutdown has begun.
void submitted(Ctx *c, Where w, const char *call, int rc, long n = 1) {
    if (rc == CREW_OK)
        c->accepted += n;
    else if (!(rc == CREW_ESHUTDOWN && c->closing.load()))
        c->fail(w, call, rc);
}

// Every public call on the pool, from a callback of kind w, with the answers crew.h's table
// gives. in_frame: the callback runs as a task of the pool (task body, on_drop, on_error), so
// calls that would wait for it return CREW_EDEADLK.
void exercise(Ctx *c, Where w) {
    crew_pool *p = c->pool.load();
    if (!p || c->budget[w].fetch_sub(1) <= 0) // not yet published (crew_create), or done
        return;
    bool in_frame = w == TASK || w == ON_DROP || w == ON_ERROR;
    bool closing = c->closing.load();
    auto shut = [&](int rc) { return closing && rc == CREW_ESHUTDOWN; };

    submitted(c, w, "crew_submit", crew_submit(p, count_task, c, 1, nullptr));
    submitted(c, w, "crew_submit_ex(BLOCKING)",
              crew_submit_ex(p, count_task, c, 0, CREW_TASK_BLOCKING, nullptr));
    submitted(c, w, "crew_try_submit", crew_try_submit(p, count_task, c, 0, nullptr));
    submitted(c, w, "crew_submit_timed", crew_submit_timed(p, count_task, c, 0, nullptr, 1000));
    submitted(c, w, "crew_submit_deadline",
              crew_submit_deadline(p, count_task, c, 0, 0, crew_now_ns() + 60000000000ull,
                                   nullptr));

    // A group of caller-owned tasks, waited for before they go out of scope (the wait helps).
    crew_task tasks[2] = {{count_task, c, 0, 0, {}}, {count_task, c, 0, 0, {}}};
    crew_handle g = CREW_HANDLE_NONE;
    int rc = crew_enqueue_tasks(p, tasks, 2, &g);
    submitted(c, w, "crew_enqueue_tasks", rc, 2);
    if (rc == CREW_OK)
        expect_in(c, w, "crew_wait", crew_wait(p, g), {CREW_OK, CREW_ECANCELED});

    // Cancel a group of one: it ran already (ESTALE) or is dropped, and on_drop counts it.
    crew_handle cg = CREW_HANDLE_NONE;
    rc = crew_submit(p, count_task, c, 5, &cg);
    submitted(c, w, "crew_submit(group)", rc);
    if (rc == CREW_OK) {
        expect_in(c, w, "crew_cancel", crew_cancel(p, cg), {CREW_OK, CREW_ESTALE});
        expect_in(c, w, "crew_wait(cancelled)", crew_wait(p, cg), {CREW_OK, CREW_ECANCELED});
    }
    expect_in(c, w, "crew_cancelled", crew_cancelled(), {0, 1});

    // A lane: its tasks, then its destruction, which waits for them (helping from a frame of
    // the pool or a hook, where its runner may be queued behind the caller).
    crew_lane *lane = nullptr;
    rc = crew_lane_create(p, 2, &lane);
    if (!shut(rc))
        expect_in(c, w, "crew_lane_create", rc, {CREW_OK});
    if (rc == CREW_OK) {
        for (int i = 0; i < 3; i++)
            submitted(c, w, "crew_lane_submit", crew_lane_submit(lane, count_task, c, nullptr));
        expect_in(c, w, "crew_lane_destroy", crew_lane_destroy(lane), {CREW_OK});
    }

    rc = crew_resize(p, crew_size(p));
    if (!shut(rc))
        expect_in(c, w, "crew_resize", rc, {CREW_OK});
    rc = crew_pause(p);
    if (!shut(rc))
        expect_in(c, w, "crew_pause", rc, {CREW_OK});
    expect_in(c, w, "crew_paused", crew_paused(p), {0, 1});
    expect_in(c, w, "crew_resume", crew_resume(p), {CREW_OK});

    expect_in(c, w, "crew_set_monitoring", crew_set_monitoring(p, 1), {CREW_OK, CREW_ENOTSUP});
    crew_stats s{};
    s.size = sizeof s;
    expect_in(c, w, "crew_stats_get", crew_stats_get(p, &s), {CREW_OK});
    crew_thread_stats ts[4];
    size_t n = 0;
    expect_in(c, w, "crew_stats_threads", crew_stats_threads(p, ts, 4, &n), {CREW_OK});
    if (FILE *f = std::fopen("/dev/null", "w")) {
        expect_in(c, w, "crew_stats_write_json", crew_stats_write_json(p, f), {CREW_OK});
        std::fclose(f);
    }
    expect_in(c, w, "crew_stats_reset", crew_stats_reset(p), {CREW_OK});
    if (crew_diagnose(p, nullptr) < 0)
        c->fail(w, "crew_diagnose", crew_diagnose(p, nullptr));
    // A trace from a callback (another callback may be tracing, or stop this one first).
    expect_in(c, w, "crew_trace_start", crew_trace_start(p, "/dev/null"),
              {CREW_OK, CREW_EINVAL, CREW_ENOTSUP});
    expect_in(c, w, "crew_trace_stop", crew_trace_stop(p), {CREW_OK, CREW_EINVAL});

    std::atomic<size_t> covered{0};
    expect_in(c, w, "crew_parallel_for", crew_parallel_for(p, 0, 100, 7, add_range, &covered),
              {CREW_OK});
    if (covered.load() != 100)
        c->fail(w, "crew_parallel_for covered", (int)covered.load());

    // Calls that wait for the whole pool: from inside one of its tasks they would wait for
    // the caller itself.
    rc = crew_wait_all(p);
    if (in_frame)
        expect_in(c, w, "crew_wait_all", rc, {CREW_EDEADLK});
    else
        expect_in(c, w, "crew_wait_all", rc, {CREW_OK, CREW_ECANCELED});
    expect_in(c, w, "crew_shutdown", crew_shutdown(p, CREW_DRAIN), {CREW_EDEADLK});
    expect_in(c, w, "crew_destroy", crew_destroy(p), {CREW_EDEADLK});
    c->exercised[w]++;
}

void trigger_task(void *arg) {
    auto *c = static_cast<Ctx *>(arg);
    c->ran++;
    exercise(c, TASK);
}

void hook_start(unsigned, void *arg) { exercise(static_cast<Ctx *>(arg), ON_START); }
void hook_stop(unsigned, void *arg) { exercise(static_cast<Ctx *>(arg), ON_STOP); }
void hook_drop(crew_fn fn, void *, void *arg) {
    auto *c = static_cast<Ctx *>(arg);
    if (fn == count_task || fn == trigger_task)
        c->dropped++;
    if (fn == trigger_task)
        exercise(c, ON_DROP);
}

crew_hooks all_hooks(Ctx *c) {
    crew_hooks h{};
    h.size = sizeof h;
    h.on_start = hook_start;
    h.on_stop = hook_stop;
    h.on_drop = hook_drop;
    h.arg = c;
    return h;
}

void check_books(Ctx &c) {
    for (const std::string &f : c.failures)
        ADD_FAILURE() << f;
    EXPECT_EQ(c.accepted.load(), c.ran.load() + c.dropped.load())
        << "accepted " << c.accepted << ", ran " << c.ran << ", dropped " << c.dropped;
}

TEST(Reentry, EveryCallFromEveryCallback) {
    Ctx c(2);
    crew_hooks h = all_hooks(&c);
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.hooks = &h;
    cfg.blocking_idle_ms = 20; // blocking threads stop (on_stop) soon after their task
    crew_pool *p = make_pool(cfg);
    c.pool = p; // from here on the hooks exercise the pool

    // Task bodies.
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(crew_submit(p, trigger_task, &c, 0, nullptr), CREW_OK);
        c.accepted++;
    }
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    // on_start of new workers, on_stop of workers a shrink removed (and, along the way, of
    // blocking threads that went idle).
    ASSERT_EQ(crew_resize(p, 3), CREW_OK);
    ASSERT_EQ(crew_resize(p, 1), CREW_OK);
    for (int i = 0; i < 5000 && (c.exercised[ON_START] < 2 || c.exercised[ON_STOP] < 2); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // on_drop, on the thread that cancels: hold every worker (the hooks' resizes are over, and
    // they may have left more than one), queue two triggers in one group, cancel. (Not a pause:
    // on_drop's waits would then wait for the resume.)
    Gate gate;
    int held = gate.hold_each(p, int(crew_size(p))); // per-worker may pick one worker twice
    c.accepted += held;
    crew_task trig[2] = {{trigger_task, &c, 0, 0, {}}, {trigger_task, &c, 0, 0, {}}};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks(p, trig, 2, &g), CREW_OK);
    c.accepted += 2;
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    gate.open();
    c.ran += held; // the gate's tasks
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    EXPECT_GE(c.exercised[TASK].load(), 2);
    EXPECT_GE(c.exercised[ON_START].load(), 2);
    EXPECT_GE(c.exercised[ON_STOP].load(), 2);
    EXPECT_GE(c.exercised[ON_DROP].load(), 1);
    // The rest stop at the shutdown, with submissions refused.
    c.closing = true;
    ASSERT_EQ(crew_destroy(p), CREW_OK);
    check_books(c);
}

TEST(Reentry, OnDropOnAWorkerThatFindsATaskLate) {
    // A task past its start-by time is dropped by the thread that takes it: on_drop runs on a
    // worker, in its loop, and makes every call from there.
    Ctx c(1);
    crew_hooks h = all_hooks(&c);
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.hooks = &h;
    crew_pool *p = make_pool(cfg);
    c.pool = p;
    c.budget[ON_START] = c.budget[ON_STOP] = 0;
    ASSERT_EQ(crew_submit_deadline(p, trigger_task, &c, 0, 0, 1, nullptr), CREW_OK);
    c.accepted++;
    for (int i = 0; i < 5000 && c.exercised[ON_DROP] < 1; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(c.exercised[ON_DROP].load(), 1);
    c.closing = true;
    ASSERT_EQ(crew_destroy(p), CREW_OK);
    check_books(c);
}

TEST(Reentry, OnDropAtACancellingShutdown) {
    Ctx c(1);
    crew_hooks h = all_hooks(&c);
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.hooks = &h;
    crew_pool *p = make_pool(cfg);
    c.pool = p;
    c.budget[ON_START] = c.budget[ON_STOP] = 0;
    Gate gate;
    gate.hold(p, 1);
    c.accepted++;
    ASSERT_EQ(crew_submit(p, trigger_task, &c, 0, nullptr), CREW_OK);
    c.accepted++;
    c.closing = true;
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        gate.open();
    });
    ASSERT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    opener.join();
    c.ran++;
    EXPECT_EQ(c.exercised[ON_DROP].load(), 1);
    ASSERT_EQ(crew_destroy(p), CREW_OK);
    check_books(c);
}

// The first hang: a full CREW_FULL_DROP_OLDEST queue drops A to admit B, and on_drop(A)
// submits A again. The place A held must be free by then.
struct Resubmit {
    crew_pool *p = nullptr;
    std::atomic<int> drops{0}, runs{0};
};
void resubmit_task(void *arg) { static_cast<Resubmit *>(arg)->runs++; }
void resubmit_on_drop(crew_fn fn, void *task_arg, void *arg) {
    auto *r = static_cast<Resubmit *>(arg);
    if (r->drops++ == 0) { // once: submitting every dropped task again would never end
        EXPECT_EQ(crew_submit(r->p, fn, task_arg, 0, nullptr), CREW_OK);
    }
}

TEST(Reentry, OnDropSubmitsIntoTheQueueThatDroppedIt) {
    Resubmit r;
    crew_hooks h{};
    h.size = sizeof h;
    h.on_drop = resubmit_on_drop;
    h.arg = &r;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.queue_capacity = 1;
    cfg.full_policy = CREW_FULL_DROP_OLDEST;
    cfg.hooks = &h;
    crew_pool *p = make_pool(cfg);
    r.p = p;
    ASSERT_EQ(crew_pause(p), CREW_OK);
    ASSERT_EQ(crew_submit(p, resubmit_task, &r, 0, nullptr), CREW_OK); // A
    // B drops A; on_drop submits A again (it drops nothing: the place is free), then B drops
    // that copy of A and is admitted.
    ASSERT_EQ(crew_submit(p, resubmit_task, &r, 0, nullptr), CREW_OK); // B
    EXPECT_EQ(r.drops.load(), 2);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    // The full queue's drops are reported to on_drop (and the groups), not by crew_wait_all,
    // which answers CREW_ECANCELED only after a cancelling shutdown's drops.
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(r.runs.load(), 1);
    ASSERT_EQ(crew_destroy(p), CREW_OK);
}

// The second hang: a worker removed by a shrink submits from on_stop; crew_wait_all and
// crew_destroy must still return.
struct StopSubmit {
    std::atomic<crew_pool *> p{nullptr};
    std::atomic<int> submitted{0}, runs{0};
};
void stop_task(void *arg) { static_cast<StopSubmit *>(arg)->runs++; }
void stop_submit(unsigned, void *arg) {
    auto *s = static_cast<StopSubmit *>(arg);
    crew_pool *p = s->p.load();
    if (p && crew_submit(p, stop_task, s, 0, nullptr) == CREW_OK)
        s->submitted++;
    crew_handle g = CREW_HANDLE_NONE; // a helping wait, too
    if (p && crew_submit(p, stop_task, s, 0, &g) == CREW_OK) {
        s->submitted++;
        EXPECT_EQ(crew_wait(p, g), CREW_OK);
    }
}

TEST(Reentry, OnStopSubmitsAfterAShrink) {
    StopSubmit s;
    crew_hooks h{};
    h.size = sizeof h;
    h.on_stop = stop_submit;
    h.arg = &s;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 3;
    cfg.hooks = &h;
    crew_pool *p = make_pool(cfg);
    s.p = p;
    for (int round = 0; round < 3; round++) {
        ASSERT_EQ(crew_resize(p, 1), CREW_OK);
        for (int i = 0; i < 5000 && s.submitted.load() < 4 * (round + 1); i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        EXPECT_EQ(s.submitted.load(), 4 * (round + 1));
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(s.runs.load(), s.submitted.load());
        ASSERT_EQ(crew_resize(p, 3), CREW_OK);
    }
    s.p = nullptr;
    ASSERT_EQ(crew_destroy(p), CREW_OK);
    EXPECT_EQ(s.runs.load(), s.submitted.load());
}

// on_stop resizing while other threads resize: the resize that reaps a stopped worker must not
// wait for that worker's on_stop, and a shutdown must not either.
std::atomic<crew_pool *> resizing_pool{nullptr};
void stop_resize(unsigned, void *) {
    if (crew_pool *p = resizing_pool.load()) {
        int rc = crew_resize(p, crew_size(p));
        EXPECT_TRUE(rc == CREW_OK || rc == CREW_ESHUTDOWN) << crew_err_name(rc);
    }
}

TEST(Reentry, OnStopResizesWhileThePoolResizesAndShutsDown) {
    crew_hooks h{};
    h.size = sizeof h;
    h.on_stop = stop_resize;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.hooks = &h;
    for (int rep = 0; rep < 5; rep++) {
        crew_pool *p = make_pool(cfg);
        resizing_pool = p;
        for (int i = 0; i < 20; i++)
            ASSERT_EQ(crew_resize(p, 1 + unsigned(i % 4)), CREW_OK);
        ASSERT_EQ(crew_destroy(p), CREW_OK); // its workers' on_stop resize a closing pool
        resizing_pool = nullptr;
    }
}

// C++: the handler of exceptions escaping post() runs inside the task, and may use the pool.
TEST(Reentry, CppOnErrorUsesThePool) {
    crew::options o;
    o.threads = 2;
    crew::pool pool(o);
    std::atomic<int> handled{0}, ran{0};
    std::atomic<int> deadlk{0};
    pool.on_error([&](std::exception_ptr) {
        pool.post([&] { ran++; });
        auto f = pool.submit([] { return 7; }); // not waited for here: get() does not help
        EXPECT_TRUE(f.valid());
        pool.on_error([&](std::exception_ptr) { handled += 100; }); // replaced from inside
        try {
            pool.wait(); // the handler runs in the task: waiting for all would wait for itself
        } catch (const crew::error &e) {
            if (e.code() == CREW_EDEADLK)
                deadlk++;
        }
        EXPECT_GE(pool.size(), 1u);
        handled++;
    });
    pool.post([] { throw std::runtime_error("first"); });
    pool.wait();
    EXPECT_EQ(handled.load(), 1);
    EXPECT_EQ(deadlk.load(), 1);
    EXPECT_EQ(ran.load(), 1);
    pool.post([] { throw std::runtime_error("second"); }); // goes to the replaced handler
    pool.wait();
    EXPECT_EQ(handled.load(), 101);
}

} // namespace

namespace {
// Waits for blocking tasks made on the blocking threads themselves, with max_blocking = 1: the
// waiting thread runs them (no other blocking thread may start).
std::atomic<crew_pool *> bpool{nullptr};
std::atomic<int> bran{0}, bwaits_ok{0};
void bleaf(void *) { bran++; }
void wait_for_a_blocking_task() {
    crew_pool *p = bpool.load();
    crew_handle g = CREW_HANDLE_NONE;
    if (p && crew_submit_ex(p, bleaf, nullptr, 0, CREW_TASK_BLOCKING, &g) == CREW_OK &&
        crew_wait(p, g) == CREW_OK)
        bwaits_ok++;
}
void bbody(void *) {
    bran++;
    wait_for_a_blocking_task();
}
void bstart(unsigned index, void *) {
    if (index >= CREW_MAX_THREADS && bpool.load()) { // a blocking thread, in on_start
        EXPECT_EQ(crew_wait_all(bpool.load()), CREW_OK);
        bwaits_ok++;
    }
}
void bdrop(crew_fn, void *, void *) { wait_for_a_blocking_task(); }
} // namespace

TEST(Reentry, BlockingThreadsWaitForBlockingTasks) {
    crew_hooks h{};
    h.size = sizeof h;
    h.on_start = bstart;
    h.on_drop = bdrop;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.max_blocking = 1;
    cfg.hooks = &h;
    for (int mode = 0; mode < 3; mode++) {
        bran = 0;
        bwaits_ok = 0;
        crew_pool *p = make_pool(cfg);
        bpool = p;
        if (mode == 0) // a blocking task's body waits for another blocking task
            ASSERT_EQ(crew_submit_ex(p, bbody, nullptr, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
        else if (mode == 1) // on_drop of a late blocking task, on the blocking thread, waits
            ASSERT_EQ(crew_submit_deadline(p, bleaf, nullptr, 0, CREW_TASK_BLOCKING, 1, nullptr),
                      CREW_OK);
        else // on_start of the blocking thread waits for the task it was started for
            ASSERT_EQ(crew_submit_ex(p, bleaf, nullptr, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
        EXPECT_EQ(crew_wait_all(p), CREW_OK) << "mode " << mode;
        bpool = nullptr;
        ASSERT_EQ(crew_destroy(p), CREW_OK);
        // on_start's wait (every mode), and the body's or on_drop's (modes 0 and 1).
        EXPECT_EQ(bwaits_ok.load(), mode == 2 ? 1 : 2) << "mode " << mode;
        EXPECT_EQ(bran.load(), mode == 0 ? 2 : 1) << "mode " << mode;
    }
}
