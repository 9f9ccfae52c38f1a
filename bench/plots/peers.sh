# Sourced by bench/plot.sh ($dir, $term set): crew against the peer pools, from peers.csv
# (bench_peers -c: workload,peer,run,seconds,metric), each peer's median per workload relative
# to crew's. Also defines rel_plot, which strategies.sh (sourced after this file) uses too.

# rel_plot CSV REF OUT.png TITLE LOG: a grouped bar chart, one group per workload, one bar per
# peer: its median time relative to REF's median on the same workload (> 1: slower than REF).
# Rates (the empty workload, tasks/s) are inverted so every bar reads as time. LOG = 1: log y.
# Each peer has a colour of its own (gnuplot's default cycle repeats after 8, which gave crew's
# colour to the ninth peer), and the workload names are slanted so that long ones stay apart.
rel_plot() {
    local csv=$1 ref=$2 png=$3 title=$4 log=$5
    local dat="${png%.png}_rel.dat"
    # First pass (the file): workloads and peers in the order they ran. Second (sorted by
    # workload, peer, value): the medians. Missing medians are NaN (no bar).
    tail -n +2 "$csv" | sort -t, -k1,1 -k2,2 -k5,5g | awk -F, -v ref="$ref" '
        function flush() {
            if (n) med[cur] = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        NR == FNR {
            if (FNR > 1) {
                if (!($1 in ws)) { ws[$1]; w[++nw] = $1 }
                if (!($2 in ps)) { ps[$2]; p[++np] = $2 }
            }
            next
        }
        $1 FS $2 != cur { flush(); cur = $1 FS $2; n = 0 }
        { v[++n] = $5 }
        END {
            flush()
            printf "workload"
            for (j = 1; j <= np; j++) printf " %s", p[j]
            print ""
            for (i = 1; i <= nw; i++) {
                r = w[i] FS ref
                if (!(r in med) || med[r] <= 0) continue
                printf "%s", w[i]
                for (j = 1; j <= np; j++) {
                    k = w[i] FS p[j]
                    if (!(k in med) || med[k] <= 0) { printf " NaN"; continue }
                    printf " %.4g", w[i] == "empty" ? med[r] / med[k] : med[k] / med[r]
                }
                print ""
            }
        }' "$csv" - >"$dat"
    # Only the header: the reference ran no workload.
    [ "$(wc -l <"$dat")" -gt 1 ] || return 0
    local ncol
    ncol=$(head -1 "$dat" | wc -w)
    gnuplot <<EOF
${term/900,520/1100,560}
set output "$png"
pal = "#6a3d9a #1f78b4 #33a02c #e31a1c #ff7f00 #b15928 #a6cee3 #b2df8a #fb9a99 #fdbf6f #cab2d6 #000000"
set title "$title"
set ylabel "time relative to $ref (> 1: slower)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key outside right top
set xtics rotate by -30 left nomirror
$([ "$log" = 1 ] && echo "set logscale y" || echo "set yrange [0:*]")
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lw 2
plot for [i=2:$ncol] "$dat" using i:xtic(1) title columnheader(i) lc rgb word(pal, i - 1)
EOF
}

if [ -f "$dir/peers.csv" ]; then
    rel_plot "$dir/peers.csv" crew "$dir/peers.png" \
        "crew against the peer pools: median time relative to crew (log scale)" 1
    if [ -f "$dir/peers.png" ]; then
        echo "![crew against peer pools](peers.png)"
    fi
fi
