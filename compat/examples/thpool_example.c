/*
 * thpool_example.c -- the usage C-Thread-Pool's README shows (make a pool, add work, wait,
 * destroy), written for crew's drop-in thpool.h. Nothing here mentions crew: the program builds
 * unchanged against the original thpool.c, or against libcrew_thpool.
 *
 *   cc thpool_example.c -Icompat/thpool -Lbuild/compat -lcrew_thpool -Lbuild -lcrew -pthread
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "thpool.h"

/* Each job sums the squares of one slice of 1..N into its own slot: no locking needed. */
enum { JOBS = 40, SLICE = 25000 };
static unsigned long long partial[JOBS];

static void sum_squares(void *arg) {
    uintptr_t job = (uintptr_t)arg; /* the job's number travels in the argument pointer */
    unsigned long long s = 0;
    for (unsigned long long k = job * SLICE + 1; k <= (job + 1) * SLICE; k++)
        s += k * k;
    partial[job] = s;
}

int main(int argc, char **argv) {
    /* No options: -h or --help says what the program does, anything else is refused. */
    if (argc > 1) {
        int help = argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
        fprintf(help ? stdout : stderr,
                "usage: %s [-h|--help]\n"
                "Sums the squares of 1..%d in %d jobs on a pool of 4 threads (thpool.h), waits\n"
                "for them and checks the sum; exits 0 if it is right.\n",
                argv[0], JOBS * SLICE, JOBS);
        return help ? 0 : 2;
    }

    puts("Making threadpool with 4 threads");
    threadpool pool = thpool_init(4);
    if (!pool) {
        fputs("thpool_init failed\n", stderr);
        return 1;
    }

    puts("Adding 40 tasks to threadpool");
    for (uintptr_t i = 0; i < JOBS; i++) {
        if (thpool_add_work(pool, sum_squares, (void *)i) != 0) {
            fputs("thpool_add_work failed\n", stderr);
            thpool_destroy(pool);
            return 1;
        }
    }

    thpool_wait(pool); /* every job has finished: their results are visible here */
    unsigned long long total = 0;
    for (int i = 0; i < JOBS; i++)
        total += partial[i];
    unsigned long long n = (unsigned long long)JOBS * SLICE;
    unsigned long long expected = n * (n + 1) * (2 * n + 1) / 6;
    printf("sum of squares 1..%llu = %llu (%s)\n", n, total, total == expected ? "ok" : "WRONG");

    puts("Killing threadpool");
    thpool_destroy(pool);
    return total == expected ? 0 : 1;
}
