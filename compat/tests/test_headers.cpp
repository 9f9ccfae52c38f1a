// test_headers.cpp -- both compat headers compiled as C++ in one translation unit: extern "C"
// linkage (the calls below link against the C libraries), no crew types needed, no clash
// between the two APIs. Runs a task through each.
#include "thpool.h"
#include "threadpool.h"

#include <atomic>
#include <cstdio>

namespace {
std::atomic<int> runs{0};
void task(void *) { runs.fetch_add(1); }
} // namespace

int main() {
    threadpool a = thpool_init(1);
    if (!a || thpool_add_work(a, task, nullptr) != 0)
        return 1;
    thpool_wait(a);
    thpool_destroy(a);

    threadpool_t *b = threadpool_create(1, 4, 0);
    if (!b || threadpool_add(b, task, nullptr, 0) != 0)
        return 1;
    if (threadpool_destroy(b, threadpool_graceful) != 0)
        return 1;
    std::printf("runs: %d\n", runs.load());
    return runs.load() == 2 ? 0 : 1;
}
