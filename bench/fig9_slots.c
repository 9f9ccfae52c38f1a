/*
 * fig9_slots.c -- how a group (wait handle) gets its slot (Jendersie et al., Fig. 9).
 *
 * The paper keeps groups in an array of slots, each an open-task count and a generation counter
 * (§III-D), and compares two searches for a free slot (Fig. 4): linearly from the start (compact)
 * and in steps of 8 slots, so that groups open at once sit on different cache lines and threads
 * counting down neighbouring groups do not fight over one line. It found 0.1% between them.
 * crew searches not at all: a free slot comes off a tagged Treiber stack, or off the worker's own
 * cache of free slots (src/group.c).
 *
 * T threads (-t; more than the cores, as the paper runs them) each keep G groups open at once
 * (-g) for a fixed time, K empty tasks each (-k). One op is one group's whole life: claim a
 * slot, count K tasks in, count them down as they run, wait (see the count reach 0), release the
 * slot. Strategies, interleaved run by run in one process:
 *   linear     Jendersie et al., Fig. 4, first loop: scan from slot 0 for a count of 0, claim it
 *              with a CAS (generation + 1, count K). The K tasks run on the opening thread (an
 *              indirect call and an atomic decrement each); the wait is the paper's check (count 0
 *              or generation moved on); the last decrement frees the slot. 8-byte slots, packed.
 *   spread     the same, the scan in steps of 8 slots (Fig. 4, second loop, wrapping to the next
 *              offset), so up to capacity/8 open groups each have a cache line of their own.
 *   stack      the same slot work, the free slot popped off a tagged Treiber stack (crew's
 *              design, emulated here without its per-worker cache): no search at all.
 *   crew       crew's real handles from T threads outside the pool: crew_enqueue_tasks(K tasks,
 *              &group), later crew_wait(group), on a pool of one worker per core. This also
 *              queues the tasks and runs them on workers (or the waiting caller), which the
 *              three emulations skip: it is the whole price of a group, not the slot map's alone.
 *   crew-task  the same T loops run as tasks on a pool of T workers: groups come from the
 *              worker's own slot cache and their tasks go to its own deque (spawn-and-wait).
 *
 * Usage: fig9_slots [-t 1,2,4,8,16] [-g 1,8,64] [-k tasks] [-r runs] [-d seconds] [-q]
 *                   [-s linear,spread,stack,crew,crew-task] [-c out.csv]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"
#include "bench_util.h"

#define MAX_LIST 16
#define LINE 64

enum strategy { LINEAR, SPREAD, STACK, CREW, CREW_TASK, NSTRAT };
static const char *const strat_name[NSTRAT] = {"linear", "spread", "stack", "crew", "crew-task"};

static void die(const char *what, int rc) {
    fprintf(stderr, "fig9_slots: %s: %s\n", what, rc ? crew_strerror(rc) : "failed");
    exit(1);
}

static void empty_task(void *arg) { (void)arg; }
/* Called through a volatile pointer so the emulated tasks are real calls, as crew's are. */
static void (*volatile task_fn)(void *) = empty_task;

/* ---------------------------------------------------------------------------------------------
 * The emulated slot map: gen << 32 | open count per slot, as in crew (one load tells a waiter
 * both). For STACK, a tagged Treiber stack of free slots (tag << 32 | slot + 1; 0 = empty).
 * ------------------------------------------------------------------------------------------- */
typedef struct slotmap {
    _Atomic uint64_t *slot; /* cap words, cache-line aligned, packed */
    _Atomic uint32_t *next; /* STACK: free-list links (slot + 1) */
    uint32_t cap;           /* a multiple of 8 */
    _Alignas(LINE) _Atomic uint64_t head; /* STACK: its own line, like crew's free_head */
    char pad_[LINE - sizeof(uint64_t)];
} slotmap;

static slotmap *slotmap_new(uint32_t cap) {
    slotmap *m = aligned_alloc(LINE, sizeof *m);
    if (!m)
        return NULL;
    m->cap = cap;
    m->slot = aligned_alloc(LINE, (size_t)cap * sizeof *m->slot);
    m->next = malloc((size_t)cap * sizeof *m->next);
    if (!m->slot || !m->next) {
        free(m->slot);
        free(m->next);
        free(m);
        return NULL;
    }
    for (uint32_t i = 0; i < cap; i++) {
        atomic_init(&m->slot[i], (uint64_t)1 << 32); /* generation 1, free */
        atomic_init(&m->next[i], i + 1 < cap ? i + 2 : 0u);
    }
    atomic_init(&m->head, 1u); /* slot 0 first, then 1, 2, ... */
    return m;
}

