/* main.c -- crew-sim: replay request traces against crew pools (Xu & Bode, §4.1). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crew.h>

#include "calib.h"
#include "gen.h"
#include "replay.h"

#define EXIT_BAD_INPUT 1
#define EXIT_USAGE 2
#define EXIT_FAILURE_RUN 3
#define EXIT_INTERRUPTED 130

static const char usage_text[] =
"usage: crew-sim replay TRACE [options]     replay a trace against one pool configuration\n"
"       crew-sim sweep TRACE --threads LIST [options]   one replay per static pool size\n"
"       crew-sim gen --rate R --duration D [options]   write a synthetic trace\n"
"       crew-sim --help | --version\n"
"\n"
"Replay and sweep options:\n"
"  --threads N           static pool size, 1..4096 (default: online cores); with --autosize,\n"
"                        the starting size. sweep: a LIST such as 1..55, 1..55:2, 1,2,4,8\n"
"  --autosize ait|balance  automatic sizing (crew_config.autosize), within --min/--max\n"
"  --min N, --max N      autosize bounds, 1..4096 (default 1 and 4 x cores)\n"
"  --scheduler S         steal (default), shared, lockfree, per-worker\n"
"  --free-workload F     0..100 (default 0): percent of each task's execution time E that\n"
"                        is waiting (Xu & Bode, Fig. 4). The task computes (calibrated loop)\n"
"                        for E*(100-F)/100 us, then sleeps (nanosleep) for E*F/100 us.\n"
"  --speed X             divide arrival times by X, 0.001..1e9 (default 1: real time)\n"
"  --exec-scale X        multiply execution times by X, 0..1000 (default 1)\n"
"  --queue N             bounded queue, 1..100000000 tasks (default 65536); the producer\n"
"                        waits for room, which shows as response time\n"
"  --strict              start times going backwards is an error (else: submitted at once)\n"
"  --dry-run             parse and schedule, run nothing (checks a trace, measures parsing)\n"
"  --out DIR             write timeseries.csv (every 100 ms), summary.csv, summary.json,\n"
"                        PNG plots (gnuplot, if installed); sweep: sweep.csv, sweep.png\n"
"  --progress            progress line on stderr even when it is not a terminal\n"
"  --no-progress         never a progress line\n"
"  --recalibrate         measure the compute loop again and update the cache\n"
"  --calibration L       use L loops per microsecond, skip the cache (0.001..1e6)\n"
"\n"
"Generator options:\n"
"  --arrivals poisson|bursty|diurnal  arrival process (default poisson)\n"
"  --rate R              mean arrivals per second, 0.001..1e7\n"
"  --duration D          trace length: 10, 10s, 500ms, 2m, 1h (up to 30 days)\n"
"  --period P            diurnal: length of one cycle (default: the duration)\n"
"  --exec DIST           execution times in us: const:M, exp:M, lognormal:M,SIGMA (mean M),\n"
"                        uniform:A,B (default exp:500)\n"
"  --apps K              application IDs 0..K-1, uniformly, 1..65536 (default 1)\n"
"  --seed S              0..2^64-1 (default 1): same options and seed, same bytes\n"
"  -o, --output FILE     write there instead of standard output\n"
"\n"
"Trace format: CSV with the header request_id,app_id,start_us,exec_us; times in microseconds;\n"
"'#' starts a comment line; blank lines are ignored. See docs/crew-sim.md.\n"
"Exit status: 0 done, 1 bad input (trace, file), 2 bad usage, 3 pool or system failure,\n"
"130 interrupted (Ctrl-C; what was measured is still printed and written).\n"
"Calibration cache: $XDG_CACHE_HOME/crew-sim/calibration or ~/.cache/crew-sim/calibration.\n";

static const char *prog = "crew-sim";

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* Then the synopsis (usage_text up to its first blank line); --help gives the options. */
    fprintf(stderr, "\n%.*s(try '%s --help' for the options)\n",
            (int)(strstr(usage_text, "\n\n") + 1 - usage_text), usage_text, prog);
    exit(EXIT_USAGE);
}

