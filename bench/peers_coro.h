// peers_coro.h -- bench_peers's "crew-coro" peer: fib with C++20 coroutines on a crew pool
// (include/crew_coro.hpp), built in a file of its own (peers_coro.cpp, C++20) so that
// peers.cpp stays C++17. Present only when the compiler has coroutines (CREW_HAVE_CORO).
#ifndef CREW_BENCH_PEERS_CORO_H
#define CREW_BENCH_PEERS_CORO_H

struct CoroFib;

// A pool of `threads` workers for coro_fib (nullptr if it cannot be made).
CoroFib *coro_fib_create(unsigned threads);
// fib(n) as crew::task coroutines: every call with n >= 2 awaits crew::when_all of fib(n-1)
// and fib(n-2); on a worker, when_all runs fib(n-2) in place and offers fib(n-1) to the other
// workers through crew_join, running it in place too when none took it. The root is moved onto
// a worker first and the caller blocks in crew::sync_wait.
long coro_fib(CoroFib *f, int n);
void coro_fib_destroy(CoroFib *f);

#endif
