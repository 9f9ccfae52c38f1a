#!/usr/bin/env bash
# Instructions per empty task, counted by callgrind (repeatable where timings are not): one worker
# thread, N empty tasks submitted one by one from outside and waited for, minus the same run with
# a few tasks, divided by the difference (start-up and teardown cancel out). Polling by idle
# threads counts too, as it does on the machine. One run each: counts vary by a few percent
# with thread interleaving, not by the machine's load.
# usage: bench/instr.sh [--quick] [peer ...]   (default: crew's strategies, crew's tasks through
#                                             a lane (crew-lane), each in a group of its own
#                                             (crew-group) with a crew_notify callback on it
#                                             (crew-notify), and the peers; then crew_submit
#                                             with monitoring off and on, and one array)
#   --quick: fewer tasks; -h, --help: this text
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; } # this header
case ${1:-} in -h | --help) usage; exit 0 ;; esac
small=2000 big=102000 quick=0
if [ "${1:-}" = "--quick" ]; then
    small=1000 big=11000 quick=1
    shift
fi
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
count() { # peer n -> total instructions, or nothing if the peer is absent
    "$bin" -p "$1" -w empty -t 1 -r 1 -n "$2" 2>/dev/null | grep -q "^$1 " || return 0
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" -p "$1" -w empty -t 1 -r 1 \
        -n "$2" >/dev/null 2>&1
    awk '/^(summary|totals):/ {print $2; exit}' "$tmp/out"
}
printf '%-18s %12s\n' peer "instr/task"
for p in "${peers[@]}"; do
    a=$(count "$p" "$small")
    b=$(count "$p" "$big")
    if [ -z "$a" ] || [ -z "$b" ]; then
        printf '%-18s %12s\n' "$p" "n/a (not built)"
        continue
    fi
    awk -v p="$p" -v a="$a" -v b="$b" -v n=$((big - small)) \
        'BEGIN { printf "%-18s %12.0f\n", p, (b - a) / n }'
done

# What monitoring costs (the goal: "when off it costs nothing measurable"): crew_submit of empty
# tasks on one worker, in a build without monitoring (CREW_MONITORING=OFF, built here into
# build/nomon when cmake is there, except in --quick mode), and in the normal build with
# monitoring off and on; and the same tasks as one array (crew_enqueue_tasks, empty_tasks -m
# array: the array path's instructions per task).
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
    awk '/^(summary|totals):/ {print $2; exit}' "$tmp/out"
}
echo
printf '%-34s %12s\n' "crew_submit, one worker" "instr/task"
for row in "built without monitoring|$nomon|" "monitoring off (the default)|$et|" \
    "monitoring on|$et|-M" "one array (crew_enqueue_tasks)|$et|-m array"; do
    IFS='|' read -r label binary extra <<<"$row"
    [ -x "$binary" ] || { printf '%-34s %12s\n' "$label" "n/a (not built)"; continue; }
    a=$(count_et "$binary" "$extra" "$small")
    b=$(count_et "$binary" "$extra" "$big")
    awk -v l="$label" -v a="$a" -v b="$b" -v n=$((big - small)) \
        'BEGIN { printf "%-34s %12.0f\n", l, (b - a) / n }'
done
