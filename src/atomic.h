/*
 * atomic.h -- named-order wrappers over C11 <stdatomic.h> (mimalloc's style).
 *
 * Every atomic access in crew goes through one of these (no other file calls an atomic_*
 * function), so the memory order is visible at the call site, and every non-relaxed one carries
 * a comment saying what it orders and what it pairs with. This header is internal: the public
 * crew.h never includes <stdatomic.h>.
 */
#ifndef CREW_ATOMIC_H
#define CREW_ATOMIC_H

#include <stdatomic.h>

/* Initialisation (not an access: before any other thread can see the object). */
#define crew__atomic_init(p, v) atomic_init((p), (v))

#define crew__load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define crew__load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define crew__store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define crew__store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define crew__fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define crew__fetch_sub_release(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define crew__fetch_sub_relaxed(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define crew__fetch_add_acq_rel(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define crew__fetch_sub_acq_rel(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define crew__cas_acq_rel(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acq_rel,     \
                                            memory_order_acquire)
#define crew__fetch_or_relaxed(p, v) atomic_fetch_or_explicit((p), (v), memory_order_relaxed)
#define crew__fetch_and_relaxed(p, v) atomic_fetch_and_explicit((p), (v), memory_order_relaxed)
#define crew__fetch_or_release(p, v) atomic_fetch_or_explicit((p), (v), memory_order_release)
#define crew__exchange_acq_rel(p, v) atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#define crew__fetch_and_acquire(p, v) atomic_fetch_and_explicit((p), (v), memory_order_acquire)
#define crew__cas_acquire(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acquire,     \
                                            memory_order_relaxed)
#define crew__cas_weak_release(p, expected, desired)                                             \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_release,       \
                                          memory_order_relaxed)
/* Sequentially consistent: the protocols that need a single order of all their accesses (the
 * eventcount's events, the deque's top and bottom, the pool's state against pending). */
#define crew__load_seq_cst(p) atomic_load((p))
#define crew__store_seq_cst(p, v) atomic_store((p), (v))
#define crew__exchange_seq_cst(p, v) atomic_exchange((p), (v))
#define crew__fetch_add_seq_cst(p, v) atomic_fetch_add((p), (v))
#define crew__fetch_sub_seq_cst(p, v) atomic_fetch_sub((p), (v))
#define crew__cas_seq_cst(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_seq_cst,     \
                                            memory_order_relaxed)
#define crew__cas_weak_seq_cst(p, expected, desired)                                             \
    atomic_compare_exchange_weak((p), (expected), (desired))
#define crew__fence_seq_cst() atomic_thread_fence(memory_order_seq_cst)
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
