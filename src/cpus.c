/*
 * cpus.c -- how many CPUs a pool's threads may run on: the one count that the default size
 * (crew_config.threads 0), the sizing controller, the MultiQueue's queue count and
 * CREW_SPIN_AUTO all use, counted once per pool by crew_create (crew_pool.cpus).
 *
 * Sized for the CPUs the pool may use, not the CPUs the machine has: under `taskset -c 0` or a
 * container's cpuset, a pool sized by the online CPUs runs several threads per CPU it may use.
 * So, as libgomp does at start-up, the count is the calling thread's affinity mask
 * (sched_getaffinity, whose threads the pool's inherit), read into a mask sized to fit (a fixed
 * cpu_set_t holds 1024 CPUs, and sched_getaffinity fails when the kernel's are more). A pool
 * pinned by crew_hooks.cpus counts only the CPUs it lists that the mask holds.
 *
 * As Go does since 1.25, the count is also at most the cgroup v2 CPU quota, rounded up: a
 * container limited to 2 CPUs' worth of time on 64 CPUs runs best with 2 threads, not 64 that the
 * quota throttles in turn. As Go does, where the limit files are is found once per process
 * (/proc/self/cgroup and /proc/self/mountinfo), and the limits are read again for each pool (a few
 * small reads, beside the threads crew_create starts: a quota changed at run time is seen by the
 * next pool). Anything missing or unreadable means no quota, so the quota can only lower the count
 * where one is really set. Go's minimum of 2 is not kept: a waiting caller runs tasks too, so one
 * worker already has company. cgroup v1's cpu.cfs_quota_us is not read (v1 is legacy; a v1 host
 * gets the mask alone).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus.h"

unsigned crew__cpus_quota_parse(const char *text) {
    char *end;
    if (!text || strncmp(text, "max", 3) == 0)
        return 0;
    errno = 0;
    long long quota = strtoll(text, &end, 10);
    if (errno || end == text || *end != ' ' || quota <= 0)
        return 0;
    const char *p = end;
    long long period = strtoll(p, &end, 10);
    if (errno || end == p || period <= 0)
        return 0;
    long long n = quota / period + (quota % period != 0);
    return n > (long long)CREW_MAX_THREADS ? CREW_MAX_THREADS : (unsigned)n;
}

/* One cpu.max's quota (crew__cpus_quota_parse), 0 when the file is missing or unreadable. */
static unsigned read_quota(const char *dir) {
    char file[PATH_MAX + 16], text[64];
    if (snprintf(file, sizeof file, "%s/cpu.max", dir) >= (int)sizeof file)
        return 0;
    FILE *f = fopen(file, "re");
    if (!f)
        return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return crew__cpus_quota_parse(text);
}

unsigned crew__cpus_quota(const char *root, const char *path) {
    char dir[PATH_MAX];
    size_t base = strlen(root);
    if (snprintf(dir, sizeof dir, "%s%s", root, strcmp(path, "/") == 0 ? "" : path) >=
        (int)sizeof dir)
        return 0;
    unsigned least = 0;
    for (;;) { /* the cgroup, then each ancestor up to the mount's own: every limit applies */
        unsigned q = read_quota(dir);
        if (q && (!least || q < least))
            least = q;
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= base || !slash || (size_t)(slash - dir) < base)
            return least;
        *slash = '\0';
    }
}

#if defined(__linux__)
/* The line of `file` that starts with `prefix`, or NULL (the caller frees it). */
static char *line_starting(const char *file, const char *prefix) {
    FILE *f = fopen(file, "re");
    if (!f)
        return NULL;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            fclose(f);
            return line;
        }
    }
    free(line);
    fclose(f);
    return NULL;
}

/* Where the process's cgroup v2 limits are, found once (mountinfo alone costs some 50 us to read
 * here): the cgroup2 mount (empty: none found) and the process's cgroup below it. A process
 * moved to another cgroup later keeps the first one's limits; the limits themselves are read
 * again for each pool. */
static struct {
    pthread_once_t once;
    char mount[PATH_MAX]; /* the cgroup2 mount point, or "" */
    char path[PATH_MAX];  /* the process's cgroup within it, from "/" */
} where = {PTHREAD_ONCE_INIT, "", ""};

