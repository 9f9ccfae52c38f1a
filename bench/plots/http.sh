# The HTTP section from $dir/http.csv (bench/http.sh -c), sourced by bench/plot.sh with $dir and
# $term set:
#   http.png   requests/s per endpoint and server: the median of the runs, bars from min to max
# CSV columns: endpoint, server, run, req_s, p50_ms, p99_ms, errors.
if [ -f "$dir/http.csv" ]; then
    # One line per endpoint (in the CSV's order): endpoint, then median min max per server.
    tail -n +2 "$dir/http.csv" | awk -F, '{ gsub(/ /, "_", $2); print $1 "|" $2, $4 }' |
        sort -k1,1 -k2,2g | awk '
            function flush() {
                if (!n) return
                med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
                m[key] = med " " v[1] " " v[n]
            }
            $1 != key { flush(); key = $1; n = 0 }
            { v[++n] = $2 }
            END {
                flush()
                for (k in m) { split(k, a, "|"); print a[1], a[2], m[k] }
            }' >"$dir/http_stats.dat"
    awk -F, 'NR > 1 && !seen[$1]++ { print $1 }' "$dir/http.csv" | while read -r ep; do
        line="$ep"
        for srv in pool pool_-B pool_x16_-B thread; do
            s=$(awk -v e="$ep" -v s="$srv" '$1 == e && $2 == s { print $3, $4, $5 }' \
                "$dir/http_stats.dat")
            line="$line ${s:-NaN NaN NaN}"
        done
        echo "$line"
    done >"$dir/http.dat"
    if [ -s "$dir/http.dat" ]; then
        gnuplot <<EOF
$term
set output "$dir/http.png"
set title "HTTP example under wrk: requests/s (median of the runs, bars: min..max)"
set ylabel "requests per second"; set logscale y; set grid ytics; set key outside
set style data histogram; set style histogram errorbars gap 1 lw 1
set style fill solid 0.6 border -1; set boxwidth 0.9
plot "$dir/http.dat" using 2:3:4:xtic(1) title "pool (blocking tasks)", \
     "" using 5:6:7 title "pool -B (sleeps on workers)", "" using 8:9:10 title "pool x16 -B", \
     "" using 11:12:13 title "thread"
EOF
        echo "![HTTP: requests/s per endpoint and server](http.png)"
    fi
fi
