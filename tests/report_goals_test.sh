#!/usr/bin/env bash
# The report's goals table (bench/goals.sh), with no benchmark run: on a synthetic results folder
# (report_fragments/results: every file bench/run.sh leaves for it, figures chosen so that each
# goal's outcome is known) every goal gets its row with the right figure and verdict, and the
# table passes bench/check_ratios.sh; without the two instruction rows of who runs crew_submit's
# tasks those two read n/a; an empty folder gives a table of n/a rows, not an error.
#   tests/report_goals_test.sh SOURCE_DIR
set -uo pipefail
src=$1
results=$src/tests/report_fragments/results
goals=$src/bench/goals.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "report_goals_test: FAILED: $*" >&2; failed=1; }

# expect FILE 'GOAL|FIGURE PREFIX|VERDICT'...: each goal has exactly one row, its figure starts
# with the prefix and its last cell is the verdict.
expect() {
    local file=$1 line what fig verdict rows cells
    shift
    for line in "$@"; do
        IFS='|' read -r what fig verdict <<<"$line"
        rows=$(grep -cF "| $what | " "$file")
        if [ "$rows" != 1 ]; then
            fail "$rows rows for '$what', not 1"
            continue
        fi
        cells=$(grep -F "| $what | " "$file")
        [[ $cells == "| $what | $fig"* ]] || fail "'$what': figure not '$fig...': $cells"
        [[ $cells == *" | $verdict |" ]] || fail "'$what': not '$verdict': $cells"
    done
}

"$goals" "$results" >"$work/goals.md" || fail "bench/goals.sh exited with $?"
sky="skynet, 1111111 tasks"
expect "$work/goals.md" \
    "fib(30), crew-join / oneTBB time|0.10x (crew-join 1 ms, onetbb 10 ms)|met" \
    "instructions per spawn-and-wait pair (callgrind, one worker)|111 (40 of them|not met" \
    "$sky, crew-join / oneTBB time|0.50x|not met" \
    "$sky, crew (crew_enqueue_tasks + crew_wait) / oneTBB time|0.40x (crew 5 ms, onetbb 12.5 ms)|met" \
    "$sky, crew-tasks-wait (crew_enqueue_tasks_wait) / oneTBB time|0.48x|not met" \
    "20000 fork-join rounds from outside, crew / oneTBB|0.70x|met" \
    "instructions per empty crew_submit task|140|met" \
    "instructions per empty crew_submit task, the worker runs them|160|not met" \
    "instructions per empty crew_submit task, a helping waiter runs them|139|met" \
    "instructions per array task|43|met" \
    "coroutine fib, crew-coro / crew-join time|2.00x|not met" \
    "wake-up of an idle pool, median: crew / textbook|0.50x|met" \
    "wake-up of an idle pool, p99 of all trials: crew / textbook|0.75x (crew 30 us, textbook 40 us)|met" \
    "burst P=4, crew / oneTBB time per call|1.11x|not met" \
    "one-producer rate, crew / best peer|3.00x (crew 30 M/s, textbook 10 M/s)|met" \
    "one-producer rate, slowest of 9 / median (the worse mode)|0.50 (crew_enqueue_tasks)|not met" \
    "bounded queue of 1, 8 threads, 2000 jobs of 500 us, crew / textbook time|0.90x (crew 900 ms, textbook 1000 ms)|met" \
    "1 ms delayed task, idle pool, p50 lateness: crew / boost.asio|0.75x (crew 30 us, boost.asio 40 us)|met" \
    "1 ms delayed task, idle pool, p99 lateness: crew / boost.asio|1.30x|not met" \
    "1 ms delayed task, busy pool, p50 lateness: crew / boost.asio|0.35x|met" \
    "1 ms delayed task, busy pool, p99 lateness: crew / boost.asio|0.40x|met" \
    "10 ms delayed task, idle pool, p50 lateness: crew / boost.asio|1.00x|met" \
    "10 ms delayed task, idle pool, p99 lateness: crew / boost.asio|1.25x|not met" \
    "10 ms delayed task, busy pool, p50 lateness: crew / boost.asio|0.25x|met" \
    "10 ms delayed task, busy pool, p99 lateness: crew / boost.asio|1.15x|not met"
rows=$(grep -c '^| [^g-]' "$work/goals.md")
[ "$rows" = 25 ] || fail "$rows goal rows, not the 25 expected: $(cat "$work/goals.md")"
# Under a summary heading, as bench/run.sh puts it, every ratio agrees with its figures.
{ echo "## Summary"; echo; cat "$work/goals.md"; } >"$work/summary.md"
out=$("$src/bench/check_ratios.sh" "$work/summary.md") || fail "check_ratios: $out"
n=$(sed -n 's/.*: \([0-9]*\) ratios checked.*/\1/p' <<<"$out")
[ "${n:-0}" -ge 18 ] || fail "check_ratios checked ${n:-0} of the table's 18 ratios"

# Without the rows of who runs the tasks (bench/instr.sh before it counted them): n/a.
mkdir "$work/old"
cp "$results"/* "$work/old/"
grep -v 'runs them' "$results/instr.txt" >"$work/old/instr.txt"
"$goals" "$work/old" >"$work/old.md" || fail "bench/goals.sh (no path rows) exited with $?"
expect "$work/old.md" \
    "instructions per empty crew_submit task|140|met" \
    "instructions per empty crew_submit task, the worker runs them|n/a (not counted)|n/a" \
    "instructions per empty crew_submit task, a helping waiter runs them|n/a (not counted)|n/a"

# An empty folder: the table, every row n/a.
mkdir "$work/empty"
"$goals" "$work/empty" >"$work/empty.md" || fail "bench/goals.sh (empty folder) exited with $?"
grep -q '^| goal | this run | goal | met |$' "$work/empty.md" || fail "empty folder: no table"
grep '^| [^g-]' "$work/empty.md" | grep -v ' | n/a |$' >"$work/not_na" &&
    fail "empty folder: rows that are not n/a: $(cat "$work/not_na")"
expect "$work/empty.md" \
    "skynet, crew-tasks-wait (crew_enqueue_tasks_wait) / oneTBB time|n/a (crew-tasks-wait did not run)|n/a" \
    "bounded queue, crew / textbook time|n/a (crew did not run)|n/a" \
    "wake-up of an idle pool, p99 of all trials: crew / textbook|n/a (crew did not run)|n/a"
[ $failed = 0 ] && echo "report_goals_test: ok"
exit $failed
