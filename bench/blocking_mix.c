/*
 * blocking_mix.c -- blocking file I/O mixed with short tasks (Li & Hu, JEThread, Figs. 1-3).
 *
 * Three kinds of task, as in Li & Hu (§VI):
 *   blocking  a 4 KiB read with O_DIRECT from a temp file (-i read, the default), or a 4 KiB
 *             pwrite over an allocated block followed by fdatasync (-i sync): either is a real
 *             trip to the device, the thread asleep in the kernel meanwhile. Task i uses file
 *             i mod F; the files are unlinked as soon as they are open, so nothing is left
 *             behind whatever happens. -i read is the default because it is steady here: an
 *             fdatasync takes 0.1 ms on a quiet disk but 4 ms while others write (the header
 *             prints what one took). Without O_DIRECT (tmpfs) it falls back to sync;
 *   compute   a fixed loop of a few microseconds (a hash chain, calibrated at start);
 *   empty     nothing.
 * Fig. 1 mixes blocking and compute tasks, Fig. 2 blocking and empty tasks, with 25/50/75%
 * blocking (spread over the task list by a fixed shuffle, the same for everyone). Fig. 3 runs
 * the 50% blocking + compute mix with 1, 2, 4, 8, 16 threads.
 *
 * Implementations, each timed from the first task handed out until all have finished:
 *   thread-per-task  pthread_create per task, then join all;
 *   crew             one pool of T workers (created once, not timed): blocking tasks with
 *                    crew_submit_ex(CREW_TASK_BLOCKING), so they run on crew's extra blocking
 *                    threads, the rest with crew_submit, then crew_wait_all;
 *   crew-noblock     the same pool, every task submitted as an ordinary task;
 *   per-core         T threads created per run, thread j runs tasks j, j+T, ... in order;
 *   goroutines       a go statement per task and a WaitGroup, in the Go program of
 *                    bench/go/blocking_mix (-g), with GOMAXPROCS = T. It runs as a child process
 *                    that times itself and answers one request per line on a pipe, so its runs
 *                    interleave with the others'.
 * Runs go round-robin across the implementations (the starting one rotates every round), so
 * each run's "other / crew" is measured under the same noise. The x crew column is the other's
 * median over crew's (> 1: crew is ahead), with the (min..max) of those per-run ratios.
 *
 * Usage: blocking_mix [-q] [-p threads] [-t 1,2,4,8,16] [-n tasks] [-N scale_tasks]
 *                     [-s 25,50,75] [-S scale_pct] [-r runs] [-u compute_us] [-F files]
 *                     [-i read|sync] [-e compute,empty,scale] [-g go_program] [-c out.csv]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

#define IO_BYTES 4096
#define MAX_LIST 32

enum kind { K_BLOCK = 'b', K_COMPUTE = 'c', K_EMPTY = 'e' };
enum impl { I_TPT, I_CREW, I_NOBLOCK, I_PERCORE, I_GO, NIMPL };
static const char *impl_name[NIMPL] = {"thread-per-task", "crew", "crew-noblock", "per-core",
                                       "goroutines"};

static char *kinds;         /* the current run's task list, one kind per task */
static int *fds, nfiles;    /* the unlinked temp files */
static char *io_buf;        /* what blocking tasks write, or read into (nobody looks at it) */
static int io_read = 1;     /* O_DIRECT read, else pwrite + fdatasync */
static long compute_loops;  /* iterations of the compute loop */
static atomic_int io_failed; /* errno of the first failed write or sync */
static volatile uint64_t sink;

static void die(const char *what, int err) {
    fprintf(stderr, "blocking_mix: %s: %s\n", what, strerror(err));
    exit(1);
}