static unsigned long long parse_u(const char *opt, const char *s, unsigned long long lo,
                                  unsigned long long hi)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '-' || *s == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
        usage_error("%s: expected an integer in %llu..%llu, got \"%s\"", opt, lo, hi, s);
    return v;
}

static double parse_d(const char *opt, const char *s, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno != 0 || !(v >= lo && v <= hi))
        usage_error("%s: expected a number in %g..%g, got \"%s\"", opt, lo, hi, s);
    return v;
}

static double parse_duration(const char *opt, const char *s)
{
    char *end;
    double v = strtod(s, &end);
    double mul = 1;
    if (end == s)
        v = -1;
    else if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
        mul = 1;
    else if (strcmp(end, "ms") == 0)
        mul = 1e-3;
    else if (strcmp(end, "us") == 0)
        mul = 1e-6;
    else if (strcmp(end, "m") == 0)
        mul = 60;
    else if (strcmp(end, "h") == 0)
        mul = 3600;
    else
        v = -1;
    v *= mul;
    if (!(v > 0 && v <= 30 * 86400.0))
        usage_error("%s: expected a duration in (0, 30 days] such as 10, 10s, 500ms, 2m, 1h, "
                    "got \"%s\"", opt, s);
    return v;
}

/* "1..55", "1..55:2", "1,2,4,8" and mixtures. Returns the count; sizes malloc'd. */
static size_t parse_sizes(const char *s, unsigned **out)
{
    size_t cap = 16, n = 0;
    unsigned *v = malloc(cap * sizeof *v);
    char *copy = strdup(s);
    if (!v || !copy) {
        fprintf(stderr, "%s: out of memory\n", prog);
        exit(EXIT_FAILURE_RUN);
    }
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        unsigned a, b, step = 1;
        char *dots = strstr(tok, "..");
        if (dots) {
            *dots = '\0';
            char *colon = strchr(dots + 2, ':');
            if (colon) {
                *colon = '\0';
                step = (unsigned)parse_u("--threads (step)", colon + 1, 1, CREW_MAX_THREADS);
            }
            a = (unsigned)parse_u("--threads", tok, 1, CREW_MAX_THREADS);
            b = (unsigned)parse_u("--threads", dots + 2, 1, CREW_MAX_THREADS);
            if (b < a)
                usage_error("--threads %s: a range A..B needs A <= B", s);
        } else {
            a = b = (unsigned)parse_u("--threads", tok, 1, CREW_MAX_THREADS);
        }
        for (unsigned x = a; x <= b; x += step) {
            if (n == 4096)
                usage_error("--threads %s: at most 4096 sizes", s);
            if (n == cap) {
                unsigned *nv = realloc(v, (cap *= 2) * sizeof *v);
                if (!nv) {
                    fprintf(stderr, "%s: out of memory\n", prog);
                    exit(EXIT_FAILURE_RUN);
                }
                v = nv;
            }
            v[n++] = x;
        }
    }
    free(copy);
    if (n == 0)
        usage_error("--threads: expected a list such as 1..55, 1..55:2 or 1,2,4,8, got \"%s\"", s);
    *out = v;
    return n;
}

static void on_sigint(int sig)
{
    (void)sig;
    replay_stop();
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the process at once */
}

static int gnuplot_available(void)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char *copy = strdup(path), *save = NULL;
    int found = 0;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found;
         d = strtok_r(NULL, ":", &save)) {
        char p[4096];
        snprintf(p, sizeof p, "%s/gnuplot", d);
        found = access(p, X_OK) == 0;
    }
    free(copy);
    return found;
}

