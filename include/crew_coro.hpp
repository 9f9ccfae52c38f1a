// crew_coro.hpp -- C++20 coroutines on a crew pool: header-only, over crew.hpp.
//
//   crew::task<long> fib(crew::pool &p, int n) {
//       if (n < 2) co_return n;
//       auto [a, b] = co_await crew::when_all(p, fib(p, n - 1), fib(p, n - 2));
//       co_return a + b;
//   }
//   crew::task<long> root(crew::pool &p) {
//       co_await crew::schedule(p);
//       co_return co_await fib(p, 30);
//   }
//   long r = crew::sync_wait(root(p));             // from main: blocks until the task ends
//
//   co_await crew::schedule(p)           continue on a worker of p
//   co_await crew::schedule_blocking(p)  continue on one of p's blocking threads (blocking I/O)
//   co_await group                       suspend (no thread blocked) until every task run() so
//                                        far on the crew::group has finished (crew_notify), then
//                                        rethrow the first exception one of them threw
//   co_await crew::when_all(p, t...)     run the tasks t... concurrently (all but the last are
//                                        started on p, the last in place) and resume once all
//                                        have finished, with their results in a tuple; the first
//                                        exception is rethrown after all have finished. The
//                                        last task to end resumes the awaiter on its stack
//
// crew::task<T> is lazy (it starts when awaited), move-only, and uses symmetric transfer, so a
// chain of co_awaits, however deep, does not grow the stack. An exception escaping a task is
// rethrown by the co_await (or sync_wait) that receives its result. Included from C++17, or
// without the <coroutine> header, this header defines nothing (crew.hpp alone is unaffected).
#ifndef CREW_CORO_HPP
#define CREW_CORO_HPP

#include "crew.hpp"

#if defined(__cpp_impl_coroutine) && __cpp_impl_coroutine >= 201902L && __has_include(<coroutine>)
#define CREW_HAS_COROUTINES 1

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <exception>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant> // std::monostate

namespace crew {

namespace detail {
// A crew_fn that resumes the coroutine whose address is arg.
inline void resume_coro(void *arg) { std::coroutine_handle<>::from_address(arg).resume(); }

// Resumes the coroutine on a task of p (flags: 0 or CREW_TASK_BLOCKING).
struct schedule_awaiter {
    crew_pool *p;
    unsigned flags;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const {
        // A failure (shutdown, memory) is thrown into the coroutine, which stays where it was.
        detail::check(crew_submit_ex(p, resume_coro, h.address(), 0, flags, nullptr),
                      "crew::schedule");
    }
    void await_resume() const noexcept {}
};

// The value slot of a promise (void specialised).
template <class T> struct result_slot {
    std::optional<T> value;
    template <class U> void return_value(U &&v) { value.emplace(std::forward<U>(v)); }
    T take() { return std::move(*value); }
};
template <> struct result_slot<void> {
    void return_void() noexcept {}
    void take() noexcept {}
};
} // namespace detail

// Continue on a worker of p / on one of its blocking threads (CREW_TASK_BLOCKING).
inline detail::schedule_awaiter schedule(pool &p) { return {p.native(), 0}; }
inline detail::schedule_awaiter schedule_blocking(pool &p) {
    return {p.native(), CREW_TASK_BLOCKING};
}

// A lazy coroutine producing a T (or nothing, for void).
template <class T = void> class [[nodiscard]] task {
public:
    struct promise_type : detail::result_slot<T> {
        std::coroutine_handle<> continuation = std::noop_coroutine();
        std::exception_ptr error;
        task get_return_object() noexcept {
            return task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct final_awaiter {
            bool await_ready() const noexcept { return false; }
            // Symmetric transfer to whoever awaited this task: no stack frame is kept.
            std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
                return h.promise().continuation;
            }
            void await_resume() const noexcept {}
        };
        final_awaiter final_suspend() noexcept { return {}; }
        void unhandled_exception() noexcept { error = std::current_exception(); }
    };

    task(task &&o) noexcept : h_(std::exchange(o.h_, {})) {}
    task &operator=(task &&o) noexcept {
        if (this != &o) {
            if (h_)
                h_.destroy();
            h_ = std::exchange(o.h_, {});
        }
        return *this;
    }
    task(const task &) = delete;
    task &operator=(const task &) = delete;
    ~task() {
        if (h_)
            h_.destroy();
    }

    // co_await: start the task here (symmetric transfer) and resume the awaiter when it ends.
    auto operator co_await() && noexcept {
        struct awaiter {
            std::coroutine_handle<promise_type> h;
            bool await_ready() const noexcept { return !h || h.done(); }
            std::coroutine_handle<> await_suspend(std::coroutine_handle<> c) noexcept {
                h.promise().continuation = c;
                return h;
            }
            T await_resume() {
                if (h.promise().error)
                    std::rethrow_exception(h.promise().error);
                return h.promise().take();
            }
        };
        return awaiter{h_};
    }

private:
    explicit task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
    std::coroutine_handle<promise_type> h_;
};

namespace detail {
// Runs an awaitable to its end, then signals: counts down a when_all, or wakes sync_wait.
struct driver {
    struct promise_type {
        void (*on_end)(void *ctx) = nullptr;
        void *ctx = nullptr;
        driver get_return_object() noexcept {
            return driver{std::coroutine_handle<promise_type>::from_promise(*this)};
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct final_awaiter {
            bool await_ready() const noexcept { return false; }
            // Not symmetric transfer: once on_end has run, the owner may free this frame from
            // another thread at any moment, so nothing may touch it after (a handle returned
            // for transfer may be kept in the frame by the compiler).
            void await_suspend(std::coroutine_handle<promise_type> self) noexcept {
                void (*f)(void *) = self.promise().on_end;
                f(self.promise().ctx);
            }
            void await_resume() const noexcept {}
        };
        final_awaiter final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); } // bodies below catch all
    };
    std::coroutine_handle<promise_type> h;
};

template <class T> using stored_t = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

// Await t; store its result (or its exception) in *out / *err.
template <class T>
driver drive(task<T> t, std::optional<stored_t<T>> *out, std::exception_ptr *err) {
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(t);
            out->emplace();
        } else {
            out->emplace(co_await std::move(t));
        }
    } catch (...) {
        *err = std::current_exception();
    }
}