/* "computes the sum based on the input and generates a simple hash value" (Li & Hu, §VI). */
static void compute(uint64_t x, long loops) {
    for (long i = 0; i < loops; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static void block_io(long i) {
    int fd = fds[i % nfiles];
    int ok = io_read ? pread(fd, io_buf, IO_BYTES, 0) == IO_BYTES
                     : pwrite(fd, io_buf, IO_BYTES, 0) == IO_BYTES && fdatasync(fd) == 0;
    if (!ok) {
        int zero = 0;
        atomic_compare_exchange_strong(&io_failed, &zero, errno ? errno : EIO);
    }
}

static void run_one(long i) {
    switch (kinds[i]) {
    case K_BLOCK:
        block_io(i);
        break;
    case K_COMPUTE:
        compute((uint64_t)i, compute_loops);
        break;
    default:
        break; /* empty */
    }
}

static void crew_task_fn(void *arg) { run_one((long)(intptr_t)arg); }

/* ---- the calibrations ---- */

/* Loops per microsecond from the fastest of several timings: preemption on a busy machine
 * only ever makes a timing slower. */
static void calibrate_compute(double us) {
    long loops = 1000;
    double t, best = 1e9;
    do {
        loops *= 2;
        double t0 = now_s();
        compute(1, loops);
        t = now_s() - t0;
    } while (t < 0.002);
    for (int k = 0; k < 20; k++) {
        double t0 = now_s();
        compute(1, loops);
        t = now_s() - t0;
        if (t < best)
            best = t;
    }
    compute_loops = (long)((double)loops / (best * 1e6) * us);
    if (compute_loops < 1)
        compute_loops = 1;
}

/* Median of n single blocking operations on one file, in microseconds. */
static double io_latency_us(int n) {
    double *t = malloc((size_t)n * sizeof *t);
    if (!t)
        die("malloc", ENOMEM);
    for (int k = 0; k < n; k++) {
        double t0 = now_s();
        block_io(0);
        t[k] = (now_s() - t0) * 1e6;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double m = t[n / 2];
    free(t);
    return m;
}

/* F temp files in $TMPDIR (or /tmp), each with one allocated block on the device, unlinked at
 * once. For reads each is opened again with O_DIRECT; where that fails, sync mode it is. */
static void open_files(void) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    fds = malloc((size_t)nfiles * sizeof *fds);
    if (!fds)
        die("malloc", ENOMEM);
    for (int i = 0; i < nfiles; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/crew-blocking-mix-XXXXXX", dir) >= (int)sizeof path)
            die("TMPDIR", ENAMETOOLONG);
        fds[i] = mkostemp(path, O_CLOEXEC); /* not inherited by the Go program */
        if (fds[i] < 0)
            die(path, errno);
        if (pwrite(fds[i], io_buf, IO_BYTES, 0) != IO_BYTES || fsync(fds[i]) != 0) {
            int err = errno ? errno : EIO;
            unlink(path);
            die("writing a temp file", err);
        }
        if (io_read) {
            int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
            if (fd >= 0) {
                close(fds[i]);
                fds[i] = fd;
            } else if (i == 0) {
                fprintf(stderr, "blocking_mix: O_DIRECT: %s; blocking tasks write and sync\n",
                        strerror(errno));
                io_read = 0;
            } else {
                int err = errno;
                unlink(path);
                die("open O_DIRECT", err);
            }
        }
        if (unlink(path) != 0)
            die(path, errno);
    }
}

/* Whether $TMPDIR is in memory, where nothing blocks (tmpfs even takes O_DIRECT nowadays). */
static int tmpdir_in_memory(void) {
    const char *dir = getenv("TMPDIR");
    struct statfs st;
    if (statfs(dir && *dir ? dir : "/tmp", &st) != 0)
        return 0;
    return st.f_type == 0x01021994 /* TMPFS_MAGIC */ || st.f_type == 0x858458f6 /* RAMFS */;
}

static void close_files(void) {
    for (int i = 0; i < nfiles; i++)
        close(fds[i]);
    free(fds);
}

/* Exactly n * pct / 100 blocking tasks, the rest `other`, in a fixed pseudo-random order (a
 * regular pattern would put every blocking task on one thread of the static partitioning). */
static void make_kinds(long n, int pct, char other) {
    long nb = n * pct / 100;
    for (long i = 0; i < n; i++)
        kinds[i] = i < nb ? K_BLOCK : other;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (long i = n - 1; i > 0; i--) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        long j = (long)(s % (uint64_t)(i + 1));
        char c = kinds[i];
        kinds[i] = kinds[j];
        kinds[j] = c;
    }
    kinds[n] = '\0';
}

/* ---- the implementations ---- */

static void *tpt_thread(void *arg) {
    run_one((long)(intptr_t)arg);
    return NULL;
}

static double run_tpt(long n) {
    pthread_t *th = malloc((size_t)n * sizeof *th);
    if (!th)
        die("malloc", ENOMEM);
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        int rc = pthread_create(&th[i], NULL, tpt_thread, (void *)(intptr_t)i);
        if (rc != 0)
            die("pthread_create (thread-per-task)", rc);
    }
    for (long i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    double t = now_s() - t0;
    free(th);
    return t;
}

static double run_crew(crew_pool *p, long n, int use_flag) {
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        unsigned flags = use_flag && kinds[i] == K_BLOCK ? CREW_TASK_BLOCKING : 0;
        int rc = crew_submit_ex(p, crew_task_fn, (void *)(intptr_t)i, 0, flags, NULL);
        if (rc != CREW_OK) {
            fprintf(stderr, "blocking_mix: crew_submit_ex: %s\n", crew_strerror(rc));
            exit(1);
        }
    }
    int rc = crew_wait_all(p);
    if (rc != CREW_OK) {
        fprintf(stderr, "blocking_mix: crew_wait_all: %s\n", crew_strerror(rc));
        exit(1);
    }
    return now_s() - t0;
}

