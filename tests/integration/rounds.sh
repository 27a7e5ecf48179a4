#!/usr/bin/env bash
# Simulation rounds (jinx-vmm run --attach): every buggy image's bug is found within its
# budget (runs seeded 1, 2, ... until the first failure: scripts/bench/attach-find.sh);
# the correct program never fails under rounds; retired replays never diverge; a
# simulation's output and crashes stay in the sandbox unless retired.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"
field() { sed -n "s/^$2: *//p" "images/$1.manifest" | head -1; }
status_of() { case "$1" in "exit "*) echo "${1#exit }" ;; deadlock) echo 123 ;;
  "signal "*) local s=${1#signal SIG}; echo $((128 + $(kill -l "$s"))) ;; esac; }

# Budgets: 90 s each (measured medians are 0.4-3 s, bounding-2v ~20 s; docs/rounds.md).
# Env: IMAGES (default the eight buggy images; make test runs a subset, tests/quick.conf).
IMAGES=${IMAGES:-circle flag-open race-o1o2 race-lock-x bounding-2v bounding-3t deadlock-abba wsq}
for name in $IMAGES; do
  want=$(status_of "$(field "$name" expected)")
  line=$(BIN=$BIN scripts/bench/attach-find.sh --budget 90 "images/bin/$name")
  if echo "$line" | grep -q "found=yes" && echo "$line" | grep -q "status=$want\$"; then ok "$line"
  else bad "$line (wanted status $want)"; fi
done

line=$(BIN=$BIN scripts/bench/attach-find.sh --budget 20 images/bin/correct)
if echo "$line" | grep -q "found=no"; then ok "correct under rounds: $line"; else bad "correct: $line"; fi

# Replays of retired simulations follow them exactly, and simulations stay sandboxed:
# circle's assertion message appears at most once (the retired, real failure).
div=0; asserts=0; withrounds=0
for seed in 1 2 3 4 5 6; do
  out=$("$VMM" run --no-control --stats --seed "$seed" --attach 5/s images/bin/circle 2>&1)
  d=$(echo "$out" | sed -n 's/.*"divergences":\([0-9]*\).*/\1/p'); div=$((div + ${d:-0}))
  a=$(echo "$out" | grep -c "Assertion failed"); [ "$a" -gt "$asserts" ] && asserts=$a
  echo "$out" | grep -q '"rounds":[1-9]' && withrounds=$((withrounds + 1))
done
# (a run whose program ends before the first round, 1 ms in, has none)
if [ $withrounds -ge 4 ]; then ok "rounds ran in $withrounds of 6 circle runs"; else bad "rounds ran in only $withrounds of 6 circle runs"; fi
if [ $div = 0 ]; then ok "circle, 6 seeds: no replay divergence"; else bad "circle: $div replay divergences"; fi
if [ "$asserts" -le 1 ]; then ok "simulations' output stays in the sandbox"; else bad "simulation output leaked ($asserts assertion messages in one run)"; fi

# Round options reach the driver (status JSON), and bad ones are refused.
out=$("$VMM" run --no-control --attach 5/s --sims 3 --strategy pct --depth 2 --stats images/bin/correct 2000 2>&1); st=$?
if [ $st = 0 ] && echo "$out" | grep -q '"strategy":"pct"' && echo "$out" | grep -q '"sims":3'; then
  ok "--strategy pct --depth 2 --sims 3 reach the rounds"
else bad "round options: status $st"; echo "$out" | tail -3; fi
"$VMM" run --no-control --attach 5/s --sims 0 images/bin/correct >/dev/null 2>&1; st=$?
if [ $st = 125 ]; then ok "--sims 0 refused"; else bad "--sims 0: status $st"; fi
"$VMM" run --no-control --serial --attach 5/s images/bin/correct >/dev/null 2>&1; st=$?
if [ $st = 125 ]; then ok "--attach with --serial refused"; else bad "--attach --serial: status $st"; fi

summary "round tests"
