#!/usr/bin/env bash
# Runs the original projects' own test suites against crew's drop-ins (compat/README.md):
#
#   compat/tests/run_originals.sh [-b BUILD] [-t THPOOL_CHECKOUT] [-m THREADPOOL_CHECKOUT] [-q]
#
#   -b  crew's build tree (default build/release), with compat/ built
#   -t  a checkout of https://github.com/Pithikos/C-Thread-Pool (its tests/*.sh and tests/src)
#   -m  a checkout of https://github.com/mbrossard/threadpool (its tests/*.c, `make test`)
#   -q  C-Thread-Pool: skip memleaks.sh (valgrind, minutes) and the optimized (-O) rerun
#
# Each suite runs as its authors run it, with one change: where it compiles the original's
# thpool.c / threadpool.c, it compiles against compat/'s header and links compat/'s library and
# crew instead. C-Thread-Pool's scripts run in a copy of its tests/ directory next to a copy of
# compat/thpool/thpool.h (its sources include "../../thpool.h"); they need bash, gcc, python (a
# python3 stand-in is put on PATH when there is none), /usr/bin/time (Debian package time) and,
# for memleaks.sh, valgrind. Prints one line per script or program, and exits non-zero if any
# failed. The scripts' own output goes to the log named at the end.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build/release thpool_src="" threadpool_src="" quick=0
while getopts "b:t:m:q" opt; do
    case $opt in
    b) build=$(cd "$OPTARG" && pwd) ;;
    t) thpool_src=$(cd "$OPTARG" && pwd) ;;
    m) threadpool_src=$(cd "$OPTARG" && pwd) ;;
    q) quick=1 ;;
    *) sed -n '2,17p' "$0" >&2; exit 2 ;;
    esac
done
[ -n "$thpool_src$threadpool_src" ] || { sed -n '2,17p' "$0" >&2; exit 2; }
for lib in compat/libcrew_thpool.a compat/libcrew_threadpool.a libcrew.a; do
    [ -f "$build/$lib" ] || { echo "run_originals: $build/$lib is missing (build crew first)" >&2; exit 2; }
done
work=$(mktemp -d)
log=$work/run.log
failed=0
result() { # name status
    if [ "$2" = 0 ]; then echo "run_originals: $1: passed"; else echo "run_originals: $1: FAILED"; failed=1; fi
}

if [ -n "$thpool_src" ]; then
    mkdir -p "$work/thpool/bin"
    cp -r "$thpool_src/tests" "$work/thpool/tests"
    cp "$src/compat/thpool/thpool.h" "$work/thpool/thpool.h"
    # compile(): the drop-in's header and libraries instead of ../thpool.c (THPOOL_DEBUG kept).
    sed -i "s|^\tgcc \$COMPILATION_FLAGS \"\$1\" ../thpool.c -D THPOOL_DEBUG -pthread -o test\$|\tgcc \$COMPILATION_FLAGS \"\$1\" -D THPOOL_DEBUG -pthread -o test $build/compat/libcrew_thpool.a $build/libcrew.a|" \
        "$work/thpool/tests/funcs.sh"
    grep -q libcrew_thpool "$work/thpool/tests/funcs.sh" ||
        { echo "run_originals: funcs.sh's compile() changed upstream; update this script" >&2; exit 2; }
    if ! command -v python >/dev/null; then
        printf '#!/bin/sh\nexec python3 "$@"\n' >"$work/thpool/bin/python"
        chmod +x "$work/thpool/bin/python"
    fi
    scripts="threadpool.sh api.sh pause_resume.sh heap_stack_garbage.sh wait.sh"
    [ $quick = 1 ] || scripts="$scripts memleaks.sh"
    flag_sets=("")
    [ $quick = 1 ] || flag_sets+=("-g -O")
    for flags in "${flag_sets[@]}"; do
        for script in $scripts; do
            rc=0
            (cd "$work/thpool/tests" && PATH="$work/thpool/bin:$PATH" COMPILATION_FLAGS="$flags" \
                bash "$script") >>"$log" 2>&1 || rc=$?
            result "C-Thread-Pool tests/$script${flags:+ (COMPILATION_FLAGS='$flags')}" $rc
        done
    done
fi

if [ -n "$threadpool_src" ]; then
    # The original's Makefile: CFLAGS = -D_REENTRANT -Wall -pedantic -Isrc; `make test` runs
    # shutdown, thrdtest and heavy.
    for t in shutdown thrdtest heavy; do
        rc=0
        cc -D_REENTRANT -Wall -pedantic -I"$src/compat/threadpool" -o "$work/$t" \
            "$threadpool_src/tests/$t.c" "$build/compat/libcrew_threadpool.a" "$build/libcrew.a" \
            -lpthread >>"$log" 2>&1 && "$work/$t" >>"$log" 2>&1 || rc=$?
        result "mbrossard/threadpool tests/$t" $rc
    done
fi
cp "$log" "$build/run_originals.log"
rm -rf "$work"
echo "run_originals: the suites' own output: $build/run_originals.log"
exit $failed
