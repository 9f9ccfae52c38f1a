/*
 * check.h -- CHECK(cond) for the C tests that run without GoogleTest (test_ec.c,
 * test_assert.c): on failure, print where and what, and exit with status 1.
 */
#ifndef CREW_TESTS_CHECK_H
#define CREW_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);            \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

#endif /* CREW_TESTS_CHECK_H */
