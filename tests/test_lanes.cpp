// test_lanes.cpp -- lanes (crew_lane_*): submission order and the concurrency bound under many
// producers; lanes across crew_resize, crew_pause and crew_cancel; groups and statistics;
// many idle lanes; shutdown with tasks waiting in lanes, and submissions racing the shutdown;
// crew_lane_destroy from tasks; bad input; crew::lane; barriers (crew_lane_barrier): readers and
// writers, strands, cancellation, shutdown, pause.
#include <gtest/gtest.h>

#include <malloc.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::bump;
using crewtest::Gate;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

void noop(void *) {}

// ---- Order and the concurrency bound --------------------------------------------------------

// One lane's observations: how many of its tasks run now and at most; the order in which each
// producer's tasks started (a strand records it exactly).
struct Observed {
    unsigned bound = 1;
    std::atomic<unsigned> running{0};
    std::atomic<unsigned> peak{0};
    std::atomic<long> runs{0};
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::vector<long>> order; // per producer, the sequence numbers as they started
    std::atomic<bool> overlap_seen{false};
};

struct Item {
    Observed *o;
    int producer;
    long seq;
};

void observe(void *arg) {
    Item *it = static_cast<Item *>(arg);
    Observed *o = it->o;
    unsigned now = o->running.fetch_add(1) + 1;
    unsigned peak = o->peak.load();
    while (now > peak && !o->peak.compare_exchange_weak(peak, now)) {
    }
    {
        std::unique_lock<std::mutex> g(o->m);
        o->order[size_t(it->producer)].push_back(it->seq);
        if (now >= 2) {
            o->overlap_seen = true;
            o->cv.notify_all();
        }
        // The lane's first tasks wait (bounded) for a second one to run alongside, so that a
        // lane with room for two is seen running two; a strand never gets one, so it skips.
        if (o->bound >= 2 && !o->overlap_seen && it->seq < 4)
            o->cv.wait_for(g, std::chrono::seconds(5), [&] { return o->overlap_seen.load(); });
    }
    o->runs.fetch_add(1);
    o->running.fetch_sub(1);
}

class LaneBound : public ::testing::TestWithParam<unsigned> {};

TEST_P(LaneBound, OrderAndBoundUnderManyProducers) {
    const unsigned bound = GetParam();
    const int producers = 4;
    const long per = scaled(3000);
    crew_pool *p = make_pool(4);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, bound, &l), CREW_OK);
    Observed o;
    o.bound = bound;
    o.order.resize(producers);
    std::vector<std::vector<Item>> items(producers);
    for (int k = 0; k < producers; k++)
        for (long i = 0; i < per; i++)
            items[size_t(k)].push_back({&o, k, i});
    std::vector<std::thread> threads;
    for (int k = 0; k < producers; k++)
        threads.emplace_back([&, k] {
            for (long i = 0; i < per; i++) {
                ASSERT_EQ(crew_lane_submit(l, observe, &items[size_t(k)][size_t(i)], nullptr),
                          CREW_OK);
            }
        });
    for (auto &t : threads)
        t.join();
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK); // waits for the lane's tasks
    EXPECT_EQ(o.runs.load(), producers * per);
    EXPECT_LE(o.peak.load(), bound) << "more tasks of the lane ran at once than its bound";
    if (bound >= 2)
        EXPECT_GE(o.peak.load(), 2u) << "a lane with room for " << bound << " never ran two";
    else
        EXPECT_EQ(o.peak.load(), 1u);
    for (int k = 0; k < producers; k++) {
        const auto &seq = o.order[size_t(k)];
        ASSERT_EQ(seq.size(), size_t(per));
        if (bound == 1) { // a strand: each task starts after the previous one ended
            for (long i = 0; i < per; i++)
                ASSERT_EQ(seq[size_t(i)], i) << "producer " << k << ": out of order";
        }
    }
    crew_destroy(p);
}

INSTANTIATE_TEST_SUITE_P(Lanes, LaneBound, ::testing::Values(1u, 2u, 8u));

// Lanes that start tasks in submission order even when each task is short and their runners
// keep stepping back behind other work (more tasks than a runner's batch), with plain tasks and
// other lanes competing for the same pool.
struct Strand {
    crew_lane *l = nullptr;
    std::atomic<long> next{0};
    std::atomic<long> errors{0};
    std::atomic<unsigned> inside{0};
};
struct StrandItem {
    Strand *s;
    long seq;
};
void strand_step(void *arg) {
    auto *it = static_cast<StrandItem *>(arg);
    if (it->s->inside.fetch_add(1) != 0)
        it->s->errors++;
    if (it->s->next.load() != it->seq)
        it->s->errors++;
    it->s->next.store(it->seq + 1);
    it->s->inside.fetch_sub(1);
}

TEST(Lanes, ManyStrandsKeepTheirOrderAmongOtherWork) {
    crew_pool *p = make_pool(3);
    const int nlanes = 16;
    const long per = scaled(400);
    std::vector<Strand> lanes(nlanes);
    std::vector<std::vector<StrandItem>> items(nlanes);
    for (int k = 0; k < nlanes; k++) {
        ASSERT_EQ(crew_lane_create(p, 1, &lanes[size_t(k)].l), CREW_OK);
        for (long i = 0; i < per; i++)
            items[size_t(k)].push_back({&lanes[size_t(k)], i});
    }
    std::atomic<long> plain{0};
    for (long i = 0; i < per; i++)
        for (int k = 0; k < nlanes; k++) {
            ASSERT_EQ(crew_lane_submit(lanes[size_t(k)].l, strand_step,
                                       &items[size_t(k)][size_t(i)], nullptr),
                      CREW_OK);
            if (k == 0) {
                ASSERT_EQ(crew_submit(p, bump, &plain, 0, nullptr), CREW_OK);
            }
        }
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    for (auto &s : lanes) {
        EXPECT_EQ(s.next.load(), per);
        EXPECT_EQ(s.errors.load(), 0);
        EXPECT_EQ(crew_lane_destroy(s.l), CREW_OK);
    }
    EXPECT_EQ(plain.load(), per);
    crew_destroy(p);
}

// The lane goes idle and busy again over and over (each round waits for its task), from two
// threads at once: a task that arrives as the last runner leaves must never be stranded (the
// group's crew_wait would then never return).
TEST(Lanes, IdleAndBusyAgainNeverStrandsATask) {
    crew_pool *p = make_pool(2);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::atomic<long> runs{0};
    const long rounds = scaled(3000);
    auto producer = [&] {
        for (long i = 0; i < rounds; i++) {
            crew_handle g = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_OK);
            ASSERT_EQ(crew_wait(p, g), CREW_OK);
        }
    };
    std::thread a(producer), b(producer);
    a.join();
    b.join();
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(runs.load(), 2 * rounds);
    crew_destroy(p);
}