static void slotmap_free(slotmap *m) {
    free(m->slot);
    free(m->next);
    free(m);
}

/* The i-th slot the spread search visits: 0, 8, 16, ..., then 1, 9, 17, ... */
static inline uint32_t spread_index(uint32_t i, uint32_t cap) {
    uint64_t x = (uint64_t)i * 8;
    return (uint32_t)(x % cap + x / cap);
}

/* Claim a slot with a count of 0 by search; returns its index, *gen the new generation. */
static uint32_t claim_search(slotmap *m, int spread, uint32_t k, uint32_t *gen) {
    for (;;) { /* all full (cannot happen: cap > open groups): scan again */
        for (uint32_t i = 0; i < m->cap; i++) {
            uint32_t s = spread ? spread_index(i, m->cap) : i;
            uint64_t w = atomic_load_explicit(&m->slot[s], memory_order_relaxed);
            if ((uint32_t)w != 0)
                continue;
            uint64_t nw = ((w >> 32) + 1) << 32 | k;
            /* Acquire: the previous group's tasks happen-before this one (its last decrement
             * released); a failed CAS means another thread took it: search on. */
            if (atomic_compare_exchange_strong_explicit(&m->slot[s], &w, nw, memory_order_acquire,
                                                        memory_order_relaxed)) {
                *gen = (uint32_t)(nw >> 32);
                return s;
            }
        }
    }
}

static uint32_t claim_stack(slotmap *m, uint32_t k, uint32_t *gen) {
    uint64_t head = atomic_load_explicit(&m->head, memory_order_acquire);
    for (;;) {
        uint32_t s1 = (uint32_t)head;
        if (s1 == 0) { /* cannot happen: cap > open groups */
            head = atomic_load_explicit(&m->head, memory_order_acquire);
            continue;
        }
        uint32_t next = atomic_load_explicit(&m->next[s1 - 1], memory_order_relaxed);
        uint64_t nh = ((head >> 32) + 1) << 32 | next; /* the tag defeats ABA */
        if (atomic_compare_exchange_weak_explicit(&m->head, &head, nh, memory_order_acquire,
                                                  memory_order_acquire)) {
            uint32_t s = s1 - 1;
            /* The slot is ours: no CAS needed to set its count, as in crew__group_open. */
            uint64_t w = atomic_load_explicit(&m->slot[s], memory_order_relaxed);
            uint64_t nw = ((w >> 32) + 1) << 32 | k;
            atomic_store_explicit(&m->slot[s], nw, memory_order_release);
            *gen = (uint32_t)(nw >> 32);
            return s;
        }
    }
}

static void push_free(slotmap *m, uint32_t s) {
    uint64_t head = atomic_load_explicit(&m->head, memory_order_relaxed);
    do
        atomic_store_explicit(&m->next[s], (uint32_t)head, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&m->head, &head,
                                                  (head & ~(uint64_t)UINT32_MAX) | (s + 1),
                                                  memory_order_release, memory_order_relaxed));
}

/* Run the group's k tasks, each counting down, then the paper's wait check. */
static void finish_group(slotmap *m, int stack, uint32_t s, uint32_t gen, uint32_t k) {
    for (uint32_t i = 0; i < k; i++) {
        task_fn(NULL);
        /* Release: the task's effects reach the waiter; acquire: the last one sees them all. */
        uint64_t prev = atomic_fetch_sub_explicit(&m->slot[s], 1, memory_order_acq_rel);
        if ((uint32_t)(prev >> 32) != gen || (uint32_t)prev == 0) {
            fprintf(stderr, "fig9_slots: slot %u lost its group (bug)\n", s);
            exit(1);
        }
        if (stack && (uint32_t)prev == 1)
            push_free(m, s);
    }
    uint64_t w = atomic_load_explicit(&m->slot[s], memory_order_acquire);
    if ((uint32_t)w != 0 && (uint32_t)(w >> 32) == gen) {
        fprintf(stderr, "fig9_slots: group %u still open after its tasks (bug)\n", s);
        exit(1);
    }
}

