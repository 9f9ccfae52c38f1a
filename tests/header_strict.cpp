// header_strict.cpp -- instantiates every template of crew.hpp, so that tests/header_test.sh can
// compile the header under -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror with g++ and
// clang++ (warnings inside templates show only where they are instantiated). Compiled, never run.
#include <crew.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int use_every_part_of_crew_hpp();

int use_every_part_of_crew_hpp() {
    crew::options o;
    o.threads = 2;
    o.monitoring = true;
    crew::pool p(o);
    auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(1);

    auto a = p.submit([](int x, const std::string &s) { return x + int(s.size()); }, 1, "ab");
    auto b = p.submit(std::uint32_t(3), [] { return 2.5; });
    auto c = p.submit_blocking([](long x) { return x; }, 4L);
    auto d = p.submit_by(soon, [] {});
    p.post([] {});
    p.post(std::uint32_t(1), [] {});
    p.post_by(soon, [] {});
    p.on_error([](std::exception_ptr) {});

    crew::group g(p);
    g.run([] {});
    g.run([] {}, 2);
    g.run_by(soon, [] {});
    g.cancel();
    try {
        g.wait();
    } catch (const crew::error &e) {
        std::fprintf(stderr, "%s (%d)\n", e.what(), e.code());
    }

    crew::lane strand(p);
    crew::lane wide(p, 4u);
    strand.post([] {});
    auto e = strand.submit([](int x) { return x; }, 5);
    auto f = wide.submit([] {});
    crew::lane moved(std::move(wide));
    wide = std::move(moved);
    (void)e.get();
    f.get();

    std::vector<int> v(100);
    crew::parallel_for(p, 0, v.size(), [&](std::size_t i) { v[i] = int(i); });
    crew::parallel_for(p, 0, v.size(), [&](std::size_t lo, std::size_t hi) { v[lo] = int(hi); }, 8);
    long sum = crew::parallel_reduce(
        p, 0, v.size(), 0L,
        [&](std::size_t lo, std::size_t hi, long acc) {
            for (std::size_t i = lo; i < hi; i++)
                acc += v[i];
            return acc;
        },
        [](long x, long y) { return x + y; });
    std::vector<int> odd = crew::parallel_filter(p, v, [](int x) { return x % 2 == 1; });
    std::vector<double> dv(10, 1.0);
    std::vector<double> big = crew::parallel_filter(p, dv, [](double x) { return x > 0.5; });

    crew::graph gr(p);
    int turns = 0;
    auto g1 = gr.emplace([] {}, 1u);
    auto g2 = gr.emplace([&turns] { return ++turns < 3 ? 0 : 1; }); // a condition
    auto g3 = gr.emplace([&turns]() -> unsigned char { return turns > 5 ? 1 : 0; });
    g1.precede(g2);
    g3.succeed(g2);
    gr.run().wait();
    auto ex = gr.run_n(2);
    ex.on_done([] {});
    ex.cancel();
    crew_handle eh = ex.native();
    try {
        ex.wait();
    } catch (const crew::error &) {
    }
    crew_graph *rg = gr.native();

    p.wait();
    p.resize(3);
    p.pause();
    p.resume();
    p.monitoring(false);
    crew_stats s = p.stats();
    int findings = p.diagnose(stderr, 10, 10, 10);
    unsigned n = p.size();
    crew_pool *raw = p.native();
    d.get();
    int r = a.get() + int(b.get()) + int(c.get()) + int(sum) + int(odd.size()) + int(big.size()) +
            int(s.completed) + findings + int(n) + (raw != nullptr) + int(eh.slot != 0) +
            (rg != nullptr) + int(g1.id());
    p.join();
    p.close();
    crew::pool q;
    q.cancel();
    return r;
}