// A strand's task that submits to its own strand: the new task runs after it, in order.
struct Chain {
    crew_lane *l;
    std::atomic<long> depth{0};
    std::atomic<long> errors{0};
    std::atomic<bool> running{false};
};
void chain_step(void *arg) {
    auto *c = static_cast<Chain *>(arg);
    if (c->running.exchange(true))
        c->errors++;
    long d = c->depth.fetch_add(1);
    if (d < 200 && crew_lane_submit(c->l, chain_step, c, nullptr) != CREW_OK)
        c->errors++;
    c->running = false;
}

TEST(Lanes, ATaskSubmitsToItsOwnStrand) {
    crew_pool *p = make_pool(2);
    Chain c;
    ASSERT_EQ(crew_lane_create(p, 1, &c.l), CREW_OK);
    ASSERT_EQ(crew_lane_submit(c.l, chain_step, &c, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK); // counts tasks still in the lane
    EXPECT_EQ(c.depth.load(), 201);
    EXPECT_EQ(c.errors.load(), 0);
    ASSERT_EQ(crew_lane_destroy(c.l), CREW_OK);
    crew_destroy(p);
}

// ---- Resize, pause, cancel, groups, statistics -----------------------------------------------

TEST(Lanes, SurvivesResize) {
    crew_pool *p = make_pool(3);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 2, &l), CREW_OK);
    std::atomic<long> runs{0};
    const long n = scaled(4000);
    std::thread resizer([&] {
        for (unsigned i = 0; i < 20; i++)
            ASSERT_EQ(crew_resize(p, 1 + i % 4), CREW_OK);
    });
    for (long i = 0; i < n; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK);
    resizer.join();
    ASSERT_EQ(crew_resize(p, 1), CREW_OK);
    for (long i = 0; i < n; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(runs.load(), 2 * n);
    crew_destroy(p);
}

TEST(Lanes, PausedPoolStartsNoLaneTaskUntilResumed) {
    crew_pool *p = make_pool(2);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::atomic<long> before{0}, after{0};
    // A lane in full flow when the pause comes: its runner runs the gate's task, and must step
    // back between two tasks rather than go on with those submitted after crew_pause.
    Gate gate;
    ASSERT_EQ(crew_lane_submit(l, Gate::block, &gate, nullptr), CREW_OK);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &before, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &after, nullptr), CREW_OK);
    // A lane that starts while paused.
    crew_lane *l2 = nullptr;
    ASSERT_EQ(crew_lane_create(p, 4, &l2), CREW_OK);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(crew_lane_submit(l2, bump, &after, nullptr), CREW_OK);
    gate.open(); // the running task ends
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(after.load(), 0) << "a lane task submitted after crew_pause started";
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l2), CREW_OK);
    EXPECT_EQ(before.load(), 3);
    EXPECT_EQ(after.load(), 100);
    crew_destroy(p);
}

void reader(void *arg); // a barrier test's plain task (below)

struct DropLog {
    std::atomic<long> dropped{0}; // the lanes' tasks (bump) dropped
    std::atomic<long> readers{0}; // the barrier tests' readers dropped
    std::atomic<long> plain{0};   // anything else but noop (a runner must never show up here)
};
void on_drop(crew_fn fn, void *, void *arg) {
    auto *d = static_cast<DropLog *>(arg);
    if (fn == bump)
        d->dropped++;
    else if (fn == reader)
        d->readers++;
    else if (fn != noop)
        d->plain++;
}

crew_pool *pool_with_drop_log(unsigned threads, DropLog *log) {
    return crewtest::make_pool_on_drop(threads, on_drop, log);
}

TEST(Lanes, CancelledGroupDropsItsLaneTasksAndTheLaneGoesOn) {
    DropLog log;
    crew_pool *p = pool_with_drop_log(2, &log);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    Gate gate;
    std::atomic<long> runs{0}, other{0};
    ASSERT_EQ(crew_lane_submit(l, Gate::block, &gate, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    crew_handle g = CREW_HANDLE_NONE, keep = CREW_HANDLE_NONE;
    for (int i = 0; i < 20; i++) {
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_OK);
        ASSERT_EQ(crew_lane_submit(l, bump, &other, &keep), CREW_OK);
    }
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    EXPECT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_ECANCELED);
    gate.open();
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED); // counted from crew_lane_submit on
    EXPECT_EQ(crew_wait(p, keep), CREW_OK);
    EXPECT_EQ(runs.load(), 0);
    EXPECT_EQ(other.load(), 20);
    EXPECT_EQ(log.dropped.load(), 20);
    EXPECT_EQ(log.plain.load(), 0) << "on_drop saw something other than the lane's tasks";
    // The lane goes on.
    ASSERT_EQ(crew_lane_submit(l, bump, &other, nullptr), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(other.load(), 21);
    crew_destroy(p);
}

TEST(Lanes, GroupWaitsForTasksStillInTheLaneAndStatisticsCountThem) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.monitoring = 1;
    crew_pool *p = make_pool(cfg);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::atomic<long> runs{0};
    const long n = 100;
    // The group's tasks wait in the lane behind a held task (the group cannot finish early).
    Gate gate;
    ASSERT_EQ(crew_lane_submit(l, Gate::block, &gate, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    crew_handle g = CREW_HANDLE_NONE;
    for (long i = 0; i < n; i++)
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_OK);
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        gate.open();
    });
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(runs.load(), n) << "crew_wait returned before the group's lane tasks ran";
    opener.join();
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_stats s;
    s.size = sizeof s;
    ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(s.submitted, uint64_t(n + 1)); // the lane's tasks, not its runners
    EXPECT_EQ(s.completed, uint64_t(n + 1));
    crew_destroy(p);
}

// ---- Many lanes ----------------------------------------------------------------------------

TEST(Lanes, HundredThousandLanes) {
    crew_pool *p = make_pool(2);
    const long n = scaled(100000);
    std::vector<crew_lane *> lanes(size_t(n), nullptr);
    struct mallinfo2 before = mallinfo2();
    for (auto &l : lanes)
        ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    struct mallinfo2 after = mallinfo2();
    double per_lane = double(after.uordblks - before.uordblks) / double(n);
    std::printf("[ info ] %ld idle lanes: %.1f bytes of heap each\n", n, per_lane);
    RecordProperty("bytes_per_idle_lane", std::to_string(per_lane));
    EXPECT_LE(per_lane, 128.0) << "an idle lane should cost a few dozen bytes";
    std::atomic<long> runs{0};
    for (auto l : lanes)
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK);
    for (auto l : lanes)
        ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(runs.load(), n);
    crew_destroy(p);
}