struct share {
    long first, n, stride;
};

static void *percore_thread(void *arg) {
    struct share *s = arg;
    for (long i = s->first; i < s->n; i += s->stride)
        run_one(i);
    return NULL;
}

static double run_percore(long n, int threads) {
    pthread_t *th = malloc((size_t)threads * sizeof *th);
    struct share *sh = malloc((size_t)threads * sizeof *sh);
    if (!th || !sh)
        die("malloc", ENOMEM);
    double t0 = now_s();
    for (int j = 0; j < threads; j++) {
        sh[j] = (struct share){j, n, threads};
        int rc = pthread_create(&th[j], NULL, percore_thread, &sh[j]);
        if (rc != 0)
            die("pthread_create (per-core)", rc);
    }
    for (int j = 0; j < threads; j++)
        pthread_join(th[j], NULL);
    double t = now_s() - t0;
    free(th);
    free(sh);
    return t;
}

/* The Go program as a child: one request per line on its stdin ("GOMAXPROCS kinds"), one
 * time in seconds per line on its stdout. It exits when its stdin closes. */
static pid_t go_pid = -1;
static FILE *go_in, *go_out;

static int go_start(const char *prog) {
    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0)
        die("pipe", errno);
    char loops[32], files[32];
    snprintf(loops, sizeof loops, "%ld", compute_loops);
    snprintf(files, sizeof files, "%d", nfiles);
    go_pid = fork();
    if (go_pid < 0)
        die("fork", errno);
    if (go_pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        execl(prog, prog, "-loops", loops, "-files", files, "-io", io_read ? "read" : "sync",
              (char *)NULL);
        fprintf(stderr, "blocking_mix: %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    go_in = fdopen(to[1], "w");
    go_out = fdopen(from[0], "r");
    if (!go_in || !go_out)
        die("fdopen", errno);
    char line[64];
    if (!fgets(line, sizeof line, go_out) || strncmp(line, "ready", 5) != 0) {
        fprintf(stderr, "blocking_mix: the Go program did not start; goroutines skipped\n");
        fclose(go_in);
        fclose(go_out);
        waitpid(go_pid, NULL, 0);
        go_pid = -1;
        return 0;
    }
    return 1;
}

static double run_go(long n, int threads) {
    (void)n;
    char line[256];
    if (fprintf(go_in, "%d %s\n", threads, kinds) < 0 || fflush(go_in) != 0)
        die("writing to the Go program", errno);
    if (!fgets(line, sizeof line, go_out)) {
        fprintf(stderr, "blocking_mix: the Go program stopped answering\n");
        exit(1);
    }
    char *end;
    double t = strtod(line, &end);
    if (end == line) {
        fprintf(stderr, "blocking_mix: the Go program: %s", line);
        exit(1);
    }
    return t;
}

static void go_stop(void) {
    if (go_pid < 0)
        return;
    fclose(go_in);
    fclose(go_out);
    int st;
    if (waitpid(go_pid, &st, 0) == go_pid && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        fprintf(stderr, "blocking_mix: the Go program exited abnormally\n");
    go_pid = -1;
}

/* ---- the experiments ---- */

struct opts {
    int runs, threads, nthr, thr[MAX_LIST], npct, pct[MAX_LIST], scale_pct, have_go;
    long n, scale_n;
    FILE *csv;
};

static double run_impl(int impl, crew_pool *p, long n, int threads) {
    atomic_store(&io_failed, 0);
    double t;
    switch (impl) {
    case I_TPT:
        t = run_tpt(n);
        break;
    case I_CREW:
        t = run_crew(p, n, 1);
        break;
    case I_NOBLOCK:
        t = run_crew(p, n, 0);
        break;
    case I_PERCORE:
        t = run_percore(n, threads);
        break;
    default:
        t = run_go(n, threads);
        break;
    }
    int err = atomic_load(&io_failed);
    if (err)
        die(io_read ? "blocking task (O_DIRECT pread)" : "blocking task (pwrite + fdatasync)", err);
    return t;
}

static crew_pool *make_pool(int threads) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = (unsigned)threads;
    crew_pool *p;
    int rc = crew_create(&p, &cfg);
    if (rc != CREW_OK) {
        fprintf(stderr, "blocking_mix: crew_create: %s\n", crew_strerror(rc));
        exit(1);
    }
    return p;
}

/* One row: median (min..max) in ms, and the ratio of this median to crew's with the (min..max) of
 * the per-run ratios to crew (which always holds it). */
static void print_row(const char *label, int impl, double *t, double *crew_t, int runs) {
    double s[runs], c[runs], ratio[runs];
    for (int r = 0; r < runs; r++) {
        s[r] = t[r];
        c[r] = crew_t[r];
        ratio[r] = t[r] / crew_t[r];
    }
    qsort(s, (size_t)runs, sizeof *s, cmp_double);
    qsort(c, (size_t)runs, sizeof *c, cmp_double);
    qsort(ratio, (size_t)runs, sizeof *ratio, cmp_double);
    printf("%6s  %-16s %9.1f (%7.1f..%7.1f)", label, impl_name[impl], s[runs / 2] * 1e3,
           s[0] * 1e3, s[runs - 1] * 1e3);
    if (impl == I_CREW)
        printf("\n");
    else
        printf("   %5.2f (%.2f..%.2f)\n", s[runs / 2] / c[runs / 2], ratio[0], ratio[runs - 1]);
}

/* Runs impls[0..nimpl) round-robin `runs` times on the current kinds; t[impl][run]. */
static void measure(const struct opts *o, const char *experiment, int pct, crew_pool *p,
                    long n, int threads, const int *impls, int nimpl, double t[NIMPL][64]) {
    /* Warm-up, untimed, of what keeps state between runs: the new pool's workers and
     * blocking threads, the Go runtime after a GOMAXPROCS change. */
    for (int k = 0; k < nimpl; k++)
        if (impls[k] == I_CREW || impls[k] == I_GO)
            run_impl(impls[k], p, n, threads);
    for (int r = 0; r < o->runs; r++)
        for (int k = 0; k < nimpl; k++) {
            int impl = impls[(k + r) % nimpl];
            t[impl][r] = run_impl(impl, p, n, threads);
            if (o->csv)
                fprintf(o->csv, "%s,%s,%d,%d,%ld,%d,%.6f\n", experiment, impl_name[impl], pct,
                        impl == I_TPT ? 0 : threads, n, r, t[impl][r]);
        }
}

static void mix(const struct opts *o, const char *experiment, char other) {
    int impls[NIMPL] = {I_TPT, I_CREW, I_NOBLOCK, I_PERCORE, I_GO};
    int nimpl = o->have_go ? 5 : 4;
    static double t[MAX_LIST][NIMPL][64];
    crew_pool *p = make_pool(o->threads);
    printf("\n%s: blocking I/O + %s tasks, %ld tasks, T = %d threads, %d runs\n",
           other == K_COMPUTE ? "Fig. 1" : "Fig. 2", other == K_COMPUTE ? "compute" : "empty",
           o->n, o->threads, o->runs);
    printf("%6s  %-16s %27s   %s\n", "block%", "implementation", "ms median (min..max)",
           "x crew (other/crew)");
    /* Round-robin over the shares as well, so a noisy minute spreads over all of them. */
    for (int r = 0; r < o->runs; r++)
        for (int s = 0; s < o->npct; s++) {
            make_kinds(o->n, o->pct[s], other);
            if (r == 0 && s == 0) /* warm-up, untimed: threads, caches, the Go heap */
                for (int k = 0; k < nimpl; k++)
                    run_impl(impls[k], p, o->n, o->threads);
            for (int k = 0; k < nimpl; k++) {
                int impl = impls[(k + r + s) % nimpl];
                t[s][impl][r] = run_impl(impl, p, o->n, o->threads);
                if (o->csv)
                    fprintf(o->csv, "%s,%s,%d,%d,%ld,%d,%.6f\n", experiment, impl_name[impl],
                            o->pct[s], impl == I_TPT ? 0 : o->threads, o->n, r, t[s][impl][r]);
            }
        }
    for (int s = 0; s < o->npct; s++) {
        char label[16];
        snprintf(label, sizeof label, "%d", o->pct[s]);
        for (int k = 0; k < nimpl; k++)
            print_row(label, impls[k], t[s][impls[k]], t[s][I_CREW], o->runs);
    }
    fflush(stdout);
    if (crew_destroy(p) != CREW_OK)
        fprintf(stderr, "blocking_mix: crew_destroy failed\n");
}

static void scale(const struct opts *o) {
    int impls[NIMPL] = {I_CREW, I_NOBLOCK, I_PERCORE, I_GO};
    int nimpl = o->have_go ? 4 : 3;
    static double t[NIMPL][64];
    make_kinds(o->scale_n, o->scale_pct, K_COMPUTE);
    printf("\nFig. 3: scalability, %ld tasks (%d%% blocking I/O, the rest compute), %d runs\n",
           o->scale_n, o->scale_pct, o->runs);
    printf("%6s  %-16s %27s   %s\n", "T", "implementation", "ms median (min..max)",
           "x crew (other/crew)");
    for (int i = 0; i < o->nthr; i++) {
        crew_pool *p = make_pool(o->thr[i]);
        measure(o, "scale", o->scale_pct, p, o->scale_n, o->thr[i], impls, nimpl, t);
        if (crew_destroy(p) != CREW_OK)
            fprintf(stderr, "blocking_mix: crew_destroy failed\n");
        char label[16];
        snprintf(label, sizeof label, "%d", o->thr[i]);
        for (int k = 0; k < nimpl; k++)
            print_row(label, impls[k], t[impls[k]], t[I_CREW], o->runs);
        fflush(stdout);
    }
}

static int parse_list(char *arg, int *v, int lo, int hi) {
    int n = 0;
    for (char *s = strtok(arg, ","); s; s = strtok(NULL, ",")) {
        char *end;
        long x = strtol(s, &end, 10);
        if (*end || x < lo || x > hi || n == MAX_LIST)
            return -1;
        v[n++] = (int)x;
    }
    return n;
}

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [-q] [-p threads] [-t 1,2,4,8,16] [-n tasks] [-N scale_tasks]\n"
            "       [-s 25,50,75] [-S scale_pct] [-r runs] [-u compute_us] [-F files]\n"
            "       [-i read|sync] [-e compute,empty,scale] [-g go_program] [-c out.csv]\n"
            "  -q  quick: 3 runs, 500 tasks in Figs. 1-2 (default 4000), 1000 in Fig. 3 (10000)\n"
            "  -p  threads of crew, per-core and GOMAXPROCS in Figs. 1-2 (default: online cores)\n"
            "  -t  thread counts of Fig. 3 (default 1,2,4,.. up to max(16, 2 x cores))\n"
            "  -h, --help  this text\n",
            prog);
}