/* Write DIR/name.gp and run gnuplot on it; print what happened. */
static void plot(const char *dir, const char *name, const char *script)
{
    char path[4096], cmd[8400];
    snprintf(path, sizeof path, "%s/%s.gp", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(script, f) < 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        if (f)
            fclose(f);
        return;
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return;
    }
    if (!gnuplot_available()) {
        fprintf(stderr, "%s: gnuplot not found: no PNG plots; run 'gnuplot %s' later\n", prog,
                path);
        return;
    }
    /* The directory goes through the shell quoted: cd into it rather than splice paths. */
    snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot '%s.gp' 2>&1", dir, name);
    if (strchr(dir, '\'')) {
        fprintf(stderr, "%s: not running gnuplot on a path with a quote: run 'gnuplot %s'\n",
                prog, path);
        return;
    }
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "%s: gnuplot failed on %s (status %d)\n", prog, path, rc);
}

static const char replay_plot[] =
    "set datafile separator ','\nset terminal pngcairo noenhanced size 900,450\n"
    "set xlabel 'time (s)'\nset grid\n"
    "set output 'throughput.png'\nset ylabel 'completed per second'\n"
    "plot 'timeseries.csv' using 1:5 with lines title 'throughput'\n"
    "set output 'latency.png'\nset ylabel 'mean turnaround (us)'\n"
    "plot 'timeseries.csv' using 1:6 with lines title 'turnaround'\n"
    "set output 'pool_size.png'\nset ylabel 'threads, running tasks'\n"
    "set y2label 'queued tasks'\nset y2tics\nset ytics nomirror\n"
    "plot 'timeseries.csv' using 1:7 with steps lw 2 title 'pool size (crew_size)', "
    "'' using 1:10 with lines title 'running', '' using 1:9 axes x1y2 with lines "
    "title 'queued (right axis)'\n";

/* Thread counts are whole numbers: ticks every 1, 2, 4, ... threads, at most about 16 of them,
 * half a step of margin at each end; the legend goes below the plot, never over a curve. */
static const char sweep_plot[] =
    "set datafile separator ','\nset terminal pngcairo noenhanced size 900,450\nset grid\n"
    "stats 'sweep.csv' using 1 nooutput\n"
    "step = 1\nwhile ((STATS_max - STATS_min) / step > 16) { step = step * 2 }\n"
    "set xtics step\nset mxtics 1\nset format x '%.0f'\n"
    "set xrange [STATS_min - 0.5 : STATS_max + 0.5]\nset key below horizontal\n"
    "set xlabel 'threads'\nset output 'sweep.png'\nset ylabel 'completed per second'\n"
    "set y2label 'mean turnaround (ms)'\nset y2tics\nset ytics nomirror\n"
    "plot 'sweep.csv' using 1:4 with linespoints title 'throughput', "
    "'' using 1:5 axes x1y2 with linespoints title 'mean turnaround'\n";

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: --out %s: %s\n", prog, dir, strerror(errno));
        return -1;
    }
    return 0;
}

enum {
    O_THREADS = 256, O_AUTOSIZE, O_MIN, O_MAX, O_SCHED, O_FREE, O_SPEED, O_EXEC_SCALE, O_QUEUE,
    O_STRICT, O_DRY, O_OUT, O_PROGRESS, O_NO_PROGRESS, O_RECAL, O_CALIB, O_ARRIVALS, O_RATE,
    O_DURATION, O_PERIOD, O_EXEC, O_APPS, O_SEED, O_HELP, O_VERSION
};

