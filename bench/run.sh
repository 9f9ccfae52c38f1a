#!/usr/bin/env bash
# The benchmark report (README's main command runs this through `make bench`).
# Runs each experiment, prints it as it goes, and writes
# bench/results/<date>-<host>/report.md with the raw CSV beside it.
#   bench/run.sh [--quick] [-h|--help]   --quick: fewer runs and smaller work, for a smoke test
#                                        (80-110 s on 2 cores)
# CREW_BENCH_BUILD names the build tree to run (default build/release; bench/instr.sh always
# uses build/release), CREW_BENCH_OUT the results folder (default bench/results/<date>-<host>).
set -euo pipefail
usage() {
    cat <<'EOF'
usage: bench/run.sh [--quick]
Runs every benchmark section (about 19 minutes on 2 cores) and writes the report,
bench/results/<date>-<host>/report.md, with the raw CSV files and the plots beside it.
  --quick      fewer runs and smaller work, for a smoke test (80-110 s on 2 cores)
  -h, --help   this text
Environment: CREW_BENCH_BUILD, the build tree to run (default build/release);
CREW_BENCH_OUT, the results folder (default bench/results/<date>-<host>).
See docs/benchmarks.md.
EOF
}
quick=0
for arg in "$@"; do
    case $arg in
    --quick) quick=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench/run.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."
export CREW_BENCH_BUILD=${CREW_BENCH_BUILD:-build/release}
bin=$CREW_BENCH_BUILD/bench
out=${CREW_BENCH_OUT:-"bench/results/$(date +%Y-%m-%d)-$(hostname -s 2>/dev/null || echo host)"}
mkdir -p "$out"
report="$out/report.md"

if [ $quick = 1 ]; then
    repeats=3 work=5000 empty_n=200000 peers_args="-r 3 -n 100000 -R 2000 -f 22 -m 50000 -D 5"
    prim_args="-r 3 -s 10,1000,100000" http_runs=3 http_secs=1
    http_eps="/static,/slow?ms=5"
    sizing_args="-q" timer_args="-q" timer_secs=0.3 io_rounds=""
    users_args="-r 5 -D 5 -J 400" users_jobs=400
    graph_scale=0.02 graph_reps=2 graph_size="a fiftieth of the full size"
else
    repeats=9 work=20000 empty_n=1000000 peers_args="-r 5"
    prim_args="-r 5 -s 10,1000,100000,10000000,100000000" http_runs=3 http_secs=2
    http_eps="/static,/cpu?n=20000,/slow?ms=5"
    # The sizing study, HTTP and the I/O time-outs at 3 rounds (their defaults are 5): the same
    # answers in three fifths of the time (docs/benchmarks.md, "How long the report takes").
    sizing_args="-r 3" timer_args="-r 3" timer_secs=10 io_rounds="-r 3"
    users_args="-r 9" users_jobs=2000
    graph_scale=1 graph_reps=3 graph_size="full size: 10^6 in the chain, 2^20 - 1 in the tree, 1024 x 1024, 10^5 x 4 edges"
fi
cores=$(nproc)
# The peers section's providers: bench_peers' defaults and crew-join (fib and skynet through
# crew_join), which the goals table below compares with oneTBB and with crew-coro. Skynet's
# other shape, crew-tasks-wait, runs in the section after it (skynet only: cheaper than every
# workload here).
peers_list=crew,crew-join,crew-coro,openmp,onetbb,boost.asio,glib,textbook,thread/task

{
    echo "# crew benchmark report"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- host: $(hostname -s 2>/dev/null || echo unknown), $cores online cores, $(uname -sr)"
    echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- mode: $([ $quick = 1 ] && echo quick || echo full)"
    echo
    echo "Figures are medians of several runs with (min..max); what is compared runs side by side,"
    echo "run by run, in one process."
    echo "Every ratio beside two medians is their ratio, so it reads as they do; a (min..max) beside"
    echo "a ratio is the range of the run-by-run ratios. Each section's plot sits under it."
    echo
    echo "## Summary: crew against the best peer on each headline workload"
    echo
    echo "<!-- summary -->"
    echo
} >"$report"

