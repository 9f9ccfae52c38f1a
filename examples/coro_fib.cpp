// coro_fib.cpp -- C++20 coroutines on a crew pool (include/crew_coro.hpp), against the C
// interface's spawn-and-wait, on the classic recursive Fibonacci.
//
// The coroutine version awaits both halves with crew::when_all: on a worker, the first is
// offered to other workers and the second runs in place (crew_join underneath); the parent is
// resumed by whichever ends last, and a worker waits, helping, only for a half another worker
// took. The C version (as bench/peers.cpp's fib for crew) submits fib(n-1) into a group,
// computes fib(n-2) itself, then crew_wait()s, helping with queued tasks.
//
//   coro_fib [-n 1..40] [-t threads] [-r runs] [-h]
//
// Prints both results and, for each, the median time per run over interleaved runs; exits 0
// if both results are right, 1 if not, 2 on bad options.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <getopt.h>
#include <vector>

#include "crew_coro.hpp"

namespace {

crew::task<long> fib(crew::pool &p, int n) {
    if (n < 2)
        co_return n;
    auto [a, b] = co_await crew::when_all(p, fib(p, n - 1), fib(p, n - 2));
    co_return a + b;
}

crew::task<long> fib_on(crew::pool &p, int n) {
    co_await crew::schedule(p); // off main, onto a worker
    co_return co_await fib(p, n);
}

struct fib_arg {
    crew_pool *p;
    int n;
    long r;
};

void fib_task(void *a) {
    auto *f = static_cast<fib_arg *>(a);
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    fib_arg child{f->p, f->n - 1, 0};
    crew_handle g = CREW_HANDLE_NONE;
    if (crew_submit(f->p, fib_task, &child, 0, &g) != CREW_OK)
        std::abort();
    fib_arg self{f->p, f->n - 2, 0};
    fib_task(&self);
    if (crew_wait(f->p, g) != CREW_OK)
        std::abort();
    f->r = child.r + self.r;
}

long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void usage(FILE *f, const char *prog) {
    std::fprintf(f,
                 "usage: %s [-n 1..40] [-t 1..256 threads] [-r 1..1000 runs]\n"
                 "  -n N         compute fib(N) (default 25)\n"
                 "  -t threads   pool workers (default: one per core)\n"
                 "  -r runs      runs of each version, interleaved (default 5)\n"
                 "  -h, --help   this text\n"
                 "Prints both results and the median time per run of each.\n",
                 prog);
}

// The argument s of option -opt as a whole number in lo..hi; anything else is a usage error.
long parse(int opt, const char *s, long lo, long hi, const char *prog) {
    char *end;
    long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) {
        std::fprintf(stderr, "%s: -%c %s: expected a number in %ld..%ld\n", prog, opt, s, lo, hi);
        usage(stderr, prog);
        std::exit(2);
    }
    return v;
}

} // namespace

int main(int argc, char **argv) {
    int n = 25, runs = 5, opt;
    unsigned threads = 0;
    static const option longopts[] = {{"help", no_argument, nullptr, 'h'}, {}};
    while ((opt = getopt_long(argc, argv, "n:t:r:h", longopts, nullptr)) != -1) {
        switch (opt) {
        case 'n': n = int(parse(opt, optarg, 1, 40, argv[0])); break;
        case 't': threads = unsigned(parse(opt, optarg, 1, 256, argv[0])); break;
        case 'r': runs = int(parse(opt, optarg, 1, 1000, argv[0])); break;
        case 'h': usage(stdout, argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    crew::options o;
    o.threads = threads;
    crew::pool p(o);
    long want = fib_seq(n), got_coro = 0, got_c = 0;
    std::vector<double> t_coro, t_c;
    for (int r = 0; r < runs; r++) { // interleaved, so both see the same machine
        auto t0 = std::chrono::steady_clock::now();
        got_coro = crew::sync_wait(fib_on(p, n));
        t_coro.push_back(seconds_since(t0));
        t0 = std::chrono::steady_clock::now();
        fib_arg root{p.native(), n, 0};
        fib_task(&root);
        got_c = root.r;
        t_c.push_back(seconds_since(t0));
    }
    std::printf("fib(%d) = %ld (coroutines), %ld (C spawn-and-wait), expected %ld\n", n,
                got_coro, got_c, want);
    std::printf("median of %d runs, %u threads: coroutines %.3f ms, C spawn-and-wait %.3f ms\n",
                runs, p.size(), median(t_coro) * 1e3, median(t_c) * 1e3);
    return got_coro == want && got_c == want ? 0 : 1;
}
