#!/usr/bin/env bash
# The HTTP example under load from wrk on 127.0.0.1: the crew-pool server against the same server
# with a thread per connection, per endpoint. Four servers:
#   pool         `cores` workers; /slow (a request that sleeps) runs as a CREW_TASK_BLOCKING task
#                on the pool's blocking threads, as README advises: the example's default
#   pool -B      the same pool with /slow sleeping on the workers (http_server -B), which then
#                serve sleeping requests `cores` at a time
#   pool x16 -B  16 workers per core, sleeping on the workers: a pool sized for the waits
#   thread       a thread per connection
# The servers start once and stay up; runs go in rounds, each round loading every endpoint on the
# servers one after the other (the order rotating every round), so the ratios to
# thread-per-connection are per round, side by side. Prints requests/s, median (min..max) over the
# runs, the ratio of its median to thread-per-connection's with the range of the per-round ratios,
# and the latency percentiles wrk reports (medians over the runs).
# usage: bench/http.sh [-r runs] [-e endpoint,...] [-w wrk_threads] [-c out.csv] [seconds]
#                      [connections]   (-h, --help: this text)
#   defaults: 5 runs, /static,/cpu?n=20000,/slow?ms=5, wrk threads max(2, cores / 4), 2 s, 64
# Needs wrk (skips with a note without it). CSV columns: endpoint, server, run, req_s, p50_ms,
# p99_ms, errors.
set -euo pipefail
cd "$(dirname "$0")/.."
cores=$(nproc)
runs=5 endpoints="/static,/cpu?n=20000,/slow?ms=5" csv="" wrk_threads=$((cores / 4))
[ "$wrk_threads" -lt 2 ] && wrk_threads=2
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; } # this header
[ "${1:-}" = "--help" ] && { usage; exit 0; }
while getopts "r:e:w:c:h" o; do
    case $o in
        r) runs=$OPTARG ;;
        e) endpoints=$OPTARG ;;
        w) wrk_threads=$OPTARG ;;
        c) csv=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
dur=${1:-2} conns=${2:-64}
server=${CREW_BENCH_BUILD:-build/release}/examples/http_server
if ! command -v wrk >/dev/null; then
    echo "wrk is not installed (Debian package wrk): HTTP load test skipped"
    exit 0
