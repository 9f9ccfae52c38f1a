// test_losses.cpp -- how long a group's loss is reported, and by whom: crew_cancel against a
// group's natural end (it takes effect and the wait reports CREW_ECANCELED, or it answers
// CREW_ESTALE and the wait CREW_OK: never both); a wait that has reported a loss lets the next
// submission through the handle variable start a clean group, while a loss no wait has reported
// carries over to it; and groups that lost tasks do not keep their slots for ever (a loop of
// lossy groups keeps the slot map small), task graphs' runs included.
#include <gtest/gtest.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::bump;
using crewtest::make_pool;
using crewtest::scaled;

namespace {

// Runs until *arg is set: keeps its group open for as long as the test wants.
void until_set(void *arg) {
    while (!static_cast<std::atomic<bool> *>(arg)->load())
        std::this_thread::yield();
}

uint32_t slot_index(crew_handle h) { return h.slot & 0xffffffu; } // crew.h: low 24 bits

// One task per group, each group cancelled by another thread just as its task runs (the
// submitter stays at most two groups ahead of the canceller, and the tasks take a few hundred
// nanoseconds, more or less), so that many cancels land as their group ends and its slot passes
// to a later group, which may be cancelled in turn. Whatever crew_cancel answered, the group's
// wait must agree: CREW_OK from crew_cancel means CREW_ECANCELED from the wait, CREW_ESTALE
// means the group had finished (CREW_OK). A second wait gives the same answer.
void spin_for(void *arg) {
    auto n = reinterpret_cast<uintptr_t>(arg);
    for (volatile uintptr_t i = 0; i < n; i = i + 1) {
    }
}

TEST(Losses, CancelRacingTheGroupsEndIsAllOrNothing) {
    crew_pool *p = make_pool(2);
    const size_t n = size_t(scaled(20000));
    for (int pass = 0; pass < 3; pass++) {
        std::vector<crew_handle> hs(n, CREW_HANDLE_NONE);
        std::vector<int> rc(n, 1);
        std::atomic<size_t> ready{0}, seen{0};
        std::thread canceller([&] {
            for (size_t i = 0; i < n; i++) {
                while (ready.load(std::memory_order_acquire) <= i)
                    std::this_thread::yield();
                rc[i] = crew_cancel(p, hs[i]);
                seen.store(i + 1, std::memory_order_release);
            }
        });
        for (size_t i = 0; i < n; i++) {
            while (i >= seen.load(std::memory_order_acquire) + 2)
                std::this_thread::yield();
            void *len = reinterpret_cast<void *>(uintptr_t(i * 7919 % 500));
            ASSERT_EQ(crew_submit(p, spin_for, len, 0, &hs[i]), CREW_OK);
            ready.store(i + 1, std::memory_order_release);
        }
        canceller.join();
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        size_t both = 0, taken = 0;
        for (size_t i = 0; i < n; i++) {
            ASSERT_TRUE(rc[i] == CREW_OK || rc[i] == CREW_ESTALE) << rc[i];
            int w = crew_wait(p, hs[i]);
            int again = crew_wait(p, hs[i]);
            int want = rc[i] == CREW_OK ? CREW_ECANCELED : CREW_OK;
            if (w != want || again != want)
                both++;
            taken += rc[i] == CREW_OK;
        }
        EXPECT_EQ(both, 0u) << "groups whose crew_cancel and crew_wait disagree (pass " << pass
                            << ", " << taken << " cancels took effect of " << n << ")";
    }
    crew_destroy(p);
}

// The loop of a server that puts a start-by time on every request: one request expired, and
// its wait said so; the requests after it through the same handle variable are clean.
TEST(Losses, ReportedExpiryLetsTheHandleStartClean) {
    crew_pool *p = make_pool(2);
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, 1, &g), CREW_OK); // 1 ns: long past
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    for (int i = 0; i < 100; i++) {
        uint64_t later = crew_now_ns() + 60000000000ull;
        ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, later, &g), CREW_OK);
        ASSERT_EQ(crew_wait(p, g), CREW_OK) << "round " << i << " inherited a reported loss";
    }
    EXPECT_EQ(runs.load(), 100);
    crew_destroy(p);
}

