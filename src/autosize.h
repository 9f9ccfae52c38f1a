/*
 * autosize.h -- the sizing controllers and their thread (autosize.c).
 */
#ifndef CREW_AUTOSIZE_H
#define CREW_AUTOSIZE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crew.h"
#include "ec.h"
#include "thread.h"

typedef struct crew__ait_state {
    double pre;        /* preAIT (ns) */
    double prepre;     /* prepreAIT (ns) */
    unsigned pre_size; /* prePoolSize */
} crew__ait_state;

typedef struct crew__balance_in {
    double period_s;    /* length of the measured period */
    uint64_t completed; /* tasks finished in it */
    double busy;        /* average number of tasks running */
    double cpu;         /* cores' worth of CPU the process used */
    size_t queued;      /* tasks queued at the end of it */
    unsigned size;      /* pool size now */
    unsigned cores;     /* CPUs the pool may run on (crew_pool.cpus) */
    /* Of the workers' context switches in the period, the share that were preemptions (the
     * thread wanted the CPU) rather than waits (it blocked): near 1 when the tasks are
     * CPU-bound and threads outnumber cores; negative when not measured. */
    double preempted;
    /* The tasks' average time in the queue over their average run time (negative: not
     * measured). Large when tasks wait for a thread, as bursts do in a pool that looks idle on
     * average. */
    double wait_ratio;
} crew__balance_in;

typedef struct crew__balance_state {
    unsigned best_size; /* the size with the best throughput in this regime (0 = none yet) */
    double best_x;      /* that throughput, refreshed while at best_size */
    int dir;            /* the last probe: +1 grew, -1 shrank, 0 none */
    unsigned down_step; /* threads removed per downward probe (0 = not set) */
    unsigned hold;      /* periods left before probing again */
    bool hold_blocked;  /* the hold began while the workers mostly waited (tasks blocked) */
    unsigned fails;     /* probes undone in a row in this regime (each doubles the hold) */
    bool probed_one;    /* this regime tried one thread more than the cores */
    double probe_wait;  /* > 0: the last move grew the pool for waiting tasks, at this ratio */
    unsigned probe_from; /* the size before that move */
    unsigned calm;       /* periods in a row in which tasks hardly waited */
    unsigned settle;    /* periods to skip after a resize */
    unsigned judge_left; /* periods still to measure before judging the last move */
    double acc_done, acc_s; /* completions and seconds measured so far for that judgement */
} crew__balance_state;

typedef struct crew__autosize {
    unsigned mode, min, max;  /* settings (fixed) */
    unsigned cycle, stride;   /* AIT settings (fixed) */
    unsigned period_ms;       /* BALANCE setting (fixed) */
    crew__lone thread;        /* the controller (lock; made by crew__autosize_start) */
    pthread_mutex_t lock;     /* the fields marked "lock" below */
    crew__ec wake;            /* the controller sleeps here, with lock (ec.h) */
    bool stop;                /* lock: the controller must exit */
    uint64_t cycle_idle_ns;   /* lock: idle time summed over the current AIT cycle */
    unsigned cycle_count;     /* lock: tasks in the current AIT cycle */
    uint64_t cycles_done;     /* lock: AIT cycles completed */
    double last_ait_ns;       /* lock: the last cycle's average idle time */
    uint64_t resizes;         /* lock: resizes made */
} crew__autosize;

/* Xu & Bode, Fig. 9 (dynamicThreadPool) as written: the next pool size after a cycle whose
 * average idle time is ait (clamped into [min, max]). */
unsigned crew__ait_step(crew__ait_state *s, double ait, unsigned size, unsigned stride,
                        unsigned min, unsigned max);
/* crew's controller: the next pool size after one measured period. */
unsigned crew__balance_step(crew__balance_state *s, const crew__balance_in *in, unsigned min,
                            unsigned max);
int crew__autosize_check(const crew_config *cfg);             /* CREW_OK or CREW_EINVAL */
/* The controller's state for cfg (none when cfg->autosize is off): CREW_OK or CREW_ENOMEM, with
 * its detail. crew__autosize_free frees it. */
int crew__autosize_init(crew_pool *p, const crew_config *cfg);
int crew__autosize_start(crew_pool *p); /* starts the controller, once the workers exist */
/* A timed task finished after waiting idle_ns in the queue (AIT's cycle; no-op for BALANCE). */
void crew__autosize_sample(crew_pool *p, uint64_t idle_ns);
void crew__autosize_stop(crew_pool *p); /* joins the controller; safe to call twice */
void crew__autosize_free(crew_pool *p);

#endif /* CREW_AUTOSIZE_H */
