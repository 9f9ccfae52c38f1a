/*
 * clock.c -- reading the clocks (clock.h): the only calls to clock_gettime in crew. Out of
 * line, so that strict C11 code that includes the internal headers needs no POSIX feature
 * macro for them. And crew.h's crew_now_ns.
 */
#include <time.h>

#include "clock.h"
#include "crew.h"

/* Nanoseconds of a timespec. */
static uint64_t ns_of(const struct timespec *ts) {
    return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

uint64_t crew__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ns_of(&ts);
}

uint64_t crew_now_ns(void) { return crew__now_ns(); } /* crew.h's */

struct timespec crew__deadline_after_ms(unsigned ms) {
    return crew__timespec_of(crew__now_ns() + (uint64_t)ms * 1000000u);
}

uint64_t crew__process_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ns_of(&ts);
}
