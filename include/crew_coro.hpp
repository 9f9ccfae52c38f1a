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
//   co_await graph.run()                 the same for a run of a crew::graph (a graph::execution):
//                                        resume once the run has ended, rethrowing the first
//                                        exception a node threw (crew::error if cancelled)
//   co_await crew::when_all(p, t...)     run the tasks t... concurrently (all but the last are
//                                        started on p, the last in place; on a worker of p, see
//                                        "when_all on a worker") and resume once all have
//                                        finished, with their results in a tuple; the first
//                                        exception (by position) is rethrown after all have
//                                        finished. A task that was moved from makes it throw
//                                        crew::error (CREW_EINVAL) with none started; one that
//                                        was awaited before counts as ended, with its result
//
// crew::task<T> is lazy (it starts when awaited) and move-only. An exception escaping a task is
// rethrown by the co_await (or sync_wait) that receives its result. Included from C++17, or
// without the <coroutine> header, this header stops the build with an #error that says what is
// needed; a program that includes it only where coroutines exist can define CREW_CORO_OPTIONAL
// first, and then gets nothing instead of the error (crew.hpp alone is unaffected either way).
//
// A resumption the pool drops. crew::schedule and when_all put tasks on the pool that resume a
// suspended coroutine (or start a child). A cancelling shutdown (pool::cancel(), crew_shutdown
// with CREW_CANCEL) drops the queued ones, and so does a full queue under CREW_FULL_DROP_OLDEST
// (its oldest task). The pool's on_drop hook then resumes the coroutine at once, on the thread
// that dropped the task (the one shutting the pool down, a worker that came to the task, or the
// submitter that needed the place), and its co_await throws crew::error with CREW_ECANCELED. A
// when_all child dropped before it started is destroyed unstarted, and the when_all reports it
// the same way, after its other children have ended (on a worker: "when_all on a worker"). So
// no coroutine is left suspended for ever and no frame leaks: from the error on, the coroutine
// unwinds as from any exception (a crew::schedule during the shutdown throws crew::error with
// CREW_ESHUTDOWN). Resumptions that
// such a coroutine drops in turn, by submitting to the full queue again, run one after another
// on that thread, not nested inside each other. co_await on a crew::group is never dropped (its
// crew_notify callback always runs). A full queue under CREW_FULL_CALLER_RUNS runs the
// resumption in the submitting thread: the coroutine then goes on there, without suspending.
//
// when_all on a worker. Awaited on a worker of its own pool (a coroutine the pool runs), when_all
// starts its children as the halves of a crew_join (crew.h): all but the last are offered to
// the pool's other threads, the last runs in place, and then the offered ones run in place too
// unless another thread took them meanwhile. A child nobody took costs a push and a pop on the
// worker's own queue (under the default work stealing; under another strategy crew_join puts
// it in a group of its own), no task of the pool: crew_stats counts none. A child runs until it
// ends or first suspends; only for a child another thread took does the worker wait, and only
// until that child has ended or suspended (running the pool's queued tasks meanwhile, as
// crew_join does), never for the rest of a suspended child. The last child to end resumes the
// awaiter, as elsewhere. What differs from children started as tasks: an offered child is never
// dropped, so on_drop never sees one; instead, one that has not started when the pool is
// shutting down with CREW_CANCEL (or, inside a task of a group, when the group is cancelled:
// crew_cancelled()) is destroyed unstarted and reported with CREW_ECANCELED, as a dropped start
// would be; the child in place always starts. Under crew_pause the worker goes on starting
// the children itself, as it does a crew_join's halves (they are part of the task it runs);
// from a lane's task likewise, so the lane's next task waits until they have ended or
// suspended. From any other thread (main, a blocking thread, a worker of another pool) the
// children but the last start as tasks of the pool, as before.
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
// a few frames per level of nesting, as nested calls would (on a worker, nested crew_joins: a
// worker that waits for a child another thread took runs queued tasks on top of them).
//
// Frames. The frame of a crew::task (and sync_wait's own) comes from a cache on the thread that
// creates the task: a free list per size class (steps of 64 bytes, frames of up to 2 KiB; a
// larger one comes from the global operator new and goes back to it). When a task is destroyed,
// the thread that destroys it keeps the frame, whichever thread allocated it, until that thread
// keeps 128 KiB of frames; the rest go back to the heap, and so does all a thread keeps when the
// thread exits (a thread_local destructor; a frame freed after that one, by another thread_local
// destructor, goes straight back to the heap). So tasks that move between threads (a when_all
// child ends on one worker, its parent destroys it on another) cost no heap call once the
// threads' caches are warm, and no frame outlives its thread's exit. Kept frames are poisoned
// under AddressSanitizer, which reports a use after the task's destruction as for freed memory.
// Defining CREW_CORO_FRAME_CACHE to 0 (in every translation unit alike) takes every frame from
// the global operator new. when_all allocates nothing of its own: it counts its children down
// in its awaiter, inside the awaiting coroutine's frame, and each child's result stays in the
// child's frame until the awaiter takes it.
#ifndef CREW_CORO_HPP
#define CREW_CORO_HPP

