/*
 * hasher.c -- hash every file under a directory tree in parallel on a crew pool: blocking reads
 * mixed with computing, one task per file (a parallel `sha256sum -r`-style indexer, with 64-bit
 * FNV-1a as the hash to stay dependency-free).
 *
 *   hasher [-t threads] [-b] [-q] DIR...
 *
 * Prints "<16 hex digits>  <path>" per regular file, sorted by path, so the output does not
 * depend on the pool size; then a summary line on stderr (files, bytes, seconds, MB/s). Files
 * that cannot be read are reported on stderr with the reason, and the exit status is 1.
 *
 * Each task reads and hashes one file. From a local disk, or the page cache, that is mostly CPU
 * work, so the tasks run on the workers (one per core by default), and the calling thread helps.
 * On storage where reads wait (a network file system, a cold spinning disk), pass -b: the tasks
 * are then CREW_TASK_BLOCKING, and run on the pool's blocking threads (up to
 * crew_config.max_blocking at once), so many reads wait at the same time without holding up
 * the workers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
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

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [-t threads] [-b] [-q] DIR...\n"
            "  -t threads   pool workers (default: one per core)\n"
            "  -b           reads wait (network file system): run the tasks as\n"
            "               CREW_TASK_BLOCKING, on the pool's blocking threads\n"
            "  -q           print only the summary line\n"
            "  -h, --help   this text\n"
            "Prints \"<hash>  <path>\" per file, sorted by path, then a summary on stderr.\n",
            prog);
}

int main(int argc, char **argv) {
    unsigned threads = 0;
    int quiet = 0, blocking = 0, opt;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:bqh", longopts, NULL)) != -1) {
        switch (opt) {
        case 't': threads = (unsigned)atoi(optarg); break;
        case 'b': blocking = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout, argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
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
    if (!tasks) {
        rc = CREW_ENOMEM;
    } else if (nentries && !blocking) {
        rc = crew_enqueue_tasks_wait(p, tasks, nentries); /* the caller hashes too */
    } else if (nentries) { /* on the blocking threads; waiters never run blocking tasks */
        crew_handle all = CREW_HANDLE_NONE;
        rc = crew_enqueue_tasks_ex(p, tasks, nentries, &all, CREW_TASK_BLOCKING);
        if (rc == CREW_OK)
            rc = crew_wait(p, all);
    }
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
