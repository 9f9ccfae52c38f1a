/* test_autosize.c -- the sizing controllers' decision functions, alone, with scripted inputs:
 * Xu & Bode, Fig. 9 (crew__ait_step) branch by branch, and crew's BALANCE controller
 * (crew__balance_step) on CPU-bound, blocking, idle and noisy periods. Exits non-zero on
 * failure. */
#include <stdio.h>

#include "autosize.h"
#include "check.h"

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

/* A measured period of 0.1 s on 2 cores. */
static crew__balance_in period(double completed, double busy, double cpu, size_t queued,
                               unsigned size) {
    crew__balance_in in = {0.1, (uint64_t)completed, busy, cpu, queued, size, 2, -1.0, -1.0};
    return in;
}

/* The same, with the share of the workers' context switches that were preemptions. */
static crew__balance_in period_p(double completed, double busy, double cpu, size_t queued,
                                 unsigned size, double preempted) {
    crew__balance_in in = period(completed, busy, cpu, queued, size);
    in.preempted = preempted;
    return in;
}

/* One BALANCE decision on a period's measurements. After a resize the controller skips a
 * settling period (consumed here, right after the resize), then measures BALANCE_JUDGE_PERIODS
 * periods before it judges: the caller's next step stands for all of them (same figures each),
 * and none of them but the last may change the size. */
static unsigned step(crew__balance_state *s, crew__balance_in in, unsigned min, unsigned max) {
    while (s->judge_left > 1)
        if (crew__balance_step(s, &in, min, max) != in.size) {
            fprintf(stderr, "test_autosize: a measuring period changed the size\n");
            failures++;
        }
    unsigned next = crew__balance_step(s, &in, min, max);
    if (next != in.size) {
        crew__balance_in later = in;
        later.size = next;
        while (s->settle > 0)
            if (crew__balance_step(s, &later, min, max) != next) {
                fprintf(stderr, "test_autosize: a settling period changed the size\n");
                failures++;
            }
    }
    return next;
}

