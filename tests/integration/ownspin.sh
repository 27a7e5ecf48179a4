#!/usr/bin/env bash
# A spin on a page only the spinner has touched, under --simulate (tests/guest/ownspin.c:
# the worker spins on a flag of its own page, main yields and would set it). Page
# ownership maps the page for the worker alone, its reads are no cue points, and main
# never gets its turn back: a stall. It must be learnt (sched/stall.h: the worker's pages
# shared from their first touch, simulations started again), never left to the 5 s wall
# guard in every simulation (the correct image in determinism.sh: status 124, 33 of 100
# simulations in 170 s). Checks, TRIES times (the snapshot point is wall time):
#  1. RUNS simulations, all identical, each the whole fragment (200 cue points);
#  2. none stopped by the wall guard; exactly one stall learnt, and its report names the
#     worker as the thread with the turn, at its spin;
#  3. --record alone (no snapshot to start again from): the guard's stop names the worker.
# Env: RUNS (default 5), TRIES (default 2).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; PROG="$BUILD/guest-tests/ownspin"
RUNS=${RUNS:-5}; TRIES=${TRIES:-2}
[ -x "$PROG" ] || { echo "FAIL $PROG not built (make guest-tests)"; exit 1; }

for try in $(seq 1 "$TRIES"); do
  t0=$(date +%s)
  out=$(timeout 100 "$VMM" run --no-control --after 1ms --record 200us --simulate "$RUNS" "$PROG" 2>&1); st=$?
  secs=$(( $(date +%s) - t0 ))
  first=$(echo "$out" | sed -n 's/.*simulation 1: \([0-9]*\) cue points.*/\1/p' | tail -1)
  guard=$(echo "$out" | grep -c "stopped by the .* wall guard")
  learnt=$(echo "$out" | grep -c "made no cue point for .* spinning on pages only it had touched")
  if [ $st = 0 ] && echo "$out" | grep -q "simulations: $RUNS of $RUNS identical" && [ "${first:-0}" = 200 ]; then
    ok "try $try: $RUNS simulations identical, 200 cue points each ($secs s)"
  else
    bad "try $try: status $st, simulation 1 had ${first:-no} cue points ($secs s)"
    echo "$out" | grep -E "simulations:|differs|wall guard|error" | head -6
  fi
  if [ "$guard" = 0 ] && [ "$learnt" = 1 ] &&
     echo "$out" | grep -qE "thread 2 \(T2\): running \(its turn\); at 0x[0-9a-f]+ worker"; then
    ok "try $try: the stall learnt once, its report names the spinning worker"
  else
    bad "try $try: $guard simulations stopped by the wall guard, $learnt stalls learnt"
    echo "$out" | grep -E "wall guard|no cue point|thread [0-9]+ \(T" | head -8
  fi
done

# --record has no snapshot to start again from: the stall stays, but its report says who
# kept the turn and where.
out=$(timeout 60 "$VMM" run --no-control --after 1ms --record 200us "$PROG" 2>&1); st=$?
if [ $st = 0 ] && echo "$out" | grep -q "fragment was stopped by the .* wall guard" &&
   echo "$out" | grep -qE "the turn was thread 2's; 2 live threads" &&
   echo "$out" | grep -qE "thread 2 \(T2\): running \(its turn\); at 0x[0-9a-f]+ worker" &&
   echo "$out" | grep -qE "thread 1 \(T1\): runnable, waiting for its turn"; then
  ok "--record: the guard's stop names the spinning worker and main waiting for its turn"
else
  bad "--record: status $st, no guard report naming the worker"
  echo "$out" | grep -E "wall guard|thread [0-9]+ \(T|turn was" | head -6
fi

summary "ownspin tests"
