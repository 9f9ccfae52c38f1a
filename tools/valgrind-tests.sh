#!/usr/bin/env bash
# Runs every test binary of a build under valgrind memcheck: any leak or memory error fails.
# Stress sizes shrink to a hundredth (CREW_TEST_SCALE), since valgrind runs one thread at a time.
# Each binary runs once per scheduler in CREW_VALGRIND_SCHEDULERS (default: the work-stealing
# default and the shared queue; the sanitizer builds run all four).
set -euo pipefail
build=${1:-build/release}
export CREW_TEST_SCALE=${CREW_TEST_SCALE:-0.01} CREW_TEST_TIMEOUT=600
fail=0 pass=0
for sched in ${CREW_VALGRIND_SCHEDULERS:-steal shared}; do
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")@$sched
    if CREW_SCHEDULER=$sched valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
        --errors-for-leak-kinds=definite,indirect,possible "$t" >"$build/$name.valgrind.log" 2>&1; then
        echo "memcheck: $name clean"
        pass=$((pass + 1))
    else
        echo "memcheck: $name FAILED (log follows)"
        tail -60 "$build/$name.valgrind.log"
        fail=$((fail + 1))
    fi
done
done
echo "memcheck: $pass passed, $fail failed"
[ "$fail" = 0 ]
