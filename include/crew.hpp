// crew.hpp -- the C++17 interface to crew: header-only, over the C library (crew.h).
//
//   crew::pool p;                                  // one worker per CPU it may use
//   auto f = p.submit([](int x) { return x * 2; }, 21);   // std::future<int>
//   p.post([] { ... });                            // fire and forget
//   crew::group g(p);                              // a group of tasks to wait for
//   g.run([] { ... }); g.run([] { ... });
//   g.wait();                                      // the caller helps; rethrows a task's exception
//   p.wait();                                      // every task of the pool (caller helps)
//   if (!g.wait_for(std::chrono::milliseconds(5))) { ... }  // false: timed out; g goes on
//   crew::lane strand(p);                          // tasks in order, one at a time
//   strand.post([] { ... }); auto r = strand.submit(f);
//   crew::graph g(p);                              // a task graph, built once, run often
//   auto a = g.emplace([] { ... }), b = g.emplace([] { ... });
//   a.precede(b); g.run().wait();                  // rethrows a node's exception
//   crew_stats s = p.stats();                      // with options{.monitoring = true}
//
// Errors from the C library become crew::error (a std::system_error-like exception carrying the
// CREW_E* code). An exception escaping a task started with submit() reaches future::get(); one
// escaping a task of a group is rethrown by group::wait(); one escaping post() goes to the pool's
// error handler (by default it is printed to stderr) -- never std::terminate. A group destroyed
// without a wait() that would have delivered its exception waits for its tasks (as std::jthread
// joins) and hands the exception to the pool's error handler: it is never dropped silently.
//
// Waiting with a time-out: group::wait_for / wait_until and pool::wait_for / wait_until return
// bool (true: done, as wait() would have returned; false: the time passed first and the tasks
// go on), as condition_variable::wait_for with a predicate and timed_mutex::try_lock_for do.
// Unlike wait(), they run no queued task: they only sleep, so no task, however long, keeps them
// past their time (crew.h, "Timed waits"); from a task, what they wait for must run on other
// threads (on a one-thread pool they time out). A duration <= 0 polls. The futures that
// submit() returns are std::future: wait_for / wait_until on them answer
// std::future_status::ready or ::timeout, but like get() and wait() they only block the calling
// thread; they run no queued task. Called from inside a task of the pool, such a wait holds a
// worker while the awaited task may still be queued behind it: on a small pool whose workers
// all wait so, get() and wait() wait for ever and wait_for() times out every time. From a task,
// wait for a crew::group (which helps) instead of a future.
#ifndef CREW_HPP
#define CREW_HPP

// One line instead of pages of template errors: the layer uses if constexpr, std::apply,
// std::invoke_result_t and the _v traits. (MSVC reports __cplusplus correctly with
// /Zc:__cplusplus.)
#if !defined(__cplusplus) || __cplusplus < 201703L
#error "crew.hpp needs C++17 or later (-std=c++17); from C, or older C++, include crew.h instead"
#else

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "crew.h"

namespace crew {

// A failed call of the C library. what() leads with what the program did, then says what was
// wrong, then the code: "<where>: <detail> (CREW_<crew_err_name(code)>)". where is the C++ call the
// program made; the detail is crew_last_error() of the constructing thread without its leading
// "crew_<function>: " (the C call that the C++ one made, which the program never named),
// captured at construction (the thread's next failing call replaces it), so construct it right
// after the failed call, on its thread; without a detail, crew_strerror(code) stands in for it.
// For example "crew::pool::resize: threads is 0; a pool needs at least 1 (CREW_EINVAL)", or
// "crew::pool::post: the pool is shutting down or shut down; it accepts no more tasks
// (CREW_ESHUTDOWN)".
class error : public std::runtime_error {
public:
    error(int code, const char *where)
        : std::runtime_error(message(code, where, crew_last_error())), code_(code) {}
    // The same with the detail given, for a failure that no crew call of this thread reported.
    error(int code, const char *where, const char *detail)
        : std::runtime_error(message(code, where, detail)), code_(code) {}
    int code() const noexcept { return code_; } // a CREW_E* value
private:
    static std::string message(int code, const char *where, const char *detail) {
        if (!detail || !*detail)
            detail = crew_strerror(code);
        else if (std::strncmp(detail, "crew_", 5) == 0) { // the C call's name: left out
            const char *d = detail + 5;
            while ((*d >= 'a' && *d <= 'z') || (*d >= '0' && *d <= '9') || *d == '_')
                d++;
            if (d[0] == ':' && d[1] == ' ')
                detail = d + 2;
        }
        return std::string(where) + ": " + detail + " (CREW_" + crew_err_name(code) + ")";
    }
    int code_;
};

namespace detail {
inline void check(int rc, const char *where) {
    if (rc != CREW_OK)
        throw error(rc, where);
}

// A heap-allocated job: the C task runs it once and deletes it.
struct job {
    virtual ~job() = default;
    virtual void run() noexcept = 0;
    static void trampoline(void *self) {
        std::unique_ptr<job> j(static_cast<job *>(self));
        j->run();
    }
};

template <class F> struct fn_job final : job {
    F f;
    explicit fn_job(F &&fn) : f(std::move(fn)) {}
    void run() noexcept override { f(); }
};

template <class F> job *make_job(F &&f) {
    return new fn_job<std::decay_t<F>>(std::forward<F>(f));
}

// A task whose memory its submitter owns (crew_coro.hpp keeps them in coroutine frames),
// submitted as trampoline with the node as its argument: the pool calls run() if a thread runs
// it, dropped() if it drops it without running it (a cancelling shutdown, a full queue that
// drops its oldest task), on the dropping thread, through the pool's on_drop hook. Either call
// is the last the pool makes on the node.
struct node {
    virtual void run() noexcept = 0;
    virtual void dropped() noexcept = 0;
    static void trampoline(void *self) { static_cast<node *>(self)->run(); }

protected:
    ~node() = default;
};

// A start-by time on crew_now_ns()'s clock: steady_clock is CLOCK_MONOTONIC on Linux (libstdc++
// and libc++). 0 would mean "no deadline", so the clock's epoch itself becomes 1 ns after it.
inline std::uint64_t start_by_ns(std::chrono::steady_clock::time_point t) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    return ns > 0 ? static_cast<std::uint64_t>(ns) : 1u;
}

// A time-out for the C timed waits (crew_wait_timed): 0 (a poll) for d <= 0, UINT64_MAX (no
// limit) for a d longer than about 285 years (past what nanoseconds hold), else d in ns.
template <class Rep, class Period>
std::uint64_t timeout_ns(const std::chrono::duration<Rep, Period> &d) {
    if (d <= d.zero())
        return 0;
    if (std::chrono::duration<double, std::nano>(d).count() >= 9e18)
        return UINT64_MAX;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    return ns > 0 ? static_cast<std::uint64_t>(ns) : 1u; // a d shorter than 1 ns waits 1 ns
}
// The time-out a wait_until(t) has left now, on t's own clock.
template <class Clock, class Duration>
std::uint64_t timeout_until(const std::chrono::time_point<Clock, Duration> &t) {
    return timeout_ns(t - Clock::now());
}

// Bind f to copies of args (as std::thread and std::async do).
template <class F, class... A> auto bind(F &&f, A &&...args) {
    return [f = std::forward<F>(f), tup = std::make_tuple(std::forward<A>(args)...)]() mutable {
        return std::apply(std::move(f), std::move(tup));
    };
}
} // namespace detail

