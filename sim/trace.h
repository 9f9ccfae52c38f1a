/*
 * trace.h -- streaming reader of crew-sim trace files (docs/crew-sim.md, TRACE FORMAT).
 *
 * A trace is CSV: a header line "request_id,app_id,start_us,exec_us", then one task per line.
 * Lines starting with '#' are comments, blank lines are ignored, times are microseconds. The
 * reader holds one line at a time, so a trace of any length is read in bounded memory.
 */
#ifndef CREW_SIM_TRACE_H
#define CREW_SIM_TRACE_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRACE_HEADER "request_id,app_id,start_us,exec_us"
#define TRACE_MAX_LINE 4096   /* longer lines are an error, not a reason to grow without bound */
#define TRACE_MAX_APP 65535u  /* app_id range: 0..TRACE_MAX_APP */
#define TRACE_MAX_US 1000000000000000ull /* 10^15 us (~31 years): keeps sums far from overflow */

typedef struct trace_rec {
    uint64_t request_id;
    uint32_t app_id;
    uint64_t start_us;
    uint64_t exec_us;
    unsigned long line; /* where it came from, for later messages */
} trace_rec;

typedef struct trace_reader {
    FILE *f;
    const char *name;  /* for messages */
    int own;           /* close f on trace_close */
    int strict;        /* start times going backwards is an error */
    int seen_header;
    unsigned long line;
    uint64_t last_start;
    uint64_t backwards; /* records whose start is before the previous one (not strict) */
    char *buf;
    size_t cap;
    char err[512];      /* "FILE:LINE:COL: message" after trace_next returned -1 */
} trace_reader;

/* Open path ("-" = stdin). Returns 0, or -1 with r->err set. */
int trace_open(trace_reader *r, const char *path, int strict);
/* Read from an open stream (not closed by trace_close). */
void trace_init_stream(trace_reader *r, FILE *f, const char *name, int strict);
/* Next record: 1 read, 0 end of file, -1 error (r->err says where and what). */
int trace_next(trace_reader *r, trace_rec *out);
void trace_close(trace_reader *r);

#ifdef __cplusplus
}
#endif
#endif
