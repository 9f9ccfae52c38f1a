// io_timeouts.cpp -- Jue's study: a thread pool for I/O-bound tasks with time-outs, crew against
// Boost.Asio's thread_pool, as speedup over a sequential run and share of failed requests.
//
// Jue pinged 42 web sites (popen "ping -c 1 -t 1") from pools of 1..128 threads. Here the
// sites are local: the benchmark starts its own TCP servers on 127.0.0.1 (-P listening ports on
// ephemeral ports, served by -j epoll threads), so the network is repeatable. Each task
// connects to one port (task i -> port i % P), sends 8 bytes (its id and an injected delay),
// and the server answers after that delay. The task gives up at its time-out (-T ms, counted
// from before connect(), waiting with ppoll); a reply whose kernel arrival time is past it, or
// none, is a failure.
//
// Delays come from a seeded generator (-x), fixed for the whole process: a share 1 - p is
// log-uniform in [dmin, dmax] ms, the tail p is uniform in [dmax, lmax] ms, so the tail beyond
// the time-out fails by design and anything beyond that share is the pool's doing, or the
// machine's: the closing line says how late the server's replies left.
//
// CSV (-c): impl,pool_size,tasks,run,seconds,failures,sequential_seconds,cpu_seconds, one row
// per run (impl "sequential" for the baseline); cpu_seconds is the whole process's CPU time.
//
// Implementations (-i), each with N threads for pool size N:
//   crew-workers   crew_submit (ordinary tasks) into a crew pool of N workers
//   crew-blocking  crew_submit_ex(..., CREW_TASK_BLOCKING) into a pool with max_blocking = N
//                  (and one worker, which stays idle); its N blocking threads are started
//                  before the clock, as the other pools' threads are
//   boost.asio     boost::asio::post into boost::asio::thread_pool(N)
// Completion is a latch counted down by the last task, so the caller never runs tasks itself
// (crew_wait_all would let it help, making N workers N+1 threads). Each round runs the
// sequential baseline (one thread, same task list), then every (size, implementation) pair,
// the implementations' order rotated per round. Medians of -r rounds with (min..max); speedup is
// the sequential median over the pool's (so it reads as the printed seconds do), with the range
// of the per-round speedups (each the same round's sequential time over the pool's).
//
// Usage: io_timeouts [-q] [-s 1,2,4,...] [-n tasks] [-r runs] [-T timeout_ms] [-d dmin,dmax]
//                    [-p tail_share] [-l tail_max_ms] [-x seed] [-P ports] [-j server_threads]
//                    [-i crew-workers,crew-blocking,boost.asio] [-c out.csv]
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench_util.hpp"
#include "crew.h"

#ifdef CREW_HAVE_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#endif

using benchutil::Latch;
using benchutil::Stat;
using benchutil::stat;
using benchutil::split;

