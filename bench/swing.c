/*
 * swing.c -- why the rate of one producer handing a pool empty tasks swings between runs. Each
 * run (N empty tasks with crew_submit from this thread, then crew_wait_all, on one pool kept
 * across runs as bench_peers does) is instrumented from outside the library, per thread, from
 * Linux's own accounts:
 *   /proc/self/task/<tid>/schedstat  time on a CPU, and time runnable but waiting for one
 *   /proc/self/task/<tid>/status     voluntary switches (the thread slept: a futex wait) and
 *                                    involuntary ones (it was preempted)
 * for the producer and for every pool thread (named crew-<pool>-w<i>), plus crew_thread_stats'
 * steal count and the queue length (crew_stats.queued) sampled every -q submissions.
 *
 * One line per run, then the runs again sorted by rate, so that what the fast and the slow runs
 * differ in stands side by side (docs/benchmarks.md, "Why the rate swings", reads them).
 *
 * Usage: swing [-t threads] [-n tasks] [-r runs] [-q every] [-s spin]
 *   -s  crew_config.spin (default: crew's own default)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

static void empty(void *arg) { (void)arg; }

/* One thread's accounts. */
typedef struct tacct {
    double run_ms, wait_ms; /* on a CPU; runnable, waiting for one */
    long vol, invol;        /* context switches: slept; preempted */
} tacct;

static void read_acct(const char *task_dir, tacct *a) {
    char path[320], line[256];
    unsigned long long run = 0, wait = 0;
    snprintf(path, sizeof path, "%s/schedstat", task_dir);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%llu %llu", &run, &wait) != 2)
            run = wait = 0;
        fclose(f);
    }
    a->run_ms = (double)run / 1e6;
    a->wait_ms = (double)wait / 1e6;
    a->vol = a->invol = 0;
    snprintf(path, sizeof path, "%s/status", task_dir);
    if (!(f = fopen(path, "r")))
        return;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "voluntary_ctxt_switches: %ld", &a->vol);
        sscanf(line, "nonvoluntary_ctxt_switches: %ld", &a->invol);
    }
    fclose(f);
}

/* The sums over the pool's workers (threads whose name has "-w"), and the producer's. */
static void snapshot(tacct *producer, tacct *workers) {
    char dir[300];
    snprintf(dir, sizeof dir, "/proc/self/task/%ld", (long)syscall(SYS_gettid));
    read_acct(dir, producer);
    *workers = (tacct){0};
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[320], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f))
            comm[0] = 0;
        fclose(f);
        if (strncmp(comm, "crew-", 5) != 0 || !strstr(comm, "-w"))
            continue;
        tacct a;
        snprintf(dir, sizeof dir, "/proc/self/task/%s", e->d_name);
        read_acct(dir, &a);
        workers->run_ms += a.run_ms;
        workers->wait_ms += a.wait_ms;
        workers->vol += a.vol;
        workers->invol += a.invol;
    }
    closedir(d);
}

static unsigned long long stolen_total(crew_pool *p) {
    crew_thread_stats ts[64];
    size_t n = 0;
    unsigned long long s = 0;
    if (crew_stats_threads(p, ts, 64, &n) != CREW_OK)
        return 0;
    for (size_t i = 0; i < n && i < 64; i++)
        s += ts[i].stolen;
    return s;
}

typedef struct run_row {
    double rate, seconds;
    tacct prod, work;
    unsigned long long stolen;
    double qmean;
    unsigned long long qmax;
} run_row;

static void print_row(int i, const run_row *r) {
    printf("%4d %8.2f %9.1f %8.1f %6ld %6ld %9.1f %8.1f %8ld %7ld %8llu %8.0f %8llu\n", i,
           r->rate / 1e6, r->prod.run_ms, r->prod.wait_ms, r->prod.vol, r->prod.invol,
           r->work.run_ms, r->work.wait_ms, r->work.vol, r->work.invol, r->stolen, r->qmean,
           r->qmax);
}

