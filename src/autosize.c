/*
 * autosize.c -- automatic pool sizing: a controller thread per pool that watches the tasks and
 * resizes the pool through crew_resize (the lazy mechanism), off the hot path.
 *
 * Inputs come from the tasks themselves: with autosize on, every task is timestamped (like
 * monitoring, see stats.c). When one finishes, its thread counts it and its processing time in
 * its own statistics block (stats.c, no lock), which BALANCE sums once per period; for AIT,
 * crew__autosize_sample also adds its idle time (accepted -> started) to the current cycle,
 * under the controller's own lock, since a cycle is K tasks of the whole pool. Two controllers:
 *
 * CREW_AUTOSIZE_AIT -- Xu & Bode, Fig. 9 (dynamicThreadPool) as written: at the end of each cycle
 * of K completed tasks, compare the cycle's average idle time (AIT) with the previous two cycles'
 * and move the size by `stride`. Kept verbatim, quirks included (with no change above 1% it
 * keeps growing, because prePoolSize always equals poolSize at the next cycle), so its published
 * behaviour can be reproduced and compared.
 *
 * CREW_AUTOSIZE_BALANCE -- crew's controller: hill climbing on measured throughput X
 * (completions/s) against the best size seen so far, steered by the queue, the number of tasks
 * actually running and the process's CPU use. Every period (skipping the one right after a
 * resize, which mixes two sizes, and periods with too few completions to measure):
 *   - no backlog and fewer tasks running than threads: shrink halfway towards the demand;
 *   - judge the last move against the best: keep it if X rose enough (4% for a doubling, at
 *     least 2%) or, for a shrink, held within 2% with fewer threads; otherwise go back to the
 *     best size and hold for a while (and probe down more gently next time); a drop of 20% at
 *     the best size itself means the work changed, and the reference is reset;
 *   - a backlog and idle CPU (the tasks block): double the size;
 *   - the workers mostly preempted (CPU-bound) with more threads than cores: probe down by a
 *     quarter (then smaller); a hold begun while they mostly waited ends when they turn
 *     preempted: the blocking stopped;
 *   - otherwise hold.
 * docs/autosize.md has the whole rule set and the reasons for it.
 * The decision logic is a pure function (crew__balance_step), unit-tested with synthetic inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "clock.h"
#include "pool.h"
#include "autosize.h"
#include "stats.h"
#include "worker.h"

#define BALANCE_HOLD_PERIODS 10 /* after undoing a move, hold this many periods */
#define BALANCE_MIN_SAMPLES 8   /* completions needed in a period to judge throughput */
#define BALANCE_MIN_SWITCHES 16 /* context switches needed in a period to judge their kind */
#define BALANCE_JUDGE_PERIODS 2 /* periods measured together to judge a move */
#define BALANCE_WAIT_HIGH 1.0   /* tasks wait longer than they run: grow for them */
#define BALANCE_WAIT_LOW 0.1    /* tasks hardly wait: the pool may shrink to the demand */
#define BALANCE_CALM_PERIODS 10 /* ...after this many such periods in a row */

static unsigned clamp(long v, unsigned lo, unsigned hi) {
    return v < (long)lo ? lo : v > (long)hi ? hi : (unsigned)v;
}

unsigned crew__ait_step(crew__ait_state *s, double ait, unsigned size, unsigned stride,
                        unsigned min, unsigned max) {
    long pool = size; /* poolSize */
    /* if ((|currentAIT - preAIT| / preAIT) > 1%) -- with no history (preAIT 0) the quotient is
     * not a number and the comparison false, as in C. */
    double diff = ait > s->pre ? ait - s->pre : s->pre - ait;
    if (s->pre > 0 && diff / s->pre > 0.01) {
        if (ait > s->pre) {
            if (s->pre < s->prepre)
                pool -= stride;
            else
                pool += stride;
        } else if (ait < s->pre && s->pre < s->prepre) {
            pool += stride;
        }
    } else if (s->pre_size == size) {
        pool += stride;
    }
    if (pool <= 0)
        pool = 1;
    s->prepre = s->pre;
    s->pre = ait;
    s->pre_size = clamp(pool, min, max);
    return s->pre_size;
}