// ---- Shutdown with tasks waiting in lanes ----------------------------------------------------

// Lanes full of tasks behind workers held at a gate, then a shutdown; every task ran or was
// reported as dropped (on_drop, and its group's crew_wait).
void shutdown_with_full_lanes(int how) {
    DropLog log;
    crew_pool *p = pool_with_drop_log(2, &log);
    Gate gate;
    gate.hold(p, 2);
    const int nlanes = 50, per = 20;
    std::vector<crew_lane *> lanes(nlanes, nullptr);
    std::vector<crew_handle> groups(nlanes, CREW_HANDLE_NONE);
    std::atomic<long> runs{0};
    for (int k = 0; k < nlanes; k++) {
        ASSERT_EQ(crew_lane_create(p, k % 3 + 1, &lanes[size_t(k)]), CREW_OK);
        for (int i = 0; i < per; i++)
            ASSERT_EQ(crew_lane_submit(lanes[size_t(k)], bump, &runs, &groups[size_t(k)]),
                      CREW_OK);
    }
    std::thread closer([&] { EXPECT_EQ(crew_shutdown(p, how), CREW_OK); });
    // Open the gate once the shutdown has begun (submissions refused).
    while (crew_submit(p, noop, nullptr, 0, nullptr) == CREW_OK)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(crew_lane_submit(lanes[0], bump, &runs, nullptr), CREW_ESHUTDOWN);
    gate.open();
    closer.join();
    const long total = long(nlanes) * per;
    EXPECT_EQ(log.plain.load(), 0) << "on_drop saw something other than the tasks submitted";
    EXPECT_EQ(runs.load() + log.dropped.load(), total)
        << "a lane task was neither run nor reported";
    if (how == CREW_DRAIN) {
        EXPECT_EQ(runs.load(), total);
        EXPECT_EQ(log.dropped.load(), 0);
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
    } else {
        EXPECT_GT(log.dropped.load(), 0);
        EXPECT_EQ(crew_wait_all(p), CREW_ECANCELED); // the shutdown dropped lane tasks
    }
    for (int k = 0; k < nlanes; k++) {
        int rc = crew_wait(p, groups[size_t(k)]);
        EXPECT_TRUE(rc == CREW_OK || (how == CREW_CANCEL && rc == CREW_ECANCELED)) << rc;
        EXPECT_EQ(crew_lane_destroy(lanes[size_t(k)]), CREW_OK); // after shutdown: at once
    }
    crew_destroy(p);
}

TEST(Lanes, DrainingShutdownRunsTheTasksInLanes) { shutdown_with_full_lanes(CREW_DRAIN); }
TEST(Lanes, CancellingShutdownDropsTheTasksInLanes) { shutdown_with_full_lanes(CREW_CANCEL); }

// ---- crew_lane_submit racing crew_shutdown ---------------------------------------------------

// Producers call crew_lane_submit while crew_shutdown (cancelling or draining) runs, round after
// round, each round on a new pool. A submission that adds a task to a lane with room for another
// runner queues a new runner; however the shutdown falls, that runner must be run or dropped,
// giving its place in the lane's count back, or crew_lane_destroy waits for it for ever. Every
// accepted task runs or is handed to on_drop, exactly once, and crew_stats counts each so.
//
// The old code counted the new runner in pending only when it queued it, after adding the task
// to the lane: another runner could run the task meanwhile, the shutdown see nothing pending
// and let the workers go, and the runner queued after that was never run. A producer merely
// preempted in that window is rare (about 1 round in 100 at best, on 2 cores); so in each round
// one submission is held inside crew_lane_submit at a point the API itself shows: it opens a
// group, and the handle it writes back (*group) lies on a page made read-only, so the write
// faults and the test's SIGSEGV handler holds the thread until the shutdown has had its chance
// to finish (then makes the page writable: the write is made again, and the call goes on). The
// task is in the lane by then; the old code had not counted its runner yet, the new one has.
struct RaceTask {
    std::atomic<int> runs{0};
    std::atomic<int> drops{0};
    std::atomic<bool> accepted{false};
};
void race_task(void *arg) { static_cast<RaceTask *>(arg)->runs++; }
void race_on_drop(crew_fn fn, void *arg, void *log) {
    if (fn == race_task)
        static_cast<RaceTask *>(arg)->drops++;
    else
        static_cast<DropLog *>(log)->plain++;
}

// The held write: a page whose stores fault until `release`; `held` tells that a thread waits.
struct HeldPage {
    char *page = nullptr;
    size_t size = 0;
    std::atomic<bool> armed{false};
    std::atomic<bool> held{false};
    std::atomic<bool> release{false};
};
HeldPage held_page;

void hold_on_fault(int, siginfo_t *si, void *) {
    HeldPage &h = held_page;
    char *addr = static_cast<char *>(si->si_addr);
    if (!h.armed.load() || addr < h.page || addr >= h.page + h.size) {
        signal(SIGSEGV, SIG_DFL); // not ours: fault again, and crash as usual
        return;
    }
    int saved = errno;
    h.held = true; // lock-free atomics: async-signal-safe
    while (!h.release.load()) {
        timespec ts{0, 20 * 1000};
        nanosleep(&ts, nullptr);
    }
    mprotect(h.page, h.size, PROT_READ | PROT_WRITE);
    errno = saved;
}

// crew_lane_destroy(l) on a helper thread, waited for `seconds` at most: a destroy that never
// returns fails the test with a message and crew_diagnose's report, and ends the process (the
// helper is stuck in the call), instead of sleeping until the binary's watchdog.
void destroy_or_die(crew_pool *p, crew_lane *l, int seconds, const char *what) {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    int rc = 1;
    std::thread destroyer([&] {
        int r = crew_lane_destroy(l);
        std::lock_guard<std::mutex> g(m);
        rc = r;
        done = true;
        cv.notify_all();
    });
    std::unique_lock<std::mutex> g(m);
    if (!cv.wait_for(g, std::chrono::seconds(seconds), [&] { return done; })) {
        std::fprintf(stderr,
                     "\nFAILED: crew_lane_destroy did not return within %d s (%s): a runner "
                     "was neither run nor dropped. crew_diagnose:\n",
                     seconds, what);
        crew_diagnose(p, stderr);
        std::fflush(stderr);
        std::_Exit(1);
    }
    g.unlock();
    destroyer.join();
    EXPECT_EQ(rc, CREW_OK) << what;
}

