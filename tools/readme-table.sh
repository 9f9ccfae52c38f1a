#!/usr/bin/env bash
# Owns README.md's table of measured figures against the peers: rewrites, in place, the block
# between the lines <!-- peer-table:begin --> and <!-- peer-table:end --> from a benchmark
# report's own summary (bench/summary.sh REPORT prints it as a markdown table), headed by one
# line naming the report, its machine and its commit, so README's figures cannot drift from the
# report they cite.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: tools/readme-table.sh [--check] [REPORT]

Rewrites README.md's peer table (between <!-- peer-table:begin --> and <!-- peer-table:end -->)
from REPORT's summary, as printed by bench/summary.sh REPORT, headed by a line naming REPORT,
the machine it ran on and the commit it measured. REPORT defaults to the newest stored reference
report, the last bench/reference/*/report.md in name (date) order.

  --check   write nothing; exit 1 if README.md's block differs from what would be written
  --help    this text

Exit status: 0 done (or, with --check, up to date); 1 the block differs (--check), or
bench/summary.sh or the report is missing, or README.md lacks the marker lines; 2 bad usage.
EOF
}

check=0 report=
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --check) check=1 ;;
    -*) echo "tools/readme-table.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    *)
        [ -z "$report" ] || { echo "tools/readme-table.sh: one report at most (try --help)" >&2; exit 2; }
        report=$1 ;;
    esac
    shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
summary=bench/summary.sh
if [ ! -x "$summary" ]; then
    echo "tools/readme-table.sh: $summary is missing (or not executable): it prints a report's" \
        "one-page summary as the markdown table this script puts into README.md" >&2
    exit 1
fi
if [ -z "$report" ]; then
    report=$(printf '%s\n' bench/reference/*/report.md | LC_ALL=C sort | tail -1)
fi
[ -f "$report" ] || { echo "tools/readme-table.sh: no report at $report" >&2; exit 1; }
for marker in '<!-- peer-table:begin -->' '<!-- peer-table:end -->'; do
    n=$(grep -cxF -- "$marker" README.md || true)
    [ "$n" = 1 ] || { echo "tools/readme-table.sh: README.md has $n lines '$marker' (needs 1)" >&2; exit 1; }
done

# The header line: the report's date, host line and commit ("- date: ...", "- host: ...").
field() { sed -n "s/^- $1: //p" "$report" | head -1; }
date=$(field date) host=$(field host) commit=$(field commit)
table=$("$summary" "$report")
[ -n "$table" ] || { echo "tools/readme-table.sh: $summary printed nothing for $report" >&2; exit 1; }

work=$(mktemp)
trap 'rm -f "$work" "$work.block"' EXIT
{
    echo "From [$report]($report): ${date%%T*}, host $host, commit $commit."
    echo
    printf '%s\n' "$table"
} >"$work.block"
awk -v block="$work.block" '
    $0 == "<!-- peer-table:begin -->" { print; while ((getline line < block) > 0) print line; skip = 1; next }
    $0 == "<!-- peer-table:end -->" { skip = 0 }
    !skip
' README.md >"$work"

if [ $check = 1 ]; then
    if ! cmp -s "$work" README.md; then
        echo "tools/readme-table.sh: README.md's peer table differs from $report's summary;" \
            "run tools/readme-table.sh to rewrite it" >&2
        diff README.md "$work" >&2 || true
        exit 1
    fi
    echo "tools/readme-table.sh: README.md's peer table matches $report"
    exit 0
fi
cat "$work" >README.md
echo "tools/readme-table.sh: README.md's peer table rewritten from $report"
