// test_errors.cpp -- crew_last_error: every failing path of the public calls leaves a detail that
// names the function and the cause; successful calls leave it unchanged; it is per thread; and
// crew::error's what() carries it.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "common.h"
#include "crew.hpp"

using crewtest::Gate;
using crewtest::make_pool;

namespace {

void noop(void *) {}
void range_noop(size_t, size_t, void *) {}
void fold_noop(size_t, size_t, void *, void *) {}
void combine_noop(void *, const void *, void *) {}
int keep_all(const void *, void *) { return 1; }

// The detail of the call that returned rc: rc must be `code`, and the detail must contain
// every one of the given pieces (the function's name and the cause).
::testing::AssertionResult Fails(int rc, int code, std::initializer_list<const char *> pieces) {
    if (rc != code)
        return ::testing::AssertionFailure()
               << "returned " << crew_err_name(rc) << ", expected " << crew_err_name(code)
               << " (detail: \"" << crew_last_error() << "\")";
    std::string d = crew_last_error();
    for (const char *piece : pieces)
        if (d.find(piece) == std::string::npos)
            return ::testing::AssertionFailure()
                   << "detail \"" << d << "\" lacks \"" << piece << "\"";
    return ::testing::AssertionSuccess();
}

crew_config config(unsigned threads) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    return cfg;
}

int create(const crew_config &cfg) {
    crew_pool *p = nullptr;
    int rc = crew_create(&p, &cfg);
    if (rc == CREW_OK)
        crew_destroy(p);
    return rc;
}

} // namespace

TEST(LastError, EmptyOnAFreshThreadAndNeverNull) {
    std::string seen = "unset";
    std::thread([&] {
        const char *e = crew_last_error();
        seen = e ? e : "NULL";
    }).join();
    EXPECT_EQ(seen, "");
}

TEST(LastError, CreateSaysWhichSettingIsWrong) {
    EXPECT_TRUE(Fails(crew_create(nullptr, nullptr), CREW_EINVAL, {"crew_create: out is NULL"}));
    crew_config c = config(CREW_MAX_THREADS + 1);
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.threads is 4097"}));
    c = config(1);
    c.scheduler = 99;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.scheduler is 99"}));
    c = config(1);
    c.lock = 7;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.lock is 7"}));
    c = config(1);
    c.max_blocking = CREW_MAX_THREADS + 1;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.max_blocking is 4097"}));
    c = config(1);
    c.full_policy = 9;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.full_policy is 9"}));
    c = config(1);
    c.autosize = 5;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.autosize is 5"}));
    c = config(1);
    c.autosize = CREW_AUTOSIZE_AIT;
    c.max_threads = 0;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.max_threads is 0"}));
    c.max_threads = 2;
    c.min_threads = 3;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL,
                      {"crew_create: crew_config.min_threads (3) is above max_threads (2)"}));
}

TEST(LastError, CreateSaysWhatIsWrongWithTheHooks) {
    crew_config c = config(1);
    crew_hooks h{};
    c.hooks = &h;
    h.size = 1;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.hooks->size is 1"}));
    h.size = sizeof h;
    h.ncpus = 2;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL,
                      {"crew_create: crew_hooks.cpus is NULL but ncpus is 2"}));
    int cpus[] = {0, -1};
    h.cpus = cpus;
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_hooks.cpus[1] is -1"}));
}

TEST(LastError, CreateSaysTheStackSizeIsRefused) {
    crew_config c = config(1);
    c.stack_size = 1; // below PTHREAD_STACK_MIN
    EXPECT_TRUE(Fails(create(c), CREW_EINVAL, {"crew_create: crew_config.stack_size 1"}));
}

TEST(LastError, Resize) {
    crew_pool *p = make_pool(1);
    EXPECT_TRUE(Fails(crew_resize(p, 0), CREW_EINVAL,
                      {"crew_resize: threads is 0; a pool needs at least 1"}));
    EXPECT_TRUE(Fails(crew_resize(p, CREW_MAX_THREADS + 1), CREW_EINVAL,
                      {"crew_resize: threads is 4097"}));
    EXPECT_TRUE(Fails(crew_resize(nullptr, 1), CREW_EINVAL, {"crew_resize: the pool is NULL"}));
    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_TRUE(Fails(crew_resize(p, 2), CREW_ESHUTDOWN, {"crew_resize: the pool is shutting"}));
    EXPECT_TRUE(Fails(crew_pause(p), CREW_ESHUTDOWN, {"crew_pause: the pool is shutting"}));
    crew_destroy(p);
}

