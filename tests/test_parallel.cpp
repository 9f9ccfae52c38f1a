// test_parallel.cpp -- crew_parallel_for, crew_parallel_reduce and crew_parallel_filter: every
// element exactly once, deterministic reduction, stable filtering, nesting, tiny and large
// ranges, bad input; and the same under every engine (src/parallel.c: the counter, its runners
// in a group or offered by crew_join, and lazy binary splitting on crew_join)
// from outside and inside tasks and lanes, on one to four threads, paused, racing with both
// shutdowns, and with C++ exceptions; a paused work-stealing pool needs no resume.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common.h"
#include "crew.hpp"

using crewtest::make_pool;
using crewtest::scaled;

namespace {

struct Marks {
    std::unique_ptr<std::atomic<uint8_t>[]> hit;
    size_t offset;
};

void mark(size_t b, size_t e, void *arg) {
    auto *m = static_cast<Marks *>(arg);
    for (size_t i = b; i < e; i++)
        m->hit[i - m->offset].fetch_add(1, std::memory_order_relaxed);
}

void fold_sum(size_t b, size_t e, void *acc, void *arg) {
    auto *v = static_cast<const double *>(arg);
    double s = *static_cast<double *>(acc);
    for (size_t i = b; i < e; i++)
        s += v[i];
    *static_cast<double *>(acc) = s;
}
void combine_sum(void *acc, const void *other, void *) {
    *static_cast<double *>(acc) += *static_cast<const double *>(other);
}

} // namespace

TEST(Parallel, ForVisitsEveryIndexExactlyOnce) {
    crew_pool *p = make_pool(2);
    for (size_t n : {size_t(1), size_t(2), size_t(10), size_t(1000), size_t(scaled(1000000))})
        for (size_t grain : {size_t(0), size_t(1), size_t(7), n}) {
            Marks m{std::unique_ptr<std::atomic<uint8_t>[]>(new std::atomic<uint8_t>[n]()), 5};
            ASSERT_EQ(crew_parallel_for(p, 5, 5 + n, grain, mark, &m), CREW_OK);
            for (size_t i = 0; i < n; i++)
                ASSERT_EQ(m.hit[i].load(), 1) << "n=" << n << " grain=" << grain << " i=" << i;
        }
    EXPECT_EQ(crew_parallel_for(p, 3, 3, 0, mark, nullptr), CREW_OK); // empty range
    crew_destroy(p);
}

