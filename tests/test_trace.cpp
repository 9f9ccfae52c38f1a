// test_trace.cpp -- the task timeline (crew_trace_start/stop): the JSON is well formed (checked by
// a small parser here), every traced task appears exactly once, events on a thread nest, a
// fork-join on two workers shows both running tasks, a full ring drops its oldest events and
// counts them, and the calls' errors; a traced task graph run shows each node's turn as a slice
// named after the node and each edge it took as a matched pair of flow events.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sched.h>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "common.h"
#include "crew.h"

namespace {

// ---- A small JSON parser (RFC 8259), strict enough to reject what a viewer would refuse. ----
struct Json {
    enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<Json> arr;
    std::vector<std::pair<std::string, Json>> obj;
    const Json *get(const std::string &k) const {
        for (auto &kv : obj)
            if (kv.first == k)
                return &kv.second;
        return nullptr;
    }
};

class Parser {
public:
    explicit Parser(const std::string &s) : s_(s) {}
    bool parse(Json &out) {
        ws();
        if (!value(out, 0))
            return false;
        ws();
        return i_ == s_.size();
    }

private:
    const std::string &s_;
    size_t i_ = 0;
    void ws() {
        while (i_ < s_.size() && std::string(" \n\t\r").find(s_[i_]) != std::string::npos)
            i_++;
    }
    bool lit(const char *w) {
        size_t n = std::char_traits<char>::length(w);
        if (s_.compare(i_, n, w) != 0)
            return false;
        i_ += n;
        return true;
    }
    bool string(std::string &out) {
        if (i_ >= s_.size() || s_[i_] != '"')
            return false;
        i_++;
        while (i_ < s_.size() && s_[i_] != '"') {
            unsigned char c = static_cast<unsigned char>(s_[i_]);
            if (c < 0x20)
                return false;
            if (c == '\\') {
                if (++i_ >= s_.size())
                    return false;
                char e = s_[i_];
                if (e == 'u') {
                    if (i_ + 4 >= s_.size())
                        return false;
                    for (int k = 1; k <= 4; k++)
                        if (!isxdigit(static_cast<unsigned char>(s_[i_ + k])))
                            return false;
                    out += '?';
                    i_ += 5;
                    continue;
                }
                if (std::string("\"\\/bfnrt").find(e) == std::string::npos)
                    return false;
                out += e;
                i_++;
                continue;
            }
            if (c >= 0x80) { // JSON text is UTF-8: a whole, shortest-form sequence
                size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
                if (n == 0 || c > 0xf4 || i_ + n > s_.size())
                    return false;
                for (size_t k = 1; k < n; k++)
                    if ((static_cast<unsigned char>(s_[i_ + k]) & 0xc0) != 0x80)
                        return false;
                unsigned char d = static_cast<unsigned char>(s_[i_ + 1]);
                if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d >= 0xa0) ||
                    (c == 0xf0 && d < 0x90) || (c == 0xf4 && d >= 0x90))
                    return false;
                out.append(s_, i_, n);
                i_ += n;
                continue;
            }
            out += static_cast<char>(c);
            i_++;
        }
        if (i_ >= s_.size())
            return false;
        i_++;
        return true;
    }
    bool number(double &out) {
        size_t b = i_;
        if (i_ < s_.size() && s_[i_] == '-')
            i_++;
        if (i_ >= s_.size() || !isdigit(static_cast<unsigned char>(s_[i_])))
            return false;
        if (s_[i_] == '0')
            i_++;
        else
            while (i_ < s_.size() && isdigit(static_cast<unsigned char>(s_[i_])))
                i_++;
        if (i_ < s_.size() && s_[i_] == '.') {
            i_++;
            if (i_ >= s_.size() || !isdigit(static_cast<unsigned char>(s_[i_])))
                return false;
            while (i_ < s_.size() && isdigit(static_cast<unsigned char>(s_[i_])))
                i_++;
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            i_++;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'))
                i_++;
            if (i_ >= s_.size() || !isdigit(static_cast<unsigned char>(s_[i_])))
                return false;
            while (i_ < s_.size() && isdigit(static_cast<unsigned char>(s_[i_])))
                i_++;
        }
        out = std::stod(s_.substr(b, i_ - b));
        return true;
    }
    bool value(Json &v, int depth) {
        if (depth > 64 || i_ >= s_.size())
            return false;
        char c = s_[i_];
        if (c == '{') {
            v.kind = Json::Obj;
            i_++;
            ws();
            if (i_ < s_.size() && s_[i_] == '}') {
                i_++;
                return true;
            }
            for (;;) {
                ws();
                std::string k;
                if (!string(k))
                    return false;
                ws();
                if (i_ >= s_.size() || s_[i_] != ':')
                    return false;
                i_++;
                ws();
                Json e;
                if (!value(e, depth + 1))
                    return false;
                v.obj.emplace_back(std::move(k), std::move(e));
                ws();
                if (i_ < s_.size() && s_[i_] == ',') {
                    i_++;
                    continue;
                }
                if (i_ < s_.size() && s_[i_] == '}') {
                    i_++;
                    return true;
                }
                return false;
            }
        }
        if (c == '[') {
            v.kind = Json::Arr;
            i_++;
            ws();
            if (i_ < s_.size() && s_[i_] == ']') {
                i_++;
                return true;
            }
            for (;;) {
                ws();
                Json e;
                if (!value(e, depth + 1))
                    return false;
                v.arr.push_back(std::move(e));
                ws();
                if (i_ < s_.size() && s_[i_] == ',') {
                    i_++;
                    continue;
                }
                if (i_ < s_.size() && s_[i_] == ']') {
                    i_++;
                    return true;
                }
                return false;
            }
        }
        if (c == '"') {
            v.kind = Json::Str;
            return string(v.str);
        }
        if (lit("true")) {
            v.kind = Json::Bool;
            v.b = true;
            return true;
        }
        if (lit("false")) {
            v.kind = Json::Bool;
            return true;
        }
        if (lit("null"))
            return true;
        v.kind = Json::Num;
        return number(v.num);
    }
};

