// peers_coro.cpp -- bench_peers's "crew-coro" peer (peers_coro.h): fib with crew::task and
// crew::when_all, as examples/coro_fib.cpp does, for the same run as the C spawn-and-wait fib
// (crew-join): on a worker, when_all starts its children through crew_join as well.
#include "peers_coro.h"

#include "crew_coro.hpp"

struct CoroFib {
    crew::pool p;
    explicit CoroFib(const crew::options &o) : p(o) {}
};

namespace {

crew::task<long> fib(crew::pool &p, int n) {
    if (n < 2)
        co_return n;
    auto [a, b] = co_await crew::when_all(p, fib(p, n - 1), fib(p, n - 2));
    co_return a + b;
}

crew::task<long> fib_on(crew::pool &p, int n) {
    co_await crew::schedule(p); // off the caller's thread, onto a worker
    co_return co_await fib(p, n);
}

} // namespace

CoroFib *coro_fib_create(unsigned threads) {
    crew::options o;
    o.threads = threads;
    try {
        return new CoroFib(o);
    } catch (const std::exception &) {
        return nullptr;
    }
}

long coro_fib(CoroFib *f, int n) { return crew::sync_wait(fib_on(f->p, n)); }

void coro_fib_destroy(CoroFib *f) { delete f; }
