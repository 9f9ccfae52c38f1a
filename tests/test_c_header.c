/* test_c_header.c -- the public header compiled as strict C11 (-std=c11 -pedantic -Werror), and
 * a small program using it from C. Exits non-zero on failure. */
#include <stdio.h>
#include <string.h>

#include "crew.h"
#include "check.h"

static void add(void *arg) {
    int *x = arg;
    __atomic_fetch_add(x, 1, __ATOMIC_RELAXED);
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "The public header compiled as strict C11, and a small C program using it.");
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
    /* The general form, its options from the initialiser. */
    crew_submit_options o = CREW_SUBMIT_OPTIONS_INIT;
    o.priority = 1;
    if (rc == CREW_OK)
        rc = crew_submit_with(p, add, &n, &o, NULL);
    if (rc == CREW_OK)
        rc = crew_enqueue_with(p, t, 1, NULL, NULL);
    if (rc == CREW_OK)
        rc = crew_wait_all(p);
    /* The detail of a failed call: never NULL, names the function. */
    if (crew_resize(p, 0) != CREW_EINVAL) {
        fprintf(stderr, "test_c_header: crew_resize(0) did not fail\n");
        crew_destroy(p);
        return 1;
    }
    const char *detail = crew_last_error();
    if (!detail || strstr(detail, "crew_resize: threads is 0") == NULL) {
        fprintf(stderr, "test_c_header: crew_last_error() is \"%s\"\n", detail ? detail : "NULL");
        crew_destroy(p);
        return 1;
    }
    crew_destroy(p);
    if (rc != CREW_OK || n != 7) {
        fprintf(stderr, "test_c_header: rc=%s n=%d\n", crew_err_name(rc), n);
        return 1;
    }
    printf("test_c_header: ok (%s)\n", crew_strerror(CREW_ESTALE));
    return 0;
}
