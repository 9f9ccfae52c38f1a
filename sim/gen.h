/*
 * gen.h -- synthetic traces: seeded arrival processes and execution-time distributions.
 * Same options and seed give the same bytes (own RNG, integer microseconds; the samples use
 * libm log/exp/sin, identical wherever libm rounds them the same way, as glibc does).
 */
#ifndef CREW_SIM_GEN_H
#define CREW_SIM_GEN_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xoshiro256** seeded by splitmix64: fast, good, and fully specified (reproducible). */
typedef struct gen_rng {
    uint64_t s[4];
} gen_rng;

void gen_rng_seed(gen_rng *r, uint64_t seed);
uint64_t gen_rng_next(gen_rng *r);
double gen_rng_uniform(gen_rng *r); /* in (0, 1): never 0, so log() is safe */

enum gen_dist_kind { GEN_CONST, GEN_EXP, GEN_LOGNORMAL, GEN_UNIFORM };

/* An execution-time distribution, in microseconds. */
typedef struct gen_dist {
    int kind;
    double a, b; /* const: a. exp: mean a. lognormal: mean a, sigma b. uniform: [a, b] */
} gen_dist;

/* Parse "const:500", "exp:500", "lognormal:500,1.0", "uniform:100,900". Returns 0, or -1 with
 * a message in err. */
int gen_dist_parse(const char *s, gen_dist *d, char *err, size_t errcap);
/* One sample (a real number of microseconds, >= 0). */
double gen_dist_sample(const gen_dist *d, gen_rng *r);
/* The distribution's exact mean and variance (for the tests and the trace header). */
double gen_dist_mean(const gen_dist *d);
double gen_dist_var(const gen_dist *d);

enum gen_arrivals { GEN_POISSON, GEN_BURSTY, GEN_DIURNAL };

typedef struct gen_opts {
    int arrivals;        /* enum gen_arrivals */
    double rate;         /* mean arrivals per second */
    double duration_s;   /* trace length in seconds */
    double period_s;     /* diurnal: length of one "day" (default: duration) */
    gen_dist exec;
    unsigned apps;       /* application IDs 0..apps-1 */
    uint64_t seed;
    const char *command; /* written to the first comment line (how to regenerate) */
} gen_opts;

/* Write a trace to f. Returns the number of tasks, or -1 on a write error. */
long long gen_write(const gen_opts *o, FILE *f);

/* The arrival process alone: the next start time (seconds) after t. Exposed for the tests. */
typedef struct gen_arrival_state {
    gen_rng *rng;
    const gen_opts *o;
    int on;          /* bursty: in a burst */
    double switch_t; /* bursty: when the state changes next */
} gen_arrival_state;
void gen_arrival_init(gen_arrival_state *st, const gen_opts *o, gen_rng *rng);
double gen_arrival_next(gen_arrival_state *st, double t);

/* Bursty: bursts of 3.4x the rate for 100 ms on average, 0.2x for 300 ms between (mean: rate). */
#define GEN_BURST_ON_S 0.1
#define GEN_BURST_OFF_S 0.3
#define GEN_BURST_HIGH 3.4
#define GEN_BURST_LOW 0.2
/* Diurnal: rate * (1 + 0.8 sin(2 pi t / period)). */
#define GEN_DIURNAL_DEPTH 0.8

#ifdef __cplusplus
}
#endif
#endif
