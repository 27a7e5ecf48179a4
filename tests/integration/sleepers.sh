#!/usr/bin/env bash
# Serialized time with deadlines that fall due together (tests/guest/sleepers.c: four
# threads sleep to one absolute deadline, time out of futex waits and nanosleep, period
# after period, while main makes cue points and now and then waits itself). Which threads
# may run at a cue point must depend on virtual time alone, never on when a blocked
# thread's host thread happens to wake (33cdd38: futex_expire_locked). Checks:
#  1. from one snapshot, RUNS executions of one schedule are identical, three times
#     (before 33cdd38: 0 of 6 passed, 15 of 30 identical at best);
#  2. under --attach 50/s, no retired simulation's replay diverges, over three seeds
#     (before 33cdd38: 6 divergences in 7 retired simulations, at cue points 0..217).
# Env: RUNS (default 30).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; PROG="$BUILD/guest-tests/sleepers"
RUNS=${RUNS:-30}
num() { echo "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" | tail -1; }
[ -x "$PROG" ] || { echo "FAIL $PROG not built (make guest-tests)"; exit 1; }

for try in 1 2 3; do
  out=$(timeout 170 "$VMM" run --no-control --after 1ms --record 300us --simulate "$RUNS" "$PROG" 2>&1); st=$?
  first=$(echo "$out" | sed -n 's/.*simulation 1: \([0-9]*\) cue points.*/\1/p')
  if echo "$out" | grep -q "simulations: $RUNS of $RUNS identical" && [ "${first:-0}" -ge 100 ]; then
    ok "try $try: $RUNS executions of one schedule identical ($first cue points each)"
  else
    bad "try $try: status $st, simulation 1 had ${first:-no} cue points"
    echo "$out" | grep -E "simulations:|differs|wall guard|error" | head -6
  fi
done

rounds=0; retired=0; div=0
for seed in 1 2 3; do
  out=$(timeout 120 "$VMM" run --no-control --stats --seed "$seed" --attach 50/s --timeout 30s \
        "$PROG" 2000 2>&1); st=$?
  [ $st = 0 ] || bad "--attach seed $seed: status $st"
  rounds=$((rounds + $(num "$out" rounds))); retired=$((retired + $(num "$out" retired)))
  div=$((div + $(num "$out" divergences)))
  echo "$out" | grep -E "^jinx: round .*diverged" | head -3
done
if [ "$retired" -ge 3 ] && [ "$div" = 0 ]; then
  ok "--attach 50/s: $retired retired simulations in $rounds rounds, none diverged"
else bad "--attach 50/s: $div divergences in $retired retired simulations ($rounds rounds)"; fi

summary "sleepers tests"
