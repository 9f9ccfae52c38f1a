#!/usr/bin/env bash
# The report's goals table: each goal of the fast-path work (fork-join, skynet as users write it,
# one task at a time, the one-producer rate, the wake-up, the burst, the bounded queue, delayed
# tasks' lateness) with its figure from one run, the goal and whether it is met. bench/run.sh
# prints it under the summary, from the files its sections leave in the results folder; run by
# hand it rebuilds the table of any results folder. A file or figure the run did not produce
# reads n/a. Plain bash and awk.
#   bench/goals.sh RESULTS_DIR
set -euo pipefail
usage() {
    cat <<'EOF'
usage: bench/goals.sh RESULTS_DIR
Prints, as a markdown table (| goal | this run | goal | met |), each goal of the fast paths
with its figure from the benchmark run whose files are in RESULTS_DIR (a folder bench/run.sh
wrote): peers.csv and peers.txt (crew against peers), users.csv and users.txt (skynet as
users write it, the bounded queue), empty_tasks.txt, instr.txt (bench/instr.sh) and
timers.csv (bench_timers). Every time ratio is the median of the first over that of the
second, both from the same run of one benchmark (below 1: the first is faster). A file or
figure the run did not produce reads n/a.
  -h, --help   this text
Exit status: 0, or 2 on a bad argument.
EOF
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
"") echo "bench/goals.sh: no results folder given" >&2; usage >&2; exit 2 ;;
-*) echo "bench/goals.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
esac
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "bench/goals.sh: '$*' is not a results folder" >&2
    usage >&2
    exit 2
fi
dir=$1
inputs=()
for f in peers.csv peers.txt users.csv users.txt empty_tasks.txt instr.txt timers.csv; do
    [ -f "$dir/$f" ] && inputs+=("$dir/$f")