TEST(TraceJsonParser, RejectsBrokenJson) { // the checker itself can fail
    for (const char *bad : {"", "{", "{\"a\":}", "[1,]", "{\"a\":1,}", "\"x", "[01]", "{a:1}",
                            "[1] [2]", "{\"a\":\"\x01\"}"}) {
        Json j;
        EXPECT_FALSE(Parser(bad).parse(j)) << bad;
    }
    Json j;
    EXPECT_TRUE(Parser("{\"a\":[1,-2.5e3,\"x\\\"y\",true,null,{}]}").parse(j));
    for (const char *bad : {"\"\xff\"", "\"a\xc3\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\""})
        EXPECT_FALSE(Parser(bad).parse(j)) << "not UTF-8";
    EXPECT_TRUE(Parser("\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82\"").parse(j));
}

// ---- One trace, read back. ----
struct Event {
    std::string ph, cat, name, fn, group;
    long tid = 0;
    int64_t ts = 0, dur = 0; // ns
    int stolen = 0;
    long node = -1, run = -1; // a graph node's turn
};

// One flow event ("s" or "f") of a graph's edge.
struct Flow {
    std::string ph, bp;
    double id = 0;
    long tid = 0;
    int64_t ts = 0;
    long from = -1, to = -1, run = -1; // "s" only
};

struct Trace {
    std::vector<Event> events; // complete events ("X")
    std::vector<Flow> flows;
    double edges = -1;
    std::map<long, std::string> thread_names;
    double written = -1, dropped = -1;
};

int64_t ns_of(const Json *v) { return v ? static_cast<int64_t>(std::llround(v->num * 1000)) : -1; }

