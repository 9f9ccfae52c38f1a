#!/usr/bin/env bash
# crew used from outside its tree, the three ways README and compat/README describe:
# 1. installed (cmake --install into a scratch prefix): every public header of include/ is
#    there, and a program using each of them (crew.h as C, crew.hpp as C++17, crew_coro.hpp as
#    C++20 when the compiler has coroutines) builds and runs; find_package(crew) with crew::crew,
#    crew::crew_static and the drop-ins crew::thpool, crew::threadpool (and their _static), and
#    pkg-config with crew.pc, crew-thpool.pc and crew-threadpool.pc, whose paths must be plain
#    (no ../..); the shared libraries export only their own API;
# 2. added with add_subdirectory to a project that has no GoogleTest: only the libraries are built
#    (no tests, benchmarks, crew-sim or examples), under the same crew:: names;
# 3. compat/README's link lines, run as written from the source tree against this build.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "package_test: FAILED: $*" >&2; exit 1; }
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
prefix=$work/prefix
# The consumers: one per public header; crew_coro.hpp's only with C++20 coroutines.
consumers=(consumer_shared consumer_static consumer_cpp consumer_compat consumer_compat_static)
coro=OFF
if echo '#include <coroutine>' | c++ -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
    coro=ON consumers+=(consumer_coro)
else
    echo "package_test: the compiler has no C++20 coroutines: crew_coro.hpp's consumer skipped"
fi

# 1. Installed.
cmake --install "$build" --prefix "$prefix" >/dev/null
for header in "$src"/include/*; do
    [ -f "$prefix/include/${header##*/}" ] || fail "public header ${header##*/} is not installed"
done
libdirs="$prefix/lib:$prefix/lib/x86_64-linux-gnu"
cmake -S "$src/tests/package" -B "$work/cmake" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCREW_CONSUMER_CORO=$coro >"$work/cmake.log" 2>&1 ||
    fail "find_package consumer did not configure: $(cat "$work/cmake.log")"
cmake --build "$work/cmake" >"$work/build.log" 2>&1 ||
    fail "find_package consumer did not build: $(cat "$work/build.log")"
for exe in "${consumers[@]}"; do
    LD_LIBRARY_PATH=$libdirs "$work/cmake/$exe" >/dev/null || fail "find_package: $exe failed"
done
pcdir=$(dirname "$(find "$prefix" -name crew.pc | head -1)")
pc() { PKG_CONFIG_PATH="$pcdir" pkg-config "$@"; }
for name in crew crew-thpool crew-threadpool; do
    flags=$(pc --cflags --libs "$name")
    case "$flags" in *..*) fail "$name.pc gives paths with '..': $flags" ;; esac
    case "$flags" in *"-I$prefix/include"*) ;; *) fail "$name.pc: no -I$prefix/include: $flags" ;; esac
done
# shellcheck disable=SC2046
cc -o "$work/consumer_pc" "$src/tests/package/consumer.c" $(pc --cflags --libs crew)
LD_LIBRARY_PATH="$(pc --variable=libdir crew)" "$work/consumer_pc" >/dev/null ||
    fail "pkg-config: consumer.c failed"
cxxflags=(-Wall -Wextra -Wpedantic -Werror)
# shellcheck disable=SC2046
c++ -std=c++17 "${cxxflags[@]}" -o "$work/consumer_cpp_pc" "$src/tests/package/consumer.cpp" \
    $(pc --cflags --libs crew)
LD_LIBRARY_PATH="$(pc --variable=libdir crew)" "$work/consumer_cpp_pc" >/dev/null ||
    fail "pkg-config: consumer.cpp failed"
if [ $coro = ON ]; then
    # shellcheck disable=SC2046
    c++ -std=c++20 "${cxxflags[@]}" -o "$work/consumer_coro_pc" \
        "$src/tests/package/consumer_coro.cpp" $(pc --cflags --libs crew)
    LD_LIBRARY_PATH="$(pc --variable=libdir crew)" "$work/consumer_coro_pc" >/dev/null ||
        fail "pkg-config: consumer_coro.cpp failed"
fi
# shellcheck disable=SC2046
cc -o "$work/consumer_compat_pc" "$src/tests/package/consumer_compat.c" \
    $(pc --cflags --libs crew-thpool crew-threadpool)
LD_LIBRARY_PATH="$(pc --variable=libdir crew)" "$work/consumer_compat_pc" >/dev/null ||
    fail "pkg-config: consumer_compat.c failed"