/* Decode, in place, mountinfo's octal escapes (a backslash and three octal digits). */
static void unescape(char *s) {
    char *out = s;
    for (const char *in = s; *in; out++) {
        if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
            in[3] >= '0' && in[3] <= '7') {
            *out = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
            in += 4;
        } else {
            *out = *in++;
        }
    }
    *out = '\0';
}

/* Fill `where`: the process's cgroup from /proc/self/cgroup ("0::<path>"), the cgroup2 mount
 * from /proc/self/mountinfo ("<id> <parent> <dev> <root> <mount point> ... - cgroup2 ..."). */
static void locate(void) {
    char *own = line_starting("/proc/self/cgroup", "0::");
    FILE *f = own ? fopen("/proc/self/mountinfo", "re") : NULL;
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        char root[PATH_MAX], mount[PATH_MAX];
        _Static_assert(PATH_MAX == 4096, "the widths below are PATH_MAX - 1");
        if (!strstr(line, " - cgroup2 ") ||
            sscanf(line, "%*s %*s %*s %4095s %4095s", root, mount) != 2)
            continue;
        unescape(root); /* mountinfo writes a space as \040 (and tab, newline, backslash) */
        unescape(mount);
        /* Where the mount shows a sub-tree (its root is not "/"), the path is within it. */
        const char *path = own + 3;
        size_t r = strlen(root);
        if (strcmp(root, "/") != 0 && strncmp(path, root, r) == 0 &&
            (path[r] == '/' || path[r] == '\0'))
            path = path[r] ? path + r : "/";
        if (strlen(path) < sizeof where.path) {
            memcpy(where.mount, mount, strlen(mount) + 1);
            memcpy(where.path, path, strlen(path) + 1);
        }
        break;
    }
    free(line);
    if (f)
        fclose(f);
    free(own);
}

/* The calling process's cgroup v2 quota (crew__cpus_quota), 0 for none or where it cannot be
 * found. */
static unsigned process_quota(void) {
    pthread_once(&where.once, locate);
    return where.mount[0] ? crew__cpus_quota(where.mount, where.path) : 0;
}

/* The calling thread's affinity mask in a set sized to fit, or NULL. OUT: its size in bytes. */
static cpu_set_t *allowed_mask(size_t *size) {
    for (int n = CPU_SETSIZE; n <= (1 << 20); n *= 2) {
        cpu_set_t *set = CPU_ALLOC(n);
        if (!set)
            return NULL;
        *size = CPU_ALLOC_SIZE(n);
        if (sched_getaffinity(0, *size, set) == 0)
            return set;
        int err = errno; /* before CPU_FREE, which may change errno */
        CPU_FREE(set);
        if (err != EINVAL) /* EINVAL: the kernel's mask is larger than this one */
            return NULL;
    }
    return NULL;
}

/* The CPUs of the mask, or of those listed in h->cpus each once; 0 if it cannot be asked. */
static long mask_count(const crew_hooks *h) {
    size_t size;
    cpu_set_t *set = allowed_mask(&size);
    if (!set)
        return 0;
    long n = 0;
    if (h && h->cpus) {
        for (size_t i = 0; i < h->ncpus; i++) {
            int c = h->cpus[i];
            if (c >= 0 && (size_t)c < 8 * size && CPU_ISSET_S(c, size, set)) {
                CPU_CLR_S(c, size, set); /* count each once */
                n++;
            }
        }
    } else {
        n = CPU_COUNT_S(size, set);
    }
    CPU_FREE(set);
    return n;
}
#endif

unsigned crew__cpus_count(const crew_hooks *h) {
    long n = 0, quota = 0;
#if defined(__linux__)
    n = mask_count(h);
    quota = process_quota();
#else
    (void)h;
#endif
    if (n < 1)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    if (quota > 0 && quota < n)
        n = quota;
    if (n < 1)
        return 1;
    return n > (long)CREW_MAX_THREADS ? CREW_MAX_THREADS : (unsigned)n;
}
