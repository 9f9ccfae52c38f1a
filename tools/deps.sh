#!/usr/bin/env bash
# The Debian packages crew's commands need, in one place (make test, make bench and .ci/run all
# call this script), and their installation.
#
#   tools/deps.sh SET...      SET: build, test, bench, reliability, ci (all of them)
#
# Checks which packages of the sets are missing. Run as root, it installs them (apt-get update,
# then apt-get install). Otherwise it prints the exact command to run and exits with status 1,
# so that `make test` stops before building instead of failing test by test.
# CREW_DEPS=skip skips the check (the configurations and peers that need a missing package are
# then skipped or fail on their own). Off Debian (no dpkg-query), it lists the packages and goes on.
set -euo pipefail

# build: the library, examples, benchmarks and crew-sim (pkg-config: the installed-package test).
deps_build="build-essential cmake ninja-build pkg-config"
# test: GoogleTest (the suites), valgrind (the memcheck configuration), clang (the header test
# compiles crew.h and crew.hpp with both compilers).
deps_test="libgtest-dev valgrind clang"
# bench: the peers the report compares against (oneTBB, Boost.Asio, GLib; OpenMP comes with gcc),
# wrk for the HTTP section, gnuplot for the plots, valgrind for the instruction counts.
deps_bench="libtbb-dev libboost-dev libglib2.0-dev wrk gnuplot-nox valgrind"
# reliability: spin for the models; clang and libclang-rt-dev for the fuzzers (clang only
# recommends the runtime that holds libFuzzer and the sanitizers).
deps_reliability="spin clang libclang-rt-dev"
deps_ci="git"

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; } # this header
case ${1:-} in -h | --help) usage; exit 0 ;; esac
[ $# -gt 0 ] || { usage >&2; exit 2; }
[ "${CREW_DEPS:-}" = skip ] && exit 0

want=""
for set in "$@"; do
    case "$set" in
    build) want="$want $deps_build" ;;
    test) want="$want $deps_build $deps_test" ;;
    bench) want="$want $deps_build $deps_bench" ;;
    reliability) want="$want $deps_build $deps_reliability" ;;
    ci) want="$want $deps_build $deps_test $deps_bench $deps_reliability $deps_ci" ;;
    *) echo "tools/deps.sh: unknown set '$set' (build, test, bench, reliability, ci)" >&2; exit 2 ;;
    esac
done
want=$(tr ' ' '\n' <<<"$want" | awk 'NF && !seen[$0]++' | tr '\n' ' ')

if ! command -v dpkg-query >/dev/null; then
    echo "tools/deps.sh: not a Debian system, so the packages cannot be checked; crew needs" \
        "the equivalents of: $want"
    exit 0
fi

missing=""
for pkg in $want; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = installed ] || missing="$missing $pkg"
done
missing=${missing# }
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then
    echo "tools/deps.sh: installing $missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    # shellcheck disable=SC2086
    apt-get install -y --no-install-recommends $missing
    exit 0
fi

cat >&2 <<EOF
crew: these Debian packages are missing: $missing
Install them as root, then run the same command again:

    sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing

(Run as root, make installs them itself. CREW_DEPS=skip goes on without them: what needs them
is then skipped or fails.)
EOF
exit 1
