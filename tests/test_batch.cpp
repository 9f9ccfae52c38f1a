// test_batch.cpp -- tasks submitted from outside the pool and queued together (a backlog, made
// here with a pause): a worker may claim several at once and run them one after another before
// it looks for work again (work stealing: a batch from an external slot). Whatever the strategy
// does, each task runs exactly once, in one thread's submission order on one worker (work
// stealing), no queued task starts once the thread has seen a cancelling shutdown or a pause,
// a worker that resize marks starts none of the tasks it still holds, and a task a worker has
// claimed but not started stays takeable by every other thread: a task that blocks until a
// later task of its batch runs ends, and a long task at a batch's head holds up none of the
// rest while another thread could run them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <semaphore.h>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

using crewtest::bump;
using crewtest::Gate;
using crewtest::make_pool;

// The checked library's hook (src/worker.c): each task a worker has taken, before it checks
// whether resize marked it (also each task of a batch, as it comes up).
extern "C" void (*crew__test_after_take)(crew_task *t);

namespace {

// How many tasks queue behind the first: enough for a batch claim of several.
constexpr int kQueued = 40;

// The tasks queued behind the first: each counts whether it started before or after the first
// task ended (over), which happens once the thread running it has seen the cancel or the pause.
// (Under the MultiQueue, whose order is relaxed, some may run before the first task.)
struct Probe {
    std::atomic<bool> over{false}, started{false};
    std::atomic<int> before{0}, after{0};
    Gate gate;
};
std::atomic<int> dropped{0};
void probe(void *a) {
    auto *pr = static_cast<Probe *>(a);
    (pr->over.load() ? pr->after : pr->before).fetch_add(1);
}
void count_drop(crew_fn fn, void *, void *) {
    if (fn == probe)
        dropped.fetch_add(1);
}
void spin_until_cancelled(void *a) {
    auto *pr = static_cast<Probe *>(a);
    pr->started = true;
    while (!crew_cancelled())
        std::this_thread::yield();
    pr->over = true;
}
void block_until_open(void *a) {
    auto *pr = static_cast<Probe *>(a);
    pr->started = true;
    pr->gate.wait();
    pr->over = true;
}

// Wait (at most a minute) until pred holds.
template <class Pred> bool eventually(Pred pred) {
    auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

// A pool of one worker under sched (and on_drop counting probes), paused while first and then
// kQueued probes of pr are queued, then resumed; returns once first has started.
crew_pool *backlog(unsigned sched, crew_fn first, Probe *pr) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.scheduler = sched;
    crew_pool *p = crewtest::make_pool_on_drop(cfg, count_drop);
    if (crew_pause(p) != CREW_OK || crew_submit(p, first, pr, 0, nullptr) != CREW_OK)
        std::abort();
    for (int i = 0; i < kQueued; i++)
        if (crew_submit(p, probe, pr, 0, nullptr) != CREW_OK)
            std::abort();
    if (crew_resume(p) != CREW_OK)
        std::abort();
    while (!pr->started.load())
        std::this_thread::yield();
    return p;
}

} // namespace

TEST(Batch, NoTaskOfABacklogStartsOnceTheWorkerHasSeenTheCancel) {
    // The only worker takes the first task of a backlog (with, under work stealing, a batch of
    // the ones behind it), which polls crew_cancelled(). Once it returns, none of the others may
    // start: those the worker holds are dropped by it, the queued ones by the shutdown's sweep.
    for (unsigned sched : crewtest::kSchedulers) {
        dropped = 0;
        Probe pr;
        crew_pool *p = backlog(sched, spin_until_cancelled, &pr);
        EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
        EXPECT_EQ(pr.after.load(), 0) << "scheduler " << sched;
        EXPECT_EQ(pr.before.load() + dropped.load(), kQueued) << "scheduler " << sched;
        EXPECT_EQ(crew_wait_all(p), CREW_ECANCELED);
        crew_destroy(p);
    }
}