namespace {

const uint32_t kMagic = 0x5eed0003u;

[[noreturn]] void die(const char *what) {
    std::fprintf(stderr, "io_timeouts: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

void check(int rc, const char *what) {
    if (rc != CREW_OK) {
        std::fprintf(stderr, "io_timeouts: %s: %s\n", what, crew_strerror(rc));
        std::exit(1);
    }
}

int64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// ------------------------------------------------------------------------------------------
// The servers: per thread an epoll set with its listening sockets, the connections still
// sending their request, and a heap of replies due, driven by one timerfd.
// ------------------------------------------------------------------------------------------
class ServerThread {
public:
    std::vector<uint16_t> ports;

    ServerThread(unsigned nports, int backlog) {
        ep_ = epoll_create1(EPOLL_CLOEXEC);
        tfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        stopfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (ep_ < 0 || tfd_ < 0 || stopfd_ < 0)
            die("server: epoll/timerfd/eventfd");
        watch(tfd_, kTimer);
        watch(stopfd_, kStop);
        for (unsigned i = 0; i < nports; i++) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0)
                die("server: socket");
            int one = 1;
            if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
                die("server: SO_REUSEADDR");
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = 0; // ephemeral
            socklen_t len = sizeof a;
            if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
                listen(fd, backlog) != 0 ||
                getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0)
                die("server: bind/listen");
            listeners_.push_back(fd);
            ports.push_back(ntohs(a.sin_port));
            watch(fd, kListener);
        }
    }
    ~ServerThread() {
        for (int fd : listeners_)
            close(fd);
        for (auto &c : conns_)
            close(c.first);
        while (!due_.empty()) {
            close(due_.top().fd);
            due_.pop();
        }
        close(stopfd_);
        close(tfd_);
        close(ep_);
    }
    void start() { th_ = std::thread([this] { loop(); }); }
    void stop() {
        uint64_t one = 1;
        if (write(stopfd_, &one, sizeof one) != sizeof one)
            die("server: eventfd write");
        th_.join();
    }
    // Read after stop(): how late each reply left (ns past its due time), and the count.
    const std::vector<int64_t> &lateness() const { return late_; }
    long refused() const { return accept_errors_; }

private:
    enum Kind : uint64_t { kListener = 1, kConn = 2, kTimer = 3, kStop = 4 };
    struct Conn {
        unsigned char buf[8];
        size_t got = 0;
    };
    struct Due {
        int64_t at;
        int fd;
        uint32_t id;
        bool operator>(const Due &o) const { return at > o.at; }
    };
    int ep_ = -1, tfd_ = -1, stopfd_ = -1;
    std::vector<int> listeners_;
    std::unordered_map<int, Conn> conns_;
    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
    std::vector<int64_t> late_;
    long accept_errors_ = 0;
    std::thread th_;

    void watch(int fd, Kind k) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = (uint64_t(k) << 32) | uint32_t(fd);
        if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0)
            die("server: epoll_ctl add");
    }
    void drop(int fd) { // a connection that never sent its whole request
        if (epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr) != 0)
            die("server: epoll_ctl del");
        conns_.erase(fd);
        close(fd);
    }
    void accept_all(int lfd) {
        for (;;) {
            int fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    return;
                if (errno == ECONNABORTED || errno == EINTR)
                    continue;
                // EMFILE and friends: the server would become the bottleneck; say so.
                accept_errors_++;
                return;
            }
            conns_[fd] = Conn{};
            watch(fd, kConn);
        }
    }
    void read_request(int fd) {
        Conn &c = conns_[fd];
        ssize_t n = recv(fd, c.buf + c.got, sizeof c.buf - c.got, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (n <= 0) {
            drop(fd);
            return;
        }
        c.got += size_t(n);
        if (c.got < sizeof c.buf)
            return;
        uint32_t id, delay_us;
        std::memcpy(&id, c.buf, 4);
        std::memcpy(&delay_us, c.buf + 4, 4);
        // From here on only the reply matters: stop watching, keep the fd in the heap.
        if (epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr) != 0)
            die("server: epoll_ctl del");
        conns_.erase(fd);
        due_.push(Due{now_ns() + int64_t(delay_us) * 1000, fd, id});
    }
    // Answer every reply that is due, then arm the timer for the next one.
    void fire_due() {
        int64_t t = now_ns();
        while (!due_.empty() && due_.top().at <= t) {
            Due d = due_.top();
            due_.pop();
            uint32_t reply[2] = {d.id, kMagic};
            // The client may have timed out and reset the connection: nothing to do then.
            (void)send(d.fd, reply, sizeof reply, MSG_NOSIGNAL | MSG_DONTWAIT);
            close(d.fd);
            late_.push_back(t - d.at);
            t = now_ns();
        }
        itimerspec its{};
        if (!due_.empty()) {
            its.it_value.tv_sec = due_.top().at / 1000000000;
            its.it_value.tv_nsec = due_.top().at % 1000000000;
        }
        if (timerfd_settime(tfd_, TFD_TIMER_ABSTIME, &its, nullptr) != 0)
            die("server: timerfd_settime");
    }
    void loop() {
        epoll_event evs[64];
        for (;;) {
            int n = epoll_wait(ep_, evs, 64, -1);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                die("server: epoll_wait");
            }
            for (int i = 0; i < n; i++) {
                int fd = int(uint32_t(evs[i].data.u64));
                switch (Kind(evs[i].data.u64 >> 32)) {
                case kListener: accept_all(fd); break;
                case kConn: read_request(fd); break;
                case kTimer: {
                    uint64_t ticks;
                    (void)!read(tfd_, &ticks, sizeof ticks); // EAGAIN after a re-arm is fine
                    break;
                }
                case kStop: return;
                }
            }
            fire_due();
        }
    }
};