/* The throughput gain (a factor) a move from best to size must show to be kept: 4% for a
 * doubling, proportionally less for a smaller step but at least 2% (the noise), at most 5%. */
static double grow_gain(unsigned size, unsigned best) {
    double step = best ? ((double)size - (double)best) / (double)best : 1.0;
    double need = 0.04 * step;
    return 1.0 + (need < 0.02 ? 0.02 : need > 0.05 ? 0.05 : need);
}

/* The workers' context switches were mostly waits: their tasks block. */
static bool workers_wait(const crew__balance_in *in) {
    return in->preempted >= 0 && in->preempted < 0.5;
}

/* Hold for `periods`, remembering whether the tasks were blocking when the hold began. */
static void start_hold(crew__balance_state *s, const crew__balance_in *in, unsigned periods) {
    s->hold = periods;
    s->hold_blocked = workers_wait(in);
}

unsigned crew__balance_step(crew__balance_state *s, const crew__balance_in *in, unsigned min,
                            unsigned max) {
    unsigned size = in->size, next = size;
    bool backlog = in->queued > 0;
    if (in->completed < BALANCE_MIN_SAMPLES) {
        /* Too few completions to judge. With no work at all, drift down towards min. */
        if (!backlog && in->busy < 0.5 && size > min)
            next = size - 1;
        goto resize;
    }
    double x = (double)in->completed / in->period_s;
    if (s->settle > 0) { /* the period right after a resize mixes two sizes: skip it */
        s->settle--;
        return size;
    }
    if (s->judge_left > 0) {
        /* A move is judged on BALANCE_JUDGE_PERIODS periods together: one period's noise on
         * a shared machine is as large as the effects being measured. */
        s->acc_done += (double)in->completed;
        s->acc_s += in->period_s;
        if (--s->judge_left > 0)
            return size;
        x = s->acc_done / s->acc_s;
        s->acc_done = s->acc_s = 0;
    }
    /* Tasks waiting for a thread, while the pool looks idle on average (bursts, or arrivals
     * the pool keeps up with only late), are judged on their waiting, not on throughput: an
     * open system's throughput is its arrival rate whatever the size. */
    bool waiting = in->wait_ratio > BALANCE_WAIT_HIGH;
    bool calm = in->wait_ratio < BALANCE_WAIT_LOW; /* or not measured (negative) */
    if (s->probe_wait > 0) { /* judge a move made for waiting tasks */
        double before = s->probe_wait;
        s->probe_wait = 0;
        if (in->wait_ratio >= 0 && in->wait_ratio <= 0.75 * before) {
            s->best_size = size; /* it paid: this is the reference now */
            s->best_x = x;
            s->fails = 0;
            return size;
        }
        next = s->probe_from; /* it did not: back, and wait longer each time */
        start_hold(s, in, BALANCE_HOLD_PERIODS << (s->fails < 3 ? s->fails : 3));
        s->fails++;
        s->dir = 0;
        goto resize;
    }
    /* Periods in a row without tasks waiting: threads kept for bursts retire only after a
     * calm second, as idle threads do after a keep-alive time in other pools. */
    s->calm = calm ? s->calm + 1 : 0;
    if (!backlog && in->busy < (double)size - 1.0 && calm &&
        (s->calm >= BALANCE_CALM_PERIODS || in->wait_ratio < 0)) {
        /* More threads than work, and tasks do not wait: shrink halfway towards the demand;
         * forget the reference, the regime has changed. */
        unsigned running = (unsigned)in->busy; /* rounded up: */
        unsigned want = running + ((double)running < in->busy) + 1;
        unsigned cut = (size - want + 1) / 2;
        next = size - (cut ? cut : 1);
        s->best_size = 0;
        s->fails = 0;
        s->probed_one = false;
        goto resize;
    }
    /* Judge where we are against the best size seen. */
    if (s->best_size == 0) {
        s->best_size = size;
        s->best_x = x;
    } else if (size == s->best_size) {
        if (x < 0.8 * s->best_x) { /* much worse at the same size: the work changed */
            s->best_x = x;
            s->hold = 0;
            s->down_step = 0;
            s->fails = 0;
            s->probed_one = false;
        } else {
            s->best_x = 0.75 * s->best_x + 0.25 * x; /* refresh the reference, smoothly */
        }
    } else if (x > grow_gain(size, s->best_size) * s->best_x) { /* the move paid */
        if (size == in->cores + 1 && s->best_size == in->cores)
            start_hold(s, in, BALANCE_HOLD_PERIODS); /* one over the cores paid: keep it */
        s->best_size = size;
        s->best_x = x;
        s->fails = 0;
    } else if (s->dir < 0 && x >= 0.98 * s->best_x) { /* fewer threads, same throughput */
        s->best_size = size;
        s->fails = 0;
    } else { /* the move did not pay: back to the best size, and wait */
        next = s->best_size;
        /* Each failed probe in a row doubles the wait (up to 8x): in steady state the probes
         * that keep failing cost less and less. */
        start_hold(s, in, BALANCE_HOLD_PERIODS << (s->fails < 3 ? s->fails : 3));
        s->fails++;
        if (s->dir < 0 && s->down_step > 1)
            s->down_step /= 2; /* probe down more gently next time */
        s->dir = 0;
        goto resize;
    }
    /* A hold waits out noise after an undone move. Two changes are not noise, and end it:
     * tasks queueing for many times their run time while the CPU has room, and workers that
     * mostly waited when it began and are now mostly preempted with more threads than cores
     * (the blocking stopped: the threads it needed only queue for the CPU now). */
    bool severe = in->wait_ratio > 4 * BALANCE_WAIT_HIGH && in->cpu < 0.85 * (double)in->cores;
    bool unblocked = s->hold_blocked && in->preempted >= 0.5 && size > in->cores &&
                     in->cpu >= 0.85 * (double)in->cores;
    if (s->hold > 0 && !severe && !unblocked) {
        s->hold--;
        return size;
    }
    s->hold = 0;
    /* Probe. The workers' context switches tell why the CPU is used as it is: mostly
     * preemptions mean they want more CPU than there is (CPU-bound, more threads only queue
     * for it); mostly waits mean the tasks block. Without that signal, "saturated and more
     * threads than cores" stands for CPU-bound. */
    bool saturated = in->cpu >= 0.85 * (double)in->cores;
    bool full = in->cpu >= 0.95 * (double)in->cores;
    bool cpu_bound = in->preempted >= 0 ? in->preempted >= 0.5 : saturated;
    /* Growing helps only if the threads are all inside tasks: when many wait for work, the
     * queue is fed too slowly (or they fight over it) and more threads would only wait too. */
    bool occupied = in->busy >= 0.75 * (double)size;
    if (backlog && occupied && !saturated) { /* tasks block and CPU is idle: double */
        s->dir = +1;
        next = size * 2;
    } else if (backlog && occupied && !full && !cpu_bound) { /* nearly saturated: a quarter */
        s->dir = +1;
        next = size + (size / 4 ? size / 4 : 1);
    } else if (waiting && !saturated && !(in->preempted >= 0.5)) {
        /* Tasks wait for a thread and the CPU has room: more threads, judged on the waiting. */
        s->probe_wait = in->wait_ratio;
        s->probe_from = size;
        s->dir = +1;
        next = size * 2;
    } else if (backlog && cpu_bound && size <= in->cores && !s->probed_one) {
        /* CPU-bound at the cores: try one thread more, once per regime. It pays where a
         * thread of the pool is often preempted or stalls (a shared machine, page faults);
         * where it does not pay, it is undone. */
        s->probed_one = true;
        s->dir = +1;
        next = size + 1;
    } else if (cpu_bound && saturated && size > in->cores) { /* probe fewer threads */
        if (s->down_step == 0)
            s->down_step = size / 4 ? size / 4 : 1;
        s->dir = -1;
        next = size - s->down_step;
        if (next < in->cores)
            next = in->cores;
    } else {
        s->dir = 0;
        start_hold(s, in, BALANCE_HOLD_PERIODS);
    }
resize:
    next = clamp(next, min, max);
    if (next != size) {
        s->settle = 1;
        s->judge_left = BALANCE_JUDGE_PERIODS;
        s->acc_done = s->acc_s = 0;
    }
    return next;
}

