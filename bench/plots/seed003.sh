# Jue's I/O-bound study (sourced by bench/plot.sh with $dir and $term set): speedup over
# sequential and failure share against pool size, per implementation, medians over the runs.
#   seed003.csv: impl,pool_size,tasks,run,seconds,failures,sequential_seconds,cpu_seconds
if [ -f "$dir/seed003.csv" ]; then
    s3_plots="" s3_fplots=""
    for s3_impl in $(tail -n +2 "$dir/seed003.csv" | awk -F, '$1 != "sequential" {print $1}' |
        awk '!seen[$0]++'); do
        s3_f="$dir/seed003_${s3_impl//[^a-z0-9]/_}"
        # Speedup per run is that round's sequential time over the pool's, as in the table.
        tail -n +2 "$dir/seed003.csv" | awk -F, -v i="$s3_impl" '$1 == i {print $2, $7 / $5}' |
            medians >"$s3_f.speedup.dat"
        tail -n +2 "$dir/seed003.csv" |
            awk -F, -v i="$s3_impl" '$1 == i {print $2, 100 * $6 / $3}' | medians >"$s3_f.fail.dat"
        s3_plots="$s3_plots \"$s3_f.speedup.dat\" using 1:2 with linespoints title \"$s3_impl\","
        s3_fplots="$s3_fplots \"$s3_f.fail.dat\" using 1:2 with linespoints title \"$s3_impl\","
    done
    tail -n +2 "$dir/seed003.csv" | awk -F, '$1 == "sequential" {print 1, 100 * $6 / $3}' |
        medians >"$dir/seed003_seq.fail.dat"
    if [ -n "$s3_plots" ]; then
        gnuplot <<EOF
$term
set output "$dir/seed003.png"
set multiplot layout 1,2 title "I/O-bound tasks with time-outs, local servers (median; Jue)"
set xlabel "pool size"; set logscale x 2; set grid; set key left top
set ylabel "speedup over sequential"; set logscale y 2
plot ${s3_plots%,}, x with lines dashtype 2 title "linear"
unset logscale y
set ylabel "failed requests (%)"; set yrange [0:*]; set key right bottom
plot ${s3_fplots%,}, \
     "$dir/seed003_seq.fail.dat" using 1:2 with points pointtype 7 title "sequential"
unset multiplot
EOF
        echo "![I/O-bound tasks (Jue): speedup and failure share vs pool size](seed003.png)"
    fi
fi