// Producers that live across rounds: each round, each submits to the round's lane until it is
// refused (or has submitted `per` tasks).
class RaceProducers {
public:
    RaceProducers(int n, int per) : per_(per), tasks_(size_t(n) * size_t(per)) {
        for (int k = 0; k < n; k++)
            threads_.emplace_back([this, k] { run(k); });
    }
    ~RaceProducers() {
        {
            std::lock_guard<std::mutex> g(m_);
            quit_ = true;
            cv_.notify_all();
        }
        for (auto &t : threads_)
            t.join();
    }
    std::vector<RaceTask> &tasks() { return tasks_; }
    // Start round r on lane l (the tasks are reset first).
    void start(long r, crew_lane *l) {
        for (auto &t : tasks_) {
            t.runs = 0;
            t.drops = 0;
            t.accepted = false;
        }
        std::lock_guard<std::mutex> g(m_);
        submitted = 0;
        lane_ = l;
        finished_ = 0;
        round_ = r;
        cv_.notify_all();
    }
    // Wait until every producer is done with the round (all refused, or done submitting).
    void wait_finished() {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return finished_ == threads_.size(); });
    }
    bool finished() {
        std::lock_guard<std::mutex> g(m_);
        return finished_ == threads_.size();
    }
    std::atomic<long> submitted{0}; // accepted in this round so far
    std::atomic<long> refused{0};   // CREW_ESHUTDOWN answers, all rounds
    std::atomic<long> wrong{0};     // any other failure, all rounds

private:
    void run(int k) {
        long seen = -1;
        for (;;) {
            crew_lane *l;
            {
                std::unique_lock<std::mutex> g(m_);
                cv_.wait(g, [&] { return quit_ || round_ != seen; });
                if (quit_)
                    return;
                seen = round_;
                l = lane_;
            }
            for (int i = 0; i < per_; i++) {
                RaceTask &t = tasks_[size_t(k) * size_t(per_) + size_t(i)];
                int rc = crew_lane_submit(l, race_task, &t, nullptr);
                if (rc != CREW_OK) {
                    (rc == CREW_ESHUTDOWN ? refused : wrong)++;
                    break;
                }
                t.accepted = true;
                submitted++;
            }
            std::lock_guard<std::mutex> g(m_);
            finished_++;
            cv_.notify_all();
        }
    }

    const int per_;
    std::vector<RaceTask> tasks_;
    std::vector<std::thread> threads_;
    std::mutex m_;
    std::condition_variable cv_;
    long round_ = -1;           // m_
    crew_lane *lane_ = nullptr; // m_
    size_t finished_ = 0;       // m_
    bool quit_ = false;         // m_
};

struct RaceCase {
    int how;
    unsigned max_concurrency;
};

class LaneShutdownRace : public ::testing::TestWithParam<RaceCase> {};

TEST_P(LaneShutdownRace, SubmitsRacingShutdownLeaveNoRunnerBehind) {
    const RaceCase c = GetParam();
    const long rounds = scaled(100);
    // A time limit too, so that a loaded machine runs fewer rounds rather than for minutes.
    const auto budget = std::chrono::seconds(crewtest::slow_build() ? 60 : 10);
    const int limit = crewtest::slow_build() ? 60 : 10; // seconds one crew_lane_destroy may take
    // How long the held submission waits for the shutdown: a shutdown that can finish without
    // it (the old code's) does so well within this; the new one waits for it.
    const auto hold = std::chrono::milliseconds(crewtest::slow_build() ? 50 : 5);
    const long page_size = sysconf(_SC_PAGESIZE);
    void *page = mmap(nullptr, size_t(page_size), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    held_page.page = static_cast<char *>(page);
    held_page.size = size_t(page_size);
    struct sigaction sa {}, old_sa{};
    sa.sa_sigaction = hold_on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGSEGV, &sa, &old_sa), 0);

    DropLog log;
    crew_hooks hooks{};
    hooks.size = sizeof hooks;
    hooks.on_drop = race_on_drop;
    hooks.arg = &log;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.monitoring = 1; // crew_stats counts every task
    cfg.hooks = &hooks;
    RaceProducers producers(2, 20000);
    std::vector<RaceTask> &tasks = producers.tasks();
    long accepted_total = 0, dropped_total = 0, held_total = 0, r = 0;
    const auto began = std::chrono::steady_clock::now();
    for (; r < rounds && std::chrono::steady_clock::now() - began < budget; r++) {
        char what[96];
        std::snprintf(what, sizeof what, "round %ld, %s shutdown, max_concurrency %u", r,
                      c.how == CREW_CANCEL ? "cancelling" : "draining", c.max_concurrency);
        crew_pool *p = make_pool(cfg);
        crew_lane *l = nullptr;
        ASSERT_EQ(crew_lane_create(p, c.max_concurrency, &l), CREW_OK);
        const long refused_before = producers.refused.load();
        producers.start(r, l);
        const long after = r % 32; // tasks accepted before the held one: varies by round
        while (producers.submitted.load() < after && !producers.finished())
            std::this_thread::yield();

        // The held submission: its task joins a new group, whose handle it writes into *g.
        auto *g = reinterpret_cast<crew_handle *>(held_page.page);
        *g = CREW_HANDLE_NONE;
        mprotect(held_page.page, held_page.size, PROT_READ);
        held_page.held = false;
        held_page.release = false;
        held_page.armed = true;
        RaceTask held_task;
        int held_rc = 1;
        std::thread holder([&] { held_rc = crew_lane_submit(l, race_task, &held_task, g); });
        // Until the write faults, or the call returns without writing (refused, say).
        const auto held_since = std::chrono::steady_clock::now();
        while (!held_page.held.load() &&
               std::chrono::steady_clock::now() - held_since < std::chrono::seconds(limit))
            std::this_thread::yield();
        // A task submitted after the held one finds the held task first in the lane: its
        // runner (the old code's other runner) may take it.
        const long seen = producers.submitted.load();
        while (held_page.held.load() && producers.submitted.load() < seen + 2 &&
               !producers.finished())
            std::this_thread::yield();
        // Shut down while it is held; give the shutdown `hold` to finish without it.
        held_total += held_page.held.load();
        std::mutex m;
        std::condition_variable cv;
        bool shut = false;
        std::thread closer([&] {
            EXPECT_EQ(crew_shutdown(p, c.how), CREW_OK);
            std::lock_guard<std::mutex> lk(m);
            shut = true;
            cv.notify_all();
        });
        {
            std::unique_lock<std::mutex> lk(m);
            cv.wait_for(lk, hold, [&] { return shut; });
        }
        held_page.release = true; // the held write goes on
        holder.join();
        closer.join();
        held_page.armed = false;
        mprotect(held_page.page, held_page.size, PROT_READ | PROT_WRITE);
        producers.wait_finished();

        destroy_or_die(p, l, limit, what);
        long accepted = 0, ran = 0, dropped = 0;
        auto account = [&](const RaceTask &t, const char *which, size_t i) {
            const int runs = t.runs.load(), drops = t.drops.load();
            if (t.accepted) {
                EXPECT_EQ(runs + drops, 1) << what << ": accepted " << which << " task " << i
                                           << " ran " << runs << " times and was dropped "
                                           << drops << " times";
                accepted++;
                ran += runs;
                dropped += drops;
            } else {
                EXPECT_EQ(runs + drops, 0) << what << ": refused " << which << " task " << i;
            }
        };
        held_task.accepted = held_rc == CREW_OK;
        account(held_task, "held", 0);
        EXPECT_TRUE(held_rc == CREW_OK || held_rc == CREW_ESHUTDOWN) << what << ": " << held_rc;
        if (held_rc == CREW_OK) { // its group finished with it
            int rc = crew_wait(p, *g);
            EXPECT_TRUE(rc == CREW_OK || (c.how == CREW_CANCEL && rc == CREW_ECANCELED))
                << what << ": " << rc;
        }
        for (size_t i = 0; i < tasks.size(); i++)
            account(tasks[i], "produced", i);
        if (c.how == CREW_DRAIN) {
            EXPECT_EQ(dropped, 0) << what << ": a draining shutdown drops nothing";
        }
        crew_stats s;
        s.size = sizeof s;
        ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
        EXPECT_EQ(s.submitted, uint64_t(accepted)) << what;
        EXPECT_EQ(s.completed, uint64_t(ran)) << what;
        EXPECT_EQ(s.cancelled, uint64_t(dropped)) << what;
        EXPECT_EQ(s.rejected, uint64_t(producers.refused.load() - refused_before) +
                                  (held_rc == CREW_OK ? 0u : 1u))
            << what;
        EXPECT_EQ(s.queued, 0u) << what << ": a runner is still queued";
        crew_destroy(p);
        accepted_total += accepted;
        dropped_total += dropped;
        if (HasFailure())
            break;
    }
    sigaction(SIGSEGV, &old_sa, nullptr);
    munmap(page, size_t(page_size));
    EXPECT_EQ(producers.wrong.load(), 0) << "crew_lane_submit failed other than CREW_ESHUTDOWN";
    EXPECT_EQ(log.plain.load(), 0) << "on_drop saw something other than the submitted tasks";
    std::printf("[ info ] %ld rounds (%ld with a submission held as the shutdown began): %ld "
                "tasks accepted, %ld of them dropped\n",
                r, held_total, accepted_total, dropped_total);
}