TEST(Batch, NoTaskOfABacklogStartsOnceTheWorkerHasSeenThePause) {
    // As above with a pause: the first task holds the worker until the pool is paused; then the
    // others all go back to the queues (none starts), and after the resume each runs once.
    for (unsigned sched : crewtest::kSchedulers) {
        dropped = 0;
        Probe pr;
        crew_pool *p = backlog(sched, block_until_open, &pr);
        ASSERT_EQ(crew_pause(p), CREW_OK);
        pr.gate.open(); // the first task ends; the worker starts nothing more
        crew_stats s;
        s.size = sizeof s;
        ASSERT_TRUE(eventually([&] {
            return crew_stats_get(p, &s) == CREW_OK &&
                   s.queued == size_t(kQueued - pr.before.load());
        })) << "scheduler " << sched << ": " << s.queued << " queued";
        EXPECT_EQ(pr.after.load(), 0) << "scheduler " << sched;
        ASSERT_EQ(crew_resume(p), CREW_OK);
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(pr.before.load() + pr.after.load(), kQueued) << "scheduler " << sched;
        EXPECT_EQ(dropped.load(), 0);
        crew_destroy(p);
    }
}

namespace {
// The resize test's task X and the hook that holds the worker that took it.
struct Marked {
    std::atomic<bool> taken{false}, shrunk{false};
    pthread_t holder{}, runner{};
    std::atomic<int> x_runs{0};
};
Marked *g_marked;
void x_task(void *a) {
    auto *m = static_cast<Marked *>(a);
    m->runner = pthread_self();
    m->x_runs.fetch_add(1);
}
void hold_x(crew_task *t) {
    Marked *m = g_marked;
    if (!m || t->fn != x_task || m->taken.load())
        return;
    m->holder = pthread_self();
    m->taken = true;
    while (!m->shrunk.load()) // the window: X taken, the worker's mark not yet checked
        std::this_thread::yield();
}
} // namespace

TEST(Batch, AWorkerMarkedByResizeStartsNoneOfTheTasksItHolds) {
    // Worker 0 is held in a task; worker 1, added by a resize, takes a backlog's first task A and
    // (under work stealing) a batch behind it, whose second task X the hook holds; a resize to
    // one worker then marks worker 1. X must not start there: it goes back, with the rest of the
    // batch, and runs once elsewhere; every task runs once.
    if (crewtest::scheduler() == "per-worker")
        GTEST_SKIP() << "per-worker queues: a task may wait in the held worker's own queue";
    Marked m;
    g_marked = &m;
    crew__test_after_take = hold_x;
    crew_pool *p = make_pool(1);
    Gate gate;
    gate.hold(p, 1); // worker 0
    ASSERT_EQ(crew_resize(p, 2), CREW_OK);
    std::atomic<long> ran{0};
    ASSERT_EQ(crew_pause(p), CREW_OK);
    ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK); // A
    ASSERT_EQ(crew_submit(p, x_task, &m, 0, nullptr), CREW_OK);
    for (int i = 0; i < kQueued; i++)
        ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_TRUE(eventually([&] { return m.taken.load(); })) << "no worker took X";
    ASSERT_EQ(crew_resize(p, 1), CREW_OK); // marks worker 1, which holds X
    m.shrunk = true;
    gate.open();
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(m.x_runs.load(), 1);
    EXPECT_EQ(ran.load(), kQueued + 1);
    EXPECT_FALSE(pthread_equal(m.holder, m.runner)) << "X started on the worker resize marked";
    crew__test_after_take = nullptr;
    g_marked = nullptr;
    crew_destroy(p);
}

namespace {
struct Order {
    std::mutex m;
    std::vector<int> seen;
};
struct Step {
    Order *o;
    int index;
};
void record(void *a) {
    auto *s = static_cast<Step *>(a);
    std::lock_guard<std::mutex> g(s->o->m);
    s->o->seen.push_back(s->index);
}
} // namespace

