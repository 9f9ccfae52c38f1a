/*
 * atomic.h -- named-order wrappers over C11 <stdatomic.h> (mimalloc's style).
 *
 * Every atomic access in crew goes through one of these, so the memory order is visible at the
 * call site, and every non-relaxed one carries a comment saying what it orders and what it pairs
 * with. This header is internal: the public crew.h never includes <stdatomic.h>.
 */
#ifndef CREW_ATOMIC_H
#define CREW_ATOMIC_H

#include <stdatomic.h>

#define crew__load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define crew__load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define crew__store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define crew__store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define crew__fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define crew__fetch_sub_acq_rel(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define crew__cas_acq_rel(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acq_rel,     \
                                            memory_order_acquire)
#define crew__cas_relaxed(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_relaxed,     \
                                            memory_order_relaxed)

/* ThreadSanitizer does not model atomic_thread_fence. Where crew relies on a seq_cst fence, the
 * TSan build uses seq_cst operations on the same variables instead (an equivalent ordering,
 * costlier in production), so the sanitizer checks the protocol as it is. */
#if defined(__SANITIZE_THREAD__)
#define CREW__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CREW__TSAN 1
#endif
#endif

/* A hint to the processor that this is a spin-wait loop. */
static inline void crew__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif /* CREW_ATOMIC_H */