/* ---- the controller thread ---- */

/* The controller's look before it sleeps (as->lock held): stop, or a new AIT cycle. */
typedef struct period_look {
    crew__autosize *as;
    uint64_t seen_cycles;
} period_look;

static bool stop_or_cycle(void *ctx) {
    period_look *l = ctx;
    return l->as->stop || l->as->cycles_done != l->seen_cycles;
}

/* Sleep on as->wake for up to ms, or until crew_shutdown stops the controller or an AIT cycle
 * ends (seen_cycles: the cycles it has seen); as->lock held. */
static void wait_ms(crew__autosize *as, unsigned ms, uint64_t seen_cycles) {
    struct timespec until = crew__deadline_after_ms(ms);
    period_look look = {as, seen_cycles};
    crew__ec_wait_for(&as->wake, &as->lock, stop_or_cycle, &look, &until);
}

static void *controller_main(void *arg) {
    crew_pool *p = arg;
    crew__autosize *as = p->autosize;
    crew__name_thread(p, "as");
    crew__ait_state ait = {0};
    /* The first period mixes the threads' start with the work: like one right after a resize,
     * it is skipped (taken as the reference, an inflated one made the first probe fail). */
    crew__balance_state bal = {.settle = 1};
    uint64_t seen_cycles = 0;
    crew__timed_sum last = {0};
    double last_cpu = (double)crew__process_cpu_ns() * 1e-9;
    double last_t = (double)crew__now_ns() * 1e-9;
    unsigned cores = p->cpus;
    ait.pre_size = crew_size(p);
    const char *dbg = getenv("CREW_AUTOSIZE_DEBUG"); /* a trace of every decision on stderr */
    bool debug = dbg && *dbg && *dbg != '0';

    pthread_mutex_lock(&as->lock);
    while (!as->stop) {
        unsigned next;
        unsigned size = crew_size(p);
        if (as->mode == CREW_AUTOSIZE_AIT) {
            if (as->cycles_done == seen_cycles) {
                wait_ms(as, 1000, seen_cycles);
                continue;
            }
            seen_cycles = as->cycles_done;
            next = crew__ait_step(&ait, as->last_ait_ns, size, as->stride, as->min, as->max);
        } else {
            wait_ms(as, as->period_ms, seen_cycles);
            if (as->stop)
                break;
            double t = (double)crew__now_ns() * 1e-9;
            double cpu = (double)crew__process_cpu_ns() * 1e-9;
            crew__timed_sum sum;
            crew__stats_timed_sum(p, &sum);
            double dt = t - last_t;
            uint64_t waits = sum.waits - last.waits;
            uint64_t preemptions = sum.preemptions - last.preemptions;
            crew__balance_in in = {.period_s = dt,
                                   .completed = sum.tasks - last.tasks,
                                   .busy = (double)(sum.busy_ns - last.busy_ns) * 1e-9 / dt,
                                   .cpu = (cpu - last_cpu) / dt,
                                   .queued = crew__sched_queued(p),
                                   .size = size,
                                   .cores = cores,
                                   .preempted = -1.0};
            if (waits + preemptions >= BALANCE_MIN_SWITCHES)
                in.preempted = (double)preemptions / (double)(waits + preemptions);
            uint64_t busy_ns = sum.busy_ns - last.busy_ns;
            in.wait_ratio = busy_ns ? (double)(sum.wait_ns - last.wait_ns) / (double)busy_ns : -1.0;
            if (in.period_s <= 0)
                continue;
            next = crew__balance_step(&bal, &in, as->min, as->max);
            if (debug)
                fprintf(stderr,
                        "crew autosize: %.3fs done=%llu busy=%.2f cpu=%.2f preempted=%.2f "
                        "wait=%.2f queued=%zu size=%u -> %u (best %u @ %.0f/s, hold %u, "
                        "settle %u)\n",
                        in.period_s, (unsigned long long)in.completed, in.busy, in.cpu,
                        in.preempted, in.wait_ratio, in.queued, in.size, next, bal.best_size,
                        bal.best_x, bal.hold, bal.settle);
            if (next == size && in.completed < BALANCE_MIN_SAMPLES && in.queued != 0)
                continue; /* keep accumulating this sample */
            last_t = t;
            last_cpu = cpu;
            last = sum;
        }
        if (next != size) {
            pthread_mutex_unlock(&as->lock);
            int rc = crew_resize(p, next); /* the lazy mechanism; fails once the pool closes */
            pthread_mutex_lock(&as->lock);
            if (rc == CREW_ESHUTDOWN)
                break;
            as->resizes++;
        }
    }
    pthread_mutex_unlock(&as->lock);
    return NULL;
}