TEST(Batch, ABacklogOfMixedSubmissionsRunsOnceEachInOrder) {
    // One thread's priority-0 submissions, queued together: plain tasks, tasks in a group, and
    // short crew_enqueue_tasks arrays (queued by address), interleaved. A wait that does not
    // help (the worker runs them all) sees each run once, the group's wait sees its own, and
    // under work stealing (one worker) they run in submission order.
    for (unsigned sched : crewtest::kSchedulers) {
        crew_pool *p = make_pool(1, sched);
        const int n = 3 * kQueued;
        Order o;
        std::vector<Step> steps(n);
        std::vector<crew_task> arrays(n);
        crew_handle g = CREW_HANDLE_NONE;
        ASSERT_EQ(crew_pause(p), CREW_OK);
        for (int i = 0; i < n; i++) {
            steps[i] = {&o, i};
            if (i % 3 == 0) {
                ASSERT_EQ(crew_submit(p, record, &steps[i], 0, nullptr), CREW_OK);
            } else if (i % 3 == 1) {
                ASSERT_EQ(crew_submit(p, record, &steps[i], 0, &g), CREW_OK);
            } else {
                arrays[i].fn = record;
                arrays[i].arg = &steps[i];
                ASSERT_EQ(crew_enqueue_tasks(p, &arrays[i], 1, nullptr), CREW_OK);
            }
        }
        ASSERT_EQ(crew_resume(p), CREW_OK);
        ASSERT_EQ(crew_wait_all_timed(p, 60000000000ull), CREW_OK); // a minute: a hang
        ASSERT_EQ(crew_wait(p, g), CREW_OK); // over: it helps with nothing
        ASSERT_EQ(o.seen.size(), size_t(n)) << "scheduler " << sched;
        std::vector<int> runs(n);
        for (int i : o.seen)
            runs[i]++;
        for (int i = 0; i < n; i++)
            EXPECT_EQ(runs[i], 1) << "scheduler " << sched << ", task " << i;
        if (sched == CREW_SCHED_STEAL) {
            for (int i = 0; i < n; i++)
                EXPECT_EQ(o.seen[i], i) << "work stealing: run out of submission order";
        }
        crew_destroy(p);
    }
}

namespace {
// A task that waits (crew_wait, or crew_wait_timed with a minute's limit) for group g, whose
// only task is queued behind it in the same backlog.
struct WaitFor {
    crew_pool *p;
    crew_handle g = CREW_HANDLE_NONE;
    bool timed = false;
    std::atomic<int> status{1};
};
void wait_for_group(void *a) {
    auto *w = static_cast<WaitFor *>(a);
    w->status = w->timed ? crew_wait_timed(w->p, w->g, 60000000000ull) : crew_wait(w->p, w->g);
}
} // namespace

TEST(Batch, ATaskThatWaitsForATaskBehindItInItsBatchEnds) {
    // A backlog: a plain task, a task that waits for group g, g's only task, then plain tasks.
    // A worker may claim the waiting task with the ones behind it (g's task among them) for
    // itself: while the waiting task sleeps they must still run (the waiter, or another worker,
    // takes them), so the wait ends and every task runs once. With one worker and with two;
    // crew_wait_timed with two only (a timed wait runs no task: one worker could only sleep).
    for (unsigned sched : crewtest::kSchedulers) {
        for (unsigned threads : {1u, 2u}) {
            for (bool timed : {false, true}) {
                if (timed && threads == 1)
                    continue;
                crew_pool *p = make_pool(threads, sched);
                WaitFor w{p};
                w.timed = timed;
                std::atomic<long> ran{0};
                ASSERT_EQ(crew_pause(p), CREW_OK);
                ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK);
                ASSERT_EQ(crew_submit(p, wait_for_group, &w, 0, nullptr), CREW_OK);
                ASSERT_EQ(crew_submit(p, bump, &ran, 0, &w.g), CREW_OK);
                for (int i = 0; i < kQueued; i++)
                    ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK);
                ASSERT_EQ(crew_resume(p), CREW_OK);
                ASSERT_EQ(crew_wait_all_timed(p, 60000000000ull), CREW_OK) // a minute: a hang
                    << "scheduler " << sched << ", " << threads << " workers, timed " << timed;
                EXPECT_EQ(w.status.load(), CREW_OK);
                EXPECT_EQ(ran.load(), kQueued + 2);
                crew_destroy(p);
            }
        }
    }
}

namespace {
// The strategies under which any worker may take any queued task (not per-worker queues, where
// a task queued on a busy worker's own queue waits for it by design).
std::vector<unsigned> any_worker_schedulers() {
    std::vector<unsigned> v;
    for (unsigned sched : crewtest::kSchedulers)
        if (sched != CREW_SCHED_PER_WORKER &&
            !(sched == CREW_SCHED_DEFAULT && crewtest::scheduler() == "per-worker"))
            v.push_back(sched);
    return v;
}

// A task that blocks on a POSIX semaphore, and the later task that posts it. A watchdog posts
// it after a minute (a hang otherwise), and says so.
struct Sem {
    sem_t s;
    std::atomic<bool> started{false}, done{false}, rescued{false};
    Sem() { sem_init(&s, 0, 0); }
    ~Sem() { sem_destroy(&s); }
};
void sem_block(void *a) {
    auto *x = static_cast<Sem *>(a);
    x->started = true;
    while (sem_wait(&x->s) != 0) // EINTR
        ;
}
void sem_post_task(void *a) { sem_post(&static_cast<Sem *>(a)->s); }
} // namespace

