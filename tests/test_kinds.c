/* test_kinds.c -- the table of the kinds of special task (src/kind.c) alone: each kind's task is
 * found by crew__kind_of as its own row, a plain task (a user's function) as none; the array
 * runner's two marks (its row and the run path's CREW__TASK_RUNNER flag) agree on the runners
 * array.c makes; a timer's run is named by the timer's function; only the join half has a way
 * back of its own on a pause or a resize; a graph node's drop is its run's. Exits non-zero on
 * failure. */
#include <string.h>

#include "array.h"
#include "check.h"
#include "kind.h"

static void user_fn(void *arg) { (void)arg; }
static void tick(void *arg) { (void)arg; }

static const crew__kind *const rows[] = {&crew__join_kind, &crew__array_kind, &crew__lane_kind,
                                         &crew__timer_kind, &crew__graph_kind};
#define NROWS (sizeof rows / sizeof rows[0])

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "The table of the kinds of special task alone.");
    /* Each row: a function and a name of its own, and its tasks found as it. */
    for (size_t i = 0; i < NROWS; i++) {
        CHECK(rows[i]->fn != NULL && rows[i]->name != NULL);
        for (size_t j = 0; j < i; j++) {
            CHECK(rows[i]->fn != rows[j]->fn);
            CHECK(strcmp(rows[i]->name, rows[j]->name) != 0);
        }
        crew_task t = {.fn = rows[i]->fn, .arg = NULL};
        CHECK(crew__kind_of(&t) == rows[i]);
        /* A kind whose drop is no loss says what its drop does instead of on_drop. */
        CHECK(!rows[i]->not_lost || rows[i]->dropped != NULL);
    }
    /* Not lost when dropped: a join's half (its caller runs it) and an array's runner (its tasks
     * count one by one); a lane's runner and a timer's run are. */
    CHECK(crew__join_kind.not_lost && crew__array_kind.not_lost);
    CHECK(!crew__lane_kind.not_lost && !crew__timer_kind.not_lost);
    /* A graph run's node is lost when dropped (reported to on_drop when its run ends). */
    CHECK(!crew__graph_kind.not_lost && crew__graph_kind.dropped != NULL);

    /* A plain task has no kind: named by its own function, requeued on a pause (p untouched). */
    crew_task plain = {.fn = user_fn, .arg = &plain};
    CHECK(crew__kind_of(&plain) == NULL);
    CHECK(crew__kind_fn_of(&plain) == user_fn);
    CHECK(!crew__kind_hand_back(NULL, &plain));
    crew_task runner = {.fn = crew__lane_kind.fn, .arg = NULL};
    CHECK(!crew__kind_hand_back(NULL, &runner)); /* a lane's runner goes back to its queue */
    CHECK(crew__join_kind.hand_back != NULL);

    crew_pool *p = NULL;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    CHECK(crew_create(&p, &cfg) == CREW_OK);

    /* The runners array.c makes: the array kind's, by their function and by their flag. */
    crew_task tasks[CREW__ARRAY_MIN];
    for (size_t i = 0; i < CREW__ARRAY_MIN; i++)
        tasks[i] = (crew_task){.fn = user_fn, .arg = NULL};
    crew__array *a = crew__array_new(p, tasks, CREW__ARRAY_MIN, 2);
    CHECK(a != NULL);
    crew_task *r = crew__array_tasks(a);
    for (size_t i = 0; i < 2; i++) {
        CHECK(crew__kind_of(&r[i]) == &crew__array_kind);
        CHECK(r[i].crew_flags_ & CREW__TASK_RUNNER);
    }
    crew__array_free(a);

    /* A timer's run (the task at the start of its struct crew_timer, timer.c: a white-box
     * look) is the timer kind's, named by the timer's function. An hour away: it never runs. */
    crew_timer *tm = NULL;
    CHECK(crew_timer_start(p, 3600ull * 1000000000ull, 0, CREW_TIMER_FIXED_RATE, tick, NULL,
                           &tm) == CREW_OK);
    const crew_task *run = (const crew_task *)(const void *)tm;
    CHECK(crew__kind_of(run) == &crew__timer_kind);
    CHECK(crew__kind_fn_of(run) == tick);
    CHECK(crew_timer_stop(tm) == CREW_OK);
    CHECK(crew_destroy(p) == CREW_OK);
    printf("test_kinds: %zu kinds, ok\n", NROWS);
    return 0;
}
