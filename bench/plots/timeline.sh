# Sourced by bench/plot.sh ($dir, $term set): task timelines from the traces bench/timeline
# writes (crew_trace_start/stop, Chrome Trace Event Format, one event per line):
#   timeline_forkjoin.png   a fork-join tree of spawn-and-wait tasks
#   timeline_empty.png      empty tasks submitted one by one from outside, then crew_wait_all
# One row per thread; colours: running a task (from the thread's own loop), running a task
# while waiting ("help"), waiting in crew_wait / crew_wait_all, asleep. Events nest (a wait
# inside a task, the tasks a waiter runs inside its wait): as in a flame chart, each level of
# nesting is drawn as a band below the one that encloses it.
timeline_png() { # json png title
    local json=$1 png=$2 title=$3 rows height
    [ -f "$json" ] || return 0
    # Rows in the trace's thread order; events as "start_us end_us row depth colour" (the trace
    # lists a thread's events by start, an enclosing event before those it encloses).
    awk -v d="$dir" '
        BEGIN {
            n = 0; maxdepth = 1
            colour["task"] = 3108799; colour["help"] = 14708778   # #2f6fbf, #e0702a
            colour["wait"] = 15913308; colour["sleep"] = 11579568 # #f2d15c, #b0b0b0
        }
        function field(k,   m) {
            if (match($0, "\"" k "\":(\"[^\"]*\"|[-0-9.]+)")) {
                m = substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
                gsub(/"/, "", m)
                return m
            }
            return ""
        }
        /"name":"thread_name"/ {
            row[field("tid")] = n
            name = $0; sub(/.*"args":\{"name":"/, "", name); sub(/".*/, "", name)
            printf "%s\"%s\" %d", (n ? ", " : ""), name, n > d "/timeline_ytics.dat"
            n++
        }
        /"ph":"X"/ {
            c = field("cat"); ts = field("ts") + 0; du = field("dur") + 0; t = field("tid")
            # Depth: the slices of this thread still open at ts (they come in start order).
            while (top[t] > 0 && stack[t, top[t]] <= ts)
                top[t]--
            stack[t, ++top[t]] = ts + du
            if (top[t] > maxdepth)
                maxdepth = top[t]
            print ts, ts + du, row[t], top[t], colour[c] > d "/timeline_events.dat"
        }
        END { print n, maxdepth > d "/timeline_rows.dat" }' "$json"
    read -r rows depth <"$dir/timeline_rows.dat"
    if [ "${rows:-0}" -gt 0 ] && [ -s "$dir/timeline_events.dat" ]; then
        height=$((160 + 90 * rows))
        gnuplot <<EOF
${term/size 900,520/size 900,$height}
set output "$dir/$png"
set title "$title"
set xlabel "microseconds since crew_trace_start"
set ytics ($(cat "$dir/timeline_ytics.dat")) nomirror
set yrange [$rows - 0.5:-0.5]
set grid x; set key outside bottom center horizontal
set style fill solid 1.0 noborder
h = 0.84 / $depth
plot "$dir/timeline_events.dat" \
        using ((\$1+\$2)/2):3:1:2:(\$3-0.42+(\$4-1)*h):(\$3-0.42+\$4*h):5 \
        with boxxyerror lc rgb variable notitle, \
     NaN with boxes lc rgb "#2f6fbf" title "running a task", \
     NaN with boxes lc rgb "#e0702a" title "running a task while waiting (help)", \
     NaN with boxes lc rgb "#f2d15c" title "waiting (crew_wait, crew_wait_all)", \
     NaN with boxes lc rgb "#b0b0b0" title "asleep"
EOF
        echo "![$title]($png)"
    fi
    rm -f "$dir"/timeline_*.dat
}
timeline_png "$dir/timeline_forkjoin.json" timeline_forkjoin.png \
    "Task timeline: fork-join, spawn-and-wait tree (crew_trace_start/stop)"
timeline_png "$dir/timeline_empty.json" timeline_empty.png \
    "Task timeline: empty tasks submitted one by one, then crew_wait_all"
