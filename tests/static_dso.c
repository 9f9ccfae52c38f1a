/*
 * static_dso.c -- a shared object that links the static library (libcrew.a), as a plugin or a
 * language binding would: it must export its own function and none of crew's names
 * (tests/nm_test.sh --dso checks with nm -D). Built as test_static_dso by tests/CMakeLists.txt.
 */
#include <crew.h>

/* Runs one task on a pool of one thread; 0 when it ran. Pulls in crew's objects. */
__attribute__((visibility("default"))) int static_dso_run(void);

static void bump(void *arg) { ++*(int *)arg; }

int static_dso_run(void) {
    crew_pool *p = NULL;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    if (crew_create(&p, &cfg) != CREW_OK)
        return -1;
    int n = 0;
    crew_handle g = CREW_HANDLE_NONE;
    int rc = crew_submit(p, bump, &n, 0, &g);
    if (rc == CREW_OK)
        rc = crew_wait(p, g);
    crew_destroy(p);
    return rc == CREW_OK && n == 1 ? 0 : -1;
}
