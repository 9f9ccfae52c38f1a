/*
 * base.c -- what base.h declares out of line: a thread's number, the per-thread random
 * generator's state, and the debug-yield points.
 */
#include "atomic.h"
#include "base.h"

CREW__TLS uint32_t crew__tls_rng;

CREW__TLS unsigned crew__tls_number;

unsigned crew__thread_number_first(void) {
    static atomic_uint next_thread; /* relaxed: numbers threads, orders nothing */
    crew__tls_number = crew__fetch_add_relaxed(&next_thread, 1u) + 1;
    return crew__tls_number - 1;
}

#ifdef CREW_DEBUG_YIELD
#include <sched.h>
void crew__debug_yield(void) {
    if ((crew__rand() & 3u) == 0)
        sched_yield();
}
#endif