TEST(Batch, ATaskBlockedOnASemaphoreUntilALaterTaskOfItsBatchRunsEnds) {
    // A backlog: A blocks on a semaphore that only B, queued right behind it, posts; then plain
    // tasks; once A has started on a worker, a helping crew_wait_all. Under work stealing the
    // worker that takes A claims B in the same batch; B must
    // still run elsewhere (another worker steals it; with one worker, the helping crew_wait_all
    // takes it), or the pool hangs however many workers idle.
    for (unsigned sched : any_worker_schedulers()) {
        for (unsigned threads : {1u, 2u, 3u}) {
            crew_pool *p = make_pool(threads, sched);
            Sem x;
            std::atomic<long> ran{0};
            ASSERT_EQ(crew_pause(p), CREW_OK);
            ASSERT_EQ(crew_submit(p, sem_block, &x, 0, nullptr), CREW_OK);
            ASSERT_EQ(crew_submit(p, sem_post_task, &x, 0, nullptr), CREW_OK);
            for (int i = 0; i < kQueued; i++)
                ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK);
            std::thread watchdog([&] {
                auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
                while (!x.done.load() && std::chrono::steady_clock::now() < until)
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                if (!x.done.load()) {
                    x.rescued = true;
                    sem_post(&x.s);
                }
            });
            ASSERT_EQ(crew_resume(p), CREW_OK);
            while (!x.started.load()) // A on a worker (not on this thread's helping wait)
                std::this_thread::yield();
            EXPECT_EQ(crew_wait_all(p), CREW_OK); // helps: with one worker, it must take B
            x.done = true;
            watchdog.join();
            EXPECT_FALSE(x.rescued.load())
                << "scheduler " << sched << ", " << threads << " workers: B never ran";
            EXPECT_EQ(ran.load(), kQueued);
            crew_destroy(p);
        }
    }
}

