/* gen.c -- synthetic trace generator. */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void gen_rng_seed(gen_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t gen_rng_next(gen_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double gen_rng_uniform(gen_rng *r)
{
    /* 53 random bits, shifted by half a step: strictly inside (0, 1). */
    return ((double)(gen_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(gen_rng *r)
{
    /* Box-Muller, one value per call (simpler state; speed does not matter here). */
    double u1 = gen_rng_uniform(r), u2 = gen_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int parse_num(const char *s, char **end, double *out)
{
    double v = strtod(s, end);
    if (*end == s || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int gen_dist_parse(const char *s, gen_dist *d, char *err, size_t errcap)
{
    static const struct { const char *name; int kind, nargs; } kinds[] = {
        {"const", GEN_CONST, 1}, {"exp", GEN_EXP, 1}, {"lognormal", GEN_LOGNORMAL, 2},
        {"uniform", GEN_UNIFORM, 2}};
    const char *colon = strchr(s, ':');
    for (size_t k = 0; colon && k < sizeof kinds / sizeof kinds[0]; k++) {
        if (strlen(kinds[k].name) != (size_t)(colon - s) ||
            strncmp(s, kinds[k].name, (size_t)(colon - s)) != 0)
            continue;
        double v[2] = {0, 0};
        const char *p = colon + 1;
        char *end = (char *)p;
        for (int i = 0; i < kinds[k].nargs; i++) {
            if (parse_num(p, &end, &v[i]) != 0 || (i + 1 < kinds[k].nargs && *end != ',')) {
                snprintf(err, errcap, "--exec %s: expected %s", s,
                         kinds[k].nargs == 1 ? "NAME:MEAN_US" : "NAME:A,B");
                return -1;
            }
            p = end + 1;
        }
        if (*end != '\0') {
            snprintf(err, errcap, "--exec %s: unexpected \"%s\"", s, end);
            return -1;
        }
        d->kind = kinds[k].kind;
        d->a = v[0];
        d->b = v[1];
        const double max = 1e9; /* 1000 s per task is plenty */
        if (d->a < 0 || d->a > max || (kinds[k].nargs == 2 && (d->b < 0 || d->b > max))) {
            snprintf(err, errcap, "--exec %s: values must be in 0..%g us", s, max);
            return -1;
        }
        if (d->kind == GEN_LOGNORMAL && (d->a <= 0 || d->b > 5)) {
            snprintf(err, errcap, "--exec %s: lognormal needs a mean > 0 and a sigma in 0..5", s);
            return -1;
        }
        if (d->kind == GEN_UNIFORM && d->b < d->a) {
            snprintf(err, errcap, "--exec %s: uniform:A,B needs A <= B", s);
            return -1;
        }
        return 0;
    }
    snprintf(err, errcap, "--exec %s: expected const:M, exp:M, lognormal:M,SIGMA or "
             "uniform:A,B (microseconds)", s);
    return -1;
}

double gen_dist_sample(const gen_dist *d, gen_rng *r)
{
    switch (d->kind) {
    case GEN_EXP:
        return -d->a * log(gen_rng_uniform(r));
    case GEN_LOGNORMAL: {
        /* Parameterised by its mean: mu = ln(mean) - sigma^2 / 2. */
        double mu = log(d->a) - d->b * d->b / 2;
        return exp(mu + d->b * normal(r));
    }
    case GEN_UNIFORM:
        return d->a + (d->b - d->a) * gen_rng_uniform(r);
    default:
        return d->a;
    }
}

double gen_dist_mean(const gen_dist *d)
{
    return d->kind == GEN_UNIFORM ? (d->a + d->b) / 2 : d->a;
}

double gen_dist_var(const gen_dist *d)
{
    switch (d->kind) {
    case GEN_EXP:
        return d->a * d->a;
    case GEN_LOGNORMAL:
        return d->a * d->a * (exp(d->b * d->b) - 1);
    case GEN_UNIFORM:
        return (d->b - d->a) * (d->b - d->a) / 12;
    default:
        return 0;
    }
}

static double expo(gen_rng *r, double mean) { return -mean * log(gen_rng_uniform(r)); }

void gen_arrival_init(gen_arrival_state *st, const gen_opts *o, gen_rng *rng)
{
    st->rng = rng;
    st->o = o;
    st->on = 0;
    st->switch_t = o->arrivals == GEN_BURSTY ? expo(rng, GEN_BURST_OFF_S) : INFINITY;
}

double gen_arrival_next(gen_arrival_state *st, double t)
{
    const gen_opts *o = st->o;
    if (o->arrivals == GEN_BURSTY) {
        /* Two-state Markov-modulated Poisson process; memorylessness lets us restart the
         * exponential draw at every state change. */
        for (;;) {
            double rate = o->rate * (st->on ? GEN_BURST_HIGH : GEN_BURST_LOW);
            double next = t + expo(st->rng, 1.0 / rate);
            if (next < st->switch_t)
                return next;
            t = st->switch_t;
            st->on = !st->on;
            st->switch_t = t + expo(st->rng, st->on ? GEN_BURST_ON_S : GEN_BURST_OFF_S);
        }
    }
    if (o->arrivals == GEN_DIURNAL) {
        /* Thinning (Lewis and Shedler): candidates at the peak rate, kept with rate(t)/peak. */
        double peak = o->rate * (1 + GEN_DIURNAL_DEPTH);
        double period = o->period_s > 0 ? o->period_s : o->duration_s;
        for (;;) {
            t += expo(st->rng, 1.0 / peak);
            double rt = o->rate * (1 + GEN_DIURNAL_DEPTH * sin(6.283185307179586 * t / period));
            if (gen_rng_uniform(st->rng) * peak <= rt)
                return t;
        }
    }
    return t + expo(st->rng, 1.0 / o->rate);
}

long long gen_write(const gen_opts *o, FILE *f)
{
    gen_rng arr, ex, app;
    /* Independent streams, so changing --exec does not move the arrival times. */
    gen_rng_seed(&arr, o->seed);
    gen_rng_seed(&ex, o->seed ^ 0x5851f42d4c957f2dull);
    gen_rng_seed(&app, o->seed ^ 0x2545f4914f6cdd1dull);
    gen_arrival_state st;
    gen_arrival_init(&st, o, &arr);
    if (fprintf(f, "# %s\n%s\n", o->command ? o->command : "crew-sim gen", "request_id,app_id,"
                "start_us,exec_us") < 0)
        return -1;
    long long n = 0;
    for (double t = gen_arrival_next(&st, 0); t < o->duration_s; t = gen_arrival_next(&st, t)) {
        double e = gen_dist_sample(&o->exec, &ex);
        unsigned a = o->apps > 1 ? (unsigned)(gen_rng_next(&app) % o->apps) : 0;
        if (fprintf(f, "%lld,%u,%llu,%llu\n", n + 1, a, (unsigned long long)llround(t * 1e6),
                    (unsigned long long)llround(e)) < 0)
            return -1;
        n++;
    }
    return fflush(f) == 0 ? n : -1;
}
