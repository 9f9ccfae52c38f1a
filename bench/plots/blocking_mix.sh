# Li & Hu, Figs. 1-3 from $dir/blocking_mix.csv (bench/blocking_mix -c), sourced by
# bench/plot.sh with $dir and $term set:
#   blocking_mix.png    Figs. 1-2: time vs blocking share per implementation (median of runs)
#   blocking_scale.png  Fig. 3: time vs threads per implementation (median of runs)
# CSV columns: experiment, impl, blocking_pct, threads, tasks, run, seconds.
if [ -f "$dir/blocking_mix.csv" ]; then
    # "key seconds" lines on stdin -> "key median_ms" per key.
    blocking_medians() {
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
    blocking_series() {
        local exp=$1 col=$2 impl f lt clauses=""
        for impl in $(awk -F, -v e="$exp" 'NR > 1 && $1 == e {print $2}' "$dir/blocking_mix.csv" |
            awk '!seen[$0]++'); do
            f="$dir/blocking_${exp}_${impl}.dat"
            awk -F, -v e="$exp" -v i="$impl" -v c="$col" 'NR > 1 && $1 == e && $2 == i {print $c, $7}' \
                "$dir/blocking_mix.csv" | blocking_medians >"$f"
            case $impl in # one colour per implementation in every plot
                thread-per-task) lt=1 ;; crew) lt=2 ;; crew-noblock) lt=3 ;; per-core) lt=4 ;; *) lt=5 ;;
            esac
            [ -s "$f" ] && clauses="$clauses \"$f\" using 1:2 with linespoints lt $lt title \"$impl\","
        done
        echo "${clauses%,}"
    }
    blocking_compute=$(blocking_series compute 3)
    blocking_empty=$(blocking_series empty 3)
    blocking_scale=$(blocking_series scale 4)
    if [ -n "$blocking_compute$blocking_empty" ]; then
        {
            echo "$term"
            echo "set output \"$dir/blocking_mix.png\""
            echo "set multiplot layout 1,2 title \"Li & Hu, Figs. 1-2: blocking file I/O" \
                "mixed with short tasks (median)\""
            echo "set xlabel \"blocking tasks (%)\"; set ylabel \"ms\"; set logscale y; set grid"
            echo "set offsets graph 0.05, graph 0.05, 0, 0; set key top left font \",8\""
            [ -n "$blocking_compute" ] &&
                echo "set title \"Fig. 1: + compute tasks\"; plot $blocking_compute"
            [ -n "$blocking_empty" ] &&
                echo "set title \"Fig. 2: + empty tasks\"; plot $blocking_empty"
            echo "unset multiplot"
        } | gnuplot
        echo "![Li & Hu, Figs. 1-2](blocking_mix.png)"
    fi
    if [ -n "$blocking_scale" ]; then
        gnuplot <<EOF
$term
set output "$dir/blocking_scale.png"
set title "Li & Hu, Fig. 3: scalability, time vs threads (median)"
set xlabel "threads (T)"; set ylabel "ms"; set logscale x 2; set logscale y; set grid
set key top right
plot $blocking_scale
EOF
        echo "![Li & Hu, Fig. 3](blocking_scale.png)"
    fi
fi
