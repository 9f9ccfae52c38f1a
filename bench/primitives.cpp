// primitives.cpp -- parallel sum and filter over n doubles: crew_parallel_reduce/filter against a
// sequential loop, OpenMP `parallel for`, oneTBB parallel_reduce/parallel_for, and BOLSTER's
// thread-per-request style (T threads created per call; Jendersie et al., Fig. 5), side by side,
// for several sizes. Reports the median time per call (min..max) and each one's ratio to crew.
//
// Usage: bench_primitives [-s 10,1000,100000,10000000,100000000] [-r repeats] [-t threads]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <getopt.h>
#include <map>
#include <pthread.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "bench_util.hpp"
#include "crew.h"

#ifdef CREW_HAVE_OPENMP
#include <omp.h>
#endif
#ifdef CREW_HAVE_TBB
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_arena.h>
#endif

using benchutil::Stat;
using benchutil::stat;

namespace {

unsigned g_threads = 2;
const double *g_in;
double *g_out;

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

inline bool keep(double x) { return x > 0.5; }

// ---- crew ----
crew_pool *g_pool;
void fold(size_t b, size_t e, void *acc, void *) {
    double s = *static_cast<double *>(acc);
    for (size_t i = b; i < e; i++)
        s += g_in[i];
    *static_cast<double *>(acc) = s;
}
void combine(void *acc, const void *o, void *) {
    *static_cast<double *>(acc) += *static_cast<const double *>(o);
}
int pred(const void *x, void *) { return keep(*static_cast<const double *>(x)); }

double crew_sum(size_t n) {
    double r = 0;
    if (crew_parallel_reduce(g_pool, 0, n, 0, &r, sizeof r, fold, combine, nullptr) != CREW_OK)
        std::abort();
    return r;
}
size_t crew_filter(size_t n) {
    size_t k = 0;
    if (crew_parallel_filter(g_pool, g_in, n, sizeof(double), g_out, &k, pred, nullptr) != CREW_OK)
        std::abort();
    return k;
}

// ---- sequential ----
double seq_sum(size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += g_in[i];
    return s;
}
size_t seq_filter(size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (keep(g_in[i]))
            g_out[k++] = g_in[i];
    return k;
}

// ---- thread-per-request (BOLSTER): T threads per call, static partition ----
struct Part {
    size_t b, e;
    double sum;
    size_t kept;
    double *out;
};
void *sum_part(void *a) {
    auto *p = static_cast<Part *>(a);
    double s = 0;
    for (size_t i = p->b; i < p->e; i++)
        s += g_in[i];
    p->sum = s;
    return nullptr;
}
void *count_part(void *a) {
    auto *p = static_cast<Part *>(a);
    size_t k = 0;
    for (size_t i = p->b; i < p->e; i++)
        k += keep(g_in[i]);
    p->kept = k;
    return nullptr;
}
void *copy_part(void *a) {
    auto *p = static_cast<Part *>(a);
    double *o = p->out;
    for (size_t i = p->b; i < p->e; i++)
        if (keep(g_in[i]))
            *o++ = g_in[i];
    return nullptr;
}
void tpr_run(std::vector<Part> &parts, void *(*fn)(void *)) {
    std::vector<pthread_t> th(parts.size());
    for (size_t t = 1; t < parts.size(); t++)
        pthread_create(&th[t], nullptr, fn, &parts[t]);
    fn(&parts[0]); // the caller takes one part, as in Jendersie et al., Fig. 5
    for (size_t t = 1; t < parts.size(); t++)
        pthread_join(th[t], nullptr);
}
std::vector<Part> partition(size_t n) {
    std::vector<Part> parts(g_threads);
    for (unsigned t = 0; t < g_threads; t++)
        parts[t] = Part{n * t / g_threads, n * (t + 1) / g_threads, 0, 0, nullptr};
    return parts;
}
double tpr_sum(size_t n) {
    auto parts = partition(n);
    tpr_run(parts, sum_part);
    double s = 0;
    for (auto &p : parts)
        s += p.sum;
    return s;
}
size_t tpr_filter(size_t n) {
    auto parts = partition(n);
    tpr_run(parts, count_part);
    size_t off = 0;
    for (auto &p : parts) {
        p.out = g_out + off;
        off += p.kept;
    }
    tpr_run(parts, copy_part);
    return off;
}

#ifdef CREW_HAVE_OPENMP
double omp_sum(size_t n) {
    double s = 0;
#pragma omp parallel for num_threads(g_threads) reduction(+ : s) schedule(static)
    for (size_t i = 0; i < n; i++)
        s += g_in[i];
    return s;
}
size_t omp_filter(size_t n) { // count per thread, prefix, copy: stable
    std::vector<size_t> counts(g_threads + 1, 0);
    size_t total = 0;
#pragma omp parallel num_threads(g_threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        size_t b = n * size_t(t) / size_t(nt), e = n * size_t(t + 1) / size_t(nt), k = 0;
        for (size_t i = b; i < e; i++)
            k += keep(g_in[i]);
        counts[size_t(t) + 1] = k;
#pragma omp barrier
#pragma omp single
        for (int j = 1; j <= nt; j++)
            counts[size_t(j)] += counts[size_t(j) - 1];
        double *o = g_out + counts[size_t(t)];
        for (size_t i = b; i < e; i++)
            if (keep(g_in[i]))
                *o++ = g_in[i];
#pragma omp single
        total = counts[size_t(nt)];
    }
    return total;
}
#endif

