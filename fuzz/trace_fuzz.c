/*
 * trace_fuzz.c -- a libFuzzer target for crew-sim's trace parser (sim/trace.c).
 *
 * The input is the bytes of a trace file, read through trace_init_stream on an fmemopen stream,
 * once leniently and once with --strict. Beside the parser runs a model written from the format
 * as docs/crew-sim.md (TRACE FORMAT) and sim/trace.h state it, kept deliberately simple: split
 * at '\n', trim spaces, tabs and CRs, skip blank and '#' lines, require the header, then four
 * decimal fields of at most 20 digits each, in range. What must hold:
 *   - trace_next returns 1, 0 or -1 only;
 *   - each record equals the model's: request_id, app_id (<= TRACE_MAX_APP), start_us and
 *     exec_us (<= TRACE_MAX_US) and the line it came from (lines strictly increasing);
 *     --strict: start times never decrease; lenient: trace_reader.backwards counts the records
 *     that start before an earlier one;
 *   - the parse succeeds exactly when the model's does, with the same number of records;
 *   - a failure names the right place and kind: r.err is "t.csv:LINE:COL: message" with the
 *     model's LINE, a COL within the line, and the message of the model's kind of error (header,
 *     field count, the first bad field by name, backwards time, too long a line);
 *   - a line longer than TRACE_MAX_LINE, or one holding a NUL byte, is an error, never a silent
 *     skip or truncation (a NUL in the first TRACE_MAX_LINE + 1 characters is named first);
 *   - no leak (LeakSanitizer after trace_close), no out-of-bounds access (ASan), no undefined
 *     behaviour (UBSan).
 * A violation prints both sides and aborts, so libFuzzer saves the input. Built by fuzz/run.sh.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fmemopen */
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

#define NAME "t.csv"

#define FAIL(...)                                                                                \
    do {                                                                                         \
        fprintf(stderr, "trace_fuzz: strict=%d: ", g_strict);                                    \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fputc('\n', stderr);                                                                     \
        abort();                                                                                 \
    } while (0)

static int g_strict;

/* ---- the model -------------------------------------------------------------------------- */

enum kind { K_NONE, K_EOF_HEADER, K_LONG, K_NUL, K_HEADER, K_NFIELDS, K_FIELD, K_BACKWARDS };

typedef struct model {
    const char *p, *end;
    unsigned long line;
    int strict, seen_header;
    uint64_t max_start;   /* largest start so far */
    uint64_t backwards;
    enum kind kind;       /* after -1 */
    int field;            /* K_FIELD: which one */
    size_t len;           /* the failing line's length without '\n' */
    size_t col;           /* the column the message must name, or 0: any within the line */
} model;

static int sp(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* One field s[0..n) untrimmed: 0 and *v, or -1. At most 20 digits, nothing else, <= max. */
static int model_field(const char *s, size_t n, uint64_t max, uint64_t *v)
{
    while (n > 0 && sp(*s))
        s++, n--;
    while (n > 0 && sp(s[n - 1]))
        n--;
    if (n == 0 || n > 20)
        return -1;
    char tmp[24];
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        tmp[i] = s[i];
    }
    tmp[n] = '\0';
    errno = 0;
    unsigned long long x = strtoull(tmp, NULL, 10);
    if (errno == ERANGE || x > max)
        return -1;
    *v = x;
    return 0;
}

/* Like trace_next: 1 and *out, 0 at the end, -1 with m->kind. */
static int model_next(model *m, trace_rec *out)
{
    static const uint64_t max[4] = {UINT64_MAX, TRACE_MAX_APP, TRACE_MAX_US, TRACE_MAX_US};
    while (m->p < m->end) {
        const char *nl = memchr(m->p, '\n', (size_t)(m->end - m->p));
        const char *s = m->p, *e = nl ? nl : m->end;
        m->p = nl ? nl + 1 : m->end;
        m->line++;
        m->len = (size_t)(e - s);
        /* A NUL among the characters the reader holds (at most TRACE_MAX_LINE + 1) is named
         * first; then the length. */
        const char *nul = memchr(s, '\0', m->len > TRACE_MAX_LINE ? TRACE_MAX_LINE + 1 : m->len);
        if (nul)
            return m->kind = K_NUL, m->col = (size_t)(nul - s) + 1, -1;
        if (m->len > TRACE_MAX_LINE)
            return m->kind = K_LONG, m->col = TRACE_MAX_LINE + 1, -1;
        while (s < e && sp(*s))
            s++;
        while (e > s && sp(e[-1]))
            e--;
        if (s == e || *s == '#')
            continue;
        if (!m->seen_header) {
            if ((size_t)(e - s) != strlen(TRACE_HEADER) || memcmp(s, TRACE_HEADER, (size_t)(e - s)))
                return m->kind = K_HEADER, -1;
            m->seen_header = 1;
            continue;
        }
        const char *f[5];
        int nf = 0;
        f[nf++] = s;
        for (const char *q = s; q < e; q++)
            if (*q == ',') {
                if (nf == 4)
                    return m->kind = K_NFIELDS, -1;
                f[nf++] = q + 1;
            }
        if (nf != 4)
            return m->kind = K_NFIELDS, -1;
        f[4] = e + 1;
        uint64_t v[4];
        for (int k = 0; k < 4; k++)
            if (model_field(f[k], (size_t)(f[k + 1] - 1 - f[k]), max[k], &v[k]) != 0)
                return m->kind = K_FIELD, m->field = k, -1;
        if (v[2] < m->max_start) {
            if (m->strict)
                return m->kind = K_BACKWARDS, -1;
            m->backwards++;
        } else {
            m->max_start = v[2];
        }
        *out = (trace_rec){.request_id = v[0], .app_id = (uint32_t)v[1], .start_us = v[2],
                           .exec_us = v[3], .line = m->line};
        return 1;
    }
    if (!m->seen_header) {
        m->len = 0;
        m->line++; /* the message names the line after the last */
        return m->kind = K_EOF_HEADER, m->col = 1, -1;
    }
    return 0;
}