INSTANTIATE_TEST_SUITE_P(Lanes, LaneShutdownRace,
                         ::testing::Values(RaceCase{CREW_CANCEL, 64}, RaceCase{CREW_DRAIN, 64},
                                           RaceCase{CREW_CANCEL, 4}, RaceCase{CREW_DRAIN, 4}),
                         [](const ::testing::TestParamInfo<RaceCase> &info) {
                             return std::string(info.param.how == CREW_CANCEL ? "Cancel"
                                                                              : "Drain") +
                                    "Max" + std::to_string(info.param.max_concurrency);
                         });

// A full bounded queue that drops its oldest task may pick a lane's queued runner: the lane's
// waiting tasks are then dropped with it and reported, never lost, and the lane goes on.
TEST(Lanes, DropOldestThatPicksARunnerReportsTheLanesTasks) {
    DropLog log;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.queue_capacity = 2;
    cfg.full_policy = CREW_FULL_DROP_OLDEST;
    crew_pool *p = crewtest::make_pool_on_drop(cfg, on_drop, &log);
    Gate gate;
    gate.hold(p, 1);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    std::atomic<long> runs{0};
    const int n = 30;
    for (int i = 0; i < n; i++) // no place taken: the lane is their waiting room
        ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK);
    for (int i = 0; i < 6; i++) // fill the queue, then make it drop
        ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
    gate.open();
    // The queue's drops (a runner and its lane's tasks) are reported to on_drop, not by
    // crew_wait_all, which answers CREW_ECANCELED only after a cancelling shutdown's drops.
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(log.plain.load(), 0) << "on_drop was handed a runner";
    EXPECT_EQ(runs.load() + log.dropped.load(), n) << "a lane task was neither run nor reported";
    ASSERT_EQ(crew_lane_submit(l, bump, &runs, nullptr), CREW_OK); // the lane goes on
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(runs.load() + log.dropped.load(), n + 1);
    crew_destroy(p);
}

// ---- crew_lane_destroy from tasks ------------------------------------------------------------

struct SelfDestroy {
    crew_lane *l;
    std::atomic<int> rc{1};
    std::string detail;
};
void destroy_own_lane(void *arg) {
    auto *s = static_cast<SelfDestroy *>(arg);
    int rc = crew_lane_destroy(s->l);
    s->detail = crew_last_error();
    s->rc = rc;
}

TEST(Lanes, DestroyFromOneOfItsOwnTasksIsEdeadlk) {
    crew_pool *p = make_pool(2);
    for (unsigned bound : {1u, 3u}) {
        SelfDestroy s;
        ASSERT_EQ(crew_lane_create(p, bound, &s.l), CREW_OK);
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_lane_submit(s.l, destroy_own_lane, &s, &g), CREW_OK);
        ASSERT_EQ(crew_wait(p, g), CREW_OK);
        EXPECT_EQ(s.rc.load(), CREW_EDEADLK);
        EXPECT_NE(s.detail.find("crew_lane_destroy"), std::string::npos) << s.detail;
        EXPECT_EQ(crew_lane_destroy(s.l), CREW_OK); // still alive: destroyed from outside
    }
    crew_destroy(p);
}

// A task of the pool (not of the lane) destroys a lane whose runner is queued behind it, on a
// pool of one worker: the destroyer runs the queued runner itself.
struct OtherDestroy {
    crew_lane *l;
    std::atomic<long> *runs;
    std::atomic<int> rc{1};
};
void submit_then_destroy(void *arg) {
    auto *s = static_cast<OtherDestroy *>(arg);
    for (int i = 0; i < 40; i++)
        if (crew_lane_submit(s->l, bump, s->runs, nullptr) != CREW_OK)
            return;
    s->rc = crew_lane_destroy(s->l);
}

