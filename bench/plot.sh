#!/usr/bin/env bash
# Plots for a results folder (PNG, gnuplot from Debian, as Jendersie et al. used), from its CSV
# files:
#   fig7.png            Jendersie et al., Fig. 7: thread-per-request vs pool time per call (medians)
#   sizing_static.png   Xu & Bode, Figs. 5/7: throughput vs pool size per workload, as a share
#                       of that workload's best median (median, bars min..max over the runs), so
#                       the rise to the stable point and any decline show on one linear scale
#   sizing_rait.png     Xu & Bode, Fig. 6: reciprocal average idle time vs pool size (median)
#   sizing_dynamic.png  Xu & Bode, Fig. 10: pool size over time, AIT vs BALANCE, free_workload 100
#                       (the trace of the run with the median steady throughput)
#   sizing_phase.png    the same for the phase workload (free_workload 100, then pure CPU)
# Prints the markdown lines that embed the plots that were made. Without gnuplot, prints a note.
#   bench/plot.sh RESULTS_DIR
set -euo pipefail
dir=$1
if ! command -v gnuplot >/dev/null; then
    echo "_(plots skipped: gnuplot is not installed; Debian package gnuplot-nox)_"
    exit 0
fi
term='set terminal pngcairo size 900,520 noenhanced font ",10"'
gnuplot -e 'set terminal pngcairo' 2>/dev/null || term='set terminal png size 900,520 noenhanced'

# "key value" lines on stdin -> "key median" per key.
medians() {
    sort -k1,1n -k2,2g | awk '
        function flush() {
            if (n) print key, (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        $1 != key { flush(); key = $1; n = 0 }
        { v[++n] = $2 }
        END { flush() }'
}

# "key value" lines on stdin -> "key median min max" per key.
spread() {
    sort -k1,1n -k2,2g | awk '
        function flush() {
            if (n) print key, (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[1], v[n]
        }
        $1 != key { flush(); key = $1; n = 0 }
        { v[++n] = $2 }
        END { flush() }'
}

if [ -f "$dir/fig7.csv" ]; then
    tail -n +2 "$dir/fig7.csv" | awk -F, '{print $1, $3}' | medians >"$dir/fig7_tpr.dat"
    tail -n +2 "$dir/fig7.csv" | awk -F, '{print $1, $4}' | medians >"$dir/fig7_pool.dat"
    gnuplot <<EOF
$term
set output "$dir/fig7.png"
set title "Jendersie et al., Fig. 7: time per call, N tasks of work_large (median)"
set xlabel "tasks per call (pool size)"; set ylabel "microseconds"; set logscale x 2
set key left top; set grid
plot "$dir/fig7_tpr.dat" using 1:(\$2/1000) with linespoints title "thread-per-request", \
     "$dir/fig7_pool.dat" using 1:(\$2/1000) with linespoints title "crew pool"
EOF
    echo "![Jendersie et al., Fig. 7](fig7.png)"
fi

if [ -f "$dir/sizing.csv" ]; then
    # CSV columns: part, workload, controller, start, size, time_s, throughput, rait, run. The
    # static sweep has a row per run; the dynamic pools a row per 0.1 s sample per run, and a
    # "median_run" row naming the run whose trace the report prints.
    workloads=$(awk -F, '$1 == "static" {print $2}' "$dir/sizing.csv" | awk '!seen[$0]++')
    plots="" rplots=""
    for w in $workloads; do
        f="$dir/sizing_static_${w//[^a-z0-9]/_}.dat"
        # Each size's median (min..max) over the best size's median.
        awk -F, -v w="$w" '$1 == "static" && $2 == w {print $5, $7}' "$dir/sizing.csv" |
            spread | awk '{ r[NR] = $0; if ($2 > b) b = $2 }
                END { for (i = 1; i <= NR; i++) { split(r[i], v, " ")
                      print v[1], v[2] / b, v[3] / b, v[4] / b } }' >"$f"
        awk -F, -v w="$w" '$1 == "static" && $2 == w {print $5, $8}' "$dir/sizing.csv" |
            medians >"${f%.dat}_rait.dat"
        plots="$plots \"$f\" using 1:2:3:4 with yerrorlines title \"$w\","
        rplots="$rplots \"${f%.dat}_rait.dat\" using 1:2 with linespoints title \"$w\","
    done
    gnuplot <<EOF
$term
set output "$dir/sizing_static.png"
set title "Xu & Bode, Figs. 5/7: throughput vs pool size, share of each workload's best (median, bars: min..max)"
set xlabel "pool size"; set ylabel "throughput / best size's median"; set logscale x 2
set yrange [0:1.1]; set grid; set key outside
set arrow from graph 0, first 0.95 to graph 1, first 0.95 nohead dashtype 2
set label "95%: the stable point" at graph 0.02, first 0.92
plot ${plots%,}
EOF
    gnuplot <<EOF
$term
set output "$dir/sizing_rait.png"
set title "Xu & Bode, Fig. 6: reciprocal average idle time (AIT_1 / AIT_n) vs pool size (median)"
set xlabel "pool size"; set ylabel "RAIT"; set grid; set key outside
plot ${rplots%,}
EOF
    # Fig. 10: per controller and start size, the trace of the run the report prints; the
    # same for the phase workload. Prints the plot's file name if it made one.
    trace_plot() { # workload output title
        local w=$1 png=$2 title=$3 plots="" c s f
        for c in AIT BALANCE; do
            for s in $(awk -F, -v w="$w" '$1 == "dynamic" && $2 == w {print $4}' \
                "$dir/sizing.csv" | sort -n -u); do
                f="$dir/sizing_dyn_${w//[^a-z0-9]/_}_${c}_$s.dat"
                awk -F, -v w="$w" -v c="$c" -v s="$s" '
                    NR == FNR { if ($1 == "median_run" && $2 == w && $3 == c && $4 == s) m = $9
                                next }
                    $1 == "dynamic" && $2 == w && $3 == c && $4 == s && $9 == m {print $6, $5}' \
                    "$dir/sizing.csv" "$dir/sizing.csv" >"$f"
                [ -s "$f" ] && plots="$plots \"$f\" using 1:2 with steps title \"$c from $s\","
            done
        done
        [ -n "$plots" ] || return 0
        gnuplot <<EOF
$term
set output "$dir/$png"
set title "$title"
set xlabel "seconds"; set ylabel "pool size"; set grid; set key outside
plot ${plots%,}
EOF
        echo "$png"
    }
    dyn_png=$(trace_plot fw=100 sizing_dynamic.png \
        "Xu & Bode, Fig. 10: pool size over time, free_workload = 100 (one run: the median's)")
    phase_png=$(trace_plot phase sizing_phase.png \
        "Pool size over time, free_workload 100 then pure CPU at half time (the median run)")
    echo "![Xu & Bode, Figs. 5/7](sizing_static.png)"
    echo "![Xu & Bode, Fig. 6](sizing_rait.png)"
    [ -n "$dyn_png" ] && echo "![Xu & Bode, Fig. 10]($dyn_png)"
    [ -n "$phase_png" ] && echo "![phase change: pool size over time]($phase_png)"
fi
# Plots of the other sections: one script each in bench/plots/, sourced with $dir and $term set.
for extra in "$(dirname "$0")"/plots/*.sh; do
    [ -f "$extra" ] && . "$extra"
done
rm -f "$dir"/*.dat