int crew__autosize_check(const crew_config *cfg) {
    if (cfg->autosize == CREW_AUTOSIZE_OFF)
        return CREW_OK;
    if (cfg->autosize != CREW_AUTOSIZE_AIT && cfg->autosize != CREW_AUTOSIZE_BALANCE)
        return crew__fail(CREW_EINVAL,
                          "crew_create: crew_config.autosize is %u; accepted: CREW_AUTOSIZE_OFF "
                          "(0), CREW_AUTOSIZE_AIT (1) or CREW_AUTOSIZE_BALANCE (2)",
                          cfg->autosize);
    unsigned min = cfg->min_threads ? cfg->min_threads : 1;
    if (cfg->max_threads == 0 || cfg->max_threads > CREW_MAX_THREADS)
        return crew__fail(CREW_EINVAL,
                          "crew_create: crew_config.max_threads is %u; automatic sizing needs a "
                          "maximum from 1 to CREW_MAX_THREADS (%u)",
                          cfg->max_threads, CREW_MAX_THREADS);
    if (min > cfg->max_threads)
        return crew__fail(CREW_EINVAL,
                          "crew_create: crew_config.min_threads (%u) is above max_threads (%u)",
                          min, cfg->max_threads);
    return CREW_OK;
}

int crew__autosize_init(crew_pool *p, const crew_config *cfg) {
    if (cfg->autosize == CREW_AUTOSIZE_OFF)
        return CREW_OK;
    crew__autosize *as = calloc(1, sizeof *as);
    if (!as)
        return crew__fail(CREW_ENOMEM, "crew_create: out of memory for the autosize controller");
    as->mode = cfg->autosize;
    as->min = cfg->min_threads ? cfg->min_threads : 1;
    as->max = cfg->max_threads;
    as->cycle = cfg->autosize_cycle ? cfg->autosize_cycle : 5;
    as->stride = cfg->autosize_stride ? cfg->autosize_stride : 2;
    as->period_ms = cfg->autosize_period_ms ? cfg->autosize_period_ms : 100;
    crew__ec_init(&as->wake);
    crew__lone_init(&as->thread);
    if (pthread_mutex_init(&as->lock, NULL) != 0) {
        free(as);
        return crew__fail(CREW_ENOMEM, "crew_create: the autosize controller's lock could not "
                                       "be made");
    }
    p->autosize = as;
    return CREW_OK;
}