/* ---------------------------------------------------------------------------------------------
 * One timed run: T threads (or loop tasks), a start line, a stop flag.
 * ------------------------------------------------------------------------------------------- */
typedef struct run {
    enum strategy strat;
    unsigned open, k;
    slotmap *map;
    crew_pool *pool;
    atomic_uint ready;
    _Alignas(LINE) atomic_int go;
    _Alignas(LINE) atomic_int stop;
} run;

typedef struct worker {
    _Alignas(LINE) run *r;
    uint64_t ops; /* groups finished before the stop */
} worker;

static void start_line(run *r) {
    atomic_fetch_add(&r->ready, 1u);
    while (!atomic_load_explicit(&r->go, memory_order_acquire))
        sched_yield(); /* threads outnumber cores: let the others reach the line */
}

static void emulated_loop(worker *w) {
    run *r = w->r;
    unsigned g = r->open, head = 0, n = 0;
    uint32_t *slot = malloc(g * sizeof *slot), *gen = malloc(g * sizeof *gen);
    if (!slot || !gen)
        die("out of memory", 0);
    int stack = r->strat == STACK;
    start_line(r);
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        if (n == g) { /* the window is full: finish the oldest group */
            finish_group(r->map, stack, slot[head], gen[head], r->k);
            n--;
            w->ops++;
        }
        slot[head] = stack ? claim_stack(r->map, r->k, &gen[head])
                           : claim_search(r->map, r->strat == SPREAD, r->k, &gen[head]);
        n++;
        head = (head + 1) % g;
    }
    for (unsigned i = 0; i < n; i++) { /* oldest first; not counted */
        unsigned j = (head + g - n + i) % g;
        finish_group(r->map, stack, slot[j], gen[j], r->k);
    }
    free(slot);
    free(gen);
}

static void crew_loop(worker *w) {
    run *r = w->r;
    unsigned g = r->open, k = r->k, head = 0, n = 0;
    crew_handle *h = calloc(g, sizeof *h);
    crew_task *t = calloc((size_t)g * k, sizeof *t);
    if (!h || !t)
        die("out of memory", 0);
    start_line(r);
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        if (n == g) { /* the window is full: wait for the oldest group */
            int rc = crew_wait(r->pool, h[head]);
            if (rc != CREW_OK)
                die("crew_wait", rc);
            n--;
            w->ops++;
        }
        crew_task *tk = &t[(size_t)head * k]; /* its previous group finished: free to reuse */
        memset(tk, 0, k * sizeof *tk);
        for (unsigned i = 0; i < k; i++)
            tk[i].fn = empty_task;
        h[head] = CREW_HANDLE_NONE;
        int rc = crew_enqueue_tasks(r->pool, tk, k, &h[head]);
        if (rc != CREW_OK)
            die("crew_enqueue_tasks", rc);
        n++;
        head = (head + 1) % g;
    }
    for (unsigned i = 0; i < n; i++) { /* not counted */
        int rc = crew_wait(r->pool, h[(head + g - n + i) % g]);
        if (rc != CREW_OK)
            die("crew_wait", rc);
    }
    free(h);
    free(t);
}

static void *thread_main(void *arg) {
    worker *w = arg;
    if (w->r->strat == CREW || w->r->strat == CREW_TASK)
        crew_loop(w);
    else
        emulated_loop(w);
    return NULL;
}

static void task_main(void *arg) { thread_main(arg); }

