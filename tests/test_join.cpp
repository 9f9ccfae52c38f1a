// test_join.cpp -- crew_join and crew::join: spawn-and-wait without a group. Results of nested
// joins (fib) on 1, 2 and 4 threads, from inside and outside the pool; joins nested 30 deep
// inside lanes; a one-thread pool; a take-back after the caller's own thread took its half and
// reused its place; a wake-up for an offer above a task a thief took before it went to sleep;
// C++ results and exceptions; and a stress test in which
// cancel, resize, pause and both shutdowns race with joins (in lane tasks too): every half runs
// exactly once, and every submitted task runs once or reaches on_drop.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

extern "C" void (*crew__test_join_offer)(void); // join.c, in the checked library

using crewtest::make_pool;

// The fork tests' children run one function and exec a shell (see ForkAfterTheOtherHalfWasTaken).
#if defined(__SANITIZE_THREAD__)
extern "C" const char *__tsan_default_options() { return "die_after_fork=0"; }
#endif

namespace crewtest {
crew_pool *g_held_pool; // the pool of CancellingShutdownHandsTheHalfBack
}

namespace {

long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }
// Calls of fib_join for fib(n): every call, leaves included.
long fib_calls(int n) { return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2); }

struct Fib {
    crew_pool *p;
    int n;
    long r;
    std::atomic<long> *calls; // counts every call, or NULL
};

void fib_join(void *a) {
    auto *f = static_cast<Fib *>(a);
    if (f->calls)
        f->calls->fetch_add(1, std::memory_order_relaxed);
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    Fib x{f->p, f->n - 2, 0, f->calls}, y{f->p, f->n - 1, 0, f->calls};
    if (crew_join(f->p, fib_join, &x, fib_join, &y) != CREW_OK)
        std::abort();
    f->r = x.r + y.r;
}

int fib_size() {
#ifdef CREW_SANITIZED
    return 20;
#else
    return crewtest::under_valgrind() ? 14 : 25;
#endif
}