TEST(Parallel, BadInput) {
    crew_pool *p = make_pool(1);
    double r = 0;
    size_t k = 0;
    int x = 0;
    EXPECT_EQ(crew_parallel_for(nullptr, 0, 1, 0, mark, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_parallel_for(p, 0, 1, 0, nullptr, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_parallel_for(p, 5, 1, 0, mark, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_parallel_reduce(p, 0, 1, 0, &r, 0, fold_sum, combine_sum, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_parallel_reduce(p, 0, 1, 0, nullptr, 8, fold_sum, combine_sum, nullptr),
              CREW_EINVAL);
    EXPECT_EQ(crew_parallel_reduce(p, 0, 1, 0, &r, 8, nullptr, combine_sum, nullptr), CREW_EINVAL);
    auto keep = [](const void *, void *) { return 1; };
    EXPECT_EQ(crew_parallel_filter(p, &x, 1, 0, &x, &k, keep, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_parallel_filter(p, &x, 1, sizeof x, &x, nullptr, keep, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_parallel_filter(p, nullptr, 1, sizeof x, &x, &k, keep, nullptr), CREW_EINVAL);
    crew_destroy(p);
}

// The automatic grain over a range near SIZE_MAX: a few chunks a thread, as for any range. (Its
// rounding once wrapped there, so that the grain came out as 1: crew_parallel_for then made a
// chunk per index, and crew_parallel_reduce its 65,536 partials at most.) Neither function looks
// at the indices, so the loops are quick.
TEST(Parallel, AutomaticGrainOverARangeNearSizeMax) {
    crew_pool *p = make_pool(2);
    const size_t n = SIZE_MAX - 5, most = (crew_size(p) + 1) * 8 + 1; // CHUNKS_PER_THREAD: 8
    struct Seen {
        std::atomic<size_t> calls{0}, covered{0};
    } reduce_seen, for_seen;
    auto fold = [](size_t b, size_t e, void *acc, void *arg) {
        static_cast<Seen *>(arg)->calls.fetch_add(1);
        static_cast<Seen *>(arg)->covered.fetch_add(e - b);
        *static_cast<size_t *>(acc) += 1;
    };
    auto combine = [](void *into, const void *from, void *) {
        *static_cast<size_t *>(into) += *static_cast<const size_t *>(from);
    };
    size_t chunks = 0;
    ASSERT_EQ(crew_parallel_reduce(p, 0, n, 0, &chunks, sizeof chunks, fold, combine,
                                   &reduce_seen),
              CREW_OK);
    EXPECT_LE(reduce_seen.calls.load(), most);
    EXPECT_EQ(chunks, reduce_seen.calls.load());
    EXPECT_EQ(reduce_seen.covered.load(), n);
    auto body = [](size_t b, size_t e, void *arg) {
        auto *s = static_cast<Seen *>(arg);
        if (s->calls.fetch_add(1) > 1000000) // a chunk per index: stop the test, not the machine
            std::abort();
        s->covered.fetch_add(e - b);
    };
    ASSERT_EQ(crew_parallel_for(p, 0, n, 0, body, &for_seen), CREW_OK);
    EXPECT_LE(for_seen.calls.load(), most);
    EXPECT_EQ(for_seen.covered.load(), n);
    crew_destroy(p);
}

TEST(Parallel, ReduceIsCorrectAndDeterministic) {
    crew_pool *p = make_pool(2);
    const size_t n = scaled(2000000);
    std::vector<double> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = 1.0 / double(i + 1); // sums whose value depends on the order of additions
    double first = 0;
    ASSERT_EQ(crew_parallel_reduce(p, 0, n, 0, &first, sizeof first, fold_sum, combine_sum,
                                   v.data()),
              CREW_OK);
    double seq = 0;
    for (size_t i = 0; i < n; i++)
        seq += v[i];
    EXPECT_NEAR(first, seq, 1e-9 * seq);
    for (int run = 0; run < 20; run++) {
        double again = 0;
        ASSERT_EQ(crew_parallel_reduce(p, 0, n, 0, &again, sizeof again, fold_sum, combine_sum,
                                       v.data()),
                  CREW_OK);
        ASSERT_EQ(std::memcmp(&again, &first, sizeof again), 0) << "run " << run;
    }
    double tiny = 0; // grain 1 over a huge range: the chunk count is capped
    ASSERT_EQ(crew_parallel_reduce(p, 0, n, 1, &tiny, sizeof tiny, fold_sum, combine_sum,
                                   v.data()),
              CREW_OK);
    EXPECT_NEAR(tiny, seq, 1e-9 * seq);
    crew_destroy(p);
}

TEST(Parallel, FilterIsStableAndCallsThePredicateOnce) {
    crew_pool *p = make_pool(2);
    for (size_t n : {size_t(0), size_t(1), size_t(10), size_t(scaled(1000000))}) {
        std::vector<long> in(n), out(n, -1);
        for (size_t i = 0; i < n; i++)
            in[i] = long(i * 7919 % 1000);
        std::unique_ptr<std::atomic<uint8_t>[]> calls(new std::atomic<uint8_t>[n + 1]());
        struct Ctx {
            const long *base;
            std::atomic<uint8_t> *calls;
        } ctx{in.data(), calls.get()};
        auto keep = [](const void *e, void *a) {
            auto *c = static_cast<Ctx *>(a);
            const long *x = static_cast<const long *>(e);
            c->calls[size_t(x - c->base)].fetch_add(1);
            return int(*x % 3 == 0);
        };
        size_t kept = 12345;
        ASSERT_EQ(crew_parallel_filter(p, in.data(), n, sizeof(long), out.data(), &kept, keep,
                                       &ctx),
                  CREW_OK);
        std::vector<long> want;
        for (long x : in)
            if (x % 3 == 0)
                want.push_back(x);
        ASSERT_EQ(kept, want.size());
        for (size_t i = 0; i < kept; i++)
            ASSERT_EQ(out[i], want[i]) << i;
        for (size_t i = 0; i < n; i++)
            ASSERT_EQ(calls[i].load(), 1) << i;
    }
    crew_destroy(p);
}

namespace {
struct Nest {
    crew_pool *p;
    std::atomic<long> *total;
};
void inner(size_t b, size_t e, void *arg) {
    static_cast<Nest *>(arg)->total->fetch_add(long(e - b));
}
void outer(size_t b, size_t e, void *arg) {
    auto *n = static_cast<Nest *>(arg);
    for (size_t i = b; i < e; i++)
        ASSERT_EQ(crew_parallel_for(n->p, 0, 100, 0, inner, n), CREW_OK);
}
} // namespace

TEST(Parallel, NestedLoopsOnOneAndTwoThreads) {
    for (unsigned threads : {1u, 2u}) {
        crew_pool *p = make_pool(threads);
        std::atomic<long> total{0};
        Nest n{p, &total};
        ASSERT_EQ(crew_parallel_for(p, 0, 200, 0, outer, &n), CREW_OK);
        EXPECT_EQ(total.load(), 200 * 100);
        crew_destroy(p);
    }
}

TEST(Parallel, ShutDownPoolStillCompletesTheLoopOnTheCaller) {
    crew_pool *p = make_pool(2);
    ASSERT_EQ(crew_shutdown(p, CREW_DRAIN), CREW_OK);
    Marks m{std::unique_ptr<std::atomic<uint8_t>[]>(new std::atomic<uint8_t>[1000]()), 0};
    ASSERT_EQ(crew_parallel_for(p, 0, 1000, 10, mark, &m), CREW_OK);
    for (size_t i = 0; i < 1000; i++)
        ASSERT_EQ(m.hit[i].load(), 1);
    crew_destroy(p);
}

namespace {
// A fold slow enough (about 50 us a chunk) that the loop asks the pool for helpers.
void slow_fold(size_t b, size_t e, void *acc, void *) {
    uint64_t t0 = crew_now_ns();
    while (crew_now_ns() - t0 < 50000) {
    }
    *static_cast<double *>(acc) += double(e - b);
}
} // namespace

TEST(Parallel, AFullBoundedQueueRefusesHelpersAndTheCallerFinishes) {
    // More helpers than the queue has room for: the offer is refused at once (under every
    // policy), and the caller completes the loop and its result alone.
    for (unsigned policy : {CREW_FULL_FAIL, CREW_FULL_BLOCK, CREW_FULL_DROP_OLDEST}) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = 4;
        cfg.queue_capacity = 1;
        cfg.full_policy = policy;
        crew_pool *p = make_pool(cfg);
        double sum = 0;
        ASSERT_EQ(crew_parallel_reduce(p, 0, 64, 1, &sum, sizeof sum, slow_fold, combine_sum,
                                       nullptr),
                  CREW_OK)
            << "policy " << policy;
        EXPECT_EQ(sum, 64.0) << "policy " << policy;
        EXPECT_EQ(crew_wait_all(p), CREW_OK); // nothing of the loop was dropped or is left
        crew_destroy(p);
    }
}

// ---- every engine (src/parallel.c): the counter with its runners in a group or offered by
// crew_join, and lazy binary splitting on crew_join ----

// The engine choice (src/parallel.h; the tests link the static library).
extern "C" void crew__parallel_engine(int engine);

namespace {

const int kEngines[] = {0, 1, 2, 3}; // automatic, counter, split, offer (CREW__PAR_*)

// Chooses an engine for the scope of a test, and the automatic one again after it.
struct Engine {
    explicit Engine(int e) { crew__parallel_engine(e); }
    ~Engine() { crew__parallel_engine(0); }
};

// Marks over [0, n), checked for exactly one visit each.
struct Visits {
    explicit Visits(size_t count) : n(count), hit(new std::atomic<uint8_t>[count]()) {}
    size_t n;
    std::unique_ptr<std::atomic<uint8_t>[]> hit;
    size_t wrong() const { // the first index not visited exactly once, or n
        for (size_t i = 0; i < n; i++)
            if (hit[i].load() != 1)
                return i;
        return n;
    }
};
void visit(size_t b, size_t e, void *arg) {
    auto *v = static_cast<Visits *>(arg);
    for (size_t i = b; i < e; i++)
        v->hit[i].fetch_add(1, std::memory_order_relaxed);
}
// The same, a few microseconds a chunk, so that the loop is shared out.
void visit_slowly(size_t b, size_t e, void *arg) {
    uint64_t t0 = crew_now_ns();
    while (crew_now_ns() - t0 < 3000) {
    }
    visit(b, e, arg);
}

struct InTask {
    crew_pool *p;
    Visits *v;
    size_t grain;
    std::atomic<int> *bad;
};
void loop_in_task(void *a) {
    auto *t = static_cast<InTask *>(a);
    if (crew_parallel_for(t->p, 0, t->v->n, t->grain, visit_slowly, t->v) != CREW_OK)
        t->bad->fetch_add(1);
}

} // namespace

TEST(ParallelEngines, EveryIndexOnceFromOutsideAndInsideOnOneToFourThreads) {
    for (int engine : kEngines) {
        Engine e(engine);
        for (unsigned threads : {1u, 2u, 4u}) {
            crew_pool *p = make_pool(threads);
            for (size_t n : {size_t(1), size_t(3), size_t(1000), size_t(scaled(200000))})
                for (size_t grain : {size_t(0), size_t(1), size_t(64)}) {
                    Visits v(n);
                    ASSERT_EQ(crew_parallel_for(p, 0, n, grain, visit, &v), CREW_OK);
                    ASSERT_EQ(v.wrong(), n) << "engine " << engine << " threads " << threads
                                            << " n " << n << " grain " << grain;
                }
            // Slow chunks, so the pool's threads take part: from outside, then in tasks
            // (several loops at once, each running inside a task of the pool).
            Visits out(300);
            ASSERT_EQ(crew_parallel_for(p, 0, out.n, 1, visit_slowly, &out), CREW_OK);
            EXPECT_EQ(out.wrong(), out.n) << "engine " << engine << " threads " << threads;
            std::vector<std::unique_ptr<Visits>> vs;
            std::vector<InTask> tasks;
            std::atomic<int> bad{0};
            for (int i = 0; i < 4; i++)
                vs.emplace_back(new Visits(200));
            for (int i = 0; i < 4; i++)
                tasks.push_back(InTask{p, vs[size_t(i)].get(), size_t(i % 2), &bad});
            crew_handle g = CREW_HANDLE_NONE;
            for (auto &t : tasks)
                ASSERT_EQ(crew_submit(p, loop_in_task, &t, 0, &g), CREW_OK);
            ASSERT_EQ(crew_wait(p, g), CREW_OK);
            EXPECT_EQ(bad.load(), 0);
            for (auto &v : vs)
                EXPECT_EQ(v->wrong(), v->n) << "engine " << engine << " threads " << threads;
            crew_destroy(p);
        }
    }
}

TEST(ParallelEngines, ReduceGivesTheSameBitsUnderEveryEngine) {
    crew_pool *p = make_pool(2);
    const size_t n = scaled(1000000);
    std::vector<double> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = 1.0 / double(i + 1);
    for (size_t grain : {size_t(0), size_t(1), size_t(1000)}) {
        double sums[4] = {0, 0, 0, 0};
        for (int engine : kEngines) {
            Engine e(engine);
            ASSERT_EQ(crew_parallel_reduce(p, 0, n, grain, &sums[engine], sizeof(double),
                                           fold_sum, combine_sum, v.data()),
                      CREW_OK);
        }
        for (int engine : kEngines)
            EXPECT_EQ(std::memcmp(&sums[0], &sums[engine], sizeof(double)), 0)
                << "grain " << grain << " engine " << engine;
    }
    crew_destroy(p);
}

TEST(ParallelEngines, FilterIsStableUnderEveryEngine) {
    for (int engine : kEngines) {
        Engine e(engine);
        for (unsigned threads : {1u, 3u}) {
            crew_pool *p = make_pool(threads);
            const size_t n = scaled(300000);
            std::vector<int> in(n), out(n);
            for (size_t i = 0; i < n; i++)
                in[i] = int(i);
            auto keep = [](const void *x, void *) {
                return int(*static_cast<const int *>(x) % 7 == 2);
            };
            size_t kept = 0;
            ASSERT_EQ(crew_parallel_filter(p, in.data(), n, sizeof(int), out.data(), &kept, keep,
                                           nullptr),
                      CREW_OK);
            size_t want = 0;
            for (size_t i = 0; i < n; i++) {
                if (in[i] % 7 == 2) {
                    ASSERT_EQ(out[want++], in[i]) << "engine " << engine << " at " << want;
                }
            }
            EXPECT_EQ(kept, want);
            crew_destroy(p);
        }
    }
}

TEST(ParallelEngines, NestedLoopsInLaneTasksAndInLoops) {
    for (int engine : kEngines) {
        Engine e(engine);
        for (unsigned threads : {1u, 2u}) {
            crew_pool *p = make_pool(threads);
            std::atomic<long> total{0};
            Nest nest{p, &total};
            ASSERT_EQ(crew_parallel_for(p, 0, 50, 1, outer, &nest), CREW_OK);
            EXPECT_EQ(total.load(), 50 * 100);
            crew_lane *lane = nullptr;
            ASSERT_EQ(crew_lane_create(p, 1, &lane), CREW_OK);
            std::vector<std::unique_ptr<Visits>> vs;
            std::vector<InTask> tasks;
            std::atomic<int> bad{0};
            for (int i = 0; i < 3; i++)
                vs.emplace_back(new Visits(100));
            for (int i = 0; i < 3; i++)
                tasks.push_back(InTask{p, vs[size_t(i)].get(), 1, &bad});
            crew_handle g = CREW_HANDLE_NONE;
            for (auto &t : tasks)
                ASSERT_EQ(crew_lane_submit(lane, loop_in_task, &t, &g), CREW_OK);
            ASSERT_EQ(crew_wait(p, g), CREW_OK);
            EXPECT_EQ(bad.load(), 0);
            for (auto &v : vs)
                EXPECT_EQ(v->wrong(), v->n);
            ASSERT_EQ(crew_lane_destroy(lane), CREW_OK);
            crew_destroy(p);
        }
    }
}

TEST(ParallelEngines, APausedPoolStillGetsEveryIndexOnce) {
    // Paused: the loop's offers or helpers may not run on the pool's threads until the resume
    // (crew_join's offers come back and the caller finishes; the counter's queued helpers wait
    // for the resume): either way every index once, and nothing left queued.
    for (int engine : kEngines) {
        Engine e(engine);
        crew_pool *p = make_pool(2);
        ASSERT_EQ(crew_pause(p), CREW_OK);
        Visits v(200);
        std::atomic<int> rc{1};
        std::thread t([&] { rc = crew_parallel_for(p, 0, v.n, 1, visit_slowly, &v); });
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ASSERT_EQ(crew_resume(p), CREW_OK);
        t.join();
        EXPECT_EQ(rc.load(), CREW_OK);
        EXPECT_EQ(v.wrong(), v.n) << "engine " << engine;
        EXPECT_EQ(crew_wait_all(p), CREW_OK);
        crew_destroy(p);
    }
}

TEST(ParallelEngines, APausedWorkStealingPoolNeedsNoResume) {
    // Under work stealing the default engine offers its runners with crew_join: on a paused
    // pool nobody takes them (or a thread that took one as the pause began hands it back), so
    // the caller runs every chunk and returns without a crew_resume, from outside and from a
    // thread that is inside a join's half.
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    cfg.scheduler = CREW_SCHED_STEAL;
    crew_pool *p = make_pool(cfg);
    ASSERT_EQ(crew_pause(p), CREW_OK);
    Visits v(300);
    ASSERT_EQ(crew_parallel_for(p, 0, v.n, 1, visit_slowly, &v), CREW_OK);
    EXPECT_EQ(v.wrong(), v.n);
    double sum = 0;
    ASSERT_EQ(crew_parallel_reduce(p, 0, 64, 1, &sum, sizeof sum, slow_fold, combine_sum,
                                   nullptr),
              CREW_OK);
    EXPECT_EQ(sum, 64.0);
    ASSERT_EQ(crew_resume(p), CREW_OK);
    EXPECT_EQ(crew_wait_all(p), CREW_OK);
    crew_destroy(p);
}

namespace {
std::atomic<long> g_dropped{0};
void counted_loop(void *a);
// The counter engine's helper tasks may be dropped too (they are offers, never needed): only
// the test's own tasks are counted.
void count_dropped(crew_fn fn, void *, void *) {
    if (fn == counted_loop)
        g_dropped.fetch_add(1);
}
struct Counted {
    InTask t;
    std::atomic<long> *ran;
};
void counted_loop(void *a) {
    auto *c = static_cast<Counted *>(a);
    c->ran->fetch_add(1);
    loop_in_task(&c->t);
}
} // namespace

TEST(ParallelEngines, ShutdownsRaceWithLoopsFromOutsideAndFromTasks) {
    // Loops run from outside and inside tasks while the pool shuts down (draining or
    // cancelling): every loop returns CREW_OK with every index visited once, and every task
    // submitted either ran or reached on_drop.
    const int rounds = int(scaled(8));
    for (int engine : kEngines)
        for (int round = 0; round < rounds; round++) {
            Engine e(engine);
            g_dropped = 0;
            crew_pool *p = crewtest::make_pool_on_drop(2, count_dropped);
            std::atomic<long> ran{0};
            std::atomic<int> bad{0};
            std::vector<std::unique_ptr<Visits>> vs;
            for (int i = 0; i < 8; i++)
                vs.emplace_back(new Visits(60));
            std::vector<Counted> cs;
            for (int i = 0; i < 6; i++)
                cs.push_back(Counted{InTask{p, vs[size_t(i)].get(), 1, &bad}, &ran});
            long accepted = 0;
            for (auto &c : cs)
                accepted += crew_submit(p, counted_loop, &c, 0, nullptr) == CREW_OK;
            std::atomic<int> outside_rc[2] = {{1}, {1}};
            std::thread outside[2];
            for (int i = 0; i < 2; i++)
                outside[i] = std::thread([&, i] {
                    outside_rc[i] = crew_parallel_for(p, 0, vs[size_t(6 + i)]->n, 1, visit_slowly,
                                                      vs[size_t(6 + i)].get());
                });
            int how = round % 2 ? CREW_CANCEL : CREW_DRAIN;
            int sd = crew_shutdown(p, how);
            EXPECT_TRUE(sd == CREW_OK || sd == CREW_ECANCELED) << sd;
            for (auto &t : outside)
                t.join();
            for (auto &r : outside_rc)
                EXPECT_EQ(r.load(), CREW_OK);
            EXPECT_EQ(bad.load(), 0);
            EXPECT_EQ(ran.load() + g_dropped.load(), accepted) << "engine " << engine;
            for (int i = 6; i < 8; i++)
                EXPECT_EQ(vs[size_t(i)]->wrong(), vs[size_t(i)]->n) << "engine " << engine;
            for (int i = 0; i < 6; i++) { // a task's loop ran whole, or not at all (dropped)
                size_t w = vs[size_t(i)]->wrong();
                bool none = true;
                for (size_t k = 0; k < vs[size_t(i)]->n; k++)
                    none = none && vs[size_t(i)]->hit[k].load() == 0;
                EXPECT_TRUE(w == vs[size_t(i)]->n || none) << "engine " << engine << " task " << i;
            }
            crew_destroy(p);
        }
}

TEST(ParallelEngines, CppExceptionsAreRethrownAfterTheLoop) {
    for (int engine : kEngines) {
        Engine e(engine);
        for (unsigned threads : {1u, 2u}) {
            crew::pool p(crew::options{threads});
            std::atomic<long> seen{0};
            EXPECT_THROW(crew::parallel_for(p, 0, 5000,
                                            [&](size_t i) {
                                                seen.fetch_add(1);
                                                if (i == 1234)
                                                    throw std::runtime_error("boom");
                                            },
                                            16),
                         std::runtime_error);
            EXPECT_GE(seen.load(), 1);
            EXPECT_LE(seen.load(), 5000);
            EXPECT_THROW(crew::parallel_reduce(
                             p, 0, 5000, 0L,
                             [](size_t b, size_t e2, long acc) {
                                 if (b <= 4321 && 4321 < e2)
                                     throw std::logic_error("fold");
                                 return acc + long(e2 - b);
                             },
                             [](long a, long b) { return a + b; }, 10),
                         std::logic_error);
            // The pool is unharmed: a loop after them visits everything once.
            std::vector<std::atomic<int>> hits(3000);
            crew::parallel_for(p, 0, hits.size(), [&](size_t i) { hits[i].fetch_add(1); });
            for (auto &h : hits)
                ASSERT_EQ(h.load(), 1);
            long sum = crew::parallel_reduce(
                p, 0, 3000, 0L, [](size_t b, size_t e2, long acc) { return acc + long(e2 - b); },
                [](long a, long b) { return a + b; });
            EXPECT_EQ(sum, 3000);
        }
    }
}
