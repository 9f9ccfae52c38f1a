// test_api.cpp -- every public function, its errors and its bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <atomic>
#include <dirent.h>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

#if defined(__linux__)
#include <sched.h>
#endif

using crewtest::Gate;
using crewtest::make_pool;

namespace {

void count(void *arg) { static_cast<std::atomic<int> *>(arg)->fetch_add(1); }
void noop(void *) {}

} // namespace

TEST(Errors, EveryCodeHasANameAndASentence) {
    const int codes[] = {CREW_EINVAL,  CREW_ENOMEM, CREW_ESHUTDOWN, CREW_ESTALE, CREW_ECANCELED,
                         CREW_EDEADLK, CREW_EAGAIN, CREW_ERANGE,    CREW_EIO};
    std::set<std::string> texts, names;
    for (int c : codes) {
        EXPECT_LT(c, 0);
        std::string t = crew_strerror(c), n = crew_err_name(c);
        EXPECT_NE(t, "unknown error") << c;
        EXPECT_GT(t.size(), 10u) << c;
        EXPECT_NE(n, "UNKNOWN") << c;
        texts.insert(t);
        names.insert(n);
    }
    EXPECT_EQ(texts.size(), std::size(codes));
    EXPECT_EQ(names.size(), std::size(codes));
    EXPECT_STREQ(crew_err_name(CREW_ESTALE), "ESTALE");
    EXPECT_STREQ(crew_strerror(CREW_OK), "success");
    EXPECT_STREQ(crew_strerror(12345), "unknown error");
    EXPECT_STREQ(crew_err_name(-999), "UNKNOWN");
}

TEST(Config, InitGivesDefaults) {
    crew_config cfg;
    memset(&cfg, 0x5a, sizeof cfg);
    crew_config_init(&cfg);
    EXPECT_EQ(cfg.threads, 0u);
    EXPECT_EQ(cfg.monitoring, 0);
    EXPECT_EQ(cfg.stack_size, 0u);
    EXPECT_STREQ(cfg.name, "crew");
    EXPECT_EQ(cfg.spin, CREW_SPIN_AUTO);
    crew_config_init(nullptr); // harmless
}

TEST(Create, DefaultsToOneWorkerPerCore) {
    crew_pool *p = nullptr;
    ASSERT_EQ(crew_create(&p, nullptr), CREW_OK);
    // One per CPU this thread may run on: its affinity mask's, fewer under a cgroup CPU quota
    // (test_cpus.cpp checks the count itself).
    EXPECT_GE(crew_size(p), 1u);
#if defined(__linux__)
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    EXPECT_LE(crew_size(p), unsigned(CPU_COUNT(&allowed)));
#else
    EXPECT_LE(crew_size(p), std::thread::hardware_concurrency());
#endif
    EXPECT_EQ(crew_destroy(p), CREW_OK);
}

TEST(Create, RejectsBadInput) {
    crew_pool *p = nullptr;
    EXPECT_EQ(crew_create(nullptr, nullptr), CREW_EINVAL);
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = CREW_MAX_THREADS + 1;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    cfg.threads = 1000000000u;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    EXPECT_EQ(p, nullptr);
    cfg.threads = 2;
    cfg.stack_size = 1; // below PTHREAD_STACK_MIN
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
    EXPECT_EQ(p, nullptr);
}