// Pool settings; the defaults are those of crew_config_init().
struct options {
    unsigned threads = 0;     // 0 = one per CPU it may use (crew_config.threads)
    std::size_t stack_size = 0; // 0 = system default
    const char *name = "crew";  // thread name prefix
    unsigned spin = CREW_SPIN_AUTO; // polls before an idle worker sleeps (crew_config.spin)
    bool monitoring = false;    // collect statistics from the start
    unsigned scheduler = CREW_SCHED_DEFAULT; // crew_scheduler: work stealing by default
    unsigned lock = CREW_LOCK_MUTEX;         // crew_lock: the shared queues' lock
    unsigned max_blocking = 64;              // threads for submit_blocking tasks, at most
    unsigned queue_capacity = 0;             // 0 = unbounded
    unsigned full_policy = CREW_FULL_BLOCK;  // crew_full_policy: what a full queue does
};

class group;
class lane;
class pool;

namespace detail {
// The crew::pool whose worker this thread is (set by the pool's on_start hook, cleared by its
// on_stop), or nullptr (any other thread, blocking threads included): crew_coro.hpp's
// sync_wait helps on it instead of blocking the worker.
inline thread_local const pool *worker_of = nullptr;
} // namespace detail

class pool {
public:
    using error_handler = std::function<void(std::exception_ptr)>;

    pool() : pool(options{}) {}
    explicit pool(const options &o) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = o.threads;
        cfg.stack_size = o.stack_size;
        cfg.name = o.name;
        cfg.spin = o.spin;
        cfg.monitoring = o.monitoring;
        cfg.scheduler = o.scheduler;
        cfg.lock = o.lock;
        cfg.max_blocking = o.max_blocking;
        cfg.queue_capacity = o.queue_capacity;
        cfg.full_policy = o.full_policy;
        // A job dropped without running (cancel) is freed here: its closure, and any promise
        // in it (the future then reports a broken promise); a node is told (detail::node).
        crew_hooks hooks{};
        hooks.size = sizeof hooks;
        hooks.on_drop = [](crew_fn fn, void *task_arg, void *) {
            if (fn == detail::job::trampoline)
                delete static_cast<detail::job *>(task_arg);
            else if (fn == detail::node::trampoline)
                static_cast<detail::node *>(task_arg)->dropped();
        };
        // Workers know their pool (detail::worker_of); this object outlives its threads.
        hooks.arg = this;
        hooks.on_start = [](unsigned index, void *self) {
            if (index < CREW_MAX_THREADS) // not a blocking thread
                detail::worker_of = static_cast<const pool *>(self);
        };
        hooks.on_stop = [](unsigned, void *) { detail::worker_of = nullptr; };
        cfg.hooks = &hooks;
        detail::check(crew_create(&p_, &cfg), "crew::pool");
        state_ = std::make_shared<shared>();
    }
    // Drains: every accepted task runs before the destructor returns.
    ~pool() { crew_destroy(p_); }
    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;

    // Run f(args...) and get its result (or its exception) through a future.
    template <class F, class... A, class = std::enable_if_t<std::is_invocable_v<F, A...>>>
    auto submit(F &&f, A &&...args) {
        return submit(std::uint32_t(0), std::forward<F>(f), std::forward<A>(args)...);
    }
    // The same with a priority (0 = highest).
    template <class F, class... A, class = std::enable_if_t<std::is_invocable_v<F, A...>>>
    auto submit(std::uint32_t priority, F &&f, A &&...args) {
        using R = std::invoke_result_t<F, A...>;
        auto bound = detail::bind(std::forward<F>(f), std::forward<A>(args)...);
        std::packaged_task<R()> task(std::move(bound));
        std::future<R> fut = task.get_future();
        enqueue("crew::pool::submit", priority, nullptr, [t = std::move(task)]() mutable { t(); });
        return fut;
    }

    // Run f(args...), which blocks (I/O, sleeps), on the pool's blocking threads, never on a
    // worker (CREW_TASK_BLOCKING); its result or exception comes through the future.
    template <class F, class... A, class = std::enable_if_t<std::is_invocable_v<F, A...>>>
    auto submit_blocking(F &&f, A &&...args) {
        using R = std::invoke_result_t<F, A...>;
        auto bound = detail::bind(std::forward<F>(f), std::forward<A>(args)...);
        std::packaged_task<R()> task(std::move(bound));
        std::future<R> fut = task.get_future();
        enqueue("crew::pool::submit_blocking", 0, nullptr, [t = std::move(task)]() mutable { t(); },
                CREW_TASK_BLOCKING);
        return fut;
    }

    // Deadlines (crew_submit_deadline): f runs only if a thread starts it by start_by; if not, it
    // is dropped (its closure destroyed, never called), so the future's get() throws
    // std::future_error with std::future_errc::broken_promise.
    template <class F, class... A, class = std::enable_if_t<std::is_invocable_v<F, A...>>>
    auto submit_by(std::chrono::steady_clock::time_point start_by, F &&f, A &&...args) {
        using R = std::invoke_result_t<F, A...>;
        auto bound = detail::bind(std::forward<F>(f), std::forward<A>(args)...);
        std::packaged_task<R()> task(std::move(bound));
        std::future<R> fut = task.get_future();
        enqueue("crew::pool::submit_by", 0, nullptr, [t = std::move(task)]() mutable { t(); }, 0,
                detail::start_by_ns(start_by));
        return fut;
    }

    // Run f(args...) once delay has passed (crew_submit_after: not before), at priority 0; its
    // result or exception comes through the future. A delayed task dropped unrun (a cancelling
    // shutdown) breaks its promise: get() throws std::future_error (broken_promise).
    template <class Rep, class Period, class F, class... A,
              class = std::enable_if_t<std::is_invocable_v<F, A...>>>
    auto submit_after(std::chrono::duration<Rep, Period> delay, F &&f, A &&...args) {
        using R = std::invoke_result_t<F, A...>;
        auto bound = detail::bind(std::forward<F>(f), std::forward<A>(args)...);
        std::packaged_task<R()> task(std::move(bound));
        std::future<R> fut = task.get_future();
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(delay).count();
        std::uint64_t when = crew_now_ns() + (ns > 0 ? static_cast<std::uint64_t>(ns) : 0u);
        detail::job *j = detail::make_job([t = std::move(task)]() mutable { t(); });
        int rc = crew_submit_at(p_, when, detail::job::trampoline, j, 0, nullptr);
        if (rc != CREW_OK) {
            delete j;
            throw error(rc, "crew::pool::submit_after");
        }
        return fut;
    }

    // Fire and forget. An exception escaping f goes to the error handler.
    // post() with a start-by time: f is dropped (never called) if no thread starts it by then.
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
    void post_by(std::chrono::steady_clock::time_point start_by, F &&f) {
        enqueue("crew::pool::post_by", 0, nullptr, wrap_post(std::forward<F>(f)), 0,
                detail::start_by_ns(start_by));
    }

    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>> void post(F &&f) {
        post(std::uint32_t(0), std::forward<F>(f));
    }
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
    void post(std::uint32_t priority, F &&f) {
        enqueue("crew::pool::post", priority, nullptr, wrap_post(std::forward<F>(f)));
    }

    // Completion callback (crew_notify): f() runs once the C group h has finished, however it
    // finished, as a task of no group; in it crew_wait(native(), h) answers at once. An
    // exception escaping f goes to the error handler, as for post(). Throws crew::error
    // (CREW_EINVAL for a handle this pool never issued, CREW_ESHUTDOWN, CREW_ENOMEM).
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
    void notify(crew_handle h, F &&f) {
        notify_job(h, wrap_post(std::forward<F>(f), "a completion callback"), "crew::pool::notify");
    }

    // Where exceptions escaping post() go, and those of a group destroyed before a wait() could
    // rethrow them (default: a line on stderr). The handler runs on the thread that met the
    // exception: a worker for post(), the destroying thread for a group. An exception escaping
    // the handler itself is ignored, and the default line printed instead. Thread-safe.
    void on_error(error_handler h) { state_->set(std::move(h)); }

    // Wait until every accepted task has finished; the caller helps. Throws crew::error with
    // CREW_ECANCELED if a cancelling shutdown dropped tasks (crew_wait_all), CREW_EDEADLK from
    // a task of this pool.
    void wait() { detail::check(crew_wait_all(p_), "crew::pool::wait"); }
    // wait() with a time-out (crew_wait_all_timed): true once every accepted task has finished
    // (errors as wait()'s), false if the time passed first (the tasks go on). The caller runs
    // no task meanwhile, unlike wait() (crew.h, "Timed waits"); a duration <= 0 polls.
    template <class Rep, class Period> bool wait_for(const std::chrono::duration<Rep, Period> &d) {
        return wait_all_timed(detail::timeout_ns(d));
    }
    template <class Clock, class Duration>
    bool wait_until(const std::chrono::time_point<Clock, Duration> &t) {
        return wait_all_timed(detail::timeout_until(t));
    }

    // Asio's join() and the close() of Jue's pool: stop taking work, run what was accepted,
    // and stop the workers. Later submissions throw crew::error (CREW_ESHUTDOWN).
    void join() { detail::check(crew_shutdown(p_, CREW_DRAIN), "crew::pool::join"); }
    void close() { join(); }
    // Drop the queued tasks instead (running ones finish).
    void cancel() { detail::check(crew_shutdown(p_, CREW_CANCEL), "crew::pool::cancel"); }

    void resize(unsigned threads) { detail::check(crew_resize(p_, threads), "crew::pool::resize"); }
    // Workers finish their task and take no new one until resume(); submissions still queue.
    void pause() { detail::check(crew_pause(p_), "crew::pool::pause"); }
    void resume() { detail::check(crew_resume(p_), "crew::pool::resume"); }
    // Statistics (collected while monitoring is on: options::monitoring or monitoring(true)).
    crew_stats stats() const {
        crew_stats s;
        s.size = sizeof s;
        detail::check(crew_stats_get(p_, &s), "crew::pool::stats");
        return s;
    }
    void monitoring(bool on) {
        detail::check(crew_set_monitoring(p_, on), "crew::pool::monitoring");
    }
    // Stall diagnostics (crew_diagnose_ex): write what looks stuck to f; returns the findings.
    int diagnose(std::FILE *f = stderr, unsigned busy_ms = CREW_DIAGNOSE_DEFAULT_MS,
                 unsigned queued_ms = CREW_DIAGNOSE_DEFAULT_MS,
                 unsigned blocked_ms = CREW_DIAGNOSE_DEFAULT_MS) const {
        int n = crew_diagnose_ex(p_, f, busy_ms, queued_ms, blocked_ms);
        if (n < 0)
            throw error(n, "crew::pool::diagnose");
        return n;
    }
    unsigned size() const noexcept { return crew_size(p_); }
    crew_pool *native() const noexcept { return p_; }

