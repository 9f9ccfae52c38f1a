// timers.cpp -- how late timers fire, and what a million pending ones cost: crew's delayed
// tasks and periodic timers against the ways a program gets a timer without them.
//
// Lateness (actual start - due time; due = the clock read just before the timer was armed,
// plus its delay, or the periodic timer's first due time + k * period):
//   once 1ms     a task delayed by 1 ms, -n samples, one at a time (armed, fired, next)
//   once 10ms    the same with 10 ms, -N samples
//   every 1ms    a fixed-rate timer of period 1 ms running for -d seconds; slot k is due at
//                first + k * period, and its lateness is when the run that served it started
//                (see Firings: a timer that skips missed periods serves them with its next
//                run; slots never served before the stop count as served at the stop). drift
//                = lateness of the last slot served - that of the first (a timer that re-arms
//                from "now" accumulates its latenesses into it); runs/due = runs made and slots
//                due in the duration (fewer runs: periods skipped, or a peer fallen behind)
// each on an idle pool and on a busy one (-l idle,busy): busy means T = -t threads running
// 1 ms CPU tasks without a break (2T of them queued at any time, so none ever waits for
// work): on the pool itself for the pools, on T plain threads beside it for the peers that
// are a thread of their own.
// Peers (-p):
//   crew          crew_submit_after (priority 0; the load runs at priority 10) and
//                 crew_timer_start(CREW_TIMER_FIXED_RATE) on a pool of T workers
//   nanosleep     the calling thread sleeping in clock_nanosleep(TIMER_ABSTIME): the floor,
//                 what the kernel and the machine give a thread that does nothing else
//   boost.asio    boost::asio::steady_timer on boost::asio::thread_pool(T); the periodic timer
//                 re-arms itself with expires_at(expiry() + period)
//   timerfd       a timerfd in an epoll loop on a thread of its own (one-shot, and it_interval =
//                 period; a wake-up that reads n expirations serves n slots at once)
// Runs interleave: each run measures every (load, peer) pair once, the peers' order rotating
// per run. The table gives per pair the median over runs of each run's p50, p99 and max (with
// min..max over runs) and of the drift.
//
// Pending (-m n, 0 to skip): n timers armed far in the future (10 to 20 minutes, spread at
// random), then: memory per timer (the growth of the resident set / n), time to arm one, CPU
// the whole process uses while they wait (getrusage over a -s second sleep, in ms of CPU per
// second), time to cancel one (in a random order; after 3 s the rest are cancelled in bulk, so
// that a cancellation costing O(n) shows without taking hours):
//   crew delayed  crew_submit_after, each task in a group of its own; cancelled by crew_cancel
//                 of its group, in bulk by crew_shutdown(CREW_CANCEL) (on_drop counts that
//                 every one was reported)
//   crew timer    crew_timer_start(first 10..20 min, period 1 h); cancelled by crew_timer_stop
//   boost.asio    a steady_timer each with async_wait; cancelled by steady_timer::cancel
//
// CSV (-c), one row per figure: part,load,peer,kind,run,metric,value. part "lateness": metrics
// p50_us, p99_us, max_us, samples, and for the periodic timer drift_us, runs, served, due;
// part "cdf": the lateness distribution over all runs (run "all", metric the quantile 0..1,
// value in us), which bench/plots/timers.sh draws; part "pending": bytes_per_timer,
// insert_ns, cancel_ns, cpu_ms_per_s, dropped.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <getopt.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.hpp"
#include "crew.h"

#ifdef CREW_HAVE_ASIO
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#endif

// crew's timers are measured when crew.h declares them (CREW_TIMER_FIXED_RATE comes with
// crew_submit_after, crew_timer_start and crew_timer_stop).
#ifdef CREW_TIMER_FIXED_RATE
#define HAVE_CREW_TIMERS 1
#endif

using benchutil::split;
using benchutil::stat;

