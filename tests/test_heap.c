/* test_heap.c -- the heaps (src/heap.h, src/heap.c) and the chunk claims (src/chunks.h) alone.
 * The due heap against a reference model: random insertions, removals from the middle (as
 * crew_timer_stop's) and filters (as crew_cancel's), checking after each step that the top is
 * the earliest (when, seq) entry and that every task knows its entry's index. The algorithm on
 * its own, binary and 4-ary, as a heap sort. Chunk claims from several threads, one at a time
 * and guided: every index claimed exactly once. Exits non-zero on failure. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "chunks.h"
#include "heap.h"
#include "check.h"

#define N 3000

static crew_task tasks[N];
static int in_heap[N];      /* model: 1 if tasks[i] has an entry */
static uint64_t when_of[N]; /* model: its due time */
static long order[N];       /* model: its insertion order */

static int fail(const char *what, long i) {
    fprintf(stderr, "test_heap: %s (%ld)\n", what, i);
    return 1;
}

static int model_top(void) {
    int best = -1;
    for (int i = 0; i < N; i++)
        if (in_heap[i] && (best < 0 || when_of[i] < when_of[best] ||
                           (when_of[i] == when_of[best] && order[i] < order[best])))
            best = i;
    return best;
}

static int check(const crew__theap *h, size_t n) {
    if (h->n != n)
        return fail("entry count", (long)h->n);
    for (size_t i = 0; i < h->n; i++)
        if (h->e[i].task->crew_private_.spare != i)
            return fail("an entry's index in its task", (long)i);
    int top = model_top();
    if (n && h->e[0].task != &tasks[top])
        return fail("top is not the earliest entry", top);
    return 0;
}

static bool odd_slot(void *ctx, const crew__tent *e) {
    (void)ctx;
    return e->slot % 2 == 1;
}

static int due_heap(unsigned seed, uint64_t times) {
    crew__theap h = {0};
    size_t n = 0;
    long clock = 0;
    srand(seed);
    for (int i = 0; i < N; i++)
        in_heap[i] = 0;
    for (int step = 0; step < 3 * N; step++) {
        int op = rand() % 20, i = rand() % N;
        if (op < 12 && !in_heap[i]) { /* insert */
            if (crew__theap_reserve(&h, n + 1) != CREW_OK)
                return fail("reserve", (long)n);
            when_of[i] = (uint64_t)rand() % times;
            order[i] = clock++;
            in_heap[i] = 1;
            bool top = crew__theap_insert(&h, &tasks[i], when_of[i], (uint32_t)(i % 7));
            n++;
            if (top != (model_top() == i))
                return fail("insert's new-top answer", i);
        } else if (op < 19 && in_heap[i]) { /* remove from wherever it is */
            crew__theap_remove_at(&h, tasks[i].crew_private_.spare);
            in_heap[i] = 0;
            n--;
            crew__theap_shrink(&h, n);
        } else if (op == 19) { /* filter out the odd slots */
            crew__theap_filter(&h, odd_slot, NULL);
            for (int k = 0; k < N; k++)
                if (in_heap[k] && (k % 7) % 2 == 1) {
                    in_heap[k] = 0;
                    n--;
                }
        }
        if (check(&h, n))
            return 1;
    }
    while (n) { /* take the tops out, in order (check: each is the model's earliest) */
        in_heap[h.e[0].task - tasks] = 0;
        crew__theap_remove_at(&h, 0);
        n--;
        if (check(&h, n))
            return 1;
    }
    crew__theap_free(&h);
    return 0;
}

/* The algorithm alone: heap sort with d children per node. */
static bool int_less(const void *a, const void *b) { return *(const int *)a < *(const int *)b; }
static void int_placed(void *e, size_t i) {
    (void)e;
    (void)i;
}

static int heap_sort(size_t d) {
    const crew__heap_kind k = {sizeof(int), d, int_less, int_placed};
    int a[500];
    size_t n = sizeof a / sizeof a[0];
    for (size_t i = 0; i < n; i++)
        a[i] = rand() % 100;
    crew__heap_build(&k, a, n);
    int last = -1;
    for (size_t m = n; m > 0; m--) {
        int top = a[0];
        if (top < last)
            return fail("heap sort out of order, d", (long)d);
        last = top;
        int e = a[m - 1];
        if (m > 1)
            crew__heap_sift_down(&k, a, m - 1, 0, &e);
    }
    return 0;
}

/* Chunk claims from several threads. */
#define RANGE 100000
#define CLAIMERS 4
static crew__chunks chunks;
static _Atomic unsigned char claimed_n[RANGE];
static bool guided;

static void *claimer(void *arg) {
    (void)arg;
    for (;;) {
        size_t k = guided ? crew__chunks_guided(&chunks, RANGE, CLAIMERS, 64) : 1;
        size_t from, to;
        if (k == 0 || !crew__chunks_claim(&chunks, RANGE, k, &from, &to))
            return NULL;
        for (size_t i = from; i < to; i++)
            claimed_n[i]++;
    }
}

static int claims(bool g) {
    guided = g;
    crew__chunks_init(&chunks);
    for (size_t i = 0; i < RANGE; i++)
        claimed_n[i] = 0;
    pthread_t th[CLAIMERS];
    for (int i = 0; i < CLAIMERS; i++)
        pthread_create(&th[i], NULL, claimer, NULL);
    for (int i = 0; i < CLAIMERS; i++)
        pthread_join(th[i], NULL);
    for (size_t i = 0; i < RANGE; i++)
        if (claimed_n[i] != 1)
            return fail(g ? "guided claims: an index not claimed once" : "claims of one", (long)i);
    if (crew__chunks_claim_rest(&chunks, RANGE) < RANGE)
        return fail("claim_rest after the end", 0);
    return 0;
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "The heaps and the chunk claims alone, against a reference model.");
    if (due_heap(1, 1000) || due_heap(2, 20) || due_heap(3, 1))
        return 1;
    if (heap_sort(2) || heap_sort(4) || heap_sort(3))
        return 1;
    if (claims(false) || claims(true))
        return 1;
    puts("test_heap: ok");
    return 0;
}
