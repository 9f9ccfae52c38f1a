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
//                                        exception is rethrown after all have finished
//
// crew::task<T> is lazy (it starts when awaited) and move-only. An exception escaping a task is
// rethrown by the co_await (or sync_wait) that receives its result. Included from C++17, or
// without the <coroutine> header, this header defines nothing (crew.hpp alone is unaffected).
//
// A resumption the pool drops. crew::schedule and when_all put tasks on the pool that resume a
// suspended coroutine (or start a child). A cancelling shutdown (pool::cancel(), crew_shutdown
// with CREW_CANCEL) drops the queued ones, and so does a full queue under CREW_FULL_DROP_OLDEST
// (its oldest task). The pool's on_drop hook then resumes the coroutine at once, on the thread
// that dropped the task (the one shutting the pool down, a worker that came to the task, or the
// submitter that needed the place), and its co_await throws crew::error with CREW_ECANCELED. A
// when_all child dropped before it started is destroyed unstarted, and the when_all reports it
// the same way (after its other children have ended). So no coroutine is left suspended for
// ever and no frame leaks: from the error on, the coroutine unwinds as from any exception (a
// crew::schedule during the shutdown throws crew::error with CREW_ESHUTDOWN). Resumptions that
// such a coroutine drops in turn, by submitting to the full queue again, run one after another
// on that thread, not nested inside each other. co_await on a crew::group is never dropped (its
// crew_notify callback always runs). A full queue under CREW_FULL_CALLER_RUNS runs the
// resumption in the submitting thread: the coroutine then goes on there, without suspending.
//
// sync_wait on a worker. From a thread that is not a worker of a pool (main), sync_wait blocks
// until the task ends. On a worker of a crew::pool (inside a task, or a coroutine the pool runs)
// it helps instead, as crew::group::wait does: while it waits, the worker runs the pool's queued
// tasks (among them those that resume the awaited task), so it never deadlocks waiting for
// tasks that only it could run. To keep a group open for crew_wait meanwhile, it parks one
// blocking task in a group of its own, which holds one of the pool's blocking threads
// (crew::options::max_blocking) until the task ends. If the pool cannot start that task
// (CREW_EAGAIN, CREW_ENOMEM) or drops it (a cancelling shutdown: CREW_ECANCELED), sync_wait
// throws crew::error with the code before starting the task, which is destroyed unstarted. On a
// pool that is shutting down, which takes no new task, it blocks as from main; on a blocking
// thread it blocks that thread, as any blocking task may.
//
// Stack use. A co_await of a task transfers to it and back without a call (symmetric transfer),
// but that is flat only where the compiler makes the transfer a tail call. clang does at every
// optimisation level, with or without ASan or TSan; gcc only with -foptimize-sibling-calls (on
// at -O2, -O3 and -Os) and without ASan or TSan (as checked with clang 14 and gcc 12 on
// x86-64). There a chain of co_awaits, however deep (a million tasks each awaiting the next),
// uses a few frames of stack. Elsewhere (gcc at -O0, -Og or -O1, or with ASan or TSan) every
// level of a chain keeps a frame on the stack until the chain unwinds, about 160 bytes at
// gcc -O0 and more under a sanitizer, so a chain 100,000 deep exhausts an 8 MiB stack. The rest
// keeps the stack flat in every build: a loop of crew::schedule or of when_alls (the last child
// to end resumes the awaiter on its own thread; if all have ended before the awaiter suspends,
// the awaiter goes on without suspending), and resumptions after a drop. Nested when_alls use
// a few frames per level of nesting, as nested calls would.
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
// What crew::error says when the pool dropped a task that was to resume a coroutine.
inline constexpr const char *dropped_detail =
    "the pool dropped the task that was to resume this coroutine without running it (a "
    "cancelling shutdown, or a full queue under CREW_FULL_DROP_OLDEST)";

// A task of this header on the pool (a node: its memory is in the coroutine frame). When the
// pool drops it, cancelled() runs through deliver_drop.
struct coro_node : node {
    coro_node *next_dropped = nullptr; // deliver_drop's queue link
    void dropped() noexcept final;
    // Resume with the error (or destroy and report) what the task was to start.
    virtual void cancelled() noexcept = 0;

protected:
    ~coro_node() = default;
};

