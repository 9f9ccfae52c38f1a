/*
 * check.h -- for the C tests that run without GoogleTest: CHECK(cond) (on failure, print where
 * and what, and exit with status 1) and crewtest_help (every program answers --help).
 */
#ifndef CREW_TESTS_CHECK_H
#define CREW_TESTS_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);            \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

/* The C tests take no arguments. Given any: print the usage, what the program tests (about)
 * and its exit status, then exit with status 0 if it was asked for --help (or -h), else 2. */
static inline void crewtest_help(int argc, char **argv, const char *about) {
    if (argc > 1) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        if (!help)
            fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], argv[1]);
        printf("usage: %s\n%s\nExit status 0 if every check passes, else non-zero.\n", argv[0],
               about);
        exit(help ? 0 : 2);
    }
}

#endif /* CREW_TESTS_CHECK_H */