nstep=0
# step NAME: a progress line, and the start of a section whose time the report's last table gives.
step_names=() step_starts=()
step() {
    nstep=$((nstep + 1))
    printf '[bench] %d. %s (at %ds)\n' "$nstep" "$*" "$SECONDS" >&2
    step_names+=("$*") step_starts+=("$SECONDS")
}
# plots_here PREFIX...: the section just written gets the plots whose file names start with a
# PREFIX (bench/plot.sh draws them all at the end, and they are put in at these markers).
plots_here() { echo "<!-- plots $* -->" >>"$report"; }

step "pool vs thread-per-request, Jendersie et al. Fig. 7 ($repeats runs)"
{
    echo "## Pool vs thread-per-request (Jendersie et al., Fig. 7)"
    echo
    echo "Each call runs N tasks of work_large ($work exp() calls each): the baseline creates N-1"
    echo "threads and runs one task itself (Jendersie et al., Fig. 5); crew enqueues N tasks into a"
    echo "pool of N workers created beforehand and waits with the caller helping (Fig. 6)."
    echo
    echo '```'
} >>"$report"
"$bin/fig7_pool_vs_tpr" -t 4,8,16,32 -r "$repeats" -w "$work" -c "$out/fig7.csv" | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here fig7

step "waiting vs completion time, Jendersie et al. Fig. 8"
{
    echo "## Average waiting vs completion time, 10,000 tasks (Jendersie et al., Fig. 8)"
    echo
    echo "From crew's monitoring: per task, time in the queue and submission-to-finish; per worker,"
    echo "time without work and time busy (wall time, so it includes preemption when threads"
    echo "outnumber cores)."
    echo
    echo '```'
} >>"$report"
"$bin/fig8_wait_vs_complete" -t 4,8,16,32 -r "$repeats" | tee -a "$report"
printf '```\n\n' >>"$report"

step "empty-task throughput, one producer ($repeats runs)"
{
    echo "## Empty-task throughput"
    echo
    echo "$empty_n empty tasks from one producer thread into a pool of $cores workers, then"
    echo "crew_wait_all (the caller helps)."
    echo
    echo '```'
} >>"$report"
{
    "$bin/empty_tasks" -t "$cores" -n "$empty_n" -r "$repeats"
    "$bin/empty_tasks" -t "$cores" -n "$empty_n" -r "$repeats" -m array
} | tee "$out/empty_tasks.txt" | tee -a "$report"
printf '```\n\n' >>"$report"
{
    echo "Why the rate swings (docs/benchmarks.md): the same runs instrumented from Linux's"
    echo "per-thread accounts, slowest first; a backlog (a queue in the thousands) is the fast"
    echo "regime."
    echo
    echo '```'
} >>"$report"
"$bin/swing" -t "$cores" -n "$empty_n" -r "$repeats" | sed -n '1,3p;/slowest first/,$p' |
    tee -a "$report"
printf '```\n\n' >>"$report"

