// test_rounds.cpp -- fork-join rounds from a thread outside the pool (crew_enqueue_tasks_wait
// of a few tasks, then the next round): a round's tasks still run side by side when they are
// long, although a caller whose rounds are short wakes no worker for them (wake.h, the deferred
// wake-up): rounds of two (and of four) tasks of about 1 ms run on different threads at the
// same time in most rounds; and a tree of nested rounds, whose outermost task holds all the
// short rounds below it, spreads its leaves over the workers from its first call. A round
// whose tasks wait for each other (a producer and its consumer, a barrier of two) completes in
// either order, although its caller runs the first task and wakes nobody for the other (the
// watcher takes it); and a pool whose rounds have stopped goes back to using no CPU. A caller
// whose rounds' own tasks are tiny marks its deferral so (wake.h: TINY ROUNDS), a caller of
// longer rounds never does, and once tiny rounds stop the mark goes and every worker sleeps
// without a time-out; a thread's tiny rounds on one pool do not mark its rounds on another.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <time.h>
#include <thread>
#include <vector>

#include "common.h"

// The pool's state for the tiny rounds' tests (wake.h: the watch word; idle.h: the sleepers).
extern "C" unsigned crew__wake_watch_word(crew_pool *p);
extern "C" unsigned crew__idle_asleep(crew_pool *p);

