# Sourced by bench/plot.sh ($dir, $term set): Jendersie et al., Fig. 9 from fig9.csv (fig9_slots -c:
# threads,open,tasks,strategy,run,ops,seconds,ops_per_s): groups per second against threads, one
# panel per number of groups each thread keeps open, one line per strategy (medians).
if [ -f "$dir/fig9.csv" ]; then
    fig9_opens=$(tail -n +2 "$dir/fig9.csv" | awk -F, '{print $2}' | sort -n -u)
    fig9_strats=$(tail -n +2 "$dir/fig9.csv" | awk -F, '!seen[$4]++ {print $4}')
    fig9_gp="$term
set output \"$dir/fig9.png\"
set multiplot layout 1,$(echo "$fig9_opens" | wc -w) title \"Jendersie et al., Fig. 9: groups per second (median) vs threads, 2 cores\"
set xlabel \"threads\"; set logscale x 2; set logscale y; set grid; set key bottom left"
    fig9_first=1
    for g in $fig9_opens; do
        fig9_plots=""
        for s in $fig9_strats; do
            f="$dir/fig9_${g}_${s//[^a-z0-9]/_}.dat"
            awk -F, -v g="$g" -v s="$s" 'NR > 1 && $2 == g && $4 == s {print $1, $8}' \
                "$dir/fig9.csv" | medians >"$f"
            fig9_plots="$fig9_plots \"$f\" using 1:(\$2/1e6) with linespoints title \"$s\","
        done
        # The key and y label in the first panel only: the lines are the same in each.
        if [ $fig9_first = 1 ]; then
            fig9_gp="$fig9_gp
set ylabel \"million groups/s\""
        else
            fig9_gp="$fig9_gp
unset key; unset ylabel"
        fi
        fig9_gp="$fig9_gp
set title \"$g open per thread\"
plot ${fig9_plots%,}"
        fig9_first=0
    done
    printf '%s\nunset multiplot\n' "$fig9_gp" | gnuplot
    echo "![Jendersie et al., Fig. 9](fig9.png)"
fi
