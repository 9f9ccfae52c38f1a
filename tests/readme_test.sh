#!/usr/bin/env bash
# Compiles and runs every code block of README.md marked <!-- example: NAME.c|.cpp|.cpp20 -->
# (.cpp20: C++20, skipped with a message by a compiler without <coroutine>), against the build's
# headers and static library, so the README's examples cannot rot. And checks that README's
# Layout section names every file of the directories it lists file by file.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The Layout names each public header (include/), each source file (src/*.c, and each src/*.h
# that belongs to no .c file: a module's own header is its "src/<module>.h" line), each example
# program (examples/), each page of docs/ and each tool (tools/).
layout=$(awk '/^## Layout/ { on = 1; next } on && /^## / { exit } on' "$src/README.md")
[ -n "$layout" ] || { echo "readme_test: README.md has no Layout section" >&2; exit 1; }
missing=()
listed() { grep -qwF -- "$1" <<<"$layout"; }
for f in "$src"/include/* "$src"/src/*.c "$src"/src/*.h "$src"/docs/*.md "$src"/tools/*; do
    case $f in
    *.h) [ -e "${f%.h}.c" ] && listed "src/<module>.h" && continue ;;
    esac
    listed "${f##*/}" || missing+=("${f#"$src"/}")
done
for f in "$src"/examples/*.c "$src"/examples/*.cpp; do
    name=${f##*/}
    listed "${name%.*}" || missing+=("${f#"$src"/}")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "readme_test: README.md's Layout does not list: ${missing[*]}" >&2
    exit 1
fi
echo "readme_test: the Layout lists every file of include/, src/, examples/, docs/ and tools/"

# The published files name experiments by what they measure, never by an internal number
# ("seed" followed by digits); the stored reports under bench/reference/ are history.
internal=$(cd "$src" && grep -rniE 'seed[ _-]?[0-9]{3}' README.md docs bench examples include src \
    compat sim tools CMakeLists.txt Makefile tests --exclude-dir=reference \
    --exclude=readme_test.sh || true)
if [ -n "$internal" ]; then
    echo "readme_test: internal names in published files:" >&2
    echo "$internal" >&2
    exit 1
fi

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