TEST(Lanes, DestroyFromAnotherTaskOfThePoolHelps) {
    crew_pool *p = make_pool(1);
    std::atomic<long> runs{0};
    OtherDestroy s;
    s.runs = &runs;
    ASSERT_EQ(crew_lane_create(p, 2, &s.l), CREW_OK);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, submit_then_destroy, &s, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(s.rc.load(), CREW_OK);
    EXPECT_EQ(runs.load(), 40);
    crew_destroy(p);
}

// A task that destroys a lane whose task is still running elsewhere sleeps (no polling) until
// the lane is idle, and wakes meanwhile for work queued on the pool: it runs a task submitted
// while it sleeps, with the pool's other worker still busy in the lane's task. (PER_WORKER: a
// worker, helping or not, takes from its own queue only, and the task may go to the other's:
// there it runs once the lane's task ends.)
struct SleepingDestroy {
    crew_lane *l;
    std::atomic<int> rc{1};
    std::atomic<bool> started{false};
};
void destroy_lane_task(void *arg) {
    auto *s = static_cast<SleepingDestroy *>(arg);
    s->started = true;
    s->rc = crew_lane_destroy(s->l);
}

TEST(Lanes, DestroyFromATaskSleepsAndWakesForQueuedWork) {
    crew_pool *p = make_pool(2);
    SleepingDestroy s;
    ASSERT_EQ(crew_lane_create(p, 1, &s.l), CREW_OK);
    Gate lane_gate; // the lane's task holds one worker until the end
    ASSERT_EQ(crew_lane_submit(s.l, Gate::block, &lane_gate, nullptr), CREW_OK);
    lane_gate.wait_arrivals(1);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, destroy_lane_task, &s, 0, &g), CREW_OK); // the other worker
    while (!s.started.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20)); // it has found nothing to run
    // Both workers are busy: only the sleeping destroyer can run this one, once woken.
    std::atomic<long> ran{0};
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, bump, &ran, 0, &h), CREW_OK);
    if (crewtest::scheduler() != "per-worker") {
        for (int i = 0; i < 10000 && ran.load() == 0; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        EXPECT_EQ(ran.load(), 1) << "the waiting destroyer did not wake for queued work";
    }
    EXPECT_EQ(s.rc.load(), 1) << "crew_lane_destroy returned while the lane's task ran";
    lane_gate.open(); // the lane goes idle: the last runner wakes the destroyer
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(s.rc.load(), CREW_OK);
    EXPECT_EQ(crew_wait(p, h), CREW_OK);
    crew_destroy(p);
}

// ---- Bad input -------------------------------------------------------------------------------

TEST(Lanes, BadInput) {
    crew_pool *p = make_pool(1);
    crew_lane *l = nullptr;
    EXPECT_EQ(crew_lane_create(nullptr, 1, &l), CREW_EINVAL);
    EXPECT_EQ(crew_lane_create(p, 1, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_lane_create(p, 0, &l), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "max_concurrency is 0"), nullptr)
        << crew_last_error();
    EXPECT_EQ(l, nullptr);
    EXPECT_EQ(crew_lane_submit(nullptr, noop, nullptr, nullptr), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "lane is NULL"), nullptr) << crew_last_error();
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    EXPECT_EQ(crew_lane_submit(l, nullptr, nullptr, nullptr), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "fn is NULL"), nullptr) << crew_last_error();
    crew_handle bogus = {12345, 7};
    EXPECT_EQ(crew_lane_submit(l, noop, nullptr, &bogus), CREW_EINVAL);
    crew_handle done = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_lane_submit(l, noop, nullptr, &done), CREW_OK);
    ASSERT_EQ(crew_wait(p, done), CREW_OK);
    const crew_handle finished = done; // a finished group: a new one opens in its place
    EXPECT_EQ(crew_lane_submit(l, noop, nullptr, &done), CREW_OK);
    EXPECT_FALSE(done.slot == finished.slot && done.gen == finished.gen);
    EXPECT_EQ(crew_wait(p, done), CREW_OK);
    EXPECT_EQ(crew_lane_destroy(nullptr), CREW_OK);
    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_EQ(crew_lane_submit(l, noop, nullptr, nullptr), CREW_ESHUTDOWN);
    crew_lane *late = nullptr;
    EXPECT_EQ(crew_lane_create(p, 1, &late), CREW_ESHUTDOWN);
    EXPECT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_destroy(p);
}

// ---- Barriers -------------------------------------------------------------------------------

// Readers and writers on one lane: plain tasks read, barriers write. Each checks, when it starts,
// that no writer runs (a reader) or that nothing else runs (a writer), and a writer that all its
// producer's earlier tasks have finished and none of its later ones has started.
struct RW {
    std::atomic<int> readers{0}, writers{0}, peak_readers{0};
    std::atomic<long> violations{0}, reads{0}, writes{0};
    std::vector<std::vector<std::atomic<int>>> state; // per producer, per seq: 0, 1 started, 2 done
};
struct RWItem {
    RW *rw;
    int producer;
    int seq;
};

void spin_a_little() {
    for (volatile int i = 0; i < 2000; i = i + 1) {
    }
}

void reader(void *arg) {
    auto *it = static_cast<RWItem *>(arg);
    RW *rw = it->rw;
    auto &st = rw->state[size_t(it->producer)];
    st[size_t(it->seq)] = 1;
    int now = rw->readers.fetch_add(1) + 1;
    int peak = rw->peak_readers.load();
    while (now > peak && !rw->peak_readers.compare_exchange_weak(peak, now)) {
    }
    if (rw->writers.load() != 0)
        rw->violations++;
    spin_a_little();
    if (rw->writers.load() != 0)
        rw->violations++;
    rw->readers.fetch_sub(1);
    rw->reads++;
    st[size_t(it->seq)] = 2;
}

void writer(void *arg) {
    auto *it = static_cast<RWItem *>(arg);
    RW *rw = it->rw;
    auto &st = rw->state[size_t(it->producer)];
    st[size_t(it->seq)] = 1;
    if (rw->writers.fetch_add(1) != 0 || rw->readers.load() != 0)
        rw->violations++;
    for (size_t j = 0; j < st.size(); j++) {
        int want = j < size_t(it->seq) ? 2 : j == size_t(it->seq) ? 1 : 0;
        if (st[j].load() != want)
            rw->violations++;
    }
    spin_a_little();
    if (rw->readers.load() != 0)
        rw->violations++;
    rw->writers.fetch_sub(1);
    rw->writes++;
    st[size_t(it->seq)] = 2;
}

