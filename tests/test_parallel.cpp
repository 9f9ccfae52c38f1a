// test_parallel.cpp -- crew_parallel_for, crew_parallel_reduce and crew_parallel_filter: every
// element exactly once, deterministic reduction, stable filtering, nesting, tiny and large
// ranges, bad input.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "common.h"

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
