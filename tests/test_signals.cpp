// test_signals.cpp -- waits survive signals. A no-op SIGUSR1 handler is installed without
// SA_RESTART, so every interruptible system call of a signalled thread fails with EINTR, and a
// bombarder thread sends SIGUSR1 every ~100 us to each thread that is waiting: a thread in
// crew_wait, in crew_wait_all, in crew_enqueue_tasks_wait, in crew_submit on a full bounded queue
// (CREW_FULL_BLOCK) and in crew_submit_timed, and every thread of the pool (workers and blocking
// threads, found through crew_config.hooks), also while they sleep idle; now and then one goes
// to the whole process too. crew's threads block every signal, so on_start unblocks SIGUSR1 on
// them (IdleWorkers also checks crew's own mask: they handle none). Checked: every wait returns
// CREW_OK, and not early (not while a task it waits for is still held back, and with every task
// done when it returns); every task runs exactly once; a timed submission answers
// CREW_ETIMEDOUT only after its time-out, and CREW_OK when room comes in time. Each waiting
// caller is held until it has handled kMinHits signals inside the call, and the pool's threads
// must have handled some, so the test cannot pass by not interrupting anything.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "common.h"

using crewtest::Gate;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// ---- signals ----------------------------------------------------------------------------------

std::atomic<long> g_hits{0};   // signals handled, all threads
thread_local long t_hits = 0;  // signals this thread handled (static TLS: safe in a handler)
thread_local std::atomic<long> *t_live = nullptr; // a Waiter's count, readable by other threads

void on_usr1(int) {
    t_hits++;
    if (t_live)
        t_live->fetch_add(1, std::memory_order_relaxed); // lock-free: safe in a handler
    g_hits.fetch_add(1, std::memory_order_relaxed);
}

// The threads to signal. Each thread adds and removes itself (the waiters below, and the pool's
// threads through the hooks), removing itself before it exits: the bombarder sends under the
// same lock, so it never signals a thread that is gone.
class Targets {
public:
    void add() {
        std::lock_guard<std::mutex> g(m_);
        v_.push_back(pthread_self());
    }
    void remove() {
        std::lock_guard<std::mutex> g(m_);
        auto it = std::find_if(v_.begin(), v_.end(),
                               [](pthread_t t) { return pthread_equal(t, pthread_self()); });
        if (it != v_.end())
            v_.erase(it);
    }
    void signal_all() {
        std::lock_guard<std::mutex> g(m_);
        for (pthread_t t : v_)
            pthread_kill(t, SIGUSR1);
    }

private:
    std::mutex m_;
    std::vector<pthread_t> v_;
};

Targets targets;
std::atomic<long> pool_thread_hits{0}; // signals the pool's threads handled, summed by on_stop
std::atomic<int> pool_threads_stopped{0};
std::atomic<long> waiter_hits{0};      // signals the Waiter threads below handled

// crew's threads block every signal (docs/design.md), so a signal sent to one stays pending and
// its sleeps are never interrupted. A program may unblock signals in on_start; the tests do that
// for SIGUSR1 unless told not to, so the pool's own waits face EINTR as well.
std::atomic<bool> unblock_in_pool{true};

void hook_start(unsigned, void *) {
    t_hits = 0;
    if (unblock_in_pool) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGUSR1);
        pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
    }
    targets.add();
}
void hook_stop(unsigned, void *) {
    targets.remove();
    pool_thread_hits += t_hits;
    pool_threads_stopped++;
}
const crew_hooks hooks = {sizeof(crew_hooks), hook_start, hook_stop, nullptr, nullptr, 0, nullptr};

