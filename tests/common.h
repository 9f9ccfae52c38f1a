// common.h -- helpers shared by crew's tests: a gate to hold workers, scaling of stress sizes
// under sanitizers and valgrind, pools made for a test (by strategy, with an on_drop hook), a
// counting task, crew_last_error and crew_diagnose as text, and the deadlock watchdog installed
// by common.cpp's main().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crew.h"

namespace crewtest {

// A one-shot gate: tasks block in wait() until open() is called.
class Gate {
public:
    void open() {
        std::lock_guard<std::mutex> g(m_);
        open_ = true;
        cv_.notify_all();
    }
    void wait() {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return open_; });
    }
    // Tasks that have reached wait() (counted whether or not they are still waiting).
    void arrive() {
        std::lock_guard<std::mutex> g(m_);
        arrived_++;
        cv_.notify_all();
    }
    void wait_arrivals(int n) {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return arrived_ >= n; });
    }
    // A crew_fn: announce arrival, then wait for the gate. arg is the Gate. Once hold_each has
    // the arrivals it asked for, a task of it that starts later returns at once instead.
    static void block(void *arg) {
        auto *g = static_cast<Gate *>(arg);
        {
            std::lock_guard<std::mutex> l(g->m_);
            if (g->arrived_ >= g->enough_)
                return;
        }
        g->arrive();
        g->wait();
    }
    // Occupy n of p's workers with tasks that wait for this gate, and return once they have
    // all started (so they hold no place in a bounded queue, and no pause can miss them).
    void hold(crew_pool *p, int n) {
        for (int i = 0; i < n; i++)
            if (crew_submit(p, block, this, 0, nullptr) != CREW_OK)
                std::abort();
        wait_arrivals(n);
    }

    // hold() for a pool whose strategy may queue two submissions on one worker (per-worker
    // queues after a resize, whose round robin can then pick one worker twice): submit one
    // blocking task at a time, and when it has not arrived after a while (it queued behind a
    // held worker), submit another, until n have arrived. Returns how many were submitted:
    // each runs once; the ones beyond the n that arrived return as soon as they start (they
    // must not block: a thread that helps while it waits, e.g. in on_drop, may take one, and it
    // would wait for a gate that only its own caller opens).
    int hold_each(crew_pool *p, int n) {
        int submitted = 0;
        std::unique_lock<std::mutex> g(m_);
        enough_ = n;
        while (arrived_ < n) {
            int want = arrived_ + 1;
            g.unlock();
            if (crew_submit(p, block, this, 0, nullptr) != CREW_OK)
                std::abort();
            submitted++;
            g.lock();
            cv_.wait_for(g, std::chrono::milliseconds(50), [&] { return arrived_ >= want; });
        }
        return submitted;
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool open_ = false;
    int arrived_ = 0;
    int enough_ = std::numeric_limits<int>::max(); // hold_each's n: arrivals that block

};

// Stress sizes: full in a normal build, a quarter under sanitizers, and CREW_TEST_SCALE (a factor,
// e.g. 0.01 under valgrind) when set.
inline long scaled(long n) {
    double f = 1.0;
#ifdef CREW_SANITIZED
    f = 0.25;
#endif
    if (const char *s = std::getenv("CREW_TEST_SCALE"))
        f = std::atof(s);
    long v = static_cast<long>(n * f);
    return v < 1 ? 1 : v;
}

inline bool under_valgrind() { return std::getenv("CREW_TEST_SCALE") != nullptr; }

// A build that runs code several times slower (sanitizers, valgrind): tests whose property
// depends on one thing happening before a deadline give the deadline more room there.
inline bool slow_build() {
#ifdef CREW_SANITIZED
    return true;
#else
    return under_valgrind();
#endif
}

// The names (comm) of this process's threads alive now.
inline std::vector<std::string> thread_names() {
    std::vector<std::string> names;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return names;
    while (struct dirent *e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string s;
        std::getline(f, s);
        names.push_back(s);
    }
    closedir(d);
    return names;
}

