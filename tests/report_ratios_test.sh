#!/usr/bin/env bash
# The report's ratios agree with their medians (bench/check_ratios.sh), with no benchmark run:
# every committed reference report passes; a synthetic report fragment with a table of each kind
# (report_fragments/good.md) passes; the same fragment with wrong ratios planted (bad.md: every
# line that differs from good.md but the title) fails on exactly those lines; and the summary
# bench/summary.sh prints from good.md passes the same check.
#   tests/report_ratios_test.sh SOURCE_DIR
set -uo pipefail
src=$1
frag=$src/tests/report_fragments
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "report_ratios_test: FAILED: $*" >&2; failed=1; }
check=$src/bench/check_ratios.sh

refs=("$src"/bench/reference/*/report.md)
[ -f "${refs[0]}" ] || fail "no reference report under bench/reference/"
"$check" "${refs[@]}" || fail "a reference report has a ratio that disagrees with its medians"

out=$("$check" "$frag/good.md") || fail "good.md: $out"
n=$(sed -n 's/.*: \([0-9]*\) ratios checked.*/\1/p' <<<"$out")
[ "${n:-0}" -ge 30 ] || fail "good.md: only ${n:-0} ratios checked, not the 30 it holds"

"$check" -q "$frag/bad.md" >"$work/bad.out"
rc=$?
[ $rc = 1 ] || fail "bad.md: exit status $rc, not 1"
# The planted lines (all that differ from good.md after the title) against the lines flagged.
awk 'NR == FNR { g[FNR] = $0; next } FNR > 1 && $0 != g[FNR] { print FNR }' \
    "$frag/good.md" "$frag/bad.md" | sort -n >"$work/planted"
sed -n 's/^[^:]*bad\.md:\([0-9][0-9]*\): .*/\1/p' "$work/bad.out" | sort -n -u >"$work/flagged"
[ -s "$work/planted" ] || fail "bad.md plants nothing"
cmp -s "$work/planted" "$work/flagged" ||
    fail "bad.md: planted on lines $(echo $(cat "$work/planted")), flagged $(echo $(cat "$work/flagged")): $(cat "$work/bad.out")"

# bench/summary.sh on the fragment: its table, under a summary heading, checks clean and has
# a row per workload of crew and a peer.
{ echo "## Summary"; echo; "$src/bench/summary.sh" "$frag/good.md"; } >"$work/summary.md" ||
    fail "bench/summary.sh good.md failed"
"$check" "$work/summary.md" >/dev/null || fail "summary.sh's table: $("$check" "$work/summary.md")"
rows=$(grep -c '^| [^w-]' "$work/summary.md")
[ "$rows" = 7 ] || fail "summary.sh printed $rows rows from good.md: $(cat "$work/summary.md")"
grep -q '^| workload | best peer | peer figure | crew figure | unit | crew/peer ratio | leads |$' \
    "$work/summary.md" || fail "summary.sh: not the agreed columns"
[ $failed = 0 ] && echo "report_ratios_test: ok"
exit $failed