namespace {

unsigned g_threads = 2;

[[noreturn]] void die(const char *what) {
    std::fprintf(stderr, "bench_timers: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

#ifdef HAVE_CREW_TIMERS
void check(int rc, const char *what) {
    if (rc != CREW_OK) {
        std::fprintf(stderr, "bench_timers: %s: %s\n", what, crew_strerror(rc));
        std::exit(1);
    }
}
#endif

int64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

timespec to_ts(int64_t ns) {
    timespec ts;
    ts.tv_sec = time_t(ns / 1000000000);
    ts.tv_nsec = long(ns % 1000000000);
    return ts;
}

void sleep_until_ns(int64_t t) {
    timespec ts = to_ts(t);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

// A 1 ms CPU task: computes until 1 ms of wall time has passed since it started.
void burn_1ms() {
    const int64_t end = now_ns() + 1000000;
    volatile uint64_t x = 1;
    while (now_ns() < end)
        for (int i = 0; i < 64; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
}

// A counting semaphore the measuring thread sleeps on until a firing has been recorded.
class Signal {
    sem_t sem_;

public:
    Signal() { sem_init(&sem_, 0, 0); }
    ~Signal() { sem_destroy(&sem_); }
    void post() { sem_post(&sem_); }
    void wait() {
        while (sem_wait(&sem_) != 0)
            if (errno != EINTR)
                die("sem_wait");
    }
};

// One firing of a one-shot timer.
struct Shot {
    int64_t fired = 0;
    Signal done;
};
void shot_fire(Shot *s) {
    s->fired = now_ns();
    s->done.post();
}

// The firings of a periodic timer. Slot k (due at first + k * period) is served at times[k]:
// by the k-th run of a timer that catches up (runs every missed period, late), or, for a
// timer that skips missed periods, by the run that replaced it (a timerfd read that returns n
// expirations serves n slots; see serve_skipping for crew's). Written by one run at a time;
// the peer sets first and period before arming, and stopped (when it stopped the timer)
// before returning.
struct Firings {
    std::vector<int64_t> times;
    int64_t first = 0, period = 0, stopped = 0;
    std::atomic<size_t> n{0}; // release by the running thread, acquire by the reader
    size_t runs = 0;          // runs that served a slot; written only by the runs
    int64_t last_start = 0;   // when the previous run started; written only by the runs
    void serve(int64_t t, uint64_t slots) {
        size_t k = n.load(std::memory_order_relaxed);
        if (k >= times.size())
            return;
        for (uint64_t i = 0; i < slots && k < times.size(); i++)
            times[k++] = t;
        runs++;
        n.store(k, std::memory_order_release); // publishes the times written above
    }
    // A run of crew's fixed-rate timer, which plans the next run when a run ends (crew.h): at
    // the first slot due after the run's start, or at once if that has passed. So this run is
    // for slot max(k, last slot due at the previous run's start + 1), where k is the next
    // unserved slot; slots skipped on the way count as served now.
    void serve_skipping(int64_t t) {
        const int64_t k = int64_t(n.load(std::memory_order_relaxed));
        int64_t slot = k;
        if (k > 0 && last_start >= first)
            slot = std::max(k, (last_start - first) / period + 1);
        serve(t, uint64_t(slot - k + 1));
        last_start = t;
    }
};

// ------------------------------------------------------------------------------------------
// The peers. once() arms a one-shot timer `delay` from now and returns its lateness;
// periodic() runs a fixed-rate timer for `duration`, filling f and returning the first due
// time; load(true/false) starts and stops the 1 ms CPU tasks.
// ------------------------------------------------------------------------------------------
class Peer {
protected:
    // The one-shot's record, reused: a semaphore that has just woken its waiter is not
    // destroyed while the firing thread may still be returning from sem_post.
    Shot shot_;

public:
    virtual ~Peer() = default;
    virtual const char *name() const = 0;
    virtual int64_t once(int64_t delay) = 0;
    virtual void periodic(int64_t period, int64_t duration, Firings *f) = 0;
    virtual void load(bool on) = 0;
};

// The load of the peers that are a thread of their own: T plain threads burning 1 ms at a time.
class ThreadLoad {
    std::vector<std::thread> threads_;
    std::atomic<bool> stop_{false}; // relaxed: a flag polled once per ms, nothing hangs on it

public:
    void set(bool on) {
        if (on) {
            stop_.store(false, std::memory_order_relaxed);
            for (unsigned i = 0; i < g_threads; i++)
                threads_.emplace_back([this] {
                    while (!stop_.load(std::memory_order_relaxed))
                        burn_1ms();
                });
        } else {
            stop_.store(true, std::memory_order_relaxed);
            for (auto &t : threads_)
                t.join();
            threads_.clear();
        }
    }
};

class NanosleepPeer final : public Peer {
    ThreadLoad load_;

public:
    const char *name() const override { return "nanosleep"; }
    int64_t once(int64_t delay) override {
        const int64_t due = now_ns() + delay;
        sleep_until_ns(due);
        return now_ns() - due;
    }
    void periodic(int64_t period, int64_t duration, Firings *f) override {
        const int64_t first = now_ns() + period, end = first + duration - period / 2;
        f->first = first, f->period = period;
        for (int64_t due = first; due < end && now_ns() < end; due += period) {
            sleep_until_ns(due);
            f->serve(now_ns(), 1);
        }
        f->stopped = now_ns();
    }
    void load(bool on) override { load_.set(on); }
};

// A thread in an epoll loop with one timerfd; the handler runs on that thread, under mu_, so
// that the measuring thread can swap it (and know that no run of the old one is in progress).
class TimerfdPeer final : public Peer {
    int ep_, tfd_, stopfd_;
    std::mutex mu_;
    std::function<void(int64_t, uint64_t)> handler_; // guarded by mu_
    std::thread th_;
    ThreadLoad load_;

    void loop() {
        for (;;) {
            epoll_event ev[2];
            int n = epoll_wait(ep_, ev, 2, -1);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                die("epoll_wait");
            for (int i = 0; i < n; i++) {
                if (ev[i].data.fd == stopfd_)
                    return;
                uint64_t count = 0;
                if (read(tfd_, &count, sizeof count) == sizeof count && count > 0) {
                    const int64_t t = now_ns();
                    std::lock_guard<std::mutex> lock(mu_);
                    if (handler_)
                        handler_(t, count);
                }
            }
        }
    }
    void set_handler(std::function<void(int64_t, uint64_t)> h) {
        std::lock_guard<std::mutex> lock(mu_);
        handler_ = std::move(h);
    }
    void arm(int64_t first_abs, int64_t period) {
        itimerspec its{};
        its.it_value = to_ts(first_abs);
        its.it_interval = to_ts(period);
        if (timerfd_settime(tfd_, TFD_TIMER_ABSTIME, &its, nullptr) != 0)
            die("timerfd_settime");
    }

public:
    TimerfdPeer() {
        ep_ = epoll_create1(EPOLL_CLOEXEC);
        tfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        stopfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (ep_ < 0 || tfd_ < 0 || stopfd_ < 0)
            die("epoll/timerfd/eventfd");
        for (int fd : {tfd_, stopfd_}) {
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.fd = fd;
            if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0)
                die("epoll_ctl");
        }
        th_ = std::thread([this] { loop(); });
    }
    ~TimerfdPeer() override {
        uint64_t one = 1;
        if (write(stopfd_, &one, sizeof one) != sizeof one)
            die("eventfd write");
        th_.join();
        close(stopfd_);
        close(tfd_);
        close(ep_);
    }
    const char *name() const override { return "timerfd"; }
    int64_t once(int64_t delay) override {
        set_handler([this](int64_t t, uint64_t) {
            shot_.fired = t;
            shot_.done.post();
        });
        const int64_t due = now_ns() + delay;
        arm(due, 0);
        shot_.done.wait();
        return shot_.fired - due;
    }
    void periodic(int64_t period, int64_t duration, Firings *f) override {
        set_handler([f](int64_t t, uint64_t count) { f->serve(t, count); });
        const int64_t first = now_ns() + period;
        f->first = first, f->period = period;
        arm(first, period);
        sleep_until_ns(first + duration - period / 2);
        f->stopped = now_ns();
        itimerspec off{};
        if (timerfd_settime(tfd_, 0, &off, nullptr) != 0)
            die("timerfd_settime");
        set_handler(nullptr); // waits for a run in progress; no run of f's starts after it
    }
    void load(bool on) override { load_.set(on); }
};

#ifdef CREW_HAVE_ASIO
class AsioPeer final : public Peer {
    boost::asio::thread_pool pool_{g_threads};
    boost::asio::steady_timer timer_{pool_};
    std::atomic<bool> stop_{false};     // relaxed: polled once per 1 ms task
    std::atomic<int> in_flight_{0};     // acq_rel: the last one to finish is seen by load(false)

    void load_task() {
        burn_1ms();
        if (!stop_.load(std::memory_order_relaxed))
            boost::asio::post(pool_, [this] { load_task(); });
        else
            in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    }

public:
    ~AsioPeer() override {
        timer_.cancel();
        pool_.join();
    }
    const char *name() const override { return "boost.asio"; }
    int64_t once(int64_t delay) override {
        const int64_t due = now_ns() + delay;
        // libstdc++'s steady_clock is CLOCK_MONOTONIC: the same clock as now_ns().
        timer_.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(due)));
        timer_.async_wait([this](const boost::system::error_code &) { shot_fire(&shot_); });
        shot_.done.wait();
        return shot_.fired - due;
    }
    void periodic(int64_t period, int64_t duration, Firings *f) override {
        boost::asio::steady_timer t(pool_);
        const int64_t first = now_ns() + period, end = first + duration - period / 2;
        f->first = first, f->period = period;
        Signal done;
        std::function<void(const boost::system::error_code &)> tick;
        tick = [&](const boost::system::error_code &) {
            const int64_t t_now = now_ns();
            f->serve(t_now, 1);
            t.expires_at(t.expiry() + std::chrono::nanoseconds(period));
            if (t.expiry().time_since_epoch().count() >= end || t_now >= end) {
                f->stopped = t_now;
                done.post();
            }
            else
                t.async_wait(tick);
        };
        t.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(first)));
        t.async_wait(tick);
        done.wait();
    }
    void load(bool on) override {
        if (on) {
            stop_.store(false, std::memory_order_relaxed);
            in_flight_.store(int(2 * g_threads), std::memory_order_relaxed);
            for (unsigned i = 0; i < 2 * g_threads; i++)
                boost::asio::post(pool_, [this] { load_task(); });
        } else {
            stop_.store(true, std::memory_order_relaxed);
            while (in_flight_.load(std::memory_order_acquire) > 0)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
};
#endif

#ifdef HAVE_CREW_TIMERS
class CrewPeer final : public Peer {
    crew_pool *pool_ = nullptr;
    std::atomic<bool> stop_{false}; // relaxed: polled once per 1 ms task

    static void load_task(void *arg) {
        auto *self = static_cast<CrewPeer *>(arg);
        burn_1ms();
        if (!self->stop_.load(std::memory_order_relaxed))
            check(crew_submit(self->pool_, load_task, self, 10, nullptr), "crew_submit (load)");
    }
    static void shot(void *arg) { shot_fire(static_cast<Shot *>(arg)); }
    // crew's fixed-rate timer skips the periods a late run missed (crew.h).
    static void tick(void *arg) { static_cast<Firings *>(arg)->serve_skipping(now_ns()); }

public:
    CrewPeer() {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = g_threads;
        check(crew_create(&pool_, &cfg), "crew_create");
    }
    ~CrewPeer() override { crew_destroy(pool_); }
    const char *name() const override { return "crew"; }
    int64_t once(int64_t delay) override {
        const int64_t due = now_ns() + delay;
        check(crew_submit_after(pool_, uint64_t(delay), shot, &shot_, 0, nullptr),
              "crew_submit_after");
        shot_.done.wait();
        return shot_.fired - due;
    }
    void periodic(int64_t period, int64_t duration, Firings *f) override {
        crew_timer *t = nullptr;
        const int64_t first = now_ns() + period;
        f->first = first, f->period = period;
        check(crew_timer_start(pool_, uint64_t(period), uint64_t(period), CREW_TIMER_FIXED_RATE,
                               tick, f, &t),
              "crew_timer_start");
        sleep_until_ns(first + duration - period / 2);
        f->stopped = now_ns();
        check(crew_timer_stop(t), "crew_timer_stop");
    }
    void load(bool on) override {
        if (on) {
            stop_.store(false, std::memory_order_relaxed);
            for (unsigned i = 0; i < 2 * g_threads; i++)
                check(crew_submit(pool_, load_task, this, 10, nullptr), "crew_submit (load)");
        } else {
            stop_.store(true, std::memory_order_relaxed);
            check(crew_wait_all(pool_), "crew_wait_all");
        }
    }
};
#endif

std::unique_ptr<Peer> make_peer(const std::string &name) {
#ifdef HAVE_CREW_TIMERS
    if (name == "crew")
        return std::make_unique<CrewPeer>();
#endif
    if (name == "nanosleep")
        return std::make_unique<NanosleepPeer>();
    if (name == "timerfd")
        return std::make_unique<TimerfdPeer>();
#ifdef CREW_HAVE_ASIO
    if (name == "boost.asio")
        return std::make_unique<AsioPeer>();
#endif
    return nullptr;
}

// ------------------------------------------------------------------------------------------
// Statistics
// ------------------------------------------------------------------------------------------
double quantile_us(const std::vector<int64_t> &sorted, double q) {
    if (sorted.empty())
        return 0;
    size_t i = size_t(q * double(sorted.size() - 1) + 0.5);
    return double(sorted[std::min(i, sorted.size() - 1)]) / 1000.0;
}

struct Key {
    std::string load, peer, kind;
    bool operator<(const Key &o) const {
        return std::tie(load, peer, kind) < std::tie(o.load, o.peer, o.kind);
    }
};
struct Figures {
    std::vector<double> p50, p99, max, drift, firings, expected;
    std::vector<int64_t> all; // every sample of every run, for the distribution
};

FILE *g_csv = nullptr;
void csv_row(const char *part, const std::string &load, const std::string &peer,
             const std::string &kind, const std::string &run, const char *metric, double v) {
    if (g_csv)
        std::fprintf(g_csv, "%s,%s,%s,%s,%s,%s,%.6g\n", part, load.c_str(), peer.c_str(),
                     kind.c_str(), run.c_str(), metric, v);
}

void record(Figures &fg, const Key &k, int run, std::vector<int64_t> late) {
    std::sort(late.begin(), late.end());
    const std::string r = std::to_string(run);
    fg.p50.push_back(quantile_us(late, 0.5));
    fg.p99.push_back(quantile_us(late, 0.99));
    fg.max.push_back(quantile_us(late, 1.0));
    csv_row("lateness", k.load, k.peer, k.kind, r, "p50_us", fg.p50.back());
    csv_row("lateness", k.load, k.peer, k.kind, r, "p99_us", fg.p99.back());
    csv_row("lateness", k.load, k.peer, k.kind, r, "max_us", fg.max.back());
    csv_row("lateness", k.load, k.peer, k.kind, r, "samples", double(late.size()));
    fg.all.insert(fg.all.end(), late.begin(), late.end());
}

// "median (min..max)" with `prec` decimals.
std::string fmt(const std::vector<double> &v, int prec) {
    if (v.empty())
        return "-";
    auto s = stat(v);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.*f (%.*f..%.*f)", prec, s.median, prec, s.min, prec,
                  s.max);
    return buf;
}

// ------------------------------------------------------------------------------------------
// Pending timers
// ------------------------------------------------------------------------------------------
long rss_bytes() {
    FILE *f = std::fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (!f || std::fscanf(f, "%ld %ld", &size, &res) != 2)
        die("/proc/self/statm");
    std::fclose(f);
    return res * sysconf(_SC_PAGESIZE);
}

struct PendingResult {
    double bytes_per_timer, insert_ns, cancel_ns, cpu_ms_per_s, dropped;
    size_t cancelled; // how many were cancelled one by one (the rest went in bulk)
};

// Cancelling one by one stops after this long: the rest go in bulk (a cancelling shutdown, or
// the destructors), so a cancellation that costs O(n) shows in cancel_ns without making the
// run last hours.
const double kCancelBudgetS = 3;

// Delays 10..20 minutes, spread at random (a fixed seed), and a random cancelling order.
struct PendingPlan {
    std::vector<uint64_t> delay;
    std::vector<size_t> order;
    explicit PendingPlan(size_t n) : delay(n), order(n) {
        uint64_t x = 0x9e3779b97f4a7c15ull;
        auto next = [&x] {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            return x;
        };
        for (size_t i = 0; i < n; i++) {
            delay[i] = 600000000000ull + next() % 600000000000ull;
            order[i] = i;
        }
        for (size_t i = n; i > 1; i--)
            std::swap(order[i - 1], order[next() % i]);
    }
};

// Measures one kind: arm(i) arms timer i, cancel(i) cancels it; waits `idle_s` in between.
// Cancels in a random order until all are cancelled or kCancelBudgetS has passed.
template <class Arm, class Cancel>
PendingResult measure_pending(const PendingPlan &plan, double idle_s, Arm arm, Cancel cancel) {
    const size_t n = plan.delay.size();
    PendingResult r{};
    const long rss0 = rss_bytes();
    int64_t t0 = now_ns();
    for (size_t i = 0; i < n; i++)
        arm(i);
    int64_t t1 = now_ns();
    r.insert_ns = double(t1 - t0) / double(n);
    r.bytes_per_timer = double(rss_bytes() - rss0) / double(n);
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // arming's after-effects
    const double c0 = benchutil::cpu_s();
    const int64_t w0 = now_ns();
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
    r.cpu_ms_per_s = (benchutil::cpu_s() - c0) * 1e3 / (double(now_ns() - w0) * 1e-9);
    t0 = now_ns();
    const int64_t budget = int64_t(kCancelBudgetS * 1e9);
    size_t k = 0;
    while (k < n) {
        cancel(plan.order[k++]);
        if (k % 64 == 0 && now_ns() - t0 > budget)
            break;
    }
    t1 = now_ns();
    r.cancel_ns = double(t1 - t0) / double(k);
    r.cancelled = k;
    return r;
}

// What a pending timer runs: it never should (they are all cancelled long before).
void never(void *) {
    std::fprintf(stderr, "bench_timers: a pending timer fired\n");
    std::abort();
}

#ifdef HAVE_CREW_TIMERS
std::atomic<size_t> g_dropped{0}; // relaxed: a count read after crew_wait_all
void count_drop(crew_fn, void *, void *) { g_dropped.fetch_add(1, std::memory_order_relaxed); }

crew_pool *pending_pool() {
    static crew_hooks hooks;
    hooks = crew_hooks{};
    hooks.size = sizeof hooks;
    hooks.on_drop = count_drop;
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = g_threads;
    cfg.hooks = &hooks;
    crew_pool *p = nullptr;
    check(crew_create(&p, &cfg), "crew_create");
    return p;
}

PendingResult pending_crew_delayed(const PendingPlan &plan, double idle_s) {
    crew_pool *p = pending_pool();
    std::vector<crew_handle> groups(plan.delay.size(), CREW_HANDLE_NONE); // touched before
    g_dropped.store(0, std::memory_order_relaxed);
    PendingResult r = measure_pending(
        plan, idle_s,
        [&](size_t i) {
            check(crew_submit_after(p, plan.delay[i], never, nullptr, 0, &groups[i]),
                  "crew_submit_after");
        },
        [&](size_t i) { check(crew_cancel(p, groups[i]), "crew_cancel"); });
    // The rest (if the budget ran out) are dropped by a cancelling shutdown.
    int rc = crew_shutdown(p, CREW_CANCEL);
    if (rc != CREW_OK && rc != CREW_ECANCELED)
        check(rc, "crew_shutdown");
    r.dropped = double(g_dropped.load(std::memory_order_relaxed));
    check(crew_destroy(p), "crew_destroy");
    return r;
}

PendingResult pending_crew_timer(const PendingPlan &plan, double idle_s) {
    crew_pool *p = pending_pool();
    std::vector<crew_timer *> timers(plan.delay.size(), nullptr);
    PendingResult r = measure_pending(
        plan, idle_s,
        [&](size_t i) {
            check(crew_timer_start(p, plan.delay[i], 3600000000000ull, CREW_TIMER_FIXED_RATE,
                                   never, nullptr, &timers[i]),
                  "crew_timer_start");
        },
        [&](size_t i) {
            check(crew_timer_stop(timers[i]), "crew_timer_stop");
            timers[i] = nullptr;
        });
    for (crew_timer *t : timers) // the rest, if the budget ran out
        check(crew_timer_stop(t), "crew_timer_stop");
    r.dropped = double(plan.delay.size()); // every stop returned CREW_OK
    check(crew_destroy(p), "crew_destroy");
    return r;
}
#endif

#ifdef CREW_HAVE_ASIO
PendingResult pending_asio(const PendingPlan &plan, double idle_s) {
    boost::asio::thread_pool pool(g_threads);
    std::vector<boost::asio::steady_timer> timers;
    timers.reserve(plan.delay.size());
    std::atomic<size_t> aborted{0}; // relaxed: read after pool.join()
    PendingResult r = measure_pending(
        plan, idle_s,
        [&](size_t i) {
            timers.emplace_back(pool, std::chrono::nanoseconds(plan.delay[i]));
            timers.back().async_wait([&aborted](const boost::system::error_code &ec) {
                if (ec == boost::asio::error::operation_aborted)
                    aborted.fetch_add(1, std::memory_order_relaxed);
                else
                    never(nullptr);
            });
        },
        [&](size_t i) { timers[i].cancel(); });
    timers.clear(); // the rest, if the budget ran out: a steady_timer's destructor cancels it
    pool.join();
    r.dropped = double(aborted.load(std::memory_order_relaxed));
    return r;
}
#endif

void usage(FILE *f, const char *argv0) {
    std::fprintf(f,
                 "usage: %s [-p crew,nanosleep,boost.asio,timerfd] [-l idle,busy] [-r repeats] "
                 "[-t threads] [-d seconds] [-n samples_1ms] [-N samples_10ms] "
                 "[-m pending_timers] [-s idle_seconds] [-q] [-c out.csv]\n"
                 "Lateness (actual start - due) of a 1 ms and a 10 ms delayed task and of a\n"
                 "1 ms fixed-rate periodic timer, on an idle pool and on one busy with 1 ms CPU\n"
                 "tasks, for crew and its peers; then the cost of -m pending timers.\n"
                 "  -p peers      which to run (default all that this build has)\n"
                 "  -l loads      idle, busy (default both)\n"
                 "  -r repeats    runs, interleaved (default 3)\n"
                 "  -t threads    pool size and busy threads (default: online cores)\n"
                 "  -d seconds    how long the periodic timer runs per run (default 10)\n"
                 "  -n, -N        samples of the 1 ms and 10 ms delays per run (500, 100)\n"
                 "  -m n          pending timers (default 1000000; 0: skip that part)\n"
                 "  -s seconds    how long they wait while CPU is measured (default 2)\n"
                 "  -q            quick: -r 1 -d 0.3 -n 50 -N 10 -m 100000 -s 0.3 (unless given)\n"
                 "  -c out.csv    every figure as part,load,peer,kind,run,metric,value\n"
                 "  -h, --help    this text\n",
                 argv0);
}

} // namespace