// The same for crew_cancel: once a wait has reported the cancel, the handle variable takes
// tasks again (a new group); before that, it refuses them (CREW_ECANCELED).
TEST(Losses, ReportedCancelLetsTheHandleStartClean) {
    crew_pool *p = make_pool(1);
    std::atomic<long> runs{0};
    std::atomic<bool> go{false};
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, until_set, &go, 0, &g), CREW_OK);
    ASSERT_EQ(crew_cancel(p, g), CREW_OK); // open: its task cannot end before go
    go = true;
    ASSERT_EQ(crew_wait_all(p), CREW_OK); // finished, its loss not reported yet
    EXPECT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_ECANCELED) << "a cancelled group";
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED);
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED) << "a second wait still gets the answer";
    for (int i = 0; i < 100; i++) {
        ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK) << "round " << i;
        ASSERT_EQ(crew_wait(p, g), CREW_OK) << "round " << i;
    }
    EXPECT_EQ(runs.load(), 100);
    crew_destroy(p);
}

// A task that expires unrun (its start-by time long past) in group *g, then `rounds` tasks
// through *g, each once the group before it has finished (so each opens a new group, which
// inherits the unreported loss); *top: the highest slot index *g named.
void carry_loss(crew_pool *p, std::atomic<long> *runs, crew_handle *g, int rounds,
                uint32_t *top) {
    *top = 0;
    ASSERT_EQ(crew_submit_deadline(p, bump, runs, 0, 0, 1, g), CREW_OK);
    for (int i = 0; i < rounds; i++) {
        ASSERT_EQ(crew_wait_all(p), CREW_OK); // the group has finished: the next one is new
        ASSERT_EQ(crew_submit(p, bump, runs, 0, g), CREW_OK);
        *top = std::max(*top, slot_index(*g));
    }
}

// A loss no wait has reported is never hidden: submissions through the handle variable after
// the lossy group finished open groups that inherit it, and the one wait at the end, which
// covers every task of the loop, reports it. Then the variable starts clean.
TEST(Losses, UnreportedLossCarriesOverToTheNextGroups) {
    crew_pool *p = make_pool(2);
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    uint32_t top;
    ASSERT_NO_FATAL_FAILURE(carry_loss(p, &runs, &g, 1000, &top));
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    EXPECT_EQ(runs.load(), 1000);
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK);
    EXPECT_EQ(crew_wait(p, g), CREW_OK);
    crew_destroy(p);
}

// One loss does not make a handle variable keep every later group: with the loss unreported,
// each reopen carries the marks into the new group and lets the old one go (no link), so the
// slot indices stay small over many rounds, and the one wait at the end still reports it.
TEST(Losses, CarriedLossKeepsNoChain) {
    crew_pool *p = make_pool(1);
    std::atomic<long> runs{0};
    crew_handle g = CREW_HANDLE_NONE;
    uint32_t top;
    const int rounds = 5000;
    ASSERT_NO_FATAL_FAILURE(carry_loss(p, &runs, &g, rounds, &top));
    EXPECT_EQ(crew_wait(p, g), CREW_EEXPIRED);
    EXPECT_EQ(runs.load(), rounds);
    EXPECT_LT(top, 1024u) << "groups a carried loss went through keep their slots";
    crew_destroy(p);
}

// A wait in progress when its group ended gets the group's answer, however many other losses
// are reported meanwhile: W2 is inside crew_wait(G), parked there by a signal handler so that
// it cannot look again until the end; G is cancelled and ends; W1's wait reports the cancel;
// then more losses than are kept are reported; W2 still answers CREW_ECANCELED.
sem_t park_sem, parked_sem;
// A thread's state letter in /proc (R running, S asleep, ...), '?' if unreadable.
char thread_state(pid_t tid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *close = strrchr(buf, ')'); // after the name, which may hold spaces
    return close && close[1] == ' ' ? close[2] : '?';
}
struct Gate {
    std::atomic<bool> started{false}, go{false};
};
void gate_task(void *arg) {
    auto *gate = static_cast<Gate *>(arg);
    gate->started = true;
    until_set(&gate->go);
}
void park_here(int) {
    sem_post(&parked_sem);
    while (sem_wait(&park_sem) != 0) {
    }
}

