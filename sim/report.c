/* report.c -- the summary table, summary.csv and summary.json. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static const char *sched_name(unsigned s)
{
    static const char *const names[] = {"default", "steal", "shared", "lockfree", "per-worker"};
    return s < 5 ? names[s] : "?";
}

static const char *autosize_name(unsigned a)
{
    return a == CREW_AUTOSIZE_AIT ? "ait" : a == CREW_AUTOSIZE_BALANCE ? "balance" : "off";
}

/* Microseconds, compact: "812", "12.3k" would hide precision, so plain with 1 decimal < 10. */
static void us(char *out, size_t cap, double ns)
{
    double v = ns / 1e3;
    if (v < 10)
        snprintf(out, cap, "%.2f", v);
    else if (v < 100000)
        snprintf(out, cap, "%.0f", v);
    else
        snprintf(out, cap, "%.3gs", v / 1e6);
}

static void row(FILE *f, const char *name, const app_row *r, double wall)
{
    fprintf(f, "%-8s %9llu %9llu %9llu %9.1f", name, (unsigned long long)r->submitted,
            (unsigned long long)r->completed, (unsigned long long)r->cancelled,
            wall > 0 ? (double)r->completed / wall : 0);
    for (int m = 0; m < M_COUNT; m++) {
        char a[32], b[32], c[32];
        us(a, sizeof a, r->m[m].mean);
        us(b, sizeof b, (double)r->m[m].p50);
        us(c, sizeof c, (double)r->m[m].p99);
        fprintf(f, " | %7s %7s %7s", a, b, c);
    }
    fputc('\n', f);
}

void replay_print_summary(FILE *f, const replay_opts *o, const replay_result *r)
{
    fprintf(f, "crew-sim replay %s: scheduler %s, autosize %s, threads %u", o->trace,
            sched_name(o->scheduler), autosize_name(o->autosize), o->threads);
    if (o->autosize)
        fprintf(f, " (min %u, max %u)", o->min_threads, o->max_threads);
    fprintf(f, ", free-workload %g%%, speed %g%s\n", o->free_workload, o->speed,
            r->interrupted ? "  [INTERRUPTED]" : "");
    fprintf(f, "trace span %.3f s, wall %.3f s (to the last completion), %llu records, "
            "peak workers %u\n", r->trace_s, r->wall_s, (unsigned long long)r->records,
            r->threads_peak);
    fprintf(f, "submission lag behind the trace: mean %.1f us, p99 %.1f us%s\n",
            r->lag.mean / 1e3, (double)r->lag.p99 / 1e3,
            r->lag.p99 > 10000000 ? "  (the producer fell behind: queue full or machine busy)"
                                  : "");
    if (r->backwards)
        fprintf(f, "note: %llu records started before the record above them and were submitted "
                "at once (--strict refuses such traces)\n", (unsigned long long)r->backwards);
    fprintf(f, "\n%-8s %9s %9s %9s %9s | %-23s | %-23s | %-23s | %-23s\n", "", "", "", "",
            "through-", "response (us)", "idle/queue (us)", "processing (us)", "turnaround (us)");
    fprintf(f, "%-8s %9s %9s %9s %9s", "app", "submitted", "completed", "cancelled", "put/s");
    for (int m = 0; m < M_COUNT; m++)
        fprintf(f, " | %7s %7s %7s", "mean", "p50", "p99");
    fputc('\n', f);
    for (size_t i = 0; i < r->napps; i++) {
        char name[16];
        snprintf(name, sizeof name, "%u", r->apps[i].app_id);
        row(f, name, &r->apps[i], r->wall_s);
    }
    row(f, "overall", &r->overall, r->wall_s);
    if (r->monitoring) {
        /* crew's own view, stamped inside the pool (exact accepted/started times). */
        app_row p;
        memset(&p, 0, sizeof p);
        p.submitted = r->crew.submitted;
        p.completed = r->crew.completed;
        p.cancelled = r->crew.cancelled;
        const crew_latency *l[M_COUNT] = {&r->crew.response, &r->crew.idle, &r->crew.processing,
                                          &r->crew.turnaround};
        for (int m = 0; m < M_COUNT; m++) {
            p.m[m].count = l[m]->count;
            p.m[m].mean = l[m]->mean_ns;
            p.m[m].p50 = l[m]->p50_ns;
            p.m[m].p99 = l[m]->p99_ns;
        }
        row(f, "crew", &p, r->wall_s);
        fprintf(f, "(crew: the pool's own monitoring, crew_stats_get; skipped tasks count as "
                "completed there. queued peak %llu, workers peak %u)\n",
                (unsigned long long)r->crew.queued_peak, r->crew.threads_peak);
    }
}

