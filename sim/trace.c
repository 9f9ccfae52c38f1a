/* trace.c -- the trace parser: exact messages (file:line:column), never a silent skip. */
#include "trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_names[4] = {"request_id", "app_id", "start_us", "exec_us"};

static void set_err(trace_reader *r, size_t col, const char *fmt, ...)
{
    int n = snprintf(r->err, sizeof r->err, "%s:%lu:%zu: ", r->name, r->line, col);
    if (n < 0 || (size_t)n >= sizeof r->err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
}

void trace_init_stream(trace_reader *r, FILE *f, const char *name, int strict)
{
    memset(r, 0, sizeof *r);
    r->f = f;
    r->name = name;
    r->strict = strict;
}

int trace_open(trace_reader *r, const char *path, int strict)
{
    if (strcmp(path, "-") == 0) {
        trace_init_stream(r, stdin, "<stdin>", strict);
        return 0;
    }
    FILE *f = fopen(path, "r");
    trace_init_stream(r, f, path, strict);
    if (!f) {
        snprintf(r->err, sizeof r->err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    r->own = 1;
    return 0;
}

void trace_close(trace_reader *r)
{
    if (r->own && r->f)
        fclose(r->f);
    r->f = NULL;
    free(r->buf);
    r->buf = NULL;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Show what was found, shortened, for messages. */
static void show(const char *s, size_t n, char *out, size_t cap)
{
    if (n == 0) {
        snprintf(out, cap, "an empty field");
        return;
    }
    if (n > 24)
        snprintf(out, cap, "\"%.24s...\"", s);
    else
        snprintf(out, cap, "\"%.*s\"", (int)n, s);
}

/* One unsigned decimal field s[0..n) (already trimmed) starting at column col. */
static int parse_u64(trace_reader *r, int field, const char *s, size_t n, size_t col,
                     uint64_t max, uint64_t *out)
{
    char what[64];
    show(s, n, what, sizeof what);
    if (n > 0 && s[0] == '-') {
        /* Negative numbers get their own message: "negative time" is the common mistake. */
        int numeric = n > 1;
        for (size_t i = 1; i < n; i++)
            numeric &= (s[i] >= '0' && s[i] <= '9') || s[i] == '.';
        if (numeric) {
            set_err(r, col, "%s: expected a non-negative %s, got %s",
                    field_names[field], field >= 2 ? "time in microseconds" : "integer", what);
            return -1;
        }
    }
    if (n == 0 || n > 20) {
        set_err(r, col, "%s: expected a non-negative integer%s, got %s", field_names[field],
                field >= 2 ? " (microseconds)" : "", what);
        return -1;
    }
    uint64_t v = 0;
    int overflow = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            set_err(r, col + i, "%s: expected a non-negative integer%s, got %s",
                    field_names[field], field >= 2 ? " (microseconds)" : "", what);
            return -1;
        }
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            overflow = 1; /* 2^64 or more: out of range even for request_id */
            break;
        }
        v = v * 10 + d;
    }
    if (overflow || v > max) {
        set_err(r, col, "%s: value %s out of range (0..%llu)", field_names[field], what,
                (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

/* Read one line into r->buf. Returns its length, -1 at EOF, -2 on error (r->err set). */
static long read_line(trace_reader *r)
{
    if (!r->buf) {
        r->cap = TRACE_MAX_LINE + 2;
        r->buf = malloc(r->cap);
        if (!r->buf) {
            snprintf(r->err, sizeof r->err, "%s: out of memory", r->name);
            return -2;
        }
    }
    /* Not fgets: its length would end at a NUL byte, hiding the rest of the line. */
    size_t n = 0;
    int c = 0;
    while (n < TRACE_MAX_LINE + 1 && (c = getc(r->f)) != EOF) {
        r->buf[n++] = (char)c;
        if (c == '\n')
            break;
    }
    r->buf[n] = '\0';
    if (ferror(r->f)) {
        snprintf(r->err, sizeof r->err, "%s:%lu: read error: %s", r->name, r->line + 1,
                 strerror(errno));
        return -2;
    }
    if (n == 0)
        return -1;
    r->line++;
    const char *nul = memchr(r->buf, '\0', n); /* e.g. the zeroed tail of a file cut short */
    if (nul) {
        set_err(r, (size_t)(nul - r->buf) + 1, "a NUL byte (is this a text file?)");
        return -2;
    }
    if (r->buf[n - 1] != '\n' && n > TRACE_MAX_LINE) {
        set_err(r, TRACE_MAX_LINE + 1, "line longer than %d characters", TRACE_MAX_LINE);
        return -2;
    }
    return (long)n;
}

int trace_next(trace_reader *r, trace_rec *out)
{
    for (;;) {
        long len = read_line(r);
        if (len == -1) {
            if (!r->seen_header) {
                snprintf(r->err, sizeof r->err, "%s:%lu:1: expected the header line \"%s\", got "
                         "the end of the file", r->name, r->line + 1, TRACE_HEADER);
                return -1;
            }
            return 0;
        }
        if (len < 0)
            return -1;
        char *s = r->buf;
        size_t n = (size_t)len;
        while (n > 0 && is_space(s[n - 1]))
            n--;
        size_t lead = 0;
        while (lead < n && is_space(s[lead]))
            lead++;
        if (lead == n || s[lead] == '#')
            continue; /* blank or comment */
        if (!r->seen_header) {
            if (n - lead != strlen(TRACE_HEADER) || memcmp(s + lead, TRACE_HEADER, n - lead)) {
                char what[64];
                show(s + lead, n - lead, what, sizeof what);
                set_err(r, lead + 1, "expected the header line \"%s\", got %s", TRACE_HEADER,
                        what);
                return -1;
            }
            r->seen_header = 1;
            continue;
        }
        /* Split into fields at commas; count them first so the message gives the count. */
        size_t nf = 1;
        for (size_t i = lead; i < n; i++)
            nf += s[i] == ',';
        if (nf != 4) {
            /* Column: where the fifth field starts, or the end of the line when short. */
            size_t col = n + 1;
            if (nf > 4) {
                size_t c = 0;
                for (size_t i = lead; i < n; i++)
                    if (s[i] == ',' && ++c == 4) {
                        col = i + 1;
                        break;
                    }
            }
            set_err(r, col, "expected 4 comma-separated fields (%s), got %zu", TRACE_HEADER, nf);
            return -1;
        }
        uint64_t v[4];
        size_t i = lead;
        for (int k = 0; k < 4; k++) {
            size_t b = i;
            while (i < n && s[i] != ',')
                i++;
            size_t e = i;
            while (b < e && is_space(s[b]))
                b++;
            while (e > b && is_space(s[e - 1]))
                e--;
            uint64_t max = k == 1 ? TRACE_MAX_APP : k == 0 ? UINT64_MAX : TRACE_MAX_US;
            if (parse_u64(r, k, s + b, e - b, b + 1, max, &v[k]) != 0)
                return -1;
            i++; /* past the comma */
        }
        if (r->strict && v[2] < r->last_start) {
            size_t col = 1;
            for (size_t c = 0, j = lead; j < n; j++)
                if (s[j] == ',' && ++c == 2) {
                    col = j + 2;
                    break;
                }
            set_err(r, col, "start_us: times go backwards (%llu after %llu); --strict requires "
                    "non-decreasing start times", (unsigned long long)v[2],
                    (unsigned long long)r->last_start);
            return -1;
        }
        if (v[2] < r->last_start)
            r->backwards++;
        else
            r->last_start = v[2];
        out->request_id = v[0];
        out->app_id = (uint32_t)v[1];
        out->start_us = v[2];
        out->exec_us = v[3];
        out->line = r->line;
        return 1;
    }
}