private:
    friend class group;
    friend class lane;
    friend class timer;
    friend class graph;

    bool wait_all_timed(std::uint64_t timeout) {
        int rc = crew_wait_all_timed(p_, timeout);
        if (rc == CREW_ETIMEDOUT)
            return false;
        detail::check(rc, "crew::pool::wait_for");
        return true;
    }

    struct shared { // outlives the pool while tasks hold it
        std::mutex m;
        error_handler h;
        void set(error_handler nh) {
            std::lock_guard<std::mutex> g(m);
            h = std::move(nh);
        }
        // who: whose exception it is, for the default line ("a posted task").
        void report(std::exception_ptr e, const char *who) {
            error_handler copy;
            {
                std::lock_guard<std::mutex> g(m);
                copy = h;
            }
            if (copy) {
                try {
                    copy(e);
                    return;
                } catch (...) {
                }
            }
            try {
                std::rethrow_exception(e);
            } catch (const std::exception &x) {
                std::fprintf(stderr, "crew: %s threw: %s\n", who, x.what());
            } catch (...) {
                std::fprintf(stderr, "crew: %s threw a non-standard exception\n", who);
            }
        }
    };

    // f as a posted job: an exception escaping it goes to the error handler; who names it.
    template <class F> auto wrap_post(F &&f, const char *who = "a posted task") {
        return [f = std::forward<F>(f), s = state_, who]() mutable {
            try {
                f();
            } catch (...) {
                s->report(std::current_exception(), who);
            }
        };
    }

    // Register job body j (already wrapped) as a completion callback of h.
    template <class J> void notify_job(crew_handle h, J &&body, const char *where) {
        detail::job *j = detail::make_job(std::forward<J>(body));
        int rc = crew_notify(p_, h, detail::job::trampoline, j);
        if (rc != CREW_OK) {
            delete j;
            throw error(rc, where);
        }
    }

    // Submit f (the general form, crew_submit_with); who: the call of this class the program
    // made, named by the crew::error thrown when it fails.
    template <class F>
    void enqueue(const char *who, std::uint32_t priority, crew_handle *h, F &&f,
                 unsigned flags = 0, std::uint64_t start_by = 0) {
        detail::job *j = detail::make_job(std::forward<F>(f));
        crew_submit_options o = CREW_SUBMIT_OPTIONS_INIT;
        o.priority = priority;
        o.flags = flags;
        o.start_by_ns = start_by;
        int rc = crew_submit_with(p_, detail::job::trampoline, j, &o, h);
        if (rc != CREW_OK) {
            delete j;
            throw error(rc, who);
        }
    }

    crew_pool *p_ = nullptr;
    std::shared_ptr<shared> state_;
};

