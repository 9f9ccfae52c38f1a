/*
 * kind.c -- the table of the kinds of special task (kind.h), and the look-up of a task's kind
 * by its function, for the rare paths that treat the kinds differently.
 *
 * A completion callback (notify.c) has no row: its function is the user's, so it cannot be
 * recognised by it; its flag (CREW__TASK_NOTIFY) marks it, and it differs from a plain task only
 * in never being dropped, which the places that meet it decide (schedule.c's cancelling
 * shutdown sets it aside, and its check after each take, crew__hold_back, runs it; bounded.c's
 * drop of the oldest runs it).
 */
#include "kind.h"

/* Every kind of special task. A few rows: a linear look-up beats anything cleverer. */
static const crew__kind *const kinds[] = {
    &crew__join_kind,
    &crew__array_kind,
    &crew__lane_kind,
    &crew__timer_kind,
    &crew__graph_kind,
    &crew__graph_traced_kind,
    &crew__graph_gated_kind,
};

const crew__kind *crew__kind_of(const crew_task *t) {
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (t->fn == kinds[i]->fn)
            return kinds[i];
    return NULL;
}

crew_fn crew__kind_fn_of(const crew_task *t) {
    const crew__kind *k = crew__kind_of(t);
    return k && k->fn_of ? k->fn_of(t) : t->fn;
}

bool crew__kind_hand_back(crew_pool *p, crew_task *t) {
    const crew__kind *k = crew__kind_of(t);
    if (!k || !k->hand_back)
        return false;
    k->hand_back(p, t);
    return true;
}
