/* A program outside the repository, built against the installed crew (tests/package_test.sh). */
#include <crew.h>
#include <stdio.h>

static void add(void *arg) { __atomic_fetch_add((int *)arg, 1, __ATOMIC_RELAXED); }

int main(void) {
    crew_pool *p;
    int n = 0;
    if (crew_create(&p, NULL) != CREW_OK)
        return 1;
    for (int i = 0; i < 100; i++)
        crew_submit(p, add, &n, 0, NULL);
    int rc = crew_wait_all(p);
    crew_destroy(p);
    printf("consumer: %d tasks, %s\n", n, crew_strerror(rc));
    return rc == CREW_OK && n == 100 ? 0 : 1;
}