TEST(Losses, WaitInProgressGetsTheLossWhateverIsReportedMeanwhile) {
#if defined(__SANITIZE_THREAD__)
    // ThreadSanitizer holds a signal back while the thread sleeps in a raw futex call (ec.h),
    // so the waiter cannot be parked where it sleeps; the other builds run this test.
    GTEST_SKIP() << "a signal cannot park a thread asleep in a futex under ThreadSanitizer";
#endif
    crew_pool *p = make_pool(1);
    ASSERT_EQ(sem_init(&park_sem, 0, 0), 0);
    ASSERT_EQ(sem_init(&parked_sem, 0, 0), 0);
    struct sigaction sa = {}, old = {};
    sa.sa_handler = park_here;
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, gate_task, &gate, 0, &g), CREW_OK);
    while (!gate.started) // the task has started: the group ends only after go
        std::this_thread::yield();
    ASSERT_EQ(crew_cancel(p, g), CREW_OK);
    std::atomic<int> w2{1};
    std::atomic<pid_t> tid{0};
    std::thread sleeper([&] {
        tid = static_cast<pid_t>(syscall(SYS_gettid));
        w2 = crew_wait(p, g); // nothing between the store above and this wait sleeps
    });
    // W2 is asleep in crew_wait (it cannot return before go): its state turns to S after tid
    // is set. Park it where it is.
    while (tid == 0)
        std::this_thread::yield();
    while (thread_state(tid) != 'S')
        std::this_thread::yield();
    ASSERT_EQ(pthread_kill(sleeper.native_handle(), SIGUSR1), 0);
    while (sem_wait(&parked_sem) != 0) {
    }
    gate.go = true;
    EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED); // W1 reports the cancel
    std::atomic<long> runs{0};
    for (int i = 0; i < 600; i++) { // more losses than are kept
        crew_handle h = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, 1, &h), CREW_OK);
        ASSERT_EQ(crew_wait(p, h), CREW_EEXPIRED);
    }
    sem_post(&park_sem);
    sleeper.join();
    EXPECT_EQ(w2.load(), CREW_ECANCELED) << "a wait that began before the group ended";
    EXPECT_EQ(sigaction(SIGUSR1, &old, nullptr), 0);
    sem_destroy(&park_sem);
    sem_destroy(&parked_sem);
    crew_destroy(p);
}

// Groups that lose tasks (start-by times passed, cancels) and are waited for give their slots
// back: the slot indices that handles name stay small however many such groups there were,
// through fresh handles and through one reused handle variable alike.
TEST(Losses, LossyGroupsDoNotKeepTheirSlots) {
    crew_pool *p = make_pool(2);
    std::atomic<long> runs{0};
    uint32_t top = 0;
    crew_handle kept = CREW_HANDLE_NONE;
    const int rounds = 4000;
    for (int i = 0; i < rounds; i++) {
        crew_handle h = CREW_HANDLE_NONE;
        crew_handle *g = i % 2 ? &kept : &h;
        if (i % 4 == 3) { // a cancel that takes effect: the group's task waits for go
            std::atomic<bool> go{false};
            ASSERT_EQ(crew_submit(p, until_set, &go, 0, g), CREW_OK);
            ASSERT_EQ(crew_cancel(p, *g), CREW_OK);
            go = true;
            ASSERT_EQ(crew_wait(p, *g), CREW_ECANCELED) << "round " << i;
        } else {
            ASSERT_EQ(crew_submit_deadline(p, bump, &runs, 0, 0, 1, g), CREW_OK);
            ASSERT_EQ(crew_wait(p, *g), CREW_EEXPIRED) << "round " << i;
        }
        top = std::max(top, slot_index(*g));
    }
    EXPECT_EQ(runs.load(), 0);
    EXPECT_LT(top, 1024u) << "slots of lossy groups are kept after their loss was reported";
    crew_destroy(p);
}

// A task graph's runs use the same group mechanisms as plain submissions (their nodes join the
// run's group from inside it): through one handle variable, a run cancelled while its first node
// holds reports CREW_ECANCELED, none of the later nodes runs, and once that wait has reported the
// cancel the next run through the variable is a clean group (CREW_OK, every node run); the slot
// indices stay small over many such rounds.
TEST(Losses, CancelledGraphRunsReportAndTheHandleStartsClean) {
    crew_pool *p = make_pool(2);
    crew_graph *g;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    std::atomic<bool> go{false};
    std::atomic<long> runs{0};
    crew_node a, b, c;
    ASSERT_EQ(crew_graph_add(g, until_set, &go, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, bump, &runs, 0, &b), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, bump, &runs, 0, &c), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, a, b), CREW_OK);
    ASSERT_EQ(crew_graph_precede(g, a, c), CREW_OK);
    crew_handle h = CREW_HANDLE_NONE;
    uint32_t top = 0;
    long clean = 0;
    const int rounds = 600;
    for (int i = 0; i < rounds; i++) {
        go = false;
        ASSERT_EQ(crew_graph_run(g, &h), CREW_OK) << "round " << i;
        if (i % 2 == 0) { // the first node cannot end before go: the cancel takes effect
            ASSERT_EQ(crew_cancel(p, h), CREW_OK) << "round " << i;
            go = true;
            ASSERT_EQ(crew_wait(p, h), CREW_ECANCELED) << "round " << i;
        } else {
            go = true;
            ASSERT_EQ(crew_wait(p, h), CREW_OK) << "round " << i << " inherited a reported cancel";
            clean++;
        }
        top = std::max(top, slot_index(h));
    }
    EXPECT_EQ(runs.load(), 2 * clean) << "a node after a cancelled first node ran";
    EXPECT_LT(top, 1024u) << "slots of cancelled runs are kept after their loss was reported";
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
}

} // namespace