#include "crew.hpp"

#if !(defined(__cpp_impl_coroutine) && __cpp_impl_coroutine >= 201902L && \
      __has_include(<coroutine>))
#ifndef CREW_CORO_OPTIONAL
#error "crew_coro.hpp needs C++20 coroutines (-std=c++20 and the <coroutine> header); define CREW_CORO_OPTIONAL before including it to get nothing instead of this error"
#endif
#else
#define CREW_HAS_COROUTINES 1

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <new>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant> // std::monostate

// Frames kept in a thread's cache are poisoned for AddressSanitizer, which then reports a use of
// a frame after its task was destroyed as it would for freed memory.
#if defined(__SANITIZE_ADDRESS__)
#define CREW_CORO_ASAN_ 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CREW_CORO_ASAN_ 1
#endif
#endif
#ifdef CREW_CORO_ASAN_
#include <sanitizer/asan_interface.h>
#endif

// 0 takes every coroutine frame from the global operator new (to check a program with a tool
// that follows frames through it); 1, the default, from the thread's cache (see "Frames").
#ifndef CREW_CORO_FRAME_CACHE
#define CREW_CORO_FRAME_CACHE 1
#endif

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

// The frame cache of one thread (see "Frames" at the top): a free list per size class.
struct frame_cache {
    static constexpr std::size_t grain = 64;       // size classes 64, 128, ... bytes
    static constexpr std::size_t classes = 32;     // frames of up to 2 KiB; larger ones: the heap
    static constexpr std::size_t cap = 128 * 1024; // bytes of frames one thread keeps at most
    enum : unsigned char { unused, keeping, ended }; // state
    struct block {
        block *next;
    };
    block *free[classes];
    // Bytes the thread may still keep: cap less those in the lists while keeping, 0 otherwise,
    // so that frame_free's one test (does the frame fit?) also sends it to the slow path
    // that first arms the reaper (unused) or gives the frame to the heap (ended).
    std::size_t room;
    unsigned char state; // unused until the first frame kept; ended once the thread exits
    std::size_t kept() const noexcept { return state == keeping ? cap - room : 0; } // bytes
};
// Constant-initialised and trivially destructible: no guard on access, and still there (ended)
// for a frame freed by a thread_local destructor that runs after the reaper's.
inline thread_local frame_cache tls_frames{};

inline void frame_poison([[maybe_unused]] void *p, [[maybe_unused]] std::size_t n) noexcept {
#ifdef CREW_CORO_ASAN_
    ASAN_POISON_MEMORY_REGION(p, n);
#endif
}
inline void frame_unpoison([[maybe_unused]] void *p, [[maybe_unused]] std::size_t n) noexcept {
#ifdef CREW_CORO_ASAN_
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
}

// Free n bytes from the global operator new (sized where the compiler has sized deallocation).
inline void frame_heap_free(void *p, [[maybe_unused]] std::size_t n) noexcept {
#ifdef __cpp_sized_deallocation
    ::operator delete(p, n);
#else
    ::operator delete(p);
#endif
}

// Give this thread's kept frames back to the heap; at its exit (exiting), keep none from then on.
inline void frame_cache_release(bool exiting) noexcept {
    frame_cache &c = tls_frames;
    for (std::size_t i = 0; i < frame_cache::classes; i++) {
        while (frame_cache::block *b = c.free[i]) {
            frame_unpoison(b, sizeof *b);
            c.free[i] = b->next;
            frame_unpoison(b, (i + 1) * frame_cache::grain);
            frame_heap_free(b, (i + 1) * frame_cache::grain);
        }
    }
    if (exiting)
        c.state = frame_cache::ended;
    c.room = c.state == frame_cache::keeping ? frame_cache::cap : 0;
}

