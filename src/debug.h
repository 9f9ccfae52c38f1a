/*
 * debug.h -- crew__assert: crew's internal invariants, checked in the test builds and compiled
 * out of the library that users install and the benchmarks measure (oneTBB's __TBB_ASSERT,
 * mimalloc's mi_assert).
 *
 * An assertion states what crew's own code guarantees (a count that never goes below 0, a
 * push into room reserved beforehand, a sleeper counted once), never what a caller might get
 * wrong: misuse of the API is answered with an error code (crew.h). A failed assertion is a
 * bug in crew: it prints "crew: file:line: function: assertion `cond' failed" (and the message
 * of crew__assert_msg) to stderr and calls abort().
 *
 * On when the file is compiled with CREW_ASSERT defined to 1: CMake's option CREW_ASSERT
 * (on by default for Debug and sanitizer builds) defines it for the whole build, and the
 * tests link crew_checked, the library compiled with it, in every configuration (in a release
 * build, a second static library built from the same sources; CMakeLists.txt). Independent of
 * NDEBUG, which the release build types define. Off, crew__assert(cond) is no code at all, and
 * cond is not evaluated (only named, inside sizeof, so that a variable kept for an assertion
 * raises no "unused" warning): never write an expression whose side effect the program needs
 * inside one. Assert the result of a call instead:
 *     int rc = crew__deque_push1(d, t);
 *     crew__assert(rc == CREW_OK);
 * Cheap checks only, so that the tests keep their timing; a check that reads a shared variable
 * the code would not otherwise read uses a relaxed load (no ordering that the release build
 * lacks).
 */
#ifndef CREW_DEBUG_H
#define CREW_DEBUG_H

#if defined(CREW_ASSERT) && CREW_ASSERT

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The report of a failed assertion, then abort(). Static in this header rather than in a .c
 * file, so that a test compiling one of crew's sources alone (tests/CMakeLists.txt) needs
 * nothing more; only the checked builds contain it (unused: a file that asserts nothing). */
static __attribute__((unused, cold, noinline, noreturn, format(printf, 5, 6))) void
crew__assert_fail(const char *file, int line, const char *func, const char *cond,
                  const char *fmt, ...) {
    fprintf(stderr, "crew: %s:%d: %s: assertion `%s' failed", file, line, func, cond);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

#define crew__assert(cond)                                                                     \
    (__builtin_expect(!!(cond), 1)                                                             \
         ? (void)0                                                                             \
         : crew__assert_fail(__FILE__, __LINE__, __func__, #cond, (const char *)0))
/* The same, with a printf-style message after the condition: the values that broke it. */
#define crew__assert_msg(cond, ...)                                                            \
    (__builtin_expect(!!(cond), 1)                                                             \
         ? (void)0                                                                             \
         : crew__assert_fail(__FILE__, __LINE__, __func__, #cond, __VA_ARGS__))

#else

#define crew__assert(cond) ((void)sizeof(!(cond)))
#define crew__assert_msg(cond, ...) ((void)sizeof(!(cond)))

#endif

#endif /* CREW_DEBUG_H */