static void balance(void) {
    crew__balance_state s = {0};
    /* CPU-bound from one thread on two cores: grow to the cores, then hold there. */
    EXPECT_EQ_U(step(&s, period(1000, 1, 1.0, 50, 1), 1, 64), 2, "idle CPU and a backlog grow");
    EXPECT_EQ_U(step(&s, period(1800, 2, 1.95, 50, 2), 1, 64), 3,
                "saturated at the cores: one more thread, once");
    EXPECT_EQ_U(step(&s, period(1810, 3, 1.95, 50, 3), 1, 64), 2, "it did not pay: back");
    for (int i = 0; i < 40; i++)
        EXPECT_EQ_U(step(&s, period(1800, 2, 1.95, 50, 2), 1, 64), 2, "and keeps holding");
    /* Where one more thread pays (a shared machine), it is kept. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period(1800, 2, 1.95, 50, 2), 1, 64), 3, "one more thread");
    EXPECT_EQ_U(step(&s, period(1880, 3, 1.97, 50, 3), 1, 64), 3, "4% more: kept");
    for (int i = 0; i < 9; i++)
        EXPECT_EQ_U(step(&s, period(1880, 3, 1.97, 50, 3), 1, 64), 3, "and held a while");

    /* CPU-bound with too many threads: probe down while throughput holds, to the cores. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period(1000, 8, 2.0, 50, 8), 1, 64), 6, "saturated, 8 threads: down");
    EXPECT_EQ_U(step(&s, period(1020, 6, 2.0, 50, 6), 1, 64), 4, "same throughput: further");
    EXPECT_EQ_U(step(&s, period(1000, 4, 2.0, 50, 4), 1, 64), 2, "and further, to the cores");
    EXPECT_EQ_U(step(&s, period(1000, 2, 2.0, 50, 2), 1, 64), 3, "one more, once");
    EXPECT_EQ_U(step(&s, period(1000, 3, 2.0, 50, 3), 1, 64), 2, "no gain: back");
    for (int i = 0; i < 40; i++)
        EXPECT_EQ_U(step(&s, period(1000, 2, 2.0, 50, 2), 1, 64), 2, "then it holds");

    /* A downward probe that costs throughput is undone. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period(1000, 8, 1.8, 50, 8), 1, 64), 6, "probe down");
    EXPECT_EQ_U(step(&s, period(800, 6, 1.8, 50, 6), 1, 64), 8, "it hurt: back to the best");
    EXPECT_EQ_U(step(&s, period(1000, 8, 1.8, 50, 8), 1, 64), 8, "and hold");

    /* A probe that keeps failing waits longer each time (10, then 20 periods), and keeps
     * probing by one thread (the step never halves to nothing). */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period(1000, 6, 2.0, 50, 6), 1, 64), 5, "saturated at 6: one down");
    EXPECT_EQ_U(step(&s, period(800, 5, 2.0, 50, 5), 1, 64), 6, "it hurt: back");
    for (unsigned k = 0, want = 10; k < 2; k++, want *= 2) {
        unsigned held = 0, next;
        while ((next = step(&s, period(1000, 6, 2.0, 50, 6), 1, 64)) == 6 && held < 1000)
            held++;
        EXPECT_EQ_U(held, want, "periods held before probing again");
        EXPECT_EQ_U(next, 5, "the next probe is one thread down");
        EXPECT_EQ_U(step(&s, period(800, 5, 2.0, 50, 5), 1, 64), 6, "it hurt again: back");
    }

    /* Context switches. Saturated with more threads than cores, but the workers mostly wait
     * (the tasks block): no downward probe; nearly saturated: grow by a quarter. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period_p(1000, 16, 1.95, 50, 16, 0.1), 1, 64), 16,
                "saturated, tasks block: hold");
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period_p(1000, 16, 1.8, 50, 16, 0.1), 1, 64), 20,
                "nearly saturated, tasks block: a quarter more");
    EXPECT_EQ_U(step(&s, period_p(1030, 20, 1.9, 50, 20, 0.1), 1, 64), 20,
                "3% more for 25% more threads: kept");
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period_p(1000, 16, 1.8, 50, 16, 0.1), 1, 64), 20, "a quarter more");
    EXPECT_EQ_U(step(&s, period_p(1010, 20, 1.9, 50, 20, 0.1), 1, 64), 16, "1%: undone");
    /* Mostly preemptions: CPU-bound, probe down even below "saturated". */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period_p(1000, 16, 1.9, 50, 16, 0.9), 1, 64), 12,
                "preempted: fewer threads");
    EXPECT_EQ_U(step(&s, period_p(1000, 12, 1.9, 50, 12, 0.9), 1, 64), 8, "held: further");
    /* A phase change: a hold begun while the tasks blocked ends when the workers turn
     * preempted (the blocking stopped), and the pool is probed down at once. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period_p(1000, 32, 1.95, 50, 32, 0.1), 1, 64), 32,
                "32 threads, tasks block, CPU full: hold");
    EXPECT_EQ_U(step(&s, period_p(1000, 32, 1.95, 50, 32, 0.1), 1, 64), 32, "still blocking");
    EXPECT_EQ_U(step(&s, period_p(1150, 32, 1.99, 50, 32, 0.9), 1, 64), 24,
                "the blocking stopped: the hold ends, probe down");
    EXPECT_EQ_U(step(&s, period_p(1150, 24, 1.99, 50, 24, 0.9), 1, 64), 16, "held: further");
    /* A hold begun while the workers were preempted is not ended by preemptions. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period_p(1000, 6, 2.0, 50, 6, 0.9), 1, 64), 5, "preempted at 6: down");
    EXPECT_EQ_U(step(&s, period_p(800, 5, 2.0, 50, 5, 0.9), 1, 64), 6, "it hurt: back");
    for (int i = 0; i < 10; i++)
        EXPECT_EQ_U(step(&s, period_p(1000, 6, 2.0, 50, 6, 0.9), 1, 64), 6,
                    "the hold lasts: the workers were preempted when it began");
    /* With CPU to spare and a backlog, double whatever the switches say. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period_p(1000, 2, 1.5, 50, 2, 0.9), 1, 64), 4,
                "idle CPU and a backlog still double");

    /* A backlog but most threads without a task (the queue is fed too slowly): never grow. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period_p(1000, 4, 1.0, 50, 16, 0.1), 1, 64), 16,
                "threads waiting for work: no growth");

    /* Waiting tasks in a pool idle on average (bursts): the demand rule shrinks only when
     * tasks hardly wait; when they wait longer than they run, grow, judged on the waiting. */
    s = (crew__balance_state){0};
    crew__balance_in calm = period(1000, 0.6, 0.3, 0, 4);
    calm.wait_ratio = 0.05;
    for (int i = 0; i < 9; i++)
        EXPECT_EQ_U(step(&s, calm, 1, 64), 4, "no waiting: keep the threads a while");
    EXPECT_EQ_U(step(&s, calm, 1, 64), 3, "a calm second: shrink towards the demand");
    s = (crew__balance_state){0};
    crew__balance_in some = period(1000, 0.6, 0.3, 0, 4);
    some.wait_ratio = 0.5;
    EXPECT_EQ_U(step(&s, some, 1, 64), 4, "tasks wait a little: keep the threads");
    s = (crew__balance_state){0};
    crew__balance_in burst = period(1000, 0.6, 0.3, 0, 1);
    burst.wait_ratio = 3.0;
    EXPECT_EQ_U(step(&s, burst, 1, 64), 2, "tasks wait 3x their run time: grow");
    burst.size = 2;
    burst.wait_ratio = 1.0;
    EXPECT_EQ_U(step(&s, burst, 1, 64), 2, "waiting fell by two thirds: kept");
    s = (crew__balance_state){0};
    burst.size = 2;
    burst.wait_ratio = 3.0;
    EXPECT_EQ_U(step(&s, burst, 1, 64), 4, "grow for waiting tasks");
    burst.size = 4;
    burst.wait_ratio = 2.9;
    EXPECT_EQ_U(step(&s, burst, 1, 64), 2, "the waiting did not fall: back");
    for (int i = 0; i < 10; i++) {
        burst.size = 2;
        EXPECT_EQ_U(step(&s, burst, 1, 64), 2, "and hold");
    }

    /* Blocking tasks: double while it pays; a doubling that does not pay is undone. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period(100, 4, 0.3, 500, 4), 1, 64), 8, "backlog, idle CPU: double");
    EXPECT_EQ_U(step(&s, period(190, 8, 0.6, 500, 8), 1, 64), 16, "it paid: double again");
    EXPECT_EQ_U(step(&s, period(195, 16, 1.0, 500, 16), 1, 64), 8, "no gain: back to 8");
    EXPECT_EQ_U(step(&s, period(190, 8, 0.6, 500, 8), 1, 64), 8, "and hold");
    /* At the best size, throughput falls by half: the work changed, explore again. */
    s.hold = 0;
    EXPECT_EQ_U(step(&s, period(90, 8, 0.3, 500, 8), 1, 64), 16, "a new regime is explored");

    /* Too many threads for the demand: no backlog, 1.2 tasks running on 10 threads. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period(1000, 1.2, 1.2, 0, 10), 1, 64), 6, "halfway towards demand (3)");
    /* An idle pool drifts down to min. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(crew__balance_step(&s, &(crew__balance_in){0.1, 0, 0, 0, 0, 3, 2, -1.0, -1.0}, 2, 64), 2,
                "idle drifts down");
    s = (crew__balance_state){0};
    EXPECT_EQ_U(crew__balance_step(&s, &(crew__balance_in){0.1, 0, 0, 0, 0, 2, 2, -1.0, -1.0}, 2, 64), 2,
                "but not below min");
    /* Too few completions to judge, with a backlog: keep the size. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period(3, 4, 0.1, 10, 4), 1, 64), 4, "too few samples: no decision");
    /* Bounds. */
    s = (crew__balance_state){0};
    EXPECT_EQ_U(step(&s, period(100, 16, 0.3, 500, 16), 1, 20), 20, "never above max");
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "The sizing controllers' decision functions with scripted inputs.");
    ait();
    balance();
    if (failures) {
        printf("test_autosize: %d failures\n", failures);
        return 1;
    }
    printf("test_autosize: ok\n");
    return 0;
}