TEST(LastError, ShutdownPauseResumeDestroy) {
    EXPECT_TRUE(Fails(crew_shutdown(nullptr, CREW_DRAIN), CREW_EINVAL,
                      {"crew_shutdown: the pool is NULL"}));
    crew_pool *p = make_pool(1);
    EXPECT_TRUE(Fails(crew_shutdown(p, 42), CREW_EINVAL, {"crew_shutdown: how is 42"}));
    EXPECT_TRUE(Fails(crew_pause(nullptr), CREW_EINVAL, {"crew_pause: the pool is NULL"}));
    EXPECT_TRUE(Fails(crew_resume(nullptr), CREW_EINVAL, {"crew_resume: the pool is NULL"}));
    struct ctx {
        crew_pool *p = nullptr;
        int shutdown_rc = 0, destroy_rc = 0, wait_all_rc = 0;
        std::string shutdown, destroy, wait_all;
    } c;
    c.p = p;
    ASSERT_EQ(crew_submit(p,
                          [](void *a) {
                              auto *x = static_cast<ctx *>(a);
                              x->shutdown_rc = crew_shutdown(x->p, CREW_DRAIN);
                              x->shutdown = crew_last_error();
                              x->destroy_rc = crew_destroy(x->p);
                              x->destroy = crew_last_error();
                              x->wait_all_rc = crew_wait_all(x->p);
                              x->wait_all = crew_last_error();
                          },
                          &c, 0, nullptr),
              CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(c.shutdown_rc, CREW_EDEADLK);
    EXPECT_NE(c.shutdown.find("crew_shutdown: called from a task of this pool"), std::string::npos)
        << c.shutdown;
    EXPECT_EQ(c.destroy_rc, CREW_EDEADLK);
    EXPECT_NE(c.destroy.find("crew_destroy: called from a task"), std::string::npos) << c.destroy;
    EXPECT_EQ(c.wait_all_rc, CREW_EDEADLK);
    EXPECT_NE(c.wait_all.find("crew_wait_all: called from a task of this pool"),
              std::string::npos)
        << c.wait_all;
    crew_destroy(p);
}

TEST(LastError, SubmitArguments) {
    crew_pool *p = make_pool(1);
    EXPECT_TRUE(Fails(crew_submit(nullptr, noop, nullptr, 0, nullptr), CREW_EINVAL,
                      {"crew_submit: the pool is NULL"}));
    EXPECT_TRUE(Fails(crew_submit(p, nullptr, nullptr, 0, nullptr), CREW_EINVAL,
                      {"crew_submit: fn is NULL"}));
    EXPECT_TRUE(Fails(crew_submit_ex(p, noop, nullptr, 0, 0x100, nullptr), CREW_EINVAL,
                      {"crew_submit_ex: flags is 0x100"}));
    EXPECT_TRUE(Fails(crew_try_submit(p, nullptr, nullptr, 0, nullptr), CREW_EINVAL,
                      {"crew_try_submit: fn is NULL"}));
    EXPECT_TRUE(Fails(crew_submit_timed(p, nullptr, nullptr, 0, nullptr, 1), CREW_EINVAL,
                      {"crew_submit_timed: fn is NULL"}));
    EXPECT_TRUE(Fails(crew_submit_deadline(p, nullptr, nullptr, 0, 0, 0, nullptr), CREW_EINVAL,
                      {"crew_submit_deadline: fn is NULL"}));
    crew_handle forged = {12345, 7};
    EXPECT_TRUE(Fails(crew_submit(p, noop, nullptr, 0, &forged), CREW_EINVAL,
                      {"crew_submit: the handle {12345, 7} is not one this pool issued"}));
    crew_task t[2] = {{noop, nullptr, 0, 0, {}}, {nullptr, nullptr, 0, 0, {}}};
    EXPECT_TRUE(Fails(crew_enqueue_tasks(p, nullptr, 1, nullptr), CREW_EINVAL,
                      {"crew_enqueue_tasks: the task array is NULL"}));
    EXPECT_TRUE(Fails(crew_enqueue_tasks(p, t, 0, nullptr), CREW_EINVAL,
                      {"crew_enqueue_tasks: n is 0"}));
    EXPECT_TRUE(Fails(crew_enqueue_tasks(p, t, 2, nullptr), CREW_EINVAL,
                      {"crew_enqueue_tasks: task 1's fn is NULL"}));
    EXPECT_TRUE(Fails(crew_enqueue_task(p, &t[1], nullptr), CREW_EINVAL,
                      {"crew_enqueue_task: task 0's fn is NULL"}));
    EXPECT_TRUE(Fails(crew_enqueue_tasks_ex(p, t, 1, nullptr, 0x8), CREW_EINVAL,
                      {"crew_enqueue_tasks_ex: flags is 0x8"}));
    EXPECT_TRUE(Fails(crew_enqueue_tasks_ex(p, t, 1, &forged, 0), CREW_EINVAL,
                      {"crew_enqueue_tasks_ex: the handle {12345, 7}"}));
    EXPECT_TRUE(Fails(crew_enqueue_tasks_wait(p, t, 2), CREW_EINVAL,
                      {"crew_enqueue_tasks_wait: task 1's fn is NULL"}));
    crew_destroy(p);
}

TEST(LastError, SubmitToAFinishedCancelledOrClosedTarget) {
    crew_pool *p = make_pool(1);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, noop, nullptr, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_TRUE(Fails(crew_cancel(p, g), CREW_ESTALE, {"crew_cancel: the group {", "finished"}));
    crew_handle forged = {g.slot, g.gen + 100};
    EXPECT_TRUE(Fails(crew_submit(p, noop, nullptr, 0, &forged), CREW_EINVAL,
                      {"crew_submit: the handle {", "not one this pool issued"}));

    Gate gate;
    gate.hold(p, 1);
    crew_handle c = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, noop, nullptr, 0, &c), CREW_OK);
    ASSERT_EQ(crew_cancel(p, c), CREW_OK);
    // Whether its task is gone already (a queue gives it up at once) or not (a deque keeps it
    // until a thread comes to it), a cancelled group takes no more tasks.
    EXPECT_TRUE(Fails(crew_submit(p, noop, nullptr, 0, &c), CREW_ECANCELED,
                      {"crew_submit: the group {", "} was cancelled"}));
    gate.open();
    EXPECT_TRUE(Fails(crew_wait(p, c), CREW_ECANCELED, {"crew_wait: the group {", "lost tasks"}));

    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    EXPECT_TRUE(Fails(crew_submit(p, noop, nullptr, 0, nullptr), CREW_ESHUTDOWN,
                      {"crew_submit: the pool is shutting down or shut down"}));
    crew_task t = {noop, nullptr, 0, 0, {}};
    EXPECT_TRUE(Fails(crew_enqueue_tasks_wait(p, &t, 1), CREW_ESHUTDOWN,
                      {"crew_enqueue_tasks_wait: the pool is shutting down"}));
    crew_destroy(p);
}