// Parse the file at path into *t; a failed check fails the test.
void read_trace(const std::string &path, Trace *t) {
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << path;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    Json root;
    ASSERT_TRUE(Parser(text).parse(root)) << "not well-formed JSON:\n" << text.substr(0, 2000);
    ASSERT_EQ(root.kind, Json::Obj);
    const Json *evs = root.get("traceEvents");
    ASSERT_TRUE(evs && evs->kind == Json::Arr);
    const Json *other = root.get("otherData");
    ASSERT_TRUE(other && other->kind == Json::Obj);
    ASSERT_TRUE(other->get("events") && other->get("dropped_events"));
    t->written = other->get("events")->num;
    t->dropped = other->get("dropped_events")->num;
    if (const Json *edges = other->get("graph_edges"))
        t->edges = edges->num;
    for (const Json &e : evs->arr) {
        ASSERT_EQ(e.kind, Json::Obj);
        const Json *ph = e.get("ph"), *pid = e.get("pid"), *tid = e.get("tid");
        const Json *name = e.get("name");
        ASSERT_TRUE(ph && pid && tid && name);
        EXPECT_EQ(pid->num, static_cast<double>(getpid()));
        if (ph->str == "M") {
            if (name->str == "thread_name")
                t->thread_names[static_cast<long>(tid->num)] = e.get("args")->get("name")->str;
            continue;
        }
        if (ph->str == "s" || ph->str == "f") {
            Flow fl;
            fl.ph = ph->str;
            ASSERT_TRUE(e.get("id") && e.get("cat"));
            EXPECT_EQ(e.get("cat")->str, "graph");
            EXPECT_EQ(name->str, "edge");
            fl.id = e.get("id")->num;
            fl.tid = static_cast<long>(tid->num);
            fl.ts = ns_of(e.get("ts"));
            if (const Json *bp = e.get("bp"))
                fl.bp = bp->str;
            if (const Json *args = e.get("args")) {
                fl.from = static_cast<long>(args->get("from")->num);
                fl.to = static_cast<long>(args->get("to")->num);
                fl.run = static_cast<long>(args->get("run")->num);
            }
            t->flows.push_back(fl);
            continue;
        }
        ASSERT_EQ(ph->str, "X");
        Event ev;
        ev.ph = ph->str;
        ev.cat = e.get("cat")->str;
        ev.name = name->str;
        ev.tid = static_cast<long>(tid->num);
        ev.ts = ns_of(e.get("ts"));
        ev.dur = ns_of(e.get("dur"));
        const Json *args = e.get("args");
        ASSERT_TRUE(args);
        if (const Json *fn = args->get("fn"))
            ev.fn = fn->str;
        if (const Json *st = args->get("stolen"))
            ev.stolen = static_cast<int>(st->num);
        if (const Json *nd = args->get("node"))
            ev.node = static_cast<long>(nd->num);
        if (const Json *rn = args->get("run"))
            ev.run = static_cast<long>(rn->num);
        ev.group = args->get("group")->str;
        EXPECT_GE(ev.ts, 0);
        EXPECT_GE(ev.dur, 0);
        t->events.push_back(ev);
    }
    EXPECT_EQ(t->written, static_cast<double>(t->events.size()));
    for (const Event &e : t->events) // every thread that has events is named
        EXPECT_TRUE(t->thread_names.count(e.tid)) << e.tid;
}

// On each thread, two events either nest or do not overlap (helping nests tasks in waits).
void expect_nesting(const Trace &t) {
    std::map<long, std::vector<const Event *>> by_tid;
    for (const Event &e : t.events)
        by_tid[e.tid].push_back(&e);
    for (auto &kv : by_tid) {
        auto &v = kv.second;
        std::sort(v.begin(), v.end(), [](const Event *a, const Event *b) {
            return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
        });
        std::vector<const Event *> open; // enclosing events
        for (const Event *e : v) {
            while (!open.empty() && open.back()->ts + open.back()->dur <= e->ts)
                open.pop_back();
            if (!open.empty()) {
                ASSERT_LE(e->ts + e->dur, open.back()->ts + open.back()->dur)
                    << "partial overlap on tid " << kv.first << ": " << e->name << " at " << e->ts
                    << " in " << open.back()->name << " at " << open.back()->ts;
            }
            open.push_back(e);
        }
    }
}