done
[ ${#inputs[@]} -gt 0 ] || inputs=(/dev/null)
awk '
    function med(k,   n, i, j, t, a) { # the median as bench_peers and bench_timers take it: v[n / 2]
        n = cnt[k]
        if (!n) return -1
        for (i = 1; i <= n; i++) a[i] = val[k, i]
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
            if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return a[int(n / 2) + 1]
    }
    function num(x) { return sprintf(x >= 1000 ? "%.0f" : "%.4g", x) } # no exponent
    function row(what, fig, goal, met) {
        printf "| %s | %s | %s | %s |\n", what, fig, goal, met
    }
    function na(what, goal, why) { row(what, "n/a (" why ")", goal, "n/a") }
    # Two figures x (of a) and y (of b) as a ratio x / y against the most it may be.
    function pair(what, a, x, b, y, most, unit,   r) {
        if (x == "" || x <= 0 || y == "" || y <= 0) {
            na(what, "<= " most "x", (x == "" || x <= 0 ? a : b) " did not run")
            return
        }
        r = sprintf(x / y < 0.095 ? "%.2g" : "%.2f", x / y) # met or not as printed
        row(what, sprintf("%sx (%s %s %s, %s %s %s)", r, a, num(x), unit, b, num(y), unit),
            "<= " most "x", r + 0 <= most ? "met" : "not met")
    }
    # A time ratio of medians a / b of workload w (src: p for peers.csv, u for users.csv).
    function ratio(what, src, w, a, b, most, unit, scale,   x, y) {
        x = med(src SUBSEP w SUBSEP a); y = med(src SUBSEP w SUBSEP b)
        pair(what, a, x > 0 ? x * scale : -1, b, y > 0 ? y * scale : -1, most, unit)
    }
    function count(what, n, most, why) { # an instruction count against the most it may be
        if (n == "") na(what, "<= " most, why)
        else row(what, n, "<= " most, n + 0 <= most ? "met" : "not met")
    }
    FILENAME ~ /(peers|users)\.csv$/ && FNR > 1 {
        split($0, f, ","); k = (FILENAME ~ /users\.csv$/ ? "u" : "p") SUBSEP f[1] SUBSEP f[2]
        val[k, ++cnt[k]] = f[5]; next
    }
    FILENAME ~ /peers\.txt$/ {
        if ($2 == "p99" && $3 ~ /^[0-9.e+]+$/) p99[$1] = $3
        if ($0 ~ /^fib\([0-9]+\) \(s\)$/) fib = $1
        if ($0 ~ /^skynet, [0-9]+ tasks \(s\)$/) sky = $1 " " $2 " " $3
        if ($0 ~ /^[0-9]+ fork-join rounds/) rounds = $1
        next
    }
    FILENAME ~ /users\.txt$/ {
        if ($0 ~ /^skynet, [0-9]+ tasks \(s\)$/) usky = $1 " " $2 " " $3
        if ($1 == "bounded:" && $2 ~ /^[0-9]+$/) { bjobs = $2; bus = $5; sub(/^~/, "", bus) }
        next
    }
    FILENAME ~ /empty_tasks\.txt$/ {
        if (match($0, /[0-9]+ tasks\/s median \(min [0-9]+/)) {
            split(substr($0, RSTART, RLENGTH), e, " ")
            mode = $0; sub(/^empty tasks \(/, "", mode); sub(/,.*/, "", mode)
            if (match($0, /[0-9]+ runs\)/)) runs = substr($0, RSTART, RLENGTH - 6)
            if (e[1] > 0 && (spread == "" || e[5] / e[1] < spread)) {
                spread = e[5] / e[1]; spread_mode = mode
            }
        }
        next
    }
    FILENAME ~ /instr\.txt$/ {
        if (NF == 0) block++
        if (block == 0 && $1 == "crew" && $2 ~ /^[0-9]+$/) ins_submit = $2
        if ($0 ~ /^one array \(monitoring off\) +[0-9]+$/) ins_array = $NF
        if ($0 ~ /^spawn-and-wait pair/ && $NF ~ /^[0-9]+$/) ins_join = $NF
        if ($0 ~ /^  of which fib_join/ && $NF ~ /^[0-9]+$/) ins_body = $NF
        if (index($0, "crew_submit, the worker runs them") == 1 && $NF ~ /^[0-9]+$/)
            ins_worker = $NF
        if (index($0, "crew_submit, a helping waiter runs them") == 1 && $NF ~ /^[0-9]+$/)
            ins_waiter = $NF
        next
    }
    # bench_timers: part,load,peer,kind,run,metric,value; lateness per run, one-shot delays.
    FILENAME ~ /timers\.csv$/ && FNR > 1 {
        split($0, f, ",")
        if (f[1] != "lateness" || f[4] !~ /^once / || f[6] !~ /^p(50|99)_us$/) next
        k = "t" SUBSEP f[2] SUBSEP f[4] SUBSEP f[6] SUBSEP f[3]
        val[k, ++cnt[k]] = f[7]
        if (!((f[4]) in delay_seen)) { delay_seen[f[4]]; delays[++nd] = f[4] }
        next
    }
    END {
        print "### Goals of the fast paths"
        print ""
        print "Each goal with its figure from this run (docs/benchmarks.md, \"Reading the report\")."
        print "A time ratio is the median of the first over that of the second, both measured side"
        print "by side in one section below (below 1: the first is faster or less late)."
        print ""
        print "| goal | this run | goal | met |"
        print "|---|---|---|---|"
        ratio((fib == "" ? "fib" : fib) ", crew-join / oneTBB time", "p", "fib", "crew-join",
            "onetbb", 0.15, "ms", 1000)
        count("instructions per spawn-and-wait pair (callgrind, one worker)", ins_join \
            (ins_join == "" || ins_body == "" ? "" : " (" ins_body " of them in the benchmark fib_join)"),
            100, "not counted")
        ratio((sky == "" ? "skynet" : sky) ", crew-join / oneTBB time", "p", "skynet",
            "crew-join", "onetbb", 0.4, "ms", 1000)
        us = usky == "" ? "skynet" : usky
        ratio(us ", crew (crew_enqueue_tasks + crew_wait) / oneTBB time", "u", "skynet", "crew",
            "onetbb", 0.4, "ms", 1000)
        ratio(us ", crew-tasks-wait (crew_enqueue_tasks_wait) / oneTBB time", "u", "skynet",
            "crew-tasks-wait", "onetbb", 0.4, "ms", 1000)
        ratio((rounds == "" ? "" : rounds " ") "fork-join rounds from outside, crew / oneTBB",
            "p", "forkjoin", "crew", "onetbb", 0.8, "us/round", 1)
        count("instructions per empty crew_submit task", ins_submit, 150, "not counted")
        count("instructions per empty crew_submit task, the worker runs them", ins_worker, 150,
            "not counted")
        count("instructions per empty crew_submit task, a helping waiter runs them", ins_waiter,
            150, "not counted")
        count("instructions per array task", ins_array, 60, "not counted")
        ratio("coroutine fib, crew-coro / crew-join time", "p", "fib", "crew-coro", "crew-join",
            1.5, "ms", 1000)
        ratio("wake-up of an idle pool, median: crew / textbook", "p", "wakeup", "crew",
            "textbook", 0.7, "us", 1)
        pair("wake-up of an idle pool, p99 of all trials: crew / textbook", "crew",
            ("crew" in p99) ? p99["crew"] : -1, "textbook",
            ("textbook" in p99) ? p99["textbook"] : -1, 1, "us")
        for (P = 1; P <= 64; P++)
            if (("p", "burst-P" P, "crew") in cnt)
                ratio("burst P=" P ", crew / oneTBB time per call", "p", "burst-P" P, "crew",
                    "onetbb", 1, "us", 1)
        # The one-producer rate (tasks/s, higher is better): crew over the best peer.
        c = med("p" SUBSEP "empty" SUBSEP "crew"); best = ""
        for (k in cnt) {
            split(k, kk, SUBSEP)
            if (kk[1] != "p" || kk[2] != "empty" || kk[3] ~ /^crew/) continue
            m = med(k); if (best == "" || m > bm) { best = kk[3]; bm = m }
        }
        if (c <= 0 || best == "") na("one-producer rate, crew / best peer", ">= 3x", "not run")
        else row("one-producer rate, crew / best peer",
            sprintf("%.2fx (crew %.3g M/s, %s %.3g M/s)", c / bm, c / 1e6, best, bm / 1e6),
            ">= 3x", sprintf("%.2f", c / bm) + 0 >= 3 ? "met" : "not met")
        if (spread == "") na("one-producer rate, slowest run / median", ">= 0.6", "not run")
        else row("one-producer rate, slowest of " runs " / median (the worse mode)",
            sprintf("%.2f (%s)", spread, spread_mode), ">= 0.6",
            sprintf("%.2f", spread) + 0 >= 0.6 ? "met" : "not met")
        # The bounded queue: crew at least 5% faster than the textbook pool.
        bw = ""
        for (k in cnt) {
            split(k, kk, SUBSEP)
            if (kk[1] == "u" && kk[2] ~ /^bounded-/) bw = kk[2]
        }
        bwhat = "bounded queue"
        if (bw != "") {
            split(bw, bq, "-"); sub(/^W/, "", bq[3])
            bwhat = "bounded queue of " substr(bq[2], 2) ", " bq[3] " threads" \
                (bjobs == "" ? "" : ", " bjobs " jobs of " bus " us")
        }
        ratio(bwhat ", crew / textbook time", "u", bw == "" ? "bounded" : bw, "crew",
            "textbook", 0.95, "ms", 1)
        # Delayed tasks: crew no later than Boost.Asio, per delay, load and percentile.
        if (nd == 0) na("delayed tasks lateness, crew / boost.asio", "<= 1x", "not run")
        for (d = 1; d <= nd; d++)
            for (l = 1; l <= 2; l++)
                for (q = 1; q <= 2; q++) {
                    load = l == 1 ? "idle" : "busy"; pc = q == 1 ? "p50" : "p99"
                    k = "t" SUBSEP load SUBSEP delays[d] SUBSEP pc "_us"
                    dl = substr(delays[d], 6); sub(/ms$/, " ms", dl)
                    what = dl " delayed task, " load " pool, " pc " lateness: crew / boost.asio"
                    if (!((k SUBSEP "crew") in cnt) && !((k SUBSEP "boost.asio") in cnt)) continue
                    x = med(k SUBSEP "crew"); y = med(k SUBSEP "boost.asio")
                    pair(what, "crew", x, "boost.asio", y, 1, "us")
                }
    }' "${inputs[@]}"
