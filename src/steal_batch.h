/*
 * steal_batch.h -- a worker's shared batch under work stealing (STEAL, sched_steal.c; h only):
 * the share of an external slot's backlog that a worker claimed with one compare-and-swap
 * (claim_batch), kept where every other thread can still take it. The worker runs the batch in
 * order (worker_batch.c's loop, or its takes), one entry at a time; idle workers, helping
 * waiters and a cancelling shutdown's sweep take entries from the same index (sched_steal.c's
 * steal_any, take_any). So a task of a batch that waits on a later task of the same batch (a
 * semaphore, a group, I/O) never waits on a worker that is busy with it, and a long task at the
 * batch's head holds up nothing while another worker is idle.
 *
 * THE BUFFER. CREW__STEAL_BATCH places (deque entries: function, argument, aux) and one index
 * word, (gen << 32) | (next << 16) | left: places [next, next + left) hold the batch's unclaimed
 * tasks, oldest first; gen counts the fills. Who writes what, in which order:
 *   - the places: only the owner (the worker whose record holds the buffer), and only while
 *     the batch is exhausted (left == 0), as the owner has seen with an acquire read
 *     (crew__steal_batch_exhausted, or the last claim of a leaving owner's drain, whose
 *     put-back refills it as a fill does); a failed fill leaves the index as it was (still
 *     exhausted: the written places are never claimable);
 *   - the index: the owner's fill publishes (gen + 1, 1, n - 1) with a release store once the n
 *     places are written (place 0 is the owner's at once: the task its take returns, so the
 *     store claims it); every claim, by the owner or any other thread, is a compare-and-swap
 *     (gen, k, left) -> (gen, k + 1, left - 1): one subtraction (CREW__STEAL_BATCH_CLAIM).
 * Why a claimer's copy is valid (crew__steal_batch_claim): it reads the index (acquire), then
 * place k (relaxed), then claims with a compare-and-swap against the very index word it read.
 *   - It read the fill's values: the acquire read took its value from the fill's release store
 *     or from a claim after it (claims are read-modify-writes, so they continue the store's
 *     release sequence): the fill's writes of the places happen before the read.
 *   - Nothing overwrote them before the read: the claim succeeded, so the index still held
 *     (gen, k, left > 0), not exhausted, when it did; the owner writes places again only after it
 *     has seen the batch exhausted, a value later than the claim in the index's modification
 *     order, written by this claim's release sequence (claims are acq_rel): the claimer's reads
 *     of place k, before its claim, happen before the owner's rewrite. A claimer whose read
 *     raced a rewrite finds a newer gen, or an exhausted index, and its claim fails: it keeps
 *     nothing it read.
 * The generation has 32 bits: a claimer would have to stall for 2^32 fills for a stale word to
 * match again. Places are relaxed atomics, so a racing read is no data race (TSan).
 *
 * The owner claims as any thread does (a lock-free compare-and-swap, the same as a thief's), so
 * every claimed task is claimed exactly once and by one thread; a claimed task runs on that
 * thread (or goes back to the queues, a resize or a pause, as any taken task).
 */
#ifndef CREW_STEAL_BATCH_H
#define CREW_STEAL_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "base.h"
#include "debug.h"
#include "deque.h"

/* The most tasks a worker claims from a slot at a time (sched_steal.c's EXT_BATCH): 32, where
 * crew_submit's tasks run by one worker cost 139 instructions each (bench/instr.sh), 149 at
 * 16. */
#define CREW__STEAL_BATCH 32u

typedef struct crew__steal_batch {
    /* (gen << 32) | (next << 16) | left (see the file comment): claims are acq_rel
     * compare-and-swaps, the owner's fill a release store, reads acquire (relaxed for a
     * peek: a hint, as crew__deque_size's). On its own line: the thieves' claims write it. */
    _Alignas(64) _Atomic uint64_t index;
    /* Relaxed: written by the owner only while the batch is exhausted, published by the fill's
     * release store of index; read by claimers before their claim. */
    crew__deque_entry place[CREW__STEAL_BATCH];
} crew__steal_batch;

/* A claim's change of the index: next + 1, left - 1. */
#define CREW__STEAL_BATCH_CLAIM (((uint64_t)1 << 16) - 1u)
static inline uint32_t crew__steal_batch_next_of(uint64_t x) {
    return (uint32_t)(x >> 16) & 0xffffu;
}
static inline uint32_t crew__steal_batch_left_of(uint64_t x) { return (uint32_t)x & 0xffffu; }

static inline void crew__steal_batch_init(crew__steal_batch *b) {
    crew__atomic_init(&b->index, 0u); /* gen 0, next 0, left 0: exhausted */
}

