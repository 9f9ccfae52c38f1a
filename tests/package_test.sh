#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds a small consumer against it both ways:
# with CMake (find_package(crew), shared and static targets) and with pkg-config; runs all three.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/tests/package" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib/x86_64-linux-gnu" "$work/cmake/consumer_shared"
"$work/cmake/consumer_static"
pcdir=$(dirname "$(find "$work/prefix" -name crew.pc | head -1)")
# shellcheck disable=SC2046
cc -o "$work/consumer_pc" "$src/tests/package/consumer.c" \
    $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs crew)
LD_LIBRARY_PATH="$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir crew)" "$work/consumer_pc"
# Only crew_ symbols leave the shared library.
so=$(find "$work/prefix" -name 'libcrew.so.*.*' | head -1)
bad=$(nm -D --defined-only "$so" | awk '$2 == "T" && $3 !~ /^crew_/ {print $3}')
if [ -n "$bad" ]; then
    echo "package_test: the shared library exports non-crew symbols: $bad" >&2
    exit 1
fi
echo "package_test: ok"
