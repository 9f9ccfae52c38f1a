#!/usr/bin/env bash
# Checks that every ratio a benchmark report prints agrees with the medians it sits beside: each
# is recomputed from the printed medians (allowing for their rounding) and compared with the
# printed ratio, and the summary's "leads" column with its figures. The ctest test report_ratios
# runs it on the committed reference reports and on tests/data/report_fragments/; it needs no
# benchmark run. Plain bash and awk.
#   bench/check_ratios.sh [-q] REPORT.md...
set -euo pipefail
usage() {
    cat <<'EOF'
usage: bench/check_ratios.sh [-q] REPORT.md...
Recomputes every ratio in a benchmark report from the medians printed beside it (Fig. 7, the
peer and strategy tables, skynet as users write it and the bounded queue, the primitives,
HTTP, the sizing study, the blocking mixes, the I/O time-outs, the slot search, the summary,
the goals table and the task graphs' goals) and
prints each that disagrees with its medians beyond their rounding, and each summary row whose
"leads" contradicts its figures. Reports written before ratios were taken from the medians
(no "Every ratio beside two medians" line in the header) print medians of run-by-run ratios in
some tables: there only a ratio on the other side of 1 from its medians is an error.
  -q           print only the errors and the final count
  -h, --help   this text
Exit status: 0 if every ratio agrees, 1 if one does not, 2 on a bad argument.
EOF
}
quiet=0
case ${1:-} in
-h | --help) usage; exit 0 ;;
-q) quiet=1; shift ;;
esac
if [ $# -eq 0 ]; then
    echo "bench/check_ratios.sh: no report given" >&2
    usage >&2
    exit 2
fi
status=0
for report in "$@"; do
    if [ ! -r "$report" ]; then
        echo "bench/check_ratios.sh: cannot read '$report'" >&2
        usage >&2
        exit 2
    fi
    awk -v quiet=$quiet '
    # The value of a printed number, or "" if it is not one.
    function num(s) { return s ~ /^-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/ ? s + 0 : "" }
    # Half the last printed digit of a number: how far rounding may have moved it.
    function half(s,   m, e, d) {
        e = 0; m = s
        if (s ~ /e/) { e = substr(s, index(s, "e") + 1) + 0; m = substr(s, 1, index(s, "e") - 1) }
        d = index(m, ".") ? length(m) - index(m, ".") : 0
        return 0.5 * 10 ^ (e - d)
    }
    function bare(s) { gsub(/\([^)]*\)/, " ", s); return s }
    function err(msg) { printf "%s:%d: %s\n", FILENAME, errline ? errline : FNR, msg; bad++ }
    # Checks the printed ratio r against a / b, both printed medians. strict = 0: a ratio taken
    # run by run (an old report): only a ratio on the wrong side of 1 is an error.
    function check(r, a, b, what, strict,   va, vb, vr, lo, hi, dr) {
        va = num(a); vb = num(b); vr = num(r)
        if (va == "" || vb == "" || vr == "") return
        if (vb - half(b) <= 0 || va - half(a) < 0) return # rounded to nothing: unknowable
        lo = (va - half(a)) / (vb + half(b)); hi = (va + half(a)) / (vb - half(b))
        dr = half(r) + 1e-9; checked++
        if (strict) {
            if (vr + dr < lo * (1 - 1e-9) || vr - dr > hi * (1 + 1e-9))
                err(sprintf("%s: ratio %s, but %s / %s = %.4g", what, r, a, b, va / vb))
        } else if ((vr - dr > 1 && hi < 1) || (vr + dr < 1 && lo > 1))
            err(sprintf("%s: ratio %s says the opposite of %s / %s = %.4g", what, r, a, b,
                va / vb))
    }
    FNR == 1 { sec = ""; newfmt = 0 }
    /^Every ratio beside two medians is their ratio/ { newfmt = 1 }
    /^## / {
        sec = ""; tbl = ""; fig = ""
        if ($0 ~ /^## Pool vs thread-per-request/) sec = "fig7"
        else if ($0 ~ /^## crew against the pools/ || $0 ~ /^## Scheduling strategies/ ||
                 $0 ~ /^## Skynet as users write it/) sec = "peers"
        else if ($0 ~ /^## Parallel primitives/) sec = "prim"
        else if ($0 ~ /^## HTTP server/) sec = "http"
        else if ($0 ~ /^## Pool size, idle time/) sec = "sizing"
        else if ($0 ~ /^## Blocking file I\/O/) sec = "mix"
        else if ($0 ~ /^## I\/O-bound tasks/) sec = "io"
        else if ($0 ~ /^## Finding a slot/) sec = "fig9"
        else if ($0 ~ /^## Summary/ || $0 ~ /^### Fork-join and wake-up goals/ ||
                 $0 ~ /^### Goals of the fast paths/) sec = "summary"
        next
    }
    # The summary (new: crew/peer, leads; old: crew / best as crew s advantage) and the goals.
    /^\| / && $0 !~ /^\|---/ {
        n = split($0, c, /[ ]*\|[ ]*/) # c[1] empty, c[2..n-1] the cells
        if (c[2] == "workload" || c[2] == "goal") { head = c[3]; next }
        if (head == "best peer" && n >= 9) {
            what = "summary, " c[2]
            check(c[7], c[5], c[4], what, 1)
            cv = num(c[5]); pv = num(c[4])
            if (cv != "" && pv != "") {
                rate = c[6] ~ /\/s$/ || c[6] == "x"
                want = cv == pv ? "even" : (rate ? cv > pv : cv < pv) ? "crew" : c[3]
                if (c[8] != want) err(what ": leads says " c[8] ", the figures say " want)
            }
        } else if (head == "crew" && n >= 7) {
            split(c[3], cf, " "); split(c[6], rf, " ")
            rate = cf[2] ~ /\/s$/
            what = "summary, " c[2]
            if (rate) check(rf[1], cf[1], c[5], what, 1); else check(rf[1], c[5], cf[1], what, 1)
            if ((rf[1] + 0 < 1 && c[6] ~ /ahead/) || (rf[1] + 0 > 1 && c[6] ~ /behind/))
                err(what ": " c[6] " contradicts its ratio")
        } else if (head == "this run" &&
            match(c[3], /^[0-9.]+x \([^ ]+ [0-9.e+]+ [^,]*, [^ ]+ [0-9.e+]+/)) {
            split(c[3], g, /[ (,]+/)
            r = g[1]; sub(/x$/, "", r)
            check(r, g[3], g[6], "goals, " c[2], 1)
        }
        next
    }
    sec == "" { next }
    sec == "fig7" {
        split(bare($0), f, " ")
        if (f[1] ~ /^[0-9]+$/ && num(f[4]) != "")
            check(f[4], f[2], f[3], "Fig. 7, " f[1] " threads", newfmt)
        next
    }
    # bench_peers: a title ending in (UNIT), then rows "peer median (min..max) ratio"; the first
    # row with a figure is the reference (ratio 1.00).
    sec == "peers" {
        if ($0 ~ /^$/ || $0 ~ /^per call/) { tbl = ""; next }
        if ($1 == "peer") { tbl = prev; ref = ""; rate = tbl ~ /\/s\)$/; next }
        prev = $0
        if (tbl == "") next
        split(bare($0), f, " ")
        if (num(f[2]) == "" || num(f[3]) == "") next
        if (ref == "") { ref = f[2]; check(f[3], f[2], f[2], tbl ", " f[1], 1); next }
        if (rate) check(f[3], ref, f[2], tbl ", " f[1], 1)
        else check(f[3], f[2], ref, tbl ", " f[1], 1)
        next
    }
    # Primitives: "n=N impl median (min..max) ratio", the ratio over crew s median at that n.
    sec == "prim" {
        if ($1 == "sum" || $1 == "filter") { kind = $1; next }
        split(bare($0), f, " ")
        if (f[1] !~ /^n=/ || num(f[3]) == "" || num(f[4]) == "") next
        if (f[2] == "crew") pref[kind, f[1]] = f[3]
        if ((kind, f[1]) in pref)
            check(f[4], f[3], pref[kind, f[1]], kind " " f[1] " " f[2], 1)
        next
    }
    # HTTP: "endpoint server req/s (min..max) x-thread (min..max) ..." (server names have spaces).
    sec == "http" {
        if ($1 !~ /^\//) next
        line = bare($0); ep = $1
        sub(/^[^ ]+ +/, "", line)
        srv = line; sub(/ +[0-9].*/, "", srv)
        line = substr(line, length(srv) + 1)
        split(line, f, " ")
        if (srv == "thread") tput[ep] = f[1]
        else if (num(f[2]) != "" && f[2] ~ /\./) { hrow[++nh] = ep SUBSEP srv SUBSEP f[1] SUBSEP f[2]; hline[nh] = FNR }
        next
    }
    # Blocking mixes: per figure, "label impl ms (min..max) [x-crew (min..max)]".
    sec == "mix" {
        if ($0 ~ /^Fig\. [0-9]+:/) { fig = $2; sub(/:$/, "", fig); next }
        split(bare($0), f, " ")
        if (fig == "" || f[1] !~ /^[0-9]+$/ || num(f[3]) == "") next
        if (f[2] == "crew") mcrew[fig, f[1]] = f[3]
        else if (num(f[4]) != "") { mrow[++nm] = fig SUBSEP f[1] SUBSEP f[2] SUBSEP f[3] SUBSEP f[4]; mline[nm] = FNR }
        next
    }
    sec == "io" {
        if ($1 == "sequential:") { seq = $2; next }
        split(bare($0), f, " ")
        if (f[1] ~ /^[0-9]+$/ && num(f[3]) != "" && num(f[5]) != "" && seq != "")
            check(f[3], seq, f[5], "I/O time-outs, " f[1] " " f[2] " speedup", newfmt)
        next
    }
    sec == "fig9" {
        if ($1 == "threads" && $2 == "open") {
            lin = spr = 0
            for (i = 3; i <= NF; i++) { if ($i == "linear") lin = i; if ($i == "spread") spr = i }
            next
        }
        nf = split(bare($0), f, " ")
        if (f[1] ~ /^[0-9]+$/ && lin && spr && nf > spr)
            check(f[nf], f[spr], f[lin], "slots, " f[1] " threads " f[2] " open", newfmt)
        next
    }
    # Sizing: /best against the sweep s best, /ref against the static@ row above, then
    # BALANCE / AIT and Fig. 11 from the dynamic rows.
    sec == "sizing" {
        split(bare($0), f, " ")
        if ($1 == "workload" && $2 == "best") { inbest = 1; next }
        if ($0 ~ /^$/) inbest = 0
        if (inbest && num(f[3]) != "") { best[f[1]] = f[3]; next }
        if ($0 ~ /^2\. dynamic pools/) part = 2
        if ($0 ~ /^BALANCE against AIT/) part = 3
        if ($0 ~ /^3\. dynamic \/ static/) { part = 4; f11 = $0; sub(/.*Fig\. 11\), /, "", f11); sub(/:.*/, "", f11) }
        if (part == 2 && f[2] ~ /^static@/ && num(f[3]) != "") {
            sref = f[3]
            if (f[1] in best) check(f[4], f[3], best[f[1]], "sizing " f[1] " " f[2] " /best", 1)
        } else if (part == 2 && (f[2] == "AIT" || f[2] == "BALANCE") && num(f[4]) != "") {
            dyn[f[1], f[2], f[3]] = f[4]
            if (f[1] in best) check(f[5], f[4], best[f[1]], "sizing " f[1] " " f[2] " " f[3] " /best", 1)
            check(f[6], f[4], sref, "sizing " f[1] " " f[2] " " f[3] " /ref", newfmt)
        } else if (part == 3 && num(f[2]) != "" && num(f[3]) != "" && (f[1], "AIT", f[2]) in dyn)
            check(f[3], dyn[f[1], "BALANCE", f[2]], dyn[f[1], "AIT", f[2]],
                "sizing " f[1] " " f[2] " BALANCE / AIT", newfmt)
        else if (part == 4 && f[1] ~ /^[0-9]+$/ && num(f[3]) != "" && (f11, "AIT", f[1]) in dyn) {
            check(f[3], dyn[f11, "AIT", f[1]], f[2], "Fig. 11, start " f[1] " AIT / static", newfmt)
            check(f[4], dyn[f11, "BALANCE", f[1]], f[2], "Fig. 11, start " f[1] " BALANCE / static", newfmt)
        }
        next
    }
    function flush_rows(   i, k) {
        for (i = 1; i <= nh; i++) {
            split(hrow[i], k, SUBSEP)
            errline = hline[i]
            if (k[1] in tput) check(k[4], k[3], tput[k[1]], "HTTP " k[1] " " k[2], newfmt)
        }
        for (i = 1; i <= nm; i++) {
            split(mrow[i], k, SUBSEP)
            errline = mline[i]
            if ((k[1], k[2]) in mcrew) check(k[5], k[4], mcrew[k[1], k[2]], "blocking mix Fig. " k[1] " " k[2] "% " k[3], newfmt)
        }
        errline = 0
    }
    END {
        flush_rows()
        if (!quiet || bad) printf "%s: %d ratios checked, %d disagree with their medians\n", FILENAME, checked, bad
        exit bad ? 1 : 0
    }' "$report" || status=1
done
exit $status