// A periodic timer (crew_timer_start) that stops in its destructor: f() runs first after
// `first`, then every `period` (a zero period: once), at a fixed rate (CREW_TIMER_FIXED_RATE,
// the default) or with a fixed delay between runs (CREW_TIMER_FIXED_DELAY); two runs never
// overlap. An exception escaping f goes to the pool's error handler. stop() (and the destructor)
// returns once no run is in progress or will start, and frees f; called from inside f, it
// returns at once and f is freed when that run returns. Movable, not copyable; must not outlive
// its pool. Throws crew::error from the constructor (crew_timer_start's errors).
class timer {
public:
    timer() = default;
    template <class Rep1, class Period1, class Rep2, class Period2, class F,
              class = std::enable_if_t<std::is_invocable_v<F>>>
    timer(pool &p, std::chrono::duration<Rep1, Period1> first,
          std::chrono::duration<Rep2, Period2> period, F &&f,
          unsigned flags = CREW_TIMER_FIXED_RATE) {
        auto w = p.wrap_post(std::forward<F>(f), "a timer");
        using W = decltype(w);
        auto h = std::make_unique<holder<W>>(std::move(w));
        int rc = crew_timer_start(p.native(), ns(first), ns(period), flags, &run<W>, h.get(), &t_);
        if (rc != CREW_OK)
            throw error(rc, "crew::timer");
        h_ = h.release();
        free_ = &free_holder<W>;
    }
    timer(const timer &) = delete;
    timer &operator=(const timer &) = delete;
    timer(timer &&o) noexcept
        : t_(std::exchange(o.t_, nullptr)), h_(std::exchange(o.h_, nullptr)), free_(o.free_) {}
    timer &operator=(timer &&o) noexcept {
        if (this != &o) {
            stop();
            t_ = std::exchange(o.t_, nullptr);
            h_ = std::exchange(o.h_, nullptr);
            free_ = o.free_;
        }
        return *this;
    }
    ~timer() { stop(); }
    // Stop it (crew_timer_stop); a timer already stopped, or moved from, is left as it is.
    void stop() noexcept {
        if (!t_)
            return;
        crew_timer_stop(std::exchange(t_, nullptr));
        base *h = std::exchange(h_, nullptr);
        // From inside its own run that run still uses h: it frees h when f returns. Otherwise
        // no run is in progress (the stop waited for it, which orders its write of runner).
        if (h->runner == std::this_thread::get_id())
            h->free_at_end = true;
        else
            free_(h);
    }
    bool running() const noexcept { return t_ != nullptr; }

private:
    struct base {
        std::thread::id runner{}; // the thread running f now (written by that thread)
        bool free_at_end = false; // stopped from inside f: the run frees the holder
    };
    template <class F> struct holder : base {
        F f;
        explicit holder(F &&fn) : f(std::move(fn)) {}
    };
    template <class F> static void run(void *arg) {
        auto *h = static_cast<holder<F> *>(arg);
        h->runner = std::this_thread::get_id();
        h->f();
        h->runner = std::thread::id{};
        if (h->free_at_end)
            delete h;
    }
    template <class F> static void free_holder(base *h) { delete static_cast<holder<F> *>(h); }
    template <class Rep, class Period>
    static std::uint64_t ns(std::chrono::duration<Rep, Period> d) {
        auto n = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
        return n > 0 ? static_cast<std::uint64_t>(n) : 0u;
    }
    crew_timer *t_ = nullptr;
    base *h_ = nullptr;
    void (*free_)(base *) = nullptr;
};

// A group of tasks waited for together (caller helps). Like tbb::task_group: the first
// exception a task throws is kept and rethrown by wait(). run() and wait() may be called from
// several threads, and from the group's own tasks (nesting). The group must not outlive its pool.
//
// The destructor waits for every task run() so far (they may use the enclosing scope), as
// std::jthread joins. It cannot throw, so if a task's exception is still kept there (wait() was
// never called, or not after that task), the destructor hands it to the pool's error handler
// (pool::on_error; by default one line on stderr) instead of dropping it: call wait() to get it
// as an exception. A group that was cancel()led, or whose run_by() tasks expired, reports nothing
// for those (the caller asked for them); any other failure of the wait is reported as a
// crew::error.
class group {
public:
    explicit group(pool &p) : p_(p), state_(std::make_shared<shared>()) {}
    ~group() {
        const char *who = "a task of a crew::group destroyed without wait()";
        int rc = wait_runs();
        try {
            if (rc != CREW_OK && rc != CREW_ECANCELED && rc != CREW_EEXPIRED)
                p_.state_->report(std::make_exception_ptr(error(rc, "crew::group::~group")), who);
            if (std::exception_ptr kept = state_->take())
                p_.state_->report(kept, who);
        } catch (...) { // out of memory while reporting: nothing more can be done here
        }
    }
    group(const group &) = delete;
    group &operator=(const group &) = delete;

    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
    void run(F &&f, std::uint32_t priority = 0) {
        run_until(0, std::forward<F>(f), priority);
    }

    // run() with a start-by time (crew_submit_deadline): a task no thread has started by then
    // is dropped, and wait() then throws crew::error with CREW_EEXPIRED.
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
    void run_by(std::chrono::steady_clock::time_point start_by, F &&f, std::uint32_t priority = 0) {
        run_until(detail::start_by_ns(start_by), std::forward<F>(f), priority);
    }

    // Drop the tasks run() so far that have not started (running ones finish; they can poll
    // crew_cancelled()). wait() then throws crew::error with CREW_ECANCELED.
    void cancel() {
        crew_handle h = current();
        if (h.slot != 0) {
            int rc = crew_cancel(p_.p_, h);
            if (rc != CREW_ESTALE) // a finished group has nothing left to cancel
                detail::check(rc, "crew::group::cancel");
        }
    }

    // Wait for every task run() so far; rethrow the first exception one of them threw.
    void wait() { (void)wait_timed(UINT64_MAX); }

    // wait() with a time-out (crew_wait_timed): true once every task run() so far has finished
    // (then as wait(): the first exception rethrown, crew::error for a cancelled or expired
    // group), false if the time passed first: the tasks go on, and the group can be waited for
    // again. The caller runs no task meanwhile, unlike wait(): it sleeps, and returns soon
    // after the time passes whatever the pool runs (crew.h, "Timed waits"). A duration <= 0
    // polls; a duration too long for nanoseconds (duration::max()) waits without limit, and
    // helps, as wait().
    template <class Rep, class Period> bool wait_for(const std::chrono::duration<Rep, Period> &d) {
        return wait_timed(detail::timeout_ns(d));
    }
    template <class Clock, class Duration>
    bool wait_until(const std::chrono::time_point<Clock, Duration> &t) {
        return wait_timed(detail::timeout_until(t));
    }

    // Completion callback: f() runs once every task run() so far has finished (through
    // crew_notify, without blocking a thread meanwhile), on a pool thread; with no task run()
    // yet, soon. Tasks run() after this call are not waited for. An exception escaping f goes
    // to the pool's error handler (pool::on_error). f must not use this group object, which
    // may be gone by then; the pool outlives f (its destructor drains). Throws crew::error as
    // pool::notify.
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>> void on_done(F &&f) {
        auto body = p_.wrap_post(std::forward<F>(f), "a crew::group's on_done callback");
        std::lock_guard<std::mutex> g(m_);
        if (h_.slot == 0) // nothing run yet: done already
            p_.enqueue("crew::group::on_done", 0, nullptr, std::move(body));
        else
            p_.notify_job(h_, std::move(body), "crew::group::on_done");
    }
    // The C group of the tasks run() so far (CREW_HANDLE_NONE before the first), e.g. for
    // crew_notify or crew_wait on the C interface.
    crew_handle native() { return current(); }

private:
    // wait(), or with a time-out (UINT64_MAX: none): false if it timed out.
    bool wait_timed(std::uint64_t timeout) {
        int rc = wait_runs(timeout);
        if (rc == CREW_ETIMEDOUT)
            return false;
        detail::check(rc, timeout == UINT64_MAX ? "crew::group::wait" : "crew::group::wait_for");
        std::exception_ptr e = state_->take();
        if (e)
            std::rethrow_exception(e);
        return true;
    }