// ------------------------------------------------------------------------------------------
// The client side: one task = one request with a time-out.
// ------------------------------------------------------------------------------------------
struct Task {
    uint32_t id;
    uint32_t delay_us;
    uint16_t port;
};

std::atomic<long> g_errors{0};  // refused, reset or garbled: not a time-out
std::atomic<long> g_stamped{0}; // replies with a kernel arrival time

// Wait for ev on fd until deadline; false on a time-out.
bool wait_fd(int fd, short ev, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - now_ns();
        if (left <= 0)
            return false;
        timespec ts{time_t(left / 1000000000), long(left % 1000000000)};
        pollfd p{fd, ev, 0};
        int n = ppoll(&p, 1, &ts, nullptr);
        if (n > 0)
            return true;
        if (n < 0 && errno != EINTR)
            die("ppoll");
    }
}

int64_t realtime_ns() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// recv that also returns when the kernel received the data (SO_TIMESTAMPNS, CLOCK_REALTIME;
// the time of reading instead if the kernel gave none).
ssize_t recv_stamped(int fd, void *buf, size_t len, int64_t *arrived) {
    iovec iov{buf, len};
    union {
        char buf[CMSG_SPACE(sizeof(timespec))];
        cmsghdr align;
    } ctl;
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof ctl.buf;
    ssize_t n = recvmsg(fd, &msg, 0);
    *arrived = realtime_ns();
    if (n > 0)
        for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                timespec ts;
                std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
                *arrived = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
                g_stamped.fetch_add(1, std::memory_order_relaxed);
            }
    return n;
}

// Connect, ask, and wait for the answer until the time-out. True if it came in time: the
// kernel's arrival time decides, not when this thread got to run, so a thread woken late on
// a busy machine neither saves a late reply (poll reports data that came in after the
// deadline) nor loses one that came in time.
bool io_task(const Task &t, int64_t timeout_ns) {
    const int64_t deadline = now_ns() + timeout_ns;
    const int64_t deadline_rt = realtime_ns() + timeout_ns;
    int64_t arrived = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("client: socket"); // out of fds: a set-up problem, not a failure to count
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0)
        die("client: SO_TIMESTAMPNS");
    bool ok = false, error = false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(t.port);
    uint32_t req[2] = {t.id, t.delay_us}, rep[2];
    size_t got = 0;
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        if (errno != EINPROGRESS) {
            error = true;
            goto out;
        }
        if (!wait_fd(fd, POLLOUT, deadline))
            goto out;
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            error = true;
            goto out;
        }
    }
    // 8 bytes into a fresh socket's empty buffer: one call.
    if (send(fd, req, sizeof req, MSG_NOSIGNAL) != ssize_t(sizeof req)) {
        error = true;
        goto out;
    }
    while (got < sizeof rep) {
        if (!wait_fd(fd, POLLIN, deadline))
            goto out;
        ssize_t n = recv_stamped(fd, reinterpret_cast<char *>(rep) + got, sizeof rep - got,
                                 &arrived);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0) {
            error = true;
            goto out;
        }
        got += size_t(n);
    }
    error = rep[0] != t.id || rep[1] != kMagic;
    ok = !error && arrived <= deadline_rt;
