// bench_util.hpp -- helpers the C++ benchmark programs share: a comma-separated option split
// into its items, the median / min / max of a set of runs, and a latch that the last of a run's
// tasks opens.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

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
