// test_examples.cpp -- runs the example programs as a user would and checks what they do.
// http_server: every endpoint and the index at /, bad input (400/405/413), keep-alive and
// pipelining, silent and slow clients timed out, many concurrent clients on a 2-thread pool,
// and a clean exit; in both the crew-pool mode and the thread-per-connection mode. Traffic
// stays on 127.0.0.1.
// notify_epoll: completions reach an epoll loop through crew_notify, each exactly once.
// coro_fib (with C++20 coroutines): the coroutine fib agrees with the C one.
// Every program the build makes (programs.txt): --help and -h answer with the usage and status
// 0; an unknown option or a missing argument, with the usage on stderr and an error status.
#include <gtest/gtest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace {

struct Server {
    pid_t pid = -1;
    int port = 0;
    FILE *out = nullptr;

    explicit Server(const char *mode, const std::vector<const char *> &extra = {}) {
        int pipefd[2];
        if (pipe(pipefd) != 0)
            return;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
        posix_spawn_file_actions_addclose(&fa, pipefd[0]);
        std::string bin = std::string(CREW_EXAMPLES_DIR) + "/http_server";
        std::vector<const char *> argv = {bin.c_str(), "-t", "2", "-m", mode, "-i", "300"};
        argv.insert(argv.end(), extra.begin(), extra.end()); // later options win
        argv.push_back(nullptr);
        if (posix_spawn(&pid, bin.c_str(), &fa, nullptr, const_cast<char **>(argv.data()),
                        environ) != 0)
            pid = -1;
        posix_spawn_file_actions_destroy(&fa);
        close(pipefd[1]);
        out = fdopen(pipefd[0], "r");
        char line[256];
        if (out && fgets(line, sizeof line, out))
            std::sscanf(line, "listening on 127.0.0.1:%d", &port);
    }
    // SIGTERM, then the exit status (0 expected).
    int stop() {
        if (pid < 0)
            return -1;
        kill(pid, SIGTERM);
        int status = 0;
        waitpid(pid, &status, 0);
        pid = -1;
        if (out)
            fclose(out);
        out = nullptr;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    ~Server() { stop(); }
};

int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        close(fd);
        return -1;
    }
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

void send_str(int fd, const std::string &s) { (void)!send(fd, s.data(), s.size(), MSG_NOSIGNAL); }

// Read one response (head + Content-Length body). Empty string on EOF/time-out. Bytes of a
// following (pipelined) response stay in `carry` for the next call.
std::string read_response(int fd, std::string &carry) {
    std::string buf = std::move(carry);
    carry.clear();
    char c[4096];
    size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
        ssize_t r = recv(fd, c, sizeof c, 0);
        if (r <= 0)
            return "";
        buf.append(c, size_t(r));
    }
    size_t cl = buf.find("Content-Length: ");
    size_t len = cl == std::string::npos ? 0 : std::stoul(buf.substr(cl + 16));
    while (buf.size() < head_end + 4 + len) {
        ssize_t r = recv(fd, c, sizeof c, 0);
        if (r <= 0)
            return "";
        buf.append(c, size_t(r));
    }
    carry = buf.substr(head_end + 4 + len);
    return buf.substr(0, head_end + 4 + len);
}

std::string read_response(int fd) {
    std::string carry;
    return read_response(fd, carry);
}

std::string get(int port, const std::string &request) {
    int fd = connect_to(port);
    if (fd < 0)
        return "";
    send_str(fd, request);
    std::string r = read_response(fd);
    close(fd);
    return r;
}

// True if the server closes fd within ms milliseconds.
bool closed_within(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
        if (poll(&p, 1, 50) == 1) {
            char c;
            if (recv(fd, &c, 1, 0) <= 0)
                return true;
        }
    }
    return false;
}

