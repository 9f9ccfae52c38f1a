#!/usr/bin/env bash
# The benchmark report (README's main command runs this through `make bench`).
# Runs each experiment, prints it as it goes, and writes
# bench/results/<date>-<host>/report.md with the raw CSV beside it.
#   bench/run.sh [--quick]     --quick: fewer runs and smaller work, for a smoke test (< 90 s)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/bench
quick=0
[ "${1:-}" = "--quick" ] && quick=1
out="bench/results/$(date +%Y-%m-%d)-$(hostname -s 2>/dev/null || echo host)"
mkdir -p "$out"
report="$out/report.md"

if [ $quick = 1 ]; then
    repeats=3 work=5000 empty_n=200000 peers_args="-r 3 -n 100000 -R 2000 -f 22 -m 50000"
    prim_args="-r 3 -s 10,1000,100000" http_secs=1 sizing_args="-q"
else
    repeats=9 work=20000 empty_n=1000000 peers_args="-r 5"
    prim_args="-r 5 -s 10,1000,100000,10000000,100000000" http_secs=5 sizing_args=""
fi
cores=$(nproc)

{
    echo "# crew benchmark report"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- host: $(hostname -s 2>/dev/null || echo unknown), $cores online cores, $(uname -sr)"
    echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- mode: $([ $quick = 1 ] && echo quick || echo full)"
    echo
    echo "Figures are medians of several runs with (min..max); ratios are measured side by side,"
    echo "run by run, in one process."
    echo
    echo "## Summary: crew against the best peer on each headline workload"
    echo
    echo "<!-- summary -->"
    echo
} >"$report"

nstep=0
step() { nstep=$((nstep + 1)); printf '[bench] %d. %s\n' "$nstep" "$*" >&2; }

step "seed 000 Fig. 7: pool vs thread-per-request ($repeats runs)"
{
    echo "## Seed 000 Fig. 7: pool vs thread-per-request"
    echo
    echo "Each call runs N tasks of work_large ($work exp() calls each): the baseline creates N-1"
    echo "threads and runs one task itself (seed 000 Fig. 5); crew enqueues N tasks into a pool of N"
    echo "workers created beforehand and waits with the caller helping (Fig. 6)."
    echo
    echo '```'
} >>"$report"
"$bin/fig7_pool_vs_tpr" -t 4,8,16,32 -r "$repeats" -w "$work" -c "$out/fig7.csv" | tee -a "$report"
printf '```\n\n' >>"$report"

step "seed 000 Fig. 8: waiting vs completion time"
{
    echo "## Seed 000 Fig. 8: average waiting vs completion time, 10,000 tasks"
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
"$bin/empty_tasks" -t "$cores" -n "$empty_n" -r "$repeats" | tee -a "$report"
"$bin/empty_tasks" -t "$cores" -n "$empty_n" -r "$repeats" -m array | tee -a "$report"
printf '```\n\n' >>"$report"

step "crew against peer pools (empty, fork-join, fib, matmul)"
{
    echo "## crew against the pools people use today"
    echo
    echo "Same workloads for every pool, workers = cores, runs interleaved round-robin. Peers that"
    echo "cannot wait inside a task sit out fib; thread-per-task runs a tenth of the tasks."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_peers" $peers_args -c "$out/peers.csv" -S "$out/summary.md" | tee -a "$report"
printf '```\n\n' >>"$report"

step "scheduling strategies side by side (seed 000 Fig. 10, seed 004 Fig. 5)"
{
    echo "## Scheduling strategies: seed 000 Fig. 10 (mutex vs lock-free queue), seed 004 Fig. 5"
    echo
    echo "crew's four strategies (and the shared queue under a spinlock) on the same workloads,"
    echo "workers = cores, beside the two fastest peers. steal: Chase-Lev deques (default); shared:"
    echo "one priority queue under a mutex or a spinlock; lockfree: a MultiQueue; per-worker: a"
    echo "queue per worker, fed round-robin, no stealing. Seed 004 reports stealing 12-18% ahead of"
    echo "a common queue on matrix multiplications."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_peers" $peers_args -w matmul,empty,forkjoin,fib \
    -p crew-steal,crew-shared,crew-shared-spin,crew-lockfree,crew-per-worker,openmp,onetbb \
    -c "$out/strategies.csv" | tee -a "$report"
printf '```\n\n' >>"$report"

step "instructions per empty task (callgrind)"
{
    echo "## Instructions per empty task (callgrind, one worker, start-up subtracted)"
    echo
    echo "Counted, not timed, so repeatable on a noisy machine; idle polling counts as it runs."
    echo
    echo '```'
} >>"$report"
if [ $quick = 1 ]; then
    bench/instr.sh --quick crew crew-shared openmp onetbb textbook | tee -a "$report"
else
    bench/instr.sh | tee -a "$report"
fi
printf '```\n\n' >>"$report"

step "parallel primitives: sum and filter over n doubles"
{
    echo "## Parallel primitives: sum and stable filter (seed 000's BOLSTER primitives)"
    echo
    echo "crew_parallel_reduce / crew_parallel_filter against a sequential loop, OpenMP parallel for,"
    echo "oneTBB parallel_reduce and BOLSTER's thread-per-request (T threads created per call)."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_primitives" $prim_args | tee -a "$report"
printf '```\n\n' >>"$report"

step "the HTTP example under wrk (seeds 001 and 004: a server on a pool)"
{
    echo "## HTTP server on a crew pool vs thread-per-connection (wrk, 64 connections, 127.0.0.1)"
    echo
    echo '```'
} >>"$report"
bench/http.sh "$http_secs" 64 | tee -a "$report"
printf '```\n\n' >>"$report"

step "seed 001 sizing study: static sizes, RAIT, AIT vs BALANCE controllers"
{
    echo "## Seed 001 Figs. 5-7, 10, 11: pool size, idle time and automatic sizing"
    echo
    echo "Tasks compute 100 us and sleep free_workload x 10 us; a producer keeps 256 outstanding."
    echo "AIT is seed 001's dynamicThreadPool as written; BALANCE is crew's controller"
    echo "(docs/autosize.md)."
    echo
    echo '```'
} >>"$report"
# shellcheck disable=SC2086
"$bin/bench_sizing" $sizing_args -c "$out/sizing.csv" | tee -a "$report"
printf '```\n' >>"$report"

# @@seed002-mix@@

# @@seed003-io@@

# @@fig9-slots@@

step "plots"
{
    echo
    echo "## Plots"
    echo
    bench/plot.sh "$out"
} >>"$report"

# The summary table goes where the header left its marker.
if grep -q "crew behind" "$out/summary.md"; then
    {
        echo
        echo "Where crew is behind, the sections below give the figures per strategy; the closing"
        echo "notes of the scheduling issue say why and what would close the gap."
    } >>"$out/summary.md"
fi
sed -i -e "/<!-- summary -->/r $out/summary.md" -e "/<!-- summary -->/d" "$report"
step "report written to $report"
