/*
 * trace_json.c -- the task timeline's file (trace.h): the events of a trace's rings, written by
 * crew_trace_stop as Chrome Trace Event Format JSON once every recording thread is quiet.
 *
 * The JSON is the "JSON Object Format" of the Trace Event Format: {"traceEvents": [...],
 * "displayTimeUnit": "ns", "otherData": {...}}, one event per line. Tasks, waits and sleeps are
 * complete events ("ph": "X", ts and dur in microseconds from the start of the trace), each
 * thread gets thread_name and thread_sort_index metadata events ("ph": "M"), and otherData
 * counts the events written and dropped. Task functions are named by dladdr() when the dynamic
 * linker knows their symbol (exported, or the program linked with -rdynamic), else by address.
 * A graph node's turn is a complete event of category "graph" named after the node; each edge
 * it took is a pair of flow events ("ph": "s" in it, "ph": "f" with "bp": "e" in the
 * successor's turn, one id), bound to the two slices at their middles (write_flows), which
 * Perfetto and chrome://tracing draw as an arrow.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool.h"
#include "trace.h"

/* The length of the valid UTF-8 sequence at s (its first byte >= 0x80), or 0 when it is not
 * one (a stray or missing continuation byte, an overlong form, a surrogate, beyond U+10FFFF). */
static int utf8_len(const unsigned char *s) {
    int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || s[0] > 0xf4)
        return 0;
    for (int k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80) /* also stops at the terminating 0 */
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

/* s as the inside of a JSON string (quotes, backslashes and control characters escaped; a
 * byte that is not part of valid UTF-8, such as a name cut inside a character, as U+FFFD:
 * JSON text is UTF-8). */
static void put_json_string(FILE *f, const char *s) {
    while (*s) {
        unsigned char c = (unsigned char)*s;
        int n = 1;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (c < 0x80)
            fputc(c, f);
        else if ((n = utf8_len((const unsigned char *)s)) != 0)
            fwrite(s, 1, (size_t)n, f);
        else {
            fputs("\\ufffd", f);
            n = 1;
        }
        s += n;
    }
}

/* Task functions' names, looked up once per function (dladdr takes the loader's lock). */
#define NAME_CACHE 64u
typedef struct name_cache {
    uintptr_t fn[NAME_CACHE];
    const char *name[NAME_CACHE]; /* the dynamic linker's string, or NULL: unknown */
} name_cache;

static const char *fn_name(name_cache *c, uintptr_t fn) {
    unsigned k = (unsigned)((fn >> 4) % NAME_CACHE);
    if (c->fn[k] == fn)
        return c->name[k];
    Dl_info info;
    const char *name = NULL;
    if (dladdr((void *)fn, &info) && info.dli_sname && (uintptr_t)info.dli_saddr == fn)
        name = info.dli_sname;
    c->fn[k] = fn;
    c->name[k] = name;
    return name;
}

/* Start order, and the longer (enclosing) event first among equal starts. */
static int by_start(const void *a, const void *b) {
    const crew__trace_ev *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns > y->end_ns ? -1 : 1;
    return 0;
}

static double us(uint64_t ns) { return (double)ns / 1e3; }

static void write_event(FILE *f, name_cache *nc, long pid, const crew__trace_ring *r,
                        const crew__trace_ev *e, uint64_t t0) {
    static const char *const cat[] = {"task", "help", "wait", "sleep", "graph", "graph"};
    uint64_t start = e->start_ns; /* at least t0: see record() */
    uint64_t end = e->end_ns < start ? start : e->end_ns;
    fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"", cat[e->kind % 6u]);
    if (e->kind == CREW__TR_NODE) {
        if (e->fn)
            put_json_string(f, (const char *)e->fn);
        else
            fprintf(f, "node %u", e->node);
    } else if (e->kind == CREW__TR_WAIT) {
        fputs(e->slot ? "crew_wait" : "crew_wait_all", f);
    } else if (e->kind == CREW__TR_SLEEP) {
        fputs("sleep", f);
    } else {
        const char *name = fn_name(nc, e->fn);
        if (name)
            put_json_string(f, name);
        else
            fprintf(f, "%#lx", (unsigned long)e->fn);
    }
    fprintf(f, "\",\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f,\"dur\":%.3f", pid, r->tid,
            us(start - t0), us(end - start));
    if (e->kind == CREW__TR_SLEEP)
        fputs(",\"cname\":\"thread_state_sleeping\"", f);
    else if (e->kind == CREW__TR_WAIT)
        fputs(",\"cname\":\"thread_state_iowait\"", f);
    fputs(",\"args\":{", f);
    if (e->kind == CREW__TR_TASK || e->kind == CREW__TR_HELP)
        fprintf(f, "\"fn\":\"%#lx\",\"stolen\":%d,", (unsigned long)e->fn, e->stolen);
    else if (e->kind == CREW__TR_NODE)
        fprintf(f, "\"node\":%u,\"run\":%u,", e->node, e->run);
    fprintf(f, "\"group\":\"%u/%u\"}}", e->slot, e->gen);
}

/* How many events ring r holds: all it recorded, or its capacity once it wrapped. */
static size_t recorded(const crew__trace_ring *r) {
    return r->head < r->cap ? (size_t)r->head : r->cap;
}

/* A walk over the events of one session's rings, ring by ring in the rings' order and each
 * ring's in its own order: next_event gives them one by one, and while it walks, ring is the
 * ring of the event it gave last. */
typedef struct ev_walk {
    crew__trace_ring *ring;
    size_t i; /* the next event's index in ring */
    uint64_t session;
} ev_walk;