void exercise(const char *mode, const std::vector<const char *> &extra = {}) {
    Server s(mode, extra);
    ASSERT_GT(s.port, 0) << "server did not start";
    const int port = s.port;

    // GET /, the address a user tries first, is an index of the endpoints, not a 404.
    std::string index = get(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(index.find("HTTP/1.1 200 OK"), std::string::npos) << index;
    for (const char *endpoint : {"\"/static\"", "\"/cpu?n=", "\"/slow?ms="})
        EXPECT_NE(index.find(endpoint), std::string::npos) << endpoint << " in " << index;
    EXPECT_NE(get(port, "GET /static HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                  .find("200 OK"),
              std::string::npos);
    std::string cpu = get(port, "GET /cpu?n=1000 HTTP/1.1\r\n\r\n");
    EXPECT_NE(cpu.find("200 OK"), std::string::npos) << cpu;
    EXPECT_NE(get(port, "GET /slow?ms=10 HTTP/1.1\r\n\r\n").find("slept 10 ms"),
              std::string::npos);
    EXPECT_NE(get(port, "GET /nope HTTP/1.1\r\n\r\n").find("404"), std::string::npos);
    EXPECT_NE(get(port, "garbage\r\n\r\n").find("400 Bad Request"), std::string::npos);
    EXPECT_NE(get(port, "GET /cpu?n=abc HTTP/1.1\r\n\r\n").find("400"), std::string::npos);
    EXPECT_NE(get(port, "POST /static HTTP/1.1\r\n\r\n").find("405"), std::string::npos);
    EXPECT_NE(get(port, "GET /" + std::string(9000, 'a')).find("413"), std::string::npos);

    // Keep-alive and pipelining: three requests on one connection, two sent at once.
    int fd = connect_to(port);
    std::string carry;
    send_str(fd, "GET /static HTTP/1.1\r\n\r\n");
    EXPECT_NE(read_response(fd, carry).find("200 OK"), std::string::npos);
    send_str(fd, "GET /cpu?n=10 HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n");
    EXPECT_NE(read_response(fd, carry).find("200 OK"), std::string::npos);
    EXPECT_NE(read_response(fd, carry).find("404"), std::string::npos);
    close(fd);

    // A silent client and a slow one (half a request head) are closed after the idle time-out.
    int silent = connect_to(port), slow = connect_to(port);
    send_str(slow, "GET /sta");
    EXPECT_TRUE(closed_within(silent, 3000));
    EXPECT_TRUE(closed_within(slow, 3000));
    close(silent);
    close(slow);

    // Many clients at once on 2 workers, each with several keep-alive requests. A keep-alive
    // connection the server closed as idle (a slow client, e.g. under valgrind) is reopened and
    // the request sent again once, as HTTP clients do; a second failure counts.
    std::atomic<int> ok{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 16; c++)
        clients.emplace_back([&] {
            int f = connect_to(port);
            for (int i = 0; i < 10; i++) {
                send_str(f, "GET /slow?ms=2 HTTP/1.1\r\n\r\n");
                std::string r = read_response(f);
                if (r.empty()) {
                    close(f);
                    f = connect_to(port);
                    send_str(f, "GET /slow?ms=2 HTTP/1.1\r\n\r\n");
                    r = read_response(f);
                }
                ok += r.find("slept 2 ms") != std::string::npos;
            }
            close(f);
        });
    for (auto &t : clients)
        t.join();
    EXPECT_EQ(ok.load(), 160);

    // Still alive after all that, and exits cleanly on SIGTERM.
    EXPECT_NE(get(port, "GET /static HTTP/1.1\r\n\r\n").find("200 OK"), std::string::npos);
    EXPECT_EQ(s.stop(), 0);
}

} // namespace

TEST(Examples, HttpServerOnACrewPool) { exercise("pool"); }
TEST(Examples, HttpServerThreadPerConnection) { exercise("thread"); }
TEST(Examples, HttpServerSlowOnTheWorkersStillWorks) { exercise("pool", {"-B"}); }


namespace {

// Run an example with arguments; returns its exit status and fills out with stdout and (unless
// with_stderr is false) stderr.
int run(const std::string &args, std::string &out, bool with_stderr = true) {
    std::string cmd =
        std::string(CREW_EXAMPLES_DIR) + "/" + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
    FILE *f = popen(cmd.c_str(), "r");
    if (!f)
        return -1;
    char buf[4096];
    size_t n;
    out.clear();
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        out.append(buf, n);
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The failure share printed for one pool size row ("  4   0.123   3.90   0.0%").
double failed_percent(const std::string &out, const std::string &size) {
    size_t pos = 0;
    while ((pos = out.find('\n', pos)) != std::string::npos) {
        pos++;
        char name[32];
        double secs, speedup, failed;
        if (std::sscanf(out.c_str() + pos, "%31s %lf %lf %lf%%", name, &secs, &speedup,
                        &failed) == 4 &&
            size == name)
            return failed;
    }
    return -1;
}

uint64_t fnv1a(const std::string &s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s)
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

} // namespace

TEST(Examples, ProberReproducesSpeedupAndFailureCurves) {
    std::string out;
    // Enough capacity: no probe fails, and the pool is faster than sequential.
    ASSERT_EQ(run("prober -n 32 -s 1,4 -k 4 -l 5 -T 2000", out), 0) << out;
    EXPECT_EQ(failed_percent(out, "sequential"), 0.0) << out;
    EXPECT_EQ(failed_percent(out, "4"), 0.0) << out;
    // One slow server, a short time-out and 8 probes in flight: most time out.
    ASSERT_EQ(run("prober -n 24 -s 8 -k 1 -l 40 -T 60", out), 0) << out;
    EXPECT_GT(failed_percent(out, "8"), 30.0) << out;
    // Bad input is refused with a message.
    EXPECT_EQ(run("prober -n 0", out), 2);
    EXPECT_NE(out.find("-n 1..1000000"), std::string::npos) << out;
    char tmpl[] = "/tmp/crew-targets-XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    (void)!write(fd, "127.0.0.1:80\nnot-a-target\n", 26);
    close(fd);
    EXPECT_EQ(run(std::string("prober -f ") + tmpl, out), 1);
    EXPECT_NE(out.find(":2: expected IPv4:port"), std::string::npos) << out;
    unlink(tmpl);
}

TEST(Examples, NotifyEpollHandsCompletionsToTheLoop) {
    std::string out;
    ASSERT_EQ(run("notify_epoll -n 40 -k 4 -t 2", out), 0) << out;
    EXPECT_NE(out.find("done: 40 requests, 0 cancelled, 0 wrong"), std::string::npos) << out;
    EXPECT_NE(out.find("request 39: sum "), std::string::npos) << out;
    // Cancelled requests still complete (their callback runs), reported as cancelled.
    ASSERT_EQ(run("notify_epoll -n 30 -k 64 -t 1 -c", out), 0) << out;
    EXPECT_NE(out.find("done: 30 requests, "), std::string::npos) << out;
    EXPECT_NE(out.find(": cancelled"), std::string::npos) << out;
    EXPECT_EQ(run("notify_epoll -n 0", out), 2);
    EXPECT_NE(out.find("expected a number in 1..100000"), std::string::npos) << out;
    EXPECT_NE(out.find("usage: "), std::string::npos) << out;
}

#ifdef CREW_CORO_EXAMPLE
TEST(Examples, CoroFibMatchesTheCVersion) {
    std::string out;
    ASSERT_EQ(run("coro_fib -n 15 -t 2 -r 2", out), 0) << out;
    EXPECT_NE(out.find("fib(15) = 610 (coroutines), 610 (C spawn-and-wait)"), std::string::npos)
        << out;
    EXPECT_EQ(run("coro_fib -n 0", out), 2);
}
#endif

TEST(Examples, HasherHashesEveryFileTheSameOnAnyPoolSize) {
    char tmpl[] = "/tmp/crew-hasher-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    std::string dir = tmpl;
    ASSERT_EQ(mkdir((dir + "/sub").c_str(), 0700), 0);
    std::vector<std::pair<std::string, std::string>> files = {
        {dir + "/a.txt", "hello\n"}, {dir + "/sub/b.bin", std::string(200000, 'x')},
        {dir + "/sub/empty", ""}};
    for (auto &f : files) {
        FILE *fp = fopen(f.first.c_str(), "wb");
        ASSERT_NE(fp, nullptr);
        fwrite(f.second.data(), 1, f.second.size(), fp);
        fclose(fp);
    }
    std::string want;
    for (auto &f : files) { // already in path order
        char line[512];
        std::snprintf(line, sizeof line, "%016llx  %s\n", (unsigned long long)fnv1a(f.second),
                      f.first.c_str());
        want += line;
    }
    std::string one, three;
    ASSERT_EQ(run("hasher -t 1 " + dir, one, false), 0);
    ASSERT_EQ(run("hasher -t 3 " + dir, three, false), 0);
    EXPECT_EQ(one, want);
    EXPECT_EQ(three, want);
    std::string blocking; // -b: the same, read on the blocking threads
    ASSERT_EQ(run("hasher -b -t 1 " + dir, blocking, false), 0);
    EXPECT_EQ(blocking, want);
    std::string err;
    EXPECT_EQ(run("hasher " + dir + "/does-not-exist", err), 1);
    EXPECT_NE(err.find("cannot walk"), std::string::npos) << err;
    EXPECT_EQ(run("hasher", err), 2);
    for (auto &f : files)
        unlink(f.first.c_str());
    rmdir((dir + "/sub").c_str());
    rmdir(dir.c_str());
}

namespace {
// Milliseconds a /static request takes on a 1-worker server while a /slow request of 1.5 s is
// being served (its response is checked too).
long static_ms_during_slow(const std::vector<const char *> &extra) {
    std::vector<const char *> args = {"-t", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    Server s("pool", args);
    EXPECT_GT(s.port, 0);
    int slow = connect_to(s.port);
    send_str(slow, "GET /slow?ms=1500 HTTP/1.1\r\n\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // it is sleeping by now
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_NE(get(s.port, "GET /static HTTP/1.1\r\n\r\n").find("200 OK"), std::string::npos);
    long ms = long(std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - t0)
                       .count());
    EXPECT_NE(read_response(slow).find("slept 1500 ms"), std::string::npos);
    close(slow);
    EXPECT_EQ(s.stop(), 0);
    return ms;
}
} // namespace

// README's advice, followed by the example: a request that sleeps runs as a CREW_TASK_BLOCKING
// task, so even the only worker stays free for short requests. With -B (sleeping on the workers)
// the short request waits for the sleep to end.
TEST(Examples, HttpServerSlowRequestsDoNotHoldTheWorkers) {
    EXPECT_LT(static_ms_during_slow({}), 800);
    EXPECT_GE(static_ms_during_slow({"-B"}), 800);
}

namespace {

// A program's run: how it ended and what it wrote.
struct Outcome {
    bool exited = false; // exited normally (not killed by a signal, not hung)
    int status = -1;     // its exit status if it exited, else the signal (or -1: hung)
    std::string out, err;
};

std::string slurp(const std::string &path) {
    std::string s;
    if (FILE *f = std::fopen(path.c_str(), "rb")) {
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
            s.append(buf, n);
        std::fclose(f);
    }
    return s;
}

// Runs path with args (no shell), stdin from /dev/null, stdout and stderr kept apart; a program
// still running after 60 s is killed and counts as hung.
Outcome run_program(const std::string &path, const std::vector<std::string> &args) {
    Outcome o;
    char out_tmpl[] = "/tmp/crew-prog-out-XXXXXX", err_tmpl[] = "/tmp/crew-prog-err-XXXXXX";
    int out_fd = mkstemp(out_tmpl), err_fd = mkstemp(err_tmpl);
    if (out_fd < 0 || err_fd < 0)
        return o;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    std::vector<char *> argv = {const_cast<char *>(path.c_str())};
    for (auto &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid;
    int rc = posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out_fd);
    close(err_fd);
    if (rc == 0) {
        int st = 0;
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (waitpid(pid, &st, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > until) {
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                st = -1;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        o.exited = st != -1 && WIFEXITED(st);
        o.status = st == -1 ? -1 : o.exited ? WEXITSTATUS(st) : WTERMSIG(st);
    }
    o.out = slurp(out_tmpl);
    o.err = slurp(err_tmpl);
    unlink(out_tmpl);
    unlink(err_tmpl);
    return o;
}

std::string describe(const Outcome &o) {
    std::string how = o.exited ? "exit status " + std::to_string(o.status)
                      : o.status < 0 ? std::string("hung (killed after 60 s)")
                                     : "killed by signal " + std::to_string(o.status);
    return how + "\n--- stdout:\n" + o.out.substr(0, 2000) + "\n--- stderr:\n" +
           o.err.substr(0, 2000);
}

// The programs the build makes (programs.txt, written by the top-level CMakeLists.txt).
std::vector<std::string> programs() {
    std::vector<std::string> list;
    std::string all = slurp(CREW_PROGRAMS_LIST), line;
    for (char c : all) {
        if (c != '\n') {
            line += c;
        } else if (!line.empty()) {
            list.push_back(line);
            line.clear();
        }
    }
    return list;
}

// The short options that its usage shows with an argument: "[-t threads]" gives t.
std::vector<char> options_with_argument(const std::string &usage) {
    std::vector<char> opts;
    for (size_t i = usage.find("[-"); i != std::string::npos; i = usage.find("[-", i + 1)) {
        char c = i + 3 < usage.size() ? usage[i + 2] : 0;
        if (std::isalpha(static_cast<unsigned char>(c)) && usage[i + 3] == ' ' &&
            std::find(opts.begin(), opts.end(), c) == opts.end())
            opts.push_back(c);
    }
    return opts;
}

} // namespace

// Every program the build makes (examples, benchmarks, crew-sim, the compat examples, soak)
// answers --help and -h with its usage on stdout and status 0; an unknown option, or an option
// its usage shows with an argument given without one, gets the usage on stderr and a non-zero
// status, never a crash.
TEST(Programs, EveryProgramAnswersHelpAndRefusesBadOptions) {
    std::vector<std::string> progs = programs();
    ASSERT_FALSE(progs.empty()) << CREW_PROGRAMS_LIST;
    bool found_example = false;
    for (const std::string &path : progs) {
        SCOPED_TRACE(path);
        std::string name = path.substr(path.rfind('/') + 1);
        found_example = found_example || name == "http_server";
        for (const char *help : {"--help", "-h"}) {
            Outcome o = run_program(path, {help});
            EXPECT_TRUE(o.exited && o.status == 0) << help << ": " << describe(o);
            EXPECT_NE(o.out.find("usage: "), std::string::npos) << help << ": " << describe(o);
            EXPECT_NE(o.out.find(name), std::string::npos) << help << ": " << describe(o);
            EXPECT_NE(o.out.find("--help"), std::string::npos) << help << ": " << describe(o);
        }
        Outcome bad = run_program(path, {"--no-such-option"});
        EXPECT_TRUE(bad.exited && bad.status != 0) << "--no-such-option: " << describe(bad);
        EXPECT_NE(bad.err.find("usage: "), std::string::npos) << describe(bad);
        for (char opt : options_with_argument(run_program(path, {"--help"}).out)) {
            std::string arg = std::string("-") + opt;
            Outcome o = run_program(path, {arg});
            EXPECT_TRUE(o.exited && o.status != 0) << arg << " (no argument): " << describe(o);
            EXPECT_NE(o.err.find("usage: "), std::string::npos)
                << arg << " (no argument): " << describe(o);
        }
    }
    EXPECT_TRUE(found_example) << "http_server is not in " << CREW_PROGRAMS_LIST;
}