    // Wait for every task run() so far, without holding m_ (tasks may run() into the group
    // meanwhile); if run() opened a new crew group in the meantime, wait for that one too.
    // Returns the first failure of crew_wait (CREW_OK if none), having waited for all, or
    // CREW_ETIMEDOUT once timeout ns have passed (UINT64_MAX: no limit; crew_wait_timed).
    int wait_runs(std::uint64_t timeout = UINT64_MAX) noexcept {
        const std::uint64_t began = timeout == UINT64_MAX ? 0 : crew_now_ns();
        int first = CREW_OK;
        for (crew_handle h = current();; h = current()) {
            if (h.slot != 0) {
                int rc;
                if (timeout == UINT64_MAX) {
                    rc = crew_wait(p_.p_, h);
                } else {
                    std::uint64_t spent = crew_now_ns() - began;
                    rc = crew_wait_timed(p_.p_, h, spent < timeout ? timeout - spent : 0);
                    if (rc == CREW_ETIMEDOUT)
                        return rc;
                }
                if (first == CREW_OK)
                    first = rc;
            }
            crew_handle now = current();
            if (now.slot == h.slot && now.gen == h.gen)
                return first;
        }
    }

    template <class F> void run_until(std::uint64_t start_by, F &&f, std::uint32_t priority) {
        auto body = [f = std::forward<F>(f), s = state_]() mutable {
            try {
                f();
            } catch (...) {
                s->keep(std::current_exception());
            }
        };
        detail::job *j = detail::make_job(std::move(body));
        std::lock_guard<std::mutex> g(m_);
        // A crew group that has finished is replaced by a new one, stored in h_ (crew.h).
        int rc =
            crew_submit_deadline(p_.p_, detail::job::trampoline, j, priority, 0, start_by, &h_);
        if (rc != CREW_OK) {
            delete j;
            throw error(rc, "crew::group::run");
        }
    }
    crew_handle current() {
        std::lock_guard<std::mutex> g(m_);
        return h_;
    }
    struct shared {
        std::mutex m;
        std::exception_ptr first;
        void keep(std::exception_ptr e) {
            std::lock_guard<std::mutex> g(m);
            if (!first)
                first = e;
        }
        std::exception_ptr take() {
            std::lock_guard<std::mutex> g(m);
            return std::exchange(first, nullptr);
        }
    };
    pool &p_;
    std::mutex m_;                     // guards h_
    crew_handle h_ = CREW_HANDLE_NONE; // the crew group of the tasks run() so far
    std::shared_ptr<shared> state_;
};

// A lane (crew_lane_*): tasks that start in the order they were posted or submitted, at most
// max_concurrency at once (1, the default: a strand, whose tasks never overlap, so they need no
// lock among themselves), on the pool's threads. An idle lane costs a few dozen bytes and no
// thread. Exceptions go where the pool's do: a submit()ted task's to its future, a post()ed
// task's to the pool's error handler. Movable, not copyable; it must not outlive its pool. The
// destructor waits for the lane's tasks (from a task of the pool it runs queued tasks
// meanwhile); destroying a lane from one of its own tasks cannot wait for that task, so the
// destructor then reports CREW_EDEADLK to the error handler and leaves the lane alive (leaked).
class lane {
public:
    explicit lane(pool &p, unsigned max_concurrency = 1) : p_(&p) {
        detail::check(crew_lane_create(p.p_, max_concurrency, &l_), "crew::lane");
    }
    ~lane() { release(); }
    lane(const lane &) = delete;
    lane &operator=(const lane &) = delete;
    lane(lane &&o) noexcept : p_(o.p_), l_(std::exchange(o.l_, nullptr)) {}
    lane &operator=(lane &&o) noexcept {
        if (this != &o) {
            release();
            p_ = o.p_;
            l_ = std::exchange(o.l_, nullptr);
        }
        return *this;
    }

    // Fire and forget. An exception escaping f goes to the pool's error handler.
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>> void post(F &&f) {
        enqueue(p_->wrap_post(std::forward<F>(f)));
    }
    // A barrier (crew_lane_barrier), fire and forget as post(): f starts once every task
    // posted or submitted to the lane before it has finished, runs alone, and the tasks after
    // it start once it has finished. With max_concurrency N the lane is a readers-writer queue
    // (post() readers, up to N at once; barrier() writers); on a strand it is post(). An
    // exception escaping f goes to the pool's error handler.
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>> void barrier(F &&f) {
        enqueue(p_->wrap_post(std::forward<F>(f)), true);
    }
    // Run f(args...) in the lane and get its result (or its exception) through a future. A task
    // dropped without running (pool::cancel()) leaves the future's promise broken.
    template <class F, class... A, class = std::enable_if_t<std::is_invocable_v<F, A...>>>
    auto submit(F &&f, A &&...args) {
        using R = std::invoke_result_t<F, A...>;
        auto bound = detail::bind(std::forward<F>(f), std::forward<A>(args)...);
        std::packaged_task<R()> task(std::move(bound));
        std::future<R> fut = task.get_future();
        enqueue([t = std::move(task)]() mutable { t(); });
        return fut;
    }
    crew_lane *native() const noexcept { return l_; }

private:
    template <class F> void enqueue(F &&f, bool barrier = false) {
        const char *who = barrier ? "crew::lane::barrier" : "crew::lane::submit";
        if (!l_)
            throw error(CREW_EINVAL, barrier ? "crew::lane::barrier (a moved-from lane)"
                                             : "crew::lane::submit (a moved-from lane)");
        detail::job *j = detail::make_job(std::forward<F>(f));
        int rc = barrier ? crew_lane_barrier(l_, detail::job::trampoline, j, nullptr)
                         : crew_lane_submit(l_, detail::job::trampoline, j, nullptr);
        if (rc != CREW_OK) {
            delete j;
            throw error(rc, who);
        }
    }
    void release() noexcept {
        if (!l_)
            return;
        int rc = crew_lane_destroy(std::exchange(l_, nullptr));
        if (rc != CREW_OK) {
            try {
                p_->state_->report(std::make_exception_ptr(error(rc, "crew::lane::~lane")),
                                   "the destruction of a crew::lane");
            } catch (...) { // out of memory while reporting: nothing more can be done here
            }
        }
    }
    pool *p_;
    crew_lane *l_ = nullptr;
};

