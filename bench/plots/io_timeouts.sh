# Jue's I/O-bound study (sourced by bench/plot.sh with $dir and $term set): speedup over
# sequential and failure share against pool size, per implementation, medians over the runs.
#   io_timeouts.csv: impl,pool_size,tasks,run,seconds,failures,sequential_seconds,cpu_seconds
if [ -f "$dir/io_timeouts.csv" ]; then
    io_plots="" io_fplots=""
    for io_impl in $(tail -n +2 "$dir/io_timeouts.csv" | awk -F, '$1 != "sequential" {print $1}' |
        awk '!seen[$0]++'); do
        io_f="$dir/io_timeouts_${io_impl//[^a-z0-9]/_}"
        # Speedup is the sequential median over the pool's median, as in the table.
        io_seq=$(tail -n +2 "$dir/io_timeouts.csv" | awk -F, '$1 == "sequential" {print 1, $5}' |
            medians | awk '{print $2}')
        tail -n +2 "$dir/io_timeouts.csv" | awk -F, -v i="$io_impl" '$1 == i {print $2, $5}' |
            medians | awk -v s="${io_seq:-0}" '$2 > 0 {print $1, s / $2}' >"$io_f.speedup.dat"
        tail -n +2 "$dir/io_timeouts.csv" |
            awk -F, -v i="$io_impl" '$1 == i {print $2, 100 * $6 / $3}' | medians >"$io_f.fail.dat"
        io_plots="$io_plots \"$io_f.speedup.dat\" using 1:2 with linespoints title \"$io_impl\","
        io_fplots="$io_fplots \"$io_f.fail.dat\" using 1:2 with linespoints title \"$io_impl\","
    done
    tail -n +2 "$dir/io_timeouts.csv" | awk -F, '$1 == "sequential" {print 1, 100 * $6 / $3}' |
        medians >"$dir/io_timeouts_seq.fail.dat"
    if [ -n "$io_plots" ]; then
        gnuplot <<EOF
$term
set output "$dir/io_timeouts.png"
set multiplot layout 1,2 title "I/O-bound tasks with time-outs, local servers (median; Jue)"
set xlabel "pool size"; set logscale x 2; set grid; set key left top
set ylabel "speedup over sequential"; set logscale y 2
plot ${io_plots%,}, x with lines dashtype 2 title "linear"
unset logscale y
set ylabel "failed requests (%)"; set yrange [0:*]; set key right bottom
plot ${io_fplots%,}, \
     "$dir/io_timeouts_seq.fail.dat" using 1:2 with points pointtype 7 title "sequential"
unset multiplot
EOF
        echo "![I/O-bound tasks (Jue): speedup and failure share vs pool size](io_timeouts.png)"
    fi
fi
