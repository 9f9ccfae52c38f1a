#!/usr/bin/env bash
# The C++20 coroutine tests (tests/test_coro.cpp, include/crew_coro.hpp) built with clang++ as
# well as the build's own compiler, and run under every scheduling strategy. Skipped, with a
# message, when clang++ is missing or has no <coroutine>.
#   tests/coro_clang_test.sh <build dir> <source dir> [library]
# library: the static library to link (CTest passes crew_checked's, the assertions on; default
# <build dir>/libcrew.a).
set -euo pipefail
build=$1 src=$2 lib=${3:-$1/libcrew.a}
if ! command -v clang++ >/dev/null; then
    echo "coro_clang_test: clang++ is not installed (apt-get install -y clang): skipped"
    exit 0
fi
if ! echo '#include <coroutine>' | clang++ -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
    echo "coro_clang_test: clang++ has no <coroutine>: skipped"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clang++ -std=c++20 -O1 -Wall -Wextra -Werror -I"$src/include" -I"$src/tests" \
    "$src/tests/test_coro.cpp" "$src/tests/common.cpp" "$lib" -lgtest -pthread \
    -o "$work/test_coro"
for sched in steal shared lockfree per-worker; do
    echo "coro_clang_test: $sched"
    CREW_SCHEDULER=$sched "$work/test_coro" --gtest_brief=1
done
