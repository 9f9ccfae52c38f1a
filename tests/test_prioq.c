/* test_prioq.c -- the priority queue (src/prioq.c) alone, against a reference model: random
 * pushes (few and many distinct priorities), pops and removals from the middle. A pop must
 * return the highest-priority (lowest number), oldest queued task. Exits non-zero on failure. */
#include <stdio.h>
#include <stdlib.h>

#include "prioq.h"
#include "check.h"

#define N 4000

static crew_task tasks[N];
static int queued[N];     /* model: 1 if tasks[i] is in the queue */
static long order[N];     /* model: push order of tasks[i] */

static int fail(const char *what, int i) {
    fprintf(stderr, "test_prioq: %s (task %d)\n", what, i);
    return 1;
}

/* The model's choice: the queued task with the lowest (priority, order). */
static int model_top(void) {
    int best = -1;
    for (int i = 0; i < N; i++)
        if (queued[i] && (best < 0 || tasks[i].priority < tasks[best].priority ||
                          (tasks[i].priority == tasks[best].priority && order[i] < order[best])))
            best = i;
    return best;
}

static int run(unsigned seed, uint32_t distinct) {
    crew__prioq q = {0};
    long clock = 0;
    size_t n = 0;
    srand(seed);
    for (int i = 0; i < N; i++)
        queued[i] = 0;
    for (int step = 0; step < 3 * N; step++) {
        int op = rand() % 10;
        if (op < 5) { /* push a task that is not queued */
            int i = rand() % N;
            if (queued[i])
                continue;
            tasks[i].priority = (uint32_t)rand() % distinct;
            if (crew__prioq_push(&q, &tasks[i]) != CREW_OK)
                return fail("push failed", i);
            queued[i] = 1;
            order[i] = clock++;
            n++;
        } else if (op < 8) { /* pop */
            int want = model_top();
            crew_task *t = crew__prioq_pop(&q);
            if (want < 0 ? t != NULL : t != &tasks[want])
                return fail("pop returned the wrong task", want);
            if (want >= 0) {
                queued[want] = 0;
                n--;
            }
        } else { /* remove a queued task from the middle */
            int i = rand() % N;
            if (!queued[i])
                continue;
            crew__prioq_remove(&q, &tasks[i]);
            queued[i] = 0;
            n--;
        }
        if (q.n != n)
            return fail("length is wrong", -1);
    }
    while (n > 0) { /* drain in order */
        int want = model_top();
        if (crew__prioq_pop(&q) != &tasks[want])
            return fail("drain order is wrong", want);
        queued[want] = 0;
        n--;
    }
    if (crew__prioq_pop(&q) != NULL || q.nlevels != 0)
        return fail("not empty after draining", -1);
    crew__prioq_free(&q);
    return 0;
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "The priority queue alone, against a reference model.");
    const uint32_t distinct[] = {1, 3, 64, 5000, UINT32_MAX};
    for (unsigned k = 0; k < sizeof distinct / sizeof *distinct; k++)
        if (run(k + 1, distinct[k]) != 0)
            return 1;
    printf("test_prioq: ok\n");
    return 0;
}