// Its destructor, registered on a thread's first kept frame, releases the cache at thread exit.
struct frame_cache_reaper {
    bool armed = false;
    ~frame_cache_reaper() {
        if (armed)
            frame_cache_release(true);
    }
};
inline thread_local frame_cache_reaper tls_frame_reaper;

// A frame of n bytes: from this thread's list for its size class, else from the heap (rounded up
// to the class, so that any thread may keep it once it is freed).
inline void *frame_alloc(std::size_t n) {
#if CREW_CORO_FRAME_CACHE
    std::size_t i = (n - 1) / frame_cache::grain;
    if (i < frame_cache::classes) {
        frame_cache &c = tls_frames;
        if (frame_cache::block *b = c.free[i]) {
            frame_unpoison(b, sizeof *b);
            c.free[i] = b->next;
            c.room += (i + 1) * frame_cache::grain;
            frame_unpoison(b, (i + 1) * frame_cache::grain);
            return b;
        }
        return ::operator new((i + 1) * frame_cache::grain);
    }
#endif
    return ::operator new(n);
}

// Free a frame of n bytes, allocated on any thread: kept in this thread's list while the thread
// keeps less than frame_cache::cap bytes and is not exiting, else given back to the heap.
inline void frame_free(void *p, std::size_t n) noexcept {
#if CREW_CORO_FRAME_CACHE
    std::size_t i = (n - 1) / frame_cache::grain;
    if (i < frame_cache::classes) {
        std::size_t size = (i + 1) * frame_cache::grain;
        frame_cache &c = tls_frames;
        // Room for it, the common case, first: one test on the way to the list.
        if (size > c.room) [[unlikely]] {
            if (c.state != frame_cache::unused) { // full, or the thread is exiting
                frame_heap_free(p, size);
                return;
            }
            tls_frame_reaper.armed = true; // the first: release the cache at thread exit
            c.state = frame_cache::keeping;
            c.room = frame_cache::cap;
        }
        auto *b = static_cast<frame_cache::block *>(p);
        b->next = c.free[i];
        c.free[i] = b;
        c.room -= size;
        frame_poison(b, size);
        return;
    }
#endif
    frame_heap_free(p, n);
}

// A promise base: the frames of its coroutines come from frame_alloc.
struct cached_frame {
    static void *operator new(std::size_t n) { return frame_alloc(n); }
    static void operator delete(void *p, std::size_t n) noexcept { frame_free(p, n); }
};

// How the children of a when_all end: each counts down `left` as it ends (the awaiter holds one
// more until it has started them all); whoever takes it to 0 resumes the awaiter.
struct join_state {
    std::atomic<std::size_t> left;
    std::coroutine_handle<> continuation{};
    // One ended: the awaiter to transfer to if that was the last, else nothing. After the count
    // the caller must touch neither its frame nor this state: once the count is 0, another
    // thread may resume the awaiter, which destroys both.
    std::coroutine_handle<> arrive() noexcept {
        // acq_rel: the last to count down sees every other child's result before the awaiter
        // reads them, and its own result is published to whoever is last.
        if (left.fetch_sub(1, std::memory_order_acq_rel) == 1)
            return continuation;
        return std::noop_coroutine();
    }
};

// What every crew::task promise has, whatever T (when_all reaches its children through it).
struct promise_base : cached_frame {
    std::coroutine_handle<> continuation = std::noop_coroutine(); // co_await: resumed at the end
    join_state *join = nullptr; // a when_all started it: count down there at the end instead
    std::exception_ptr error;
};

template <class... T> class when_all_awaiter;
} // namespace detail

// Continue on a worker of p / on one of its blocking threads (CREW_TASK_BLOCKING).
inline detail::schedule_awaiter schedule(pool &p) { return {p.native(), 0}; }
inline detail::schedule_awaiter schedule_blocking(pool &p) {
    return {p.native(), CREW_TASK_BLOCKING};
}