// Sends SIGUSR1 to every target every ~100 us, and every 16th round to the process, while it
// lives.
class Bombarder {
public:
    Bombarder()
        : th_([this] {
              for (unsigned round = 1; !stop_.load(); round++) {
                  targets.signal_all();
                  if (round % 16 == 0)
                      kill(getpid(), SIGUSR1);
                  std::this_thread::sleep_for(100us);
              }
          }) {}
    ~Bombarder() {
        stop_ = true;
        th_.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::thread th_;
};

// A thread that runs fn (a call that waits) while it is a target, and records fn's result, how
// long it took and how many signals it received; done() says whether it has returned.
class Waiter {
public:
    template <class F>
    explicit Waiter(F fn)
        : th_([this, fn] {
              targets.add();
              t_live = &hits_; // counts the signals that come during fn
              auto t0 = Clock::now();
              int rc = fn();
              took_ = Clock::now() - t0;
              t_live = nullptr;
              targets.remove();
              waiter_hits += hits_.load();
              rc_ = rc;
              done_ = true;
          }) {}
    ~Waiter() {
        if (th_.joinable())
            th_.join();
    }
    bool done() const { return done_.load(); }
    int join() {
        th_.join();
        return rc_;
    }
    long hits() const { return hits_.load(); }
    Clock::duration took() const { return took_; }

private:
    std::atomic<bool> done_{false};
    std::atomic<long> hits_{0};
    int rc_ = 1;
    Clock::duration took_{};
    std::thread th_;
};

// How long the waits are held back under fire before their tasks may finish: at least kHold,
// and until each waiter has handled kMinHits signals inside its call (a loaded machine, or
// valgrind, may start a thread late), 60 s at most.
const auto kHold = 200ms;
const long kMinHits = 20;

void hold_under_fire(std::initializer_list<const Waiter *> ws) {
    std::this_thread::sleep_for(kHold);
    auto until = Clock::now() + 60s;
    for (const Waiter *w : ws)
        while (w->hits() < kMinHits && !w->done() && Clock::now() < until)
            std::this_thread::sleep_for(1ms);
    for (const Waiter *w : ws)
        EXPECT_GE(w->hits(), kMinHits) << "a waiter was hardly signalled";
}

// Installed once per test, never restored: a signal still pending when the handler went back to
// SIG_DFL would end the process.
class Signals : public ::testing::Test {
protected:
    void SetUp() override {
        struct sigaction sa {};
        sa.sa_handler = on_usr1;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0; // no SA_RESTART: interrupted system calls return EINTR
        ASSERT_EQ(sigaction(SIGUSR1, &sa, nullptr), 0);
        pool_thread_hits = 0;
        pool_threads_stopped = 0;
        waiter_hits = 0;
        unblock_in_pool = true;
    }
};

// ---- tasks ------------------------------------------------------------------------------------

// Each task has a record; a task marks it when it finishes.
struct Rec {
    std::atomic<int> runs{0};
};

// Sleeps ~50 ms (nanosleep, cut short by every signal; sleep_for sleeps on for the rest).
void sleepy(void *arg) {
    std::this_thread::sleep_for(50ms);
    static_cast<Rec *>(arg)->runs++;
}

void bump(void *arg) { static_cast<Rec *>(arg)->runs++; }

// Holds the thread that runs it until the gate opens: the wait it belongs to cannot end before.
struct Held {
    Gate gate;
    Rec rec;
    static void run(void *arg) {
        auto *h = static_cast<Held *>(arg);
        h->gate.arrive();
        h->gate.wait();
        h->rec.runs++;
    }
};

struct Recs {
    std::vector<std::unique_ptr<Rec>> v;
    Rec *add() {
        v.push_back(std::make_unique<Rec>());
        return v.back().get();
    }
    int finished() const {
        int n = 0;
        for (auto &r : v)
            n += r->runs.load() > 0;
        return n;
    }
    void expect_each_ran_once() const {
        for (size_t i = 0; i < v.size(); i++)
            EXPECT_EQ(v[i]->runs.load(), 1) << "task " << i;
    }
};

std::vector<crew_task> tasks_of(Recs &recs, int n, crew_fn fn) {
    std::vector<crew_task> t(n);
    for (auto &x : t)
        x = crew_task{}, x.fn = fn, x.arg = recs.add();
    return t;
}

crew_pool *make_pool(unsigned threads, unsigned spin = 64) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.spin = spin;
    cfg.max_blocking = 2;
    cfg.hooks = &hooks;
    return crewtest::make_pool(cfg);
}

