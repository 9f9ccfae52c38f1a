#!/bin/sh
# fuzz/run.sh [seconds] -- build fuzz/api_fuzz.c with libFuzzer, ASan and UBSan (clang, against
# src/*.c directly) into build/fuzz/ and run it for the given time (default 60 s), starting from
# the seed corpus fuzz/corpus/api/. New inputs go to build/fuzz/corpus/api (the seeds stay as
# they are); a failing input is saved as build/fuzz/crash-* (replay: build/fuzz/api_fuzz FILE).
# Prints the number of executions. Skips, with a message, when clang is absent.
# CREW_SRC_ROOT=dir fuzzes the library of another tree (e.g. a `git archive` of a commit).
set -eu

secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_BUILD_DIR:-$root/build/fuzz}
lib=${CREW_SRC_ROOT:-$root}
CLANG=${CLANG:-clang}

if ! command -v "$CLANG" >/dev/null 2>&1; then
    echo "fuzz: $CLANG is not installed (Debian: apt-get install clang); skipping the fuzzer"
    exit 0
fi
mkdir -p "$out/corpus/api"

# The library's sources are compiled into the target, instrumented like it.
"$CLANG" -std=c11 -g -O1 -D_GNU_SOURCE -I"$lib/include" -I"$lib/src" \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -pthread \
    -o "$out/api_fuzz" "$root/fuzz/api_fuzz.c" "$lib"/src/*.c -lm

# -timeout: one input (a few hundred calls) takes milliseconds; seconds mean a hang.
# -rss_limit_mb: the bounded-memory guarantee, per process. -jobs stays 1: the machine is
# shared and each input already runs several threads.
log=$out/api_fuzz.log
set +e
(cd "$out" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ./api_fuzz -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=1024 \
        -print_final_stats=1 corpus/api "$root/fuzz/corpus/api") >"$log" 2>&1
rc=$?
set -e
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
echo "fuzz: api_fuzz ran ${execs:-?} inputs in ${secs} s (${speed:-?}/s), exit status $rc; log: $log"
if [ $rc -ne 0 ]; then
    grep -E "api_fuzz: op|ERROR:|SUMMARY|Test unit written" "$log" | head -n 20
    exit 1
fi