static int by_rate(const void *a, const void *b) {
    double x = ((const run_row *)a)->rate, y = ((const run_row *)b)->rate;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    unsigned threads = 2;
    long n = 1000000, every = 16384, spin = -1;
    int runs = 9, opt;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:n:r:q:s:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't': threads = (unsigned)atoi(optarg); break;
        case 'n': n = atol(optarg); break;
        case 'r': runs = atoi(optarg); break;
        case 'q': every = atol(optarg); break;
        case 's': spin = atol(optarg); break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: %s [-t threads] [-n tasks] [-r runs] [-q sample_every] [-s spin]\n"
                    "  one producer submits n empty tasks per run; per run: the rate, and the\n"
                    "  producer's and the workers' CPU time, run-queue wait, sleeps and\n"
                    "  preemptions (Linux /proc accounts), steals and the queue length\n"
                    "  -h, --help  this text\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (n < 1 || runs < 1 || runs > 1000 || every < 1 || threads < 1) {
        fprintf(stderr, "swing: -n, -q and -t must be >= 1, -r 1..1000\n");
        return 2;
    }
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    if (spin >= 0)
        cfg.spin = (unsigned)spin;
    crew_pool *p;
    if (crew_create(&p, &cfg) != CREW_OK) {
        fprintf(stderr, "swing: crew_create: %s\n", crew_last_error());
        return 1;
    }
    run_row *rows = calloc((size_t)runs, sizeof *rows);
    if (!rows)
        return 1;
    char spin_text[16] = "auto"; /* CREW_SPIN_AUTO, the default */
    if (cfg.spin != CREW_SPIN_AUTO)
        snprintf(spin_text, sizeof spin_text, "%u", cfg.spin);
    printf("# %ld empty tasks per run, %u workers, one producer (crew_submit); spin %s\n", n,
           threads, spin_text);
    const char *head = "# run  Mtask/s  prod_cpu prod_rqw prod_v prod_i  work_cpu work_rqw "
                       "work_v  work_i   stolen    q_avg    q_max\n"
                       "#                  (ms)     (ms)  slept preempt   (ms)     (ms)  "
                       "slept preempt\n";
    fputs(head, stdout);
    for (int i = 0; i < runs; i++) {
        run_row *r = &rows[i];
        tacct p0, w0, p1, w1;
        crew_wait_all(p);
        unsigned long long s0 = stolen_total(p);
        snapshot(&p0, &w0);
        double qsum = 0;
        long qn = 0;
        double t0 = now_s();
        for (long k = 0; k < n; k++) {
            if (crew_submit(p, empty, NULL, 0, NULL) != CREW_OK) {
                fprintf(stderr, "swing: crew_submit: %s\n", crew_last_error());
                return 1;
            }
            if (k % every == every - 1) {
                crew_stats st;
                st.size = sizeof st;
                if (crew_stats_get(p, &st) == CREW_OK) {
                    qsum += (double)st.queued;
                    qn++;
                    if (st.queued > r->qmax)
                        r->qmax = st.queued;
                }
            }
        }
        crew_wait_all(p);
        r->seconds = now_s() - t0;
        snapshot(&p1, &w1);
        r->rate = (double)n / r->seconds;
        r->prod = (tacct){p1.run_ms - p0.run_ms, p1.wait_ms - p0.wait_ms, p1.vol - p0.vol,
                         p1.invol - p0.invol};
        r->work = (tacct){w1.run_ms - w0.run_ms, w1.wait_ms - w0.wait_ms, w1.vol - w0.vol,
                         w1.invol - w0.invol};
        r->stolen = stolen_total(p) - s0;
        r->qmean = qn ? qsum / (double)qn : 0;
        print_row(i, r);
        fflush(stdout);
    }
    qsort(rows, (size_t)runs, sizeof *rows, by_rate);
    printf("# the same runs, slowest first\n");
    for (int i = 0; i < runs; i++)
        print_row(i, &rows[i]);
    free(rows);
    crew_destroy(p);
    return 0;
}