// A task graph (crew_graph_*): nodes (callables) and edges, built once and run many times, also
// several runs at once from any threads. emplace(f) adds a node: f() returning void is a plain
// node; f() returning an integer is a condition node, whose value picks the one successor to
// start (its index among the node's successors in the order they were linked; any other value
// starts none), which is how a loop is written. a.precede(b) (or b.succeed(a)) makes b wait for
// a. run() starts a run (run_n(n): n repetitions, one after the other, as one run) and returns
// a graph::execution to wait for: a node that throws cancels the rest of its run (its unstarted
// nodes never run) and wait() rethrows the first exception; a run cancelled otherwise
// (execution::cancel, a cancelling shutdown) makes wait() throw crew::error with
// CREW_ECANCELED. An execution not waited for is waited for by its destructor, and an exception
// it would have rethrown goes to the pool's error handler. Building while a run is in progress
// throws crew::error with CREW_EBUSY; so does a cycle of plain edges, with CREW_EINVAL, at
// run(). Runs started from several threads at once overlap: run() holds no lock while the run
// starts. Not copyable, not movable (nodes refer to it); it must not outlive its pool. A node
// may run in a lane (n.lane(l): at most the lane's concurrency at once) and have a start-by
// time (n.start_within(d): not started within d of its run's start, it stops the run, whose
// wait() throws crew::error with CREW_EEXPIRED).
//
// The destructor waits for every run that run() started and that has not ended (the caller
// helps, as execution::wait does; as std::jthread joins), then frees the graph: a graph is
// never freed under its runs, and an execution may be waited for after its graph is gone. The
// one run it cannot wait for is the one the destructor is called from (a node destroying its
// own graph), or one started on native() through the C interface, and a graph that is a node
// of another graph (crew_graph_add_graph on native()): then it hands CREW_EBUSY, with the
// cause, to the pool's error handler and leaves the graph and its nodes' callables allocated (a
// leak, never a use after free) so that the run goes on safely.
class graph {
    struct run_state {
        std::exception_ptr first; // the first exception a node of the run threw
        bool waited = false;      // graph's m: the destructor has waited for the run
    };
    // What the graph, its executions and its nodes' callables share (the callables and the
    // executions may outlive the graph object: see the destructor).
    struct shared {
        explicit shared(pool &pl) : p(pl) {}
        pool &p;
        std::mutex m; // guards what follows; never held across a call into crew or user code
        // The runs run() started whose execution has not finished waiting, with their state.
        std::vector<std::pair<crew_handle, std::shared_ptr<run_state>>> runs;
        // run() calls between their crew_graph_run and the registration of the run in runs.
        unsigned starting = 0;
        // Exceptions of nodes whose run was not (yet) in runs while some run() was starting:
        // the run() that registers the run takes its own; the last one to end reports the rest.
        std::vector<std::pair<crew_handle, std::exception_ptr>> orphans;
        std::shared_ptr<shared> self; // set (a leak) when the graph is freed under a run
    };
    static bool same(crew_handle a, crew_handle b) noexcept {
        return a.slot == b.slot && a.gen == b.gen;
    }
    struct body { // a node's callable; run() returns a condition's choice
        virtual ~body() = default;
        virtual std::uint32_t run() noexcept = 0;
    };

public:
    class node {
    public:
        node() = default;
        // this -> after: after starts once this node has finished (or chose it, if this is a
        // condition node).
        node &precede(node after) {
            detail::check(crew_graph_precede(g_->g_, id_, after.id_), "crew::graph::precede");
            return *this;
        }
        // before -> this.
        node &succeed(node before) {
            before.precede(*this);
            return *this;
        }
        // Run this node in lane l (crew_graph_node_lane): at most l's max_concurrency of its
        // tasks and nodes run at once. While the node has it, l's destructor cannot free it
        // (it reports CREW_EBUSY to the error handler): destroy the graph first, or lane(nullptr).
        node &lane(crew::lane &l) {
            detail::check(crew_graph_node_lane(g_->g_, id_, l.native()), "crew::graph::node::lane");
            return *this;
        }
        node &lane(std::nullptr_t) { // in no lane again
            detail::check(crew_graph_node_lane(g_->g_, id_, nullptr), "crew::graph::node::lane");
            return *this;
        }
        // A start-by time (crew_graph_node_start_within): the node must start within d of its
        // run's start (of its repetition's, for run_n), else it is dropped, its run stops, and
        // the execution's wait() throws crew::error with CREW_EEXPIRED. A d of zero or less
        // removes it (a d shorter than 1 ns counts as 1 ns).
        template <class Rep, class Period>
        node &start_within(std::chrono::duration<Rep, Period> d) {
            detail::check(crew_graph_node_start_within(g_->g_, id_, detail::timeout_ns(d)),
                          "crew::graph::node::start_within");
            return *this;
        }
        crew_node id() const noexcept { return id_; }

    private:
        friend class graph;
        node(graph *g, crew_node id) : g_(g), id_(id) {}
        graph *g_ = nullptr;
        crew_node id_ = CREW_NODE_NONE;
    };

    // A run in progress (graph::run()): wait() for it, cancel() it, or on_done(f). Movable; it
    // may outlive its graph (the graph's destructor waits for the run, wait() then answers at
    // once). In C++20, co_await on it (crew_coro.hpp) suspends until the run has ended.
    class execution {
    public:
        execution(execution &&o) noexcept
            : s_(std::move(o.s_)), h_(std::exchange(o.h_, CREW_HANDLE_NONE)),
              r_(std::move(o.r_)) {}
        execution(const execution &) = delete;
        execution &operator=(const execution &) = delete;
        execution &operator=(execution &&) = delete;
        ~execution() {
            if (!s_)
                return;
            int rc = finish();
            try {
                if (r_->first)
                    s_->p.state_->report(r_->first, "a node of a crew::graph run not waited for");
                else if (rc != CREW_OK && rc != CREW_ECANCELED)
                    s_->p.state_->report(std::make_exception_ptr(error(rc, "crew::graph")),
                                         "a crew::graph run not waited for");
            } catch (...) { // out of memory while reporting: nothing more can be done here
            }
        }
        // Wait for the run (the caller helps, as crew::group::wait does); rethrow the first
        // exception a node threw, or throw crew::error for a cancelled run.
        void wait() {
            if (!s_)
                throw error(CREW_EINVAL, "crew::graph::execution::wait (waited for already)");
            int rc = finish();
            s_.reset();
            h_ = CREW_HANDLE_NONE;
            if (r_->first)
                std::rethrow_exception(r_->first);
            detail::check(rc, "crew::graph::execution::wait");
        }
        // Start no further node of the run (crew_cancel on its group).
        void cancel() {
            if (s_) {
                int rc = crew_cancel(s_->p.p_, h_);
                if (rc != CREW_ESTALE)
                    detail::check(rc, "crew::graph::execution::cancel");
            }
        }
        // Completion callback: f() runs once the run has ended (crew_notify: no thread blocks
        // meanwhile), on a pool thread; wait() there answers at once. An exception escaping f
        // goes to the pool's error handler. f must not use this execution object, which may be
        // gone by then. Throws crew::error as pool::notify, and CREW_EINVAL once waited for.
        template <class F, class = std::enable_if_t<std::is_invocable_v<F>>> void on_done(F &&f) {
            if (!s_)
                throw error(CREW_EINVAL, "crew::graph::execution::on_done (waited for already)");
            s_->p.notify_job(h_,
                             s_->p.wrap_post(std::forward<F>(f),
                                             "a crew::graph run's on_done callback"),
                             "crew::graph::execution::on_done");
        }
        // The run's group (CREW_HANDLE_NONE once waited for or moved from).
        crew_handle native() const noexcept { return h_; }

