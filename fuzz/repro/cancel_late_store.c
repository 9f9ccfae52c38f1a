/*
 * cancel_late_store.c -- a deterministic replay of crew_cancel racing its group's natural end,
 * on src/group.c itself (first found by models/slots.pml).
 *
 * crew_cancel(A) finds A open; before its mark lands, A's last task ends normally, the slot
 * passes to a new group B, and crew_cancel(B) later takes effect. crew_cancel(A) must then
 * either have taken effect (A's wait answers CREW_ECANCELED) or answer CREW_ESTALE (A's wait
 * answers CREW_OK): never CREW_OK from both. A design that reads the state word and then marks
 * a separate word (a store, or a compare-and-swap from the mark it saw) lets the late mark land
 * on B's slot and be overwritten by B's, so both answer CREW_OK; the mark as a bit of the state
 * word, set by a compare-and-swap that requires A's generation and an open task, cannot.
 *
 * This file compiles src/group.c with crew__cas_acq_rel wrapped, so the interleaving runs just
 * before crew__group_cancel's first compare-and-swap, in one thread:
 *   cc -std=c11 -D_GNU_SOURCE -Iinclude -Isrc fuzz/repro/cancel_late_store.c -pthread -o /tmp/r
 *   /tmp/r    # exit 0 when crew_cancel and crew_wait agree, 1 and "BUG" when they do not
 */
#include <stdio.h>

#include "atomic.h"
#include "group.h"

static void hook(void);
#undef crew__cas_acq_rel
#define crew__cas_acq_rel(p, expected, desired)                                                  \
    (hook(), atomic_compare_exchange_strong_explicit((p), (expected), (desired),                 \
                                                     memory_order_acq_rel, memory_order_acquire))

#include "../../src/group.c"

static crew__slotmap m;
static int armed; /* set while crew_cancel(A) runs, until its first compare-and-swap */
static crew_handle b;

static void hook(void) {
    if (!armed)
        return;
    armed = 0;
    /* Here crew__group_cancel(A) has found A open, and is about to mark it. */
    crew__group_done(&m, 1, 1, CREW__RAN, NULL);     /* A's only task finishes normally */
    if (crew__group_open(&m, 1, &b, NULL) != CREW_OK) /* B opens with 1 task; reuses slot 1 */
        abort();
}

static const char *name(int rc) {
    return rc == CREW_OK ? "CREW_OK" : rc == CREW_ECANCELED ? "CREW_ECANCELED"
                                     : rc == CREW_ESTALE    ? "CREW_ESTALE"
                                                            : "?";
}

int main(void) {
    crew_handle a;
    if (crew__slotmap_init(&m) != CREW_OK || crew__group_open(&m, 1, &a, NULL) != CREW_OK)
        return 2;
    armed = 1;
    int rc = crew__group_cancel(&m, a); /* crew_cancel(A) */
    if (armed || crew__slot_index(b.slot) != crew__slot_index(a.slot))
        return 2; /* the scenario did not happen */
    if (crew__group_cancel(&m, b) != CREW_OK) /* crew_cancel(B), while B is open */
        return 2;
    crew__group_done(&m, crew__slot_index(b.slot), 1, CREW__LOST, NULL); /* B's task dropped */
    int st_a = crew__group_status(&m, a), st_b = crew__group_status(&m, b);
    printf("crew_cancel(A) = %s, crew_wait(A) would answer %s; crew_wait(B) %s\n", name(rc),
           name(st_a), name(st_b));
    crew__slotmap_free(&m);
    if (!((rc == CREW_OK && st_a == CREW_ECANCELED) || (rc == CREW_ESTALE && st_a == CREW_OK)) ||
        st_b != CREW_ECANCELED) {
        printf("BUG: crew_cancel and crew_wait disagree\n");
        return 1;
    }
    return 0;
}