static ev_walk walk_events(crew__trace *tr, uint64_t session) {
    return (ev_walk){tr->rings, 0, session};
}

/* The walk's next event, or NULL after the last. */
static const crew__trace_ev *next_event(ev_walk *w) {
    for (; w->ring; w->ring = w->ring->next, w->i = 0)
        if (w->ring->session == w->session && w->i < recorded(w->ring))
            return &w->ring->ev[w->i++];
    return NULL;
}

/* A node's turn, for matching edges with it (write_flows). */
typedef struct turn {
    uint32_t run, node;
    uint64_t start, end;
    long tid;
} turn;

static int by_turn(const void *a, const void *b) {
    const turn *x = a, *y = b;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The middle of a slice, where a flow event binds to it ("bp":"e": the enclosing slice). */
static double mid_us(uint64_t start, uint64_t end, uint64_t t0) {
    return us(start - t0) + (end > start ? us(end - start) / 2 : 0.0);
}

/* Every edge event of session's rings (sorted already) as a pair of flow events, "s" in the
 * predecessor's slice and "f" in the slice of the successor's first turn of the same run that
 * starts at or after the predecessor's end; an edge whose successor's turn was not recorded
 * (it did not run in the trace, or its event was dropped) is left out. Returns the pairs. */
static uint64_t write_flows(FILE *f, long pid, crew__trace *tr, uint64_t session) {
    size_t nturns = 0, k = 0;
    bool any_edge = false;
    const crew__trace_ev *e;
    for (ev_walk w = walk_events(tr, session); (e = next_event(&w));) {
        nturns += e->kind == CREW__TR_NODE;
        any_edge |= e->kind == CREW__TR_EDGE;
    }
    if (!any_edge || nturns == 0)
        return 0;
    turn *t = malloc(nturns * sizeof *t);
    if (!t)
        return 0; /* out of memory: the slices stand without their arrows */
    for (ev_walk w = walk_events(tr, session); (e = next_event(&w));)
        if (e->kind == CREW__TR_NODE)
            t[k++] = (turn){e->run, e->node, e->start_ns, e->end_ns, w.ring->tid};
    qsort(t, nturns, sizeof *t, by_turn);
    uint64_t id = 0;
    for (ev_walk w = walk_events(tr, session); (e = next_event(&w));) {
        if (e->kind != CREW__TR_EDGE)
            continue;
        size_t lo = 0, hi = nturns; /* the first turn not before (run, to, end) */
        turn key = {e->run, e->to, e->end_ns, 0, 0};
        while (lo < hi) {
            size_t m = lo + (hi - lo) / 2;
            if (by_turn(&t[m], &key) < 0)
                lo = m + 1;
            else
                hi = m;
        }
        if (lo == nturns || t[lo].run != e->run || t[lo].node != e->to)
            continue;
        id++;
        fprintf(f, ",\n{\"ph\":\"s\",\"cat\":\"graph\",\"name\":\"edge\",\"id\":%llu,"
                   "\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f,\"args\":{\"from\":%u,\"to\":%u,"
                   "\"run\":%u}}",
                (unsigned long long)id, pid, w.ring->tid, mid_us(e->start_ns, e->end_ns, tr->t0),
                e->node, e->to, e->run);
        fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"graph\",\"name\":\"edge\","
                   "\"id\":%llu,\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f}",
                (unsigned long long)id, pid, t[lo].tid,
                mid_us(t[lo].start, t[lo].end, tr->t0));
    }
    free(t);
    return id;
}

void crew__trace_write(crew_pool *p, uint64_t session, uint64_t *events, uint64_t *dropped) {
    crew__trace *tr = p->trace;
    FILE *f = tr->f;
    long pid = (long)getpid();
    name_cache nc = {{0}, {0}};
    uint64_t written = 0, lost = 0;
    unsigned index = 0;
    fprintf(f, "{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,"
               "\"tid\":0,\"args\":{\"name\":\"crew pool %u (",
            pid, p->id);
    put_json_string(f, p->name); /* the caller's */
    fputs(")\"}}", f);
    for (crew__trace_ring *r = tr->rings; r; r = r->next) {
        if (r->session != session || (r->head == 0 && r->lost == 0))
            continue;
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%ld,"
                   "\"args\":{\"name\":\"",
                pid, r->tid);
        put_json_string(f, r->name);
        fprintf(f, "\"}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%ld,"
                   "\"tid\":%ld,\"args\":{\"sort_index\":%u}}",
                pid, r->tid, index++);
        size_t n = recorded(r);
        lost += r->lost + (r->head - n);
        if (n == 0)
            continue;
        qsort(r->ev, n, sizeof *r->ev, by_start); /* the ring is freed after this */
        for (size_t i = 0; i < n; i++) {
            if (r->ev[i].kind == CREW__TR_EDGE) /* written as flows, below */
                continue;
            write_event(f, &nc, pid, r, &r->ev[i], tr->t0);
            written++;
        }
    }
    uint64_t edges = write_flows(f, pid, tr, session);
    fprintf(f, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"crew_pool\":%u,"
               "\"clock\":\"CLOCK_MONOTONIC\",\"start_ns\":%llu,\"events\":%llu,"
               "\"dropped_events\":%llu,\"events_per_thread\":%zu,\"graph_edges\":%llu}}\n",
            p->id, (unsigned long long)tr->t0, (unsigned long long)written,
            (unsigned long long)lost, tr->cap, (unsigned long long)edges);
    *events = written;
    *dropped = lost;
}

