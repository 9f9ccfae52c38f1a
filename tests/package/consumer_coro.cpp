// A C++20 program outside the repository, built against the installed crew_coro.hpp
// (tests/package_test.sh; only with a compiler that has coroutines).
#include <crew_coro.hpp>

#include <cstdio>

#ifndef CREW_HAS_COROUTINES
#error "crew_coro.hpp defines no coroutines: compile as C++20"
#endif

static crew::task<long> fib(crew::pool &p, int n) {
    if (n < 2)
        co_return n;
    auto [a, b] = co_await crew::when_all(p, fib(p, n - 1), fib(p, n - 2));
    co_return a + b;
}

static crew::task<long> on_pool(crew::pool &p, int n) {
    co_await crew::schedule(p);
    co_return co_await fib(p, n);
}

int main() {
    crew::pool pool;
    long r = crew::sync_wait(on_pool(pool, 15));
    std::printf("consumer_coro: fib(15) = %ld\n", r);
    return r == 610 ? 0 : 1;
}
