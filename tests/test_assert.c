/*
 * test_assert.c -- crew's assertions (src/debug.h) are on in the tests, and a broken invariant
 * aborts with its place and its condition. Each case breaks one in a child process and expects it
 * to die of SIGABRT with "crew: <file>:<line>: <function>: assertion `<condition>' failed" on
 * stderr: once in the library (group.c, compiled into crew_checked), twice in an inline function of
 * src/ compiled into this program (ec.h). The tests link crew_checked (tests/CMakeLists.txt): built
 * against a library without the assertions, or without CREW_ASSERT, this test fails, and says so.
 * The same calls with the invariant kept must not abort.
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ec.h"
#include "group.h"

/* Run fn in a child process; its stderr is returned in out (at most size - 1 bytes, NUL
 * terminated) and its wait status in *status. */
static void run_child(void (*fn)(void), char *out, size_t size, int *status) {
    int fd[2];
    CHECK(pipe(fd) == 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none); /* no core file for the expected abort */
        close(fd[0]);
        dup2(fd[1], STDERR_FILENO);
        fn();
        _exit(0); /* returned: no assertion fired */
    }
    close(fd[1]);
    size_t len = 0;
    for (;;) { /* to the end, keeping what fits, so that the child never blocks */
        char buf[256];
        ssize_t r = read(fd[0], buf, sizeof buf);
        if (r <= 0)
            break;
        size_t k = (size_t)r < size - 1 - len ? (size_t)r : size - 1 - len;
        memcpy(out + len, buf, k);
        len += k;
    }
    out[len] = '\0';
    close(fd[0]);
    CHECK(waitpid(pid, status, 0) == pid);
}

/* fn must die of SIGABRT with a report that contains every string of want (NULL-ended). */
static void expect_assertion(const char *name, void (*fn)(void), const char *const *want) {
    char out[4096];
    int status;
    run_child(fn, out, sizeof out, &status);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
        fprintf(stderr,
                "test_assert: %s: no assertion fired (the child %s %d; its stderr: \"%s\"). The "
                "tests must be built with crew's assertions on: they link crew_checked, and "
                "CREW_ASSERT=1 (src/debug.h, tests/CMakeLists.txt)\n",
                name, WIFSIGNALED(status) ? "died of signal" : "exited with status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), out);
        exit(1);
    }
    for (const char *const *w = want; *w; w++)
        if (!strstr(out, *w)) {
            fprintf(stderr, "test_assert: %s: the report lacks \"%s\"; it was: \"%s\"\n", name,
                    *w, out);
            exit(1);
        }
    printf("test_assert: %s: aborted as expected: %s", name, out);
}

/* ---- In the library: a group's open count never goes below 0 (group.c). ---- */

/* A group of one task, opened in m; returns its slot. */
static uint32_t one_task_group(crew__slotmap *m) {
    CHECK(crew__slotmap_init(m) == CREW_OK);
    crew_handle h;
    CHECK(crew__group_open(m, 1, &h, NULL) == CREW_OK);
    return crew__slot_index(h.slot);
}

static void end_two_of_one(void) {
    crew__slotmap m;
    uint32_t slot = one_task_group(&m);
    crew__group_done(&m, slot, 2, CREW__RAN, NULL); /* 2 tasks end of a group of 1 */
}

/* ---- Inline, in this program: a sleeper sleeps on at most CREW__EC_NODES eventcounts, each
 * once (ec.h). ---- */

static void too_many_eventcounts(void) {
    crew__ec ec[CREW__EC_NODES + 1];
    crew__ec_sleeper s;
    crew__ec_sleeper_init(&s, NULL);
    for (unsigned i = 0; i <= CREW__EC_NODES; i++) { /* one too many */
        crew__ec_init(&ec[i]);
        crew__ec_on(&s, &ec[i], NULL);
    }
}

static void same_eventcount_twice(void) {
    crew__ec ec;
    crew__ec_init(&ec);
    crew__ec_sleeper s;
    crew__ec_sleeper_init(&s, NULL);
    crew__ec_on(&s, &ec, NULL);
    crew__ec_on(&s, &ec, NULL);
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "crew's assertions are on in the tests: a broken invariant aborts with its place.");
    /* The invariants kept: no assertion. */
    crew__slotmap m;
    uint32_t slot = one_task_group(&m);
    CHECK(crew__group_done(&m, slot, 1, CREW__RAN, NULL)); /* the group finished */
    crew__slotmap_free(&m);
    crew__ec ec[CREW__EC_NODES];
    crew__ec_sleeper s;
    crew__ec_sleeper_init(&s, NULL);
    for (unsigned i = 0; i < CREW__EC_NODES; i++) {
        crew__ec_init(&ec[i]);
        crew__ec_on(&s, &ec[i], NULL);
    }
    CHECK(s.n == CREW__EC_NODES && !crew__ec_listed(&ec[0]));

    /* Broken: each aborts, naming where and what. */
    expect_assertion("group.c, in the library", end_two_of_one,
                     (const char *const[]){"crew: ", "group.c:", "crew__group_done",
                                           "assertion `crew__open_of(prev) >= n' failed",
                                           "slot 1: 1 tasks open, 2 ended", NULL});
    expect_assertion("ec.h, inline in this program", too_many_eventcounts,
                     (const char *const[]){"crew: ", "ec.h:", "crew__ec_on",
                                           "assertion `s->n < CREW__EC_NODES'", NULL});
    expect_assertion("ec.h, the same eventcount twice", same_eventcount_twice,
                     (const char *const[]){"crew: ", "ec.h:", "crew__ec_on",
                                           "assertion `s->node[i].ec != ec'", NULL});
    return 0;
}
