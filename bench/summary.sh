#!/usr/bin/env bash
# The one-page summary of a benchmark report: for each headline workload, crew's figure against
# the best peer's, read from the report's own sections (so it works on any report bench/run.sh
# wrote, old layout or new), printed as a markdown table. bench/run.sh puts it at the top of each
# report; tools/readme-table.sh builds README's table from it. Plain bash and awk.
#   bench/summary.sh REPORT.md
set -euo pipefail
usage() {
    cat <<'EOF'
usage: bench/summary.sh REPORT.md
Prints, as a markdown table, crew against the best peer on each headline workload of a
benchmark report (bench/results/<date>-<host>/report.md or bench/reference/*/report.md):
| workload | best peer | peer figure | crew figure | unit | crew/peer ratio | leads |
The figures are the medians the report prints; the ratio is crew's figure over the peer's
(below 1: crew better for times and counts; above 1: crew better for rates and speedups).
A line under the table says so. Workloads the report did not run are left out.
  -h, --help   this text
Exit status: 0, or 2 on a bad argument or an unreadable report.
EOF
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
"") echo "bench/summary.sh: no report given" >&2; usage >&2; exit 2 ;;
esac
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
    echo "bench/summary.sh: cannot read report '$*'" >&2
    usage >&2
    exit 2
fi

awk '
# A printed number (3.309e+07, 0.8467, 1687) -> its value; anything else -> "".
function num(s) { return s ~ /^-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/ ? s + 0 : "" }
# The line with every parenthesised group (a min..max range, a note) removed.
function bare(s) { gsub(/\([^)]*\)/, " ", s); return s }
# Remember a candidate for workload w: name, printed figure, unit, "time" or "rate" (which
# way is better), and whether it is crew (1) or a peer (0). Workloads keep their first-seen order.
function cand(w, name, fig, unit, dir, iscrew,   v) {
    v = num(fig)
    if (v == "") return
    if (!(w in seen)) { seen[w]; order[++nw] = w }
    wunit[w] = unit; wdir[w] = dir
    if (iscrew) { cfig[w] = fig; return }
    if (!(w in pfig) || (dir == "rate" ? v > pfig[w] + 0 : v < pfig[w] + 0)) {
        pfig[w] = fig; pname[w] = name
    }
}
function isnum(s) { return num(s) != "" }

# The rows a section keeps until its end: Fig. 7 and the I/O section at their largest size, the
# primitives at their largest n.
function flush(   i, f, w) {
    if (f7n != "") {
        w = "Fig. 7: " f7n " tasks of work_large per call"
        cand(w, "crew", f7p, "us", "time", 1)
        cand(w, "thread-per-request", f7t, "us", "time", 0)
        f7n = ""
    }
    for (i = 1; i <= nprim; i++) {
        split(primrow[i], f, " ")
        if (f[2] + 0 == primn[f[1]])
            cand("parallel " f[1] ", " f[2] " doubles", f[3], f[4], "us", "time", f[3] == "crew")
    }
    nprim = 0
    if (ion) {
        w = "I/O tasks with 40 ms time-outs, " ion " workers: speedup"
        cand(w, "crew", iorow[ion " crew-workers"], "x", "rate", 1)
        cand(w, "boost.asio", iorow[ion " boost.asio"], "x", "rate", 0)
        ion = 0
    }
}
/^## / {
    flush()
    sec = ""
    if ($0 ~ /^## Pool vs thread-per-request/) sec = "fig7"
    else if ($0 ~ /^## crew against the pools/) sec = "peers"
    else if ($0 ~ /^## Instructions per empty task/) { sec = "instr"; instr_done = 0 }
    else if ($0 ~ /^## Parallel primitives/) sec = "prim"
    else if ($0 ~ /^## HTTP server/) sec = "http"
    else if ($0 ~ /^## Blocking file I\/O/) sec = "mix"
    else if ($0 ~ /^## I\/O-bound tasks/) sec = "io"
    else if ($0 ~ /^## Time: delayed tasks/) sec = "timers"
    table = ""
    next
}
sec == "" { next }

# Fig. 7: "threads  tpr (min..max)  pool (min..max)  ratio"; the largest thread count is kept.
sec == "fig7" {
    split(bare($0), f, " ")
    if (f[1] ~ /^[0-9]+$/ && isnum(f[2]) && isnum(f[3])) { f7n = f[1]; f7t = f[2]; f7p = f[3] }
    next
}

# bench_peers: a title "WORKLOAD (UNIT)", a header, then "peer median (min..max) ratio" rows
# up to a blank line.
sec == "peers" {
    if ($0 ~ /^$/) { table = ""; next }
    if (table == "" && $0 ~ /\)$/ && $0 !~ /^peer /) {
        table = $0; unit = $0
        sub(/ \([^()]*\)$/, "", table); sub(/.* \(/, "", unit); sub(/\)$/, "", unit)
        if (unit ~ /, /) { table = table ", " substr(unit, index(unit, ", ") + 2)
                           unit = substr(unit, 1, index(unit, ", ") - 1) }
        next
    }
    if (table == "" || $1 == "peer" || $0 ~ /^per call/) { if ($0 ~ /^per call/) table = ""; next }
    if (!isnum($2)) next
    if ($1 == "crew" || $1 !~ /^crew/)
        cand(table, $1, $2, unit, unit ~ /\/s$/ ? "rate" : "time", $1 == "crew")
    next
}

# bench/instr.sh: the first block, "peer instr/task" then a row per pool.
sec == "instr" {
    if (instr_done) next
    if ($1 == "peer") { in_instr = 1; next }
    if (in_instr && $0 ~ /^$/) { in_instr = 0; instr_done = 1; next }
    if (in_instr && NF == 2 && $2 ~ /^[0-9]+$/ && ($1 == "crew" || $1 !~ /^crew-/))
        cand("instructions per empty task (callgrind)", $1, $2, "instructions", "time",
             $1 == "crew")
    next
}

# Parallel primitives: "sum ..." / "filter ..." titles, rows "n=N impl median (min..max) ratio";
# kept at the largest n, against the parallel peers (the sequential loop is the baseline).
sec == "prim" {
    if ($1 == "sum" || $1 == "filter") { kind = $1; next }
    if ($1 !~ /^n=[0-9]+$/ || !isnum($3) || $2 == "sequential") next
    n = substr($1, 3) + 0
    if (n > primn[kind]) primn[kind] = n
    primrow[++nprim] = kind " " n " " $2 " " $3
    next
}

# HTTP: "endpoint server req/s (min..max) ...": the pool as README advises against a thread
# per connection.
sec == "http" {
    if ($1 !~ /^\// || !($2 == "pool" || $2 == "thread") || !isnum($3)) next
    cand("HTTP " $1 " (wrk, 64 connections)", $2 == "thread" ? "thread-per-connection" : $2,
         $3, "req/s", "rate", $2 == "pool")
    next
}

# Blocking mixes, Figs. 1 and 2 at 50% blocking: "block% impl ms (min..max) x crew".
sec == "mix" {
    if ($0 ~ /^Fig\. [0-9]+:/) { fig = $2; sub(/:$/, "", fig); what = $0
        mixw = fig == "1" ? "blocking I/O + compute tasks, 50% blocking" : \
               fig == "2" ? "blocking I/O + empty tasks, 50% blocking" : ""
        next }
    if (mixw == "" || $1 != "50" || !isnum($3)) next
    if ($2 == "crew" || $2 !~ /^crew/)
        cand(mixw, $2, $3, "ms", "time", $2 == "crew")
    next
}

# I/O-bound tasks with time-outs: "N impl speedup (min..max) failures% ..."; the largest N.
sec == "io" {
    if ($1 !~ /^[0-9]+$/ || !isnum($3) || NF < 6) next
    if ($1 + 0 > ion) { ion = $1 + 0 }
    iorow[$1 " " $2] = $3
    next
}

# Timers: "load peer once 1ms p50 (..) p99 (..) ...": p99 of a 1 ms delayed task; a thread
# sleeping alone (nanosleep) is the floor, not a pool.
sec == "timers" {
    split(bare($0), f, " ")
    if ((f[1] != "idle" && f[1] != "busy") || f[3] != "once" || f[4] != "1ms") next
    if (f[2] == "nanosleep" || !isnum(f[6])) next
    cand("1 ms delayed task, " f[1] " pool: p99 lateness", f[2], f[6], "us", "time",
         f[2] == "crew")
    next
}

function fmt_ratio(r) { return sprintf(r >= 100 ? "%.0f" : "%#.3g", r) }
END {
    flush()
    rows = 0; body = ""
    for (i = 1; i <= nw; i++) {
        w = order[i]
        if (!(w in cfig) || !(w in pfig) || pfig[w] + 0 <= 0) continue
        c = cfig[w] + 0; p = pfig[w] + 0
        if (c == p) lead = "even"
        else if (wdir[w] == "rate") lead = c > p ? "crew" : pname[w]
        else lead = c < p ? "crew" : pname[w]
        body = body sprintf("| %s | %s | %s | %s | %s | %s | %s |\n", w, pname[w], pfig[w],
            cfig[w], wunit[w], fmt_ratio(c / p), lead)
        rows++
    }
    if (!rows) exit 1 # nothing to print: no half table
    print "| workload | best peer | peer figure | crew figure | unit | crew/peer ratio | leads |"
    print "|---|---|---|---|---|---|---|"
    printf "%s", body
    print ""
    print "crew/peer ratio: crew'"'"'s figure over the best peer'"'"'s. For times and counts (us, ms, s,"
    print "instructions) below 1 means crew is better; for rates and speedups (tasks/s, req/s, x)"
    print "above 1 means crew is better. The figures are the medians the sections below print."
}' "$1" || { echo "bench/summary.sh: no workload of crew and a peer found in $1" >&2; exit 2; }