#ifdef CREW_HAVE_TBB
tbb::task_arena *g_arena;
double tbb_sum(size_t n) {
    double r = 0;
    g_arena->execute([&] {
        r = tbb::parallel_reduce(
            tbb::blocked_range<size_t>(0, n), 0.0,
            [](const tbb::blocked_range<size_t> &rg, double s) {
                for (size_t i = rg.begin(); i != rg.end(); i++)
                    s += g_in[i];
                return s;
            },
            [](double a, double b) { return a + b; });
    });
    return r;
}
#endif

struct Runner {
    std::string name;
    std::function<double(size_t)> sum;
    std::function<size_t(size_t)> filter;
};


} // namespace

int main(int argc, char **argv) {
    std::vector<size_t> sizes = {10, 1000, 100000, 10000000, 100000000};
    int repeats = 5;
    g_threads = unsigned(sysconf(_SC_NPROCESSORS_ONLN));
    int opt;
    static const option longopts[] = {{"help", no_argument, nullptr, 'h'}, {}};
    while ((opt = getopt_long(argc, argv, "s:r:t:h", longopts, nullptr)) != -1) {
        switch (opt) {
        case 's': {
            sizes.clear();
            for (char *s = std::strtok(optarg, ","); s; s = std::strtok(nullptr, ","))
                sizes.push_back(size_t(std::atoll(s)));
            break;
        }
        case 'r': repeats = std::atoi(optarg); break;
        case 't': g_threads = unsigned(std::atoi(optarg)); break;
        default:
            std::fprintf(opt == 'h' ? stdout : stderr,
                         "usage: %s [-s sizes,...] [-r repeats] [-t threads]\n"
                         "  -h, --help  this text\n",
                         argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (sizes.empty() || repeats < 1 || repeats > 1000 || g_threads < 1 || g_threads > 1024) {
        std::fprintf(stderr, "bench_primitives: need sizes, -r 1..1000, -t 1..1024\n");
        return 2;
    }
    size_t maxn = *std::max_element(sizes.begin(), sizes.end());
    std::vector<double> in(maxn), out(maxn);
    uint64_t x = 88172645463325252ull;
    for (auto &v : in) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v = double(x >> 11) / double(1ull << 53);
    }
    g_in = in.data();
    g_out = out.data();

    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = g_threads;
    if (crew_create(&g_pool, &cfg) != CREW_OK)
        return 1;
#ifdef CREW_HAVE_TBB
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, g_threads);
    tbb::task_arena arena{int(g_threads)};
    g_arena = &arena;
#endif
    std::vector<Runner> runners = {{"crew", crew_sum, crew_filter},
                                   {"sequential", seq_sum, seq_filter},
#ifdef CREW_HAVE_OPENMP
                                   {"openmp", omp_sum, omp_filter},
#endif
#ifdef CREW_HAVE_TBB
                                   {"onetbb", tbb_sum, nullptr},
#endif
                                   {"thread/request", tpr_sum, tpr_filter}};

    std::printf("parallel sum and stable filter over n doubles, %u threads, %d runs each; "
                "ratio = time / crew's time (> 1: crew ahead)\n",
                g_threads, repeats);
    for (const char *what : {"sum", "filter"}) {
        bool is_sum = std::strcmp(what, "sum") == 0;
        std::printf("\n%-8s %-15s %14s %28s %8s\n", what, "", "median us", "(min..max)", "ratio");
        for (size_t n : sizes) {
            std::map<std::string, std::vector<double>> t;
            double want_sum = seq_sum(n);
            size_t want_kept = seq_filter(n);
            int rep = n >= 10000000 ? std::max(3, repeats / 2) : repeats * 20; // small n: more runs
            for (int r = 0; r < rep; r++)
                for (auto &run : runners) {
                    if (!is_sum && !run.filter)
                        continue;
                    double t0 = now();
                    if (is_sum) {
                        double s = run.sum(n);
                        t[run.name].push_back(now() - t0);
                        if (std::abs(s - want_sum) > 1e-6 * (1 + want_sum)) {
                            std::fprintf(stderr, "%s: wrong sum\n", run.name.c_str());
                            return 1;
                        }
                    } else {
                        size_t k = run.filter(n);
                        t[run.name].push_back(now() - t0);
                        if (k != want_kept) {
                            std::fprintf(stderr, "%s: wrong filter count\n", run.name.c_str());
                            return 1;
                        }
                    }
                }
            double crew_med = stat(t["crew"]).median;
            for (auto &run : runners) {
                if (!t.count(run.name))
                    continue;
                Stat s = stat(t[run.name]);
                std::printf("n=%-10zu %-15s %14.2f   (%11.2f..%11.2f) %8.2f\n", n,
                            run.name.c_str(), s.median * 1e6, s.min * 1e6, s.max * 1e6,
                            s.median / crew_med);
            }
        }
    }
    std::fflush(stdout);
    crew_destroy(g_pool);
    return 0;
}