TEST(Create, AnUnknownCrewSchedulerIsReportedOnceAndTheDefaultUsed) {
    // An environment variable must not break a working program: a typo is reported once on
    // stderr (variable, value, the accepted values) and the default is used.
    const char *old = std::getenv("CREW_SCHEDULER");
    std::string saved = old ? old : "";
    setenv("CREW_SCHEDULER", "SHARED", 1); // case matters: not a name
    testing::internal::CaptureStderr();
    crew_pool *p = nullptr;
    ASSERT_EQ(crew_create(&p, nullptr), CREW_OK);
    std::atomic<int> n{0};
    ASSERT_EQ(crew_submit(p, count, &n, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    setenv("CREW_SCHEDULER", "work-stealing", 1);
    ASSERT_EQ(crew_create(&p, nullptr), CREW_OK); // reported once per process only
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    std::string err = testing::internal::GetCapturedStderr();
    if (old)
        setenv("CREW_SCHEDULER", saved.c_str(), 1);
    else
        unsetenv("CREW_SCHEDULER");
    // Once per process: a repeated run (--gtest_repeat) finds it reported already.
    static bool reported = false;
    if (reported) {
        EXPECT_EQ(err, "");
    } else {
        EXPECT_NE(err.find("CREW_SCHEDULER=SHARED"), std::string::npos) << err;
        EXPECT_NE(err.find("steal, shared, lockfree, per-worker"), std::string::npos) << err;
        EXPECT_EQ(err.find("work-stealing"), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
    reported = true;
    // An explicit choice in the configuration never reads the variable.
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.scheduler = 99;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EINVAL);
}

TEST(Create, ManyPoolsCoexist) {
    std::vector<crew_pool *> pools;
    for (int i = 0; i < 8; i++)
        pools.push_back(make_pool(2));
    std::atomic<int> n{0};
    for (auto *p : pools)
        for (int i = 0; i < 100; i++)
            ASSERT_EQ(crew_submit(p, count, &n, 0, nullptr), CREW_OK);
    for (auto *p : pools)
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), 800);
    for (auto *p : pools)
        EXPECT_EQ(crew_destroy(p), CREW_OK);
}

TEST(Create, WorkersCarryNames) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 3;
    cfg.name = "tname";
    crew_pool *p = nullptr;
    ASSERT_EQ(crew_create(&p, &cfg), CREW_OK);
    Gate gate;
    for (int i = 0; i < 3; i++)
        crew_submit(p, Gate::block, &gate, 0, nullptr);
    gate.wait_arrivals(3); // every worker has started and named itself
    int named = 0;
    for (auto &n : crewtest::thread_names())
        if (n.rfind("tname-", 0) == 0 && n.find("-w") != std::string::npos)
            named++;
    gate.open();
    EXPECT_EQ(named, 3);
    crew_destroy(p);
}

