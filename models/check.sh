#!/bin/sh
# models/check.sh -- model-check crew's protocols with Spin (models/*.pml).
#
# Every correct model must verify (no assertion violation, no invalid end state, no
# non-progress cycle where checked), and every deliberately broken variant must FAIL: a check
# that cannot fail proves nothing, so a broken variant that passes fails this script too.
# Prints the states each run explored. Exit status: 0 all as expected, 1 otherwise, 0 with a
# message when spin is not installed (apt-get install spin).
#
# The runs go in two lanes at once (each pan is one process on one core; the same runs, the
# same states, in half the time): the sleep models in one, the slots models in the other. The
# two largest runs (some 2.4 GB each) may overlap; MODELS_JOBS=1 runs everything one after the
# other. The results are printed in the fixed order below once both lanes are done.
#
# Usage: models/check.sh [build-dir]     (default build/models; pan is compiled there)
set -u

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/models}

if ! command -v spin >/dev/null 2>&1; then
    echo "models: spin is not installed (Debian: apt-get install spin); skipping the model checks"
    exit 0
fi
CC=${CC:-cc}
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)

# run NAME MODEL EXPECT DEFINES PAN_CFLAGS PAN_ARGS
#   EXPECT: pass (must verify), fail (must find a counterexample), known (a known defect of
#   the code: reported, does not change the exit status).
run() {
    name=$1 model=$2 expect=$3 defs=$4 cflags=$5 args=$6
    dir=$out/$name
    rm -rf "$dir" && mkdir -p "$dir" || return 1
    cp "$here/$model" "$dir/" || return 1
    start=$(date +%s)
    # shellcheck disable=SC2086 # defs, cflags and args are word lists on purpose
    if ! (cd "$dir" && spin $defs -a "$model" >spin.log 2>&1 &&
          $CC -w -O2 $cflags -o pan pan.c >cc.log 2>&1); then
        echo "models: $name: spin or the compiler failed (see $dir)" >"$dir/result"
        echo 1 >"$dir/status"
        return
    fi
    # shellcheck disable=SC2086
    (cd "$dir" && ./pan $args >pan.log 2>&1)
    secs=$(($(date +%s) - start))
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | head -n 1)
    states=$(awk '/states, stored/ {print $1; exit}' "$dir/pan.log")
    first=$(grep -m1 -E '^pan:[0-9]+:|max search depth too small' "$dir/pan.log")
    truncated=$(grep -c 'max search depth too small' "$dir/pan.log")
    echo "${states:-0}" >"$dir/states"
    status=0
    case $expect in
    pass)
        if [ "$errors" = 0 ] && [ "$truncated" = 0 ]; then
            verdict="verified"
        else
            verdict="FAILED, expected to verify: $first (trail: $dir)"
            status=1
        fi ;;
    fail)
        if [ -n "$errors" ] && [ "$errors" != 0 ]; then
            verdict="counterexample found, as required"
        else
            verdict="NOT REFUTED: the broken variant passed, so the check is vacuous"
            status=1
        fi ;;
    known)
        if [ -n "$errors" ] && [ "$errors" != 0 ]; then
            verdict="known defect reproduced: $first (trail: $dir)"
        else
            verdict="known defect NOT reproduced any more: update models/ and docs/reliability.md"
        fi ;;
    esac
    printf 'models: %-28s %10s states %4ss  %s\n' "$name" "${states:-?}" "$secs" "$verdict" \
        >"$dir/result"
    echo $status >"$dir/status"
}

# A lane: runs the given function's runs one after the other; names each run in
# $out/<lane>.names, in order.
lane() {
    : >"$out/$1.names"
    $1
}
# Each run also appends its name to the lane's list.
queue() {
    echo "$1" >>"$out/$lane_name.names"
    run "$@"
}

# sleep.pml and slots.pml, each model's runs in one lane.
sleep_runs() {
    # sleep.pml: no lost wake-up (assertion when the system is stuck) and no non-progress cycle.
    queue sleep           sleep.pml pass ""                -DSAFETY "-m10000"
    queue sleep-progress  sleep.pml pass ""                -DNP     "-l -m10000"
    queue sleep-broken-sleeper sleep.pml fail -DBROKEN_SLEEPER -DSAFETY "-m10000"
    queue sleep-broken-waker   sleep.pml fail -DBROKEN_WAKER   -DSAFETY "-m10000"
    queue sleep-no-fence       sleep.pml fail -DNO_FENCE       -DSAFETY "-m10000"
    queue sleep-broken-looker  sleep.pml fail -DBROKEN_LOOKER  -DSAFETY "-m10000"
    # The OS wait: the futex above; the portable build's condition variables; a futex sleep that
    # does not compare the word atomically with going to sleep.
    queue sleep-condvar        sleep.pml pass -DCONDVAR        -DSAFETY "-m10000"
    queue sleep-broken-futex   sleep.pml fail -DBROKEN_FUTEX   -DSAFETY "-m10000"
}

