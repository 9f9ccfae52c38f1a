// test_nested.cpp -- spawn-and-wait inside tasks (nested parallelism) never deadlocks and does
// not overflow the stack, on 1 and 2 threads, with default stack sizes.
#include <gtest/gtest.h>

#include <atomic>

#include "common.h"

using crewtest::make_pool;

namespace {

struct Fib {
    crew_pool *p;
    int n;
    long result;
    int rc;
};

// Every call spawns both children into a new group and waits for them: no cutoff.
void fib_task(void *arg) {
    auto *f = static_cast<Fib *>(arg);
    if (f->n < 2) {
        f->result = f->n;
        f->rc = CREW_OK;
        return;
    }
    Fib a{f->p, f->n - 1, 0, -100}, b{f->p, f->n - 2, 0, -100};
    crew_handle g = CREW_HANDLE_NONE;
    crew_task t[2] = {};
    t[0].fn = fib_task, t[0].arg = &a;
    t[1].fn = fib_task, t[1].arg = &b;
    f->rc = crew_enqueue_tasks(f->p, t, 2, &g);
    if (f->rc == CREW_OK)
        f->rc = crew_wait(f->p, g);
    if (f->rc == CREW_OK && (a.rc != CREW_OK || b.rc != CREW_OK))
        f->rc = a.rc != CREW_OK ? a.rc : b.rc;
    f->result = a.result + b.result;
}

long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

int fib_size() {
#ifdef CREW_SANITIZED
    return 24;
#else
    return crewtest::under_valgrind() ? 18 : 30;
#endif
}

void run_fib(unsigned threads, bool from_task) {
    crew_pool *p = make_pool(threads);
    Fib root{p, fib_size(), 0, -100};
    if (from_task) {
        crew_task t = {};
        t.fn = fib_task, t.arg = &root;
        ASSERT_EQ(crew_enqueue_tasks_wait(p, &t, 1), CREW_OK);
    } else {
        fib_task(&root); // the caller spawns and helps
    }
    EXPECT_EQ(root.rc, CREW_OK);
    EXPECT_EQ(root.result, fib_seq(root.n));
    crew_destroy(p);
}

} // namespace

TEST(Nested, FibOnOneThread) { run_fib(1, true); }
TEST(Nested, FibOnTwoThreads) { run_fib(2, true); }
TEST(Nested, FibFromOutsideOnOneThread) { run_fib(1, false); }
TEST(Nested, FibOnFourThreads) { run_fib(4, true); }

TEST(Nested, WaitAllInsideATaskOfAnotherPoolHelpsThatPool) {
    crew_pool *a = make_pool(1), *b = make_pool(1);
    struct Ctx {
        crew_pool *b;
        std::atomic<int> n{0};
        int rc = -100;
    } ctx;
    ctx.b = b;
    ASSERT_EQ(crew_submit(
                  a,
                  [](void *arg) {
                      auto *c = static_cast<Ctx *>(arg);
                      auto inc = [](void *x) { static_cast<std::atomic<int> *>(x)->fetch_add(1); };
                      for (int i = 0; i < 100; i++)
                          crew_submit(c->b, inc, &c->n, 0, nullptr);
                      c->rc = crew_wait_all(c->b); // fine: not a task of b
                  },
                  &ctx, 0, nullptr),
              CREW_OK);
    EXPECT_EQ(crew_wait_all(a), CREW_OK);
    EXPECT_EQ(ctx.rc, CREW_OK);
    EXPECT_EQ(ctx.n.load(), 100);
    crew_destroy(a);
    crew_destroy(b);
}
