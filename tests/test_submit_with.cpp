// test_submit_with.cpp -- the general form of a submission (crew_submit_with, crew_enqueue_with
// and crew_submit_options): the defaults, each member's effect, each bad option's error (with
// nothing accepted), and each shorthand against the options it stands for, side by side. Run
// under every strategy by the ctest variants.
#include <gtest/gtest.h>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::Gate;
using crewtest::make_pool;

namespace {

void bump(void *a) { ++*static_cast<std::atomic<int> *>(a); }

crew_submit_options defaults() {
    crew_submit_options o = CREW_SUBMIT_OPTIONS_INIT;
    return o;
}

crew_pool *pool(unsigned threads, size_t capacity = 0, unsigned policy = CREW_FULL_BLOCK) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.queue_capacity = capacity;
    cfg.full_policy = policy;
    return make_pool(cfg);
}

// The name of the thread that ran a task: "crew-<id>-w<k>" on a worker, "-b<k>" on a blocking
// thread.
struct Where {
    std::string name;
    static void record(void *a) {
        char buf[16] = {0};
        pthread_getname_np(pthread_self(), buf, sizeof buf);
        static_cast<Where *>(a)->name = buf;
    }
};

// Tasks that append their number to a shared list.
struct Order {
    std::mutex m;
    std::vector<int> seen;
    struct Item {
        Order *o;
        int k;
    };
    std::vector<Item> items;
    explicit Order(int n) {
        for (int k = 0; k < n; k++)
            items.push_back({this, k});
    }
    static void run(void *a) {
        auto *it = static_cast<Item *>(a);
        std::lock_guard<std::mutex> g(it->o->m);
        it->o->seen.push_back(it->k);
    }
};

// A task that records when it started (crew_now_ns).
void stamp_start(void *a) { static_cast<std::atomic<uint64_t> *>(a)->store(crew_now_ns()); }

bool says(const char *what) { return std::strstr(crew_last_error(), what) != nullptr; }

} // namespace

TEST(SubmitWith, NullAndInitOptionsAreTheDefaults) {
    crew_pool *p = pool(2);
    std::atomic<int> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_with(p, bump, &runs, nullptr, &g), CREW_OK);
    crew_submit_options o = CREW_SUBMIT_OPTIONS_INIT;
    EXPECT_EQ(o.size, sizeof(crew_submit_options));
    ASSERT_EQ(crew_submit_with(p, bump, &runs, &o, &g), CREW_OK);
    ASSERT_EQ(crew_submit_with(p, bump, &runs, &o, nullptr), CREW_OK);
    // Arrays: a short one, and a long one (which goes as runners).
    for (size_t n : {size_t(3), size_t(100)}) {
        std::vector<crew_task> t(n);
        for (auto &x : t)
            x = crew_task{}, x.fn = bump, x.arg = &runs;
        ASSERT_EQ(crew_enqueue_with(p, t.data(), n, nullptr, &g), CREW_OK);
        ASSERT_EQ(crew_wait(p, g), CREW_OK);
        ASSERT_EQ(crew_enqueue_with(p, t.data(), n, &o, &g), CREW_OK);
        ASSERT_EQ(crew_wait(p, g), CREW_OK);
    }
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 3 + 2 * 103);
    crew_destroy(p);
}

// A caller built against a later crew.h passes a larger size: accepted while the members this
// crew does not know are 0.
TEST(SubmitWith, ALargerSizeWithUnknownMembersZeroIsAccepted) {
    crew_pool *p = pool(1);
    std::atomic<int> runs{0};
    struct {
        crew_submit_options o;
        uint64_t later[2];
    } big;
    std::memset(&big, 0, sizeof big);
    big.o.size = sizeof big;
    big.o.priority = 1;
    ASSERT_EQ(crew_submit_with(p, bump, &runs, &big.o, nullptr), CREW_OK);
    big.later[1] = 5;
    EXPECT_EQ(crew_submit_with(p, bump, &runs, &big.o, nullptr), CREW_EINVAL);
    EXPECT_TRUE(says("crew_submit_with: opts->size is")) << crew_last_error();
    EXPECT_TRUE(says("later crew.h")) << crew_last_error();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 1);
    crew_destroy(p);
}