static const struct option long_opts[] = {
    {"threads", required_argument, 0, O_THREADS}, {"autosize", required_argument, 0, O_AUTOSIZE},
    {"min", required_argument, 0, O_MIN}, {"max", required_argument, 0, O_MAX},
    {"scheduler", required_argument, 0, O_SCHED}, {"free-workload", required_argument, 0, O_FREE},
    {"speed", required_argument, 0, O_SPEED}, {"exec-scale", required_argument, 0, O_EXEC_SCALE},
    {"queue", required_argument, 0, O_QUEUE}, {"strict", no_argument, 0, O_STRICT},
    {"dry-run", no_argument, 0, O_DRY}, {"out", required_argument, 0, O_OUT},
    {"progress", no_argument, 0, O_PROGRESS}, {"no-progress", no_argument, 0, O_NO_PROGRESS},
    {"recalibrate", no_argument, 0, O_RECAL}, {"calibration", required_argument, 0, O_CALIB},
    {"arrivals", required_argument, 0, O_ARRIVALS}, {"rate", required_argument, 0, O_RATE},
    {"duration", required_argument, 0, O_DURATION}, {"period", required_argument, 0, O_PERIOD},
    {"exec", required_argument, 0, O_EXEC}, {"apps", required_argument, 0, O_APPS},
    {"seed", required_argument, 0, O_SEED}, {"output", required_argument, 0, 'o'},
    {"help", no_argument, 0, O_HELP}, {"version", no_argument, 0, O_VERSION}, {0, 0, 0, 0}};

typedef struct cli {
    replay_opts ro;
    const char *threads_arg, *out_dir, *output;
    int progress; /* -1 auto */
    int recalibrate;
    int have_min, have_max;
    gen_opts go;
    const char *arrivals_s, *rate_s, *duration_s, *period_s, *exec_s, *apps_s, *seed_s;
} cli;

static int cmd_gen(cli *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    gen_opts *g = &c->go;
    if (!c->rate_s || !c->duration_s)
        usage_error("gen: --rate and --duration are required");
    g->rate = parse_d("--rate", c->rate_s, 0.001, 1e7);
    g->duration_s = parse_duration("--duration", c->duration_s);
    g->period_s = c->period_s ? parse_duration("--period", c->period_s) : 0;
    const char *arr = c->arrivals_s ? c->arrivals_s : "poisson";
    if (strcmp(arr, "poisson") == 0)
        g->arrivals = GEN_POISSON;
    else if (strcmp(arr, "bursty") == 0)
        g->arrivals = GEN_BURSTY;
    else if (strcmp(arr, "diurnal") == 0)
        g->arrivals = GEN_DIURNAL;
    else
        usage_error("--arrivals: expected poisson, bursty or diurnal, got \"%s\"", arr);
    const char *ex = c->exec_s ? c->exec_s : "exp:500";
    char err[256];
    if (gen_dist_parse(ex, &g->exec, err, sizeof err) != 0)
        usage_error("%s", err);
    g->apps = c->apps_s ? (unsigned)parse_u("--apps", c->apps_s, 1, 65536) : 1;
    g->seed = c->seed_s ? parse_u("--seed", c->seed_s, 0, ULLONG_MAX) : 1;
    if (g->rate * g->duration_s > 1e9)
        usage_error("gen: --rate x --duration would make more than 10^9 tasks");
    /* The header comment is the canonical command: it regenerates these exact bytes. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "generated by: crew-sim gen --arrivals %s --rate %s --duration "
             "%s%s%s --exec %s --apps %u --seed %llu", arr, c->rate_s, c->duration_s,
             c->period_s ? " --period " : "", c->period_s ? c->period_s : "", ex, g->apps,
             (unsigned long long)g->seed);
    g->command = cmd;
    FILE *f = stdout;
    if (c->output && strcmp(c->output, "-") != 0) {
        f = fopen(c->output, "w");
        if (!f) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog, c->output, strerror(errno));
            return EXIT_BAD_INPUT;
        }
    }
    long long n = gen_write(g, f);
    int bad = n < 0;
    if (f != stdout)
        bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "%s: writing %s failed: %s\n", prog, c->output ? c->output : "stdout",
                strerror(errno));
        return EXIT_FAILURE_RUN;
    }
    if (f != stdout)
        fprintf(stderr, "%s: wrote %lld tasks to %s\n", prog, n, c->output);
    return 0;
}

/* Fill the replay options shared by replay and sweep; validates the combination. */
static void finish_replay_opts(cli *c, int sweep)
{
    replay_opts *o = &c->ro;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    if (!sweep)
        o->threads = c->threads_arg ? (unsigned)parse_u("--threads", c->threads_arg, 1,
                                                        CREW_MAX_THREADS)
                                    : (unsigned)cores;
    if (o->autosize) {
        if (sweep)
            usage_error("sweep: --autosize does not apply (a sweep runs static sizes)");
        if (!c->have_max)
            o->max_threads = (unsigned)(4 * cores) > CREW_MAX_THREADS ? CREW_MAX_THREADS
                                                                      : (unsigned)(4 * cores);
        if (o->min_threads > o->max_threads)
            usage_error("--min %u is above --max %u", o->min_threads, o->max_threads);
    } else if (c->have_min || c->have_max) {
        usage_error("--min and --max apply only with --autosize ait|balance");
    }
    if (c->progress < 0)
        o->progress = isatty(STDERR_FILENO) ? 1 : 0;
    else
        o->progress = c->progress ? (isatty(STDERR_FILENO) ? 1 : 2) : 0;
    if (!o->dry_run && o->loops_per_us == 0) {
        char note[5000];
        o->loops_per_us = calib_get(c->recalibrate, note, sizeof note);
        if (note[0])
            fprintf(stderr, "%s\n", note);
    }
}

static int run_one(cli *c, replay_result *res)
{
    int rc = replay_run(&c->ro, res);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", prog, res->err);
        if (rc == 1)
            fprintf(stderr, "%s: replay stopped at the first error; nothing after it ran\n", prog);
    }
    return rc;
}

