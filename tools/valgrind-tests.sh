#!/usr/bin/env bash
# Runs every test binary of a build under valgrind memcheck: any leak or memory error fails.
# Stress sizes shrink to a hundredth (CREW_TEST_SCALE), since valgrind runs one thread at a time.
# Each binary runs once per scheduler in CREW_VALGRIND_SCHEDULERS (default: all four, as in the
# sanitizer builds); a binary that cannot create a pool (no crew_create in it: the unit tests of
# one module, and the examples' driver, whose programs run outside valgrind) runs once, with
# the first, since the scheduler cannot change what it does. Valgrind uses one core per process, so the runs go JOBS at a time (default:
# the number of cores), each into its own log, $build/<binary>@<scheduler>.valgrind.log; the
# results are printed in a fixed order (binary by binary) as soon as each is known, with the time
# each run took, and the log's tail for a failure. The times are kept in
# $build/valgrind-times.txt, and the next run starts the slowest runs first.
# --fair-sched=yes: valgrind's default thread lock is unfair, and threads that spin (submitters
# racing a shutdown in test_shutdown) could keep the others waiting for minutes, even past the
# watchdog; with the fair lock the threads take turns.
# usage: tools/valgrind-tests.sh [BUILD_DIR]   (default build/release; -h, --help: this text)
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; } # this header
case ${1:-} in -h | --help) usage; exit 0 ;; esac

# One run (called by xargs below): the result goes to a status file, the exit status is always 0
# (xargs stops at a command that exits with 255).
if [ "${1:-}" = --job ]; then
    build=$2 status=$3 name=$4 sched=$5
    start=$(date +%s%N)
    rc=0
    CREW_SCHEDULER=$sched valgrind --quiet --fair-sched=yes --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
        "$build/tests/$name" >"$build/$name@$sched.valgrind.log" 2>&1 || rc=$?
    end=$(date +%s%N)
    echo "$rc $(((end - start) / 1000000))" >"$status/$name@$sched.tmp"
    mv "$status/$name@$sched.tmp" "$status/$name@$sched"
    exit 0
fi

build=${1:-build/release}
# Without valgrind every run would "fail" with status 127 and hide the real results: skip the
# whole configuration instead, saying so (tools/deps.sh test installs valgrind).
if ! command -v valgrind >/dev/null; then
    echo "memcheck: SKIPPED: valgrind is not installed (Debian: apt-get install valgrind)"
    exit 0
fi
export CREW_TEST_SCALE=${CREW_TEST_SCALE:-0.01} CREW_TEST_TIMEOUT=600
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
schedulers=${CREW_VALGRIND_SCHEDULERS:-steal shared lockfree per-worker}
status=$(mktemp -d)
list=()
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    # crew_create defined in a static link (T, or t: the static library's names are hidden, so
    # local in the program) or imported from the shared library (U); without nm (binutils,
    # which gcc needs), every binary runs with every scheduler. grep reads all of nm's output (no
    # -q): under pipefail, nm killed by an early exit of grep would read as "not found".
    if ! command -v nm >/dev/null ||
        nm "$t" 2>/dev/null | grep -E ' [TtU] crew_create$' >/dev/null; then
        for sched in $schedulers; do
            list+=("$(basename "$t") $sched")
        done
    else
        list+=("$(basename "$t") ${schedulers%% *}")
    fi
done
[ ${#list[@]} -gt 0 ] || { echo "memcheck: no test binaries in $build/tests"; exit 1; }
echo "memcheck: ${#list[@]} runs (schedulers: $schedulers), $jobs at a time"

# Launch order: by the last run's times, slowest first (unknown ones first of all), so that no
# long run starts last; without times, the list's order.
times=$build/valgrind-times.txt
launch() {
    if [ -s "$times" ]; then
        for job in "${list[@]}"; do
            ms=$(awk -v n="${job/ /@}" '$2 == n { print $1 }' "$times")
            echo "${ms:-999999999} $job"
        done | sort -s -k1,1nr | cut -d' ' -f2-
    else
        printf '%s\n' "${list[@]}"
    fi
}
launch | xargs -P "$jobs" -L 1 bash "$0" --job "$build" "$status" &
runner=$!
trap 'kill $runner 2>/dev/null || true; rm -rf "$status"' EXIT
trap 'exit 130' INT TERM

pass=0 start=$(date +%s) failed="" # failed: the names of the failed runs
for job in "${list[@]}"; do
    name=${job/ /@}
    # Wait for this run's result (the runs finish in any order; the report keeps the list's).
    while [ ! -e "$status/$name" ] && kill -0 $runner 2>/dev/null; do
        sleep 0.5
    done
    if [ ! -e "$status/$name" ]; then
        echo "memcheck: $name FAILED (did not run)"
        failed="$failed $name"
        continue
    fi
    read -r rc ms <"$status/$name"
    secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
    if [ "$rc" = 0 ]; then
        echo "memcheck: $name clean (${secs} s)"
        pass=$((pass + 1))
    else
        echo "memcheck: $name FAILED (exit status $rc, ${secs} s; log follows)"
        tail -60 "$build/$name.valgrind.log"
        failed="$failed $name"
    fi
done
wait $runner || true
for job in "${list[@]}"; do
    name=${job/ /@}
    if [ -e "$status/$name" ]; then echo "$(cut -d' ' -f2 "$status/$name") $name"; fi
done >"$times.tmp"
mv "$times.tmp" "$times"
fail=$(wc -w <<<"$failed")
echo "memcheck: $pass passed, $fail failed, $(( $(date +%s) - start )) s with $jobs jobs"
# Last, since CI may show only the end of the output: which runs failed (their logs' tails
# are above, the whole logs in $build).
[ -z "$failed" ] || echo "memcheck: failed:$failed (logs: $build/<binary>@<scheduler>.valgrind.log)"
[ "$fail" = 0 ]