std::string trace_path(const char *what) {
    return testing::TempDir() + "crew_trace_" + std::to_string(getpid()) + "_" + what + ".json";
}

// Distinct task functions, told apart by address ("fn" in the JSON).
std::atomic<int> ran[128];
template <int I> void task_fn(void *) { ran[I].fetch_add(1); }
template <int... I>
constexpr std::array<crew_fn, sizeof...(I)> make_fns(std::integer_sequence<int, I...>) {
    return {{&task_fn<I>...}};
}
const std::array<crew_fn, 128> fns = make_fns(std::make_integer_sequence<int, 128>{});

std::string hex(crew_fn f) {
    char b[32];
    snprintf(b, sizeof b, "%#lx", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(f)));
    return b;
}

} // namespace

// A function the dynamic linker can name (the test is linked with its symbols exported).
extern "C" void crew_trace_test_named_task(void *) {}

TEST(Trace, EveryTaskOnceAndEventsNest) {
    crew_pool *p = crewtest::make_pool(2);
    std::string path = trace_path("every");
    for (auto &r : ran)
        r = 0;
    ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
    // Task i (of 128 functions) runs i % 8 + 1 times: each function's count is known.
    // One group, queued at once (its memory: the vector, alive until the wait returns).
    std::vector<crew_task> tasks;
    for (int i = 0; i < 128; i++)
        for (int k = 0; k <= i % 8; k++) {
            crew_task task{};
            task.fn = fns[static_cast<size_t>(i)];
            tasks.push_back(task);
        }
    crew_task named_task{};
    named_task.fn = crew_trace_test_named_task;
    tasks.push_back(named_task);
    crew_handle g = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_enqueue_tasks(p, tasks.data(), tasks.size(), &g), CREW_OK);
    ASSERT_EQ(crew_wait(p, g), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    uint64_t written = 0, dropped = 1;
    ASSERT_EQ(crew_trace_stop_ex(p, &written, &dropped), CREW_OK);
    EXPECT_EQ(dropped, 0u);
    crew_destroy(p);

    Trace t;
    read_trace(path, &t);
    EXPECT_EQ(static_cast<double>(written), t.written);
    EXPECT_EQ(t.dropped, 0);
    std::map<std::string, int> count;
    int named = 0;
    for (const Event &e : t.events) {
        if (e.cat == "task" || e.cat == "help") {
            count[e.fn]++;
            EXPECT_NE(e.group, "0/0"); // all were in group g
            named += e.name == "crew_trace_test_named_task";
        }
    }
    for (int i = 0; i < 128; i++)
        EXPECT_EQ(count[hex(fns[static_cast<size_t>(i)])], i % 8 + 1) << "task " << i;
    EXPECT_EQ(named, 1); // named by dladdr
    EXPECT_EQ(count.size(), 129u);
    bool waited = false;
    for (const Event &e : t.events)
        waited |= e.cat == "wait";
    EXPECT_TRUE(waited); // crew_wait_all records its wait even when the pool is quiet
    expect_nesting(t);
    std::remove(path.c_str());
}

namespace {
// Two tasks that meet: each waits until both have started, so two threads run them at once.
struct Meet {
    crew_pool *p;
    std::atomic<int> arrived{0};
    std::atomic<int> finished{0};
};
void child(void *arg) {
    auto *m = static_cast<Meet *>(arg);
    m->arrived.fetch_add(1);
    while (m->arrived.load() < 2)
        sched_yield();
    m->finished.fetch_add(1);
}
// Fork-join: a task spawns the two and waits for them, running one itself meanwhile (so the
// other worker must run the other: with work stealing, it steals it).
void root(void *arg) {
    auto *m = static_cast<Meet *>(arg);
    crew_handle g = CREW_HANDLE_NONE;
    for (int i = 0; i < 2; i++)
        if (crew_submit(m->p, child, m, 0, &g) != CREW_OK)
            std::abort();
    if (crew_wait(m->p, g) != CREW_OK)
        std::abort();
    m->finished.fetch_add(1);
}
} // namespace

