/* bench_util.h -- what the C benchmarks share: a monotonic clock in seconds and a comparator for
 * qsort'ing run times into medians (the C++ benchmarks have bench_util.hpp). */
#ifndef CREW_BENCH_UTIL_H
#define CREW_BENCH_UTIL_H

#include <time.h>

/* CLOCK_MONOTONIC in seconds. */
static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort's comparator for doubles, ascending. */
static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
