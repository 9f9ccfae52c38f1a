/*
 * group_soak.c -- a server-shaped soak of groups: client threads each make requests (a group
 * of one to three tasks, waited for with crew_wait), a share of them with a task whose start-by
 * time has passed (it expires) and a share cancelled with crew_cancel after submission. Every
 * wait's answer is checked (CREW_ECANCELED exactly when a cancel took effect, else CREW_EEXPIRED
 * exactly when a task expired, else CREW_OK), half the requests go through one handle variable
 * per client, reused (a reported loss must not carry over to the next request), and memory must
 * stay flat: the resident set after warm-up grows by less than --max-growth kilobytes, and the
 * slot indices that handles name stay below 4096 (lossy groups give their slots back).
 *
 * Usage: group_soak [--groups N] [--clients T] [--max-growth KB] [--no-rss] [-h|--help]
 *   --groups N      requests in all (default 10000000)
 *   --clients T     client threads (default 2); the pool has 2 workers
 *   --max-growth KB the resident set's allowed growth after warm-up, the first tenth of the
 *                   requests (default 1024)
 *   --no-rss        do not check the resident set (sanitizers, valgrind: their allocators keep
 *                   memory of their own); the slot indices are checked all the same
 * Exit status: 0 all as required, 1 a wrong answer or growth, 2 bad usage or set-up failure.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crew.h"

static crew_pool *pool;
static long total = 10000000, per_client;
static unsigned clients = 2;
static atomic_long done_requests, wrong, expired_reqs, cancelled_reqs;
static atomic_uint top_slot;

static void work(void *arg) {
    atomic_fetch_add_explicit((atomic_long *)arg, 1, memory_order_relaxed);
}

static uint64_t next_rand(uint64_t *s) { /* xorshift64 */
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *client(void *arg) {
    uint64_t rng = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
    atomic_long ran = 0;
    crew_handle kept = CREW_HANDLE_NONE;
    for (long r = 0; r < per_client; r++) {
        crew_handle fresh = CREW_HANDLE_NONE;
        crew_handle *g = r % 2 ? &kept : &fresh;
        uint64_t x = next_rand(&rng);
        int tasks = 1 + (int)(x % 3);
        int expire = (x >> 8) % 100 < 3; /* 3 %: one task's start-by time has passed */
        int cancel = (x >> 16) % 100 < 5; /* 5 %: crew_cancel after the submissions */
        for (int k = 0; k < tasks; k++) {
            uint64_t start_by = expire && k == tasks - 1 ? 1 : 0; /* 1 ns: long past */
            int rc = crew_submit_deadline(pool, work, &ran, 0, 0, start_by, g);
            if (rc != CREW_OK) {
                fprintf(stderr, "group_soak: crew_submit_deadline: %s (%s)\n", crew_err_name(rc),
                        crew_last_error());
                atomic_fetch_add(&wrong, 1);
                return NULL;
            }
        }
        int cancelled = cancel && crew_cancel(pool, *g) == CREW_OK;
        int want = cancelled ? CREW_ECANCELED : expire ? CREW_EEXPIRED : CREW_OK;
        int got = crew_wait(pool, *g);
        if (got != want) {
            if (atomic_fetch_add(&wrong, 1) < 10)
                fprintf(stderr, "group_soak: request %ld: crew_wait answered %s, expected %s\n",
                        r, crew_err_name(got), crew_err_name(want));
        }
        expired_reqs += expire && !cancelled;
        cancelled_reqs += cancelled;
        unsigned slot = g->slot & 0xffffffu; /* crew.h: the low 24 bits index the slot map */
        unsigned top = atomic_load_explicit(&top_slot, memory_order_relaxed);
        while (slot > top && !atomic_compare_exchange_weak(&top_slot, &top, slot)) {
        }
        atomic_fetch_add_explicit(&done_requests, 1, memory_order_relaxed);
    }
    return NULL;
}

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void usage(FILE *to) {
    fputs("usage: group_soak [--groups N] [--clients T] [--max-growth KB] [--no-rss] [--help]\n"
          "  Requests (groups of 1-3 tasks, each waited for) from T client threads (default 2),\n"
          "  3% with an expired task, 5% cancelled; N requests in all (default 10000000).\n"
          "  Checks every wait's answer, that the slot indices stay below 4096 and (unless\n"
          "  --no-rss) that the resident set grows by less than KB kilobytes (default 1024)\n"
          "  after the first tenth of the requests.\n"
          "Exit status: 0 as required, 1 a wrong answer or growth, 2 bad usage.\n",
          to);
}

int main(int argc, char **argv) {
    long max_growth = 1024;
    int check_rss = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--no-rss")) {
            check_rss = 0;
        } else if (i + 1 < argc && !strcmp(argv[i], "--groups")) {
            total = atol(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "--clients")) {
            clients = (unsigned)atoi(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "--max-growth")) {
            max_growth = atol(argv[++i]);
        } else {
            fprintf(stderr, "group_soak: unknown or incomplete argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (total < 10 || clients < 1 || clients > 64) {
        usage(stderr);
        return 2;
    }
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 2;
    if (crew_create(&pool, &cfg) != CREW_OK) {
        fprintf(stderr, "group_soak: crew_create: %s\n", crew_last_error());
        return 2;
    }
    per_client = total / clients;
    pthread_t t[64];
    for (unsigned i = 0; i < clients; i++)
        if (pthread_create(&t[i], NULL, client, (void *)(uintptr_t)i) != 0)
            return 2;
    long all = per_client * (long)clients, warm = -1;
    uint64_t start = crew_now_ns();
    while (atomic_load(&done_requests) < all / 10 && !atomic_load(&wrong))
        usleep(1000);
    warm = rss_kb();
    for (unsigned i = 0; i < clients; i++)
        pthread_join(t[i], NULL);
    long end = rss_kb();
    double secs = (double)(crew_now_ns() - start) / 1e9;
    crew_destroy(pool);
    printf("group_soak: %ld requests (%ld expired, %ld cancelled) in %.1f s; highest slot %u; "
           "resident set %ld KB after warm-up, %ld KB at the end: growth %ld KB\n",
           all, atomic_load(&expired_reqs), atomic_load(&cancelled_reqs), secs,
           atomic_load(&top_slot), warm, end, end - warm);
    int ok = 1;
    if (atomic_load(&wrong)) {
        printf("group_soak: FAILED: %ld wrong answers\n", atomic_load(&wrong));
        ok = 0;
    }
    if (atomic_load(&top_slot) >= 4096) {
        printf("group_soak: FAILED: slot %u in use: lossy groups keep their slots\n",
               atomic_load(&top_slot));
        ok = 0;
    }
    if (check_rss && (warm < 0 || end < 0 || end - warm >= max_growth)) {
        printf("group_soak: FAILED: the resident set grew by %ld KB (limit %ld)\n", end - warm,
               max_growth);
        ok = 0;
    }
    return ok ? 0 : 1;
}