void run_fib(unsigned threads, bool from_task) {
    crew_pool *p = make_pool(threads);
    std::atomic<long> calls{0};
    const int n = fib_size();
    Fib root{p, n, 0, &calls};
    if (from_task) {
        crew_task t = {};
        t.fn = fib_join, t.arg = &root;
        ASSERT_EQ(crew_enqueue_tasks_wait(p, &t, 1), CREW_OK);
    } else {
        fib_join(&root); // the caller joins from outside the pool
    }
    EXPECT_EQ(root.r, fib_seq(n));
    EXPECT_EQ(calls.load(), fib_calls(n)); // every half ran exactly once
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

TEST(Join, FibOneThreadInside) { run_fib(1, true); }
TEST(Join, FibOneThreadOutside) { run_fib(1, false); }
TEST(Join, FibTwoThreadsInside) { run_fib(2, true); }
TEST(Join, FibTwoThreadsOutside) { run_fib(2, false); }
TEST(Join, FibFourThreadsInside) { run_fib(4, true); }

TEST(Join, BadArguments) {
    crew_pool *p = make_pool(1);
    std::atomic<int> ran{0}; // the halves may run at once
    auto inc = [](void *a) { ++*static_cast<std::atomic<int> *>(a); };
    EXPECT_EQ(crew_join(nullptr, inc, &ran, inc, &ran), CREW_EINVAL);
    EXPECT_EQ(crew_join(p, nullptr, &ran, inc, &ran), CREW_EINVAL);
    EXPECT_EQ(crew_join(p, inc, &ran, nullptr, &ran), CREW_EINVAL);
    EXPECT_EQ(ran.load(), 0); // nothing ran
    EXPECT_EQ(crew_join(p, inc, &ran, inc, &ran), CREW_OK);
    EXPECT_EQ(ran.load(), 2);
    crew_destroy(p);
}

// The same checks on a worker, whose path tests its arguments apart (join.c).
namespace {
struct BadInside {
    crew_pool *p;
    std::atomic<int> ran{0};
    int rc[3] = {-1, -1, -1};
};
void bad_inc(void *a) { ++*static_cast<std::atomic<int> *>(a); }
void bad_inside_task(void *a) {
    auto *b = static_cast<BadInside *>(a);
    b->rc[0] = crew_join(b->p, nullptr, &b->ran, bad_inc, &b->ran);
    b->rc[1] = crew_join(b->p, bad_inc, &b->ran, nullptr, &b->ran);
    b->rc[2] = crew_join(b->p, bad_inc, &b->ran, bad_inc, &b->ran);
}
} // namespace

TEST(Join, BadArgumentsOnAWorker) {
    crew_pool *p = make_pool(1);
    BadInside b;
    b.p = p;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, bad_inside_task, &b, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(b.rc[0], CREW_EINVAL);
    EXPECT_EQ(b.rc[1], CREW_EINVAL);
    EXPECT_EQ(b.rc[2], CREW_OK);
    EXPECT_EQ(b.ran.load(), 2); // only the good call's halves ran
    crew_destroy(p);
}

// The caller's own thread takes its offered half inside the first half (a helping crew_wait), and
// then queues a task on the very place of the offer, with the deque's bottom just where the
// offer left it: the take-back must see that its half is over (by its record), not take the
// task now at that place for it. One worker, which runs everything; under STEAL the wait helps
// with the offer (the newest task of the worker's deque) and then the group's task below it,
// the last one (a take of the last task leaves top and bottom one above its place), so the
// next push lands on the offer's place for certain.
struct PlaceReuse {
    crew_pool *p;
    crew_handle g;
    std::atomic<int> fb_runs{0}, x_runs{0}, g_runs{0};
    std::atomic<bool> done{false};
};

void reuse_fa(void *a) {
    auto *c = static_cast<PlaceReuse *>(a);
    if (crew_wait(c->p, c->g) != CREW_OK) // runs the offered half, then the group's task
        std::abort();
    if (crew_submit(c->p, [](void *x) { static_cast<PlaceReuse *>(x)->x_runs++; }, c, 0,
                    nullptr) != CREW_OK) // where the offer lay
        std::abort();
}

void reuse_task(void *a) {
    auto *c = static_cast<PlaceReuse *>(a);
    c->g = CREW_HANDLE_NONE;
    if (crew_submit(c->p, [](void *x) { static_cast<PlaceReuse *>(x)->g_runs++; }, c, 0,
                    &c->g) != CREW_OK)
        std::abort();
    if (crew_join(c->p, reuse_fa, c, [](void *x) { static_cast<PlaceReuse *>(x)->fb_runs++; },
                  c) != CREW_OK)
        std::abort();
    c->done = true;
}

TEST(Join, TakeBackAfterTheOwnThreadTookTheHalfAndReusedItsPlace) {
    crew_pool *p = make_pool(1);
    PlaceReuse c;
    c.p = p;
    ASSERT_EQ(crew_submit(p, reuse_task, &c, 0, nullptr), CREW_OK);
    while (!c.done) // not crew_wait: a waiting caller could take the offer itself
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // Taken for the half, the task would be lost (crew_wait_all would hang) and fb run twice.
    ASSERT_EQ(c.fb_runs.load(), 1);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(c.x_runs.load(), 1);
    EXPECT_EQ(c.g_runs.load(), 1);
    crew_destroy(p);
}

// A worker that sleeps must be woken for an offer even when the deque held an older task as
// the caller looked at it, if a thief took that task and went to sleep before the offer landed.
// The test hook holds the caller between its look at the deque and its offer while the other
// worker, released then, steals the older task, runs it and, finding nothing more, sleeps.
// Then fa waits (at most 10 s) for fb to run elsewhere: with the wake-up missed, the other
// worker sleeps through all of fa, and fb runs only on the caller after it.
struct Missed {
    crewtest::Gate busy; // holds the other worker until the caller has looked at its deque
    std::atomic<bool> older_ran{false}, fb_ran{false}, fb_during_fa{false};
    std::atomic<int> fb_runs{0};
    std::atomic<bool> done{false};
    crew_pool *p = nullptr;
};
std::atomic<Missed *> g_missed{nullptr};

void missed_hook() {
    Missed *m = g_missed.exchange(nullptr); // the first join only
    if (!m)
        return;
    m->busy.open(); // the other worker takes the older task...
    while (!m->older_ran)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // ...and goes to sleep
}

void missed_fa(void *a) {
    auto *m = static_cast<Missed *>(a);
    for (int i = 0; i < 10000 && !m->fb_ran; i++) // bounded: halves must not wait for each other
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    m->fb_during_fa = m->fb_ran.load();
}

void missed_task(void *a) {
    auto *m = static_cast<Missed *>(a);
    if (crew_submit(m->p, [](void *x) { static_cast<Missed *>(x)->older_ran = true; }, m, 0,
                    nullptr) != CREW_OK) // the older task, on this worker's deque
        std::abort();
    if (crew_join(m->p, missed_fa, m, [](void *x) {
            auto *mm = static_cast<Missed *>(x);
            mm->fb_runs++;
            mm->fb_ran = true;
        }, m) != CREW_OK)
        std::abort();
    m->done = true;
}

TEST(Join, OfferWakesAThiefThatEmptiedTheDequeAndSlept) {
    if (crewtest::scheduler() != "steal")
        GTEST_SKIP() << "work stealing only (the other strategies offer through a group)";
    crew_pool *p = make_pool(2);
    Missed m;
    m.p = p;
    m.busy.hold(p, 1);
    g_missed = &m;
    crew__test_join_offer = missed_hook;
    ASSERT_EQ(crew_submit(p, missed_task, &m, 0, nullptr), CREW_OK);
    while (!m.done) // not crew_wait_all: a waiting caller could take the task itself
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    m.busy.open(); // in case the hook did not run
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew__test_join_offer = nullptr;
    EXPECT_EQ(g_missed.load(), nullptr); // the hook ran
    EXPECT_TRUE(m.older_ran.load());
    EXPECT_EQ(m.fb_runs.load(), 1);
    EXPECT_TRUE(m.fb_during_fa.load()); // the sleeping worker was woken for the offer
    crew_destroy(p);
}

// The offered half is really offered: on two threads, a half that waits for the other can
// only finish if some thread other than the caller took it. (Not promised by crew_join in
// general; under STEAL from a task a waiting half is stolen by the idle worker.) Instead of
// relying on that, check that a join whose halves take a while runs both on a pool after
// shutdown, where nobody can take the offer.
TEST(Join, AfterShutdownRunsBothOnCaller) {
    crew_pool *p = make_pool(2);
    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    std::atomic<long> calls{0};
    Fib root{p, 12, 0, &calls};
    fib_join(&root);
    EXPECT_EQ(root.r, fib_seq(12));
    EXPECT_EQ(calls.load(), fib_calls(12));
    crew_destroy(p);
}

// A cancelling shutdown that comes while a join's offered half waits to be taken: the half is
// not dropped (on_drop never sees it) but runs, on the caller. The caller's first half holds it
// until the shutdown has had time to empty the queues (it cannot finish before the task does).
struct Held {
    crewtest::Gate gate;
    std::atomic<int> fb_runs{0};
    std::atomic<int> drops{0};
};
void held_fa(void *a) {
    auto *h = static_cast<Held *>(a);
    h->gate.arrive();
    h->gate.wait();
}
void held_fb(void *a) { static_cast<Held *>(a)->fb_runs++; }
void held_task(void *a) {
    if (crew_join(crewtest::g_held_pool, held_fa, a, held_fb, a) != CREW_OK)
        std::abort();
}
void count_drop(crew_fn, void *, void *arg) { static_cast<Held *>(arg)->drops++; }

TEST(Join, CancellingShutdownHandsTheHalfBack) {
    for (unsigned threads : {1u, 2u}) {
        Held h;
        crew_hooks hooks = {};
        hooks.size = sizeof hooks;
        hooks.on_drop = count_drop;
        hooks.arg = &h;
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = threads;
        cfg.hooks = &hooks;
        crew_pool *p = make_pool(cfg);
        crewtest::g_held_pool = p;
        if (threads == 2) // the other worker busy, so that nobody takes the offer early
            h.gate.hold(p, 1);
        ASSERT_EQ(crew_submit(p, held_task, &h, 0, nullptr), CREW_OK);
        h.gate.wait_arrivals(int(threads));
        std::thread sd([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL), CREW_OK); });
        std::this_thread::sleep_for(std::chrono::milliseconds(50)); // the queues emptied
        h.gate.open();
        sd.join();
        EXPECT_EQ(h.fb_runs.load(), 1);
        EXPECT_EQ(h.drops.load(), 0);
        EXPECT_EQ(crew_wait_all(p), CREW_OK); // no loss to report
        crew_destroy(p);
    }
}

