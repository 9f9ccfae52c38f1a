#!/bin/sh
# fuzz/run.sh [seconds] -- build the libFuzzer targets with ASan and UBSan (clang) into
# build/fuzz/ and run each for the given time (default 60 s), side by side (FUZZ_JOBS, default
# 2: each libFuzzer process keeps about one core busy, so on 2 cores both get the time they
# would get one after the other, in half the wall time; FUZZ_JOBS=1: one after the other):
#   api_fuzz    fuzz/api_fuzz.c, the public API (against src/*.c directly), seeds fuzz/corpus/api/
#   trace_fuzz  fuzz/trace_fuzz.c, crew-sim's trace parser (sim/trace.c), seeds fuzz/corpus/trace/
# New inputs go to build/fuzz/corpus/<name> (the seeds stay as they are); a failing input is
# saved as build/fuzz/<target>-crash-* (replay: build/fuzz/<target> FILE). Prints one line per
# target with its number of executions, and fails if either target fails. Skips, with a message,
# when clang is absent. FUZZ_TARGETS="api" (or "trace") runs one of them only.
# CREW_SRC_ROOT=dir fuzzes the library (and the parser, if it has sim/trace.c) of another tree
# (e.g. a `git archive` of a commit).
set -eu

secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_BUILD_DIR:-$root/build/fuzz}
lib=${CREW_SRC_ROOT:-$root}
CLANG=${CLANG:-clang}
targets=${FUZZ_TARGETS:-api trace}

if ! command -v "$CLANG" >/dev/null 2>&1; then
    echo "fuzz: $CLANG is not installed (Debian: apt-get install clang); skipping the fuzzers"
    exit 0
fi
mkdir -p "$out"
sim=$lib/sim
[ -f "$sim/trace.c" ] || sim=$root/sim

build() { # name, then sources and flags
    name=$1
    shift
    "$CLANG" -std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined -fno-omit-frame-pointer -pthread \
        -o "$out/$name" "$@"
}

# start name corpus [libFuzzer options]: runs the target (in the background when FUZZ_JOBS > 1);
# its exit status goes to $out/<name>.rc.
jobs=${FUZZ_JOBS:-2}
started=""
start() {
    name=$1
    corpus=$2
    shift 2
    mkdir -p "$out/corpus/$corpus"
    rm -f "$out/$name.rc"
    started="$started $name"
    if [ "$jobs" -gt 1 ]; then
        fuzz_one "$name" "$corpus" "$@" &
    else
        fuzz_one "$name" "$corpus" "$@"
    fi
}
fuzz_one() {
    name=$1
    corpus=$2
    shift 2
    set +e
    (cd "$out" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "./$name" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$name-" "$@" \
            "corpus/$corpus" "$root/fuzz/corpus/$corpus") >"$out/$name.log" 2>&1
    echo $? >"$out/$name.rc"
    set -e
}
# report name: its line (executions, speed, status); sets failed=1 if the target found something
# or did not run.
failed=0
report() {
    name=$1
    log=$out/$name.log
    rc=$(cat "$out/$name.rc" 2>/dev/null || echo "?")
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    echo "fuzz: $name ran ${execs:-?} inputs in ${secs} s (${speed:-?}/s), exit status $rc; log: $log"
    if [ "$rc" != 0 ]; then
        grep -E "${name}: |ERROR:|SUMMARY|Test unit written" "$log" | grep -v "Running 1 inputs" |
            head -n 20
        failed=1
    fi
}

for t in $targets; do
    case $t in
    api)
        # The library's sources are compiled into the target, instrumented like it, with
        # crew's assertions on (src/debug.h).
        build api_fuzz -DCREW_ASSERT=1 -I"$lib/include" -I"$lib/src" "$root/fuzz/api_fuzz.c" "$lib"/src/*.c -lm
        # -timeout: one input (a few hundred calls) takes milliseconds; seconds mean a hang.
        # -rss_limit_mb: the bounded-memory guarantee, per process. -jobs stays 1: the machine
        # is shared and each input already runs several threads.
        start api_fuzz api -timeout=20 -rss_limit_mb=2048 -max_len=1024
        ;;
    trace)
        build trace_fuzz -I"$sim" "$root/fuzz/trace_fuzz.c" "$sim/trace.c"
        # -max_len: room for a line longer than TRACE_MAX_LINE (4096) and a few more lines.
        start trace_fuzz trace -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
            -dict="$root/fuzz/trace.dict"
        ;;
    *)
        echo "fuzz: unknown target '$t' in FUZZ_TARGETS (api, trace)"
        failed=1
        ;;
    esac
done
wait
for name in $started; do
    report "$name"
done
[ $failed = 0 ]