/* ---- the check -------------------------------------------------------------------------- */

static void check_error(const trace_reader *r, const model *m)
{
    static const char *const field_names[4] = {"request_id", "app_id", "start_us", "exec_us"};
    const char *err = r->err;
    if (memchr(err, '\0', sizeof r->err) == NULL)
        FAIL("r.err is not terminated");
    unsigned long line, col;
    int off = 0;
    if (sscanf(err, NAME ":%lu:%lu: %n", &line, &col, &off) != 2 || off == 0)
        FAIL("error message without FILE:LINE:COL: \"%s\"", err);
    const char *msg = err + off;
    if (line != m->line)
        FAIL("error at line %lu, the model says line %lu: \"%s\"", line, m->line, err);
    if (col < 1 || col > (m->len > TRACE_MAX_LINE ? TRACE_MAX_LINE + 1 : m->len + 1))
        FAIL("column %lu outside line %lu (length %zu): \"%s\"", col, line, m->len, err);
    if (m->col && col != m->col)
        FAIL("column %lu, the model says %zu: \"%s\"", col, m->col, err);
    const char *want = NULL;
    char buf[64];
    switch (m->kind) {
    case K_EOF_HEADER:
        want = "expected the header line";
        if (!strstr(msg, "got the end of the file"))
            FAIL("the end of a file without header: \"%s\"", err);
        break;
    case K_HEADER: want = "expected the header line"; break;
    case K_LONG: want = "line longer than"; break;
    case K_NUL: want = "NUL"; break;
    case K_NFIELDS: want = "expected 4 comma-separated fields"; break;
    case K_BACKWARDS: want = "start_us: times go backwards"; break;
    case K_FIELD:
        snprintf(buf, sizeof buf, "%s: ", field_names[m->field]);
        want = buf;
        break;
    case K_NONE: FAIL("model error without a kind");
    }
    if (m->kind == K_NUL ? !strstr(msg, want) : strncmp(msg, want, strlen(want)) != 0)
        FAIL("the model expects an error \"%s...\" at line %lu, the parser says \"%s\"", want,
             m->line, err);
}

static void run(const uint8_t *data, size_t size, int strict)
{
    g_strict = strict;
    FILE *f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
    if (!f)
        FAIL("cannot open the input as a stream: %s", strerror(errno));
    trace_reader r;
    trace_init_stream(&r, f, NAME, strict);
    model m = {.p = (const char *)data, .end = (const char *)data + size, .strict = strict};
    trace_rec got, want;
    unsigned long n = 0, last_line = 0;
    uint64_t last_start = 0;
    for (;;) {
        memset(&got, 0xa5, sizeof got);
        int rc = trace_next(&r, &got);
        int mrc = model_next(&m, &want);
        if (rc != 1 && rc != 0 && rc != -1)
            FAIL("trace_next returned %d", rc);
        if (rc != mrc)
            FAIL("record %lu: trace_next returned %d, the model %d (model line %lu, err \"%s\")",
                 n + 1, rc, mrc, m.line, rc < 0 ? r.err : "");
        if (rc == 0) {
            if (!strict && r.backwards != m.backwards)
                FAIL("backwards = %llu, the model counts %llu",
                     (unsigned long long)r.backwards, (unsigned long long)m.backwards);
            break;
        }
        if (rc < 0) {
            check_error(&r, &m);
            break;
        }
        n++;
        if (got.app_id > TRACE_MAX_APP || got.start_us > TRACE_MAX_US ||
            got.exec_us > TRACE_MAX_US || got.line <= last_line)
            FAIL("record %lu out of range: app %u start %llu exec %llu line %lu after %lu", n,
                 got.app_id, (unsigned long long)got.start_us, (unsigned long long)got.exec_us,
                 got.line, last_line);
        if (got.request_id != want.request_id || got.app_id != want.app_id ||
            got.start_us != want.start_us || got.exec_us != want.exec_us ||
            got.line != want.line)
            FAIL("record %lu: parser %llu,%u,%llu,%llu (line %lu), model %llu,%u,%llu,%llu "
                 "(line %lu)", n, (unsigned long long)got.request_id, got.app_id,
                 (unsigned long long)got.start_us, (unsigned long long)got.exec_us, got.line,
                 (unsigned long long)want.request_id, want.app_id,
                 (unsigned long long)want.start_us, (unsigned long long)want.exec_us, want.line);
        if (strict && got.start_us < last_start)
            FAIL("--strict: record %lu starts at %llu, before %llu", n,
                 (unsigned long long)got.start_us, (unsigned long long)last_start);
        last_line = got.line;
        last_start = got.start_us;
    }
    trace_close(&r);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size, 0);
    run(data, size, 1);
    return 0;
}