TEST(Submit, RejectsBadInputAndAcceptsNothing) {
    crew_pool *p = make_pool(2);
    std::atomic<int> n{0};
    EXPECT_EQ(crew_submit(nullptr, count, &n, 0, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_submit(p, nullptr, &n, 0, nullptr), CREW_EINVAL);
    crew_task t[3] = {};
    t[0].fn = count, t[0].arg = &n;
    t[2].fn = count, t[2].arg = &n; // t[1].fn is NULL
    EXPECT_EQ(crew_enqueue_tasks(p, t, 3, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_tasks(p, nullptr, 3, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_tasks(p, t, 0, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_tasks(nullptr, t, 1, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_task(p, &t[1], nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_task(p, nullptr, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_tasks_wait(p, t, 3), CREW_EINVAL);
    EXPECT_EQ(crew_enqueue_tasks_wait(p, t, 0), CREW_EINVAL);
    crew_handle never = {12345, 1};
    EXPECT_EQ(crew_submit(p, count, &n, 0, &never), CREW_EINVAL);
    crew_handle slot0 = {0, 7};
    EXPECT_EQ(crew_submit(p, count, &n, 0, &slot0), CREW_EINVAL);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), 0); // nothing of a rejected call ran
    crew_destroy(p);
}

TEST(Submit, AllFormsRun) {
    crew_pool *p = make_pool(2);
    std::atomic<int> n{0};
    crew_task one = {};
    one.fn = count, one.arg = &n;
    std::vector<crew_task> many(100);
    for (auto &t : many)
        t.fn = count, t.arg = &n, t.priority = 3;
    std::vector<crew_task> waited(50);
    for (auto &t : waited)
        t.fn = count, t.arg = &n;
    EXPECT_EQ(crew_submit(p, count, &n, 7, nullptr), CREW_OK);
    EXPECT_EQ(crew_enqueue_task(p, &one, nullptr), CREW_OK);
    EXPECT_EQ(crew_enqueue_tasks(p, many.data(), many.size(), nullptr), CREW_OK);
    EXPECT_EQ(crew_enqueue_tasks_wait(p, waited.data(), waited.size()), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), 152);
    crew_destroy(p);
}

TEST(Submit, TaskMayFreeItselfOnceStarted) {
    crew_pool *p = make_pool(2);
    std::atomic<int> n{0};
    struct Self {
        crew_task task;
        std::atomic<int> *n;
    };
    for (int i = 0; i < 1000; i++) {
        auto *s = new Self{};
        s->n = &n;
        s->task.fn = [](void *a) {
            auto *self = static_cast<Self *>(a);
            self->n->fetch_add(1);
            delete self; // the pool must not touch the task after this
        };
        s->task.arg = s;
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_enqueue_task(p, &s->task, &g), CREW_OK);
    }
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), 1000);
    crew_destroy(p);
}

TEST(Wait, RejectsBadHandles) {
    crew_pool *p = make_pool(1);
    EXPECT_EQ(crew_wait(p, CREW_HANDLE_NONE), CREW_EINVAL);
    EXPECT_EQ(crew_wait(nullptr, crew_handle{1, 1}), CREW_EINVAL);
    EXPECT_EQ(crew_wait(p, crew_handle{1, 1}), CREW_EINVAL); // no slot issued yet
    EXPECT_EQ(crew_wait(p, crew_handle{0xffffffffu, 3}), CREW_EINVAL);
    EXPECT_EQ(crew_wait_all(nullptr), CREW_EINVAL);
    crew_destroy(p);
}

TEST(Wait, GenerationZeroIsNeverIssued) {
    // A handle {slot, 0} names a slot the pool issued, but no group ever gets generation 0:
    // every call that takes a handle rejects it as never issued (not as cancelled or stale).
    crew_pool *p = make_pool(1);
    std::atomic<int> n{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, count, &n, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    ASSERT_NE(g.gen, 0u);
    crew_handle forged{g.slot, 0};
    EXPECT_EQ(crew_wait(p, forged), CREW_EINVAL);
    EXPECT_EQ(crew_cancel(p, forged), CREW_EINVAL);
    EXPECT_EQ(crew_submit(p, count, &n, 0, &forged), CREW_EINVAL);
    crew_task t{count, &n, 0, 0, {}};
    EXPECT_EQ(crew_enqueue_tasks(p, &t, 1, &forged), CREW_EINVAL);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(n.load(), 1);
    crew_destroy(p);
}

TEST(Wait, ForeignHandleOfAnotherPoolIsRejectedWhenNeverIssued) {
    crew_pool *a = make_pool(1), *b = make_pool(1);
    std::atomic<int> n{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(a, count, &n, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait(b, g), CREW_EINVAL); // b never issued any slot
    EXPECT_EQ(crew_wait(a, g), CREW_OK);
    crew_destroy(a);
    crew_destroy(b);
}

TEST(Wait, AHandleOfAnotherLivePoolIsRejected) {
    // Both pools have issued slots, so the other pool's handle names a slot each has: it must
    // still be refused (not taken for a finished group of this pool) while a's task runs.
    crew_pool *a = make_pool(1), *b = make_pool(1);
    std::atomic<int> n{0};
    crew_handle gb = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(b, count, &n, 0, &gb), CREW_OK);
    ASSERT_EQ(crew_wait(b, gb), CREW_OK);
    Gate gate;
    crew_handle ga = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(a, Gate::block, &gate, 0, &ga), CREW_OK);
    gate.wait_arrivals(1); // a's task is running
    EXPECT_NE(ga.slot, gb.slot); // the pools' handles differ, even for the same slot number
    EXPECT_EQ(crew_wait(b, ga), CREW_EINVAL);
    EXPECT_EQ(crew_cancel(b, ga), CREW_EINVAL);
    crew_handle join = ga;
    EXPECT_EQ(crew_submit(b, count, &n, 0, &join), CREW_EINVAL);
    EXPECT_EQ(crew_wait(a, gb), CREW_EINVAL);
    gate.open();
    EXPECT_EQ(crew_wait(a, ga), CREW_OK);
    crew_destroy(a);
    crew_destroy(b);
}

struct InTask {
    crew_pool *p;
    int wait_all_rc = 1, shutdown_rc = 1, destroy_rc = 1, resize_rc = 1;
};

TEST(Wait, CallsThatWouldWaitForTheirOwnTaskReportDeadlock) {
    crew_pool *p = make_pool(2);
    InTask it{p};
    ASSERT_EQ(crew_submit(
                  p,
                  [](void *a) {
                      auto *it = static_cast<InTask *>(a);
                      it->wait_all_rc = crew_wait_all(it->p);
                      it->shutdown_rc = crew_shutdown(it->p, CREW_DRAIN);
                      it->destroy_rc = crew_destroy(it->p);
                      it->resize_rc = crew_resize(it->p, 3); // allowed from a task
                  },
                  &it, 0, nullptr),
              CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(it.wait_all_rc, CREW_EDEADLK);
    EXPECT_EQ(it.shutdown_rc, CREW_EDEADLK);
    EXPECT_EQ(it.destroy_rc, CREW_EDEADLK);
    EXPECT_EQ(it.resize_rc, CREW_OK);
    EXPECT_EQ(crew_size(p), 3u);
    crew_destroy(p);
}

TEST(Resize, RejectsBadInput) {
    crew_pool *p = make_pool(2);
    EXPECT_EQ(crew_resize(p, 0), CREW_EINVAL);
    EXPECT_EQ(crew_resize(p, CREW_MAX_THREADS + 1), CREW_EINVAL);
    EXPECT_EQ(crew_resize(nullptr, 2), CREW_EINVAL);
    EXPECT_EQ(crew_size(nullptr), 0u);
    EXPECT_EQ(crew_size(p), 2u);
    crew_destroy(p);
}

TEST(Shutdown, RejectsBadInputAndLaterCalls) {
    crew_pool *p = make_pool(2);
    EXPECT_EQ(crew_shutdown(nullptr, CREW_DRAIN), CREW_EINVAL);
    EXPECT_EQ(crew_shutdown(p, 7), CREW_EINVAL);
    EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); // again: harmless
    std::atomic<int> n{0};
    crew_task t = {};
    t.fn = count, t.arg = &n;
    crew_handle g = CREW_HANDLE_NONE;
    EXPECT_EQ(crew_submit(p, count, &n, 0, nullptr), CREW_ESHUTDOWN);
    EXPECT_EQ(crew_enqueue_task(p, &t, &g), CREW_ESHUTDOWN);
    EXPECT_EQ(crew_enqueue_tasks_wait(p, &t, 1), CREW_ESHUTDOWN);
    EXPECT_EQ(crew_resize(p, 4), CREW_ESHUTDOWN);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(g.slot, 0u); // no group was opened
    EXPECT_EQ(n.load(), 0);
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    EXPECT_EQ(crew_destroy(nullptr), CREW_OK);
}

TEST(Shutdown, NoopTaskPoolDestroysCleanly) {
    for (int i = 0; i < 50; i++) {
        crew_pool *p = make_pool(3);
        for (int k = 0; k < 10; k++)
            crew_submit(p, noop, nullptr, 0, nullptr);
        EXPECT_EQ(crew_destroy(p), CREW_OK);
    }
}

struct SelfWait {
    crew_pool *p;
    crew_handle g = CREW_HANDLE_NONE;
    int rc = 1;
};

TEST(Wait, ATaskWaitingForItsOwnGroupGetsDeadlockNotAHang) {
    crew_pool *p = make_pool(2);
    SelfWait sw{p};
    Gate gate;
    // Open the group with a gated task so sw.g is set before the self-waiting task runs.
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &sw.g), CREW_OK);
    ASSERT_EQ(crew_submit(
                  p,
                  [](void *a) {
                      auto *s = static_cast<SelfWait *>(a);
                      s->rc = crew_wait(s->p, s->g);
                  },
                  &sw, 0, &sw.g),
              CREW_OK);
    gate.open();
    EXPECT_EQ(crew_wait(p, sw.g), CREW_OK);
    EXPECT_EQ(sw.rc, CREW_EDEADLK);
    crew_destroy(p);
}

TEST(Resize, RacingAShutdownNeverReportsSuccessOnAClosedPool) {
    for (int round = 0; round < 50; round++) {
        crew_pool *p = make_pool(1);
        std::atomic<int> rc{1};
        std::thread r([&] { rc = crew_resize(p, 4); });
        EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
        r.join();
        EXPECT_TRUE(rc == CREW_OK || rc == CREW_ESHUTDOWN) << rc;
        EXPECT_EQ(crew_resize(p, 2), CREW_ESHUTDOWN);
        EXPECT_EQ(crew_destroy(p), CREW_OK);
    }
}

TEST(Create, ThreadCreationFailureIsReportedAndLeaksNothing) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 3;
    cfg.stack_size = size_t(1) << 42; // 4 TiB per stack: the system refuses to map it
    crew_pool *p = nullptr;
    EXPECT_EQ(crew_create(&p, &cfg), CREW_EAGAIN);
    EXPECT_EQ(p, nullptr);
}