template <class... T> struct when_all_state {
    explicit when_all_state(crew_pool *pool) : p(pool) {}
    crew_pool *p;
    std::tuple<std::optional<stored_t<T>>...> results{};
    std::exception_ptr errors[sizeof...(T)]{};
    driver drivers[sizeof...(T)]{};
    std::atomic<std::size_t> left{sizeof...(T)};
    std::coroutine_handle<> continuation{};
    // A driver ended: the last one resumes the awaiter, on its own stack (so nested when_alls,
    // unlike chains of plain co_awaits, use a few stack frames per level).
    static void ended(void *ctx) {
        auto *s = static_cast<when_all_state *>(ctx);
        // acq_rel: the last driver sees every other's result before the awaiter reads them.
        if (s->left.fetch_sub(1, std::memory_order_acq_rel) == 1)
            s->continuation.resume();
    }
    ~when_all_state() {
        for (driver &d : drivers)
            if (d.h)
                d.h.destroy();
    }
};

template <class... T> class when_all_awaiter {
public:
    when_all_awaiter(crew_pool *p, task<T>... ts) : s_(p) {
        init(std::index_sequence_for<T...>{}, std::move(ts)...);
    }
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> c) {
        s_.continuation = c;
        constexpr std::size_t n = sizeof...(T);
        // All but the last on the pool; a failure to submit runs that one in place, later.
        std::size_t inline_from = n - 1;
        for (std::size_t i = 0; i + 1 < n; i++)
            if (crew_submit(s_.p, resume_coro, s_.drivers[i].h.address(), 0, nullptr) !=
                CREW_OK) {
                inline_from = i; // run the rest here, one after another
                break;
            }
        for (std::size_t i = inline_from; i + 1 < n; i++)
            s_.drivers[i].h.resume(); // cannot be the last to end: drivers[n-1] has not run
        // The last in place; from here on this awaiter (in the suspended coroutine's frame)
        // may be gone, since the last driver to end resumes the coroutine.
        s_.drivers[n - 1].h.resume();
    }
    std::tuple<stored_t<T>...> await_resume() {
        for (std::exception_ptr &e : s_.errors)
            if (e)
                std::rethrow_exception(e);
        return std::apply([](auto &...o) { return std::tuple<stored_t<T>...>(std::move(*o)...); },
                          s_.results);
    }

private:
    template <std::size_t... I> void init(std::index_sequence<I...>, task<T>... ts) {
        ((s_.drivers[I] = drive(std::move(ts), &std::get<I>(s_.results), &s_.errors[I])), ...);
        for (driver &d : s_.drivers) {
            d.h.promise().on_end = &when_all_state<T...>::ended;
            d.h.promise().ctx = &s_;
        }
    }
    when_all_state<T...> s_;
};
} // namespace detail

// Run the tasks concurrently on p (see the top of this file); a tuple of their results (void
// results as std::monostate).
template <class... T> auto when_all(pool &p, task<T>... ts) {
    static_assert(sizeof...(T) >= 1, "crew::when_all needs at least one task");
    return detail::when_all_awaiter<T...>(p.native(), std::move(ts)...);
}

// co_await on a crew::group: suspends until every task run() so far has finished (crew_notify
// resumes the coroutine on a pool thread), then rethrows the first exception one threw.
inline auto operator co_await(group &g) {
    struct awaiter {
        group &g;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) {
            g.on_done([h] { h.resume(); });
        }
        void await_resume() { g.wait(); } // the group has finished: answers at once
    };
    return awaiter{g};
}

// Run t to its end from a thread that is not a coroutine (main), blocking it; returns t's
// result or rethrows its exception. t starts on the calling thread: begin it with
// co_await crew::schedule(pool) to move it onto the pool.
template <class T> T sync_wait(task<T> t) {
    struct state {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
        static void ended(void *ctx) {
            auto *s = static_cast<state *>(ctx);
            std::lock_guard<std::mutex> g(s->m);
            s->done = true;
            s->cv.notify_one();
        }
    } s;
    std::optional<detail::stored_t<T>> out;
    std::exception_ptr err;
    detail::driver d = detail::drive(std::move(t), &out, &err);
    d.h.promise().on_end = &state::ended;
    d.h.promise().ctx = &s;
    d.h.resume();
    {
        std::unique_lock<std::mutex> g(s.m);
        s.cv.wait(g, [&] { return s.done; });
    }
    d.h.destroy();
    if (err)
        std::rethrow_exception(err);
    if constexpr (!std::is_void_v<T>)
        return std::move(*out);
}

} // namespace crew

#endif // coroutines
#endif // CREW_CORO_HPP
