#!/usr/bin/env bash
# What the installed libraries contain and export (nm): none of the code kept for the tests and
# the benchmarks (CREW_TEST_HOOKS, CMakeLists.txt: the test-only strategy "simple", the parallel
# primitives' engine switch and its split engine), and from the shared libraries no name but
# the public API's: crew_* from libcrew.so (crew__* is internal), the original's names from a
# compat library (which carries crew inside, hidden).
# usage: tests/nm_test.sh libcrew.a libcrew.so [compat.so ...]
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
fi
command -v nm >/dev/null || { echo "nm_test: nm not installed (binutils)"; exit 1; }
static=$1 shared=$2
shift 2
fail=0

# Any symbol (defined, undefined or local) named after the test-only code, in every library.
for lib in "$static" "$shared" "$@"; do
    if ! nm -A "$lib" >/dev/null 2>&1; then
        echo "nm_test: cannot read $lib"
        fail=1
        continue
    fi
    found=$(nm -A "$lib" 2>/dev/null |
        grep -E ' (crew__sched_simple|crew__parallel_engine|engine_choice|run_span)$' || true)
    if [ -n "$found" ]; then
        echo "nm_test: $lib holds test-only code:"
        echo "$found"
        fail=1
    fi
done
if ar t "$static" | grep -q 'sched_simple'; then
    echo "nm_test: $static has the test-only strategy's object (sched_simple.c)"
    fail=1
fi

# libcrew.so exports crew_* and nothing else (no crew__*).
bad=$(nm -D --defined-only "$shared" | awk '{print $NF}' | grep -vE '^crew_[a-z0-9]' || true)
n=$(nm -D --defined-only "$shared" | awk '{print $NF}' | grep -cE '^crew_[a-z0-9]' || true)
if [ -n "$bad" ]; then
    echo "nm_test: $shared exports names outside crew_*:"
    echo "$bad"
    fail=1
elif [ "$n" -eq 0 ]; then
    echo "nm_test: $shared exports no crew_ name"
    fail=1
fi
# A compat library exports its original's names, none of crew's.
for lib in "$@"; do
    bad=$(nm -D --defined-only "$lib" | awk '{print $NF}' | grep -E '^crew_' || true)
    if [ -n "$bad" ]; then
        echo "nm_test: $lib exports crew's names:"
        echo "$bad"
        fail=1
    fi
done

if [ $fail -eq 0 ]; then
    echo "nm_test: no test-only code; $shared exports $n crew_ names and nothing else"
fi
exit $fail