namespace {

// One round's tasks: how many run at once now, and at most; the threads they ran on.
struct Round {
    std::atomic<int> running{0};
    std::atomic<int> most{0};
    std::mutex m;
    std::set<std::thread::id> threads;
};

// A task of about 1 ms (a sleep: it overlaps another on a loaded machine or under valgrind too).
void long_task(void *arg) {
    auto *r = static_cast<Round *>(arg);
    int now = r->running.fetch_add(1) + 1;
    int most = r->most.load();
    while (now > most && !r->most.compare_exchange_weak(most, now))
        ;
    {
        std::lock_guard<std::mutex> g(r->m);
        r->threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    r->running.fetch_sub(1);
}

} // namespace

// Rounds of n long tasks from outside: most rounds run two of them at once, on two threads.
// A caller that kept every task to itself (a deferred wake-up never made) overlaps in none.
// Every strategy: the others go the group way, which wakes workers as it queues.
TEST(Rounds, LongTasksFromOutsideRunSideBySide) {
    for (size_t n : {size_t(2), size_t(4)}) {
        crew_pool *p = crewtest::make_pool(2);
        const int rounds = 24;
        int overlapped = 0;
        for (int i = 0; i < rounds; i++) {
            Round r;
            std::vector<crew_task> t(n);
            for (auto &x : t)
                x.fn = long_task, x.arg = &r;
            ASSERT_EQ(crew_enqueue_tasks_wait(p, t.data(), n), CREW_OK);
            EXPECT_EQ(r.running.load(), 0);
            if (r.most.load() >= 2 && r.threads.size() >= 2)
                overlapped++;
        }
        // Generous: the first rounds may run on the caller alone (the rounds have not shown
        // long tasks yet), and a loaded machine may start a woken worker late.
        EXPECT_GE(overlapped, rounds / 4) << n << " tasks a round: " << overlapped << " of "
                                          << rounds << " rounds ran two tasks at once";
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

namespace {

struct Tree {
    crew_pool *p;
    int depth;
    Round *leaves;
};

// Two children by crew_enqueue_tasks_wait, down to depth 0: a leaf of about 1 ms.
void tree_task(void *arg) {
    auto *t = static_cast<Tree *>(arg);
    if (t->depth == 0) {
        long_task(t->leaves);
        return;
    }
    Tree kids[2] = {{t->p, t->depth - 1, t->leaves}, {t->p, t->depth - 1, t->leaves}};
    crew_task k[2] = {};
    for (int i = 0; i < 2; i++)
        k[i].fn = tree_task, k[i].arg = &kids[i];
    ASSERT_EQ(crew_enqueue_tasks_wait(t->p, k, 2), CREW_OK);
}

} // namespace

// A tree of nested rounds called once, from a thread that has made no round before: offers made
// inside a task are woken for at once, so the leaves run on more than the caller's thread, and
// some at the same time, from the first call.
TEST(Rounds, NestedRoundsSpreadFromTheFirstCall) {
    crew_pool *p = crewtest::make_pool(2);
    Round leaves;
    std::thread caller([&] { // a fresh thread: no rounds of its own before
        Tree root{p, 4, &leaves};
        tree_task(&root);
    });
    caller.join();
    EXPECT_GE(leaves.threads.size(), 2u) << "16 leaves of 1 ms all ran on one thread";
    EXPECT_GE(leaves.most.load(), 2) << "no two leaves ran at once";
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

namespace {

// Two tasks of one round that wait for each other: the consumer (or each side of the barrier)
// waits, up to 10 s, for the other task to have run. A caller that runs the waiting one itself
// and leaves the other offered to nobody would wait for ever (here: 10 s, then a failure).
struct Pair {
    std::mutex m;
    std::condition_variable cv;
    int arrived = 0;
    bool produced = false;
    std::atomic<int> missed{0};
    bool wait_for(const std::function<bool()> &ready) {
        std::unique_lock<std::mutex> g(m);
        if (cv.wait_for(g, std::chrono::seconds(10), ready))
            return true;
        missed.fetch_add(1);
        return false;
    }
    static void producer(void *arg) {
        auto *p = static_cast<Pair *>(arg);
        std::lock_guard<std::mutex> g(p->m);
        p->produced = true;
        p->cv.notify_all();
    }
    static void consumer(void *arg) {
        auto *p = static_cast<Pair *>(arg);
        p->wait_for([p] { return p->produced; });
    }
    static void barrier(void *arg) {
        auto *p = static_cast<Pair *>(arg);
        {
            std::lock_guard<std::mutex> g(p->m);
            p->arrived++;
            p->cv.notify_all();
        }
        p->wait_for([p] { return p->arrived >= 2; });
    }
};

double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

} // namespace

// Rounds of two tasks that wait for each other, from threads outside the pool, on one and two
// workers: the consumer first (which the caller runs, so only another thread can run the
// producer), the producer first, and a barrier of two. Each waits for the pool to be idle first
// (its workers asleep) in some rounds, the case where nobody looks for the offer.
TEST(Rounds, TasksOfARoundThatWaitForEachOtherComplete) {
    const int rounds = crewtest::slow_build() ? 40 : 200;
    for (unsigned workers : {1u, 2u}) {
        crew_pool *p = crewtest::make_pool(workers);
        std::thread caller([&] {
            for (int kind = 0; kind < 3; kind++)
                for (int i = 0; i < rounds; i++) {
                    if (i % 50 == 0) // workers asleep
                        std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    Pair pair;
                    crew_task t[2] = {};
                    t[0].arg = t[1].arg = &pair;
                    t[0].fn = kind == 0 ? Pair::consumer : kind == 1 ? Pair::producer : Pair::barrier;
                    t[1].fn = kind == 0 ? Pair::producer : kind == 1 ? Pair::consumer : Pair::barrier;
                    ASSERT_EQ(crew_enqueue_tasks_wait(p, t, 2), CREW_OK);
                    ASSERT_EQ(pair.missed.load(), 0)
                        << workers << " workers, round " << i << " of kind " << kind
                        << " (0 consumer first, 1 producer first, 2 barrier): a task waited 10 s "
                           "for the other task of its round";
                }
        });
        caller.join();
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

// Once short rounds from outside stop, the pool sleeps: no worker goes on waking to watch for
// offers nobody makes any more.
TEST(Rounds, PoolSleepsOnceRoundsStop) {
    if (crewtest::under_valgrind())
        GTEST_SKIP() << "valgrind serialises threads; CPU time means nothing there";
    crew_pool *p = crewtest::make_pool(2);
    std::atomic<long> sum{0};
    for (int i = 0; i < 20000; i++) {
        crew_task t[2] = {};
        for (auto &x : t)
            x.fn = [](void *a) { static_cast<std::atomic<long> *>(a)->fetch_add(1); }, x.arg = &sum;
        ASSERT_EQ(crew_enqueue_tasks_wait(p, t, 2), CREW_OK);
    }
    EXPECT_EQ(sum.load(), 40000);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    double before = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    double used = cpu_seconds() - before;
    EXPECT_LT(used, 0.01) << "the pool used " << used * 100 << "% of a core after its rounds";
    crew_destroy(p);
}

namespace {

// n tasks of one round, each waiting (up to 10 s) until all n have arrived.
struct Barrier {
    std::mutex m;
    std::condition_variable cv;
    int arrived = 0, n = 0;
    std::atomic<int> missed{0};
    static void task(void *arg) {
        auto *b = static_cast<Barrier *>(arg);
        std::unique_lock<std::mutex> g(b->m);
        if (++b->arrived == b->n)
            b->cv.notify_all();
        else if (!b->cv.wait_for(g, std::chrono::seconds(10), [b] { return b->arrived >= b->n; }))
            b->missed.fetch_add(1);
    }
};

} // namespace

// A round of three or four tasks that all wait for each other, right after short rounds (a
// watcher watches, so the round wakes nobody): every offer must reach a worker, not only the
// one the watcher takes when its sleep ends.
// (Not PER_WORKER: the long way queues the round on the workers' own queues, which are not
// stolen from, and its round robin may queue two tasks of the barrier behind one worker.)
TEST(Rounds, ABarrierOfSeveralTasksAfterShortRoundsCompletes) {
    if (crewtest::scheduler() == "per-worker")
        GTEST_SKIP() << "per-worker queues may hold two of the barrier's tasks on one worker";
    const int tries = crewtest::slow_build() ? 3 : 10;
    for (size_t n : {size_t(3), size_t(4)}) {
        crew_pool *p = crewtest::make_pool(unsigned(n - 1));
        for (int i = 0; i < tries; i++) {
            std::atomic<long> sum{0};
            for (int r = 0; r < 200; r++) { // short rounds: a watcher watches
                crew_task t[2] = {};
                for (auto &x : t)
                    x.fn = [](void *a) { static_cast<std::atomic<long> *>(a)->fetch_add(1); },
                    x.arg = &sum;
                ASSERT_EQ(crew_enqueue_tasks_wait(p, t, 2), CREW_OK);
            }
            Barrier b;
            b.n = int(n);
            std::vector<crew_task> t(n);
            for (auto &x : t)
                x.fn = Barrier::task, x.arg = &b;
            ASSERT_EQ(crew_enqueue_tasks_wait(p, t.data(), n), CREW_OK);
            ASSERT_EQ(b.missed.load(), 0) << "a barrier of " << n << " tasks on " << n - 1
                                          << " workers, try " << i << ": a task waited 10 s";
        }
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

namespace {

constexpr unsigned kTiny = 4; // CREW__WATCH_TINY (wake.h)

void add_one(void *a) { static_cast<std::atomic<long> *>(a)->fetch_add(1); }

// A task that runs for about 5 us by the clock: longer than a tiny round's own task (1 us),
// shorter than a long one's (20 us), whatever the machine's load.
void five_us(void *a) {
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
    while (std::chrono::steady_clock::now() < until)
        ;
    static_cast<std::atomic<long> *>(a)->fetch_add(1);
}

// Rounds of two tasks of fn on p from this thread; how many ended with the tiny mark up.
int rounds_marked(crew_pool *p, crew_fn fn, int rounds, std::atomic<long> *sum,
                  bool *set_after_clear) {
    int marked = 0;
    bool cleared = false;
    for (int i = 0; i < rounds; i++) {
        crew_task t[2] = {};
        for (auto &x : t)
            x.fn = fn, x.arg = sum;
        EXPECT_EQ(crew_enqueue_tasks_wait(p, t, 2), CREW_OK);
        bool up = (crew__wake_watch_word(p) & kTiny) != 0;
        marked += up;
        if (up && cleared && set_after_clear)
            *set_after_clear = true;
        cleared |= !up && i > 0;
    }
    return marked;
}

} // namespace

// Tiny rounds (two trivial tasks) mark the deferral tiny, under the work-stealing strategy (the
// others go the group way, which defers nothing, so never); once they stop, the mark goes, no
// worker watches, and both workers sleep on the pool's work (no timed sleep, no polls). Rounds
// of 5 us tasks, from the same thread, never set it again once a watcher's claim cleared it.
TEST(Rounds, TinyRoundsMarkTheDeferralAndThePoolSleepsAfter) {
    const bool steal = crewtest::scheduler() == "steal";
    crew_pool *p = crewtest::make_pool(2);
    std::atomic<long> sum{0};
    const int rounds = crewtest::slow_build() ? 2000 : 20000;
    int marked = rounds_marked(p, add_one, rounds, &sum, nullptr);
    EXPECT_EQ(sum.load(), 2L * rounds);
    if (!steal) {
        EXPECT_EQ(marked, 0) << "a strategy without offers deferred a round";
    } else if (!crewtest::slow_build()) { // instrumented, a trivial task may take over 1 us
        EXPECT_GT(marked, 0) << "20000 rounds of trivial tasks were never marked tiny";
    }
    // After the rounds: the mark is cleared by the next claim, the watcher resigns, and the
    // workers sleep untimed. A generous bound: this is about reaching the state, not speed.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    unsigned watch = 0, asleep = 0;
    while (((watch = crew__wake_watch_word(p)) != 0 || (asleep = crew__idle_asleep(p)) != 2) &&
           std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(watch, 0u) << "the watch word stayed up after the rounds stopped (1 watching, "
                            "2 wanted, 4 tiny)";
    EXPECT_EQ(asleep, 2u) << "not every worker went to sleep after the rounds stopped";
    // Rounds of 5 us tasks: deferred, never tiny (only the first may carry this thread's last
    // tiny round's mark, until a claim clears it).
    bool set_after_clear = false;
    sum = 0;
    rounds_marked(p, five_us, crewtest::slow_build() ? 200 : 2000, &sum, &set_after_clear);
    EXPECT_FALSE(set_after_clear) << "rounds of 5 us tasks marked the deferral tiny";
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

namespace {

// The one worker of a pool held in a task until released.
struct Hold {
    std::atomic<bool> started{false}, release{false};
    static void task(void *a) {
        auto *h = static_cast<Hold *>(a);
        h->started = true;
        while (!h->release.load())
            std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
};

} // namespace

// One thread's tiny rounds on one pool do not mark its rounds on another pool tiny: rounds
// that alternate between pool a (two trivial tasks) and pool b (two 5 us tasks) leave b's
// watch word without the tiny mark. b's one worker is held in a task meanwhile, so that no
// watcher's claim can clear a mark that was set. Only the work-stealing strategy defers
// rounds (the others' long way would also queue b's rounds behind the held worker).
TEST(Rounds, TinyRoundsOnOnePoolDoNotMarkAnother) {
    if (crewtest::scheduler() != "steal")
        GTEST_SKIP() << "only the work-stealing strategy defers rounds";
    crew_pool *a = crewtest::make_pool(2);
    crew_pool *b = crewtest::make_pool(1);
    Hold hold;
    ASSERT_EQ(crew_submit(b, Hold::task, &hold, 0, nullptr), CREW_OK);
    while (!hold.started.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::atomic<long> sum_a{0}, sum_b{0};
    const int rounds = crewtest::slow_build() ? 200 : 2000;
    for (int i = 0; i < rounds && !(crew__wake_watch_word(b) & kTiny); i++) {
        rounds_marked(a, add_one, 1, &sum_a, nullptr);
        rounds_marked(b, five_us, 1, &sum_b, nullptr);
    }
    EXPECT_EQ(crew__wake_watch_word(b) & kTiny, 0u)
        << "pool b's rounds of 5 us tasks were marked tiny after tiny rounds on pool a";
    hold.release = true;
    EXPECT_EQ(crew_wait_all(b), CREW_OK);
    EXPECT_EQ(crew_wait_all(a), CREW_OK);
    crew_destroy(b);
    crew_destroy(a);
}
