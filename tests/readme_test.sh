#!/usr/bin/env bash
# Compiles and runs every code block of README.md marked <!-- example: NAME.c|.cpp|.cpp20 -->
# (.cpp20: C++20, skipped with a message by a compiler without <coroutine>), against the build's
# headers and static library, so the README's examples cannot rot.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v dir="$work" '
    /<!-- example: / { match($0, /example: [^ ]+/); name = substr($0, RSTART + 9, RLENGTH - 9); next }
    name != "" && /^```/ && !inside { inside = 1; next }
    inside && /^```/ { inside = 0; close(dir "/" name); name = ""; next }
    inside { print > (dir "/" name) }
' "$src/README.md"
count=0
for f in "$work"/*; do
    [ -e "$f" ] || continue
    case "$f" in
    *.c) cc -std=c11 -Wall -Wextra -Werror -I"$src/include" "$f" "$build/libcrew.a" -pthread -o "$f.bin" ;;
    *.cpp) c++ -std=c++17 -Wall -Wextra -Werror -I"$src/include" "$f" "$build/libcrew.a" -pthread -o "$f.bin" ;;
    *.cpp20)
        if ! echo '#include <coroutine>' | c++ -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
            echo "readme_test: $(basename "$f"): the compiler has no C++20 coroutines, skipped"
            continue
        fi
        c++ -std=c++20 -x c++ -Wall -Wextra -Werror -I"$src/include" "$f" -x none "$build/libcrew.a" \
            -pthread -o "$f.bin" ;;
    esac
    "$f.bin" >/dev/null
    echo "readme_test: $(basename "$f") compiled and ran"
    count=$((count + 1))
done
[ "$count" -ge 2 ] || { echo "readme_test: expected at least 2 examples, found $count" >&2; exit 1; }