// Joins nested 30 deep inside lane tasks: each level joins a leaf with the next level.
struct Chain {
    crew_pool *p;
    int depth;
    std::atomic<long> *halves;
};
void chain_leaf(void *a) { static_cast<Chain *>(a)->halves->fetch_add(1); }
void chain(void *a) {
    auto *c = static_cast<Chain *>(a);
    c->halves->fetch_add(1);
    if (c->depth == 0)
        return;
    Chain next{c->p, c->depth - 1, c->halves}, leaf{c->p, 0, c->halves};
    if (crew_join(c->p, chain, &next, chain_leaf, &leaf) != CREW_OK)
        std::abort();
}
struct LaneTask {
    Chain c;
    std::atomic<int> *inside; // the lane's tasks running now
    std::atomic<int> *overlap;
};
void lane_task(void *a) {
    auto *t = static_cast<LaneTask *>(a);
    if (t->inside->fetch_add(1) != 0)
        t->overlap->fetch_add(1); // a strand ran two tasks at once
    chain(&t->c);
    t->inside->fetch_sub(1);
}

TEST(Join, Nested30DeepInStrands) {
    for (unsigned threads : {1u, 2u}) {
        crew_pool *p = make_pool(threads);
        const int lanes = 4, per_lane = 20, depth = 30;
        std::atomic<long> halves{0};
        std::vector<crew_lane *> l(lanes);
        std::vector<std::atomic<int>> inside(lanes), overlap(lanes);
        std::vector<LaneTask> tasks;
        tasks.reserve(lanes * per_lane);
        for (int i = 0; i < lanes; i++)
            ASSERT_EQ(crew_lane_create(p, 1, &l[i]), CREW_OK);
        for (int k = 0; k < per_lane; k++)
            for (int i = 0; i < lanes; i++) {
                tasks.push_back({{p, depth, &halves}, &inside[i], &overlap[i]});
                ASSERT_EQ(crew_lane_submit(l[i], lane_task, &tasks.back(), nullptr), CREW_OK);
            }
        for (int i = 0; i < lanes; i++)
            ASSERT_EQ(crew_lane_destroy(l[i]), CREW_OK);
        // chain(d) counts itself, then joins chain(d-1) with a leaf: 2 d + 1 halves.
        EXPECT_EQ(halves.load(), long(lanes) * per_lane * (2 * depth + 1));
        for (int i = 0; i < lanes; i++)
            EXPECT_EQ(overlap[i].load(), 0);
        crew_destroy(p);
    }
}