// After crew_destroy: the pool's threads were signalled too. Prints the counts.
void expect_pool_threads_signalled() {
    EXPECT_GT(pool_threads_stopped.load(), 0);
    EXPECT_GT(pool_thread_hits.load(), 0) << "no pool thread received a signal";
    std::printf("[ signals  ] handled: %ld by the waiting callers, %ld by %d pool threads\n",
                waiter_hits.load(), pool_thread_hits.load(), pool_threads_stopped.load());
}

} // namespace

// (a) crew_wait on a group whose tasks sleep, held open by a blocking task (waiters never run
// blocking tasks, so the waiter's own sleep is the one interrupted).
TEST_F(Signals, WaitOnAGroup) {
    crew_pool *p = make_pool(2);
    Recs recs;
    Held held;
    crew_task ht{};
    ht.fn = Held::run, ht.arg = &held;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks_ex(p, &ht, 1, &g, CREW_TASK_BLOCKING), CREW_OK);
    auto normal = tasks_of(recs, 8, sleepy);
    auto blocking = tasks_of(recs, 4, sleepy);
    ASSERT_EQ(crew_enqueue_tasks(p, normal.data(), normal.size(), &g), CREW_OK);
    ASSERT_EQ(crew_enqueue_tasks_ex(p, blocking.data(), blocking.size(), &g, CREW_TASK_BLOCKING),
              CREW_OK);
    std::atomic<int> finished_at_return{-1};
    {
        Bombarder b;
        Waiter w([&] {
            int rc = crew_wait(p, g);
            finished_at_return = recs.finished() + held.rec.runs.load();
            return rc;
        });
        held.gate.wait_arrivals(1);
        hold_under_fire({&w});
        EXPECT_FALSE(w.done()) << "crew_wait returned while a task of its group was held";
        held.gate.open();
        EXPECT_EQ(w.join(), CREW_OK);
        EXPECT_EQ(finished_at_return.load(), 13) << "crew_wait returned before its tasks ended";
    }
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    recs.expect_each_ran_once();
    EXPECT_EQ(held.rec.runs.load(), 1);
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    expect_pool_threads_signalled();
}

