/* A program outside the repository using both drop-ins, C-Thread-Pool's thpool.h and mbrossard's
 * threadpool.h, from an installed crew or from crew added as a subdirectory (package_test.sh). */
#include <stdio.h>
#include <thpool.h>
#include <threadpool.h>

static void add(void *arg) { __atomic_fetch_add((int *)arg, 1, __ATOMIC_RELAXED); }

int main(void) {
    int n = 0, m = 0;
    threadpool tp = thpool_init(2);
    if (!tp)
        return 1;
    for (int i = 0; i < 100; i++)
        thpool_add_work(tp, add, &n);
    thpool_wait(tp);
    thpool_destroy(tp);

    threadpool_t *pool = threadpool_create(2, 128, 0);
    if (!pool)
        return 1;
    for (int i = 0; i < 100; i++)
        while (threadpool_add(pool, add, &m, 0) == threadpool_queue_full) {
        }
    if (threadpool_destroy(pool, threadpool_graceful) != 0)
        return 1;
    printf("consumer_compat: thpool %d, threadpool %d\n", n, m);
    return n == 100 && m == 100 ? 0 : 1;
}