static int cmd_replay(cli *c, const char *trace)
{
    replay_opts *o = &c->ro;
    o->trace = trace;
    finish_replay_opts(c, 0);
    FILE *ts = NULL;
    if (c->out_dir) {
        if (make_dir(c->out_dir) != 0)
            return EXIT_BAD_INPUT;
        char p[4096];
        snprintf(p, sizeof p, "%s/timeseries.csv", c->out_dir);
        ts = fopen(p, "w");
        if (!ts) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog, p, strerror(errno));
            return EXIT_BAD_INPUT;
        }
        o->timeseries = ts;
    }
    replay_result res;
    int rc = run_one(c, &res);
    if (ts && fclose(ts) != 0) {
        fprintf(stderr, "%s: writing timeseries.csv failed: %s\n", prog, strerror(errno));
        rc = rc ? rc : EXIT_FAILURE_RUN;
    }
    if (rc == 0 || rc == EXIT_FAILURE_RUN || res.interrupted) {
        if (o->dry_run)
            printf("crew-sim replay %s --dry-run: %llu records parsed and scheduled over %.3f s "
                   "of (scaled) trace time in %.3f s\n", trace, (unsigned long long)res.records,
                   res.trace_s, res.wall_s);
        else
            replay_print_summary(stdout, o, &res);
        if (c->out_dir && !o->dry_run) {
            if (replay_write_summary(c->out_dir, o, &res) != 0) {
                fprintf(stderr, "%s: writing %s/summary.*: %s\n", prog, c->out_dir,
                        strerror(errno));
                rc = rc ? rc : EXIT_FAILURE_RUN;
            }
            plot(c->out_dir, "plots", replay_plot);
            fprintf(stderr, "%s: wrote %s/{timeseries.csv,summary.csv,summary.json,*.png}\n",
                    prog, c->out_dir);
        }
    }
    int interrupted = res.interrupted;
    replay_result_free(&res);
    if (rc == 0 && interrupted)
        return EXIT_INTERRUPTED;
    return rc;
}

