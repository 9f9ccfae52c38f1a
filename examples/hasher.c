/*
 * hasher.c -- hash every file under a directory tree in parallel on a crew pool: blocking reads
 * mixed with computing, one task per file (a parallel `sha256sum -r`-style indexer, with 64-bit
 * FNV-1a as the hash to stay dependency-free).
 *
 *   hasher [-t threads] [-q] DIR...
 *
 * Prints "<16 hex digits>  <path>" per regular file, sorted by path, so the output does not
 * depend on the pool size; then a summary line on stderr (files, bytes, seconds, MB/s). Files
 * that cannot be read are reported on stderr with the reason, and the exit status is 1.
 * (Once crew has blocking tasks, the reads will be marked CREW_TASK_BLOCKING.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"

typedef struct entry {
    char *path;
    uint64_t hash;
    uint64_t bytes;
    int err; /* errno of a failed read, 0 if fine */
} entry;

static entry *entries;
static size_t nentries, cap;

static int collect(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    if (type != FTW_F)
        return 0;
    if (nentries == cap) {
        size_t ncap = cap ? cap * 2 : 256;
        entry *e = realloc(entries, ncap * sizeof *e);
        if (!e)
            return -1;
        entries = e;
        cap = ncap;
    }
    entries[nentries] = (entry){strdup(path), 0, 0, 0};
    if (!entries[nentries].path)
        return -1;
    nentries++;
    return 0;
}

static void hash_file(void *arg) {
    entry *e = arg;
    int fd = open(e->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        e->err = errno;
        return;
    }
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */
    unsigned char buf[1 << 16];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < r; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
        e->bytes += (uint64_t)r;
    }
    if (r < 0)
        e->err = errno;
    close(fd);
    e->hash = h;
}

static int by_path(const void *a, const void *b) {
    return strcmp(((const entry *)a)->path, ((const entry *)b)->path);
}

int main(int argc, char **argv) {
    unsigned threads = 0;
    int quiet = 0, opt;
    while ((opt = getopt(argc, argv, "t:qh")) != -1) {
        switch (opt) {
        case 't': threads = (unsigned)atoi(optarg); break;
        case 'q': quiet = 1; break;
        default:
            fprintf(stderr, "usage: %s [-t threads] [-q] DIR...\n", argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr,
                "hasher: name at least one directory (usage: hasher [-t threads] DIR...)\n");
        return 2;
    }
    for (int i = optind; i < argc; i++)
        if (nftw(argv[i], collect, 64, FTW_PHYS) != 0) {
            fprintf(stderr, "hasher: cannot walk %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
    qsort(entries, nentries, sizeof *entries, by_path);

    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    crew_pool *p;
    int rc = crew_create(&p, &cfg);
    if (rc != CREW_OK) {
        fprintf(stderr, "hasher: %s\n", crew_strerror(rc));
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    crew_task *tasks = calloc(nentries ? nentries : 1, sizeof *tasks);
    for (size_t i = 0; tasks && i < nentries; i++) {
        tasks[i].fn = hash_file;
        tasks[i].arg = &entries[i];
    }
    if (!tasks)
        rc = CREW_ENOMEM;
    else if (nentries)
        rc = crew_enqueue_tasks_wait(p, tasks, nentries); /* the caller hashes too */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    crew_destroy(p);
    if (rc != CREW_OK) {
        fprintf(stderr, "hasher: %s\n", crew_strerror(rc));
        return 1;
    }
    int status = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < nentries; i++) {
        entry *e = &entries[i];
        if (e->err) {
            fprintf(stderr, "hasher: %s: %s\n", e->path, strerror(e->err));
            status = 1;
        } else if (!quiet) {
            printf("%016llx  %s\n", (unsigned long long)e->hash, e->path);
        }
        bytes += e->bytes;
        free(e->path);
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    fprintf(stderr, "hasher: %zu files, %llu bytes, %.3f s, %.1f MB/s\n", nentries,
            (unsigned long long)bytes, secs, secs > 0 ? (double)bytes / secs / 1e6 : 0.0);
    free(entries);
    free(tasks);
    return status;
}
