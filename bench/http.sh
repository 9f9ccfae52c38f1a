#!/usr/bin/env bash
# The HTTP example under load from wrk on 127.0.0.1: the crew-pool server against the same server
# with a thread per connection, per endpoint; "pool x16" is the pool with 16 workers per core,
# sized for I/O waits (until blocking tasks and automatic sizing land, a pool of `cores` workers
# serves sleeping requests `cores` at a time). Prints requests/s and latency percentiles.
#   bench/http.sh [duration_s] [connections]      (needs wrk; skips with a note without it)
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-5} conns=${2:-64}
server=build/release/examples/http_server
if ! command -v wrk >/dev/null; then
    echo "wrk is not installed (Debian package wrk): HTTP load test skipped"
    exit 0
fi
threads=$(nproc)
for endpoint in "/static" "/cpu?n=20000" "/slow?ms=5"; do
    for mode in pool "pool x16" thread; do
        log=$(mktemp)
        t=$threads
        [ "$mode" = "pool x16" ] && t=$((threads * 16))
        "$server" -m "${mode%% *}" -t "$t" >"$log" &
        pid=$!
        for _ in $(seq 50); do grep -q listening "$log" && break; sleep 0.1; done
        port=$(sed -n 's/listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$log")
        out=$(wrk -t 2 -c "$conns" -d "${dur}s" --latency "http://127.0.0.1:$port$endpoint")
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        rm -f "$log"
        rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
        p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
        p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
        errors=$(echo "$out" | awk '/Non-2xx|Socket errors/ {print}' | tr '\n' ' ')
        printf '%-14s %-9s %12s req/s   p50 %9s   p99 %9s   %s\n' "$endpoint" "$mode" "$rps" \
            "$p50" "$p99" "${errors:-no errors}"
    done
done