TEST(Trace, ForkJoinOnTwoThreadsShowsBoth) {
    crew_pool *p = crewtest::make_pool(2);
    std::string path = trace_path("forkjoin");
    // Per-worker queues have no stealing: a task's children stay on its worker's queue, which
    // the meeting children would deadlock on. There the two are submitted from outside.
    bool nested = crewtest::scheduler() != "per-worker";
    ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
    const int rounds = 3;
    for (int r = 0; r < rounds; r++) {
        Meet m;
        m.p = p;
        if (nested) {
            ASSERT_EQ(crew_submit(p, root, &m, 0, nullptr), CREW_OK);
        } else {
            for (int i = 0; i < 2; i++)
                ASSERT_EQ(crew_submit(p, child, &m, 0, nullptr), CREW_OK);
        }
        while (m.finished.load() < (nested ? 3 : 2)) // no crew_wait: this thread runs nothing
            sched_yield();
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
    }
    ASSERT_EQ(crew_trace_stop(p), CREW_OK);
    crew_destroy(p);

    Trace t;
    read_trace(path, &t);
    std::set<long> child_tids;
    int roots = 0, children = 0, stolen = 0, helped = 0, waits = 0;
    for (const Event &e : t.events) {
        if (e.fn == hex(root))
            roots++;
        if (e.fn == hex(child)) {
            children++;
            child_tids.insert(e.tid);
            stolen += e.stolen;
            helped += e.cat == "help";
        }
        waits += e.cat == "wait" && e.name == "crew_wait";
    }
    EXPECT_EQ(children, 2 * rounds);
    EXPECT_EQ(child_tids.size(), 2u); // both workers ran tasks
    if (nested) {
        EXPECT_EQ(roots, rounds);
        EXPECT_GE(helped, rounds); // the root's thread ran a child inside its crew_wait
        EXPECT_GE(waits, rounds);
        if (crewtest::scheduler() == "steal") {
            EXPECT_GE(stolen, rounds); // the other worker stole its child
        }
    }
    expect_nesting(t);
    std::remove(path.c_str());
}

TEST(Trace, FullRingDropsOldestAndCounts) {
    crew_pool *p = crewtest::make_pool(1);
    std::string path = trace_path("ring");
    const size_t cap = 16;
    ASSERT_EQ(crew_trace_start_ex(p, path.c_str(), cap), CREW_OK);
    for (auto &r : ran)
        r = 0;
    const int n = 100; // run one after another on the one worker, in order
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(crew_submit(p, fns[static_cast<size_t>(i)], nullptr, 0, nullptr), CREW_OK);
        while (ran[i].load() == 0)
            sched_yield();
    }
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    uint64_t written = 0, dropped = 0;
    ASSERT_EQ(crew_trace_stop_ex(p, &written, &dropped), CREW_OK);
    crew_destroy(p);

    Trace t;
    read_trace(path, &t);
    EXPECT_EQ(t.dropped, static_cast<double>(dropped));
    EXPECT_EQ(t.written, static_cast<double>(written));
    std::map<long, size_t> per_tid;
    std::set<std::string> seen;
    for (const Event &e : t.events) {
        per_tid[e.tid]++;
        if (!e.fn.empty())
            seen.insert(e.fn);
    }
    for (auto &kv : per_tid)
        EXPECT_LE(kv.second, cap);
    // The worker recorded 100 tasks (and perhaps sleeps) in 16 places: the oldest went.
    EXPECT_GE(dropped, static_cast<uint64_t>(n) - cap);
    EXPECT_TRUE(seen.count(hex(fns[n - 1]))) << "the newest task is kept";
    EXPECT_FALSE(seen.count(hex(fns[0]))) << "the oldest task is dropped";
    expect_nesting(t);
    std::remove(path.c_str());
}

