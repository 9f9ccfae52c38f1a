/*
 * cancel_late_store.c -- a deterministic reproducer of a crew_cancel race in src/group.c
 * (found by models/slots.pml, variant RETIRE + CANCELLER; present as of commit bb5c300).
 *
 * crew__group_cancel loads the slot's state word, checks that the handle's group is open, and
 * then, in a separate store, writes cancelled_gen = h.gen. If the group finishes normally between
 * the two, its slot is released; another group B opens in it, loses a task (cancelled_gen = B's
 * generation), and then the late store writes A's generation over it. B's last task then finds
 * cancelled_gen != its generation, releases the slot instead of retiring it, and crew_wait(B)
 * answers CREW_OK although B lost a task.
 *
 * This file compiles src/group.c itself with crew__store_relaxed wrapped, so the interleaving
 * runs at exactly that point, in one thread:
 *   cc -std=c11 -D_GNU_SOURCE -Iinclude -Isrc fuzz/repro/cancel_late_store.c -pthread -o /tmp/r
 *   /tmp/r    # exit 1 and "BUG" with the code of bb5c300; exit 0 once fixed
 */
#include <stdio.h>

#include "atomic.h"
#include "group.h"

static void hook(void *where);
#undef crew__store_relaxed
#define crew__store_relaxed(p, v) (hook((void *)(p)), atomic_store_explicit((p), (v), memory_order_relaxed))
/* The fix (crew__group_cancel marks with a compare-and-swap): the same interleaving, injected
 * just before the compare-and-swap, must leave B's mark alone. */
#undef crew__cas_acq_rel
#define crew__cas_acq_rel(p, expected, desired)                                                  \
    (hook((void *)(p)),                                                                           \
     atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acq_rel,     \
                                             memory_order_acquire))

#include "../../src/group.c"

static crew__slotmap m;
static void *armed; /* the cancelled_gen word whose next store is crew_cancel's late one */
static crew_handle b;

static void hook(void *where) {
    if (where != armed)
        return;
    armed = NULL;
    /* Here crew__group_cancel(A) has checked that A is open, and is about to store. */
    crew__group_done(&m, 1, 1, CREW__RAN, NULL);     /* A's only task finishes normally */
    if (crew__group_open(&m, 2, &b, NULL) != CREW_OK) /* B opens with 2 tasks; reuses slot 1 */
        abort();
    crew__group_done(&m, b.slot, 1, CREW__LOST, NULL); /* B loses a task (shutdown, drop-oldest, or
                                                     crew_cancel(B)'s queue sweep) */
    printf("B = {slot %u, gen %u}, cancelled_gen = %u before the late store\n", b.slot, b.gen,
           (unsigned)atomic_load(&crew__slot_at(&m, b.slot)->cancelled_gen));
}

int main(void) {
    crew_handle a;
    if (crew__slotmap_init(&m) != CREW_OK || crew__group_open(&m, 1, &a, NULL) != CREW_OK)
        return 2;
    armed = &crew__slot_at(&m, a.slot)->cancelled_gen;
    int rc = crew__group_cancel(&m, a); /* crew_cancel(A): returns CREW_OK */
    printf("crew_cancel(A = {slot %u, gen %u}) = %d; cancelled_gen now %u\n", a.slot, a.gen, rc,
           (unsigned)atomic_load(&crew__slot_at(&m, a.slot)->cancelled_gen));
    if (b.slot != a.slot)
        return 2; /* B did not reuse A's slot: the scenario did not happen */
    crew__group_done(&m, b.slot, 1, CREW__RAN, NULL); /* B's other task finishes normally */
    int st = crew__group_status(&m, b);          /* what crew_wait(B) returns */
    printf("crew_wait(B) would return %d (%s); B lost a task, so CREW_ECANCELED (%d) is due\n", st,
           st == CREW_OK ? "CREW_OK" : st == CREW_ECANCELED ? "CREW_ECANCELED" : "?", CREW_ECANCELED);
    crew__slotmap_free(&m);
    if (st != CREW_ECANCELED) {
        printf("BUG: a group that lost a task reports CREW_OK (its slot was released, not retired)\n");
        return 1;
    }
    return 0;
}
