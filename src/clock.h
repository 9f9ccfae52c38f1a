/*
 * clock.h -- the clocks crew reads (clock.c), and the one conversion between its two forms of
 * a time.
 *
 * Every time in crew is on CLOCK_MONOTONIC, counted in nanoseconds (crew__now_ns, which the
 * public crew_now_ns returns): task stamps, deadlines, timers' due times, the statistics. The
 * eventcount's timed sleeps (ec.h) take the same instant as a struct timespec, an absolute
 * CLOCK_MONOTONIC time (a futex's or a CLOCK_MONOTONIC condition variable's deadline):
 * crew__timespec_of converts, crew__deadline_after_ms makes one from a delay. The sizing
 * controller also reads the process's CPU time (crew__process_cpu_ns). No other file calls
 * clock_gettime.
 */
#ifndef CREW_CLOCK_H
#define CREW_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Now, in nanoseconds on CLOCK_MONOTONIC. */
uint64_t crew__now_ns(void);

/* The time ns (crew__now_ns's clock) as the eventcount's absolute CLOCK_MONOTONIC timespec. */
static inline struct timespec crew__timespec_of(uint64_t ns) {
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u),
                             .tv_nsec = (long)(ns % 1000000000u)};
}

/* The CLOCK_MONOTONIC time ms milliseconds from now, as a timespec. */
struct timespec crew__deadline_after_ms(unsigned ms);

/* The CPU time the whole process has used so far, in nanoseconds (the sizing controller's
 * measure of how busy the CPU is). */
uint64_t crew__process_cpu_ns(void);

#endif /* CREW_CLOCK_H */