out:
    if (error)
        g_errors.fetch_add(1, std::memory_order_relaxed);
    // Abortive close: no TIME_WAIT on the client, so thousands of runs never run out of ports.
    linger lg{1, 0};
    if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) != 0)
        die("client: SO_LINGER");
    close(fd);
    return ok;
}

// One run's task list and its outcome; tasks write only their own ok[] byte.
struct Batch {
    std::vector<Task> tasks;
    std::vector<unsigned char> ok;
    int64_t timeout_ns = 0;
    Latch latch;
};
struct Arg {
    Batch *b;
    size_t i;
};
void task_fn(void *p) {
    auto *a = static_cast<Arg *>(p);
    a->b->ok[a->i] = io_task(a->b->tasks[a->i], a->b->timeout_ns);
    a->b->latch.count_down();
}

// crew-blocking start-up: n tasks that each wait until all n are running, so the pool starts
// its n blocking threads before the clock does (2 s cap, in case it ever makes fewer).
struct Gate {
    std::mutex m;
    std::condition_variable cv;
    unsigned arrived = 0, n = 0;
    Latch done;
};
void gate_fn(void *p) {
    auto *g = static_cast<Gate *>(p);
    {
        std::unique_lock<std::mutex> l(g->m);
        if (++g->arrived == g->n)
            g->cv.notify_all();
        else
            g->cv.wait_for(l, std::chrono::seconds(2), [&] { return g->arrived >= g->n; });
    }
    g->done.count_down();
}

// Run the batch on one implementation with n threads; seconds from first submission to last
// completion (pool creation and destruction outside); *cpu: process CPU seconds meanwhile.
double run_pool(const std::string &impl, unsigned n, Batch &b, double *cpu) {
    const size_t m = b.tasks.size();
    std::vector<Arg> args(m);
    for (size_t i = 0; i < m; i++)
        args[i] = Arg{&b, i};
    std::fill(b.ok.begin(), b.ok.end(), 0);
    b.latch.reset(long(m));
    double secs = -1;
    if (impl == "crew-workers" || impl == "crew-blocking") {
        const bool blocking = impl == "crew-blocking";
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = blocking ? 1 : n;
        if (blocking)
            cfg.max_blocking = n;
        crew_pool *p = nullptr;
        check(crew_create(&p, &cfg), "crew_create");
        const unsigned flags = blocking ? CREW_TASK_BLOCKING : 0;
        if (blocking) {
            Gate g;
            g.n = n;
            g.done.reset(long(n));
            for (unsigned i = 0; i < n; i++)
                check(crew_submit_ex(p, gate_fn, &g, 0, CREW_TASK_BLOCKING, nullptr), "submit");
            g.done.wait();
            check(crew_wait_all(p), "wait_all"); // the gate tasks have returned, too
        }
        double c0 = benchutil::cpu_s();
        int64_t t0 = now_ns();
        for (size_t i = 0; i < m; i++)
            check(crew_submit_ex(p, task_fn, &args[i], 0, flags, nullptr), "submit");
        b.latch.wait();
        secs = double(now_ns() - t0) * 1e-9;
        *cpu = benchutil::cpu_s() - c0;
        check(crew_destroy(p), "crew_destroy");
    }
#ifdef CREW_HAVE_ASIO
    else if (impl == "boost.asio") {
        boost::asio::thread_pool pool(n);
        double c0 = benchutil::cpu_s();
        int64_t t0 = now_ns();
        for (size_t i = 0; i < m; i++) {
            Arg *a = &args[i];
            boost::asio::post(pool, [a] { task_fn(a); });
        }
        b.latch.wait();
        secs = double(now_ns() - t0) * 1e-9;
        *cpu = benchutil::cpu_s() - c0;
        pool.join();
    }
#endif
    else {
        std::fprintf(stderr, "io_timeouts: unknown implementation %s\n", impl.c_str());
        std::exit(2);
    }
    return secs;
}