// The dropped tasks waiting to be delivered on this thread, and whether a delivery loop is on
// its stack.
struct drop_queue {
    coro_node *head = nullptr;
    coro_node *tail = nullptr;
    bool running = false;
    coro_node *pop() noexcept { // the oldest, or nullptr
        coro_node *c = head;
        if (c && !(head = c->next_dropped))
            tail = nullptr;
        return c;
    }
};
inline thread_local drop_queue tls_drops;

// Deliver a dropped task: run its cancelled() now, unless a delivery loop is already on this
// thread's stack, which then runs it when the one it is running returns. A coroutine resumed
// with the error may submit again, and on a full queue that drops its oldest task that may drop
// another resumption, whose coroutine would otherwise run nested inside it, and so on.
inline void deliver_drop(coro_node *n) noexcept {
    drop_queue &q = tls_drops;
    n->next_dropped = nullptr;
    (q.tail ? q.tail->next_dropped : q.head) = n;
    q.tail = n;
    if (q.running)
        return;
    q.running = true;
    while (coro_node *c = q.pop())
        c->cancelled(); // may free c
    q.running = false;
}

inline void coro_node::dropped() noexcept { deliver_drop(this); }

// sync_wait's scope: dropped tasks delivered while it waits run here, in a delivery queue of its
// own, not in a loop further up the stack that cannot go on until the wait ends; those that
// loop had not reached yet run first (what the wait waits for may depend on them).
class drop_scope {
public:
    drop_scope() : outer_(std::exchange(tls_drops, drop_queue{})) {
        while (coro_node *c = outer_.pop())
            deliver_drop(c);
    }
    ~drop_scope() { tls_drops = outer_; }
    drop_scope(const drop_scope &) = delete;
    drop_scope &operator=(const drop_scope &) = delete;

private:
    drop_queue outer_;
};

// Set while crew::schedule submits its task: a task run at once on this thread, inside the
// submission (a full queue under CREW_FULL_CALLER_RUNS), finds itself here.
struct inline_run {
    const coro_node *who;
    bool ran;
};
inline thread_local inline_run *tls_submitting = nullptr;

// Resumes the coroutine on a task of p (flags: 0 or CREW_TASK_BLOCKING).
class schedule_awaiter final : public coro_node {
public:
    schedule_awaiter(crew_pool *p, unsigned flags) noexcept : p_(p), flags_(flags) {}
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) {
        h_ = h;
        inline_run me{this, false};
        inline_run *outer = std::exchange(tls_submitting, &me);
        int rc = crew_submit_ex(p_, node::trampoline, static_cast<node *>(this), 0, flags_,
                                nullptr);
        tls_submitting = outer;
        // A failure (shutdown, memory) is thrown into the coroutine, which stays where it was.
        check(rc, "crew::schedule");
        // Run here already: go on without suspending. Otherwise another thread resumes the
        // coroutine, perhaps already: nothing here may touch *this any more.
        return !me.ran;
    }
    void await_resume() const {
        if (lost_)
            throw error(CREW_ECANCELED, "crew::schedule", dropped_detail);
    }