namespace {
// A long task at a backlog's head (it waits until the others all ran, a minute at most) and the
// others, which note the thread they ran on.
struct Head {
    std::atomic<int> ran{0};
    std::atomic<bool> started{false}, gave_up{false};
    pthread_t head{};
    std::mutex m;
    std::vector<pthread_t> threads;
};
void head_task(void *a) {
    auto *h = static_cast<Head *>(a);
    h->head = pthread_self();
    h->started = true;
    auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (h->ran.load() < kQueued) {
        if (std::chrono::steady_clock::now() > until) {
            h->gave_up = true;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}
void note_thread(void *a) {
    auto *h = static_cast<Head *>(a);
    if (h->started.load()) { // (a relaxed order, the MultiQueue's, may run some before it)
        std::lock_guard<std::mutex> g(h->m);
        h->threads.push_back(pthread_self());
    }
    h->ran.fetch_add(1);
}
} // namespace

TEST(Batch, ALongTaskAtABatchHeadHoldsUpNoneOfTheRestWhileAWorkerIdles) {
    // Two workers, and a wait that does not help (timed): the worker that takes the long head
    // task claims (work stealing) a batch behind it; the other worker must run every one of the
    // rest, the batch's too: none of them may wait for the head to end on its thread.
    for (unsigned sched : any_worker_schedulers()) {
        crew_pool *p = make_pool(2, sched);
        Head h;
        ASSERT_EQ(crew_pause(p), CREW_OK);
        ASSERT_EQ(crew_submit(p, head_task, &h, 0, nullptr), CREW_OK);
        for (int i = 0; i < kQueued; i++)
            ASSERT_EQ(crew_submit(p, note_thread, &h, 0, nullptr), CREW_OK);
        ASSERT_EQ(crew_resume(p), CREW_OK);
        ASSERT_EQ(crew_wait_all_timed(p, 120000000000ull), CREW_OK); // two minutes: a hang
        EXPECT_FALSE(h.gave_up.load()) << "scheduler " << sched << ": the rest waited";
        for (pthread_t t : h.threads)
            EXPECT_FALSE(pthread_equal(t, h.head))
                << "scheduler " << sched << ": a task waited for the head on its thread";
        crew_destroy(p);
    }
}

namespace {
// Exactly once under load: each task counts its runs and its drops in its own place.
struct Counts {
    explicit Counts(size_t n) : runs(n), drops(n) {}
    std::vector<std::atomic<int>> runs, drops;
};
struct Tick {
    Counts *c;
    size_t i;
};
void tick(void *a) {
    auto *t = static_cast<Tick *>(a);
    t->c->runs[t->i].fetch_add(1);
    // A little work, the longer every 64th: batches wait behind a running task long enough for
    // idle workers and helping waiters to take from them while their owner claims too.
    for (volatile int k = 0, n = t->i % 64 == 0 ? 20000 : 200; k < n; k = k + 1) {
    }
}
void tick_drop(crew_fn fn, void *a, void *) {
    if (fn == tick) {
        auto *t = static_cast<Tick *>(a);
        t->c->drops[t->i].fetch_add(1);
    }
}

// Producers submit (plain and grouped tasks, waiting now and then with crew_wait_all, which
// helps) while the main thread pauses and resumes, resizes, and at the end shuts down
// (draining, or cancelling while the producers still submit). Each accepted task must have run
// once, or (a cancel) have been dropped once; a refused one never ran.
void load_round(bool cancel, int cancel_after_us) {
    const int producers = 2;
    const size_t each = size_t(crewtest::scaled(20000));
    Counts c(producers * each);
    std::vector<Tick> ticks(producers * each);
    std::vector<std::atomic<bool>> accepted(producers * each);
    crew_pool *p = crewtest::make_pool_on_drop(4, tick_drop);
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int k = 0; k < producers; k++)
        threads.emplace_back([&, k] {
            crew_handle g = CREW_HANDLE_NONE;
            for (size_t j = 0; j < each; j++) {
                size_t i = size_t(k) * each + j;
                ticks[i] = {&c, i};
                int rc = crew_submit(p, tick, &ticks[i], 0, j % 5 == 0 ? &g : nullptr);
                accepted[i] = rc == CREW_OK;
                if (rc != CREW_OK && rc != CREW_ESHUTDOWN)
                    std::abort();
                if (j % 4000 == 3999)
                    (void)crew_wait_all(p); // helps; may be cancelled
            }
        });
    std::thread changer([&] {
        unsigned n = 0;
        while (!stop.load()) {
            switch (n++ % 3) {
            case 0:
                (void)crew_pause(p);
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                (void)crew_resume(p);
                break;
            case 1:
                (void)crew_resize(p, 2 + n % 3);
                break;
            default:
                std::this_thread::sleep_for(std::chrono::microseconds(300));
            }
        }
    });
    if (cancel) {
        std::this_thread::sleep_for(std::chrono::microseconds(cancel_after_us));
        stop = true;
        changer.join();
        EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK);
    }
    for (auto &t : threads)
        t.join();
    if (!cancel) {
        stop = true;
        changer.join();
        EXPECT_EQ(crew_resume(p), CREW_OK);
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    }
    crew_destroy(p);
    size_t bad = 0;
    for (size_t i = 0; i < c.runs.size(); i++) {
        int want = accepted[i].load() ? 1 : 0;
        int got = c.runs[i].load() + c.drops[i].load();
        if (got != want || (!cancel && c.drops[i].load() != 0)) {
            if (bad++ < 5)
                ADD_FAILURE() << "task " << i << ": " << c.runs[i].load() << " runs, "
                              << c.drops[i].load() << " drops, accepted " << want;
        }
    }
    EXPECT_EQ(bad, 0u);
}
} // namespace

TEST(Batch, EachTaskRunsOnceUnderLoadWithPausesAndResizes) {
    for (long r = 0, n = crewtest::scaled(8); r < n; r++)
        load_round(false, 0);
}

TEST(Batch, EachTaskRunsOrIsDroppedOnceUnderACancellingShutdown) {
    for (long r = 0, n = crewtest::scaled(8); r < n; r++)
        load_round(true, int(r % 4) * 500);
}

namespace {
// The order test's worker 1, once it has left (on_stop).
std::atomic<bool> g_second_stopped{false};
void note_stop(unsigned index, void *) {
    if (index == 1)
        g_second_stopped = true;
}
} // namespace

