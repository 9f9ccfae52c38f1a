/*
 * threadpool_example.c -- the way mbrossard's threadpool is used (create, add until the queue is
 * full, destroy gracefully), written for crew's drop-in threadpool.h. Nothing here mentions crew:
 * the program builds unchanged against the original threadpool.c, or against
 * libcrew_threadpool.
 *
 *   cc threadpool_example.c -Icompat/threadpool -Lbuild/compat -lcrew_threadpool -Lbuild -lcrew \
 *      -pthread
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "threadpool.h"

#define THREAD 4
#define QUEUE 256

static atomic_int done; /* tasks finished, counted from every worker */

static void dummy_task(void *arg) {
    (void)arg;
    /* A little work, then count it. */
    volatile double x = 1.0;
    for (int i = 0; i < 2000; i++)
        x = x * 1.000001 + 0.5;
    atomic_fetch_add(&done, 1);
}

int main(int argc, char **argv) {
    /* No options: -h or --help says what the program does, anything else is refused. */
    if (argc > 1) {
        int help = argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
        fprintf(help ? stdout : stderr,
                "usage: %s [-h|--help]\n"
                "Fills the queue of a pool of %d threads (threadpool.h, queue of %d), adds 1000\n"
                "tasks more, retrying while it is full, destroys it gracefully and checks that\n"
                "every task ran; exits 0 if so.\n",
                argv[0], THREAD, QUEUE);
        return help ? 0 : 2;
    }

    threadpool_t *pool = threadpool_create(THREAD, QUEUE, 0);
    if (!pool) {
        fputs("threadpool_create failed\n", stderr);
        return 1;
    }
    printf("Pool started with %d threads and queue size of %d\n", THREAD, QUEUE);

    /* Fill the queue until it refuses: threadpool_add never blocks. */
    int added = 0;
    while (threadpool_add(pool, dummy_task, NULL, 0) == 0)
        added++;
    printf("Added %d tasks before the queue was full\n", added);

    /* A producer that must not lose work retries when the queue is full. */
    for (int i = 0; i < 1000; i++) {
        int rc;
        while ((rc = threadpool_add(pool, dummy_task, NULL, 0)) == threadpool_queue_full)
            sched_yield();
        if (rc != 0) {
            fprintf(stderr, "threadpool_add: %d\n", rc);
            threadpool_destroy(pool, 0);
            return 1;
        }
        added++;
    }

    /* Graceful: every queued task runs before the threads stop. */
    if (threadpool_destroy(pool, threadpool_graceful) != 0) {
        fputs("threadpool_destroy failed\n", stderr);
        return 1;
    }
    printf("Did %d tasks of %d\n", atomic_load(&done), added);
    return atomic_load(&done) == added ? 0 : 1;
}