private:
    void run() noexcept override {
        if (tls_submitting && tls_submitting->who == this) {
            tls_submitting->ran = true; // await_suspend, further up this stack, goes on
            return;
        }
        h_.resume();
    }
    void cancelled() noexcept override {
        lost_ = true;
        h_.resume();
    }
    crew_pool *p_;
    unsigned flags_;
    std::coroutine_handle<> h_{};
    bool lost_ = false;
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
            // Symmetric transfer to whoever awaited this task (see "Stack use" at the top).
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
    static constexpr std::size_t n = sizeof...(T);
    // The pool task that starts child i (all but the last, which starts in place).
    struct child final : coro_node {
        when_all_state *s = nullptr;
        std::size_t i = 0;
        void run() noexcept override { s->drivers[i].h.resume(); }
        void cancelled() noexcept override { s->lost(i); }
    };
    explicit when_all_state(crew_pool *pool) : p(pool) {}
    crew_pool *p;
    std::tuple<std::optional<stored_t<T>>...> results{};
    std::exception_ptr errors[n]{};
    driver drivers[n]{};
    child children[n]{};
    // The children that have not ended, plus one for await_suspend until it has started them
    // all: whoever takes it to 0 resumes the awaiter, never await_suspend's own callees.
    std::atomic<std::size_t> left{n + 1};
    std::coroutine_handle<> continuation{};
    // A driver ended: the last one resumes the awaiter, on its own stack.
    static void ended(void *ctx) {
        auto *s = static_cast<when_all_state *>(ctx);
        // acq_rel: the last to count down sees every other's result before the awaiter reads
        // them, and its own result is published to whoever is last.
        if (s->left.fetch_sub(1, std::memory_order_acq_rel) == 1)
            s->continuation.resume();
    }
    // Child i was dropped before it started: its driver is destroyed with this state, unrun.
    void lost(std::size_t i) noexcept {
        try {
            errors[i] = std::make_exception_ptr(error(CREW_ECANCELED, "crew::when_all",
                                                      dropped_detail));
        } catch (...) { // no memory for the message
            errors[i] = std::current_exception();
        }
        ended(this);
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
    bool await_suspend(std::coroutine_handle<> c) noexcept {
        s_.continuation = c;
        constexpr std::size_t n = sizeof...(T);
        // All but the last on the pool; a failure to submit runs that one in place, later.
        std::size_t inline_from = n - 1;
        for (std::size_t i = 0; i + 1 < n; i++)
            if (crew_submit(s_.p, node::trampoline, static_cast<node *>(&s_.children[i]), 0,
                            nullptr) != CREW_OK) {
                inline_from = i; // run the rest here, one after another
                break;
            }
        for (std::size_t i = inline_from; i + 1 < n; i++)
            s_.drivers[i].h.resume();
        s_.drivers[n - 1].h.resume(); // the last in place
        // Give up this call's count. If that ends the count, every child has ended: go on
        // without suspending (not resumed in here, a frame deeper on every loop iteration).
        // Otherwise the last child to end resumes the awaiter, perhaps already on another
        // thread: from here on this awaiter (in the coroutine's frame) may be gone.
        // acq_rel: as in ended().
        return s_.left.fetch_sub(1, std::memory_order_acq_rel) != 1;
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
        for (std::size_t i = 0; i < sizeof...(T); i++) {
            s_.drivers[i].h.promise().on_end = &when_all_state<T...>::ended;
            s_.drivers[i].h.promise().ctx = &s_;
            s_.children[i].s = &s_;
            s_.children[i].i = i;
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
// resumes the coroutine on a pool thread), then rethrows the first exception one threw. With no
// task run() yet it does not suspend.
inline auto operator co_await(group &g) {
    struct awaiter {
        group &g;
        bool await_ready() { return g.native().slot == 0; }
        void await_suspend(std::coroutine_handle<> h) {
            g.on_done([h] { h.resume(); });
        }
        void await_resume() { g.wait(); } // the group has finished: answers at once
    };
    return awaiter{g};
}

namespace detail {
// What sync_wait waits for, under m.
struct sync_state {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;   // the driver has ended
    bool parked = false; // on a worker: the parking task has started
    bool lost = false;   // on a worker: the pool dropped the parking task before it started
    static void ended(void *ctx) {
        auto *s = static_cast<sync_state *>(ctx);
        std::lock_guard<std::mutex> g(s->m);
        s->done = true;
        s->cv.notify_all();
    }
    template <class Pred> void wait_for(Pred pred) {
        std::unique_lock<std::mutex> g(m);
        cv.wait(g, pred);
    }
};

// sync_wait on a worker: a blocking task, alone in a crew group, that waits until the driver
// has ended. It keeps the group open without holding a worker, so crew_wait on the group runs
// the pool's queued tasks until the driver has ended.
class park final : public node {
public:
    explicit park(sync_state &s) noexcept : s_(s) {}
    crew_handle group = CREW_HANDLE_NONE;

private:
    void run() noexcept override {
        std::unique_lock<std::mutex> g(s_.m);
        s_.parked = true;
        s_.cv.notify_all();
        s_.cv.wait(g, [this] { return s_.done; });
    }
    void dropped() noexcept override {
        std::lock_guard<std::mutex> g(s_.m);
        s_.lost = true;
        s_.cv.notify_all();
    }
    sync_state &s_;
};
} // namespace detail

// Run t to its end, blocking the calling thread (or, on a worker of a crew::pool, running the
// pool's queued tasks meanwhile: see the top of this file); returns t's result or rethrows its
// exception. t starts on the calling thread: begin it with co_await crew::schedule(pool) to
// move it onto the pool. Throws crew::error, with t destroyed unstarted, if on a worker it
// cannot park its blocking task (CREW_EAGAIN, CREW_ENOMEM, CREW_ECANCELED).
template <class T> T sync_wait(task<T> t) {
    detail::drop_scope scope;
    detail::sync_state s;
    detail::park parked(s);
    crew_pool *p = detail::worker_of ? detail::worker_of->native() : nullptr;
    if (p) {
        int rc = crew_submit_ex(p, detail::node::trampoline, static_cast<detail::node *>(&parked),
                                0, CREW_TASK_BLOCKING, &parked.group);
        if (rc == CREW_ESHUTDOWN) {
            p = nullptr; // nothing t does can queue a task on p any more: block
        } else if (rc != CREW_OK) {
            throw error(rc, "crew::sync_wait (parking a blocking task to help on this worker)");
        } else {
            // Until it runs, a cancelling shutdown could drop it and end the wait early.
            s.wait_for([&] { return s.parked || s.lost; });
            if (s.lost) {
                crew_wait(p, parked.group); // until on_drop has returned
                throw error(CREW_ECANCELED, "crew::sync_wait",
                            "the pool dropped the blocking task it parks to help on this "
                            "worker (a cancelling shutdown)");
            }
        }
    }
    std::optional<detail::stored_t<T>> out;
    std::exception_ptr err;
    detail::driver d = detail::drive(std::move(t), &out, &err);
    d.h.promise().on_end = &detail::sync_state::ended;
    d.h.promise().ctx = &s;
    d.h.resume();
    if (p)
        crew_wait(p, parked.group); // helps until the parked task returns, after the end
    s.wait_for([&] { return s.done; }); // at once, after a wait that helped
    d.h.destroy();
    if (err)
        std::rethrow_exception(err);
    if constexpr (!std::is_void_v<T>)
        return std::move(*out);
}

} // namespace crew

// ---- Time: co_await crew::sleep_for(pool, d) ----
namespace crew {
namespace detail {
// Resumes the coroutine from a delayed task of p (crew_submit_after), on a worker, once the
// delay has passed: no thread blocks meanwhile. Dropped (a cancelling shutdown): the coroutine
// resumes on the dropping thread and the co_await throws crew::error (CREW_ECANCELED).
class sleep_awaiter final : public coro_node {
public:
    sleep_awaiter(crew_pool *p, std::uint64_t ns) noexcept : p_(p), ns_(ns) {}
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
        h_ = h;
        // A failure (shutdown, memory) is thrown into the coroutine, which stays where it was.
        // Never run inside the call: after it, another thread may resume the coroutine.
        check(crew_submit_after(p_, ns_, node::trampoline, static_cast<node *>(this), 0, nullptr),
              "crew::sleep_for");
    }
    void await_resume() const {
        if (lost_)
            throw error(CREW_ECANCELED, "crew::sleep_for", dropped_detail);
    }

private:
    void run() noexcept override { h_.resume(); }
    void cancelled() noexcept override {
        lost_ = true;
        h_.resume();
    }
    crew_pool *p_;
    std::uint64_t ns_;
    std::coroutine_handle<> h_{};
    bool lost_ = false;
};
} // namespace detail

// co_await crew::sleep_for(p, d): continue on a worker of p once d has passed (not before),
// holding no thread meanwhile. Throws crew::error: CREW_ESHUTDOWN (p shutting down) from the
// co_await, CREW_ECANCELED if a cancelling shutdown dropped the wake-up.
template <class Rep, class Period>
inline detail::sleep_awaiter sleep_for(pool &p, std::chrono::duration<Rep, Period> d) {
    auto n = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    return {p.native(), n > 0 ? static_cast<std::uint64_t>(n) : 0u};
}
} // namespace crew

#endif // coroutines
#endif // CREW_CORO_HPP