int main(int argc, char **argv) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    struct opts o = {.runs = 5, .threads = (int)cores, .scale_pct = 50, .n = 4000,
                     .scale_n = 10000, .npct = 3, .pct = {25, 50, 75}};
    int quick = 0, opt, do_compute = 1, do_empty = 1, do_scale = 1, runs = 0;
    long n = 0, scale_n = 0;
    double compute_us = 5;
    const char *csv = NULL, *go_prog = NULL;
    nfiles = 256;
    o.nthr = 0;
    for (int t = 1; o.nthr < MAX_LIST; t *= 2) {
        o.thr[o.nthr++] = t;
        if (t >= 16 && t >= 2 * cores)
            break;
    }
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "qp:t:n:N:s:S:r:u:F:i:e:g:c:h", longopts, NULL)) !=
           -1) {
        switch (opt) {
        case 'q':
            quick = 1;
            break;
        case 'p':
            o.threads = atoi(optarg);
            break;
        case 't':
            o.nthr = parse_list(optarg, o.thr, 1, (int)CREW_MAX_THREADS);
            break;
        case 'n':
            n = atol(optarg);
            break;
        case 'N':
            scale_n = atol(optarg);
            break;
        case 's':
            o.npct = parse_list(optarg, o.pct, 0, 100);
            break;
        case 'S':
            o.scale_pct = atoi(optarg);
            break;
        case 'r':
            runs = atoi(optarg);
            break;
        case 'u':
            compute_us = atof(optarg);
            break;
        case 'F':
            nfiles = atoi(optarg);
            break;
        case 'i':
            if (strcmp(optarg, "read") != 0 && strcmp(optarg, "sync") != 0) {
                usage(stderr, argv[0]);
                return 2;
            }
            io_read = strcmp(optarg, "read") == 0;
            break;
        case 'e':
            do_compute = strstr(optarg, "compute") != NULL;
            do_empty = strstr(optarg, "empty") != NULL;
            do_scale = strstr(optarg, "scale") != NULL;
            break;
        case 'g':
            go_prog = optarg;
            break;
        case 'c':
            csv = optarg;
            break;
        case 'h':
            usage(stdout, argv[0]);
            return 0;
        default:
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (quick)
        o.runs = 3, o.n = 500, o.scale_n = 1000;
    if (runs)
        o.runs = runs;
    if (n)
        o.n = n;
    if (scale_n)
        o.scale_n = scale_n;
    if (o.nthr < 1 || o.npct < 1 || o.threads < 1 || o.threads > (int)CREW_MAX_THREADS ||
        o.runs < 1 || o.runs > 64 || o.n < 1 || o.scale_n < 1 || o.scale_pct < 0 ||
        o.scale_pct > 100 || nfiles < 1 || nfiles > 4096 || compute_us < 0) {
        fprintf(stderr, "blocking_mix: bad option (runs 1..64, shares 0..100, files 1..4096)\n");
        usage(stderr, argv[0]);
        return 2;
    }
    /* A child that dies must not kill us through a write to its pipe. */
    signal(SIGPIPE, SIG_IGN);

    long maxn = o.n > o.scale_n ? o.n : o.scale_n;
    kinds = malloc((size_t)maxn + 1);
    io_buf = aligned_alloc(IO_BYTES, IO_BYTES);
    if (!kinds || !io_buf)
        die("malloc", ENOMEM);
    memset(io_buf, 0x5a, IO_BYTES);
    open_files();
    calibrate_compute(compute_us);
    double io_us = io_latency_us(quick ? 50 : 200);

    if (go_prog)
        o.have_go = go_start(go_prog);
    if (csv) {
        o.csv = fopen(csv, "w");
        if (!o.csv)
            die(csv, errno);
        fprintf(o.csv, "experiment,impl,blocking_pct,threads,tasks,run,seconds\n");
    }
    printf("blocking mixes (Li & Hu, Figs. 1-3): %ld online cores; blocking task = %s %d B "
           "(alone: %.0f us median), compute task = %.1f us (%ld loops), %d temp files\n",
           cores, io_read ? "O_DIRECT pread" : "pwrite + fdatasync of", IO_BYTES, io_us,
           compute_us, compute_loops, nfiles);
    if (tmpdir_in_memory())
        printf("warning: TMPDIR is a tmpfs, so the blocking tasks never wait for a device; "
               "point TMPDIR at a disk\n");
    if (!o.have_go)
        printf("goroutines: skipped (%s)\n",
               go_prog ? "the Go program did not start" : "no Go program given with -g");
    fflush(stdout);

    if (do_compute)
        mix(&o, "compute", K_COMPUTE);
    if (do_empty)
        mix(&o, "empty", K_EMPTY);
    if (do_scale)
        scale(&o);

    go_stop();
    int rc = 0;
    if (o.csv && fclose(o.csv) != 0) {
        perror(csv);
        rc = 1;
    }
    close_files();
    free(kinds);
    free(io_buf);
    return rc;
}