static int cmd_sweep(cli *c, const char *trace)
{
    replay_opts *o = &c->ro;
    o->trace = trace;
    if (!c->threads_arg)
        usage_error("sweep: --threads LIST is required (e.g. 1..55, 1..16:2, 1,2,4,8)");
    if (o->dry_run)
        usage_error("sweep: --dry-run does not apply");
    unsigned *sizes;
    size_t n = parse_sizes(c->threads_arg, &sizes);
    finish_replay_opts(c, 1);
    FILE *csv = NULL;
    if (c->out_dir) {
        char p[4096];
        snprintf(p, sizeof p, "%s/sweep.csv", c->out_dir);
        if (make_dir(c->out_dir) != 0 || !(csv = fopen(p, "w"))) {
            if (!csv)
                fprintf(stderr, "%s: cannot write %s: %s\n", prog, p, strerror(errno));
            free(sizes);
            return EXIT_BAD_INPUT;
        }
        fprintf(csv, "threads,completed,wall_s,throughput_per_s,turnaround_mean_ms,"
                "turnaround_p99_ms,idle_mean_ms,lag_p99_ms\n");
    }
    printf("crew-sim sweep %s: scheduler %s, free-workload %g%%, speed %g\n", trace,
           o->scheduler == CREW_SCHED_SHARED ? "shared" : o->scheduler == CREW_SCHED_SHARED_LOCKFREE
           ? "lockfree" : o->scheduler == CREW_SCHED_PER_WORKER ? "per-worker" : "steal",
           o->free_workload, o->speed);
    printf("%7s %9s %8s %11s %12s %12s %10s %10s\n", "threads", "completed", "wall_s",
           "throughput", "turn_mean_ms", "turn_p99_ms", "idle_ms", "lag_p99_ms");
    fflush(stdout);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0 && !replay_stop_requested(); i++) {
        o->threads = sizes[i];
        replay_result res;
        rc = run_one(c, &res);
        if (rc == 0) {
            const app_row *a = &res.overall;
            double tp = res.wall_s > 0 ? (double)a->completed / res.wall_s : 0;
            printf("%7u %9llu %8.3f %11.1f %12.3f %12.3f %10.3f %10.3f%s\n", sizes[i],
                   (unsigned long long)a->completed, res.wall_s, tp,
                   a->m[M_TURNAROUND].mean / 1e6, (double)a->m[M_TURNAROUND].p99 / 1e6,
                   a->m[M_IDLE].mean / 1e6, (double)res.lag.p99 / 1e6,
                   res.interrupted ? "  (interrupted)" : "");
            fflush(stdout);
            if (csv)
                fprintf(csv, "%u,%llu,%.6f,%.3f,%.6f,%.6f,%.6f,%.6f\n", sizes[i],
                        (unsigned long long)a->completed, res.wall_s, tp,
                        a->m[M_TURNAROUND].mean / 1e6, (double)a->m[M_TURNAROUND].p99 / 1e6,
                        a->m[M_IDLE].mean / 1e6, (double)res.lag.p99 / 1e6);
        }
        replay_result_free(&res);
    }
    free(sizes);
    if (csv) {
        if (fclose(csv) != 0) {
            fprintf(stderr, "%s: writing sweep.csv failed: %s\n", prog, strerror(errno));
            rc = rc ? rc : EXIT_FAILURE_RUN;
        }
        plot(c->out_dir, "sweep", sweep_plot);
    }
    if (rc == 0 && replay_stop_requested())
        return EXIT_INTERRUPTED;
    return rc;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    replay_opts_init(&c.ro);
    c.progress = -1;
    if (argc < 2)
        usage_error("missing command: replay, sweep or gen");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("crew-sim (crew 0.1.0)\n");
        return 0;
    }
    const char *cmd = argv[1];
    int is_gen = strcmp(cmd, "gen") == 0, is_replay = strcmp(cmd, "replay") == 0,
        is_sweep = strcmp(cmd, "sweep") == 0;
    if (!is_gen && !is_replay && !is_sweep)
        usage_error("unknown command \"%s\": expected replay, sweep or gen", cmd);
    opterr = 0; /* our own messages, with the accepted values */
    int ch;
    argv++;
    argc--;
    while ((ch = getopt_long(argc, argv, "o:h", long_opts, NULL)) != -1) {
        replay_opts *o = &c.ro;
        int gen_opt = ch >= O_ARRIVALS && ch <= O_SEED;
        if (ch == 'o')
            gen_opt = 1;
        if (gen_opt && !is_gen)
            usage_error("%s: option %s applies to 'gen' only", cmd, argv[optind - 1]);
        if (!gen_opt && is_gen && ch != O_HELP && ch != 'h' && ch != '?' && ch != ':')
            usage_error("gen: option %s applies to replay and sweep only", argv[optind - 1]);
        switch (ch) {
        case O_THREADS: c.threads_arg = optarg; break;
        case O_AUTOSIZE:
            if (strcmp(optarg, "ait") == 0)
                o->autosize = CREW_AUTOSIZE_AIT;
            else if (strcmp(optarg, "balance") == 0)
                o->autosize = CREW_AUTOSIZE_BALANCE;
            else if (strcmp(optarg, "off") == 0)
                o->autosize = CREW_AUTOSIZE_OFF;
            else
                usage_error("--autosize: expected ait, balance or off, got \"%s\"", optarg);
            break;
        case O_MIN:
            o->min_threads = (unsigned)parse_u("--min", optarg, 1, CREW_MAX_THREADS);
            c.have_min = 1;
            break;
        case O_MAX:
            o->max_threads = (unsigned)parse_u("--max", optarg, 1, CREW_MAX_THREADS);
            c.have_max = 1;
            break;
        case O_SCHED:
            if (strcmp(optarg, "steal") == 0)
                o->scheduler = CREW_SCHED_STEAL;
            else if (strcmp(optarg, "shared") == 0)
                o->scheduler = CREW_SCHED_SHARED;
            else if (strcmp(optarg, "lockfree") == 0)
                o->scheduler = CREW_SCHED_SHARED_LOCKFREE;
            else if (strcmp(optarg, "per-worker") == 0)
                o->scheduler = CREW_SCHED_PER_WORKER;
            else
                usage_error("--scheduler: expected steal, shared, lockfree or per-worker, got "
                            "\"%s\"", optarg);
            break;
        case O_FREE: o->free_workload = parse_d("--free-workload", optarg, 0, 100); break;
        case O_SPEED: o->speed = parse_d("--speed", optarg, 0.001, 1e9); break;
        case O_EXEC_SCALE: o->exec_scale = parse_d("--exec-scale", optarg, 0, 1000); break;
        case O_QUEUE:
            o->queue_capacity = (unsigned)parse_u("--queue", optarg, 1, 100000000);
            break;
        case O_STRICT: o->strict = 1; break;
        case O_DRY: o->dry_run = 1; break;
        case O_OUT: c.out_dir = optarg; break;
        case O_PROGRESS: c.progress = 1; break;
        case O_NO_PROGRESS: c.progress = 0; break;
        case O_RECAL: c.recalibrate = 1; break;
        case O_CALIB: o->loops_per_us = parse_d("--calibration", optarg, 0.001, 1e6); break;
        case O_ARRIVALS: c.arrivals_s = optarg; break;
        case O_RATE: c.rate_s = optarg; break;
        case O_DURATION: c.duration_s = optarg; break;
        case O_PERIOD: c.period_s = optarg; break;
        case O_EXEC: c.exec_s = optarg; break;
        case O_APPS: c.apps_s = optarg; break;
        case O_SEED: c.seed_s = optarg; break;
        case 'o': c.output = optarg; break;
        case 'h':
        case O_HELP: fputs(usage_text, stdout); return 0;
        case O_VERSION: printf("crew-sim (crew 0.1.0)\n"); return 0;
        default:
            if (optopt)
                usage_error("%s: option %s needs a value", cmd, argv[optind - 1]);
            usage_error("%s: unknown option %s", cmd, argv[optind - 1]);
        }
    }
    if (is_gen) {
        if (optind != argc)
            usage_error("gen: unexpected argument \"%s\"", argv[optind]);
        return cmd_gen(&c, argc, argv);
    }
    if (optind != argc - 1)
        usage_error("%s: expected exactly one TRACE file (or - for standard input)", cmd);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    return is_sweep ? cmd_sweep(&c, argv[optind]) : cmd_replay(&c, argv[optind]);
}
