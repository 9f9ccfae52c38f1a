# Sourced by bench/plot.sh ($dir, $term set): timer lateness from timers.csv (bench_timers -c:
# part,load,peer,kind,run,metric,value): the distribution of lateness (start - due) over all
# runs, one panel per load (idle, busy) and timer (1 ms and 10 ms delayed tasks, a 1 ms periodic
# timer), one line per peer; x on a log scale from the decade of the smallest lateness drawn.
# Quantiles below 1 us (a firing on time, or early: a periodic run after a skipped slot) have no
# place on a log scale and are left out, so a line starts at its first quantile of 1 us or more
# (its height there says what share came before); drawing them at 1 us made lines seem to start
# at 1 us.
if [ -f "$dir/timers.csv" ] && grep -q '^cdf,' "$dir/timers.csv"; then
    tm_loads=$(awk -F, '$1 == "cdf" && !seen[$2]++ {print $2}' "$dir/timers.csv")
    tm_peers=$(awk -F, '$1 == "cdf" && !seen[$3]++ {print $3}' "$dir/timers.csv")
    tm_gp="${term/900,520/1350,780}
set output \"$dir/timers.png\"
set multiplot layout $(echo "$tm_loads" | wc -w),3 \\
    title \"Timer lateness: share of firings at most this late (all runs; quantiles under 1 us left out)\"
set logscale x; set xrange [$(awk -F, '$1 == "cdf" && $7 >= 1 && (m == "" || $7 < m) { m = $7 }
    END { e = 1; while (m != "" && e * 10 <= m) e *= 10; print e }' "$dir/timers.csv"):*]
set yrange [0:1]; set grid; set key bottom right
set xlabel \"lateness (us)\"; set ylabel \"share\""
    tm_first=1
    for tm_l in $tm_loads; do
        for tm_k in "once 1ms" "once 10ms" "every 1ms"; do
            tm_plots=""
            for tm_p in $tm_peers; do
                tm_f="$dir/timers_${tm_l}_${tm_k//[^a-z0-9]/_}_${tm_p//[^a-z0-9]/_}.dat"
                awk -F, -v l="$tm_l" -v k="$tm_k" -v p="$tm_p" \
                    '$1 == "cdf" && $2 == l && $4 == k && $3 == p && $7 >= 1 {
                         print $7, $6 }' "$dir/timers.csv" >"$tm_f"
                [ -s "$tm_f" ] &&
                    tm_plots="$tm_plots \"$tm_f\" using 1:2 with linespoints title \"$tm_p\","
            done
            [ $tm_first = 1 ] || tm_gp="$tm_gp
unset key"
            tm_first=0
            tm_gp="$tm_gp
set title \"$tm_l pool, $tm_k\"
plot ${tm_plots%,}"
        done
    done
    printf '%s\nunset multiplot\n' "$tm_gp" | gnuplot
    echo "![Timer lateness per peer, idle and busy](timers.png)"
fi