slots_runs() {
    # slots.pml: waiters never take a later generation for their own, always return, right answer.
    # Each step of the model names the function of src/group.c, src/group.h or src/wait.c that it
    # mirrors; the variants are described in slots.pml's header.
    queue slots           slots.pml pass ""                -DSAFETY "-m10000"
    queue slots-broken-gen    slots.pml fail -DBROKEN_GEN    -DSAFETY "-m10000"
    queue slots-broken-nobump slots.pml fail -DBROKEN_NOBUMP -DSAFETY "-m10000"
    # With cancellation. The earlier designs were wrong, and the model must tell them from the fix:
    #   1d4ef7a: crew__slot_status loads the `cancelled` flag after the state word (spurious
    #            CREW_ECANCELED for a handle whose slot was reused by a group that lost a task);
    #   029ad83: the slot records cancelled_gen and a cancelled group's slot is released for reuse
    #            (spurious CREW_OK for a group that lost a task, once its slot went to another).
    queue slots-1d4ef7a-flag      slots.pml fail -DCANCEL                  -DSAFETY "-m10000"
    queue slots-029ad83-reuse     slots.pml fail -DCANCEL_GEN              -DSAFETY "-m10000"
    queue slots-cancel-recheck    slots.pml pass "-DCANCEL -DFIX_RECHECK"  "-DSAFETY -DCOLLAPSE" "-m10000"
    # The code of bb5c300 and after: cancelled_gen, and crew__group_done retires the slot of a group
    # that lost tasks. Drops by shutdowns, full queues and crew_cancel's queue sweeps: must verify.
    queue slots-retire            slots.pml pass -DRETIRE                  "-DSAFETY -DCOLLAPSE" "-m10000"
    # crew_cancel itself, as the code was before (a compare-and-swap on a separate mark word, from
    # the mark it saw, re-checking the group each time): the group can end between the state read
    # and the mark, so crew_cancel answers CREW_OK and the wait CREW_OK. Must be refuted.
    queue slots-retire-cancel-cas slots.pml fail "-DRETIRE -DCANCELLER -DFIX_CANCEL_CAS" "-DSAFETY -DCOLLAPSE -DREVERSE" "-m10000"
    # The design of bb5c300 (a snapshot of the state word, then a separate store of cancelled_gen):
    # a crew_cancel whose group finishes between its load and its store writes a stale generation
    # over the mark of the slot's next group, which then releases its slot and answers CREW_OK.
    # Must be refuted (-DREVERSE finds it in seconds).
    queue slots-bb5c300-cancel    slots.pml fail "-DRETIRE -DCANCELLER"   "-DSAFETY -DCOLLAPSE -DREVERSE" "-m10000"
    # The current code: the marks are bits of the state word (crew_cancel's by a compare-and-swap
    # that requires the generation and an open task), and a wait that reports a loss frees the
    # slot (at once here: the shortest ring), which the other group may then reuse. Must verify.
    queue slots-cancel-bit-report slots.pml pass "-DFIX_CANCEL_BIT -DCANCELLER -DREPORT" "-DSAFETY -DCOLLAPSE" "-m10000"
}

if [ "${MODELS_JOBS:-2}" -gt 1 ]; then
    (lane_name=sleep_runs; lane sleep_runs) &
    (lane_name=slots_runs; lane slots_runs) &
    wait
else
    lane_name=sleep_runs; lane sleep_runs
    lane_name=slots_runs; lane slots_runs
fi

status=0
total=0
for name in $(cat "$out/sleep_runs.names" "$out/slots_runs.names"); do
    cat "$out/$name/result"
    [ "$(cat "$out/$name/status" 2>/dev/null)" = 0 ] || status=1
    total=$((total + $(cat "$out/$name/states" 2>/dev/null || echo 0)))
done
echo "models: $total states explored in all"
if [ $status -ne 0 ]; then
    echo "models: FAILED"
else
    echo "models: all as expected"
fi
exit $status