TEST(Batch, TheTasksAMarkedWorkerHandsBackKeepTheirOrder) {
    // Work stealing. Worker 0 is held; worker 1 takes a backlog's first task A and a batch behind
    // it, and the hook holds it at X, the batch's second task; a resize marks worker 1, which
    // hands X and the rest of its batch to the injection queue and leaves. Then worker 0 alone
    // (the wait does not help) runs the backlog: the slot's rest, then what worker 1 handed
    // back. Each part keeps one thread's submission order, as the worker's own deque did: the
    // indices seen (X aside) rise but for one step down, from the slot's rest to the batch's.
    Marked m;
    g_marked = &m;
    g_second_stopped = false;
    crew__test_after_take = hold_x;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.scheduler = CREW_SCHED_STEAL;
    crew_hooks hooks{};
    hooks.size = sizeof hooks;
    hooks.on_stop = note_stop;
    cfg.hooks = &hooks;
    crew_pool *p = make_pool(cfg);
    Gate gate;
    gate.hold(p, 1); // worker 0
    ASSERT_EQ(crew_resize(p, 2), CREW_OK);
    Order o;
    const int n = kQueued + 1;
    std::vector<Step> steps(n);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    steps[0] = {&o, 0};
    ASSERT_EQ(crew_submit(p, record, &steps[0], 0, nullptr), CREW_OK); // A
    ASSERT_EQ(crew_submit(p, x_task, &m, 0, nullptr), CREW_OK);
    for (int i = 1; i < n; i++) {
        steps[i] = {&o, i};
        ASSERT_EQ(crew_submit(p, record, &steps[i], 0, nullptr), CREW_OK);
    }
    ASSERT_EQ(crew_resume(p), CREW_OK);
    ASSERT_TRUE(eventually([&] { return m.taken.load(); })) << "no worker took X";
    ASSERT_EQ(crew_resize(p, 1), CREW_OK); // marks worker 1, which holds X
    m.shrunk = true;
    ASSERT_TRUE(eventually([&] { return g_second_stopped.load(); })) << "worker 1 never left";
    gate.open();
    ASSERT_EQ(crew_wait_all_timed(p, 60000000000ull), CREW_OK); // a minute: a hang
    crew__test_after_take = nullptr;
    g_marked = nullptr;
    crew_destroy(p);
    ASSERT_EQ(o.seen.size(), size_t(n));
    EXPECT_EQ(m.x_runs.load(), 1);
    int downs = 0;
    for (size_t i = 1; i < o.seen.size(); i++)
        downs += o.seen[i] < o.seen[i - 1];
    std::string seen;
    for (int i : o.seen)
        seen += std::to_string(i) + " ";
    EXPECT_LE(downs, 1) << "run order: " << seen;
}

TEST(Batch, RunningCountsOnlyTheTaskBeingRunAfterABatchsFirstTasks) {
    // One worker, monitoring off (so work stealing claims batches): a backlog of a few plain
    // tasks, a task that blocks, then many more. Once the blocking task runs, the tasks before
    // it have ended: crew_stats.running ("tasks running now") is 1, however the worker took
    // them (one by one, or in a batch).
    for (unsigned sched : crewtest::kSchedulers) {
        crew_pool *p = make_pool(1, sched);
        Gate gate;
        std::atomic<long> ran{0};
        ASSERT_EQ(crew_pause(p), CREW_OK);
        for (int i = 0; i < 5; i++)
            ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK);
        ASSERT_EQ(crew_submit(p, Gate::block, &gate, 0, nullptr), CREW_OK);
        for (int i = 0; i < kQueued; i++)
            ASSERT_EQ(crew_submit(p, bump, &ran, 0, nullptr), CREW_OK);
        ASSERT_EQ(crew_resume(p), CREW_OK);
        gate.wait_arrivals(1);
        crew_stats s;
        std::memset(&s, 0, sizeof s);
        s.size = sizeof s;
        ASSERT_EQ(crew_stats_get(p, &s), CREW_OK);
        long before = ran.load(); // the tasks that ran before the blocking one (5 in order)
        EXPECT_EQ(s.running, 1u) << "scheduler " << sched << ", " << before << " ran before";
        gate.open();
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(ran.load(), 5 + kQueued);
        crew_destroy(p);
    }
}