int crew__autosize_start(crew_pool *p) {
    crew__autosize *as = p->autosize;
    if (!as)
        return CREW_OK;
    int rc = crew__spawn(&as->thread.thread, NULL, controller_main, p);
    if (rc != 0) /* crew_create cleans up through crew__autosize_stop/free */
        return crew__fail(CREW_EAGAIN,
                          "crew_create: pthread_create refused the autosize controller's thread: "
                          "%s",
                          strerror(rc));
    as->thread.started = true; /* before crew_create returns: no other thread looks yet */
    return CREW_OK;
}

void crew__autosize_sample(crew_pool *p, uint64_t idle_ns) {
    crew__autosize *as = p->autosize;
    if (as->mode != CREW_AUTOSIZE_AIT)
        return;
    pthread_mutex_lock(&as->lock);
    as->cycle_idle_ns += idle_ns;
    if (++as->cycle_count >= as->cycle) {
        as->last_ait_ns = (double)as->cycle_idle_ns / (double)as->cycle_count;
        as->cycle_idle_ns = 0;
        as->cycle_count = 0;
        as->cycles_done++;
        crew__ec_notify_locked(&as->wake, NULL, NULL);
    }
    pthread_mutex_unlock(&as->lock);
}

void crew__autosize_stop(crew_pool *p) {
    crew__autosize *as = p->autosize;
    if (as) /* concurrent shutdowns: one joins, all wait */
        crew__lone_stop(&as->thread, &as->lock, &as->stop, &as->wake);
}

void crew__autosize_free(crew_pool *p) {
    crew__autosize *as = p->autosize;
    if (!as)
        return;
    pthread_mutex_destroy(&as->lock);
    free(as);
    p->autosize = NULL;
}
