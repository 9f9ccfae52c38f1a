// test_fork.cpp -- what fork() does to a pool: in the child, every call on a pool made before
// the fork returns CREW_EFORKED and none hangs, even when the fork caught the parent's threads
// holding the pool's locks; a new pool in the child works; the parent's pool carries on. The
// child reports through its exit status; an alarm turns a hang into a failure.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::bump;
using crewtest::Gate;
using crewtest::make_pool;

// The sanitizers' runtimes are not fork-safe in a busy multi-threaded process: ThreadSanitizer
// cannot follow threads started in the child (its registry keeps the parent's threads, and a
// new thread that reuses one's id is fatal), and this AddressSanitizer (GCC 12) does not hold
// its allocator's lock across fork(), so a child can block forever in its first allocation if
// a parent's thread was inside one (seen under load: the child stuck in
// SizeClassAllocator64::GetFromAllocator). Under them the children check the calls on the
// parent's pool only, which allocate nothing; the release and valgrind runs check the new pool
// in the child too.
#if defined(__SANITIZE_THREAD__)
#define CREW_TEST_SANITIZED 1
extern "C" const char *__tsan_default_options() { return "die_after_fork=0"; }
#elif defined(__SANITIZE_ADDRESS__)
#define CREW_TEST_SANITIZED 1
#else
#define CREW_TEST_SANITIZED 0
#endif

namespace {

void nothing(void *) {}
void range_sum(size_t b, size_t e, void *arg) {
    static_cast<std::atomic<long> *>(arg)->fetch_add(long(e - b));
}

// Exit status of a child: 0, or the number of the check that failed.
int child_status(pid_t pid) {
    int st = 0;
    EXPECT_EQ(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        return 1000 + WTERMSIG(st); // 1014: SIGALRM, a hang
    return WEXITSTATUS(st);
}

// A child ends by exec'ing a shell that exits with the status: the parent's threads, stacks
// and pool are memory the child cannot free, and valgrind (which does not follow exec) must
// not count them as the child's leaks.
[[noreturn]] void child_exit(int status) {
    char cmd[32];
    std::snprintf(cmd, sizeof cmd, "exit %d", status);
    execl("/bin/sh", "sh", "-c", cmd, (char *)nullptr);
    _exit(status);
}

#define CHILD_CHECK(n, cond)                                                                      \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            std::fprintf(stderr, "child: check %d failed: %s\n", n, #cond);                      \
            child_exit(n);                                                                        \
        }                                                                                         \
    } while (0)

