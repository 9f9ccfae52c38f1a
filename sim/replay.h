/*
 * replay.h -- replay a trace against a crew pool and account for every task.
 *
 * A producer thread parses the trace one line at a time and submits each task at its start
 * time (scaled by speed); the calling thread samples the pool every 100 ms. Read-ahead is one
 * record and the pool's queue is bounded (queue_capacity), so memory does not grow with the
 * trace length.
 */
#ifndef CREW_SIM_REPLAY_H
#define CREW_SIM_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include <crew.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A latency summary in nanoseconds (from log-bucket histograms: within 12.5%). */
typedef struct hist_sum {
    uint64_t count;
    double mean;
    uint64_t p50, p99, max;
} hist_sum;

enum { M_RESPONSE, M_IDLE, M_PROCESSING, M_TURNAROUND, M_COUNT };
extern const char *const replay_metric_names[M_COUNT];

/* One application ID's figures (or the overall row: the sums and the merged histograms). */
typedef struct app_row {
    uint32_t app_id;
    uint64_t submitted, completed, cancelled;
    hist_sum m[M_COUNT];
} app_row;

typedef struct replay_opts {
    const char *trace;      /* path, "-" for stdin */
    int strict;             /* start times must not go backwards */
    double speed;           /* arrival times are divided by this (default 1) */
    double exec_scale;      /* execution times are multiplied by this (default 1) */
    double free_workload;   /* 0..100: percent of each task's time spent waiting */
    unsigned threads;       /* pool size (autosize: starting size) */
    unsigned autosize;      /* enum crew_autosize */
    unsigned min_threads, max_threads;
    unsigned scheduler;     /* enum crew_scheduler */
    unsigned queue_capacity;/* bound on queued tasks (the producer waits for room) */
    double loops_per_us;    /* calibration */
    int dry_run;            /* parse and schedule, run nothing */
    int progress;           /* progress line on stderr: 0 off, 1 in place (\r), 2 one per line */
    FILE *timeseries;       /* if set: CSV, one row per 100 ms sample */
    unsigned sample_ms;     /* default 100 */
} replay_opts;

void replay_opts_init(replay_opts *o);

typedef struct replay_result {
    app_row *apps;          /* ascending app_id */
    size_t napps;
    app_row overall;
    uint64_t submitted, completed, cancelled;
    uint64_t records;       /* parsed (dry run: scheduled) */
    uint64_t backwards;     /* records started late because the trace went backwards */
    hist_sum lag;           /* submission late versus the scaled trace time */
    double wall_s;          /* first submission to last completion */
    double trace_s;         /* trace span after scaling */
    int interrupted;        /* replay_stop() was called */
    int monitoring;         /* crew's statistics were available */
    crew_stats crew;        /* crew's own view (response/idle/processing/turnaround) */
    char *crew_json;        /* crew_stats_write_json output (malloc'd) */
    unsigned threads_peak;
    char err[600];          /* set when replay_run returns non-zero */
} replay_result;

/* Run one replay. Returns 0, 1 for bad input (err names file:line:column), 3 for a failure of
 * the pool or the system. res must be freed with replay_result_free, whatever the return. */
int replay_run(const replay_opts *o, replay_result *res);
void replay_result_free(replay_result *res);
/* Ask a running replay to stop (async-signal-safe): submissions stop, tasks not yet started
 * are skipped and counted as cancelled, running ones finish. */
void replay_stop(void);
/* Clear a previous stop request (before the next replay). */
void replay_stop_reset(void);
int replay_stop_requested(void);

/* How a task of exec_us splits (Xu & Bode, Fig. 4): compute first, then wait. */
void replay_split(double exec_us, double free_workload, double *compute_us, double *wait_us);

/* Print the summary tables. */
void replay_print_summary(FILE *f, const replay_opts *o, const replay_result *r);
/* Write summary.csv and summary.json into dir. Returns 0 or -1 (errno). */
int replay_write_summary(const char *dir, const replay_opts *o, const replay_result *r);

#ifdef __cplusplus
}
#endif
#endif