TEST(LastError, FullQueue) {
    crew_config cfg = config(1);
    cfg.queue_capacity = 1;
    cfg.full_policy = CREW_FULL_FAIL;
    crew_pool *p = make_pool(cfg);
    Gate gate;
    gate.hold(p, 1);
    crew_task t[2] = {{noop, nullptr, 0, 0, {}}, {noop, nullptr, 0, 0, {}}};
    EXPECT_TRUE(Fails(crew_enqueue_tasks(p, t, 2, nullptr), CREW_EFULL,
                      {"crew_enqueue_tasks: 2 tasks are more than the queue can ever hold",
                       "queue_capacity 1"}));
    ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK); // the one place
    EXPECT_TRUE(Fails(crew_submit(p, noop, nullptr, 0, nullptr), CREW_EFULL,
                      {"crew_submit: the queue is full", "CREW_FULL_FAIL"}));
    EXPECT_TRUE(Fails(crew_try_submit(p, noop, nullptr, 0, nullptr), CREW_EFULL,
                      {"crew_try_submit: the queue is full", "never waits"}));
    gate.open();
    crew_wait_all(p);
    crew_destroy(p);

    cfg.full_policy = CREW_FULL_BLOCK;
    p = make_pool(cfg);
    Gate gate2;
    gate2.hold(p, 1);
    ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
    EXPECT_TRUE(Fails(crew_submit_timed(p, noop, nullptr, 0, nullptr, 10), CREW_ETIMEDOUT,
                      {"crew_submit_timed: the queue", "before the time limit"}));
    gate2.open();
    crew_wait_all(p);
    crew_destroy(p);
}