// ---- C++ ----

long fib_cpp(crew::pool &p, int n) {
    if (n < 2)
        return n;
    auto [a, b] =
        crew::join(p, [&] { return fib_cpp(p, n - 2); }, [&] { return fib_cpp(p, n - 1); });
    return a + b;
}

TEST(JoinCpp, Results) {
    crew::pool p(crew::options{2});
    EXPECT_EQ(p.submit([&] { return fib_cpp(p, 20); }).get(), fib_seq(20));
    EXPECT_EQ(fib_cpp(p, 18), fib_seq(18)); // from outside
    int x = 0, y = 0;
    crew::join(p, [&] { x = 1; }, [&] { y = 2; });
    EXPECT_EQ(x + y, 3);
    // Halves that return lvalue references: the pair holds references to x and y.
    std::pair<int &, int &> r = crew::join(
        p, [&]() -> int & { return x; }, [&]() -> int & { return y; });
    EXPECT_EQ(&r.first, &x);
    EXPECT_EQ(&r.second, &y);
}

TEST(JoinCpp, ExceptionsAfterBothHalves) {
    crew::pool p(crew::options{2});
    for (int inside = 0; inside < 2; inside++) {
        auto body = [&] {
            std::atomic<int> ran{0};
            // g throws: rethrown after f has run too
            try {
                crew::join(p, [&] { ran++; }, [&] { ran++; throw std::runtime_error("g"); });
                ADD_FAILURE() << "no exception";
            } catch (const std::runtime_error &e) {
                EXPECT_STREQ(e.what(), "g");
            }
            EXPECT_EQ(ran.load(), 2);
            // both throw: f's is rethrown, after both ran
            ran = 0;
            try {
                crew::join(
                    p, [&] { ran++; throw std::runtime_error("f"); },
                    [&] { ran++; throw std::logic_error("g"); });
                ADD_FAILURE() << "no exception";
            } catch (const std::runtime_error &e) {
                EXPECT_STREQ(e.what(), "f");
            }
            EXPECT_EQ(ran.load(), 2);
            // nested: an exception deep in a tree of joins reaches the top
            std::function<long(int)> f = [&](int n) -> long {
                if (n == 3)
                    throw std::out_of_range("deep");
                if (n < 2)
                    return n;
                auto [a, b] = crew::join(p, [&] { return f(n - 2); }, [&] { return f(n - 1); });
                return a + b;
            };
            EXPECT_THROW(f(12), std::out_of_range);
        };
        if (inside)
            p.submit(body).get();
        else
            body();
    }
}

