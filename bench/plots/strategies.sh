# Sourced by bench/plot.sh ($dir, $term set): crew's scheduling strategies (and the two fastest
# peers) from strategies.csv, each one's median per workload relative to crew-steal, the
# default. rel_plot comes from peers.sh, which plot.sh sources first (alphabetical order).
if [ -f "$dir/strategies.csv" ]; then
    if ! declare -F rel_plot >/dev/null; then
        echo "bench/plots/strategies.sh: rel_plot missing (bench/plots/peers.sh not sourced)" >&2
    else
        rel_plot "$dir/strategies.csv" crew-steal "$dir/strategies.png" \
            "Scheduling strategies: median time relative to crew-steal (log scale)" 1
        if [ -f "$dir/strategies.png" ]; then
            echo "![scheduling strategies](strategies.png)"
        fi
    fi
fi