/* One run; returns ops/s, *ops the groups finished, *secs the time. */
static double one_run(enum strategy strat, unsigned threads, unsigned open, unsigned k,
                      double secs, crew_pool *crew, crew_pool *task_pool, uint64_t *ops,
                      double *took) {
    run *r = aligned_alloc(LINE, sizeof *r);
    worker *w = aligned_alloc(LINE, threads * sizeof *w);
    pthread_t *th = malloc(threads * sizeof *th);
    crew_task *loops = calloc(threads, sizeof *loops);
    if (!r || !w || !th || !loops)
        die("out of memory", 0);
    memset(r, 0, sizeof *r);
    r->strat = strat, r->open = open, r->k = k;
    atomic_init(&r->ready, 0u);
    atomic_init(&r->go, 0);
    atomic_init(&r->stop, 0);
    r->map = NULL;
    if (strat <= STACK) {
        /* Room for 8 slots per open group, so the spread search gives each its own line. */
        uint32_t cap = (threads * open * 8 + 63) / 64 * 64;
        r->map = slotmap_new(cap < 512 ? 512 : cap);
        if (!r->map)
            die("out of memory", 0);
    }
    r->pool = strat == CREW_TASK ? task_pool : crew;
    for (unsigned i = 0; i < threads; i++) {
        w[i].r = r;
        w[i].ops = 0;
    }
    crew_handle loop_group = CREW_HANDLE_NONE;
    if (strat == CREW_TASK) { /* one loop per worker: each waits at the start line */
        for (unsigned i = 0; i < threads; i++)
            loops[i].fn = task_main, loops[i].arg = &w[i];
        int rc = crew_enqueue_tasks(task_pool, loops, threads, &loop_group);
        if (rc != CREW_OK)
            die("crew_enqueue_tasks (loops)", rc);
    } else {
        for (unsigned i = 0; i < threads; i++)
            if (pthread_create(&th[i], NULL, thread_main, &w[i]) != 0)
                die("pthread_create", 0);
    }
    double limit = now_s() + 10;
    while (atomic_load(&r->ready) < threads) {
        if (now_s() > limit)
            die("threads did not reach the start line in 10 s", 0);
        sched_yield();
    }
    double t0 = now_s();
    atomic_store_explicit(&r->go, 1, memory_order_release);
    struct timespec d = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&d, NULL);
    atomic_store(&r->stop, 1);
    double t1 = now_s();
    if (strat == CREW_TASK) {
        int rc = crew_wait(task_pool, loop_group);
        if (rc != CREW_OK)
            die("crew_wait (loops)", rc);
    } else {
        for (unsigned i = 0; i < threads; i++)
            pthread_join(th[i], NULL);
    }
    uint64_t total = 0;
    for (unsigned i = 0; i < threads; i++)
        total += w[i].ops;
    if (r->map)
        slotmap_free(r->map);
    free(r);
    free(w);
    free(th);
    free(loops);
    *ops = total;
    *took = t1 - t0;
    return (double)total / (t1 - t0);
}

static int parse_list(char *s, unsigned *out, unsigned lo, unsigned hi) {
    int n = 0;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        long v = atol(tok);
        if (n == MAX_LIST || v < (long)lo || v > (long)hi)
            return -1;
        out[n++] = (unsigned)v;
    }
    return n;
}