double run_sequential(Batch &b, double *cpu) {
    std::fill(b.ok.begin(), b.ok.end(), 0);
    double c0 = benchutil::cpu_s();
    int64_t t0 = now_ns();
    for (size_t i = 0; i < b.tasks.size(); i++)
        b.ok[i] = io_task(b.tasks[i], b.timeout_ns);
    *cpu = benchutil::cpu_s() - c0;
    return double(now_ns() - t0) * 1e-9;
}

long failures(const Batch &b) {
    long f = 0;
    for (unsigned char o : b.ok)
        f += !o;
    return f;
}

// splitmix64: the delays are a function of the seed alone.
uint64_t splitmix(uint64_t &s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
double uniform01(uint64_t &s) { return double(splitmix(s) >> 11) * 0x1.0p-53; }


} // namespace

int main(int argc, char **argv) {
    std::vector<unsigned> sizes;
    std::vector<std::string> impls = {"crew-workers", "crew-blocking", "boost.asio"};
    long ntasks = -1;
    int runs = -1, server_threads = 2;
    unsigned nports = 8;
    double timeout_ms = 40, dmin = 1, dmax = 20, tail = 0.05, tail_max = 120;
    uint64_t seed = 3;
    bool quick = false;
    const char *csv = nullptr;
    int opt;
    static const option longopts[] = {{"help", no_argument, nullptr, 'h'}, {}};
    const char *optstring = "qs:n:r:T:d:p:l:x:P:j:i:c:h";
    while ((opt = getopt_long(argc, argv, optstring, longopts, nullptr)) != -1) {
        switch (opt) {
        case 'q': quick = true; break;
        case 's':
            sizes.clear();
            for (auto &s : split(optarg))
                sizes.push_back(unsigned(std::atoi(s.c_str())));
            break;
        case 'n': ntasks = std::atol(optarg); break;
        case 'r': runs = std::atoi(optarg); break;
        case 'T': timeout_ms = std::atof(optarg); break;
        case 'd':
            if (std::sscanf(optarg, "%lf,%lf", &dmin, &dmax) != 2)
                dmin = -1;
            break;
        case 'p': tail = std::atof(optarg); break;
        case 'l': tail_max = std::atof(optarg); break;
        case 'x': seed = std::strtoull(optarg, nullptr, 0); break;
        case 'P': nports = unsigned(std::atoi(optarg)); break;
        case 'j': server_threads = std::atoi(optarg); break;
        case 'i': impls = split(optarg); break;
        case 'c': csv = optarg; break;
        default:
            std::fprintf(opt == 'h' ? stdout : stderr,
                         "usage: %s [-q] [-s sizes] [-n tasks] [-r runs] [-T timeout_ms] "
                         "[-d dmin,dmax ms] [-p tail_share] [-l tail_max_ms] [-x seed] "
                         "[-P server_ports] [-j server_threads] "
                         "[-i crew-workers,crew-blocking,boost.asio] [-c out.csv]\n"
                         "  -q: sizes 2,8,32, 64 tasks, 3 runs (explicit options win)\n"
                         "  -h, --help: this text\n",
                         argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (sizes.empty())
        sizes = quick ? std::vector<unsigned>{2, 8, 32}
                      : std::vector<unsigned>{1, 2, 4, 8, 16, 32, 64, 128};
    if (ntasks < 0)
        ntasks = quick ? 64 : 256;
    if (runs < 0)
        runs = quick ? 3 : 5;
    bool sizes_ok = true;
    for (unsigned s : sizes)
        sizes_ok = sizes_ok && s >= 1 && s <= CREW_MAX_THREADS;
    if (!sizes_ok || ntasks < 1 || ntasks > 10000000 || runs < 1 || runs > 1000 ||
        timeout_ms <= 0 || dmin <= 0 || dmax < dmin || tail < 0 || tail > 1 ||
        tail_max < dmax || nports < 1 || nports > 1024 || server_threads < 1 ||
        server_threads > 256 || impls.empty()) {
        std::fprintf(stderr, "io_timeouts: out of range: -s 1..%u, -n >= 1, -r 1..1000, -T > 0, "
                             "0 < dmin <= dmax <= tail_max, -p 0..1, -P 1..1024, -j 1..256\n",
                     CREW_MAX_THREADS);
        return 2;
    }
    // Up to 2 fds per task in flight (client and server end) plus the pools': raise the limit.
    rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        die("getrlimit");
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            die("setrlimit");
    }
    const unsigned max_size = *std::max_element(sizes.begin(), sizes.end());
    if (rl.rlim_cur != RLIM_INFINITY && rlim_t(2 * max_size + nports + 64) > rl.rlim_cur) {
        std::fprintf(stderr, "io_timeouts: fd limit %llu is too low for pool size %u\n",
                     (unsigned long long)rl.rlim_cur, max_size);
        return 1;
    }
    std::vector<std::string> live;
    for (auto &i : impls) {
#ifndef CREW_HAVE_ASIO
        if (i == "boost.asio") {
            std::printf("note: boost.asio is not available in this build (libboost-dev absent)\n");
            continue;
        }
#endif
        if (i != "crew-workers" && i != "crew-blocking" && i != "boost.asio") {
            std::fprintf(stderr, "io_timeouts: unknown implementation %s\n", i.c_str());
            return 2;
        }
        live.push_back(i);
    }

    // The servers: backlog well above the largest pool, so no SYN ever waits for room.
    const int backlog = int(std::max(4096u, 4 * max_size));
    std::vector<std::unique_ptr<ServerThread>> servers;
    std::vector<uint16_t> ports;
    for (int j = 0; j < server_threads; j++) {
        const unsigned st = unsigned(server_threads);
        unsigned mine = nports / st + (unsigned(j) < nports % st);
        servers.push_back(std::make_unique<ServerThread>(mine, backlog));
        ports.insert(ports.end(), servers.back()->ports.begin(), servers.back()->ports.end());
    }
    for (auto &s : servers)
        s->start();

    // One task list for the whole process.
    Batch b;
    b.timeout_ns = int64_t(timeout_ms * 1e6);
    b.tasks.resize(size_t(ntasks));
    b.ok.resize(size_t(ntasks));
    uint64_t rng = seed;
    long injected = 0;
    double sum_ms = 0, longest_ms = 0;
    for (long i = 0; i < ntasks; i++) {
        double u = uniform01(rng), v = uniform01(rng);
        double ms = u < tail ? dmax + v * (tail_max - dmax) : dmin * std::pow(dmax / dmin, v);
        b.tasks[size_t(i)] =
            Task{uint32_t(i), uint32_t(ms * 1000), ports[size_t(i) % ports.size()]};
        injected += ms > timeout_ms;
        sum_ms += std::min(ms, timeout_ms);
        longest_ms = std::max(longest_ms, std::min(ms, timeout_ms));
    }

    FILE *out = csv ? std::fopen(csv, "w") : nullptr;
    if (csv && !out)
        die(csv);
    if (out)
        std::fprintf(out, "impl,pool_size,tasks,run,seconds,failures,sequential_seconds,"
                          "cpu_seconds\n");

    std::printf("%ld tasks, each a TCP request to 127.0.0.1 (%u ports, %d epoll server threads)\n"
                "answered after an injected delay: %.0f%% log-uniform %g..%g ms, %.0f%% uniform "
                "%g..%g ms (seed %llu).\n"
                "Time-out %g ms: %ld tasks (%.1f%%) are meant to time out. The delays sum to "
                "%.2f s with the\ntime-out applied; the longest task (%.1f ms) caps the speedup "
                "at %.1f.\n",
                ntasks, nports, server_threads, 100 * (1 - tail), dmin, dmax, 100 * tail, dmax,
                tail_max, (unsigned long long)seed, timeout_ms, injected,
                100.0 * double(injected) / double(ntasks), sum_ms / 1000, longest_ms,
                sum_ms / longest_ms);
    std::printf("crew-workers: ordinary tasks, N workers; crew-blocking: CREW_TASK_BLOCKING, "
                "max_blocking = N;\nboost.asio: thread_pool(N). %d rounds, each the sequential "
                "run then every pool, interleaved;\nmedians with (min..max).\n",
                runs);
    std::fflush(stdout);

    std::vector<double> seq_s, seq_f, seq_c;
    std::map<std::pair<unsigned, std::string>, std::vector<double>> speedup, fail, secs, cpus;
    for (int r = 0; r < runs; r++) {
        double seq_cpu = 0, seq = run_sequential(b, &seq_cpu);
        long sf = failures(b);
        seq_s.push_back(seq);
        seq_c.push_back(seq_cpu * 1e3);
        seq_f.push_back(100.0 * double(sf) / double(ntasks));
        if (out)
            std::fprintf(out, "sequential,1,%ld,%d,%.6f,%ld,%.6f,%.6f\n", ntasks, r, seq, sf, seq,
                         seq_cpu);
        for (unsigned n : sizes)
            for (size_t k = 0; k < live.size(); k++) {
                const std::string &impl = live[(k + size_t(r)) % live.size()];
                double cpu = 0, s = run_pool(impl, n, b, &cpu);
                long f = failures(b);
                speedup[{n, impl}].push_back(seq / s);
                fail[{n, impl}].push_back(100.0 * double(f) / double(ntasks));
                secs[{n, impl}].push_back(s);
                cpus[{n, impl}].push_back(cpu * 1e3);
                if (out)
                    std::fprintf(out, "%s,%u,%ld,%d,%.6f,%ld,%.6f,%.6f\n", impl.c_str(), n,
                                 ntasks, r, s, f, seq, cpu);
            }
    }
    if (out && std::fclose(out) != 0)
        die(csv);
    for (auto &s : servers)
        s->stop();

    Stat ss = stat(seq_s), sf = stat(seq_f), sc = stat(seq_c);
    std::printf("\nsequential: %.3f s (%.3f..%.3f), failures %.1f%% (%.1f..%.1f), CPU %.0f ms\n\n",
                ss.median, ss.min, ss.max, sf.median, sf.min, sf.max, sc.median);
    std::printf("%5s %-14s %8s %18s %10s %18s %9s %7s\n", "pool", "impl", "speedup", "(min..max)",
                "failures%", "(min..max)", "seconds", "CPU ms");
    for (unsigned n : sizes)
        for (auto &impl : live) {
            Stat sp = stat(speedup[{n, impl}]), fl = stat(fail[{n, impl}]),
                 se = stat(secs[{n, impl}]), cp = stat(cpus[{n, impl}]);
            std::printf("%5u %-14s %8.2f   (%6.2f..%6.2f) %10.1f   (%5.1f..%5.1f) %9.3f %7.0f\n",
                        n, impl.c_str(), se.median > 0 ? ss.median / se.median : 0.0, sp.min,
                        sp.max, fl.median, fl.min, fl.max,
                        se.median, cp.median);
        }
    // The servers' side: how late replies left against their due time (a bottleneck shows
    // here first), and whether any connection was refused or broke.
    std::vector<int64_t> late;
    long refused = 0;
    for (auto &s : servers) {
        late.insert(late.end(), s->lateness().begin(), s->lateness().end());
        refused += s->refused();
    }
    std::sort(late.begin(), late.end());
    if (!late.empty())
        std::printf("\nserver: %zu replies, lateness against the injected delay: median %.0f us, "
                    "99th percentile %.0f us,\nmax %.1f ms; accept errors %ld.\nclient: connection "
                    "errors %ld, replies read with a kernel arrival time %ld\n",
                    late.size(), double(late[late.size() / 2]) / 1e3,
                    double(late[late.size() * 99 / 100]) / 1e3, double(late.back()) / 1e6, refused,
                    g_errors.load(), g_stamped.load());
    return 0;
}
