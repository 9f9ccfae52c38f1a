#!/usr/bin/env bash
# Instructions per empty task, counted by callgrind (repeatable where timings are not): one worker
# thread, N empty tasks submitted one by one from outside and waited for, minus the same run with
# a few tasks, divided by the difference (start-up and teardown cancel out). Polling by idle
# threads counts too, as it does on the machine. One run each: counts vary by a few percent
# with thread interleaving, not by the machine's load. Then, for crew alone: crew_submit built
# without monitoring and with it off and on, crew_submit's tasks run by the worker alone and by
# the helping waiter alone, one array (crew_enqueue_tasks) per task, and one spawn-and-wait
# pair (crew_join, in the fib of bench_peers' crew-join-task).
# usage: bench/instr.sh [--quick] [peer ...]   (default: crew's strategies, crew's tasks through
#                                             a lane (crew-lane), each in a group of its own
#                                             (crew-group) with a crew_notify callback on it
#                                             (crew-notify), and the peers; then crew_submit
#                                             with monitoring off and on, run by the
#                                             worker and by a helping waiter, one array)
#        bench/instr.sh --graph [--quick]      instructions per node of a task graph's run: a
#                                             chain of 100,000 empty nodes (--quick 20,000) on
#                                             one thread, run 3 times and once (bench_graph
#                                             --instr), the difference over 2 x the nodes; for
#                                             crew_graph, the same by hand on groups, oneTBB
#        bench/instr.sh --skynet [--quick] [peer ...]
#                                             instructions per leaf of skynet (bench_peers -w
#                                             skynet, one worker), a 10-ary tree of tasks, each
#                                             inner task spawning its ten children and waiting:
#                                             10^6 leaves less 10^5 (--quick 10^5 less 10^4),
#                                             over the leaves' difference; peers by default
#                                             crew-enqueue-wait (crew_enqueue_tasks into a new
#                                             group, then crew_wait), crew-tasks-wait
#                                             (crew_enqueue_tasks_wait), crew-join-task, onetbb;
#                                             then, per function (callgrind_annotate, own
#                                             instructions), where crew-enqueue-wait and
#                                             crew-tasks-wait spend theirs, per inner task
#   --quick: fewer tasks; -h, --help: this text
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; } # this header
case ${1:-} in -h | --help) usage; exit 0 ;; esac
small=2000 big=102000 quick=0 graph=0 skynet=0
while [ $# -gt 0 ]; do
    case $1 in
    --quick) small=1000 big=11000 quick=1; shift ;;
    --graph) graph=1; shift ;;
    --skynet) skynet=1; shift ;;
    *) break ;;
    esac
done
for arg in "$@"; do
    case $arg in -*) echo "bench/instr.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;; esac
