/*
 * test_slots.c -- the slot map of groups (src/group.c) driven directly, one step at a time, where
 * the public API cannot reach cheaply: a group's open count holds crew.h's limit of 2^32 - 1
 * unfinished tasks (CREW_ERANGE beyond, never earlier), and the generation wraps from its
 * maximum to 1 with handles above the maximum refused as never issued.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "group.h"

static crew__slotmap m;

/* crew.h's CREW_ERANGE: a group holds up to 4294967295 unfinished tasks. */
static void open_count_holds_32_bits(void) {
    CHECK(strstr(crew_strerror(CREW_ERANGE), "4294967295") != NULL);
    crew_handle h;
    CHECK(crew__group_open(&m, (1u << 28) + 5u, &h, NULL) == CREW_OK); /* above 2^28 - 1 */
    CHECK(crew__group_status(&m, h) == 1);
    CHECK(crew__group_add(&m, h, UINT32_MAX - ((1u << 28) + 6u)) == CREW_OK);
    CHECK(crew__group_add(&m, h, 1) == CREW_OK); /* now UINT32_MAX open */
    CHECK(crew__group_add(&m, h, 1) == CREW_ERANGE);
    /* The count does not spill into the marks: a cancel, a drop and the end read right. */
    CHECK(crew__group_cancel(&m, h) == CREW_OK);
    CHECK(!crew__group_done(&m, crew__slot_index(h.slot), UINT32_MAX - 1u, CREW__RAN, NULL));
    CHECK(crew__group_status(&m, h) == 1);
    CHECK(crew__group_done(&m, crew__slot_index(h.slot), 1, CREW__LOST, NULL));
    CHECK(crew__group_status(&m, h) == CREW_ECANCELED);
    CHECK(crew__group_report(&m, crew__handle_local(h), CREW_ECANCELED) == CREW_ECANCELED);
}

/* The generation runs 1..CREW__GEN_MAX and wraps to 1; a handle above it was never issued. */
static void generation_wraps(void) {
    crew_handle h;
    CHECK(crew__group_open(&m, 1, &h, NULL) == CREW_OK);
    uint32_t s = crew__slot_index(h.slot);
    crew__slot *sl = crew__slot_at(&m, s);
    CHECK(crew__group_done(&m, s, 1, CREW__RAN, NULL)); /* the slot goes back, next generation */
    CHECK(crew__group_status(&m, h) == CREW_OK);
    /* Jump the free slot to the last generation (2^28 - 2 groups later). */
    crew__store_relaxed(&sl->state, crew__gen_state(CREW__GEN_MAX));
    crew__store_relaxed(&sl->issued_gen, CREW__GEN_MAX - 1u);
    crew_handle last;
    CHECK(crew__group_open(&m, 1, &last, NULL) == CREW_OK);
    CHECK(crew__slot_index(last.slot) == s && last.gen == CREW__GEN_MAX);
    CHECK(crew__group_done(&m, s, 1, CREW__RAN, NULL));
    CHECK(crew__group_status(&m, last) == CREW_OK);
    crew_handle first;
    CHECK(crew__group_open(&m, 1, &first, NULL) == CREW_OK);
    CHECK(crew__slot_index(first.slot) == s && first.gen == 1); /* wrapped, skipping 0 */
    CHECK(crew__group_status(&m, first) == 1 && crew__group_status(&m, last) == CREW_OK);
    CHECK(crew__gen_issued(sl, CREW__GEN_MAX) && !crew__gen_issued(sl, CREW__GEN_MAX + 1u));
    CHECK(crew__group_done(&m, s, 1, CREW__RAN, NULL));
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv,
                  "Drives the slot map of groups (src/group.c) directly: the open count's limit "
                  "and the generation's wrap.");
    CHECK(crew__slotmap_init(&m) == CREW_OK);
    open_count_holds_32_bits();
    generation_wraps();
    crew__slotmap_free(&m);
    printf("slots: ok\n");
    return 0;
}