TEST(LaneBarriers, ReadersAndWritersUnderManySubmitters) {
    crew_pool *p = make_pool(4);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 4, &l), CREW_OK);
    const int producers = 4, per = int(scaled(4000));
    RW rw;
    rw.state = std::vector<std::vector<std::atomic<int>>>(size_t(producers));
    std::vector<std::vector<RWItem>> items(static_cast<size_t>(producers));
    for (int k = 0; k < producers; k++) {
        rw.state[size_t(k)] = std::vector<std::atomic<int>>(size_t(per));
        for (int i = 0; i < per; i++)
            items[size_t(k)].push_back(RWItem{&rw, k, i});
    }
    std::vector<crew_handle> groups(size_t(producers), CREW_HANDLE_NONE);
    std::vector<std::thread> ts;
    long nwrites = 0;
    for (int i = 0; i < per; i++)
        nwrites += i % 10 == 9;
    // A first barrier holds the lane until half the tasks are in, so that long runs of readers
    // wait behind barriers (and runners are topped up after each); the rest race the runners.
    Gate gate;
    ASSERT_EQ(crew_lane_barrier(l, Gate::block, &gate, nullptr), CREW_OK);
    std::atomic<long> submitted{0};
    for (int k = 0; k < producers; k++)
        ts.emplace_back([&, k] {
            for (int i = 0; i < per; i++) {
                RWItem *it = &items[size_t(k)][size_t(i)];
                int rc = i % 10 == 9 ? crew_lane_barrier(l, writer, it, &groups[size_t(k)])
                                     : crew_lane_submit(l, reader, it, &groups[size_t(k)]);
                if (rc != CREW_OK)
                    std::abort();
                submitted++;
            }
        });
    while (submitted.load() < long(producers) * per / 2)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gate.open();
    for (auto &t : ts)
        t.join();
    for (auto g : groups)
        EXPECT_EQ(crew_wait(p, g), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(rw.violations.load(), 0);
    EXPECT_EQ(rw.writes.load(), producers * nwrites);
    EXPECT_EQ(rw.reads.load(), long(producers) * per - producers * nwrites);
    // How many readers ran side by side depends on timing (FullConcurrencyAgainAfterABarrier
    // checks that they can); never more than the lane's bound.
    std::printf("[ info ] at most %d readers at once\n", rw.peak_readers.load());
    EXPECT_LE(rw.peak_readers.load(), 4);
    crew_destroy(p);
}

// After a barrier, the lane runs up to max_concurrency tasks again, also those submitted while
// the barrier ran (their submissions started no runner: the lane was blocked).
struct Meet {
    std::atomic<int> in{0}, peak{0};
    std::mutex m;
    std::condition_variable cv;
    int want = 4;
};
void meet(void *arg) {
    auto *mt = static_cast<Meet *>(arg);
    int now = mt->in.fetch_add(1) + 1;
    int peak = mt->peak.load();
    while (now > peak && !mt->peak.compare_exchange_weak(peak, now)) {
    }
    std::unique_lock<std::mutex> g(mt->m);
    mt->cv.notify_all();
    mt->cv.wait_for(g, std::chrono::seconds(5), [&] { return mt->peak.load() >= mt->want; });
    g.unlock();
    mt->in.fetch_sub(1);
}

TEST(LaneBarriers, FullConcurrencyAgainAfterABarrier) {
    crew_pool *p = make_pool(4);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 4, &l), CREW_OK);
    Gate gate;
    Meet mt;
    ASSERT_EQ(crew_lane_barrier(l, Gate::block, &gate, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(crew_lane_submit(l, meet, &mt, nullptr), CREW_OK);
    gate.open();
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(mt.peak.load(), 4) << "the tasks after the barrier did not run side by side";
    crew_destroy(p);
}

// On a strand a barrier is a plain task: everything runs in submission order.
void record(void *arg);
struct Seq {
    std::vector<int> order;
    std::vector<std::pair<Seq *, int>> items;
};
void record(void *arg) {
    auto *it = static_cast<std::pair<Seq *, int> *>(arg);
    it->first->order.push_back(it->second); // a strand: no lock needed
}

TEST(LaneBarriers, OnAStrandABarrierIsAPlainTask) {
    crew_pool *p = make_pool(3);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    Seq s;
    const int n = 300;
    s.items.reserve(n);
    for (int i = 0; i < n; i++)
        s.items.emplace_back(&s, i);
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < n; i++)
        ASSERT_EQ(i % 3 ? crew_lane_submit(l, record, &s.items[size_t(i)], &g)
                        : crew_lane_barrier(l, record, &s.items[size_t(i)], &g),
                  CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    ASSERT_EQ(s.order.size(), size_t(n));
    for (int i = 0; i < n; i++)
        EXPECT_EQ(s.order[size_t(i)], i);
    crew_destroy(p);
}

// A barrier whose group is cancelled is dropped (on_drop, CREW_ECANCELED) when its turn comes;
// the tasks after it run, side by side again.
TEST(LaneBarriers, CancelledBarrierIsDroppedAndTheLaneGoesOn) {
    DropLog log;
    crew_pool *p = pool_with_drop_log(4, &log);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 4, &l), CREW_OK);
    Gate gate;
    ASSERT_EQ(crew_lane_submit(l, Gate::block, &gate, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    std::atomic<long> dropped_runs{0};
    crew_handle b = CREW_HANDLE_NONE, after = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_lane_barrier(l, bump, &dropped_runs, &b), CREW_OK);
    Meet mt;
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(crew_lane_submit(l, meet, &mt, &after), CREW_OK);
    ASSERT_EQ(crew_cancel(p, b), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, after, 0), CREW_ETIMEDOUT); // behind the barrier still
    EXPECT_EQ(mt.peak.load(), 0) << "a task after a waiting barrier started";
    gate.open();
    EXPECT_EQ(crew_wait(p, b), CREW_ECANCELED);
    EXPECT_EQ(crew_wait(p, after), CREW_OK);
    EXPECT_EQ(dropped_runs.load(), 0);
    EXPECT_EQ(log.dropped.load(), 1);
    EXPECT_EQ(mt.peak.load(), 4);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_destroy(p);
}