int main(int argc, char **argv) {
    std::vector<std::string> peers = {"crew", "nanosleep", "boost.asio", "timerfd"};
    std::vector<std::string> loads = {"idle", "busy"};
    int repeats = 3;
    double duration = 10, idle_s = 2;
    long n1 = 500, n10 = 100, pending = 1000000;
    const char *csv = nullptr;
    g_threads = unsigned(sysconf(_SC_NPROCESSORS_ONLN));
    static const option longopts[] = {{"help", no_argument, nullptr, 'h'}, {}};
    int opt;
    std::string given; // the options set explicitly: -q does not override them
    bool quick = false;
    while ((opt = getopt_long(argc, argv, "p:l:r:t:d:n:N:m:s:qc:h", longopts, nullptr)) != -1) {
        given += char(opt);
        switch (opt) {
        case 'p': peers = split(optarg); break;
        case 'l': loads = split(optarg); break;
        case 'r': repeats = std::atoi(optarg); break;
        case 't': g_threads = unsigned(std::atoi(optarg)); break;
        case 'd': duration = std::atof(optarg); break;
        case 'n': n1 = std::atol(optarg); break;
        case 'N': n10 = std::atol(optarg); break;
        case 'm': pending = std::atol(optarg); break;
        case 's': idle_s = std::atof(optarg); break;
        case 'q': quick = true; break;
        case 'c': csv = optarg; break;
        case 'h': usage(stdout, argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    if (quick) {
        auto unset = [&given](char c) { return given.find(c) == std::string::npos; };
        if (unset('r'))
            repeats = 1;
        if (unset('d'))
            duration = 0.3;
        if (unset('n'))
            n1 = 50;
        if (unset('N'))
            n10 = 10;
        if (unset('m'))
            pending = 100000;
        if (unset('s'))
            idle_s = 0.3;
    }
    if (optind < argc || repeats < 1 || repeats > 1000 || g_threads < 1 || g_threads > 1024 ||
        !(duration >= 0.01 && duration <= 3600) || n1 < 1 || n10 < 1 || pending < 0 ||
        pending > 100000000 || !(idle_s >= 0.01 && idle_s <= 3600)) {
        std::fprintf(stderr, "bench_timers: out of range: -r 1..1000, -t 1..1024, -d 0.01..3600,"
                             " -n/-N >= 1, -m 0..10^8, -s 0.01..3600\n");
        usage(stderr, argv[0]);
        return 2;
    }
    for (auto &l : loads)
        if (l != "idle" && l != "busy") {
            std::fprintf(stderr, "bench_timers: unknown load '%s' (idle, busy)\n", l.c_str());
            return 2;
        }
    std::vector<std::unique_ptr<Peer>> live;
    for (auto &n : peers) {
        auto p = make_peer(n);
        if (p)
            live.push_back(std::move(p));
        else
            std::printf("note: peer %s is not available in this build (%s)\n", n.c_str(),
                        n == "crew" ? "crew.h declares no timers" : "package absent?");
    }
    if (csv && !(g_csv = std::fopen(csv, "w")))
        die(csv);
    if (g_csv)
        std::fprintf(g_csv, "part,load,peer,kind,run,metric,value\n");

    const int64_t ms = 1000000;
    const int64_t period = ms, dur_ns = int64_t(duration * 1e9);
    const size_t slots = size_t(dur_ns / period);
    std::printf("%u threads (pool size, and busy threads), %d runs; lateness = start - due, in "
                "microseconds: medians over runs of each run's figure, with (min..max)\n",
                g_threads, repeats);
    std::printf("once: %ld samples of 1 ms and %ld of 10 ms per run; every 1ms: a fixed-rate "
                "timer for %.3g s (%zu firings due)\n",
                n1, n10, duration, slots);
    std::map<Key, Figures> figs;
    for (int run = 0; run < repeats; run++)
        for (auto &load : loads)
            for (size_t j = 0; j < live.size(); j++) {
                Peer &p = *live[(j + size_t(run)) % live.size()];
                p.load(load == "busy");
                if (load == "busy") // let the load fill the queues
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                for (auto kd : {std::make_pair("once 1ms", ms),
                                std::make_pair("once 10ms", 10 * ms)}) {
                    Key k{load, p.name(), kd.first};
                    const long n = kd.second == ms ? n1 : n10;
                    std::vector<int64_t> late;
                    p.once(kd.second); // untimed: a first timer may start a thread
                    for (long i = 0; i < n; i++)
                        late.push_back(p.once(kd.second));
                    record(figs[k], k, run, std::move(late));
                }
                Key k{load, p.name(), "every 1ms"};
                Firings f;
                f.times.assign(slots, 0);
                p.periodic(period, dur_ns, &f);
                // Slots still unserved when the timer stopped (a peer that fell behind) count
                // as served at the stop: their lateness is at least that.
                const size_t got = f.n.load(std::memory_order_acquire);
                std::vector<int64_t> late;
                for (size_t i = 0; i < slots; i++)
                    late.push_back((i < got ? f.times[i] : f.stopped) -
                                   (f.first + int64_t(i) * period));
                Figures &fg = figs[k];
                const double drift = got ? double(late[got - 1] - late[0]) / 1000.0 : 0;
                fg.drift.push_back(drift);
                fg.firings.push_back(double(f.runs));
                fg.expected.push_back(double(slots));
                const std::string rs = std::to_string(run);
                csv_row("lateness", load, p.name(), k.kind, rs, "drift_us", drift);
                csv_row("lateness", load, p.name(), k.kind, rs, "runs", double(f.runs));
                csv_row("lateness", load, p.name(), k.kind, rs, "served", double(got));
                csv_row("lateness", load, p.name(), k.kind, rs, "due", double(slots));
                record(fg, k, run, std::move(late));
                p.load(false);
            }
    std::printf("\n%-5s %-11s %-10s %-26s %-26s %-26s %s\n", "load", "peer", "timer",
                "p50 us", "p99 us", "max us", "drift us (runs/due)");
    for (auto &load : loads)
        for (const char *kind : {"once 1ms", "once 10ms", "every 1ms"})
            for (auto &p : live) {
                Key k{load, p->name(), kind};
                auto it = figs.find(k);
                if (it == figs.end())
                    continue;
                Figures &fg = it->second;
                std::string drift = "-";
                if (!fg.drift.empty()) {
                    char buf[64];
                    std::snprintf(buf, sizeof buf, " (%.0f/%.0f)", stat(fg.firings).median,
                                  stat(fg.expected).median);
                    drift = fmt(fg.drift, 0) + buf;
                }
                std::printf("%-5s %-11s %-10s %-26s %-26s %-26s %s\n", load.c_str(), p->name(),
                            kind, fmt(fg.p50, 0).c_str(), fmt(fg.p99, 0).c_str(),
                            fmt(fg.max, 0).c_str(), drift.c_str());
                std::sort(fg.all.begin(), fg.all.end());
                static const double qs[] = {0,    0.01, 0.02, 0.05, 0.1,   0.2,   0.3,  0.4,
                                            0.5,  0.6,  0.7,  0.8,  0.9,   0.95,  0.98, 0.99,
                                            0.995, 0.998, 0.999, 1};
                for (double q : qs) {
                    char qn[16];
                    std::snprintf(qn, sizeof qn, "%g", q);
                    csv_row("cdf", load, p->name(), kind, "all", qn, quantile_us(fg.all, q));
                }
            }
    live.clear(); // the pools' threads go before the pending part measures CPU

    if (pending > 0) {
        PendingPlan plan{size_t(pending)};
        std::printf("\n%ld pending timers, due in 10..20 minutes; medians over %d runs with "
                    "(min..max); CPU while they wait: over %.3g s, whole process\n",
                    pending, repeats, idle_s);
        std::printf("%-44s %-22s %-22s %-22s %-22s %s\n", "timers (cancelled by)", "bytes/timer",
                    "arm ns", "cancel ns", "CPU ms per s", "reported");
        struct Kind {
            const char *name;
            std::function<PendingResult()> fn;
        };
        std::vector<Kind> kinds;
#ifdef HAVE_CREW_TIMERS
        if (std::find(peers.begin(), peers.end(), "crew") != peers.end()) {
            kinds.push_back({"crew delayed task, own group (crew_cancel)",
                             [&] { return pending_crew_delayed(plan, idle_s); }});
            kinds.push_back({"crew periodic timer (crew_timer_stop)",
                             [&] { return pending_crew_timer(plan, idle_s); }});
        }
#endif
#ifdef CREW_HAVE_ASIO
        if (std::find(peers.begin(), peers.end(), "boost.asio") != peers.end())
            kinds.push_back({"boost.asio steady_timer (cancel)",
                             [&] { return pending_asio(plan, idle_s); }});
#endif
        std::map<std::string, std::vector<PendingResult>> res;
        for (int run = 0; run < repeats; run++)
            for (size_t j = 0; j < kinds.size(); j++) {
                Kind &kd = kinds[(j + size_t(run)) % kinds.size()];
                PendingResult r = kd.fn();
                if (r.dropped != double(pending)) {
                    std::fprintf(stderr, "bench_timers: %s: %.0f of %ld cancelled timers "
                                 "reported\n", kd.name, r.dropped, pending);
                    return 1;
                }
                res[kd.name].push_back(r);
                const std::string rs = std::to_string(run);
                csv_row("pending", "idle", kd.name, "pending", rs, "bytes_per_timer",
                        r.bytes_per_timer);
                csv_row("pending", "idle", kd.name, "pending", rs, "insert_ns", r.insert_ns);
                csv_row("pending", "idle", kd.name, "pending", rs, "cancel_ns", r.cancel_ns);
                csv_row("pending", "idle", kd.name, "pending", rs, "cpu_ms_per_s",
                        r.cpu_ms_per_s);
                csv_row("pending", "idle", kd.name, "pending", rs, "dropped", r.dropped);
                csv_row("pending", "idle", kd.name, "pending", rs, "cancelled_one_by_one",
                        double(r.cancelled));
            }
        for (auto &kd : kinds) {
            auto &v = res[kd.name];
            std::vector<double> b, i, c, u, d;
            for (auto &r : v) {
                b.push_back(r.bytes_per_timer);
                i.push_back(r.insert_ns);
                c.push_back(r.cancel_ns);
                u.push_back(r.cpu_ms_per_s);
                d.push_back(r.dropped);
            }
            size_t one_by_one = pending;
            for (auto &r : v)
                one_by_one = std::min(one_by_one, r.cancelled);
            std::printf("%-44s %-22s %-22s %-22s %-22s %.0f of %ld%s\n", kd.name,
                        fmt(b, 0).c_str(), fmt(i, 0).c_str(), fmt(c, 0).c_str(),
                        fmt(u, 2).c_str(), stat(d).min, pending,
                        one_by_one < size_t(pending)
                            ? (" (cancel ns over the first " + std::to_string(one_by_one) +
                               ", the rest in bulk)")
                                  .c_str()
                            : "");
        }
    }
    if (g_csv)
        std::fclose(g_csv);
    return 0;
}
