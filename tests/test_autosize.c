/* test_autosize.c -- the sizing controllers' decision functions, alone, with scripted inputs:
 * seed 001 Fig. 9 (crew__ait_step) branch by branch, and crew's BALANCE controller
 * (crew__balance_step) on CPU-bound, blocking, idle and noisy periods. Exits non-zero on failure. */
#include <stdio.h>

#include "internal.h"

static int failures;
#define EXPECT_EQ_U(got, want, what)                                                             \
    do {                                                                                         \
        unsigned g_ = (got), w_ = (want);                                                        \
        if (g_ != w_) {                                                                          \
            fprintf(stderr, "test_autosize: %s: got %u, want %u\n", what, g_, w_);               \
            failures++;                                                                          \
        }                                                                                        \
    } while (0)

static void ait(void) {
    crew__ait_state s = {0, 0, 4};
    /* No history: |cur - pre| / pre is not a number, so the else branch: prePoolSize ==
     * poolSize, grow by stride. */
    EXPECT_EQ_U(crew__ait_step(&s, 100, 4, 2, 1, 64), 6, "first cycle grows");
    /* AIT rose > 1% and preAIT (100) >= prepreAIT (0): grow. */
    EXPECT_EQ_U(crew__ait_step(&s, 200, 6, 2, 1, 64), 8, "rising AIT after a rise grows");
    /* AIT fell, but preAIT (200) >= prepreAIT (100): no change. */
    EXPECT_EQ_U(crew__ait_step(&s, 150, 8, 2, 1, 64), 8, "falling AIT after a rise holds");
    /* Change within 1%, and prePoolSize == poolSize: grow. */
    EXPECT_EQ_U(crew__ait_step(&s, 150.5, 8, 2, 1, 64), 10, "flat AIT grows");
    /* AIT rose > 1% after a fall (preAIT < prepreAIT): shrink. */
    s = (crew__ait_state){100, 200, 10};
    EXPECT_EQ_U(crew__ait_step(&s, 150, 10, 2, 1, 64), 8, "rise after a fall shrinks");
    /* AIT fell again after a fall: grow. */
    s = (crew__ait_state){100, 200, 10};
    EXPECT_EQ_U(crew__ait_step(&s, 50, 10, 2, 1, 64), 12, "fall after a fall grows");
    /* Flat, but the size changed behind the controller's back (prePoolSize != poolSize): hold. */
    s = (crew__ait_state){100, 100, 10};
    EXPECT_EQ_U(crew__ait_step(&s, 100, 7, 2, 1, 64), 7, "flat after an outside resize holds");
    /* poolSize <= 0 becomes 1; results stay within [min, max]. */
    s = (crew__ait_state){100, 200, 1};
    EXPECT_EQ_U(crew__ait_step(&s, 150, 1, 2, 1, 64), 1, "never below 1");
    s = (crew__ait_state){0, 0, 63};
    EXPECT_EQ_U(crew__ait_step(&s, 10, 63, 2, 1, 64), 64, "clamped to max");
    s = (crew__ait_state){100, 200, 3};
    EXPECT_EQ_U(crew__ait_step(&s, 150, 3, 2, 2, 64), 2, "clamped to min");
}

static crew__balance_in period(double completed, double busy, double cpu, size_t queued,
                               unsigned size) {
    crew__balance_in in = {0.1, (uint64_t)completed, busy, cpu, queued, size, 2};
    return in;
}

static void balance(void) {
    crew__balance_state s = {0};
    /* CPU-bound: the CPU is saturated with more threads than cores: probe one step down. */
    crew__balance_in in = period(1000, 8, 2.0, 50, 8);
    unsigned n = crew__balance_step(&s, &in, 1, 64);
    EXPECT_EQ_U(n, 7, "saturated CPU with 8 threads on 2 cores probes down");
    /* Throughput held: keep shrinking, with a doubled step. */
    in = period(1010, 7, 2.0, 50, 7);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 5, "shrinking paid: bigger step");
    /* Throughput fell by 10% after the shrink: undo and hold. */
    in = period(900, 5, 2.0, 50, 5);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 7, "a shrink that hurt is undone");
    in = period(1000, 7, 2.0, 50, 7);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 7, "then it holds");

    /* Blocking tasks: a backlog and idle CPU: grow while it pays. */
    s = (crew__balance_state){0};
    in = period(100, 4, 0.3, 500, 4);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 5, "backlog with idle CPU grows");
    in = period(125, 5, 0.4, 500, 5);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 7, "growing paid: bigger step");
    in = period(126, 7, 0.4, 500, 7); /* no gain (< 3%) */
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 5, "growing without gain is undone");
    in = period(125, 5, 0.4, 500, 5);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 5, "then it holds");

    /* Too many threads for the demand: no backlog, 1.2 tasks running on 10 threads. */
    s = (crew__balance_state){0};
    in = period(1000, 1.2, 1.2, 0, 10);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 6, "shrinks halfway towards the demand (3)");
    /* An idle pool drifts down to min, one step per period. */
    s = (crew__balance_state){0};
    in = period(0, 0, 0, 0, 3);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 2, 64), 2, "idle drifts down");
    in = period(0, 0, 0, 0, 2);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 2, 64), 2, "but not below min");
    /* Too few completions to judge, with a backlog: keep the size, keep measuring. */
    s = (crew__balance_state){0};
    in = period(3, 4, 0.1, 10, 4);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 64), 4, "too few samples: no decision");
    /* Bounds. */
    s = (crew__balance_state){0};
    in = period(100, 16, 0.3, 500, 16);
    EXPECT_EQ_U(crew__balance_step(&s, &in, 1, 16), 16, "never above max");
}

int main(void) {
    ait();
    balance();
    if (failures) {
        printf("test_autosize: %d failures\n", failures);
        return 1;
    }
    printf("test_autosize: ok\n");
    return 0;
}