// The scheduler the tests run under (CREW_SCHEDULER, as crew_create resolves it), and whether it
// keeps strict priority order (all but the MultiQueue, whose order is relaxed by design).
inline std::string scheduler() {
    const char *s = std::getenv("CREW_SCHEDULER");
    return s && *s ? s : "steal";
}
inline bool strict_priority() { return scheduler() != "lockfree"; }

// Make a pool from cfg (start from crew_config_init), or abort the test.
inline crew_pool *make_pool(const crew_config &cfg) {
    crew_pool *p = nullptr;
    if (crew_create(&p, &cfg) != CREW_OK)
        std::abort();
    return p;
}

inline void noop_task(void *) {}

// Return once a shutdown of p has begun (a submission of probe is refused), and ms after that:
// for a test that must act after the shutdown's first steps. A fixed sleep alone lets a loaded
// machine preempt the shutdown before those steps for longer than the sleep. The probes that
// were accepted run or are dropped as any task (an on_drop that counts may skip probe).
inline void wait_until_shutdown_began(crew_pool *p, int ms, crew_fn probe = noop_task) {
    while (crew_submit(p, probe, nullptr, 0, nullptr) != CREW_ESHUTDOWN)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Make a pool of `threads` workers with the default settings, or abort the test.
inline crew_pool *make_pool(unsigned threads) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    return make_pool(cfg);
}

// The strategies a test loops over to run under each (CREW_SCHED_DEFAULT: the one CREW_SCHEDULER
// names, as crew_create resolves it).
constexpr unsigned kSchedulers[] = {CREW_SCHED_DEFAULT, CREW_SCHED_STEAL, CREW_SCHED_SHARED,
                                    CREW_SCHED_SHARED_LOCKFREE, CREW_SCHED_PER_WORKER};

// Make a pool of `threads` workers under strategy `sched`, or abort the test.
inline crew_pool *make_pool(unsigned threads, unsigned sched) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    cfg.scheduler = sched;
    return make_pool(cfg);
}

// Make a pool from cfg (its hooks replaced) whose tasks dropped unrun go to on_drop(fn, task_arg,
// hook_arg), or abort the test.
inline crew_pool *make_pool_on_drop(crew_config cfg, void (*on_drop)(crew_fn, void *, void *),
                                    void *hook_arg = nullptr) {
    crew_hooks hooks{}; // copied by crew_create
    hooks.size = sizeof hooks;
    hooks.on_drop = on_drop;
    hooks.arg = hook_arg;
    cfg.hooks = &hooks;
    return make_pool(cfg);
}

// The same for a pool of `threads` workers with the default settings.
inline crew_pool *make_pool_on_drop(unsigned threads, void (*on_drop)(crew_fn, void *, void *),
                                    void *hook_arg = nullptr) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = threads;
    return make_pool_on_drop(cfg, on_drop, hook_arg);
}

// A task that counts its runs: arg is a std::atomic<long>.
inline void bump(void *arg) { static_cast<std::atomic<long> *>(arg)->fetch_add(1); }

// Whether this thread's crew_last_error text contains `text`.
inline bool last_error_has(const char *text) {
    return std::strstr(crew_last_error(), text) != nullptr;
}

// crew_diagnose_ex's answer (findings, or an error code < 0) and the report it wrote.
struct Report {
    int findings;
    std::string text;
};

// crew_diagnose_ex with the given limits, its output captured.
inline Report diagnose(crew_pool *p, unsigned busy_ms, unsigned queued_ms, unsigned blocked_ms) {
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return {CREW_ENOMEM, ""};
    Report r;
    r.findings = crew_diagnose_ex(p, f, busy_ms, queued_ms, blocked_ms);
    std::fclose(f);
    r.text.assign(buf, len);
    std::free(buf);
    return r;
}

} // namespace crewtest