TEST(LastError, WaitAndCancel) {
    crew_pool *p = make_pool(1);
    crew_handle forged = {12345, 7};
    EXPECT_TRUE(Fails(crew_wait(nullptr, forged), CREW_EINVAL, {"crew_wait: the pool is NULL"}));
    EXPECT_TRUE(Fails(crew_wait(p, forged), CREW_EINVAL,
                      {"crew_wait: the handle {12345, 7} is not one this pool issued"}));
    EXPECT_TRUE(Fails(crew_wait(p, CREW_HANDLE_NONE), CREW_EINVAL,
                      {"crew_wait: the handle is CREW_HANDLE_NONE"}));
    EXPECT_TRUE(Fails(crew_cancel(p, forged), CREW_EINVAL, {"crew_cancel: the handle {12345, 7}"}));
    EXPECT_TRUE(Fails(crew_wait_all(nullptr), CREW_EINVAL, {"crew_wait_all: the pool is NULL"}));

    // A task waiting for its own group.
    struct ctx {
        crew_pool *p = nullptr;
        crew_handle g = CREW_HANDLE_NONE;
        std::atomic<bool> ready{false};
        int rc = 0;
        std::string detail;
    } c;
    c.p = p;
    ASSERT_EQ(crew_submit(p,
                          [](void *a) {
                              auto *x = static_cast<ctx *>(a);
                              while (!x->ready.load())
                                  std::this_thread::yield();
                              x->rc = crew_wait(x->p, x->g);
                              x->detail = crew_last_error();
                          },
                          &c, 0, &c.g),
              CREW_OK);
    c.ready = true;
    ASSERT_EQ(crew_wait(p, c.g), CREW_OK);
    EXPECT_EQ(c.rc, CREW_EDEADLK);
    EXPECT_NE(c.detail.find("crew_wait: called from inside a task of the group {"),
              std::string::npos)
        << c.detail;

    // A task that could not start by its start-by time.
    Gate gate;
    gate.hold(p, 1);
    crew_handle e = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_deadline(p, noop, nullptr, 0, 0, crew_now_ns() + 1000000, &e), CREW_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.open();
    EXPECT_TRUE(Fails(crew_wait(p, e), CREW_EEXPIRED,
                      {"crew_wait: the group {", "start-by time"}));

    // crew_wait_all after a cancelling shutdown dropped a task.
    Gate gate2;
    gate2.hold(p, 1);
    ASSERT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
    std::thread closer([&] { crew_shutdown(p, CREW_CANCEL); });
    while (crew_submit(p, noop, nullptr, 0, nullptr) == CREW_OK) // until the shutdown began
        std::this_thread::yield();
    gate2.open();
    closer.join();
    EXPECT_TRUE(Fails(crew_wait_all(p), CREW_ECANCELED,
                      {"crew_wait_all: the pool has dropped tasks"}));
    crew_destroy(p);
}