# In this prefix, outside the system's library path, a program on the shared library starts
# without LD_LIBRARY_PATH when it carries the library's directory as its run path: linked with
# -Wl,-rpath (pkg-config's libdir), or by CMake (find_package). The installed programs carry
# $ORIGIN/../<libdir> (CMakeLists.txt: CREW_INSTALL_RPATH) and start from anywhere.
# shellcheck disable=SC2046
cc -o "$work/consumer_rpath" "$src/tests/package/consumer.c" $(pc --cflags --libs crew) \
    -Wl,-rpath,"$(pc --variable=libdir crew)"
env -u LD_LIBRARY_PATH "$work/consumer_rpath" >/dev/null ||
    fail "pkg-config with -Wl,-rpath: consumer.c does not start without LD_LIBRARY_PATH"
env -u LD_LIBRARY_PATH "$work/cmake/consumer_shared" >/dev/null ||
    fail "find_package: consumer_shared does not start without LD_LIBRARY_PATH"
sim=$(find "$prefix" -type f -name crew-sim | head -1)
if [ -n "$sim" ]; then # built and installed unless CREW_BUILD_SIM=OFF
    readelf -d "$sim" | grep -E 'R(UN)?PATH' | grep -qF '$ORIGIN/../' ||
        fail "installed crew-sim has no \$ORIGIN run path: $(readelf -d "$sim" | grep PATH)"
    (cd / && env -u LD_LIBRARY_PATH "$sim" --help >/dev/null) || fail "installed crew-sim --help"
fi
# Each shared library exports its own API only (crew inside the drop-ins stays hidden).
exports() {
    so=$(find "$prefix" -name "$1.so.*.*" | head -1)
    [ -n "$so" ] || fail "$1.so not installed"
    nm -D --defined-only "$so" | awk -v ok="$2" '$2 == "T" && $3 !~ ok {print $3}'
}
for lib in "libcrew ^crew_" "libcrew_thpool ^thpool_" "libcrew_threadpool ^threadpool_"; do
    # shellcheck disable=SC2086
    bad=$(exports $lib)
    [ -z "$bad" ] || fail "${lib% *}.so exports other symbols: $bad"
done
echo "package_test: installed: every public header, find_package, pkg-config (plain paths)" \
    "and exports ok"

# 2. add_subdirectory, in a project without GoogleTest.
cmake -S "$src/tests/package" -B "$work/sub" "${gen[@]}" -DCREW_SUBPROJECT="$src" \
    -DCREW_CONSUMER_CORO=$coro -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON >"$work/sub.log" 2>&1 ||
    fail "add_subdirectory consumer did not configure: $(cat "$work/sub.log")"
targets=$(cmake --build "$work/sub" --target help)
for t in test_api test_c_header soak fig7_pool_vs_tpr bench_peers crew-sim http_server \
    compat_example_thpool test_compat_thpool; do
    if grep -qw -- "$t" <<<"$targets"; then fail "as a subproject crew defines target $t"; fi
done
[ ! -e "$work/sub/crew/CTestTestfile.cmake" ] || fail "as a subproject crew registers tests"
cmake --build "$work/sub" -j 2 >/dev/null || fail "add_subdirectory consumer did not build"
for exe in "${consumers[@]}"; do
    "$work/sub/$exe" >/dev/null || fail "add_subdirectory: $exe failed"
done
echo "package_test: add_subdirectory: libraries only, no GoogleTest needed, same crew:: names"

# 3. compat/README's link lines, from the source tree, with this build as README's build/release.
grep '^cc app.c .*build/release' "$src/compat/README.md" >"$work/lines"
[ "$(wc -l <"$work/lines")" -ge 2 ] || fail "compat/README.md has no cc lines"
i=0
while read -r line; do
    i=$((i + 1))
    case "$line" in *-lcrew_threadpool* | *libcrew_threadpool*) app=threadpool ;; *) app=thpool ;; esac
    line=${line//build\/release/$build}
    line=${line/app.c/$src/compat/examples/${app}_example.c}
    (cd "$src" && eval "$line -o $work/readme_$i") || fail "compat/README line failed: $line"
    LD_LIBRARY_PATH="$build/compat" "$work/readme_$i" >/dev/null || fail "compat/README program $i"
done <"$work/lines"
echo "package_test: compat/README's $i link lines build and run"
echo "package_test: ok"