// In the child: every call on the parent's pool p (with g, an open group of the parent, and
// done, one that finished before the fork) fails with CREW_EFORKED; then a new pool works.
// Ends through child_exit.
[[noreturn]] void child(crew_pool *p, crew_handle g, crew_handle done) {
    alarm(120);
    std::atomic<long> n{0};
    crew_handle h = CREW_HANDLE_NONE;
    crew_task tasks[4];
    for (auto &t : tasks)
        t = crew_task{bump, &n, 0, 0, {}};
    CHILD_CHECK(1, crew_submit(p, bump, &n, 0, nullptr) == CREW_EFORKED);
    CHILD_CHECK(2, crew_submit(p, bump, &n, 0, &h) == CREW_EFORKED);
    CHILD_CHECK(3, crew_submit_ex(p, bump, &n, 0, CREW_TASK_BLOCKING, nullptr) == CREW_EFORKED);
    CHILD_CHECK(4, crew_try_submit(p, bump, &n, 0, nullptr) == CREW_EFORKED);
    CHILD_CHECK(5, crew_submit_timed(p, bump, &n, 0, nullptr, 10) == CREW_EFORKED);
    CHILD_CHECK(6, crew_submit_deadline(p, bump, &n, 0, 0, 0, nullptr) == CREW_EFORKED);
    CHILD_CHECK(7, crew_enqueue_task(p, &tasks[0], nullptr) == CREW_EFORKED);
    CHILD_CHECK(8, crew_enqueue_tasks(p, tasks, 4, &h) == CREW_EFORKED);
    CHILD_CHECK(9, crew_enqueue_tasks_wait(p, tasks, 4) == CREW_EFORKED);
    CHILD_CHECK(10, crew_wait(p, g) == CREW_EFORKED);
    CHILD_CHECK(28, crew_wait(p, done) == CREW_EFORKED); // not answered from the slot
    CHILD_CHECK(11, crew_wait_all(p) == CREW_EFORKED);
    CHILD_CHECK(12, crew_cancel(p, g) == CREW_EFORKED);
    CHILD_CHECK(13, crew_resize(p, 3) == CREW_EFORKED);
    CHILD_CHECK(14, crew_pause(p) == CREW_EFORKED);
    CHILD_CHECK(15, crew_resume(p) == CREW_EFORKED);
    crew_stats s;
    s.size = sizeof s;
    CHILD_CHECK(16, crew_stats_get(p, &s) == CREW_EFORKED);
    size_t nt = 0;
    CHILD_CHECK(17, crew_stats_threads(p, nullptr, 0, &nt) == CREW_EFORKED);
    CHILD_CHECK(18, crew_stats_reset(p) == CREW_EFORKED);
    CHILD_CHECK(19, crew_set_monitoring(p, 1) == CREW_EFORKED);
    CHILD_CHECK(20, crew_stats_write_json(p, stderr) == CREW_EFORKED);
    CHILD_CHECK(21, crew_diagnose(p, nullptr) == CREW_EFORKED);
    CHILD_CHECK(22, crew_shutdown(p, CREW_DRAIN) == CREW_EFORKED);
    CHILD_CHECK(23, crew_destroy(p) == CREW_EFORKED);
    // The parallel primitives do the work in the caller when the pool cannot take tasks.
    std::atomic<long> sum{0};
    CHILD_CHECK(24, crew_parallel_for(p, 0, 1000, 10, range_sum, &sum) == CREW_OK);
    CHILD_CHECK(25, sum.load() == 1000);
    CHILD_CHECK(26, n.load() == 0);
    CHILD_CHECK(27, crew_size(p) >= 1 && crew_paused(p) == 1);

    if (CREW_TEST_SANITIZED)
        child_exit(0);
    // A new pool in the child.
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    crew_pool *q = nullptr;
    CHILD_CHECK(30, crew_create(&q, &cfg) == CREW_OK);
    crew_handle k = CREW_HANDLE_NONE;
    crew_task more[100];
    for (auto &t : more)
        t = crew_task{bump, &n, 0, 0, {}};
    CHILD_CHECK(31, crew_enqueue_tasks(q, more, 100, &k) == CREW_OK);
    for (int i = 0; i < 1000; i++)
        CHILD_CHECK(32, crew_submit(q, bump, &n, 0, nullptr) == CREW_OK);
    CHILD_CHECK(33, crew_wait(q, k) == CREW_OK);
    CHILD_CHECK(34, crew_wait_all(q) == CREW_OK);
    CHILD_CHECK(35, n.load() == 1100);
    CHILD_CHECK(36, crew_destroy(q) == CREW_OK);
    child_exit(0);
}

// The parent's pool is busy (a stream of tasks from two producers, workers taking and
// finishing them, so the fork catches its locks held now and then), and one group stays open
// on a gate. Several forks in a row; each child checks everything above.
TEST(Fork, ChildGetsEforkedNeverHangsAndANewPoolWorks) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 3;
    cfg.queue_capacity = 10000; // the bounded queue's admission too
    cfg.monitoring = 1;
    crew_pool *p = make_pool(cfg);
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, &g), CREW_OK);
    gate.wait_arrivals(1);
    std::atomic<long> early{0};
    crew_handle done = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, bump, &early, 0, &done), CREW_OK);
    ASSERT_EQ(crew_wait(p, done), CREW_OK);
    std::atomic<bool> stop{false};
    std::atomic<long> ran{0}, submitted{0};
    std::vector<std::thread> producers;
    for (int t = 0; t < 2; t++)
        producers.emplace_back([&] {
            crew_handle h = CREW_HANDLE_NONE;
            while (!stop.load()) {
                ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK);
                submitted++;
                if (crew_submit(p, bump, &ran, 1, &h) == CREW_OK)
                    submitted++;
                else
                    h = CREW_HANDLE_NONE;
            }
        });
    for (int i = 0; i < 8; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0)
            child(p, g, done);
        EXPECT_EQ(child_status(pid), 0) << "fork " << i;
    }
    // The parent's pool is unaffected. (The gate first: with a queue per worker, the held
    // worker's share of the stream fills the bounded queue, and the producers wait for room.)
    gate.open();
    stop = true;
    for (auto &t : producers)
        t.join();
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(ran.load(), submitted.load());
    EXPECT_EQ(crew_submit(p, nothing, nullptr, 0, nullptr), CREW_OK);
    EXPECT_EQ(crew_destroy(p), CREW_OK);
}