    private:
        friend class graph;
        execution(std::shared_ptr<shared> s, crew_handle h, std::shared_ptr<run_state> r)
            : s_(std::move(s)), h_(h), r_(std::move(r)) {}
        int finish() noexcept {
            int rc = crew_wait(s_->p.p_, h_);
            std::lock_guard<std::mutex> l(s_->m);
            for (auto it = s_->runs.begin(); it != s_->runs.end(); ++it)
                if (same(it->first, h_)) {
                    s_->runs.erase(it);
                    break;
                }
            return rc;
        }
        std::shared_ptr<shared> s_; // null once waited for or moved from
        crew_handle h_;
        std::shared_ptr<run_state> r_;
    };

    explicit graph(pool &p) : s_(std::make_shared<shared>(p)) {
        detail::check(crew_graph_create(p.p_, &g_), "crew::graph");
    }
    ~graph() {
        bool stuck = wait_runs();
        int rc = crew_graph_destroy(g_);
        if (rc == CREW_OK)
            return;
        try {
            // Not stuck: crew_graph_destroy's own text names the cause (a run started on
            // native(), or the graph a node of another graph through native()).
            s_->p.state_->report(
                std::make_exception_ptr(stuck ? error(rc, "crew::graph::~graph",
                                                      "destroyed from a node of its own run")
                                              : error(rc, "crew::graph::~graph")),
                "the destruction of a crew::graph");
        } catch (...) {
        }
        for (auto &b : bodies_) // the graph's runs still call them: leaked with it
            b.release();
        std::lock_guard<std::mutex> l(s_->m);
        s_->self = s_; // and what they use: a cycle, never freed
    }
    graph(const graph &) = delete;
    graph &operator=(const graph &) = delete;

    // Add a node running f() (see the class comment for a condition).
    template <class F, class = std::enable_if_t<std::is_invocable_v<F &>>>
    node emplace(F &&f, std::uint32_t priority = 0) {
        using R = std::invoke_result_t<F &>;
        static_assert(std::is_void_v<R> || std::is_integral_v<R>,
                      "crew::graph::emplace: a node returns void, or an integer (a condition)");
        auto b = std::make_unique<fn_body<std::decay_t<F>>>(std::forward<F>(f), s_.get());
        bodies_.reserve(bodies_.size() + 1); // before the node exists: push_back cannot throw
        crew_node id = CREW_NODE_NONE;
        int rc;
        if constexpr (std::is_void_v<R>)
            rc = crew_graph_add(g_, plain, b.get(), priority, &id);
        else
            rc = crew_graph_add_condition(g_, condition, b.get(), priority, &id);
        detail::check(rc, "crew::graph::emplace");
        bodies_.push_back(std::move(b));
        return node(this, id);
    }

    // Start a run of the whole graph.
    execution run() { return start(false, 1, "crew::graph::run"); }
    // Start one run of n repetitions of the graph, one after the other (crew_graph_run_n).
    execution run_n(std::uint64_t n) { return start(true, n, "crew::graph::run_n"); }
    crew_graph *native() const noexcept { return g_; }

private:
    template <class F> struct fn_body final : body {
        F f;
        shared *s;
        fn_body(F &&fn, shared *sh) : f(std::move(fn)), s(sh) {}
        fn_body(const F &fn, shared *sh) : f(fn), s(sh) {}
        std::uint32_t run() noexcept override {
            try {
                if constexpr (std::is_void_v<std::invoke_result_t<F &>>) {
                    f();
                    return 0;
                } else {
                    auto v = f();
                    if constexpr (std::is_signed_v<decltype(v)>)
                        if (v < 0)
                            return CREW_NODE_NONE; // starts none
                    return static_cast<std::uint64_t>(v) >= CREW_NODE_NONE
                               ? CREW_NODE_NONE
                               : static_cast<std::uint32_t>(v);
                }
            } catch (...) {
                failed(s, std::current_exception());
                return CREW_NODE_NONE;
            }
        }
    };
    static void plain(void *b) { static_cast<body *>(b)->run(); }
    static std::uint32_t condition(void *b) { return static_cast<body *>(b)->run(); }

    // A node that threw: keep the first exception of its run, and cancel the run. A run that
    // run() has not registered yet (it may have started a moment ago) gets it when registered.
    static void failed(shared *s, std::exception_ptr e) noexcept {
        crew_handle h = crew_current_group();
        bool kept = false;
        {
            std::lock_guard<std::mutex> l(s->m);
            for (auto &r : s->runs)
                if (same(r.first, h)) {
                    if (!r.second->first)
                        r.second->first = e;
                    kept = true;
                    break;
                }
            if (!kept && s->starting != 0) {
                try {
                    s->orphans.emplace_back(h, e);
                    kept = true;
                } catch (...) { // no memory to keep it: reported below
                }
            }
        }
        if (h.slot != 0)
            crew_cancel(s->p.p_, h);
        if (!kept)
            report(s, e);
    }
    static void report(shared *s, std::exception_ptr e) noexcept {
        try {
            s->p.state_->report(e, "a node of a crew::graph");
        } catch (...) {
        }
    }

    execution start(bool repeated, std::uint64_t n, const char *who) {
        auto r = std::make_shared<run_state>();
        {
            std::lock_guard<std::mutex> l(s_->m);
            // Room for every run being started, so that registering one below cannot throw.
            std::size_t need = s_->runs.size() + s_->starting + 1;
            if (s_->runs.capacity() < need)
                s_->runs.reserve(need > 2 * s_->runs.capacity() ? need : 2 * s_->runs.capacity());
            s_->starting++;
        }
        crew_handle h = CREW_HANDLE_NONE;
        int rc = repeated ? crew_graph_run_n(g_, n, &h) : crew_graph_run(g_, &h);
        std::vector<std::pair<crew_handle, std::exception_ptr>> rest;
        {
            std::lock_guard<std::mutex> l(s_->m);
            s_->starting--;
            if (rc == CREW_OK) {
                s_->runs.emplace_back(h, r);
                auto &o = s_->orphans;
                for (auto it = o.begin(); it != o.end();) {
                    if (same(it->first, h)) {
                        if (!r->first)
                            r->first = std::move(it->second);
                        it = o.erase(it);
                    } else {
                        ++it;
                    }
                }
            }
            if (s_->starting == 0)
                rest.swap(s_->orphans); // runs no run() will register: a run on native()
        }
        for (auto &o : rest)
            report(s_.get(), o.second);
        detail::check(rc, who);
        return execution(s_, h, std::move(r));
    }

    // Wait for every run that run() started and that has not ended (crew_wait: the caller
    // helps). Returns true if one could not be waited for from here (CREW_EDEADLK: the caller
    // is a node of that run).
    bool wait_runs() noexcept {
        bool stuck = false;
        for (;;) {
            std::shared_ptr<run_state> r;
            crew_handle h = CREW_HANDLE_NONE;
            {
                std::lock_guard<std::mutex> l(s_->m);
                for (auto &x : s_->runs)
                    if (!x.second->waited) {
                        h = x.first;
                        r = x.second;
                        r->waited = true; // by this thread only: no other waits for it twice
                        break;
                    }
            }
            if (!r)
                return stuck;
            if (crew_wait(s_->p.p_, h) == CREW_EDEADLK)
                stuck = true;
        }
    }

