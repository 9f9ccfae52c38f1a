/*
 * test_thpool_debug.c -- a program compiled with THPOOL_DEBUG, as the original's tests compile
 * thpool.c: thpool_init prints the original's line per thread it creates, on stdout.
 */
#define _POSIX_C_SOURCE 200809L
#define THPOOL_DEBUG
#include "thpool.h"

#include <string.h>
#include <unistd.h>

#include "harness.h"

static void test_debug_lines(void) {
    char path[] = "/tmp/crew-thpool-debug-XXXXXX";
    int fd = mkstemp(path);
    MUST(fd < 0);
    fflush(stdout);
    int saved = dup(1);
    MUST(saved < 0);
    MUST(dup2(fd, 1) < 0);
    threadpool tp = thpool_init(3);
    threadpool none = thpool_init(0); /* no threads, no lines */
    fflush(stdout);
    MUST(dup2(saved, 1) < 0);
    close(saved);
    CHECK(tp != NULL && none != NULL);
    thpool_destroy(tp);
    thpool_destroy(none);
    char buf[512] = {0};
    MUST(lseek(fd, 0, SEEK_SET) < 0);
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    unlink(path);
    const char *want = "THPOOL_DEBUG: Created thread 0 in pool \n"
                       "THPOOL_DEBUG: Created thread 1 in pool \n"
                       "THPOOL_DEBUG: Created thread 2 in pool \n";
    CHECK(got == (ssize_t)strlen(want));
    CHECK(strcmp(buf, want) == 0);
    if (strcmp(buf, want) != 0)
        fprintf(stderr, "got:\n%s", buf);
}

int main(void) {
    static const struct compat_test tests[] = {{"debug_lines", test_debug_lines}};
    return run_tests("test_thpool_debug", tests, sizeof tests / sizeof tests[0]);
}
