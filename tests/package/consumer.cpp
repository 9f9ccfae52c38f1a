// A C++17 program outside the repository, built against the installed crew.hpp
// (tests/package_test.sh).
#include <crew.hpp>

#include <atomic>
#include <cstdio>

int main() {
    crew::pool pool;
    auto f = pool.submit([](int x) { return x * 2; }, 21);
    std::atomic<int> n{0};
    crew::group g(pool);
    for (int i = 0; i < 100; i++)
        g.run([&n] { n.fetch_add(1, std::memory_order_relaxed); });
    g.wait();
    int r = f.get();
    std::printf("consumer_cpp: %d tasks, %d\n", n.load(), r);
    return n.load() == 100 && r == 42 ? 0 : 1;
}