    std::shared_ptr<shared> s_;
    crew_graph *g_ = nullptr;
    std::vector<std::unique_ptr<body>> bodies_;
};

// ------------------------------------------------------------------------------------------
// Parallel primitives over the C ones (crew_parallel_for/reduce/filter): the caller takes part,
// they nest, and an exception thrown by the body is rethrown (the first one) after the loop.
// ------------------------------------------------------------------------------------------
namespace detail {
struct loop_errors {
    std::mutex m;
    std::exception_ptr first;
    std::atomic<bool> failed{false};
    void keep(std::exception_ptr e) {
        std::lock_guard<std::mutex> g(m);
        if (!first)
            first = e;
        failed.store(true, std::memory_order_relaxed);
    }
    void rethrow() {
        if (first)
            std::rethrow_exception(first);
    }
};
} // namespace detail

// f(i) for every i in [begin, end), or f(b, e) for sub-ranges when f takes two arguments.
template <class F>
void parallel_for(pool &p, std::size_t begin, std::size_t end, F &&f, std::size_t grain = 0) {
    struct ctx {
        F &f;
        detail::loop_errors err;
    } loop{f, {}};
    auto body = [](std::size_t b, std::size_t e, void *a) {
        auto *c = static_cast<ctx *>(a);
        if (c->err.failed.load(std::memory_order_relaxed))
            return; // after an exception, skip the remaining chunks
        try {
            if constexpr (std::is_invocable_v<F &, std::size_t, std::size_t>)
                c->f(b, e);
            else
                for (std::size_t i = b; i < e; i++)
                    c->f(i);
        } catch (...) {
            c->err.keep(std::current_exception());
        }
    };
    detail::check(crew_parallel_for(p.native(), begin, end, grain, body, &loop),
                  "crew::parallel_for");
    loop.err.rethrow();
}

// Deterministic reduction: fold(b, e, acc) -> acc over chunks, combine(a, b) -> a (+) b in
// index order. T must be trivially copyable (the C layer copies it bytewise).
template <class T, class Fold, class Combine>
T parallel_reduce(pool &p, std::size_t begin, std::size_t end, T identity, Fold &&fold,
                  Combine &&combine, std::size_t grain = 0) {
    static_assert(std::is_trivially_copyable_v<T>, "crew::parallel_reduce needs a trivially "
                                                   "copyable T");
    struct ctx {
        Fold &fold;
        Combine &combine;
        detail::loop_errors err;
    } loop{fold, combine, {}};
    auto f = [](std::size_t b, std::size_t e, void *acc, void *a) {
        auto *c = static_cast<ctx *>(a);
        if (c->err.failed.load(std::memory_order_relaxed))
            return;
        try {
            *static_cast<T *>(acc) = c->fold(b, e, *static_cast<T *>(acc));
        } catch (...) {
            c->err.keep(std::current_exception());
        }
    };
    auto comb = [](void *acc, const void *other, void *a) {
        auto *c = static_cast<ctx *>(a);
        try {
            *static_cast<T *>(acc) =
                c->combine(*static_cast<T *>(acc), *static_cast<const T *>(other));
        } catch (...) {
            c->err.keep(std::current_exception());
        }
    };
    T result = identity;
    detail::check(crew_parallel_reduce(p.native(), begin, end, grain, &result, sizeof(T), f, comb,
                                       &loop),
                  "crew::parallel_reduce");
    loop.err.rethrow();
    return result;
}

// Stable filter: the elements of in for which keep(x) is true, in their order.
template <class T, class Pred>
std::vector<T> parallel_filter(pool &p, const std::vector<T> &in, Pred &&keep) {
    static_assert(std::is_trivially_copyable_v<T>, "crew::parallel_filter needs a trivially "
                                                   "copyable T");
    struct ctx {
        Pred &keep;
        detail::loop_errors err;
    } loop{keep, {}};
    auto pred = [](const void *x, void *a) -> int {
        auto *c = static_cast<ctx *>(a);
        try {
            return c->keep(*static_cast<const T *>(x)) ? 1 : 0;
        } catch (...) {
            c->err.keep(std::current_exception());
            return 0;
        }
    };
    std::vector<T> out(in.size());
    std::size_t n = 0;
    detail::check(crew_parallel_filter(p.native(), in.data(), in.size(), sizeof(T), out.data(), &n,
                                       pred, &loop),
                  "crew::parallel_filter");
    loop.err.rethrow();
    out.resize(n);
    return out;
}

// ------------------------------------------------------------------------------------------
// Join (crew_join): run f() and g(), possibly in parallel, and return when both have returned:
// g is offered to the pool's other threads, f runs on the caller, then g too unless another
// thread took it; the caller waits (helping) only for a g that was taken. No group, no
// allocation; nests as deeply as the stack allows, from tasks and from outside the pool (what
// the C call may and may not do, crew.h, holds here). Both halves always run; an exception
// thrown by either is rethrown once both are done (f's if both threw). With two results it
// returns them as a std::pair; with none, nothing:
//   auto [x, y] = crew::join(p, [&] { return fib(p, n - 1); }, [&] { return fib(p, n - 2); });
// ------------------------------------------------------------------------------------------
namespace detail {
template <class F, class R = std::invoke_result_t<F &>> struct join_half {
    static_assert(!std::is_rvalue_reference_v<R>,
                  "crew::join: a half returns a value or an lvalue reference, not T&&");
    // An lvalue reference result is kept as a reference_wrapper (optional holds no T&).
    using stored = std::conditional_t<std::is_reference_v<R>,
                                      std::reference_wrapper<std::remove_reference_t<R>>, R>;
    F &f;
    std::exception_ptr e;
    std::optional<stored> r;
    explicit join_half(F &fn) : f(fn) {}
    static void run(void *a) {
        auto *h = static_cast<join_half *>(a);
        try {
            h->r.emplace(h->f());
        } catch (...) {
            h->e = std::current_exception();
        }
    }
    R take() {
        if constexpr (std::is_reference_v<R>)
            return r->get();
        else
            return std::move(*r);
    }
};
template <class F> struct join_half<F, void> {
    F &f;
    std::exception_ptr e;
    explicit join_half(F &fn) : f(fn) {}
    static void run(void *a) {
        auto *h = static_cast<join_half *>(a);
        try {
            h->f();
        } catch (...) {
            h->e = std::current_exception();
        }
    }
};
} // namespace detail

template <class F, class G> auto join(pool &p, F &&f, G &&g) {
    using FR = std::invoke_result_t<std::remove_reference_t<F> &>;
    using GR = std::invoke_result_t<std::remove_reference_t<G> &>;
    static_assert(std::is_void_v<FR> == std::is_void_v<GR>,
                  "crew::join: both functions return a value, or neither does");
    detail::join_half<std::remove_reference_t<F>> a(f);
    detail::join_half<std::remove_reference_t<G>> b(g);
    detail::check(crew_join(p.native(), a.run, &a, b.run, &b), "crew::join");
    if (a.e)
        std::rethrow_exception(a.e);
    if (b.e)
        std::rethrow_exception(b.e);
    if constexpr (!std::is_void_v<FR>)
        return std::pair<FR, GR>(a.take(), b.take()); // a reference result stays one
}

} // namespace crew

#endif // C++17
#endif // CREW_HPP
