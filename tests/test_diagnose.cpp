// test_diagnose.cpp -- crew_diagnose: each kind of stall is provoked and must be reported (a
// worker and a blocking thread busy on one task, a queue whose oldest task waits, in every
// scheduler and in a worker's own deque, a submitter blocked on a full queue, threads asleep in
// crew_wait and crew_wait_all), and nothing is reported when nothing is stuck.
#include <gtest/gtest.h>

#include <link.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "common.h"

using crewtest::diagnose;
using crewtest::Gate;
using crewtest::make_pool;
using crewtest::Report;

namespace {

void nothing(void *) {}

// A task that stays until its gate opens, under a name of its own.
void stuck_task(void *arg) { Gate::block(arg); }

bool has(const Report &r, const std::string &s) { return r.text.find(s) != std::string::npos; }

std::string address_of(void (*fn)(void *)) {
    char b[32];
    std::snprintf(b, sizeof b, "%#lx", (unsigned long)(uintptr_t)fn);
    return b;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

crew_pool *pool(unsigned threads, int monitoring, unsigned scheduler = CREW_SCHED_DEFAULT) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.monitoring = monitoring;
    cfg.scheduler = scheduler;
    return make_pool(cfg);
}

const unsigned never = 3600 * 1000; // an hour: a limit nothing reaches in a test

TEST(Diagnose, NothingStalledInAnIdlePool) {
    crew_pool *p = pool(2, 1);
    ASSERT_EQ(crew_submit(p, nothing, nullptr, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    Report r = diagnose(p, 0, 0, 0);
    EXPECT_EQ(r.findings, 0) << r.text;
    EXPECT_TRUE(has(r, "crew_diagnose: pool ")) << r.text;
    EXPECT_TRUE(has(r, "nothing stalled")) << r.text;
    EXPECT_EQ(crew_diagnose(p, nullptr), 0);
    EXPECT_EQ(crew_diagnose(nullptr, stderr), CREW_EINVAL);
    crew_destroy(p);
}

// A periodic timer's run that stays is reported under the timer's own function, not under the
// pool's internal runner of timers.
TEST(Diagnose, ABusyTimerRunIsNamedByItsFunction) {
    crew_pool *p = pool(2, 1);
    Gate gate;
    crew_timer *t = nullptr;
    ASSERT_EQ(crew_timer_start(p, 0, 1000000, CREW_TIMER_FIXED_DELAY, stuck_task, &gate, &t),
              CREW_OK);
    gate.wait_arrivals(1);
    sleep_ms(60);
    Report r = diagnose(p, 40, never, never);
    EXPECT_EQ(r.findings, 1) << r.text;
    size_t at = r.text.find("busy: worker ");
    ASSERT_NE(at, std::string::npos) << r.text;
    std::string busy = r.text.substr(at, r.text.find('\n', at) - at);
    EXPECT_NE(busy.find(address_of(stuck_task)), std::string::npos) << r.text;
    gate.open();
    EXPECT_EQ(crew_timer_stop(t), CREW_OK);
    crew_destroy(p);
}

TEST(Diagnose, WorkerAndBlockingThreadBusyOnOneTask) {
    crew_pool *p = pool(2, 1);
    Gate gate;
    ASSERT_EQ(crew_submit(p, stuck_task, &gate, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_submit_ex(p, stuck_task, &gate, 0, CREW_TASK_BLOCKING, nullptr), CREW_OK);
    gate.wait_arrivals(2);
    sleep_ms(60);
    Report r = diagnose(p, 40, never, never);
    EXPECT_EQ(r.findings, 2) << r.text;
    EXPECT_TRUE(has(r, "busy: worker ")) << r.text;
    EXPECT_TRUE(has(r, "busy: blocking thread ")) << r.text;
    EXPECT_TRUE(has(r, "has run one task for ")) << r.text;
    EXPECT_TRUE(has(r, address_of(stuck_task))) << r.text;
    EXPECT_EQ(diagnose(p, never, never, never).findings, 0) << "not yet an hour";
    gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(diagnose(p, 0, never, never).findings, 0) << "the tasks have ended";
    crew_destroy(p);
}

// A task function the dynamic linker has no symbol for (this program is not linked with
// -rdynamic, and stuck_task has internal linkage) is still found: the report gives its object
// and the offset in it, "object+0x...", which is what addr2line takes.
TEST(Diagnose, AFunctionWithoutASymbolIsNamedByObjectAndOffset) {
    crew_pool *p = pool(1, 1);
    Gate gate;
    ASSERT_EQ(crew_submit(p, stuck_task, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    sleep_ms(30);
    Report r = diagnose(p, 20, never, never);
    gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
    size_t at = r.text.find(address_of(stuck_task) + " (");
    ASSERT_NE(at, std::string::npos) << r.text;
    std::string rest = r.text.substr(at, r.text.find('\n', at) - at);
    size_t open = rest.find(" ("), plus = rest.rfind("+0x"), close = rest.rfind(')');
    ASSERT_TRUE(plus != std::string::npos && close > plus) << rest;
    std::string object = rest.substr(open + 2, plus - open - 2);
    std::string hex = rest.substr(plus + 1, close - plus - 1);
    unsigned long offset = std::strtoul(hex.c_str(), nullptr, 16);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT_GT(n, 0);
    self[n] = '\0';
    EXPECT_EQ(object, self) << rest;
    // The offset counts from where the program was loaded (the first object dl_iterate_phdr
    // lists is the program itself).
    uintptr_t bias = 0;
    dl_iterate_phdr(
        [](struct dl_phdr_info *info, size_t, void *b) {
            *static_cast<uintptr_t *>(b) = info->dlpi_addr;
            return 1;
        },
        &bias);
    EXPECT_EQ(offset, (uintptr_t)stuck_task - bias) << rest;
    // And addr2line, where it is installed, finds the function there.
    if (std::system("command -v addr2line >/dev/null 2>&1") == 0) {
        std::string cmd = "addr2line -C -f -e '" + object + "' " + hex;
        FILE *f = popen(cmd.c_str(), "r");
        ASSERT_NE(f, nullptr);
        char line[512] = {0};
        ASSERT_NE(std::fgets(line, sizeof line, f), nullptr) << cmd;
        pclose(f);
        EXPECT_NE(std::string(line).find("stuck_task"), std::string::npos) << cmd << ": " << line;
    }
}

// Without monitoring, tasks are not timed: busy workers cannot be told, and the report says why.
TEST(Diagnose, MonitoringOffSaysWhatItCannotSee) {
    crew_pool *p = pool(1, 0);
    Gate gate;
    ASSERT_EQ(crew_submit(p, stuck_task, &gate, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    sleep_ms(20);
    Report r = diagnose(p, 0, never, never);
    EXPECT_EQ(r.findings, 0) << r.text;
    EXPECT_TRUE(has(r, "monitoring is off")) << r.text;
    gate.open();
    crew_destroy(p);
}

// A queue whose oldest task waits, in every scheduler: the only worker is held, ten tasks
// submitted from outside wait behind it. Locked queues know their tasks' age at once; deques
// are judged against the previous call, so diagnose twice.
TEST(Diagnose, QueueWithOldTasksInEveryScheduler) {
    for (unsigned sched : {CREW_SCHED_STEAL, CREW_SCHED_SHARED, CREW_SCHED_SHARED_LOCKFREE,
                           CREW_SCHED_PER_WORKER}) {
        SCOPED_TRACE("scheduler " + std::to_string(sched));
        crew_pool *p = pool(1, 1, sched);
        Gate gate;
        ASSERT_EQ(crew_submit(p, stuck_task, &gate, 0, nullptr), CREW_OK);
        gate.wait_arrivals(1);
        for (int i = 0; i < 10; i++)
            ASSERT_EQ(crew_submit(p, nothing, nullptr, 0, nullptr), CREW_OK);
        diagnose(p, never, never, never); // the first look (the deques' reference point)
        sleep_ms(60);
        Report r = diagnose(p, never, 40, never);
        EXPECT_GE(r.findings, 1) << r.text; // the MultiQueue spreads them over several queues
        EXPECT_TRUE(has(r, "queue: ")) << r.text;
        EXPECT_TRUE(has(r, "has waited")) << r.text;
        gate.open();
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(diagnose(p, never, 0, never).findings, 0) << "drained";
        crew_destroy(p);
    }
}

// Work stealing: tasks a task spawned sit in its worker's own deque, behind it.
struct Spawner {
    crew_pool *p;
    Gate *gate;
};

void spawn_then_stick(void *arg) {
    auto *s = static_cast<Spawner *>(arg);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(crew_submit(s->p, nothing, nullptr, 0, nullptr), CREW_OK);
    stuck_task(s->gate);
}

TEST(Diagnose, WorkersOwnDequeStalled) {
    crew_pool *p = pool(1, 1, CREW_SCHED_STEAL);
    Gate gate;
    Spawner s{p, &gate};
    ASSERT_EQ(crew_submit(p, spawn_then_stick, &s, 0, nullptr), CREW_OK);
    gate.wait_arrivals(1);
    diagnose(p, never, 30, never); // the first look
    sleep_ms(50);
    Report r = diagnose(p, never, 30, never);
    EXPECT_EQ(r.findings, 1) << r.text;
    EXPECT_TRUE(has(r, "the deque of worker 0 holds 5 tasks")) << r.text;
    EXPECT_TRUE(has(r, "at least")) << r.text;
    gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

TEST(Diagnose, BlockedSubmitterAndWaiters) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.queue_capacity = 2;
    crew_pool *p = make_pool(cfg);
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, stuck_task, &gate, 0, &g), CREW_OK);
    gate.wait_arrivals(1);
    ASSERT_EQ(crew_submit(p, nothing, nullptr, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_submit(p, nothing, nullptr, 0, nullptr), CREW_OK); // the queue is full
    // Paused, so that the waiters (who help while they wait) do not run the queued tasks and
    // make room. The worker is held by a task that has started: the pause cannot miss it.
    ASSERT_EQ(crew_pause(p), CREW_OK);
    std::thread submitter([&] { EXPECT_EQ(crew_submit(p, nothing, nullptr, 0, nullptr), CREW_OK); });
    std::thread waiter([&] { EXPECT_EQ(crew_wait(p, g), CREW_OK); });
    std::thread all([&] { EXPECT_EQ(crew_wait_all(p), CREW_OK); });
    // Until all three sleep, and have for 40 ms (threads start late on a loaded machine).
    Report r = diagnose(p, never, never, 40);
    for (int i = 0; i < 2000 && r.findings < 3; i++) {
        sleep_ms(10);
        r = diagnose(p, never, never, 40);
    }
    EXPECT_EQ(r.findings, 3) << r.text;
    EXPECT_TRUE(has(r, "blocked: a submitter has waited")) << r.text;
    EXPECT_TRUE(has(r, "room for 1 task(s) in the full queue (capacity 2)")) << r.text;
    EXPECT_TRUE(has(r, "in crew_wait for group {" + std::to_string(g.slot) + ", " +
                           std::to_string(g.gen) + "}"))
        << r.text;
    EXPECT_TRUE(has(r, "in crew_wait_all")) << r.text;
    ASSERT_EQ(crew_resume(p), CREW_OK);
    gate.open();
    submitter.join();
    waiter.join();
    all.join();
    EXPECT_EQ(diagnose(p, never, never, 0).findings, 0) << "nobody waits any more";
    crew_destroy(p);
}

} // namespace
