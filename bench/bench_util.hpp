// bench_util.hpp -- helpers the C++ benchmark programs share: a comma-separated option split
// into its items, and the median / min / max of a set of runs.
#pragma once

#include <algorithm>
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

} // namespace benchutil