// Shutdown with barriers waiting in lanes: a draining one runs them (alone), a cancelling one
// drops them with the other waiting tasks, each reported.
void shutdown_with_barriers(int how) {
    DropLog log;
    crew_pool *p = pool_with_drop_log(2, &log);
    RW rw;
    const int nlanes = 10, per = 40;
    rw.state = std::vector<std::vector<std::atomic<int>>>(size_t(nlanes));
    std::vector<std::vector<RWItem>> items(static_cast<size_t>(nlanes));
    Gate gate;
    std::vector<crew_lane *> lanes(nlanes, nullptr);
    for (int k = 0; k < nlanes; k++) {
        rw.state[size_t(k)] = std::vector<std::atomic<int>>(size_t(per));
        for (int i = 0; i < per; i++)
            items[size_t(k)].push_back(RWItem{&rw, k, i});
        ASSERT_EQ(crew_lane_create(p, 3, &lanes[size_t(k)]), CREW_OK);
    }
    gate.hold(p, 2);
    std::atomic<long> runs{0};
    long nwrites = 0;
    for (int k = 0; k < nlanes; k++)
        for (int i = 0; i < per; i++) {
            RWItem *it = &items[size_t(k)][size_t(i)];
            if (i % 4 == 3) {
                ASSERT_EQ(crew_lane_barrier(lanes[size_t(k)], bump, &runs, nullptr), CREW_OK);
                nwrites++;
            } else {
                ASSERT_EQ(crew_lane_submit(lanes[size_t(k)], reader, it, nullptr), CREW_OK);
            }
        }
    std::thread closer([&] { EXPECT_EQ(crew_shutdown(p, how), CREW_OK); });
    while (crew_submit(p, noop, nullptr, 0, nullptr) == CREW_OK)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(crew_lane_barrier(lanes[0], bump, &runs, nullptr), CREW_ESHUTDOWN);
    gate.open();
    closer.join();
    EXPECT_EQ(log.plain.load(), 0) << "on_drop saw a runner";
    EXPECT_EQ(runs.load() + log.dropped.load(), nwrites)
        << "a barrier was neither run nor reported";
    EXPECT_EQ(rw.reads.load() + log.readers.load(), long(nlanes) * per - nwrites)
        << "a task was neither run nor reported";
    if (how == CREW_DRAIN) {
        EXPECT_EQ(runs.load(), nwrites);
        EXPECT_EQ(log.readers.load(), 0);
    } else {
        EXPECT_GT(log.dropped.load(), 0);
    }
    EXPECT_EQ(rw.violations.load(), 0);
    for (auto l : lanes)
        EXPECT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_destroy(p);
}

TEST(LaneBarriers, DrainingShutdownRunsTheBarriers) { shutdown_with_barriers(CREW_DRAIN); }
TEST(LaneBarriers, CancellingShutdownDropsTheBarriers) { shutdown_with_barriers(CREW_CANCEL); }

// A paused pool starts no barrier; crew_resume lets the lane go on.
TEST(LaneBarriers, PausedPoolHoldsABarrier) {
    crew_pool *p = make_pool(2);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 2, &l), CREW_OK);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_lane_barrier(l, bump, &runs, &g), CREW_OK);
    ASSERT_EQ(crew_lane_submit(l, bump, &runs, &g), CREW_OK);
    EXPECT_EQ(crew_wait_timed(p, g, 5000000u), CREW_ETIMEDOUT);
    EXPECT_EQ(runs.load(), 0);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(runs.load(), 2);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_destroy(p);
}

TEST(LaneBarriers, BadInput) {
    crew_pool *p = make_pool(1);
    EXPECT_EQ(crew_lane_barrier(nullptr, noop, nullptr, nullptr), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "crew_lane_barrier: the lane is NULL"), nullptr)
        << crew_last_error();
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 2, &l), CREW_OK);
    EXPECT_EQ(crew_lane_barrier(l, nullptr, nullptr, nullptr), CREW_EINVAL);
    EXPECT_NE(std::strstr(crew_last_error(), "crew_lane_barrier"), nullptr) << crew_last_error();
    crew_handle bogus = {12345, 7};
    EXPECT_EQ(crew_lane_barrier(l, noop, nullptr, &bogus), CREW_EINVAL);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    crew_destroy(p);
}

TEST(LaneBarriers, CppBarrier) {
    crew::pool pool(crew::options{4});
    std::atomic<int> errors{0};
    pool.on_error([&](std::exception_ptr) { errors++; });
    std::atomic<int> readers{0}, violations{0};
    int value = 0; // written only by barriers, read by readers: no lock needed
    std::vector<int> seen(400, -1);
    {
        crew::lane lane(pool, 4);
        for (int i = 0; i < 400; i++) {
            if (i % 20 == 0) {
                lane.barrier([&, i] {
                    if (readers.load() != 0)
                        violations++;
                    value = i;
                });
            } else {
                lane.post([&, i] {
                    readers++;
                    seen[size_t(i)] = value;
                    readers--;
                });
            }
        }
        lane.barrier([] { throw std::runtime_error("barrier boom"); }); // to the error handler
    }
    EXPECT_EQ(violations.load(), 0);
    EXPECT_EQ(errors.load(), 1);
    for (int i = 0; i < 400; i++) {
        if (i % 20 != 0) {
            EXPECT_EQ(seen[size_t(i)], i - i % 20) << i; // the value of the last barrier before
        }
    }
    crew::lane moved(pool, 2);
    crew::lane other(std::move(moved));
    EXPECT_THROW(moved.barrier([] {}), crew::error);
}

// ---- C++ -------------------------------------------------------------------------------------

TEST(Lanes, CppLane) {
    crew::pool pool(crew::options{2});
    std::mutex m;
    std::vector<std::exception_ptr> errors;
    pool.on_error([&](std::exception_ptr e) {
        std::lock_guard<std::mutex> g(m);
        errors.push_back(e);
    });
    std::vector<int> seen;
    {
        crew::lane strand(pool); // a strand: no lock needed for seen
        for (int i = 0; i < 100; i++)
            strand.post([&seen, i] { seen.push_back(i); });
        auto f = strand.submit([](int x) { return x * 2; }, 21);
        auto bad = strand.submit([]() -> int { throw std::runtime_error("lane boom"); });
        strand.post([] { throw std::runtime_error("posted boom"); });
        EXPECT_EQ(f.get(), 42);
        EXPECT_THROW(bad.get(), std::runtime_error);
        crew::lane moved(std::move(strand));
        moved.post([&seen] { seen.push_back(100); });
        EXPECT_EQ(strand.native(), nullptr);
        EXPECT_THROW(strand.post([] {}), crew::error);
    } // waits for the lane's tasks
    ASSERT_EQ(seen.size(), 101u);
    for (int i = 0; i <= 100; i++)
        EXPECT_EQ(seen[size_t(i)], i);
    {
        std::lock_guard<std::mutex> g(m);
        ASSERT_EQ(errors.size(), 1u);
        EXPECT_THROW(std::rethrow_exception(errors[0]), std::runtime_error);
    }
    EXPECT_THROW(crew::lane(pool, 0), crew::error);
}

} // namespace