TEST(SubmitWith, PriorityOrdersQueuedTasks) {
    if (!crewtest::strict_priority())
        GTEST_SKIP() << "the MultiQueue's priority order is approximate by design";
    crew_pool *p = pool(1);
    Gate gate;
    gate.hold(p, 1);
    Order order(3);
    crew_submit_options o = defaults();
    for (int k : {2, 0, 1}) {
        o.priority = uint32_t(k);
        ASSERT_EQ(crew_submit_with(p, Order::run, &order.items[size_t(k)], &o, nullptr), CREW_OK);
    }
    gate.open();
    // Wait without helping (a helping caller would run tasks beside the worker), so that only
    // the worker runs them, one at a time.
    for (;;) {
        {
            std::lock_guard<std::mutex> g(order.m);
            if (order.seen.size() == 3)
                break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(order.seen, (std::vector<int>{0, 1, 2}));
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

TEST(SubmitWith, BlockingFlagRunsOnABlockingThread) {
    crew_pool *p = pool(1);
    Where one, each[40];
    crew_submit_options o = defaults();
    o.flags = CREW_TASK_BLOCKING;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_with(p, Where::record, &one, &o, &g), CREW_OK);
    std::vector<crew_task> t(40);
    for (size_t i = 0; i < t.size(); i++)
        t[i] = crew_task{}, t[i].fn = Where::record, t[i].arg = &each[i];
    ASSERT_EQ(crew_enqueue_with(p, t.data(), t.size(), &o, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_NE(one.name.find("-b"), std::string::npos) << one.name;
    for (auto &w : each)
        EXPECT_NE(w.name.find("-b"), std::string::npos) << w.name;
    crew_destroy(p);
}

TEST(SubmitWith, WhenDelaysTheTask) {
    crew_pool *p = pool(2);
    std::atomic<uint64_t> started{0};
    crew_submit_options o = defaults();
    o.when_ns = crew_now_ns() + 20 * 1000000ull;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_with(p, stamp_start, &started, &o, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_GE(started.load(), o.when_ns) << "a due time is \"not before\"";
    crew_destroy(p);
}

TEST(SubmitWith, StartByExpiresATaskNotStartedInTime) {
    crew_pool *p = pool(1);
    std::atomic<int> runs{0};
    crew_submit_options o = defaults();
    o.start_by_ns = 1; // long past: whoever takes it drops it
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_with(p, bump, &runs, &o, &g), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    // A due time and a start-by time after it: a delayed task with a deadline.
    o.when_ns = 1;
    o.start_by_ns = 2;
    g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_with(p, bump, &runs, &o, &g), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    o.start_by_ns = crew_now_ns() + 3600 * 1000000000ull; // an hour: in time
    g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_with(p, bump, &runs, &o, &g), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(runs.load(), 1);
    crew_destroy(p);
}

TEST(SubmitWith, RoomByAndNoWaitInAFullQueue) {
    crew_pool *p = pool(1, 1, CREW_FULL_BLOCK);
    Gate gate;
    gate.hold(p, 1);
    std::atomic<int> runs{0};
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, nullptr), CREW_OK); // the queue's one place
    crew_submit_options o = defaults();
    o.room_by_ns = crew_now_ns() + 10 * 1000000ull;
    EXPECT_EQ(crew_submit_with(p, bump, &runs, &o, nullptr), CREW_ETIMEDOUT);
    EXPECT_TRUE(says("crew_submit_with: the queue")) << crew_last_error();
    crew_task t[1] = {};
    t[0].fn = bump, t[0].arg = &runs;
    o.room_by_ns = crew_now_ns() + 10 * 1000000ull;
    EXPECT_EQ(crew_enqueue_with(p, t, 1, &o, nullptr), CREW_ETIMEDOUT);
    o.room_by_ns = 0;
    o.flags = CREW_SUBMIT_NO_WAIT;
    EXPECT_EQ(crew_submit_with(p, bump, &runs, &o, nullptr), CREW_EFULL);
    EXPECT_EQ(crew_enqueue_with(p, t, 1, &o, nullptr), CREW_EFULL);
    // Tasks that take no place are not concerned: a blocking one, a delayed one.
    o.flags = CREW_SUBMIT_NO_WAIT | CREW_TASK_BLOCKING;
    EXPECT_EQ(crew_submit_with(p, bump, &runs, &o, nullptr), CREW_OK);
    o.flags = CREW_SUBMIT_NO_WAIT;
    o.when_ns = 1;
    EXPECT_EQ(crew_submit_with(p, bump, &runs, &o, nullptr), CREW_OK);
    gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 3);
    // With room, a time limit changes nothing.
    o = defaults();
    o.room_by_ns = crew_now_ns() + 3600 * 1000000000ull;
    EXPECT_EQ(crew_submit_with(p, bump, &runs, &o, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 4);
    crew_destroy(p);
}

TEST(SubmitWith, LaneKeepsOrderAndBarrierRunsAlone) {
    crew_pool *p = pool(2);
    crew_lane *l = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    Order order(50);
    crew_submit_options o = defaults();
    o.lane = l;
    crew_handle g = CREW_HANDLE_NONE;
    for (auto &it : order.items)
        ASSERT_EQ(crew_submit_with(p, Order::run, &it, &o, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    std::vector<int> want(50);
    for (int k = 0; k < 50; k++)
        want[size_t(k)] = k;
    EXPECT_EQ(order.seen, want);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);

    // A barrier on a lane of 4: it starts after every earlier task has ended, and no later one
    // starts before it has ended.
    ASSERT_EQ(crew_lane_create(p, 4, &l), CREW_OK);
    struct Count {
        std::atomic<int> before{0}, after{0};
        int before_at_barrier = -1, after_at_barrier = -1;
    } c;
    o.lane = l;
    for (int i = 0; i < 20; i++)
        ASSERT_EQ(crew_submit_with(p, [](void *a) { static_cast<Count *>(a)->before++; }, &c, &o,
                                   nullptr),
                  CREW_OK);
    o.flags = CREW_SUBMIT_BARRIER;
    ASSERT_EQ(crew_submit_with(p,
                               [](void *a) {
                                   auto *k = static_cast<Count *>(a);
                                   k->before_at_barrier = k->before.load();
                                   k->after_at_barrier = k->after.load();
                               },
                               &c, &o, nullptr),
              CREW_OK);
    o.flags = 0;
    for (int i = 0; i < 20; i++)
        ASSERT_EQ(crew_submit_with(p, [](void *a) { static_cast<Count *>(a)->after++; }, &c, &o,
                                   nullptr),
                  CREW_OK);
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(c.before_at_barrier, 20);
    EXPECT_EQ(c.after_at_barrier, 0);
    EXPECT_EQ(c.after.load(), 20);
    crew_destroy(p);
}

// Every bad option is refused with EINVAL, a detail that names it, and nothing accepted.
TEST(SubmitWith, BadOptionsAreRefusedPrecisely) {
    crew_pool *p = pool(1), *other = pool(1);
    crew_lane *l = nullptr, *foreign = nullptr;
    ASSERT_EQ(crew_lane_create(p, 1, &l), CREW_OK);
    ASSERT_EQ(crew_lane_create(other, 1, &foreign), CREW_OK);
    std::atomic<int> runs{0};
    crew_task t[2] = {};
    for (auto &x : t)
        x.fn = bump, x.arg = &runs;
    struct Case {
        const char *what;
        void (*set)(crew_submit_options &, crew_lane *l, crew_lane *foreign);
        const char *says;
        bool single, array;
    };
    const Case cases[] = {
        {"size 0", [](crew_submit_options &o, crew_lane *, crew_lane *) { o.size = 0; },
         "opts->size is 0, not sizeof(crew_submit_options)", true, true},
        {"size too small",
         [](crew_submit_options &o, crew_lane *, crew_lane *) { o.size = sizeof o - 8; },
         "start from CREW_SUBMIT_OPTIONS_INIT", true, true},
        {"size absurd", [](crew_submit_options &o, crew_lane *, crew_lane *) { o.size = ~0ul; },
         "opts->size is", true, true},
        {"unknown flag", [](crew_submit_options &o, crew_lane *, crew_lane *) { o.flags = 8; },
         "opts->flags is 0x8", true, true},
        {"room_by with NO_WAIT",
         [](crew_submit_options &o, crew_lane *, crew_lane *) {
             o.flags = CREW_SUBMIT_NO_WAIT;
             o.room_by_ns = 5;
         },
         "with CREW_SUBMIT_NO_WAIT", true, true},
        {"start_by before when",
         [](crew_submit_options &o, crew_lane *, crew_lane *) {
             o.when_ns = 100;
             o.start_by_ns = 50;
         },
         "start-by time 50 is not after the due time 100", true, false},
        {"start_by equal to when",
         [](crew_submit_options &o, crew_lane *, crew_lane *) {
             o.when_ns = 100;
             o.start_by_ns = 100;
         },
         "could never start in time", true, false},
        {"barrier without lane",
         [](crew_submit_options &o, crew_lane *, crew_lane *) { o.flags = CREW_SUBMIT_BARRIER; },
         "CREW_SUBMIT_BARRIER without opts->lane", true, false},
        {"lane of another pool",
         [](crew_submit_options &o, crew_lane *, crew_lane *f) { o.lane = f; },
         "opts->lane belongs to another pool", true, false},
        {"lane with priority",
         [](crew_submit_options &o, crew_lane *l, crew_lane *) {
             o.lane = l;
             o.priority = 3;
         },
         "opts->priority is set with opts->lane", true, false},
        {"lane with when",
         [](crew_submit_options &o, crew_lane *l, crew_lane *) {
             o.lane = l;
             o.when_ns = 1;
         },
         "opts->when_ns is set with opts->lane", true, false},
        {"lane with start_by",
         [](crew_submit_options &o, crew_lane *l, crew_lane *) {
             o.lane = l;
             o.start_by_ns = 1;
         },
         "opts->start_by_ns is set with opts->lane", true, false},
        {"lane with blocking",
         [](crew_submit_options &o, crew_lane *l, crew_lane *) {
             o.lane = l;
             o.flags = CREW_TASK_BLOCKING;
         },
         "CREW_TASK_BLOCKING is set with opts->lane", true, false},
        {"array with priority",
         [](crew_submit_options &o, crew_lane *, crew_lane *) { o.priority = 1; },
         "opts->priority is set, but it applies to a single task only", false, true},
        {"array with when", [](crew_submit_options &o, crew_lane *, crew_lane *) { o.when_ns = 1; },
         "opts->when_ns is set, but", false, true},
        {"array with start_by",
         [](crew_submit_options &o, crew_lane *, crew_lane *) { o.start_by_ns = 1; },
         "opts->start_by_ns is set, but", false, true},
        {"array with lane", [](crew_submit_options &o, crew_lane *l, crew_lane *) { o.lane = l; },
         "opts->lane is set, but", false, true},
        {"array with barrier",
         [](crew_submit_options &o, crew_lane *l, crew_lane *) {
             o.lane = l;
             o.flags = CREW_SUBMIT_BARRIER;
         },
         "opts->lane is set, but", false, true},
    };
    for (const Case &c : cases) {
        crew_submit_options o = defaults();
        c.set(o, l, foreign);
        crew_handle g = CREW_HANDLE_NONE;
        if (c.single) {
            EXPECT_EQ(crew_submit_with(p, bump, &runs, &o, &g), CREW_EINVAL) << c.what;
            EXPECT_TRUE(says("crew_submit_with: ")) << c.what << ": " << crew_last_error();
            EXPECT_TRUE(says(c.says)) << c.what << ": " << crew_last_error();
        }
        if (c.array) {
            EXPECT_EQ(crew_enqueue_with(p, t, 2, &o, &g), CREW_EINVAL) << c.what;
            EXPECT_TRUE(says("crew_enqueue_with: ")) << c.what << ": " << crew_last_error();
            EXPECT_TRUE(says(c.says)) << c.what << ": " << crew_last_error();
        }
        EXPECT_EQ(g.slot, 0u) << c.what << ": no group opened";
    }
    // The arguments besides the options.
    crew_submit_options o = defaults();
    EXPECT_EQ(crew_submit_with(nullptr, bump, &runs, &o, nullptr), CREW_EINVAL);
    EXPECT_TRUE(says("crew_submit_with: the pool is NULL")) << crew_last_error();
    EXPECT_EQ(crew_submit_with(p, nullptr, &runs, &o, nullptr), CREW_EINVAL);
    EXPECT_TRUE(says("crew_submit_with: fn is NULL")) << crew_last_error();
    EXPECT_EQ(crew_submit_with(p, nullptr, &runs, nullptr, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_with(p, nullptr, 1, &o, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_with(p, t, 0, &o, nullptr), CREW_EINVAL);
    crew_handle forged = {7, 3};
    EXPECT_EQ(crew_submit_with(p, bump, &runs, &o, &forged), CREW_EINVAL);
    EXPECT_EQ(crew_submit_with(p, bump, &runs, nullptr, &forged), CREW_EINVAL);
    EXPECT_TRUE(says("crew_submit_with: ")) << crew_last_error();
    ASSERT_EQ(crew_lane_destroy(l), CREW_OK);
    ASSERT_EQ(crew_lane_destroy(foreign), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 0);
    crew_shutdown(p, CREW_DRAIN);
    EXPECT_EQ(crew_submit_with(p, bump, &runs, nullptr, nullptr), CREW_ESHUTDOWN);
    EXPECT_TRUE(says("crew_submit_with: the pool is shutting down")) << crew_last_error();
    EXPECT_EQ(crew_enqueue_with(p, t, 2, nullptr, nullptr), CREW_ESHUTDOWN);
    crew_destroy(p);
    crew_destroy(other);
}

// Each shorthand and the options it stands for (crew.h's table) do the same: side by side, on
// pools in the same state, the same answer and the same effect.
namespace {

struct Outcome {
    int rc;       // the submission's answer
    int wait;     // its group's crew_wait (or -100 when nothing was accepted)
    int runs;     // runs of the task
    bool blocking; // it ran on a blocking thread
    bool operator==(const Outcome &o) const {
        return rc == o.rc && wait == o.wait && runs == o.runs && blocking == o.blocking;
    }
};
std::ostream &operator<<(std::ostream &s, const Outcome &o) {
    return s << "{rc " << o.rc << ", wait " << o.wait << ", runs " << o.runs << ", blocking "
             << o.blocking << "}";
}

struct Probe {
    std::atomic<int> runs{0};
    std::atomic<bool> blocking{false};
    static void run(void *a) {
        auto *p = static_cast<Probe *>(a);
        char buf[16] = {0};
        pthread_getname_np(pthread_self(), buf, sizeof buf);
        if (std::strstr(buf, "-b"))
            p->blocking = true;
        p->runs++;
    }
};

// A fresh pool (one worker; a bounded queue of one place, full, when full is set), the
// submission made by submit, then its outcome once everything has ended.
template <class F> Outcome outcome(bool full, F submit) {
    crew_pool *p = full ? pool(1, 1, CREW_FULL_BLOCK) : pool(1);
    crew_lane *l = nullptr;
    if (crew_lane_create(p, 1, &l) != CREW_OK)
        std::abort();
    Gate gate;
    std::atomic<int> filler{0};
    if (full) {
        gate.hold(p, 1);
        if (crew_submit(p, bump, &filler, 0, nullptr) != CREW_OK)
            std::abort();
    }
    Probe probe;
    crew_handle g = CREW_HANDLE_NONE;
    Outcome o{};
    o.rc = submit(p, l, &probe, &g);
    gate.open();
    o.wait = o.rc == CREW_OK ? crew_wait(p, g) : -100;
    EXPECT_EQ(crew_lane_destroy(l), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    o.runs = probe.runs.load();
    o.blocking = probe.blocking.load();
    crew_destroy(p);
    return o;
}

crew_submit_options with(uint32_t prio, unsigned flags = 0, uint64_t when = 0,
                         uint64_t start_by = 0, uint64_t room_by = 0, crew_lane *l = nullptr) {
    crew_submit_options o = CREW_SUBMIT_OPTIONS_INIT;
    o.priority = prio, o.flags = flags, o.when_ns = when, o.start_by_ns = start_by;
    o.room_by_ns = room_by, o.lane = l;
    return o;
}

#define SAME(full, shorthand, options)                                                         \
    do {                                                                                       \
        Outcome a = outcome(full, [&](crew_pool *p, crew_lane *l, Probe *pr, crew_handle *g) { \
            (void)p, (void)l;                                                                  \
            return shorthand;                                                                  \
        });                                                                                    \
        Outcome b = outcome(full, [&](crew_pool *p, crew_lane *l, Probe *pr, crew_handle *g) { \
            (void)l;                                                                           \
            crew_submit_options o = options;                                                   \
            return crew_submit_with(p, Probe::run, pr, &o, g);                                 \
        });                                                                                    \
        EXPECT_EQ(a, b) << #shorthand;                                                         \
    } while (0)

} // namespace

TEST(SubmitWith, EachShorthandIsItsOptions) {
    const uint64_t hour = 3600 * 1000000000ull;
    SAME(false, crew_submit(p, Probe::run, pr, 2, g), with(2));
    SAME(false, crew_submit_ex(p, Probe::run, pr, 1, CREW_TASK_BLOCKING, g),
         with(1, CREW_TASK_BLOCKING));
    SAME(false, crew_submit_ex(p, Probe::run, pr, 1, 0, g), with(1));
    SAME(true, crew_try_submit(p, Probe::run, pr, 0, g), with(0, CREW_SUBMIT_NO_WAIT));
    SAME(false, crew_try_submit(p, Probe::run, pr, 0, g), with(0, CREW_SUBMIT_NO_WAIT));
    SAME(true, crew_submit_timed(p, Probe::run, pr, 0, g, 5),
         with(0, 0, 0, 0, crew_now_ns() + 5000000));
    SAME(false, crew_submit_timed(p, Probe::run, pr, 0, g, 5),
         with(0, 0, 0, 0, crew_now_ns() + 5000000));
    SAME(false, crew_submit_deadline(p, Probe::run, pr, 0, 0, 1, g), with(0, 0, 0, 1));
    SAME(false,
         crew_submit_deadline(p, Probe::run, pr, 0, CREW_TASK_BLOCKING, crew_now_ns() + hour, g),
         with(0, CREW_TASK_BLOCKING, 0, crew_now_ns() + hour));
    SAME(false, crew_submit_after(p, 1000000, Probe::run, pr, 3, g),
         with(3, 0, crew_now_ns() + 1000000));
    SAME(false, crew_submit_at(p, 0, Probe::run, pr, 0, g), with(0, 0, 1));
    SAME(false, crew_submit_at_ex(p, 1, Probe::run, pr, 0, 0, 2, g), with(0, 0, 1, 2));
    SAME(false, crew_submit_at_ex(p, 1, Probe::run, pr, 0, CREW_TASK_BLOCKING, 0, g),
         with(0, CREW_TASK_BLOCKING, 1));
    SAME(false, crew_lane_submit(l, Probe::run, pr, g), with(0, 0, 0, 0, 0, l));
    SAME(false, crew_lane_barrier(l, Probe::run, pr, g),
         with(0, CREW_SUBMIT_BARRIER, 0, 0, 0, l));
    // Arrays (into a full queue only blocking ones, which take no place: the others would
    // wait for room that only the end of the submission gives).
    for (bool full : {false, true}) {
        for (unsigned flags : {0u, unsigned(CREW_TASK_BLOCKING)}) {
            if (full && !flags)
                continue;
            auto array = [&](bool general) {
                return outcome(full, [&](crew_pool *p, crew_lane *, Probe *pr, crew_handle *g) {
                    static crew_task t[1];
                    t[0] = crew_task{};
                    t[0].fn = Probe::run, t[0].arg = pr;
                    crew_submit_options o = with(0, flags);
                    return general ? crew_enqueue_with(p, t, 1, &o, g)
                                   : crew_enqueue_tasks_ex(p, t, 1, g, flags);
                });
            };
            EXPECT_EQ(array(false), array(true)) << "full " << full << ", flags " << flags;
        }
    }
}

// The shorthands keep their own names and texts in their errors.
TEST(SubmitWith, ShorthandsKeepTheirOwnErrors) {
    crew_pool *p = pool(1);
    std::atomic<int> runs{0};
    EXPECT_EQ(crew_submit_ex(p, bump, &runs, 0, CREW_SUBMIT_NO_WAIT, nullptr), CREW_EINVAL);
    EXPECT_TRUE(says("crew_submit_ex: flags is 0x2; the only flag is CREW_TASK_BLOCKING"))
        << crew_last_error();
    EXPECT_EQ(crew_submit_deadline(p, bump, &runs, 0, CREW_SUBMIT_BARRIER, 0, nullptr),
              CREW_EINVAL);
    EXPECT_TRUE(says("crew_submit_deadline: flags is 0x4")) << crew_last_error();
    crew_task t[1] = {};
    t[0].fn = bump, t[0].arg = &runs;
    EXPECT_EQ(crew_enqueue_tasks_ex(p, t, 1, nullptr, CREW_SUBMIT_NO_WAIT), CREW_EINVAL);
    EXPECT_TRUE(says("crew_enqueue_tasks_ex: flags is 0x2")) << crew_last_error();
    EXPECT_EQ(crew_submit_at_ex(p, 100, bump, &runs, 0, 0, 100, nullptr), CREW_EINVAL);
    EXPECT_TRUE(says("crew_submit_at_ex: the start-by time 100 is not after the due time 100"))
        << crew_last_error();
    EXPECT_EQ(crew_lane_submit(nullptr, bump, &runs, nullptr), CREW_EINVAL);
    EXPECT_TRUE(says("crew_lane_submit: the lane is NULL")) << crew_last_error();
    EXPECT_EQ(crew_lane_barrier(nullptr, bump, &runs, nullptr), CREW_EINVAL);
    EXPECT_TRUE(says("crew_lane_barrier: the lane is NULL")) << crew_last_error();
    EXPECT_EQ(crew_submit(p, nullptr, &runs, 0, nullptr), CREW_EINVAL);
    EXPECT_TRUE(says("crew_submit: fn is NULL")) << crew_last_error();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(runs.load(), 0);
    crew_destroy(p);
}