// ---- stress: cancel, resize, pause and both shutdowns racing with joins (also 30 deep in
// lane tasks) ----

struct Stress {
    std::atomic<long> calls{0};   // fib_join calls made by roots and outside joiners
    std::atomic<long> halves{0};  // chain halves run by lane roots
    std::atomic<long> lane_run{0};
    std::atomic<long> roots_run{0};
    std::atomic<long> dropped{0}; // roots handed to on_drop
    std::atomic<long> bad{0};     // a wrong result
};
constexpr int kStressFib = 14;

struct Root {
    Fib f;
    Stress *s;
    bool lane; // in a lane: joins nested 30 deep first
};
constexpr int kStressDepth = 30;
void root_task(void *a) {
    auto *r = static_cast<Root *>(a);
    if (r->lane) {
        Chain c{r->f.p, kStressDepth, &r->s->halves};
        chain(&c);
        r->s->lane_run++;
    }
    fib_join(&r->f);
    if (r->f.r != fib_seq(kStressFib))
        r->s->bad++;
    r->s->roots_run++;
}
void on_drop(crew_fn fn, void *arg, void *hook_arg) {
    auto *s = static_cast<Stress *>(hook_arg);
    if (fn == root_task)
        s->dropped++;
    else
        s->bad++; // a join's half must never be dropped
    (void)arg;
}

