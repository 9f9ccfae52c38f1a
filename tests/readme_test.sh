#!/usr/bin/env bash
# Keeps README.md and the guides in docs/ true:
# - README reads as a first screen: at most 260 lines, README's two commands (`make test`,
#   `make bench`, with their times "about N minutes on 2 cores") within its first 60 lines, every
#   link to a file of this tree (docs/..., include/..., bench/...) resolving, in README and in the
#   pages of docs/; the peer table's marker lines once each (and, where bench/summary.sh exists,
#   the table as tools/readme-table.sh would write it);
# - docs/layout.md's Layout section names every file of the directories it lists file by file;
# - every code block of README.md and docs/*.md marked <!-- example: NAME.c|.cpp|.cpp20 --> is
#   compiled and run (.cpp20: C++20, skipped with a message by a compiler without <coroutine>),
#   against the build's headers and static library, so the examples cannot rot.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "readme_test: $*" >&2; exit 1; }

# README's first screen.
lines=$(wc -l <"$src/README.md")
[ "$lines" -le 260 ] || fail "README.md has $lines lines; at most 260 (move reference material to docs/)"
top=$(head -60 "$src/README.md")
for cmd in "make test" "make bench"; do
    grep -q "^$cmd " <<<"$top" || fail "README.md's first 60 lines lack the command line '$cmd'"
    grep -q "\`$cmd\` takes about [0-9]* minutes on 2 cores\|\`$cmd\` about [0-9]* minutes on 2 cores" <<<"$top" ||
        fail "README.md's first 60 lines do not say how long '$cmd' takes (about N minutes on 2 cores)"
done
echo "readme_test: README.md has $lines lines and its two commands near the top"

# Every link to a file of this tree resolves (README, and each page of docs/ from its own folder);
# web links and links within a page (#...) are not checked.
broken=()
for page in "$src/README.md" "$src"/docs/*.md; do
    dir=$(dirname "$page")
    while IFS= read -r target; do
        target=${target%%#*}
        case $target in "" | http://* | https://* | mailto:*) continue ;; esac
        [ -e "$dir/$target" ] || broken+=("${page#"$src"/} -> $target")
    done < <(awk '/^```/ { code = !code; next } !code' "$page" | sed 's/`[^`]*`//g' |
        grep -o '\](\([^)]*\))' | sed 's/^](\(.*\))$/\1/')
done
[ ${#broken[@]} -eq 0 ] || fail "links to files that do not exist: ${broken[*]}"
grep -q '](docs/guide-' "$src/README.md" || fail "README.md links to no guide in docs/"
echo "readme_test: every link of README.md and docs/ to a file resolves"

# The peer table: its markers once each; its content, where bench/summary.sh exists to make it.
for marker in '<!-- peer-table:begin -->' '<!-- peer-table:end -->'; do
    [ "$(grep -cxF -- "$marker" "$src/README.md")" = 1 ] || fail "README.md needs one line '$marker'"
done
"$src/tools/readme-table.sh" --help >/dev/null || fail "tools/readme-table.sh --help failed"
if [ -x "$src/bench/summary.sh" ]; then
    "$src/tools/readme-table.sh" --check || fail "README.md's peer table is stale: run tools/readme-table.sh"
else
    echo "readme_test: bench/summary.sh not in this tree: the peer table's figures are not checked"
fi

# The Layout names each public header (include/), each source file (src/*.c, and each src/*.h
# that belongs to no .c file: a module's own header is its "src/<module>.h" line), each example
# program (examples/), each page of docs/ and each tool (tools/).
layout=$(awk '/^## Layout/ { on = 1; next } on && /^## / { exit } on' "$src/docs/layout.md")
[ -n "$layout" ] || fail "docs/layout.md has no Layout section"
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
    echo "readme_test: docs/layout.md's Layout does not list: ${missing[*]}" >&2
    exit 1
fi
echo "readme_test: docs/layout.md lists every file of include/, src/, examples/, docs/ and tools/"

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

# The examples: each name once across README.md and docs/*.md.
dups=$(grep -ho '<!-- example: [^ ]*' "$src/README.md" "$src"/docs/*.md | sort | uniq -d)
[ -z "$dups" ] || fail "example names used twice: $dups"
for page in "$src/README.md" "$src"/docs/*.md; do
    awk -v dir="$work" '
        /<!-- example: / { match($0, /example: [^ ]+/); name = substr($0, RSTART + 9, RLENGTH - 9); next }
        name != "" && /^```/ && !inside { inside = 1; next }
        inside && /^```/ { inside = 0; close(dir "/" name); name = ""; next }
        inside { print > (dir "/" name) }
    ' "$page"
done
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
