/*
 * stats.h -- monitoring (stats.c). One block per recording thread (a worker's own, or a stripe
 * shared by the threads that are not workers); no lock on the recording path.
 */
#ifndef CREW_STATS_H
#define CREW_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"
#include "clock.h" /* crew__now_ns: the clock of every stamp */
#include "group.h"

#define CREW__HIST_BUCKETS 496u /* 16 exact buckets, then 8 per power of two up to 2^63 */
#define CREW__STATS_STRIPES 8u  /* blocks shared by threads that are not workers */
#define CREW__PEAK_SAMPLE 8u    /* the queue's peak is measured at one submission in this many */

/* Every counter below is relaxed (stats.c says why). */
typedef struct crew__hist {
    _Atomic uint64_t n;                     /* samples */
    _Atomic uint64_t sum;                   /* their total, for the mean */
    _Atomic uint64_t max;                   /* the largest */
    _Atomic uint64_t b[CREW__HIST_BUCKETS]; /* counts per log-linear bucket */
} crew__hist;

/* Monitoring's state, which struct crew_pool points to (crew__stats_init makes it). */
typedef struct crew__pool_stats {
    /* Blocks of the threads that are not workers, allocated on first use (published by
     * compare-and-swap). */
    struct crew__tstats *_Atomic outside[CREW__STATS_STRIPES];
    pthread_mutex_t lock;     /* serialises readers and resets */
    _Atomic uint64_t epoch;   /* bumped by crew_stats_reset (relaxed: see stats.c) */
    uint64_t epoch_ns;        /* lock: crew_create or the last crew_stats_reset */
    _Atomic size_t queued_peak; /* most tasks queued at once, sampled (relaxed: a statistic) */
    unsigned threads_peak;    /* pool->lock: most running workers at once */
} crew__pool_stats;

typedef struct crew__tstats {
    bool shared; /* written by several threads (read-modify-writes), else by its owner only */
    /* Owned blocks: the reset epoch the block counts for (release/acquire, stats.c). */
    _Atomic uint64_t epoch;
    /* The controller's inputs (autosize), never reset: timed tasks finished, their run time
     * and queue time, and (workers' blocks) the thread's context switches: waits and
     * preemptions. */
    _Atomic uint64_t timed, timed_busy_ns, timed_wait_ns, waits, preemptions;
    /* From here to the end, what crew_stats_reset clears. */
    _Atomic uint64_t submitted, completed, cancelled, rejected, expired; /* as in crew_stats */
    _Atomic uint64_t busy_ns, waiting_ns, tasks; /* this thread, as in crew_thread_stats */
    crew__hist response, idle, processing, turnaround; /* as in crew_stats */
} crew__tstats;

/* The calling thread's block (allocated on first use; NULL if memory ran out). */
struct crew__tstats *crew__stats_block(crew_pool *p);
/* Monitoring or autosize (submit.c): mark n tasks about to be queued as timed
 * (CREW__TASK_STAMPED, and CREW__TASK_COUNTED under monitoring) with their submission time and
 * response time. Out of line, so that a pool that times nothing pays only the test of
 * p->timing. Returns the acceptance time. */
__attribute__((noinline, cold)) uint64_t crew__stats_stamp(crew_pool *p, crew_task *t, size_t n,
                                                           uint64_t submitted);
void crew__stats_submitted(crew_pool *p, size_t n, uint64_t submitted, uint64_t accepted);
void crew__stats_rejected(crew_pool *p, size_t n);
void crew__stats_dropped(crew_pool *p, enum crew__end how); /* CREW__LOST or CREW__EXPIRED */
/* A turn of a graph run ended (graph_run.c): ran nodes started (submitted and completed),
 * unstarted nodes were reported to on_drop (submitted and cancelled). */
void crew__stats_graph(crew_pool *p, uint64_t ran, uint64_t unstarted);
void crew__stats_done(struct crew__tstats *s, uint64_t submitted, uint64_t accepted,
                      uint64_t started, uint64_t finished);
/* A timed task waited wait_ns in the queue, ran for processing_ns and finished at now
 * (autosize's inputs). */
void crew__stats_timed(crew_pool *p, struct crew__tstats *s, uint64_t wait_ns,
                       uint64_t processing_ns, uint64_t now);
void crew__stats_waited(crew_pool *p, uint64_t ns);
/* The controller's inputs summed over every block. */
typedef struct crew__timed_sum {
    uint64_t tasks, busy_ns, wait_ns, waits, preemptions;
} crew__timed_sum;
void crew__stats_timed_sum(crew_pool *p, crew__timed_sum *sum);
/* Monitoring's state of p, before its workers exist. CREW_OK or CREW_ENOMEM. */
int crew__stats_init(crew_pool *p);
void crew__stats_free(crew_pool *p); /* it and every block, once no thread records any more */

#endif /* CREW_STATS_H */