fi
IFS=, read -r -a eps <<<"$endpoints"
modes=("pool" "pool -B" "pool x16 -B" "thread")
margs=("-m pool -t $cores" "-m pool -t $cores -B" "-m pool -t $((cores * 16)) -B" "-m thread")
nservers=${#modes[@]}
tmp=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
ports=()
for ((i = 0; i < nservers; i++)); do
    # shellcheck disable=SC2086
    "$server" ${margs[$i]} >"$tmp/server$i.log" &
    pids+=($!)
done
for ((i = 0; i < nservers; i++)); do
    for _ in $(seq 50); do grep -q listening "$tmp/server$i.log" && break; sleep 0.1; done
    port=$(sed -n 's/listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/server$i.log")
    [ -n "$port" ] || { echo "http_server (${modes[$i]}) did not start"; exit 1; }
    ports+=("$port")
done

# One tab-separated line per run: endpoint, server, run, req/s, p50 ms, p99 ms, errors.
for ((r = 0; r < runs; r++)); do
    for ep in "${eps[@]}"; do
        for ((k = 0; k < nservers; k++)); do
            i=$(((k + r) % nservers))
            wrk -t "$wrk_threads" -c "$conns" -d "${dur}s" --latency \
                "http://127.0.0.1:${ports[$i]}$ep" >"$tmp/wrk.out" 2>&1 || true
            awk -v ep="$ep" -v mode="${modes[$i]}" -v r="$r" '
                function ms(s) { # wrk prints 610.00us, 1.03ms, 1.20s, 2.00m
                    if (s ~ /us$/) return s * 0.001
                    if (s ~ /ms$/) return s + 0
                    if (s ~ /m$/) return s * 60000
                    if (s ~ /s$/) return s * 1000
                    return s + 0
                }
                /Requests\/sec/ { rps = $2 }
                $1 == "50%" { p50 = ms($2) }
                $1 == "99%" { p99 = ms($2) }
                /Socket errors/ { gsub(/[^0-9 ]/, " "); for (j = 1; j <= NF; j++) err += $j }
                /Non-2xx/ { err += $NF }
                END { printf "%s\t%s\t%d\t%.2f\t%.3f\t%.3f\t%d\n", ep, mode, r, rps, p50, p99, err }
            ' "$tmp/wrk.out" >>"$tmp/runs.tsv"
        done
    done
done
if [ -n "$csv" ]; then
    { echo "endpoint,server,run,req_s,p50_ms,p99_ms,errors"; tr '\t' ',' <"$tmp/runs.tsv"; } >"$csv"
fi

echo "wrk -t $wrk_threads -c $conns, $dur s per run, $runs runs per cell, in rounds: each round" \
    "loads every endpoint on the four servers, the order rotating. pool: $cores workers, /slow" \
    "on blocking tasks (CREW_TASK_BLOCKING); pool -B: the same with /slow sleeping on the" \
    "workers; pool x16 -B: $((cores * 16)) workers, /slow on them; thread: one per connection." \
    "Medians with (min..max). x thread: the median req/s over thread-per-connection's (> 1:" \
    "the pool is ahead), with the range of the ratios round by round. p50, p99: medians over" \
    "the runs." |
    fmt -w 96
awk -F'\t' '
    function sort(a, n,    i, j, t) { # insertion sort of a[1..n] (mawk has no asort)
        for (i = 2; i <= n; i++) {
            t = a[i]
            for (j = i - 1; j >= 1 && a[j] > t; j--)
                a[j + 1] = a[j]
            a[j + 1] = t
        }
    }
    # med, lo, hi of v[key, 1..m]: the median (the upper one of an even count), min and max
    function pick(v, key, m,    a, i) {
        for (i = 1; i <= m; i++)
            a[i] = v[key, i] + 0
        sort(a, m)
        med = a[int(m / 2) + 1]; lo = a[1]; hi = a[m]
    }
    {
        key = $1 SUBSEP $2
        if (!(key in n)) { order[++nk] = key; ep[key] = $1; srv[key] = $2 }
        i = ++n[key]; rps[key, i] = $4; p50[key, i] = $5; p99[key, i] = $6; err[key] += $7
        run[key, i] = $3; byrun[$1, $2, $3] = $4
    }
    END {
        printf "%-14s %-11s   %-28s   %-19s   %6s   %-24s   %s\n", "endpoint", "server",
            "req/s median (min..max)", "x thread (min..max)", "p50 ms",
            "p99 ms median (min..max)", "errors"
        for (k = 1; k <= nk; k++) {
            key = order[k]; m = n[key]
            pick(rps, key, m); r1 = med; r2 = lo; r3 = hi
            pick(p50, key, m); l50 = med
            pick(p99, key, m); l1 = med; l2 = lo; l3 = hi
            ratio = ""
            tk = ep[key] SUBSEP "thread"
            if (srv[key] != "thread" && (tk in n)) {
                pick(rps, tk, n[tk]); tm = med
                for (i = 1; i <= m; i++) {
                    t = byrun[ep[key], "thread", run[key, i]]
                    q[key, i] = t > 0 ? rps[key, i] / t : 0
                }
                pick(q, key, m)
                ratio = sprintf("%5.2f (%.2f..%.2f)", tm > 0 ? r1 / tm : 0, lo, hi)
            }
            printf "%-14s %-11s   %9.0f (%7.0f..%7.0f)   %-19s   %6.2f   %-24s   %s\n",
                ep[key], srv[key], r1, r2, r3, ratio, l50,
                sprintf("%6.2f (%.2f..%.2f)", l1, l2, l3),
                err[key] ? err[key] " in " m " runs" : "none"
        }
    }' "$tmp/runs.tsv"