void stress_once(int how, unsigned seed) {
    Stress s;
    crew_hooks hooks = {};
    hooks.size = sizeof hooks;
    hooks.on_drop = on_drop;
    hooks.arg = &s;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.hooks = &hooks;
    crew_pool *p = make_pool(cfg);

    // Roots until the shutdown refuses them (at most `roots`), a few at a time so that some
    // are queued, some running and some not yet submitted when the shutdowns come.
    // Every other root goes to a lane of two (joins 30 deep first), the others into groups of
    // eight, the newest of which the chaos thread may cancel.
    const long roots = crewtest::scaled(20000);
    std::vector<Root> r(static_cast<size_t>(roots));
    std::atomic<long> submitted{0}, lane_submitted{0}, outside_calls{0}, outside_joins{0};
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> newest_group{0};
    crew_lane *lane = nullptr;
    ASSERT_EQ(crew_lane_create(p, 2, &lane), CREW_OK);

    std::thread producer([&] {
        crew_handle g = CREW_HANDLE_NONE;
        for (long i = 0; i < roots; i++) {
            bool in_lane = i % 2 == 1;
            r[size_t(i)] = Root{{p, kStressFib, 0, &s.calls}, &s, in_lane};
            if (i % 16 == 0)
                g = CREW_HANDLE_NONE;
            int rc = in_lane ? crew_lane_submit(lane, root_task, &r[size_t(i)], nullptr)
                             : crew_submit(p, root_task, &r[size_t(i)], 0, &g);
            if (rc == CREW_ECANCELED) { // its group was cancelled: not accepted
                g = CREW_HANDLE_NONE;
                continue;
            }
            if (rc != CREW_OK)
                break; // the shutdown
            submitted++;
            if (in_lane)
                lane_submitted++;
            else
                newest_group = uint64_t(g.slot) << 32 | g.gen;
            if (i % 8 == 7)
                std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    });
    std::thread outside([&] { // joins from outside the pool, until the shutdown is over
        while (!stop.load()) {
            Fib f{p, 8, 0, &outside_calls};
            fib_join(&f);
            if (f.r != fib_seq(8))
                s.bad++;
            outside_joins++;
        }
    });
    std::thread chaos([&] {
        unsigned x = seed;
        for (int i = 0; i < 40; i++) {
            x = x * 1103515245u + 12345u;
            switch ((x >> 16) % 4) {
            case 3: {
                uint64_t h = newest_group.load();
                if (h != 0)
                    crew_cancel(p, crew_handle{uint32_t(h >> 32), uint32_t(h)}); // may be over
                break;
            }
            case 0:
                crew_resize(p, 1 + (x >> 8) % 3);
                break;
            case 1:
                if (crew_pause(p) == CREW_OK) {
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
                    crew_resume(p);
                }
                break;
            default:
                std::this_thread::sleep_for(std::chrono::microseconds(300));
            }
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // Both shutdowns at once (one of each, or the same twice), racing the rest.
    std::thread sd1([&] { EXPECT_EQ(crew_shutdown(p, how), CREW_OK); });
    std::thread sd2([&] { EXPECT_EQ(crew_shutdown(p, CREW_CANCEL - how), CREW_OK); });
    producer.join();
    chaos.join();
    sd1.join();
    sd2.join();
    stop = true;
    outside.join();
    crew_resume(p); // a pause the shutdown raced with is over anyway
    ASSERT_EQ(crew_lane_destroy(lane), CREW_OK);

    EXPECT_EQ(s.bad.load(), 0);
    EXPECT_EQ(s.roots_run.load() + s.dropped.load(), submitted.load());
    EXPECT_EQ(s.calls.load(), s.roots_run.load() * fib_calls(kStressFib));
    EXPECT_EQ(s.halves.load(), s.lane_run.load() * (2 * kStressDepth + 1));
    EXPECT_LE(s.lane_run.load(), lane_submitted.load());
    EXPECT_EQ(outside_calls.load(), outside_joins.load() * fib_calls(8));
    crew_destroy(p);
}

TEST(JoinStress, ResizePauseShutdownRace) {
    int rounds = crewtest::under_valgrind() ? 2 : 12;
    for (int i = 0; i < rounds; i++)
        stress_once(i % 2 ? CREW_CANCEL : CREW_DRAIN, unsigned(i) * 7919u + 1u);
}

} // namespace

// fa forks after another thread took fb and before fb ended: in the child (a copy of the worker
// that called crew_join, without the thief) crew_join runs fb on the caller before it returns,
// as crew.h promises; it must not return as if fb had run. fb holds the thief until the fork
// is made; the child ends by exec'ing a shell (as in test_fork), so nothing is freed or left.
namespace {
struct ForkJoin {
    crew_pool *p;
    pid_t parent;
    std::atomic<bool> fb_started{false};
    std::atomic<bool> forked{false};
    bool fb_in_child = false;
    int status = -1;
};

[[noreturn]] void fork_child_exit(int status) {
    char cmd[32];
    std::snprintf(cmd, sizeof cmd, "exit %d", status);
    execl("/bin/sh", "sh", "-c", cmd, (char *)nullptr);
    _exit(status);
}

void forkjoin_fa(void *a) {
    auto *f = static_cast<ForkJoin *>(a);
    for (int i = 0; i < 20000 && !f->fb_started.load(); i++) // another thread takes fb
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pid_t pid = fork();
    if (pid < 0)
        std::abort();
    f->forked = true;
    if (pid == 0) {
        alarm(120);
        return; // the child: crew_join goes on without the thief
    }
    int st = 0;
    if (waitpid(pid, &st, 0) == pid)
        f->status = WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : WEXITSTATUS(st);
}

void forkjoin_fb(void *a) {
    auto *f = static_cast<ForkJoin *>(a);
    f->fb_started = true;
    if (getpid() != f->parent) {
        f->fb_in_child = true;
        return;
    }
    while (!f->forked.load()) // the thief holds fb until the fork is made
        std::this_thread::yield();
}

void forkjoin_task(void *a) {
    auto *f = static_cast<ForkJoin *>(a);
    int rc = crew_join(f->p, forkjoin_fa, f, forkjoin_fb, f);
    if (getpid() != f->parent)
        fork_child_exit(rc != CREW_OK ? 2 : f->fb_in_child ? 0 : 3);
}
} // namespace

TEST(JoinFork, ForkAfterTheOtherHalfWasTaken) {
    crew_pool *p = make_pool(2);
    ForkJoin f;
    f.p = p, f.parent = getpid();
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, forkjoin_task, &f, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_TRUE(f.fb_started.load());
    EXPECT_EQ(f.status, 0); // 3: crew_join returned in the child without running fb
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

// A pause, then a worker's batch claim from the external slot of a thread outside the pool
// that holds a task Y queued under the pause and, on top of it, that thread's offered half H.
// The worker claims only Y (a half is claimed only first, claim_batch) and puts it back for the
// pause; H stays in the slot, and the caller takes it back and returns without crew_resume.
// (Before: H went into the worker's deque, neither run nor handed back, and the caller slept
// until the resume.) The test hook holds the worker just before its claim (work stealing
// only; the checked library's hooks, sched_steal.c). A worker may also claim in its last look
// before it sleeps, which holds the pool's lock, so that crew_pause would wait for the hold: the
// hold then gives up after a while and the test is skipped.
extern "C" void (*crew__test_claim)(int after);
namespace {
std::atomic<int> g_claim_phase{-1}; // the last hook call: 0 before the claim, 1 after
std::atomic<bool> g_claim_go{false};
std::atomic<bool> g_claim_gave_up{false}; // a hold ended without g_claim_go
void hold_claim(int after) {
    g_claim_phase = after;
    if (after)
        return;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!g_claim_go.load())
        if (std::chrono::steady_clock::now() > until) {
            g_claim_gave_up = true;
            return;
        } else {
            std::this_thread::yield();
        }
}
void nothing(void *) {}
void claim_fa(void *) {
    g_claim_go = true; // H is offered: let the worker claim [Y, H]
    for (int i = 0; i < 20000 && g_claim_phase.load() != 1; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
void claim_fb(void *a) { static_cast<std::atomic<int> *>(a)->fetch_add(1); }
} // namespace

// A worker's task forks, and the child (a copy of that worker alone) calls crew_join: no queue of
// the parent's is used, both halves run on the caller and the call succeeds.
namespace {
struct ChildJoin {
    crew_pool *p;
    pthread_t caller;
    int ran = 0; // halves run on the caller
    int status = -1;
};

void childjoin_half(void *a) {
    auto *c = static_cast<ChildJoin *>(a);
    if (pthread_equal(pthread_self(), c->caller))
        c->ran++;
}

void childjoin_task(void *a) {
    auto *c = static_cast<ChildJoin *>(a);
    pid_t pid = fork();
    if (pid < 0)
        std::abort();
    if (pid == 0) {
        alarm(120);
        c->caller = pthread_self();
        int rc = crew_join(c->p, childjoin_half, c, childjoin_half, c);
        fork_child_exit(rc != CREW_OK ? 2 : c->ran == 2 ? 0 : 3);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) == pid)
        c->status = WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : WEXITSTATUS(st);
}
} // namespace

TEST(JoinFork, JoinInAForkedChildRunsBothHalvesOnTheCaller) {
    crew_pool *p = make_pool(2);
    ChildJoin c;
    c.p = p;
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_submit(p, childjoin_task, &c, 0, &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    EXPECT_EQ(c.status, 0); // 2: crew_join failed; 3: a half did not run on the caller
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

TEST(JoinPause, BatchClaimLeavesTheHalfToItsCaller) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.scheduler = CREW_SCHED_STEAL;
    g_claim_phase = -1, g_claim_go = false, g_claim_gave_up = false;
    crew__test_claim = hold_claim; // set and cleared while no worker runs (a plain pointer)
    crew_pool *p = make_pool(cfg);
    // Four tasks queued at once: the worker, woken by the resume, claims a batch of two.
    ASSERT_EQ(crew_pause(p), CREW_OK);
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(crew_submit(p, nothing, nullptr, 0, &g), CREW_OK);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    for (int i = 0; i < 20000 && g_claim_phase.load() != 0; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (g_claim_phase.load() != 0) { // no batch claim here (another strategy)
        g_claim_go = true;
        crew_destroy(p);
        crew__test_claim = nullptr;
        GTEST_SKIP() << "no batch claim under this strategy";
    }
    ASSERT_EQ(crew_wait(p, g), CREW_OK); // the caller runs the four itself
    ASSERT_EQ(crew_pause(p), CREW_OK);
    if (g_claim_gave_up.load()) { // the claim was held under the pool's lock (see above)
        g_claim_go = true;
        ASSERT_EQ(crew_resume(p), CREW_OK);
        crew_destroy(p);
        crew__test_claim = nullptr;
        GTEST_SKIP() << "the worker claimed in its last look, under the pool's lock";
    }
    ASSERT_EQ(crew_submit(p, nothing, nullptr, 0, nullptr), CREW_OK); // Y
    std::atomic<int> fb_runs{0};
    std::atomic<bool> returned{false}, resumed{false};
    std::thread watchdog([&] { // a caller left asleep is woken by the resume (reported)
        for (int i = 0; i < 10000 && !returned.load(); i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (!returned.load()) {
            resumed = true;
            crew_resume(p);
        }
    });
    EXPECT_EQ(crew_join(p, claim_fa, nullptr, claim_fb, &fb_runs), CREW_OK);
    returned = true;
    watchdog.join();
    EXPECT_FALSE(resumed.load()) << "crew_join waited for crew_resume";
    EXPECT_EQ(fb_runs.load(), 1);
    if (!resumed.load()) {
        ASSERT_EQ(crew_resume(p), CREW_OK);
    }
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
    crew__test_claim = nullptr;
}

// A thread outside the pool: its halves run as in a task of the pool, so a half cannot destroy
// or shut down the pool under the call (which reads it after fa returns) nor wait for it to be
// quiet: CREW_EDEADLK, as from a task. Other calls work, and after the join the thread is
// outside again.
namespace {
struct Refused {
    crew_pool *p;
    int destroy = -1, shutdown = -1, wait_all = -1, submit = -1;
    std::atomic<int> ran{0};
};
void refused_fa(void *a) {
    auto *r = static_cast<Refused *>(a);
    r->destroy = crew_destroy(r->p);
    r->shutdown = crew_shutdown(r->p, CREW_DRAIN);
    r->wait_all = crew_wait_all(r->p);
    r->submit = crew_submit(r->p, nothing, nullptr, 0, nullptr);
}
void refused_fb(void *a) { static_cast<Refused *>(a)->ran++; }
} // namespace

TEST(Join, OutsideHalvesCannotDestroyThePool) {
    crew_pool *p = make_pool(2);
    Refused r;
    r.p = p;
    EXPECT_EQ(crew_join(p, refused_fa, &r, refused_fb, &r), CREW_OK);
    EXPECT_EQ(r.destroy, CREW_EDEADLK);
    EXPECT_EQ(r.shutdown, CREW_EDEADLK);
    EXPECT_EQ(r.wait_all, CREW_EDEADLK);
    EXPECT_EQ(r.submit, CREW_OK);
    EXPECT_EQ(r.ran.load(), 1);
    EXPECT_EQ(crew_wait_all(p), CREW_OK); // outside the join: allowed again
    EXPECT_EQ(crew_destroy(p), CREW_OK);
}

// crew_diagnose lists a caller asleep in crew_join for a half another thread took (and holds);
// where the strategy has no offer, as a caller of crew_wait (fb went into a group).
namespace {
struct Listed {
    crewtest::Gate gate;
    std::atomic<bool> fb_started{false};
};
void listed_fa(void *a) {
    auto *l = static_cast<Listed *>(a);
    for (int i = 0; i < 20000 && !l->fb_started.load(); i++) // the worker takes fb
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
void listed_fb(void *a) {
    auto *l = static_cast<Listed *>(a);
    l->fb_started = true;
    l->gate.wait();
}
std::string diagnose_text(crew_pool *p) {
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    crew_diagnose_ex(p, f, 1000000u, 1000000u, 0);
    std::fclose(f);
    std::string s(buf, len);
    std::free(buf);
    return s;
}
} // namespace

TEST(Join, DiagnoseListsASleepingJoiner) {
    crew_pool *p = make_pool(1);
    Listed l;
    std::thread caller([&] { EXPECT_EQ(crew_join(p, listed_fa, &l, listed_fb, &l), CREW_OK); });
    std::string text;
    for (int i = 0; i < 20000; i++) {
        text = diagnose_text(p);
        if (text.find("in crew_join") != std::string::npos ||
            text.find("in crew_wait for group") != std::string::npos) // fb through a group
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(text.find("in crew_join for a half another thread took") != std::string::npos ||
                text.find("in crew_wait for group") != std::string::npos)
        << text;
    l.gate.open();
    caller.join();
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}
