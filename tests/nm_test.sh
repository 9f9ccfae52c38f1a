#!/usr/bin/env bash
# What the installed libraries contain and export (nm): none of the code kept for the tests and
# the benchmarks (CREW_TEST_HOOKS, CMakeLists.txt: the test-only strategy "simple", the parallel
# primitives' engine switch and its split engine), and from the shared libraries no name but
# the public API's: crew_* from libcrew.so (crew__* is internal), the original's names from a
# compat library (which carries crew inside, hidden); and a shared object that links libcrew.a
# (--dso: tests/static_dso.c) exports its own names only, none of crew's (the static library's
# names are hidden: CREW_STATIC, crew.h).
# usage: tests/nm_test.sh [--dso static_dso.so] libcrew.a libcrew.so [compat.so ...]
set -euo pipefail
dso=
if [ "${1:-}" = --dso ] && [ $# -ge 2 ]; then
    dso=$2
    shift 2
fi
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

# A shared object built on the static library exports its own function, and no crew_ name.
if [ -n "$dso" ]; then
    names=$(nm -D --defined-only "$dso" | awk '{print $NF}')
    bad=$(grep -E '^crew_' <<<"$names" || true)
    if [ -n "$bad" ]; then
        echo "nm_test: $dso links the static library and exports crew's names:"
        echo "$bad"
        fail=1
    elif ! grep -qx 'static_dso_run' <<<"$names"; then
        echo "nm_test: $dso does not export its own static_dso_run (is it the right file?)"
        fail=1
    fi
fi

if [ $fail -eq 0 ]; then
    echo "nm_test: no test-only code; $shared exports $n crew_ names and nothing else${dso:+; a shared object on the static library exports none}"
fi
exit $fail