step "crew against peer pools (empty, fork-join, fib, matmul)"
{
    echo "## crew against the pools people use today"
    echo
    echo "Same workloads for every pool, workers = cores, runs interleaved round-robin. Peers that"
    echo "cannot wait inside a task sit out fib; thread-per-task runs a tenth of the tasks."
    echo "crew-join is crew with fib and skynet through crew_join instead of a group per call;"
    echo "crew-coro runs fib with C++20 coroutines."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_peers" $peers_args -p "$peers_list" -c "$out/peers.csv" |
    tee "$out/peers.txt" | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here peers

step "skynet as users write it, and an oversubscribed bounded queue"
{
    echo "## Skynet as users write it, and an oversubscribed bounded queue"
    echo
    echo "Skynet with each inner task's ten children queued as a user writes it after reading"
    echo "crew.h: crew_enqueue_tasks into a fresh group, then crew_wait (crew), or one"
    echo "crew_enqueue_tasks_wait call (crew-tasks-wait), beside oneTBB's task_group. Then the"
    echo "shape of zstd's compression on a pool with a bounded queue: one producer offers"
    echo "$users_jobs jobs of ~0.5 ms of CPU work to four threads per core through a queue of one"
    echo "place, each with a try-add and, when it is full, a blocking add: crew (queue_capacity 1,"
    echo "CREW_FULL_BLOCK) against the textbook pool with a bounded FIFO. Runs interleaved; the"
    echo "goals table takes its skynet and bounded-queue ratios from here."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_peers" $users_args -w skynet,bounded -p crew,crew-tasks-wait,onetbb,textbook \
    -c "$out/users.csv" | tee "$out/users.txt" | tee -a "$report"
printf '```\n\n' >>"$report"

step "scheduling strategies side by side (Jendersie et al. Fig. 10, Palaniappan et al. Fig. 5)"
{
    echo "## Scheduling strategies (Jendersie et al., Fig. 10; Palaniappan et al., Fig. 5)"
    echo
    echo "crew's four strategies (and the shared queue under a spinlock) on the same workloads,"
    echo "workers = cores, beside the two fastest peers. steal: Chase-Lev deques (default); shared:"
    echo "one priority queue under a mutex or a spinlock; lockfree: a MultiQueue; per-worker: a"
    echo "queue per worker, fed round-robin, no stealing. Jendersie et al. compare a mutex with a"
    echo "lock-free queue; Palaniappan et al. report stealing 12-18% ahead of a common queue on"
    echo "matrix multiplications."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_peers" $peers_args -w matmul,empty,forkjoin,fib \
    -p crew-steal,crew-shared,crew-shared-spin,crew-lockfree,crew-per-worker,openmp,onetbb \
    -c "$out/strategies.csv" | tee -a "$report"
printf '```\n\n' >>"$report"
if [ $quick = 0 ]; then
    {
        echo "Palaniappan et al. (Fig. 5) sweep the number of 10x10 multiplications, 100k..500k"
        echo "(500k above):"
        echo "a common queue (shared), a queue per thread (per-worker) and stealing (steal)."
        echo
        echo '```'
    } >>"$report"
    for m in 100000 200000 300000 400000; do
        "$bin/bench_peers" -r 5 -w matmul -m "$m" -p crew-steal,crew-shared,crew-per-worker \
            -c "$out/matmul_sweep_$m.csv" | tee -a "$report"
    done
    printf '```\n\n' >>"$report"
fi
plots_here strategies

step "instructions per empty task (callgrind)"
{
    echo "## Instructions per empty task (callgrind, one worker, start-up subtracted)"
    echo
    echo "Counted, not timed, so repeatable on a noisy machine; idle polling counts as it runs."
    echo
    echo '```'
} >>"$report"
if [ $quick = 1 ]; then
    bench/instr.sh --quick crew crew-shared openmp onetbb textbook | tee "$out/instr.txt"
else
    bench/instr.sh | tee "$out/instr.txt"
fi
cat "$out/instr.txt" >>"$report"
printf '```\n\n' >>"$report"

step "parallel primitives: sum and filter over n doubles"
{
    echo "## Parallel primitives: sum and stable filter (BOLSTER's, Jendersie et al.)"
    echo
    echo "crew_parallel_reduce / crew_parallel_filter against a sequential loop, OpenMP parallel for,"
    echo "oneTBB parallel_reduce and BOLSTER's thread-per-request (T threads created per call)."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_primitives" $prim_args | tee -a "$report"
printf '```\n\n' >>"$report"

step "task graphs: crew_graph against the same graph on groups and oneTBB's flow graph"
{
    echo "## Task graphs: crew_graph against groups by hand and oneTBB's flow graph"
    echo
    echo "Taskflow's published shapes of empty nodes ($graph_size): a linear chain, a binary tree,"
    echo "a wavefront (each cell after its left and upper neighbour) and a random DAG of 4 edges a"
    echo "node, on 1 and $cores threads. crew: crew_graph_* (crew's workers run the nodes, the"
    echo "caller waits asleep); groups: the same graph written by hand on crew's groups (a counter"
    echo "per node, reset at each run; a node's task submits each successor whose counter it takes"
    echo "to zero into the run's group); onetbb: continue_node, make_edge, try_put and wait_for_all"
    echo "in a task_arena of as many threads (the caller one of them). Build: ns per node added and"
    echo "per edge added (CPU time of the building thread); run1, run2: ns per node of the first"
    echo "and a second run (crew's first run also builds its successor lists); B/node, B/edge:"
    echo "resident memory once the nodes are added, and what the edges and the first run add,"
    echo "counted in a child process; 2at1: two runs of one graph started at once from two threads"
    echo "over the same two one after the other (a flow graph's runs would merge: onetbb has none)."
    echo "Medians of $graph_reps runs, interleaved across the libraries."
    echo
    echo '```'
} >>"$report"
"$bin/bench_graph" --scale "$graph_scale" --threads "1,$cores" --reps "$graph_reps" \
    --csv "$out/graph.csv" | tee "$out/graph.txt" | tee -a "$report"
printf '```\n\n' >>"$report"
{
    echo "Instructions per node of a run of a built graph, counted by callgrind (bench/instr.sh"
    echo "--graph: a chain on one thread, three runs less one, over twice its nodes):"
    echo
    echo '```'
} >>"$report"
if [ $quick = 1 ]; then
    bench/instr.sh --graph --quick | tee "$out/graph_instr.txt"
else
    bench/instr.sh --graph | tee "$out/graph_instr.txt"
fi
cat "$out/graph_instr.txt" >>"$report"
printf '```\n\n' >>"$report"
# The goals, each from this run's figures (graph.csv, graph_instr.txt): run time against
# oneTBB at the most threads, build time, memory, overlapping runs, instructions per node.
awk -v cores="$cores" '
    function med(k,   n, i, j, x, a) { # as bench_graph takes it: the middle, or the mean of two
        n = cnt[k]; if (!n) return -1
        for (i = 1; i <= n; i++) a[i] = val[k, i]
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
            if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function row(what, fig, goal, met) { printf "| %s | %s | %s | %s |\n", what, fig, goal, met }
    FILENAME ~ /graph\.csv$/ && FNR > 1 {
        split($0, f, ",")
        if (!(f[1] in seen)) { seen[f[1]]; order[++ns] = f[1] }
        nodes[f[1]] = f[4]; edges[f[1]] = f[5]
        if (f[6] < 0) { bn[f[1], f[2]] = f[7]; be[f[1], f[2]] = f[8]; next }
        if (f[3] + 0 > top) top = f[3] + 0
        k = f[1] SUBSEP f[2] SUBSEP f[3]
        cnt[k "run2"]++; val[k "run2", cnt[k "run2"]] = f[10]
        cnt[k "ov"]++; val[k "ov", cnt[k "ov"]] = f[11]
        if (f[2] == "crew") {
            cnt[f[1] "bn"]++; val[f[1] "bn", cnt[f[1] "bn"]] = f[7]
            cnt[f[1] "be"]++; val[f[1] "be", cnt[f[1] "be"]] = f[8]
        }
        next
    }
    FILENAME ~ /graph_instr\.txt$/ && $NF ~ /^[0-9]+$/ { ins[$1] = $NF; next }
    END {
        print "Task graph goals, each from this run (ratios: medians, crew over oneTBB; below 1"
        print "crew is faster):"
        print ""
        print "| goal | this run | goal | met |"
        print "|---|---|---|---|"
        for (s = 1; s <= ns; s++) {
            sh = order[s]
            c = med(sh SUBSEP "crew" SUBSEP top "run2"); t = med(sh SUBSEP "onetbb" SUBSEP top "run2")
            what = sh ", second run at " top " threads, crew / oneTBB time"
            if (c <= 0 || t <= 0) { row(what, "n/a (" (c <= 0 ? "crew" : "onetbb") " did not run)", "<= 0.5x", "n/a"); continue }
            r = sprintf("%.2f", c / t)
            row(what, sprintf("%sx (crew %.1f ns/node, onetbb %.1f ns/node)", r, c, t), "<= 0.5x",
                r + 0 <= 0.5 ? "met" : "not met")
        }
        # Build and memory: the worst shape.
        wn = -1; we = -1; wm = -1
        for (s = 1; s <= ns; s++) {
            sh = order[s]
            x = med(sh "bn"); if (x > wn) { wn = x; wns = sh }
            x = med(sh "be"); if (edges[sh] > 0 && x > we) { we = x; wes = sh }
            if ((sh, "crew") in bn) {
                used = bn[sh, "crew"] * nodes[sh] + be[sh, "crew"] * edges[sh]
                x = used / (64 * nodes[sh] + 8 * edges[sh])
                if (x > wm) { wm = x; wms = sh }
            }
        }
        if (wn < 0) row("crew build, ns per node (worst shape)", "n/a (not run)", "<= 60", "n/a")
        else row("crew build, ns per node (worst shape)", sprintf("%.1f (%s)", wn, wns), "<= 60",
            sprintf("%.1f", wn) + 0 <= 60 ? "met" : "not met")
        if (we < 0) row("crew build, ns per edge (worst shape)", "n/a (not run)", "<= 15", "n/a")
        else row("crew build, ns per edge (worst shape)", sprintf("%.1f (%s)", we, wes), "<= 15",
            sprintf("%.1f", we) + 0 <= 15 ? "met" : "not met")
        if (wm < 0) row("crew memory, share of 64 B/node + 8 B/edge (worst shape)", "n/a (not counted)", "<= 1", "n/a")
        else row("crew memory, share of 64 B/node + 8 B/edge (worst shape)",
            sprintf("%.2f (%s: %s B/node, %s B/edge)", wm, wms, bn[wms, "crew"], be[wms, "crew"]),
            "<= 1", sprintf("%.2f", wm) + 0 <= 1 ? "met" : "not met")
        wo = -1
        for (s = 1; s <= ns; s++) {
            x = med(order[s] SUBSEP "crew" SUBSEP top "ov"); if (x > wo) { wo = x; wos = order[s] }
        }
        if (wo < 0) row("two runs at once / one after the other, " top " threads (worst shape)", "n/a (not run)", "<= 1.1", "n/a")
        else row("two runs at once / one after the other, " top " threads (worst shape)",
            sprintf("%.2f (%s)", wo, wos), "<= 1.1", sprintf("%.2f", wo) + 0 <= 1.1 ? "met" : "not met")
        if (!("crew" in ins)) row("instructions per node, chain, one thread", "n/a (not counted)", "<= 65", "n/a")
        else row("instructions per node, chain, one thread", ins["crew"] " (groups " \
            (("groups" in ins) ? ins["groups"] : "n/a") ", onetbb " (("onetbb" in ins) ? ins["onetbb"] : "n/a") ")",
            "<= 65", ins["crew"] + 0 <= 65 ? "met" : "not met")
    }' "$out/graph.csv" "$out/graph_instr.txt" | tee -a "$report"
echo >>"$report"
plots_here graph

step "the HTTP example under wrk (a server on a pool, as in Xu & Bode and Palaniappan et al.)"
{
    echo "## HTTP server on a crew pool vs thread-per-connection (wrk, 64 connections, 127.0.0.1)"
    echo
    echo "The four servers start once and stay up; each round loads every endpoint on each server"
    echo "for $http_secs s, the order rotating, so x thread compares runs made side by side. pool"
    echo "serves /slow (a request that sleeps) on CREW_TASK_BLOCKING tasks, as README advises;"
    echo "pool -B and pool x16 -B let it sleep on the workers, to show the difference."
    [ $quick = 1 ] &&
        echo "Quick mode: $http_runs runs per cell, $http_secs s each, $http_eps only."
    echo
    echo '```'
} >>"$report"
bench/http.sh -r "$http_runs" -e "$http_eps" -c "$out/http.csv" "$http_secs" 64 | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here http

step "sizing study of Xu & Bode: static sizes, RAIT, AIT vs BALANCE controllers"
{
    echo "## Pool size, idle time and automatic sizing (Xu & Bode, Figs. 5-7, 10, 11)"
    echo
    echo "Tasks compute 100 us and sleep free_workload x 10 us; a producer keeps a backlog of 20 ms"
    echo "of computation for all the cores outstanding and refills it when about a quarter has run."
    echo "AIT is Xu & Bode's dynamicThreadPool as written; BALANCE is crew's controller"
    echo "(docs/autosize.md). Runs go in rounds: the static sweep runs every size and workload once"
    echo "per round; the dynamic part runs AIT, a static reference and BALANCE side by side per"
    echo "round, so the (min..max) beside /ref and Fig. 11's ratios are per-round ratios. Fig. 10's"
    echo "size over time is one run's trace (the median run's), not a median."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_sizing" $sizing_args -c "$out/sizing.csv" | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here sizing_

step "blocking file I/O mixed with short tasks, and scalability (Li & Hu, Figs. 1-3)"
# The goroutine peer is built here from bench/go/blocking_mix when Go is installed; nothing is
# downloaded (no dependencies, GOPROXY=off, the local toolchain only).
mix_args="" go_note="" go_bin="$PWD/$bin/blocking_mix_go"
[ $quick = 1 ] && mix_args="-q"
go_cmd=$(command -v go || true)
[ -z "$go_cmd" ] && [ -x /usr/local/go/bin/go ] && go_cmd=/usr/local/go/bin/go
if [ -z "$go_cmd" ]; then
    go_note="Go is not installed (no go on PATH or in /usr/local/go/bin): goroutines skipped."
elif (cd bench/go/blocking_mix && GOTOOLCHAIN=local GOPROXY=off GOFLAGS= \
    "$go_cmd" build -o "$go_bin" .) >&2; then
    mix_args="$mix_args -g $go_bin"
else
    go_note="go build of bench/go/blocking_mix failed: goroutines skipped."
fi
{
    echo
    echo "## Blocking file I/O mixed with short tasks (Li & Hu, JEThread, Figs. 1-3)"
    echo
    echo "Blocking tasks read 4 KiB with O_DIRECT from a temp file (a trip to the device), compute"
    echo "tasks run a 5 us loop, empty tasks nothing; 25/50/75% of the tasks block (a fixed shuffle)."
    echo "thread-per-task: pthread_create per task, join all. crew: blocking tasks submitted with"
    echo "CREW_TASK_BLOCKING (they run on crew's extra blocking threads, at most 64), the rest"
    echo "plainly, then crew_wait_all; crew-noblock: the same pool, every task plain. per-core: T"
    echo "threads, task i on thread i mod T. goroutines: a go statement per task, GOMAXPROCS = T."
    echo "Runs interleave round-robin; x crew is the other's median over crew's (> 1: crew ahead),"
    echo "with the range of the per-run ratios. Fig. 3 runs 10,000 tasks, half blocking, half"
    echo "compute, with T = 1..16 threads."
    [ -n "$go_note" ] && { echo; echo "$go_note"; }
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/blocking_mix" $mix_args -c "$out/blocking_mix.csv" | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here blocking_

step "I/O-bound tasks with time-outs, crew vs Boost.Asio (Jue)"
{
    echo
    echo "## I/O-bound tasks with time-outs against local servers with injected latency (Jue)"
    echo
    echo "Each task connects to a TCP server the benchmark runs on 127.0.0.1 (epoll threads, several"
    echo "ports), sends a request and waits for the reply, which comes after an injected delay"
    echo "(seeded: mostly 1-20 ms, a tail up to 120 ms); a reply later than the 40 ms time-out is a"
    echo "failure. Speedup is over the same task list run in one thread, in the same round."
    echo "crew-workers submits ordinary tasks to N workers, crew-blocking submits them with"
    echo "CREW_TASK_BLOCKING to a pool with max_blocking = N, boost.asio posts to thread_pool(N)."
    echo "The last line gives how late the server's replies left: that is what a loaded machine"
    echo "adds to the injected delays."
    echo
    echo '```'
} >>"$report"
io_args=$io_rounds
[ $quick = 1 ] && io_args="-q"
# shellcheck disable=SC2086
"$bin/io_timeouts" $io_args -c "$out/io_timeouts.csv" | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here io_timeouts

step "slot search for group handles vs crew's groups (Jendersie et al., Fig. 9)"
{
    echo
    echo "## Finding a slot for a group handle (Jendersie et al., Fig. 9)"
    echo
    echo "Jendersie et al. search their slot array for a free slot linearly from the start, or in"
    echo "steps of 8 slots so that groups open at once sit on different cache lines (they measured"
    echo "0.1% between them). crew does not search: a free slot comes off a Treiber stack, or a"
    echo "worker's own cache. T threads (more than the cores, as in the paper) each keep G groups"
    echo "open and cycle them; one op is one group's whole life (claim, count K tasks in, count"
    echo "down, wait, release)."
    echo
    echo '```'
} >>"$report"
fig9_args=""
[ $quick = 1 ] && fig9_args="-q"
# shellcheck disable=SC2086
"$bin/fig9_slots" $fig9_args -c "$out/fig9.csv" | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here fig9

step "timers: lateness against peers, and a million pending timers"
{
    echo
    echo "## Time: delayed tasks and periodic timers"
    echo
    echo "Lateness is a firing's start minus its due time: a task delayed by 1 ms and by 10 ms"
    echo "(armed one at a time, many samples) and a 1 ms fixed-rate periodic timer (firing k due"
    echo "at first + k ms) running $timer_secs s, each on an idle pool and on one busy with 1 ms"
    echo "CPU tasks ($cores threads running them without a break). Peers: clock_nanosleep with"
    echo "TIMER_ABSTIME in a thread of its own (the floor on this machine), Boost.Asio's"
    echo "steady_timer on its thread_pool, a timerfd in an epoll loop; the thread peers run the"
    echo "busy load on $cores plain threads beside them. A periodic slot missed and skipped"
    echo "counts as late until the run that came after it; drift: how much later than the first"
    echo "slot the last one was served; runs/due: runs made and slots due (fewer runs: periods"
    echo "skipped, or a peer fallen behind). Then pending timers armed 10-20 minutes ahead: memory"
    echo "per timer, time to arm and to cancel one, CPU of the whole process while they wait."
    echo "The distribution of lateness per peer is plotted below the table."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_timers" $timer_args -c "$out/timers.csv" | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here timers

step "task timelines (crew_trace_start/stop)"
{
    echo
    echo "## Task timelines"
    echo
    echo "Two short runs recorded with crew_trace_start/stop on $cores workers (bench/timeline.c): a"
    echo "fork-join tree of depth 9 (each inner task spawns two and waits, leaves ~30 us of"
    echo "arithmetic) and 2000 empty tasks submitted one by one from outside, then crew_wait_all."
    echo "The traces (timeline_*.json) open in Perfetto (docs/trace.md); the pictures below are"
    echo "drawn as flame charts (each level of nesting a band below the one that encloses it)."
    echo
    echo '```'
} >>"$report"
"$bin/timeline" -t "$cores" "$out" | tee -a "$report"
printf '```\n\n' >>"$report"
plots_here timeline_

step "plots"
# Each plot goes under its section's marker; the Plots section at the end lists them all (and
# shows any no section claimed, or the note that gnuplot is missing).
bench/plot.sh "$out" >"$out/plots.md"
awk -v list="$out/plots.md" '
    function file(l) { sub(/.*\]\(/, "", l); sub(/\)$/, "", l); return l }
    BEGIN { while ((getline l <list) > 0) if (l ~ /^!\[.*\]\(.*\)$/) img[++n] = l; else note[++nn] = l }
    /^<!-- plots .* -->$/ {
        k = split($0, w, " "); any = 0
        for (j = 3; j < k; j++)
            for (i = 1; i <= n; i++)
                if (!placed[i] && index(file(img[i]), w[j]) == 1) { print img[i]; placed[i] = any = 1 }
        if (any) print ""
        next
    }
    { print }
    END {
        print ""; print "## Plots"; print ""
        if (n) { print "Each plot sits under the section it belongs to:"; print "" }
        for (i = 1; i <= n; i++) {
            l = img[i]; sub(/^!/, "", l)
            print "- " l (placed[i] ? "" : " (below: no section claimed it)")
        }
        for (i = 1; i <= n; i++) if (!placed[i]) { print ""; print img[i] }
        for (i = 1; i <= nn; i++) print note[i]
    }' "$report" >"$report.new"
mv "$report.new" "$report"
rm -f "$out/plots.md"

# The summary (bench/summary.sh, from the sections above) goes where the header left its
# marker, the goals table under it.
bench/summary.sh "$report" >"$out/summary.md" ||
    echo "_(no workload ran both crew and a peer: no summary)_" >"$out/summary.md"
if grep '^| ' "$out/summary.md" | tail -n +3 | grep -qvE '\| (crew|even) \|$'; then
    {
        echo
        echo "Where crew is behind, the sections below give the figures per strategy;"
        echo "docs/benchmarks.md (\"Where crew is behind, and why\") says why and what would close"
        echo "the gap."
    } >>"$out/summary.md"
fi
# The goals table (bench/goals.sh), each figure from this run's files: peers.csv and peers.txt,
# users.csv and users.txt, empty_tasks.txt, instr.txt, timers.csv.
{ echo; bench/goals.sh "$out"; } >>"$out/summary.md"
sed -i -e "/<!-- summary -->/r $out/summary.md" -e "/<!-- summary -->/d" "$report"
bench/check_ratios.sh -q "$report" >&2 ||
    echo "[bench] warning: a ratio above disagrees with its medians (bench/check_ratios.sh)" >&2
# How long each section took (wall time; the plots and tables at the end count as "plots").
step_starts+=("$SECONDS")
{
    echo
    echo "## Section times"
    echo
    echo "| section | seconds |"
    echo "|---|---|"
    for i in "${!step_names[@]}"; do
        echo "| ${step_names[$i]} | $((step_starts[i + 1] - step_starts[i])) |"
    done
    echo "| all | $SECONDS |"
} >>"$report"
step "report written to $report"
