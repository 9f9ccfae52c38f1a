// bench_util.hpp -- helpers the C++ benchmark programs share: a comma-separated option split
// into its items, the median / min / max of a set of runs, a latch that the last of a run's
// tasks opens, and the process's CPU time.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <sys/resource.h>

namespace benchutil {

inline std::vector<std::string> split(const char *s) {
    std::vector<std::string> out;
    std::string cur;
    for (const char *c = s;; c++) {
        if (*c == ',' || *c == 0) {
            if (!cur.empty())
                out.push_back(cur);
            cur.clear();
            if (*c == 0)
                break;
        } else {
            cur += *c;
        }
    }
    return out;
}

struct Stat {
    double median, min, max;
};

// CPU time of the whole process (every thread, user and system), in seconds.
inline double cpu_s() {
    rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        std::perror("getrusage");
        std::exit(1);
    }
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

inline Stat stat(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.front(), v.back()};
}

// A countdown the last task opens: reset(n) before handing out n tasks, count_down() at the end
// of each, wait() until all have counted down.
class Latch {
public:
    void reset(long n) {
        left_.store(n);
        done_ = false;
    }
    void count_down() {
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::lock_guard<std::mutex> g(m_);
            done_ = true;
            cv_.notify_all();
        }
    }
    void wait() {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return done_; });
    }

private:
    std::atomic<long> left_{0};
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
};

} // namespace benchutil