// (b) crew_wait_all over several groups, ungrouped tasks and blocking tasks.
TEST_F(Signals, WaitAll) {
    crew_pool *p = make_pool(2);
    Recs recs;
    Held held;
    ASSERT_EQ(crew_submit_ex(p, Held::run, &held, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
    std::vector<std::vector<crew_task>> batches;
    for (int k = 0; k < 3; k++) {
        batches.push_back(tasks_of(recs, 4, sleepy));
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_enqueue_tasks(p, batches.back().data(), 4, &g), CREW_OK);
    }
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(crew_submit(p, sleepy, recs.add(), uint32_t(i % 2), nullptr), CREW_OK);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(crew_submit_ex(p, sleepy, recs.add(), 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
    std::atomic<int> finished_at_return{-1};
    {
        Bombarder b;
        Waiter w([&] {
            int rc = crew_wait_all(p);
            finished_at_return = recs.finished() + held.rec.runs.load();
            return rc;
        });
        held.gate.wait_arrivals(1);
        hold_under_fire({&w});
        EXPECT_FALSE(w.done()) << "crew_wait_all returned while a task was held";
        held.gate.open();
        EXPECT_EQ(w.join(), CREW_OK);
        EXPECT_EQ(finished_at_return.load(), 20) << "crew_wait_all returned before its tasks ended";
    }
    recs.expect_each_ran_once();
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    expect_pool_threads_signalled();
}

// (c) crew_enqueue_tasks_wait: the caller helps (its own sleeps are interrupted too), and one
// of its tasks is held, by whichever thread takes it.
TEST_F(Signals, EnqueueTasksWait) {
    crew_pool *p = make_pool(2);
    Recs recs;
    Held held;
    auto t = tasks_of(recs, 8, sleepy);
    crew_task ht{};
    ht.fn = Held::run, ht.arg = &held;
    t.insert(t.begin() + 4, ht);
    std::atomic<int> finished_at_return{-1};
    {
        Bombarder b;
        Waiter w([&] {
            int rc = crew_enqueue_tasks_wait(p, t.data(), t.size());
            finished_at_return = recs.finished() + held.rec.runs.load();
            return rc;
        });
        held.gate.wait_arrivals(1);
        hold_under_fire({&w});
        EXPECT_FALSE(w.done()) << "crew_enqueue_tasks_wait returned while a task was held";
        held.gate.open();
        EXPECT_EQ(w.join(), CREW_OK);
        EXPECT_EQ(finished_at_return.load(), 9)
            << "crew_enqueue_tasks_wait returned before its tasks ended";
    }
    recs.expect_each_ran_once();
    EXPECT_EQ(held.rec.runs.load(), 1);
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    expect_pool_threads_signalled();
}

// (d) crew_submit and crew_submit_timed blocked on a full bounded queue (CREW_FULL_BLOCK).
TEST_F(Signals, SubmitToAFullQueue) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.queue_capacity = 2;
    cfg.full_policy = CREW_FULL_BLOCK;
    cfg.hooks = &hooks;
    crew_pool *p = crewtest::make_pool(cfg);
    Recs recs;
    Bombarder b;

    // Hold the only worker; two tasks fill the queue.
    auto fill = [&](Held &held) {
        ASSERT_EQ(crew_submit(p, Held::run, &held, 0, nullptr), CREW_OK);
        held.gate.wait_arrivals(1);
        for (int i = 0; i < 2; i++)
            ASSERT_EQ(crew_try_submit(p, bump, recs.add(), 0, nullptr), CREW_OK);
        ASSERT_EQ(crew_try_submit(p, bump, recs.add(), 0, nullptr), CREW_EFULL);
        recs.v.pop_back(); // refused: not a task
    };

    // crew_submit waits for room, however often it is interrupted.
    {
        Held held;
        fill(held);
        Rec *r1 = recs.add(), *r2 = recs.add();
        Waiter w1([&] { return crew_submit(p, bump, r1, 0, nullptr); });
        Waiter w2([&] { return crew_submit(p, bump, r2, 1, nullptr); });
        hold_under_fire({&w1, &w2});
        EXPECT_FALSE(w1.done()) << "crew_submit returned while the queue was full";
        EXPECT_FALSE(w2.done()) << "crew_submit returned while the queue was full";
        held.gate.open();
        EXPECT_EQ(w1.join(), CREW_OK);
        EXPECT_EQ(w2.join(), CREW_OK);
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(held.rec.runs.load(), 1);
    }

    // crew_submit_timed gives up with CREW_ETIMEDOUT, after its time-out, not before: every
    // attempt is checked, and tried again (5 times at most) until one was signalled kMinHits
    // times while it waited.
    {
        Held held;
        fill(held);
        Rec refused;
        const auto timeout = 300ms;
        long most = 0;
        for (int attempt = 0; attempt < 5 && most < kMinHits; attempt++) {
            Waiter w([&] {
                return crew_submit_timed(p, bump, &refused, 0, nullptr, unsigned(timeout.count()));
            });
            EXPECT_EQ(w.join(), CREW_ETIMEDOUT);
            EXPECT_GE(w.took(), timeout) << "crew_submit_timed gave up before its time-out";
            most = std::max(most, w.hits());
        }
        EXPECT_GE(most, kMinHits) << "crew_submit_timed was hardly signalled";
        held.gate.open();
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(refused.runs.load(), 0) << "a timed-out submission ran";
    }

    // ... and answers CREW_OK when room comes within its time-out.
    {
        Held held;
        fill(held);
        Rec *r = recs.add();
        std::atomic<bool> opened{false};
        std::atomic<bool> opened_at_return{false};
        Waiter w([&] {
            int rc = crew_submit_timed(p, bump, r, 0, nullptr, 60000);
            opened_at_return = opened.load();
            return rc;
        });
        hold_under_fire({&w});
        EXPECT_FALSE(w.done()) << "crew_submit_timed returned while the queue was full";
        opened = true;
        held.gate.open();
        EXPECT_EQ(w.join(), CREW_OK);
        EXPECT_TRUE(opened_at_return.load()) << "crew_submit_timed returned before there was room";
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
    }
    recs.expect_each_ran_once();
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    expect_pool_threads_signalled();
}

// (e) The pool's own threads, signalled while they sleep idle (workers with spin 0 and with the
// default spin, and a blocking thread), keep working: what comes afterwards runs exactly once,
// and no worker is lost. With SIGUSR1 unblocked in on_start they handle the signals; with the
// mask crew gives them, they handle none (the signals stay pending).
TEST_F(Signals, IdleWorkers) {
    for (bool unblock : {true, false})
        for (unsigned spin : {0u, 64u}) {
            SCOPED_TRACE(std::string(unblock ? "unblocked" : "crew's mask") + ", spin " +
                         std::to_string(spin));
            unblock_in_pool = unblock;
            pool_thread_hits = 0;
            pool_threads_stopped = 0;
            crew_pool *p = make_pool(3, spin);
            Recs recs;
            ASSERT_EQ(crew_submit_ex(p, bump, recs.add(), 0, CREW_TASK_BLOCKING, nullptr),
                      CREW_OK);
            ASSERT_EQ(crew_wait_all(p), CREW_OK); // a blocking thread now idles too
            long before = g_hits.load();
            {
                Bombarder b;
                for (int round = 0; round < 3; round++) {
                    std::this_thread::sleep_for(kHold / 2); // everyone idle under fire
                    std::vector<crew_task> t = tasks_of(recs, int(crewtest::scaled(1000)), bump);
                    crew_handle g = CREW_HANDLE_NONE;
                    ASSERT_EQ(crew_enqueue_tasks(p, t.data(), t.size(), &g), CREW_OK);
                    for (int i = 0; i < 50; i++)
                        ASSERT_EQ(crew_submit(p, bump, recs.add(), uint32_t(i % 3), nullptr),
                                  CREW_OK);
                    ASSERT_EQ(
                        crew_submit_ex(p, sleepy, recs.add(), 0, CREW_TASK_BLOCKING, nullptr),
                        CREW_OK);
                    ASSERT_EQ(crew_wait(p, g), CREW_OK);
                    ASSERT_EQ(crew_wait_all(p), CREW_OK);
                    EXPECT_EQ(recs.finished(), int(recs.v.size())) << "round " << round;
                }
            }
            EXPECT_GT(g_hits.load(), before);
            // Counted from /proc/self/task, whose listing can skip a live thread when another
            // exits meanwhile (an idle blocking thread may retire now): looked at again, up to
            // a second, before a missing worker counts as lost.
            int workers = 0;
            std::string all; // for the message: every thread's name
            for (int look = 0; look < 100 && workers != 3; look++) {
                if (look)
                    std::this_thread::sleep_for(10ms);
                workers = 0;
                all.clear();
                for (auto &name : crewtest::thread_names()) {
                    workers += name.find("-w") != std::string::npos;
                    all += " '" + name + "'";
                }
            }
            EXPECT_EQ(workers, 3) << "a worker was lost; the threads:" << all;
            recs.expect_each_ran_once();
            EXPECT_EQ(crew_destroy(p), CREW_OK);
            EXPECT_GE(pool_threads_stopped.load(), 4); // 3 workers, 1 or 2 blocking threads
            if (unblock)
                EXPECT_GT(pool_thread_hits.load(), 0) << "no pool thread received a signal";
            else
                EXPECT_EQ(pool_thread_hits.load(), 0) << "a pool thread ran a signal handler";
        }
}