int main(int argc, char **argv) {
    unsigned threads[MAX_LIST] = {1, 2, 4, 8, 16}, opens[MAX_LIST] = {1, 8, 64};
    int nthreads = 5, nopens = 3, runs = 0, quick = 0, use[NSTRAT] = {1, 1, 1, 1, 1}, opt;
    unsigned k = 4;
    double secs = 0;
    const char *csv = NULL;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "t:g:k:r:d:qs:c:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            if ((nthreads = parse_list(optarg, threads, 1, 1024)) < 1)
                goto usage;
            break;
        case 'g':
            if ((nopens = parse_list(optarg, opens, 1, 4096)) < 1)
                goto usage;
            break;
        case 'k': k = (unsigned)atoi(optarg); break;
        case 'r': runs = atoi(optarg); break;
        case 'd': secs = atof(optarg); break;
        case 'q': quick = 1; break;
        case 's':
            memset(use, 0, sizeof use);
            for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
                int j = 0;
                while (j < NSTRAT && strcmp(tok, strat_name[j]) != 0)
                    j++;
                if (j == NSTRAT)
                    goto usage;
                use[j] = 1;
            }
            break;
        case 'c': csv = optarg; break;
        default:
        usage:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: %s [-t 1,2,4,8,16] [-g 1,8,64] [-k tasks] [-r runs] [-d seconds] [-q]\n"
                    "          [-s linear,spread,stack,crew,crew-task] [-c out.csv]\n"
                    "  -t threads opening groups at once   -g groups each keeps open at once\n"
                    "  -k empty tasks per group (4)        -r runs (5; 3 with -q)\n"
                    "  -d seconds per run (0.08; 0.005 with -q)  -q quick\n"
                    "  -h, --help this text\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (runs == 0)
        runs = quick ? 3 : 5;
    if (secs == 0)
        secs = quick ? 0.005 : 0.08;
    if (k < 1 || k > 1024 || runs < 1 || runs > 1000 || secs < 0.001 || secs > 60) {
        fprintf(stderr, "fig9_slots: -k 1..1024, -r 1..1000, -d 0.001..60\n");
        return 2;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    FILE *out = NULL;
    if (csv) {
        if (!(out = fopen(csv, "w"))) {
            perror(csv);
            return 1;
        }
        fprintf(out, "threads,open,tasks,strategy,run,ops,seconds,ops_per_s\n");
    }
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = (unsigned)cores;
    crew_pool *crew = NULL;
    int rc = crew_create(&crew, &cfg);
    if (rc != CREW_OK)
        die("crew_create", rc);

    printf("slot search (Jendersie et al., Fig. 9): groups opened, filled with %u empty tasks, "
           "counted down, waited for and released; %.3g s per run, %d runs, %ld online cores\n",
           k, secs, runs, cores);
    printf("Mops/s = million groups through their whole life per second, all threads together; "
           "median (min..max)\n");
    printf("  linear    Jendersie et al., Fig. 4: linear search from slot 0, CAS claim, packed "
           "8-byte slots; tasks run inline\n");
    printf("  spread    Jendersie et al., Fig. 4: search in steps of 8 slots (a cache line each); "
           "same work\n");
    printf("  stack     no search: a tagged Treiber free stack (crew's design, emulated, no "
           "per-thread cache); same work\n");
    printf("  crew      crew_enqueue_tasks(&group) + crew_wait from threads outside a pool of "
           "%ld workers: also queues and runs the tasks\n",
           cores);
    printf("  crew-task the loops as tasks on a pool of T workers: per-worker slot cache and "
           "deque\n");
    printf("  spr/lin   spread's median / linear's (> 1: spread is faster)\n");
    printf("%7s %5s", "threads", "open");
    for (int s = 0; s < NSTRAT; s++)
        if (use[s])
            printf(" %22s", strat_name[s]);
    printf(" %8s\n", use[LINEAR] && use[SPREAD] ? "spr/lin" : "");
    fflush(stdout);

    double *v[NSTRAT];
    for (int s = 0; s < NSTRAT; s++)
        if (!(v[s] = calloc((size_t)runs, sizeof *v[s])))
            die("out of memory", 0);
    for (int ti = 0; ti < nthreads; ti++) {
        crew_pool *task_pool = NULL;
        if (use[CREW_TASK]) {
            cfg.threads = threads[ti];
            if ((rc = crew_create(&task_pool, &cfg)) != CREW_OK)
                die("crew_create", rc);
        }
        for (int gi = 0; gi < nopens; gi++) {
            for (int r = 0; r < runs; r++)
                for (int s = 0; s < NSTRAT; s++) {
                    if (!use[s])
                        continue;
                    uint64_t ops;
                    double took;
                    v[s][r] = one_run((enum strategy)s, threads[ti], opens[gi], k, secs, crew,
                                      task_pool, &ops, &took);
                    if (out)
                        fprintf(out, "%u,%u,%u,%s,%d,%llu,%.6f,%.1f\n", threads[ti], opens[gi],
                                k, strat_name[s], r, (unsigned long long)ops, took, v[s][r]);
                }
            printf("%7u %5u", threads[ti], opens[gi]);
            for (int s = 0; s < NSTRAT; s++) {
                if (!use[s])
                    continue;
                qsort(v[s], (size_t)runs, sizeof *v[s], cmp_double);
                printf(" %7.3f (%6.3f..%6.3f)", v[s][runs / 2] / 1e6, v[s][0] / 1e6,
                       v[s][runs - 1] / 1e6);
            }
            if (use[LINEAR] && use[SPREAD]) /* the two medians, as printed beside it */
                printf(" %8.3f", v[LINEAR][runs / 2] > 0
                                     ? v[SPREAD][runs / 2] / v[LINEAR][runs / 2] : 0.0);
            printf("\n");
            fflush(stdout);
        }
        if (task_pool && (rc = crew_destroy(task_pool)) != CREW_OK)
            die("crew_destroy", rc);
    }
    for (int s = 0; s < NSTRAT; s++)
        free(v[s]);
    if ((rc = crew_destroy(crew)) != CREW_OK)
        die("crew_destroy", rc);
    if (out && fclose(out) != 0) {
        perror(csv);
        return 1;
    }
    return 0;
}