static void json_hist(FILE *f, const char *name, const hist_sum *h, int last)
{
    fprintf(f, "\"%s\": {\"count\": %llu, \"mean_us\": %.3f, \"p50_us\": %.3f, \"p99_us\": %.3f, "
            "\"max_us\": %.3f}%s", name, (unsigned long long)h->count, h->mean / 1e3,
            (double)h->p50 / 1e3, (double)h->p99 / 1e3, (double)h->max / 1e3, last ? "" : ", ");
}

static void json_row(FILE *f, const app_row *r, double wall, int overall)
{
    fputs("{", f);
    if (!overall)
        fprintf(f, "\"app_id\": %u, ", r->app_id);
    fprintf(f, "\"submitted\": %llu, \"completed\": %llu, \"cancelled\": %llu, "
            "\"throughput_per_s\": %.3f, ", (unsigned long long)r->submitted,
            (unsigned long long)r->completed, (unsigned long long)r->cancelled,
            wall > 0 ? (double)r->completed / wall : 0);
    for (int m = 0; m < M_COUNT; m++)
        json_hist(f, replay_metric_names[m], &r->m[m], m == M_COUNT - 1);
    fputs("}", f);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

int replay_write_summary(const char *dir, const replay_opts *o, const replay_result *r)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "app_id,submitted,completed,cancelled,throughput_per_s");
    for (int m = 0; m < M_COUNT; m++)
        fprintf(f, ",%s_mean_us,%s_p50_us,%s_p99_us", replay_metric_names[m],
                replay_metric_names[m], replay_metric_names[m]);
    fputc('\n', f);
    for (size_t i = 0; i <= r->napps; i++) {
        const app_row *a = i < r->napps ? &r->apps[i] : &r->overall;
        if (i < r->napps)
            fprintf(f, "%u", a->app_id);
        else
            fputs("overall", f);
        fprintf(f, ",%llu,%llu,%llu,%.3f", (unsigned long long)a->submitted,
                (unsigned long long)a->completed, (unsigned long long)a->cancelled,
                r->wall_s > 0 ? (double)a->completed / r->wall_s : 0);
        for (int m = 0; m < M_COUNT; m++)
            fprintf(f, ",%.3f,%.3f,%.3f", a->m[m].mean / 1e3, (double)a->m[m].p50 / 1e3,
                    (double)a->m[m].p99 / 1e3);
        fputc('\n', f);
    }
    if (fclose(f) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("{\"trace\": ", f);
    json_str(f, o->trace);
    fprintf(f, ", \"config\": {\"threads\": %u, \"autosize\": \"%s\", \"min_threads\": %u, "
            "\"max_threads\": %u, \"scheduler\": \"%s\", \"free_workload\": %g, \"speed\": %g, "
            "\"exec_scale\": %g, \"queue_capacity\": %u, \"loops_per_us\": %.3f},\n",
            o->threads, autosize_name(o->autosize), o->min_threads, o->max_threads,
            sched_name(o->scheduler), o->free_workload, o->speed, o->exec_scale,
            o->queue_capacity, o->loops_per_us);
    fprintf(f, " \"interrupted\": %s, \"records\": %llu, \"trace_span_s\": %.6f, "
            "\"wall_s\": %.6f, \"threads_peak\": %u,\n \"submission_lag\": {",
            r->interrupted ? "true" : "false", (unsigned long long)r->records, r->trace_s,
            r->wall_s, r->threads_peak);
    json_hist(f, "lag", &r->lag, 1);
    fputs("},\n \"apps\": [", f);
    for (size_t i = 0; i < r->napps; i++) {
        fputs(i ? ",\n   " : "\n   ", f);
        json_row(f, &r->apps[i], r->wall_s, 0);
    }
    fputs("],\n \"overall\": ", f);
    json_row(f, &r->overall, r->wall_s, 1);
    fputs(",\n \"crew\": ", f);
    fputs(r->crew_json ? r->crew_json : "null", f);
    fputs("}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}