TEST(Trace, StartStopErrors) {
    crew_pool *p = crewtest::make_pool(1);
    std::string path = trace_path("errors");
    EXPECT_EQ(crew_trace_start(nullptr, path.c_str()), CREW_EINVAL);
    EXPECT_EQ(crew_trace_start(p, nullptr), CREW_EINVAL);
    EXPECT_EQ(crew_trace_start(p, ""), CREW_EINVAL);
    EXPECT_EQ(crew_trace_start_ex(p, path.c_str(), size_t{1} << 30), CREW_EINVAL);
    EXPECT_EQ(crew_trace_start(p, "/nonexistent-dir-of-crew/trace.json"), CREW_EIO);
    EXPECT_NE(std::string(crew_last_error()).find("cannot open"), std::string::npos);
    EXPECT_EQ(crew_trace_stop(p), CREW_EINVAL); // not tracing
    EXPECT_EQ(crew_trace_stop(nullptr), CREW_EINVAL);

    ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
    EXPECT_EQ(crew_trace_start(p, path.c_str()), CREW_EINVAL); // one at a time
    EXPECT_NE(std::string(crew_last_error()).find("already"), std::string::npos);
    ASSERT_EQ(crew_submit(p, fns[0], nullptr, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    EXPECT_EQ(crew_trace_stop(p), CREW_OK); // the first trace is intact
    EXPECT_EQ(crew_trace_stop(p), CREW_EINVAL);
    Trace t;
    read_trace(path, &t);
    EXPECT_EQ(t.dropped, 0);

    // An empty trace is valid JSON too; and a trace may start again.
    ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
    EXPECT_EQ(crew_trace_stop(p), CREW_OK);
    Trace empty;
    read_trace(path, &empty);

    // Writing fails: EIO from stop, and the trace is over.
    if (access("/dev/full", W_OK) == 0) {
        ASSERT_EQ(crew_trace_start(p, "/dev/full"), CREW_OK);
        for (int i = 0; i < 50; i++)
            ASSERT_EQ(crew_submit(p, fns[1], nullptr, 0, nullptr), CREW_OK);
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        EXPECT_EQ(crew_trace_stop(p), CREW_EIO);
        EXPECT_EQ(crew_trace_stop(p), CREW_EINVAL);
    }
    crew_destroy(p);
    std::remove(path.c_str());
}

TEST(Trace, DestroyWhileTracingWritesTheTrace) {
    crew_pool *p = crewtest::make_pool(2);
    std::string path = trace_path("destroy");
    ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
    for (int i = 0; i < 20; i++)
        ASSERT_EQ(crew_submit(p, fns[2], nullptr, 0, nullptr), CREW_OK);
    crew_destroy(p); // drains: every task runs, and is recorded
    Trace t;
    read_trace(path, &t);
    int tasks = 0;
    for (const Event &e : t.events)
        tasks += e.fn == hex(fns[2]);
    EXPECT_EQ(tasks, 20);
    std::remove(path.c_str());
}

TEST(Trace, OnlyTasksSubmittedWhileTracingAndStopUnderLoad) {
    // Tasks submitted before the start are not recorded; a stop while workers run tasks and
    // submit more is safe (threads still writing their rings), and a second trace works.
    crew_pool *p = crewtest::make_pool(2);
    std::string path = trace_path("load");
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(crew_submit(p, fns[3], nullptr, 0, nullptr), CREW_OK);
    ASSERT_EQ(crew_wait_all(p), CREW_OK);
    for (int round = 0; round < 2; round++) {
        ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
        for (long i = 0; i < crewtest::scaled(2000); i++)
            ASSERT_EQ(crew_submit(p, fns[4], nullptr, 0, nullptr), CREW_OK);
        ASSERT_EQ(crew_trace_stop(p), CREW_OK); // tasks still queued and running
        ASSERT_EQ(crew_wait_all(p), CREW_OK);
        Trace t;
        read_trace(path, &t);
        for (const Event &e : t.events)
            EXPECT_NE(e.fn, hex(fns[3]));
        expect_nesting(t);
    }
    crew_destroy(p);
    std::remove(path.c_str());
}

namespace {
struct Hits {
    std::atomic<int> n[8];
};
Hits hits;
void graph_node(void *arg) { hits.n[reinterpret_cast<uintptr_t>(arg)].fetch_add(1); }
uint32_t choose_second(void *) { return 1; }

// The slice on tid that holds ts in its inside (a graph node's turn), or nullptr.
const Event *slice_at(const Trace &t, long tid, int64_t ts) {
    const Event *found = nullptr;
    for (const Event &e : t.events)
        if (e.cat == "graph" && e.tid == tid && e.ts <= ts && ts <= e.ts + e.dur)
            found = &e;
    return found;
}
} // namespace

TEST(Trace, GraphRunShowsNodeSlicesAndEdgeFlows) {
    // a -> b, a -> c, b -> d, c -> d, d -> k (a condition choosing its second successor, of
    // x and y): per run 6 turns (x never runs) and 6 edges taken. Two runs, the graph destroyed
    // before the trace is written (the names are the trace's own copies).
    crew_pool *p = crewtest::make_pool(2);
    std::string path = trace_path("graph");
    for (auto &h : hits.n)
        h = 0;
    crew_graph *g = nullptr;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    crew_node a, b, c, d, k, x, y;
    auto arg = [](uintptr_t i) { return reinterpret_cast<void *>(i); };
    ASSERT_EQ(crew_graph_add(g, graph_node, arg(0), 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, graph_node, arg(1), 0, &b), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, graph_node, arg(2), 0, &c), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, graph_node, arg(3), 0, &d), CREW_OK);
    ASSERT_EQ(crew_graph_add_condition(g, choose_second, nullptr, 0, &k), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, graph_node, arg(5), 0, &x), CREW_OK);
    ASSERT_EQ(crew_graph_add(g, graph_node, arg(6), 0, &y), CREW_OK);
    const std::pair<crew_node, crew_node> edges[] = {{a, b}, {a, c}, {b, d}, {c, d},
                                                     {d, k}, {k, x}, {k, y}};
    for (auto &e : edges)
        ASSERT_EQ(crew_graph_precede(g, e.first, e.second), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, a, "load"), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, b, "parse \"left\""), CREW_OK); // escaped in the JSON
    ASSERT_EQ(crew_graph_name_node(g, c, "temporary"), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, c, "right"), CREW_OK); // renamed
    ASSERT_EQ(crew_graph_name_node(g, d, "join"), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, k, "choose"), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, y, "x-or-y"), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, y, nullptr), CREW_OK); // back to "node 6"

    crew_handle before = CREW_HANDLE_NONE; // a run started before the trace: not recorded
    ASSERT_EQ(crew_graph_run(g, &before), CREW_OK);
    ASSERT_EQ(crew_wait(p, before), CREW_OK);
    ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run_n(g, 2, &h), CREW_OK); // two repetitions: two runs in the trace
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    uint64_t written = 0, dropped = 1;
    ASSERT_EQ(crew_trace_stop_ex(p, &written, &dropped), CREW_OK);
    EXPECT_EQ(dropped, 0u);
    crew_destroy(p);
    EXPECT_EQ(hits.n[0].load(), 4);
    EXPECT_EQ(hits.n[5].load(), 0);

    Trace t;
    read_trace(path, &t);
    EXPECT_EQ(static_cast<double>(written), t.written);
    expect_nesting(t);
    std::map<std::string, int> turns;
    std::set<long> runs;
    for (const Event &e : t.events)
        if (e.cat == "graph") {
            turns[e.name]++;
            runs.insert(e.run);
            EXPECT_GE(e.node, 0);
        }
    const std::map<std::string, int> want = {{"load", 3},  {"parse \"left\"", 3}, {"right", 3},
                                             {"join", 3},  {"choose", 3},         {"node 6", 3}};
    EXPECT_EQ(turns, want);
    EXPECT_EQ(runs.size(), 3u);

    // Flows: pairs by id, "s" inside the predecessor's slice, "f" (bound to its enclosing
    // slice) inside the successor's, of the same run, which starts after the other ends.
    std::map<double, std::pair<const Flow *, const Flow *>> pairs;
    for (const Flow &f : t.flows) {
        auto &pr = pairs[f.id];
        if (f.ph == "s") {
            EXPECT_EQ(pr.first, nullptr) << "two starts with id " << f.id;
            pr.first = &f;
        } else {
            EXPECT_EQ(f.bp, "e");
            EXPECT_EQ(pr.second, nullptr) << "two ends with id " << f.id;
            pr.second = &f;
        }
    }
    std::map<std::pair<long, long>, int> taken;
    for (auto &kv : pairs) {
        const Flow *s = kv.second.first, *f = kv.second.second;
        ASSERT_TRUE(s && f) << "flow " << kv.first << " is not a pair";
        const Event *from = slice_at(t, s->tid, s->ts), *to = slice_at(t, f->tid, f->ts);
        ASSERT_TRUE(from && to) << "flow " << kv.first << " binds to no node slice";
        EXPECT_EQ(from->node, s->from);
        EXPECT_EQ(to->node, s->to);
        EXPECT_EQ(from->run, s->run);
        EXPECT_EQ(to->run, s->run);
        EXPECT_LE(from->ts + from->dur, to->ts);
        taken[{s->from, s->to}]++;
    }
    std::map<std::pair<long, long>, int> want_edges;
    for (auto &e : edges)
        if (e.second != x)
            want_edges[{static_cast<long>(e.first), static_cast<long>(e.second)}] = 3;
    EXPECT_EQ(taken, want_edges);
    EXPECT_EQ(t.edges, 18);
    std::remove(path.c_str());
}

