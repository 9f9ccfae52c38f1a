/*
 * chunks.h -- claiming chunks of an index range [0, n) from several threads at once: the
 * dynamic self-scheduling of an array's runners (array.c: indices are the array's tasks) and
 * of the parallel loops' runners (parallel.c: indices are the loop's chunks of grain elements).
 *
 * One atomic counter, the first index not yet claimed: a claim of k indices is one
 * fetch-and-add of k, so every index is claimed once, in increasing order, and a claim that
 * comes after the end finds nothing (the counter may run past n: it only grows). How many
 * indices to claim at a time is the user's choice: one (parallel.c, whose chunks are already
 * sized by a grain) or the guided rule (crew__chunks_guided, array.c): half of an even share
 * of what is left, so claims start large (one fetch-and-add for many indices) and shrink to 1
 * near the end (no claimer is left with a long tail while others have ended: Polychronopoulos
 * and Kuck's guided self-scheduling, OpenMP's schedule(guided)).
 *
 * The counter is relaxed everywhere: it only hands each index to one claimer. What the indices
 * stand for reaches the claimers by other ways (the queue that handed them their runner, pushed
 * after the range was written), and their effects reach the waiter by the group's or the
 * join's completion (release/acquire). Inline: array runners claim on the hot path.
 */
#ifndef CREW_CHUNKS_H
#define CREW_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>

#include "atomic.h"

typedef struct crew__chunks {
    /* The first unclaimed index. Relaxed (all accesses): see above. */
    _Atomic size_t next;
} crew__chunks;

static inline void crew__chunks_init(crew__chunks *c) { crew__atomic_init(&c->next, (size_t)0); }

/* How far the claims have gone (may be past n): a hint, stale as soon as it is read. */
static inline size_t crew__chunks_at(crew__chunks *c) {
    return crew__load_relaxed(&c->next); /* relaxed: see crew__chunks */
}

/* Claim up to k (at least 1) indices of [0, n): true with [*from, *to) claimed (k of them but
 * at the end), false if none was left. */
static inline bool crew__chunks_claim(crew__chunks *c, size_t n, size_t k, size_t *from,
                                      size_t *to) {
    size_t i = crew__fetch_add_relaxed(&c->next, k); /* relaxed: see crew__chunks */
    if (i >= n)
        return false;
    *from = i;
    *to = k < n - i ? i + k : n;
    return true;
}

/* Claim every index still unclaimed: returns the first of them (n or more if none). */
static inline size_t crew__chunks_claim_rest(crew__chunks *c, size_t n) {
    return crew__fetch_add_relaxed(&c->next, n); /* relaxed: see crew__chunks */
}

/* The guided rule: how many indices of [0, n) to claim next among `parts` claimers, half of an
 * even share of what is left, from 1 to most; 0 if nothing is left (a hint: a claim of that
 * many may still find nothing). */
static inline size_t crew__chunks_guided(crew__chunks *c, size_t n, size_t parts, size_t most) {
    size_t at = crew__chunks_at(c);
    if (at >= n)
        return 0;
    size_t k = (n - at) / (2 * parts);
    return k < 1 ? 1 : k > most ? most : k;
}

#endif /* CREW_CHUNKS_H */
