// The generator: distributions (statistically, fixed seeds), arrivals, reproducibility.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gen.h"
#include "trace.h"

namespace {

struct Moments {
    double mean, var;
};

Moments sample(const char *spec, int n, uint64_t seed)
{
    gen_dist d;
    char err[256];
    EXPECT_EQ(gen_dist_parse(spec, &d, err, sizeof err), 0) << err;
    gen_rng r;
    gen_rng_seed(&r, seed);
    double s = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        double x = gen_dist_sample(&d, &r);
        EXPECT_GE(x, 0);
        s += x;
        s2 += x * x;
    }
    double m = s / n;
    return {m, s2 / n - m * m};
}

void expect_moments(const char *spec, double mean, double var, double mtol, double vtol)
{
    for (uint64_t seed : {1ull, 42ull, 20261122ull}) {
        Moments m = sample(spec, 200000, seed);
        EXPECT_NEAR(m.mean / mean, 1.0, mtol) << spec << " seed " << seed;
        if (var > 0)
            EXPECT_NEAR(m.var / var, 1.0, vtol) << spec << " seed " << seed;
        else
            EXPECT_EQ(m.var, 0) << spec;
    }
}

TEST(SimGen, Distributions)
{
    expect_moments("const:500", 500, 0, 1e-12, 0);
    expect_moments("exp:500", 500, 500.0 * 500, 0.01, 0.03);
    expect_moments("uniform:100,900", 500, 800.0 * 800 / 12, 0.01, 0.02);
    // lognormal, mean 500 and sigma 1: variance 500^2 (e - 1); heavy tail, so looser.
    expect_moments("lognormal:500,1.0", 500, 500.0 * 500 * (std::exp(1.0) - 1), 0.02, 0.15);
    gen_dist d;
    char err[256];
    ASSERT_EQ(gen_dist_parse("lognormal:500,1.0", &d, err, sizeof err), 0);
    EXPECT_DOUBLE_EQ(gen_dist_mean(&d), 500);
    EXPECT_NEAR(gen_dist_var(&d), 500.0 * 500 * (std::exp(1.0) - 1), 1e-6);
}

TEST(SimGen, DistributionErrors)
{
    gen_dist d;
    char err[256];
    for (const char *bad : {"", "exp", "exp:", "exp:x", "exp:-1", "uniform:9,1", "uniform:1",
                            "lognormal:0,1", "pareto:3", "const:5,6", "exp:5x"}) {
        EXPECT_EQ(gen_dist_parse(bad, &d, err, sizeof err), -1) << bad;
        EXPECT_NE(std::string(err).find("--exec"), std::string::npos) << err;
    }
}

double mean_interarrival(int arrivals, double rate, double duration, uint64_t seed, long *count)
{
    gen_opts o{};
    o.arrivals = arrivals;
    o.rate = rate;
    o.duration_s = duration;
    gen_rng r;
    gen_rng_seed(&r, seed);
    gen_arrival_state st;
    gen_arrival_init(&st, &o, &r);
    long n = 0;
    double t = 0, last = 0;
    for (t = gen_arrival_next(&st, 0); t < duration; t = gen_arrival_next(&st, t)) {
        n++;
        last = t;
    }
    *count = n;
    return last / n;
}

TEST(SimGen, PoissonInterArrivalMean)
{
    for (uint64_t seed : {1ull, 7ull, 99ull}) {
        long n;
        double m = mean_interarrival(GEN_POISSON, 1000, 100, seed, &n);
        EXPECT_NEAR(m * 1000, 1.0, 0.02) << seed; // 100000 arrivals: sd of the mean ~0.3%
        EXPECT_NEAR(n, 100000, 1500);
    }
}

TEST(SimGen, BurstyAndDiurnalKeepTheMeanRate)
{
    long n;
    mean_interarrival(GEN_BURSTY, 1000, 400, 5, &n); // about 1000 on/off cycles
    EXPECT_NEAR(n / 400.0, 1000, 80);
    mean_interarrival(GEN_DIURNAL, 1000, 100, 5, &n); // whole periods: the sine averages out
    EXPECT_NEAR(n / 100.0, 1000, 20);
}

std::string gen_bytes(const char *dist, int arrivals, uint64_t seed)
{
    gen_opts o{};
    o.arrivals = arrivals;
    o.rate = 2000;
    o.duration_s = 2;
    o.apps = 3;
    o.seed = seed;
    o.command = "test";
    char err[256];
    EXPECT_EQ(gen_dist_parse(dist, &o.exec, err, sizeof err), 0);
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    EXPECT_GT(gen_write(&o, f), 0);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

TEST(SimGen, ReproducibleByteForByte)
{
    for (int a : {GEN_POISSON, GEN_BURSTY, GEN_DIURNAL}) {
        std::string x = gen_bytes("lognormal:500,1.0", a, 11), y = gen_bytes("lognormal:500,1.0", a, 11);
        EXPECT_EQ(x, y);
        EXPECT_NE(x, gen_bytes("lognormal:500,1.0", a, 12));
        // A different --exec leaves the arrival times alone (independent streams).
        std::string z = gen_bytes("const:5", a, 11);
        EXPECT_EQ(std::count(x.begin(), x.end(), '\n'), std::count(z.begin(), z.end(), '\n'));
    }
}

TEST(SimGen, OutputParsesStrictlyWithAllApps)
{
    std::string s = gen_bytes("exp:500", GEN_BURSTY, 3);
    FILE *f = fmemopen(const_cast<char *>(s.data()), s.size(), "r");
    trace_reader r;
    trace_init_stream(&r, f, "gen", 1);
    trace_rec rec;
    int rc;
    long n = 0;
    unsigned seen = 0;
    while ((rc = trace_next(&r, &rec)) == 1) {
        n++;
        EXPECT_EQ(rec.request_id, (uint64_t)n);
        EXPECT_LT(rec.app_id, 3u);
        seen |= 1u << rec.app_id;
        EXPECT_LT(rec.start_us, 2000000u);
    }
    EXPECT_EQ(rc, 0) << r.err;
    EXPECT_EQ(seen, 7u);
    EXPECT_GT(n, 3000);
    trace_close(&r);
    fclose(f);
}

} // namespace