// A timed wait that times out (a poll, or a sleep with a time-out) returns no loss and so
// reports none: the cancelled group's handle variable still refuses tasks after such waits,
// until a wait returns CREW_ECANCELED.
TEST(Losses, TimedOutWaitsReportNothing) {
    crew_pool *p = make_pool(1);
    std::atomic<long> runs{0};
    Gate gate;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, gate_task, &gate, 0, &g), CREW_OK);
    while (!gate.started) // running: the cancel drops nothing, the group stays open
        std::this_thread::yield();
    ASSERT_EQ(crew_cancel(p, g), CREW_OK); // open until go
    EXPECT_EQ(crew_wait_timed(p, g, 0), CREW_ETIMEDOUT);
    EXPECT_EQ(crew_wait_timed(p, g, 1000000), CREW_ETIMEDOUT); // 1 ms: its task waits for go
    gate.go = true;
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_ECANCELED) << "a time-out reported it";
    EXPECT_EQ(crew_wait_timed(p, g, 0), CREW_ECANCELED);      // the poll reports it
    ASSERT_EQ(crew_submit(p, bump, &runs, 0, &g), CREW_OK); // so the variable starts clean
    EXPECT_EQ(crew_wait_timed(p, g, UINT64_MAX - 1), CREW_OK);
    EXPECT_EQ(runs.load(), 1);
    crew_destroy(p);
}

// A timed wait asleep on a cancelled group when it ends gets CREW_ECANCELED, although another
// thread's wait reports the loss at once and more losses than are kept are reported right
// after (the sleeper holds the slot: it is not let go under it).
TEST(Losses, SleepingTimedWaitGetsTheLossWhileOthersReport) {
    crew_pool *p = make_pool(2);
    const int rounds = static_cast<int>(scaled(40));
    for (int r = 0; r < rounds; r++) {
        Gate gate;
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_submit(p, gate_task, &gate, 0, &g), CREW_OK);
        while (!gate.started) // running: the cancel drops nothing, the group stays open
            std::this_thread::yield();
        std::atomic<int> timed_rc{-1};
        std::thread sleeper([&] { timed_rc = crew_wait_timed(p, g, 60000000000ull); });
        ASSERT_EQ(crew_cancel(p, g), CREW_OK);
        // The sleeper is inside its wait once crew_diagnose lists it (blocked_ms 0), which a
        // timed wait does only after its first look at the group, so with the slot held.
        char want[96];
        snprintf(want, sizeof want, "in crew_wait for group {%u, %u}", g.slot, g.gen);
        for (bool listed = false; !listed;) {
            crewtest::Report r = crewtest::diagnose(p, 1000000u, 1000000u, 0u);
            ASSERT_GE(r.findings, 0); // findings (< 0: an error, or no memory stream)
            listed = r.text.find(want) != std::string::npos;
            if (!listed)
                std::this_thread::yield();
        }
        std::thread reporter([&] { EXPECT_EQ(crew_wait(p, g), CREW_ECANCELED); });
        gate.go = true;
        reporter.join();
        for (unsigned i = 0; i < 300; i++) { // more than the 256 losses kept
            crew_handle h = CREW_HANDLE_NONE;
            ASSERT_EQ(crew_submit_deadline(p, bump, nullptr, 0, 0, 1, &h), CREW_OK);
            ASSERT_EQ(crew_wait(p, h), CREW_EEXPIRED);
        }
        sleeper.join();
        ASSERT_EQ(timed_rc.load(), CREW_ECANCELED) << "round " << r;
    }
    crew_destroy(p);
}
