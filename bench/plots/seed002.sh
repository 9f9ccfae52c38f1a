# Li & Hu, Figs. 1-3 from $dir/seed002.csv (bench/seed002_mix -c), sourced by bench/plot.sh
# with $dir and $term set:
#   seed002_mix.png    Figs. 1-2: time vs blocking share per implementation (median of runs)
#   seed002_scale.png  Fig. 3: time vs threads per implementation (median of runs)
# CSV columns: experiment, impl, blocking_pct, threads, tasks, run, seconds.
if [ -f "$dir/seed002.csv" ]; then
    # "key seconds" lines on stdin -> "key median_ms" per key.
    seed002_medians() {
        sort -k1,1n -k2,2g | awk '
            function flush() {
                if (n) print key, 1000 * ((n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
            }
            $1 != key { flush(); key = $1; n = 0 }
            { v[++n] = $2 }
            END { flush() }'
    }
    # One .dat per experiment and implementation; x is column $3 (share) or $4 (threads).
    # Prints the gnuplot plot clauses for the files that have data.
    seed002_series() {
        local exp=$1 col=$2 impl f lt clauses=""
        for impl in $(awk -F, -v e="$exp" 'NR > 1 && $1 == e {print $2}' "$dir/seed002.csv" |
            awk '!seen[$0]++'); do
            f="$dir/seed002_${exp}_${impl}.dat"
            awk -F, -v e="$exp" -v i="$impl" -v c="$col" 'NR > 1 && $1 == e && $2 == i {print $c, $7}' \
                "$dir/seed002.csv" | seed002_medians >"$f"
            case $impl in # one colour per implementation in every plot
                thread-per-task) lt=1 ;; crew) lt=2 ;; crew-noblock) lt=3 ;; per-core) lt=4 ;; *) lt=5 ;;
            esac
            [ -s "$f" ] && clauses="$clauses \"$f\" using 1:2 with linespoints lt $lt title \"$impl\","
        done
        echo "${clauses%,}"
    }
    seed002_compute=$(seed002_series compute 3)
    seed002_empty=$(seed002_series empty 3)
    seed002_scale=$(seed002_series scale 4)
    if [ -n "$seed002_compute$seed002_empty" ]; then
        {
            echo "$term"
            echo "set output \"$dir/seed002_mix.png\""
            echo "set multiplot layout 1,2 title \"Li & Hu, Figs. 1-2: blocking file I/O" \
                "mixed with short tasks (median)\""
            echo "set xlabel \"blocking tasks (%)\"; set ylabel \"ms\"; set logscale y; set grid"
            echo "set offsets graph 0.05, graph 0.05, 0, 0; set key top left font \",8\""
            [ -n "$seed002_compute" ] && echo "set title \"Fig. 1: + compute tasks\"; plot $seed002_compute"
            [ -n "$seed002_empty" ] && echo "set title \"Fig. 2: + empty tasks\"; plot $seed002_empty"
            echo "unset multiplot"
        } | gnuplot
        echo "![Li & Hu, Figs. 1-2](seed002_mix.png)"
    fi
    if [ -n "$seed002_scale" ]; then
        gnuplot <<EOF
$term
set output "$dir/seed002_scale.png"
set title "Li & Hu, Fig. 3: scalability, time vs threads (median)"
set xlabel "threads (T)"; set ylabel "ms"; set logscale x 2; set logscale y; set grid
set key top right
plot $seed002_scale
EOF
        echo "![Li & Hu, Fig. 3](seed002_scale.png)"
    fi
fi