/* How many tasks b holds, an estimate (relaxed: a hint; a claim reads it again). */
static inline size_t crew__steal_batch_size(crew__steal_batch *b) {
    return crew__steal_batch_left_of(crew__load_relaxed(&b->index));
}

/* Owner: is b exhausted (so its places may be written: a fill)? Acquire: every claimer's reads
 * of the places happen before (see the file comment). */
static inline bool crew__steal_batch_exhausted(crew__steal_batch *b) {
    return crew__steal_batch_left_of(crew__load_acquire(&b->index)) == 0;
}

/* Owner: publish a fill of places [0, n) (1 < n <= CREW__STEAL_BATCH), written since
 * crew__steal_batch_exhausted said so; place 0 is the owner's (its take's task): the others
 * become claimable. Release: the places' writes before the index (see the file comment). */
static inline void crew__steal_batch_publish(crew__steal_batch *b, size_t n) {
    crew__assert(n > 1 && n <= CREW__STEAL_BATCH);
    uint64_t x = crew__load_relaxed(&b->index); /* relaxed: exhausted, so only ours to write */
    uint64_t gen = (x >> 32) + 1;
    crew__store_release(&b->index, gen << 32 | (uint64_t)1 << 16 | (uint64_t)(n - 1));
}

/* Anyone: claim b's next task, its place's fields in *fn, *arg, *aux: false if b is empty. A
 * claim lost to another claimer is tried again (the other made progress), so false means that
 * b was seen empty. */
static inline bool crew__steal_batch_claim(crew__steal_batch *b, crew_fn *fn, void **arg,
                                           uint64_t *aux) {
    uint64_t x = crew__load_acquire(&b->index); /* acquire: the fill's places (file comment) */
    for (;;) {
        if (crew__steal_batch_left_of(x) == 0)
            return false;
        crew__deque_entry *e = &b->place[crew__steal_batch_next_of(x)];
        crew_fn f = crew__load_relaxed(&e->fn); /* relaxed: before the claim (file comment) */
        void *g = crew__load_relaxed(&e->arg);
        uint64_t a = crew__load_relaxed(&e->aux);
        crew__debug_yield(); /* tests: widen the window another claim (or a refill) can hit */
        /* Acq_rel: release orders the reads above before the claim (the owner's rewrite waits
         * for it); acquire, also on failure: the new value's fill, as the load above. */
        if (crew__cas_acq_rel(&b->index, &x, x + CREW__STEAL_BATCH_CLAIM)) {
            crew__assert(f || g); /* a claimed place holds a task */
            *fn = f;
            *arg = g;
            *aux = a;
            return true;
        }
    }
}

/* Anyone: crew__steal_batch_claim's task as a take returns it (by value, in buf), or NULL. */
static inline crew_task *crew__steal_batch_take(crew__steal_batch *b, crew_task *buf) {
    crew_fn fn;
    void *arg;
    uint64_t aux;
    return crew__steal_batch_claim(b, &fn, &arg, &aux) ? crew__deque_task(fn, arg, aux, buf)
                                                       : NULL;
}

/* Owner (leaving: sched_steal.c's worker_exit): claim every task b still holds into e, oldest
 * first; returns how many (fewer than CREW__STEAL_BATCH). b is then exhausted, as the owner has
 * seen (the claim's acquire read): its places are the owner's to write again. */
static inline size_t crew__steal_batch_drain(crew__steal_batch *b, crew__deque_entry *e) {
    size_t n = 0;
    crew_fn fn;
    void *arg;
    uint64_t aux;
    while (n < CREW__STEAL_BATCH && crew__steal_batch_claim(b, &fn, &arg, &aux)) {
        crew__store_relaxed(&e[n].fn, fn); /* relaxed: e is the caller's own */
        crew__store_relaxed(&e[n].arg, arg);
        crew__store_relaxed(&e[n].aux, aux);
        n++;
    }
    return n;
}

/* Owner: put e[0..n) (oldest first) back into b, exhausted since crew__steal_batch_drain, as
 * places 1..n of a fill (place 0 is the owner's, as after a claim): every thread takes them. */
static inline void crew__steal_batch_put_back(crew__steal_batch *b, const crew__deque_entry *e,
                                              size_t n) {
    crew__assert(n < CREW__STEAL_BATCH);
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) { /* relaxed: published by the release store below */
        crew__store_relaxed(&b->place[i + 1].fn, crew__load_relaxed(&e[i].fn));
        crew__store_relaxed(&b->place[i + 1].arg, crew__load_relaxed(&e[i].arg));
        crew__store_relaxed(&b->place[i + 1].aux, crew__load_relaxed(&e[i].aux));
    }
    crew__steal_batch_publish(b, n + 1);
}

#endif /* CREW_STEAL_BATCH_H */
