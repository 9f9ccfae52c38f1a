#!/usr/bin/env bash
# The public headers under a strict user's flags: crew.h as C11 with gcc and clang
# (tests/test_c_header.c), crew.hpp as C++17 with g++ and clang++ (tests/header_strict.cpp, which
# instantiates every template), each with -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror.
# Under -std=c++14, crew.hpp must stop with exactly one error line, which names C++17.
# A compiler that is not installed is skipped with a message (clang: apt-get install -y clang);
# at least one C and one C++ compiler must be there.
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror -O2 -I"$src/include")
fail=0 ran_c=0 ran_cxx=0

for cc in gcc clang; do
    if ! command -v "$cc" >/dev/null; then
        echo "header_test: $cc not installed, skipped (apt-get install -y $cc)"
        continue
    fi
    if "$cc" -std=c11 "${flags[@]}" -c "$src/tests/test_c_header.c" -o "$work/c.o"; then
        echo "header_test: crew.h, C11, $cc: clean"
        ran_c=1
    else
        echo "header_test: crew.h, C11, $cc: FAILED (warnings above)"
        fail=1
    fi
done

echo '#include <crew.hpp>' >"$work/only.cpp"
for cxx in g++ clang++; do
    if ! command -v "$cxx" >/dev/null; then
        echo "header_test: $cxx not installed, skipped (apt-get install -y ${cxx%++})"
        continue
    fi
    for std in c++17 c++20; do
        if "$cxx" -std=$std "${flags[@]}" -c "$src/tests/header_strict.cpp" -o "$work/cxx.o"; then
            echo "header_test: crew.hpp, $std, $cxx: clean"
            ran_cxx=1
        else
            echo "header_test: crew.hpp, $std, $cxx: FAILED (warnings above)"
            fail=1
        fi
    done
    # crew_coro.hpp: with C++20 coroutines, the example that instantiates its templates compiles
    # clean; under C++17 the header stops with an #error naming what it needs, and with
    # CREW_CORO_OPTIONAL defined first it defines nothing (crew.hpp users are unaffected).
    printf '#include <crew_coro.hpp>\n' >"$work/coro17.cpp"
    if "$cxx" -std=c++17 "${flags[@]}" -c "$work/coro17.cpp" -o "$work/coro17.o" \
        2>"$work/coro17.err"; then
        echo "header_test: crew_coro.hpp, c++17, $cxx: FAILED (compiled without an #error)"
        fail=1
    elif grep -q 'crew_coro.hpp needs C++20 coroutines' "$work/coro17.err"; then
        echo "header_test: crew_coro.hpp, c++17, $cxx: a clear #error"
    else
        echo "header_test: crew_coro.hpp, c++17, $cxx: FAILED (not the expected error)"
        cat "$work/coro17.err"
        fail=1
    fi
    printf '#define CREW_CORO_OPTIONAL 1\n#include <crew_coro.hpp>\n#ifdef CREW_HAS_COROUTINES\n#error coroutines\n#endif\n' \
        >"$work/coro17o.cpp"
    if "$cxx" -std=c++17 "${flags[@]}" -c "$work/coro17o.cpp" -o "$work/coro17o.o"; then
        echo "header_test: crew_coro.hpp, c++17 + CREW_CORO_OPTIONAL, $cxx: clean, defines nothing"
    else
        echo "header_test: crew_coro.hpp, c++17 + CREW_CORO_OPTIONAL, $cxx: FAILED"
        fail=1
    fi
    if echo '#include <coroutine>' | "$cxx" -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
        if "$cxx" -std=c++20 "${flags[@]}" -c "$src/examples/coro_fib.cpp" -o "$work/coro.o"; then
            echo "header_test: crew_coro.hpp, c++20, $cxx: clean"
        else
            echo "header_test: crew_coro.hpp, c++20, $cxx: FAILED (warnings above)"
            fail=1
        fi
    else
        echo "header_test: crew_coro.hpp, c++20, $cxx: no <coroutine>, skipped"
    fi
    # Too old a standard: one error line that says what is needed, nothing else.
    out=$("$cxx" -std=c++14 "${flags[@]}" -c "$work/only.cpp" -o "$work/old.o" 2>&1) && {
        echo "header_test: crew.hpp, c++14, $cxx: compiled, but it must refuse"
        fail=1
        continue
    }
    errors=$(grep -c 'error:' <<<"$out" || true)
    if [ "$errors" = 1 ] && grep 'error:' <<<"$out" | grep -q 'C++17'; then
        echo "header_test: crew.hpp, c++14, $cxx: one error line naming C++17"
    else
        echo "header_test: crew.hpp, c++14, $cxx: FAILED, expected one error naming C++17, got:"
        echo "$out"
        fail=1
    fi
done

[ "$ran_c" = 1 ] || { echo "header_test: no C compiler ran"; fail=1; }
[ "$ran_cxx" = 1 ] || { echo "header_test: no C++ compiler ran"; fail=1; }
[ "$fail" = 0 ] && echo "header_test: ok"
exit "$fail"