TEST(LastError, StatisticsAndDiagnose) {
    crew_pool *p = make_pool(1);
    EXPECT_TRUE(Fails(crew_set_monitoring(nullptr, 1), CREW_EINVAL,
                      {"crew_set_monitoring: the pool is NULL"}));
    crew_stats s{};
    EXPECT_TRUE(Fails(crew_stats_get(nullptr, &s), CREW_EINVAL, {"crew_stats_get: the pool is NULL"}));
    EXPECT_TRUE(Fails(crew_stats_get(p, nullptr), CREW_EINVAL, {"crew_stats_get: out is NULL"}));
    s.size = 3;
    EXPECT_TRUE(Fails(crew_stats_get(p, &s), CREW_EINVAL,
                      {"crew_stats_get: out->size is 3; set it to sizeof(crew_stats)"}));
    size_t n = 0;
    EXPECT_TRUE(Fails(crew_stats_threads(nullptr, nullptr, 0, &n), CREW_EINVAL,
                      {"crew_stats_threads: the pool is NULL"}));
    EXPECT_TRUE(Fails(crew_stats_threads(p, nullptr, 0, nullptr), CREW_EINVAL,
                      {"crew_stats_threads: n is NULL"}));
    EXPECT_TRUE(Fails(crew_stats_threads(p, nullptr, 3, &n), CREW_EINVAL,
                      {"crew_stats_threads: out is NULL but cap is 3"}));
    EXPECT_TRUE(Fails(crew_stats_reset(nullptr), CREW_EINVAL, {"crew_stats_reset: the pool is NULL"}));
    EXPECT_TRUE(Fails(crew_stats_write_json(nullptr, stdout), CREW_EINVAL,
                      {"crew_stats_write_json: the pool is NULL"}));
    EXPECT_TRUE(Fails(crew_stats_write_json(p, nullptr), CREW_EINVAL,
                      {"crew_stats_write_json: f is NULL"}));
    EXPECT_TRUE(Fails(crew_diagnose(nullptr, stdout), CREW_EINVAL,
                      {"crew_diagnose: the pool is NULL"}));
    std::FILE *ro = std::fopen("/dev/null", "r"); // writes fail: the error indicator is set
    ASSERT_NE(ro, nullptr);
    EXPECT_TRUE(Fails(crew_stats_write_json(p, ro), CREW_EIO,
                      {"crew_stats_write_json: writing to the stream failed"}));
    EXPECT_TRUE(Fails(crew_diagnose(p, ro), CREW_EIO, {"crew_diagnose: writing the report failed"}));
    std::fclose(ro);
    crew_destroy(p);
}

TEST(LastError, Parallel) {
    crew_pool *p = make_pool(1);
    EXPECT_TRUE(Fails(crew_parallel_for(nullptr, 0, 1, 0, range_noop, nullptr), CREW_EINVAL,
                      {"crew_parallel_for: the pool is NULL"}));
    EXPECT_TRUE(Fails(crew_parallel_for(p, 0, 1, 0, nullptr, nullptr), CREW_EINVAL,
                      {"crew_parallel_for: fn is NULL"}));
    EXPECT_TRUE(Fails(crew_parallel_for(p, 5, 1, 0, range_noop, nullptr), CREW_EINVAL,
                      {"crew_parallel_for: begin (5) is after end (1)"}));
    int r = 0;
    EXPECT_TRUE(Fails(crew_parallel_reduce(p, 0, 1, 0, &r, 0, fold_noop, combine_noop, nullptr),
                      CREW_EINVAL, {"crew_parallel_reduce: size is 0"}));
    EXPECT_TRUE(Fails(crew_parallel_reduce(p, 0, 1, 0, &r, sizeof r, fold_noop, nullptr, nullptr),
                      CREW_EINVAL, {"crew_parallel_reduce: combine is NULL"}));
    EXPECT_TRUE(Fails(crew_parallel_reduce(p, 0, 1, 0, nullptr, sizeof r, fold_noop, combine_noop,
                                           nullptr),
                      CREW_EINVAL, {"crew_parallel_reduce: result is NULL"}));
    int in[4] = {1, 2, 3, 4}, out[4];
    size_t kept = 0;
    EXPECT_TRUE(Fails(crew_parallel_filter(p, in, 4, 0, out, &kept, keep_all, nullptr),
                      CREW_EINVAL, {"crew_parallel_filter: elem_size is 0"}));
    EXPECT_TRUE(Fails(crew_parallel_filter(p, nullptr, 4, sizeof(int), out, &kept, keep_all,
                                           nullptr),
                      CREW_EINVAL, {"crew_parallel_filter: in is NULL but n is 4"}));
    EXPECT_TRUE(Fails(crew_parallel_filter(p, in, 4, sizeof(int), out, nullptr, keep_all,
                                           nullptr),
                      CREW_EINVAL, {"crew_parallel_filter: out_n is NULL"}));
    EXPECT_TRUE(Fails(crew_parallel_filter(p, in, 4, sizeof(int), out, &kept, nullptr, nullptr),
                      CREW_EINVAL, {"crew_parallel_filter: keep is NULL"}));
    crew_destroy(p);
}

