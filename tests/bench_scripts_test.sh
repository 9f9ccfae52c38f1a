#!/usr/bin/env bash
# The scripts a user runs by hand (bench/run.sh, http.sh, instr.sh, summary.sh, check_ratios.sh,
# goals.sh, tools/*.sh): --help and -h print the usage on stdout with status 0 and start
# nothing; an unknown option gets the usage on stderr and status 2. (run.sh used to start the
# full 15-minute report on --help.)
set -uo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "bench_scripts_test: FAILED: $*" >&2; failed=1; }
# run SCRIPT ARG: runs it with a time limit (a report that started would be cut short), its
# results folder in $work/out; sets rc, out and err.
run() {
    CREW_BENCH_OUT=$work/out CREW_BENCH_BUILD=$work/no-build timeout 20 "$src/bench/$1" "$2" \
        >"$work/stdout" 2>"$work/stderr" </dev/null
    rc=$? out=$(cat "$work/stdout") err=$(cat "$work/stderr")
}
for script in run.sh http.sh instr.sh summary.sh check_ratios.sh goals.sh; do
    for help in --help -h; do
        run "$script" "$help"
        [ "$rc" = 0 ] || fail "$script $help: exit status $rc, not 0: $err"
        grep -q "usage: bench/$script" <<<"$out" || fail "$script $help: no usage on stdout: $out"
    done
    run "$script" --no-such-option
    [ "$rc" = 2 ] || fail "$script --no-such-option: exit status $rc, not 2"
    grep -q "usage: bench/$script" <<<"$err" || fail "$script --no-such-option: no usage on stderr"
done
# The tools a user may run by hand answer --help too (status 0, their usage on stdout).
for script in deps.sh valgrind-tests.sh; do
    for help in --help -h; do
        out=$(timeout 20 "$src/tools/$script" "$help" 2>"$work/stderr" </dev/null)
        rc=$?
        [ "$rc" = 0 ] || fail "tools/$script $help: exit status $rc, not 0: $(cat "$work/stderr")"
        grep -q "tools/$script" <<<"$out" || fail "tools/$script $help: no usage on stdout: $out"
    done
done
[ ! -e "$work/out" ] || fail "run.sh started a report: $(ls "$work/out")"
[ $failed = 0 ] && echo "bench_scripts_test: ok"
exit $failed