// A lazy coroutine producing a T (or nothing, for void).
template <class T = void> class [[nodiscard]] task {
public:
    struct promise_type : detail::result_slot<T>, detail::promise_base {
        task get_return_object() noexcept {
            return task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct final_awaiter {
            bool await_ready() const noexcept { return false; }
            // Symmetric transfer to whoever awaited this task (see "Stack use" at the top), or,
            // for a child of a when_all, to the awaiter if this child ended last. Not the
            // latter's frame nor the when_all may be touched after arrive(): the handle
            // returned is kept in registers or on the stack, never in the frame (as checked
            // with gcc 12 and clang 14, at -O0 and -O2).
            std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
                promise_type &pr = h.promise();
                if (detail::join_state *j = pr.join)
                    return j->arrive();
                return pr.continuation;
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
    template <class... U> friend class detail::when_all_awaiter;
    explicit task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
    std::coroutine_handle<promise_type> h_;
};

namespace detail {
// Runs a task to its end, then signals: wakes sync_wait.
struct driver {
    struct promise_type : cached_frame {
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

// when_all's awaiter: it owns the child tasks (their frames hold their results and exceptions)
// and counts them down in join_ (see join_state), so that a child needs no frame but its own.
// On a worker of its pool it starts them through crew_join (see "when_all on a worker" at the
// top); elsewhere as tasks of the pool, all but the last, which starts in place.
template <class... T> class when_all_awaiter {
    static constexpr std::size_t n = sizeof...(T);
    // A child: its frame, and the pool task that starts it (off a worker, all but the last).
    struct child final : coro_node {
        std::coroutine_handle<> h; // h, promise and w: set by init()
        promise_base *promise;
        when_all_awaiter *w;
        bool lost = false; // its start was dropped or cancelled: destroyed unstarted, reported
        void run() noexcept override { h.resume(); }
        void cancelled() noexcept override {
            lost = true;
            w->join_.arrive().resume(); // the last: resume the awaiter here
        }
    };
    // Children [lo, hi) started through crew_join, on the stack of the join that starts them.
    // offered: crew_join offered them to the pool's other threads (not run in place).
    struct range {
        when_all_awaiter *w;
        std::size_t lo, hi;
        bool offered;
    };

public:
    when_all_awaiter(crew_pool *p, task<T>... ts) : p_(p), tasks_(std::move(ts)...) {
        init(std::index_sequence_for<T...>{});
    }
    when_all_awaiter(const when_all_awaiter &) = delete;
    when_all_awaiter &operator=(const when_all_awaiter &) = delete;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> c) noexcept {
        join_.continuation = c;
        const pool *mine = worker_of;
        if (n > 1 && mine && mine->native() == p_) {
            // Returns once every child has ended or first suspended. Only EINVAL (a NULL
            // argument) fails crew_join: p_ is a live pool, this thread its worker.
            if constexpr (n == 2) { // the common case, without ranges
                (void)crew_join(p_, start_at<1, false>, this, start_at<0, true>, this);
            } else {
                range all{this, 0, n, false};
                start(&all);
            }
        } else {
            start_as_tasks();
        }
        // Give up this call's count. If that ends the count, every child has ended: go on
        // without suspending (not resumed in here, a frame deeper on every loop iteration).
        // Otherwise the last child to end resumes the awaiter, perhaps already on another
        // thread: from here on this awaiter (in the coroutine's frame) may be gone.
        // acq_rel: as in join_state::arrive.
        return join_.left.fetch_sub(1, std::memory_order_acq_rel) != 1;
    }
    std::tuple<stored_t<T>...> await_resume() {
        for (child &ch : children_) {
            if (ch.lost)
                throw error(CREW_ECANCELED, "crew::when_all", dropped_detail);
            if (ch.promise->error)
                std::rethrow_exception(ch.promise->error);
        }
        return results(std::index_sequence_for<T...>{});
    }

private:
    // Start child i here, on this thread: resume it until it ends or first suspends (it counts
    // itself down in join_ as it ends). One awaited before only counts down (not the last:
    // await_suspend holds a count). offered: an offered child whose pool is shutting down with
    // CREW_CANCEL, or whose awaiting task's group was cancelled (crew_cancelled()), is not
    // started but reported, as a dropped start task would be.
    void start_child(std::size_t i, bool offered) noexcept {
        child &ch = children_[i];
        if (ch.h.done()) {
            join_.arrive();
            return;
        }
        if (offered && crew_cancelled()) {
            ch.lost = true;
            join_.arrive();
            return;
        }
        ch.promise->join = &join_;
        ch.h.resume();
    }
    // Child I of the when_all at w (a void * for crew_join).
    template <std::size_t I, bool offered> static void start_at(void *w) noexcept {
        static_cast<when_all_awaiter *>(w)->start_child(I, offered);
    }
    // Children [lo, hi) of a range (a void * for crew_join): the upper half in place, the lower
    // one offered to the pool's other threads and taken back if none took it (crew_join).
    static void start(void *arg) noexcept {
        const range *r = static_cast<const range *>(arg);
        if (r->hi - r->lo == 1) {
            r->w->start_child(r->lo, r->offered);
            return;
        }
        std::size_t mid = r->lo + (r->hi - r->lo) / 2;
        range upper{r->w, mid, r->hi, r->offered}, lower{r->w, r->lo, mid, true};
        (void)crew_join(r->w->p_, start, &upper, start, &lower);
    }
    // Off a worker of p_: all but the last child as tasks of the pool, the last in place; a
    // failure to submit runs that one and the rest in place, one after another.
    void start_as_tasks() noexcept {
        std::size_t i = 0;
        for (; i + 1 < n; i++) {
            if (children_[i].h.done()) { // awaited before: its result is there already
                join_.arrive();          // not the last: await_suspend holds a count
                continue;
            }
            children_[i].promise->join = &join_;
            if (crew_submit(p_, node::trampoline, static_cast<node *>(&children_[i]), 0,
                            nullptr) != CREW_OK)
                break;
        }
        for (; i < n; i++)
            start_child(i, false); // returns when it ends or first suspends
    }
    template <std::size_t... I> void init(std::index_sequence<I...>) {
        if (!(std::get<I>(tasks_).h_ && ...))
            throw error(CREW_EINVAL, "crew::when_all", "a task that was moved from");
        ((children_[I].h = std::get<I>(tasks_).h_,
          children_[I].promise = &std::get<I>(tasks_).h_.promise(), children_[I].w = this),
         ...);
    }
    template <class U> static stored_t<U> take(task<U> &t) {
        if constexpr (std::is_void_v<U>)
            return std::monostate{};
        else
            return t.h_.promise().take();
    }
    template <std::size_t... I> std::tuple<stored_t<T>...> results(std::index_sequence<I...>) {
        return std::tuple<stored_t<T>...>(take(std::get<I>(tasks_))...);
    }
    crew_pool *p_;
    std::tuple<task<T>...> tasks_; // destroys the children's frames with this awaiter
    child children_[n];
    join_state join_{{n + 1}};
};
} // namespace detail

// Run the tasks concurrently on p (see the top of this file); a tuple of their results (void
// results as std::monostate).
template <class... T> auto when_all(pool &p, task<T>... ts) {
    static_assert(sizeof...(T) >= 1, "crew::when_all needs at least one task");
    return detail::when_all_awaiter<T...>(p.native(), std::move(ts)...);
}

namespace detail {
// co_await on work that ends as a crew group does (W: a crew::group, a crew::graph::execution):
// suspends until its completion callback (W::on_done, crew_notify) resumes the coroutine on a
// pool thread, then answers with W::wait(), at once. With no group (native() names none:
// nothing run yet, or a run waited for already) it does not suspend.
template <class W> struct done_awaiter {
    W &w;
    bool await_ready() { return w.native().slot == 0; }
    void await_suspend(std::coroutine_handle<> h) {
        w.on_done([h] { h.resume(); });
    }
    void await_resume() { w.wait(); } // it has ended: answers at once
};
} // namespace detail

// co_await on a crew::group: suspends until every task run() so far has finished (crew_notify
// resumes the coroutine on a pool thread), then rethrows the first exception one threw. With no
// task run() yet it does not suspend.
inline auto operator co_await(group &g) { return detail::done_awaiter<group>{g}; }

// co_await on a crew::graph run (co_await g.run()): suspends until the run has ended, holding
// no thread meanwhile (crew_notify resumes the coroutine on a pool thread), then rethrows the
// first exception a node threw, or throws crew::error for a cancelled run (as wait()). On an
// execution waited for already it throws crew::error (CREW_EINVAL) without suspending.
inline auto operator co_await(graph::execution &e) {
    return detail::done_awaiter<graph::execution>{e};
}
inline auto operator co_await(graph::execution &&e) { // the temporary outlives the co_await
    return detail::done_awaiter<graph::execution>{e};
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