done
cd "$(dirname "$0")/.."
bin=build/release/bench/bench_peers
peers=("$@")
[ ${#peers[@]} -gt 0 ] || peers=(crew crew-shared crew-shared-spin crew-lockfree crew-per-worker
    crew-lane crew-group crew-notify openmp onetbb boost.asio glib textbook)
command -v valgrind >/dev/null || {
    echo "valgrind is not installed: instruction counts skipped"
    exit 0
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; } # callgrind's file -> instructions
row() { # width label a b n -> the row "label (b - a) / n", or "n/a" if a count is missing
    if [ -z "$3" ] || [ -z "$4" ]; then
        printf "%-${1}s %12s\n" "$2" "n/a (not built)"
        return
    fi
    awk -v w="$1" -v l="$2" -v a="$3" -v b="$4" -v n="$5" \
        'BEGIN { printf "%-" w "s %12.0f\n", l, (b - a) / n }'
}
count() { # peer n -> total instructions, or nothing if the peer is absent
    "$bin" -p "$1" -w empty -t 1 -r 1 -n "$2" 2>/dev/null | grep -q "^$1 " || return 0
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" -p "$1" -w empty -t 1 -r 1 \
        -n "$2" >/dev/null 2>&1
    total "$tmp/out"
}
# A task graph's run, per node: bench_graph --instr N builds a chain of N nodes on one thread
# and runs it R times; (Ir(R = 3) - Ir(R = 1)) / (2 N) leaves out the build and the first run
# (which for crew_graph also builds the successor lists): the cost of running a built graph.
if [ $graph = 1 ]; then
    gbin=build/release/bench/bench_graph
    nodes=100000
    [ $quick = 1 ] && nodes=20000
    count_graph() { # lib runs -> total instructions, or nothing
        valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$gbin" --libs "$1" \
            --instr "$nodes" --reps "$2" >/dev/null 2>&1 || return 0
        total "$tmp/out"
    }
    printf '%-34s %12s\n' "task graph run, chain, one thread" "instr/node"
    for lib in crew groups onetbb; do
        a="" b=""
        if [ -x "$gbin" ] && "$gbin" --libs "$lib" --instr 10 --reps 1 >/dev/null 2>&1; then
            a=$(count_graph "$lib" 1)
            b=$(count_graph "$lib" 3)
        fi
        row 34 "$lib" "$a" "$b" $((2 * nodes))
    done
    exit 0
fi

# Skynet, per leaf: depth D and D - 1 on one worker (the root on the calling thread, as the
# benchmark runs it), the difference over 9 x 10^(D-1) leaves (the inner tasks, one per ten
# leaves, are in the figure too). Then the per-function split of the two crew forms, per inner
# task (one per ten leaves: an inner task's enqueue, wait and its ten children's runs).
# Under valgrind's fair scheduler (--fair-sched=yes): with its default lock a worker woken by
# the root's first submission often never got to run, so the figure was the calling thread's
# path alone (crew-enqueue-wait 345 against about 278 with both threads running).
if [ $skynet = 1 ]; then
    deep=6
    [ $quick = 1 ] && deep=5
    [ $# -gt 0 ] || peers=(crew-enqueue-wait crew-tasks-wait crew-join-task onetbb)
    leaves=$((9 * 10 ** (deep - 1)))
    sky() { # peer depth out -> total instructions, or nothing if the peer is absent
        valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$3" "$bin" -p "$1" \
            -w skynet -t 1 -r 1 -D "$2" >/dev/null 2>&1 || return 0
        total "$3"
    }
    printf '%-18s %12s\n' "skynet, 1 worker" "instr/leaf"
    for p in "${peers[@]}"; do
        a="" b=""
        if "$bin" -p "$p" -w skynet -t 1 -r 1 -D 1 2>/dev/null | grep -q "^$p "; then
            a=$(sky "$p" $((deep - 1)) "$tmp/$p.a")
            b=$(sky "$p" "$deep" "$tmp/$p.b")
        fi
        row 18 "$p" "$a" "$b" "$leaves"
    done
    command -v callgrind_annotate >/dev/null || exit 0
    split() { # out -> "instructions function" per function (inlined code merged in)
        callgrind_annotate --auto=no --threshold=100 --inclusive=no "$1" 2>/dev/null | awk '
            /^ *[0-9,]+ +\(/ { n = $1; gsub(",", "", n); f = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", f)
                               sub(/ \[.*$/, "", f); sub(/^[^:]*:/, "", f)
                               sub(/\x27[0-9]+$/, "", f); gsub(/ /, "", f); sum[f] += n }
            END { for (f in sum) print sum[f], f }'
    }
    for p in crew-enqueue-wait crew-tasks-wait; do
        [ -f "$tmp/$p.a" ] && [ -f "$tmp/$p.b" ] || continue
        echo
        printf '%-46s %12s\n' "$p, by function" "instr/inner"
        { split "$tmp/$p.a" | sed 's/^/a /'; split "$tmp/$p.b" | sed 's/^/b /'; } | awk \
            -v n=$((leaves / 10)) '
            { v[$3] += ($1 == "b" ? $2 : -$2) }
            END { for (f in v) if (v[f] / n >= 5 && f != "PROGRAMTOTALS")
                      printf "%12.0f %s\n", v[f] / n, f }' |
            sort -rn | head -16 | awk '{ printf "  %-44s %12s\n", substr($2, 1, 44), $1 }'
    done
    exit 0
fi

printf '%-18s %12s\n' peer "instr/task"
for p in "${peers[@]}"; do
    a=$(count "$p" "$small")
    b=$(count "$p" "$big")
    row 18 "$p" "$a" "$b" $((big - small))
done

# What monitoring costs (the goal: "when off it costs nothing measurable"): crew_submit of empty
# tasks on one worker, in a build without monitoring (CREW_MONITORING=OFF, built here into
# build/nomon when cmake is there, except in --quick mode), and in the normal build with
# monitoring off and on (the same tasks as one array: the next table).
et=build/release/bench/empty_tasks
nomon=build/nomon/bench/empty_tasks
# Built (incrementally) every time: a build left from an older commit would count old code.
if [ $quick = 0 ] && command -v cmake >/dev/null; then
    { { [ -f build/nomon/CMakeCache.txt ] || cmake -S . -B build/nomon \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCREW_BUILD_TESTS=OFF -DCREW_BUILD_BENCH=ON \
        -DCREW_BUILD_SIM=OFF -DCREW_BUILD_COMPAT=OFF -DCREW_MONITORING=OFF; } &&
        cmake --build build/nomon --target empty_tasks; } >/dev/null 2>&1 || true
fi
count_et() { # binary extra-args n -> total instructions
    # shellcheck disable=SC2086 # extra-args: zero or more words
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$1" -t 1 -r 1 -n "$3" $2 \
        >/dev/null 2>&1 || return 0
    total "$tmp/out"
}
echo
printf '%-34s %12s\n' "crew_submit, one worker" "instr/task"
for row in "built without monitoring|$nomon|" "monitoring off (the default)|$et|" \
    "monitoring on|$et|-M"; do
    IFS='|' read -r label binary extra <<<"$row"
    [ -x "$binary" ] || { printf '%-34s %12s\n' "$label" "n/a (not built)"; continue; }
    a=$(count_et "$binary" "$extra" "$small")
    b=$(count_et "$binary" "$extra" "$big")
    awk -v l="$label" -v a="$a" -v b="$b" -v n=$((big - small)) \
        'BEGIN { printf "%-34s %12.0f\n", l, (b - a) / n }'
done

# Who runs crew_submit's tasks: in the first table's "crew" row the worker and the waiting
# producer (crew_wait_all helps) share them as their race goes, so the figure mixes two paths.
# Each path alone here (empty_tasks -w): the worker runs them all (the producer waits without
# helping, asleep), or the helping waiter does (the worker held in a task of its own).
echo
printf '%-42s %12s\n' "crew_submit + crew_wait_all, one worker" "instr/task"
for row in "crew_submit, the worker runs them|-w worker" \
    "crew_submit, a helping waiter runs them|-w waiter"; do
    IFS='|' read -r label extra <<<"$row"
    [ -x "$et" ] || { printf '%-42s %12s\n' "$label" "n/a (not built)"; continue; }
    a=$(count_et "$et" "$extra" "$small")
    b=$(count_et "$et" "$extra" "$big")
    row 42 "$label" "$a" "$b" $((big - small))
done

# One array: crew_enqueue_tasks of N empty tasks, then crew_wait_all, on one worker.
echo
printf '%-34s %12s\n' "crew_enqueue_tasks, one worker" "instr/task"
if [ -x "$et" ]; then
    a=$(count_et "$et" "-m array" "$small")
    b=$(count_et "$et" "-m array" "$big")
    awk -v a="$a" -v b="$b" -v n=$((big - small)) \
        'BEGIN { printf "%-34s %12.0f\n", "one array (monitoring off)", (b - a) / n }'
else
    printf '%-34s %12s\n' "one array (monitoring off)" "n/a (not built)"
fi

# One spawn-and-wait pair (crew_join): bench_peers' fib with crew-join-task (the root a task, so
# every join is a worker's) on one worker, fib(20) and fib(22). fib(n) makes F(n+1) - 1 joins, so
# the difference is 17,711 joins. Subtracted from the difference: the benchmark's sequential fib
# (fib_seq, main's check of the result), read from callgrind's function breakdown. The pair's
# figure still holds the benchmark's own fib function (fib_join's body), shown beside it.
count_join() { # n -> "total fib_seq fib_join" instructions, or nothing
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" -p crew-join-task -w fib \
        -t 1 -r 1 -f "$1" >/dev/null 2>&1 || return 0
    callgrind_annotate --auto=no --threshold=100 --inclusive=no "$tmp/out" 2>/dev/null | awk '
        /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
        /fib_seq\(/ { gsub(",", "", $1); seq += $1 }
        /fib_join\(/ { gsub(",", "", $1); body += $1 }
        END { if (total > 0 && seq > 0) print total, seq, body + 0 }'
}
echo
printf '%-34s %12s\n' "crew_join, one worker" "instr/pair"
label="spawn-and-wait pair (fib 20..22)"
if ! "$bin" -p crew-join-task -w fib -t 1 -r 1 -f 3 2>/dev/null | grep -q "^crew-join-task "; then
    printf '%-34s %12s\n' "$label" "n/a (not built)"
elif ! command -v callgrind_annotate >/dev/null; then
    printf '%-34s %12s\n' "$label" "n/a (no callgrind_annotate)"
else
    a=$(count_join 20)
    b=$(count_join 22)
    if [ -z "$a" ] || [ -z "$b" ]; then
        printf '%-34s %12s\n' "$label" "n/a (fib_seq not in the breakdown)"
    else
        awk -v a="$a" -v b="$b" -v l="$label" 'BEGIN {
            split(a, x, " "); split(b, y, " ")
            f[0] = 0; f[1] = 1; for (i = 2; i <= 23; i++) f[i] = f[i - 1] + f[i - 2]
            joins = f[23] - f[21] # fib(22) makes F(23) - 1 joins, fib(20) F(21) - 1
            printf "%-34s %12.0f\n", l, (y[1] - x[1] - (y[2] - x[2])) / joins
            printf "%-34s %12.0f\n", "  of which fib_join (the benchmark)", (y[3] - x[3]) / joins
            printf "%-34s %12.0f\n", "  subtracted: fib_seq, per pair", (y[2] - x[2]) / joins
        }'
    fi
fi