TEST(LastError, ForkedChild) {
    crew_pool *p = make_pool(1);
    std::fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) { // the child: no allocation (see test_fork.cpp), status 0 if all is right
        alarm(10);
        int bad = 0;
        bad |= crew_resize(p, 2) != CREW_EFORKED ||
               !std::strstr(crew_last_error(), "crew_resize: the pool was created before fork()");
        bad |= crew_submit(p, noop, nullptr, 0, nullptr) != CREW_EFORKED ||
               !std::strstr(crew_last_error(), "crew_submit: the pool was created before fork()");
        bad |= crew_wait_all(p) != CREW_EFORKED ||
               !std::strstr(crew_last_error(), "crew_wait_all: the pool was created before");
        bad |= crew_destroy(p) != CREW_EFORKED ||
               !std::strstr(crew_last_error(), "crew_destroy: the pool was created before");
        _exit(bad);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    crew_destroy(p);
}

TEST(LastError, SuccessfulCallsLeaveItUnchanged) {
    crew_pool *p = make_pool(2);
    ASSERT_EQ(crew_resize(p, 0), CREW_EINVAL);
    const std::string before = crew_last_error();
    ASSERT_NE(before, "");
    crew_handle g = CREW_HANDLE_NONE;
    EXPECT_EQ(crew_submit(p, noop, nullptr, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(crew_submit(p, noop, nullptr, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(crew_resize(p, 1), CREW_OK);
    crew_stats s;
    s.size = sizeof s;
    EXPECT_EQ(crew_stats_get(p, &s), CREW_OK);
    EXPECT_EQ(crew_parallel_for(p, 0, 100000, 1, range_noop, nullptr), CREW_OK);
    EXPECT_EQ(crew_strerror(CREW_EINVAL) != nullptr, true);
    EXPECT_EQ(crew_last_error(), before);
    EXPECT_EQ(crew_destroy(p), CREW_OK);
    EXPECT_EQ(crew_last_error(), before);
}

TEST(LastError, PerThread) {
    crew_pool *p = make_pool(1);
    ASSERT_EQ(crew_resize(p, 0), CREW_EINVAL);
    const std::string mine = crew_last_error();
    std::string theirs;
    std::thread([&] {
        (void)crew_shutdown(p, 42);
        theirs = crew_last_error();
    }).join();
    EXPECT_NE(theirs.find("crew_shutdown: how is 42"), std::string::npos) << theirs;
    EXPECT_EQ(crew_last_error(), mine);
    // A pool thread's failure (inside a task) is the pool thread's, not the submitter's.
    std::string in_task;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p,
                          [](void *a) {
                              (void)crew_wait_all(nullptr);
                              *static_cast<std::string *>(a) = crew_last_error();
                          },
                          &in_task, 0, &g),
              CREW_OK);
    // Waited for by a second thread, so this thread cannot run the task itself while helping.
    std::thread([&] { crew_wait(p, g); }).join();
    EXPECT_NE(in_task.find("crew_wait_all: the pool is NULL"), std::string::npos) << in_task;
    EXPECT_EQ(crew_last_error(), mine);
    crew_destroy(p);
}

TEST(LastError, CppErrorCarriesTheDetail) {
    crew::options o;
    o.threads = 1;
    crew::pool p(o);
    try {
        p.resize(0);
        FAIL() << "resize(0) did not throw";
    } catch (const crew::error &e) {
        std::string w = e.what();
        EXPECT_EQ(e.code(), CREW_EINVAL);
        EXPECT_EQ(w, "crew::pool::resize: threads is 0; a pool needs at least 1 (CREW_EINVAL)");
        // Captured at construction: a later failure does not change it.
        (void)crew_shutdown(nullptr, CREW_DRAIN);
        EXPECT_EQ(std::string(e.what()), w);
    }
    crew::options bad;
    bad.threads = CREW_MAX_THREADS + 1;
    try {
        crew::pool q(bad);
        FAIL() << "a pool of 4097 threads was made";
    } catch (const crew::error &e) {
        EXPECT_NE(std::string(e.what()).find("crew_config.threads is 4097"), std::string::npos)
            << e.what();
    }
}