// A graph made before the fork is the parent's: in the child, destroying or running it answers
// CREW_EFORKED and never hangs, even when the fork caught a parent's thread holding the lock of
// the pool's registry of graphs (a thread that makes, destroys and diagnoses graphs all along).
TEST(Fork, AGraphOfTheParentIsRefusedInTheChildNeverHangs) {
    crew_pool *p = make_pool(2);
    crew_graph *g0 = nullptr;
    crew_node n0 = CREW_NODE_NONE;
    ASSERT_EQ(crew_graph_create(p, &g0), CREW_OK);
    ASSERT_EQ(crew_graph_add(g0, nothing, nullptr, 0, &n0), CREW_OK);
    std::atomic<bool> stop{false};
    std::thread churn([&] {
        FILE *null = std::fopen("/dev/null", "w");
        while (!stop.load()) {
            crew_graph *g = nullptr;
            crew_graph *c = nullptr;
            if (crew_graph_create(p, &g) == CREW_OK && crew_graph_create(p, &c) == CREW_OK) {
                crew_node n = CREW_NODE_NONE;
                EXPECT_EQ(crew_graph_add_graph(g, c, 0, &n), CREW_OK); // the process's add lock
                EXPECT_EQ(crew_graph_destroy(g), CREW_OK);
                EXPECT_EQ(crew_graph_destroy(c), CREW_OK);
            }
            if (null)
                crew_diagnose(p, null);
        }
        if (null)
            std::fclose(null);
    });
    for (int i = 0; i < 20; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            alarm(120);
            crew_handle h = CREW_HANDLE_NONE;
            CHILD_CHECK(60, crew_graph_run(g0, &h) == CREW_EFORKED);
            CHILD_CHECK(61, crew_graph_destroy(g0) == CREW_EFORKED);
            if (!CREW_TEST_SANITIZED) { // a new pool's graphs work in the child
                crew_pool *q = nullptr;
                crew_graph *a = nullptr, *b = nullptr;
                crew_node n = CREW_NODE_NONE;
                CHILD_CHECK(62, crew_create(&q, nullptr) == CREW_OK);
                CHILD_CHECK(63, crew_graph_create(q, &a) == CREW_OK &&
                                    crew_graph_create(q, &b) == CREW_OK);
                CHILD_CHECK(64, crew_graph_add(b, nothing, nullptr, 0, &n) == CREW_OK);
                CHILD_CHECK(65, crew_graph_add_graph(a, b, 0, &n) == CREW_OK);
                CHILD_CHECK(66, crew_graph_run(a, &h) == CREW_OK && crew_wait(q, h) == CREW_OK);
                CHILD_CHECK(67, crew_graph_destroy(a) == CREW_OK && crew_graph_destroy(b) == CREW_OK);
                CHILD_CHECK(68, crew_destroy(q) == CREW_OK);
            }
            child_exit(0);
        }
        EXPECT_EQ(child_status(pid), 0) << "fork " << i;
    }
    stop = true;
    churn.join();
    crew_handle h = CREW_HANDLE_NONE;
    EXPECT_EQ(crew_graph_run(g0, &h), CREW_OK); // the parent's graph carries on
    EXPECT_EQ(crew_wait(p, h), CREW_OK);
    EXPECT_EQ(crew_graph_destroy(g0), CREW_OK);
    EXPECT_EQ(crew_destroy(p), CREW_OK);
}

// A fork from inside a task: the child is a copy of a worker; the pool is still the parent's.
struct ForkInTask {
    crew_pool *p;
    int status = -1;
};

void fork_from_task(void *arg) {
    auto *f = static_cast<ForkInTask *>(arg);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(120);
        CHILD_CHECK(40, crew_submit(f->p, nothing, nullptr, 0, nullptr) == CREW_EFORKED);
        CHILD_CHECK(41, crew_wait_all(f->p) == CREW_EFORKED);
        child_exit(0);
    }
    f->status = child_status(pid);
}

TEST(Fork, ForkInsideATask) {
    crew_pool *p = make_pool(2);
    ForkInTask f{p};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, fork_from_task, &f, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(f.status, 0);
    crew_destroy(p);
}

TEST(Fork, ErrorIsNamed) {
    EXPECT_STREQ(crew_err_name(CREW_EFORKED), "EFORKED");
    EXPECT_NE(std::string(crew_strerror(CREW_EFORKED)).find("fork()"), std::string::npos);
}

} // namespace
