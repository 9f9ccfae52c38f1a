/* test_c_header.c -- the public header compiled as strict C11 (-std=c11 -pedantic -Werror), and
 * a small program using it from C. Exits non-zero on failure. */
#include <stdio.h>

#include "crew.h"

static void add(void *arg) {
    int *x = arg;
    __atomic_fetch_add(x, 1, __ATOMIC_RELAXED);
}

int main(void) {
    crew_pool *p = NULL;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    if (crew_create(&p, &cfg) != CREW_OK)
        return 1;
    int n = 0;
    crew_handle g = CREW_HANDLE_NONE;
    crew_task t[4] = {{add, &n, 0, 0, {0}}, {add, &n, 1, 0, {0}}, {add, &n, 2, 0, {0}},
                      {add, &n, 3, 0, {0}}};
    int rc = crew_enqueue_tasks(p, t, 4, &g);
    if (rc == CREW_OK)
        rc = crew_wait(p, g);
    if (rc == CREW_OK)
        rc = crew_submit(p, add, &n, 0, NULL);
    if (rc == CREW_OK)
        rc = crew_wait_all(p);
    crew_destroy(p);
    if (rc != CREW_OK || n != 5) {
        fprintf(stderr, "test_c_header: rc=%s n=%d\n", crew_err_name(rc), n);
        return 1;
    }
    printf("test_c_header: ok (%s)\n", crew_strerror(CREW_ESTALE));
    return 0;
}