// JSON text is UTF-8 with quotes escaped: a pool name with a quote whose 6 bytes (all a pool
// keeps) end inside a character, and a node name that is not UTF-8, still give valid JSON.
TEST(Trace, QuotedAndCutNamesStayValidJson) {
    crew_config cfg;
    crew_config_init(&cfg);
    cfg.threads = 1;
    cfg.name = "q\"\xc3\xa9\xe2\x86\x92"; // q " é then the first 2 bytes of an arrow
    crew_pool *p = crewtest::make_pool(cfg);
    std::string path = trace_path("names");
    crew_graph *g = nullptr;
    ASSERT_EQ(crew_graph_create(p, &g), CREW_OK);
    crew_node a;
    ASSERT_EQ(crew_graph_add(g, graph_node, nullptr, 0, &a), CREW_OK);
    ASSERT_EQ(crew_graph_name_node(g, a, "bad \xff byte \xe2\x86"), CREW_OK);
    ASSERT_EQ(crew_trace_start(p, path.c_str()), CREW_OK);
    crew_handle h = CREW_HANDLE_NONE;
    ASSERT_EQ(crew_graph_run(g, &h), CREW_OK);
    ASSERT_EQ(crew_wait(p, h), CREW_OK);
    ASSERT_EQ(crew_trace_stop(p), CREW_OK);
    ASSERT_EQ(crew_graph_destroy(g), CREW_OK);
    crew_destroy(p);
    Trace t;
    read_trace(path, &t);
    int named = 0; // each byte not UTF-8 became one \ufffd (the parser reads it as '?')
    for (const Event &e : t.events)
        named += e.cat == "graph" && e.name == "bad ? byte ??";
    EXPECT_EQ(named, 1);
    std::remove(path.c_str());
}
