# Sourced by bench/plot.sh ($dir, $term set): task graphs from graph.csv (bench_graph --csv:
# shape,lib,threads,nodes,edges,rep,build_node_ns,build_edge_ns,run1_ns,run2_ns,overlap; rep -1
# rows hold the memory): ns per node of a second run, per shape, one bar per library (median of
# the runs), one panel per thread count, on a log scale (the libraries differ several-fold).
if [ -f "$dir/graph.csv" ] && [ "$(awk -F, 'NR > 1 && $6 >= 0' "$dir/graph.csv" | wc -l)" -gt 0 ]; then
    gr_threads=$(awk -F, 'NR > 1 && $6 >= 0 {print $3}' "$dir/graph.csv" | sort -n -u)
    gr_libs=$(awk -F, 'NR > 1 && $6 >= 0 && !seen[$2]++ {print $2}' "$dir/graph.csv")
    gr_gp="$term
set output \"$dir/graph.png\"
set multiplot layout 1,$(echo "$gr_threads" | wc -w) title \"Task graphs: ns per node of a second run (median; lower is better)\"
set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8 border -1
set logscale y; set grid ytics; set key top left; set xtics nomirror; set yrange [1:*]"
    gr_first=1
    for t in $gr_threads; do
        f="$dir/graph_$t.dat"
        # One line per shape (in the CSV's order): the shape, then each library's median.
        awk -F, -v t="$t" -v libs="$(echo $gr_libs)" '
            function med(k,   n, i, j, x, a) {
                n = cnt[k]; if (!n) return "NaN"
                for (i = 1; i <= n; i++) a[i] = v[k, i]
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                    if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
                return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
            }
            NR > 1 && $3 == t && $6 >= 0 {
                if (!($1 in seen)) { seen[$1]; order[++ns] = $1 }
                k = $1 SUBSEP $2; v[k, ++cnt[k]] = $10
            }
            END {
                nl = split(libs, L, " ")
                for (s = 1; s <= ns; s++) {
                    line = order[s]
                    for (l = 1; l <= nl; l++) line = line " " med(order[s] SUBSEP L[l])
                    print line
                }
            }' "$dir/graph.csv" >"$f"
        gr_plots="" col=2
        for l in $gr_libs; do
            gr_plots="$gr_plots \"$f\" using $col:xtic(1) title \"$l\","
            col=$((col + 1))
        done
        if [ $gr_first = 1 ]; then
            gr_gp="$gr_gp
set ylabel \"ns per node\""
        else
            gr_gp="$gr_gp
unset ylabel"
        fi
        gr_gp="$gr_gp
set title \"$t thread$([ "$t" = 1 ] || echo s)\"
plot ${gr_plots%,}"
        gr_first=0
    done
    printf '%s\nunset multiplot\n' "$gr_gp" | gnuplot
    echo "![Task graphs: ns per node of a second run](graph.png)"
fi
