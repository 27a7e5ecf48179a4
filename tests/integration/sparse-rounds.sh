#!/usr/bin/env bash
# Sparse rounds (docs/rounds.md, "Sparse simulations"): under --attach, rounds from the
# third on simulate with sparse schedules (decisions only), recording every fourth round.
# Checks:
#  1. throughput (bug-free, threads computing on shared pages) under --attach 5/s: the
#     first two rounds traced, later ones sparse; no divergence, no simulated bug, exit
#     0; the status counts sparse simulations; a sparse round costs less than half a
#     traced one (medians of the same run);
#  2. --check-workers with sparse simulations (sparseround_ok): each sparse simulation,
#     re-run by its schedule (its points and choices) in the other VM, does exactly the
#     same (0 mismatches), and the twin shows no bug;
#  3. sparseround (a reader's check and use of a pointer that a writer clears and sets
#     again: two one-instruction windows) with --sim-kind sparse: a round's sparse
#     simulation meets the crash, it is retired, the program really crashes, and the
#     dump replays it (twice). Up to TRIES seeds (rounds run by wall time): 20 rounds a
#     second of 16 simulations of 2 ms (--fragment-wall 100ms) while the program runs
#     ~3 s (6000): 10 of 12 seeds found it idle (rounds 1-10). With 2000 (~1 s, 6-7
#     rounds) 7 of 12 did, and a CI run under load missed it in all 8.
# Env: TRIES (default 8).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"
TRIES=${TRIES:-8}
PROG="$BUILD/guest-tests/sparseround"; TWIN="$BUILD/guest-tests/sparseround_ok"
for p in "$PROG" "$TWIN" images/bin/throughput; do
  [ -x "$p" ] || { echo "FAIL $p not built (make guest-tests images)"; exit 1; }
done
mk_tmp
jget() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d.get(sys.argv[2], ""))' "$1" "$2"; }

# 1. throughput: traced rounds first, sparse ones after, cheaper.
out=$(timeout 300 "$VMM" run --no-control --stats --attach 5/s --verbose-rounds \
      images/bin/throughput 4 12000 2048 2>&1 >/dev/null); st=$?
js=$(printf '%s\n' "$out" | sed -n 's/^jinx-vmm: rounds: //p')
lines=$(printf '%s\n' "$out" | grep -E '^jinx: round [0-9]+: [0-9]+ cue points,')
traced=$(printf '%s\n' "$lines" | grep -c '; 0 sparse,')
sparse=$(printf '%s\n' "$lines" | grep -c '; 8 sparse,')
first=$(printf '%s\n' "$lines" | head -2 | grep -c '; 0 sparse,')
if [ "$st" = 0 ] && [ -n "$js" ] && [ "$first" = 2 ] && [ "$sparse" -ge 2 ] &&
   [ "$(jget "$js" sim_kind)" = auto ] && [ "$(jget "$js" divergences)" = 0 ] &&
   [ "$(jget "$js" sim_bugs)" = 0 ] && [ "$(jget "$js" sparse_simulations)" -ge 16 ]; then
  ok "throughput: exit 0, $traced traced rounds then $sparse sparse ones, $(jget "$js" sparse_simulations) sparse simulations, 0 divergences"
else
  bad "throughput: status $st, traced $traced (first two: $first), sparse $sparse, status JSON: $js"
fi
med() { sort -n | awk '{v[NR]=$1} END {print NR ? v[int((NR+1)/2)] : 0}'; }
tms=$(printf '%s\n' "$lines" | grep '; 0 sparse,' | sed -E 's/.* cue points, ([0-9.]+) ms .*/\1/' | med)
sms=$(printf '%s\n' "$lines" | grep '; 8 sparse,' | sed -E 's/.* cue points, ([0-9.]+) ms .*/\1/' | med)
if awk -v t="$tms" -v s="$sms" 'BEGIN {exit !(t > 0 && s > 0 && s * 2 < t)}'; then
  ok "throughput: a sparse round takes $sms ms, a traced one $tms ms (medians)"
else
  bad "throughput: a sparse round takes $sms ms, a traced one $tms ms (want less than half)"
fi

# 2. Sparse simulations replay by their schedules in another VM. A second run when the
# first had a mismatch: 1 run in ~16 under load showed one (a sparse simulation ended in
# a deadlock in one VM only, near the program's end; open, docs/rounds.md), which must
# not come twice in a row.
for attempt in 1 2; do
  out=$(timeout 120 "$VMM" run --no-control --stats --attach 5/s --sim-kind sparse --workers 1 \
        --check-workers "$TWIN" 600 2>&1); st=$?
  js=$(printf '%s\n' "$out" | sed -n 's/^jinx-vmm: rounds: //p')
  chk=$(jget "$js" worker_checked); mm=$(jget "$js" worker_mismatches)
  [ "$mm" = 0 ] && break
  echo "     NOTE: run $attempt: $mm mismatches between the VMs (known rare nondeterminism)"
  printf '%s\n' "$out" | grep -E 'gave another result|divergence' | sed 's/^/     | /'
done
if [ "$st" = 0 ] && [ "${chk:-0}" -gt 0 ] && [ "$mm" = 0 ] && [ "$(jget "$js" sim_bugs)" = 0 ] &&
   [ "$(jget "$js" divergences)" = 0 ]; then
  ok "sparseround_ok: $chk sparse simulations re-run in the other VM, 0 mismatches, no bug"
else
  bad "sparseround_ok --check-workers: status $st, checked ${chk:-?}, mismatches ${mm:-?}: $js"
fi

# 3. A round's sparse simulation finds sparseround's crash; its dump replays.
found=""
for seed in $(seq 1 "$TRIES"); do
  rm -rf "$tmp/d"
  out=$(timeout 120 "$VMM" run --no-control --attach 20/s --sims 16 --fragment-wall 100ms \
        --sim-kind sparse --seed "$seed" \
        --dump-dir "$tmp/d" "$PROG" 6000 2>&1); st=$?
  if printf '%s\n' "$out" | grep -qE 'crashed in real execution \(round [0-9]+, SIGSEGV'; then
    found=$seed; break
  fi
  echo "     seed $seed: status $st, no crash retired by a round"
done
if [ -z "$found" ]; then
  bad "sparseround: no round retired its crash in $TRIES seeds"
else
  dump=$(ls "$tmp"/d/*.jinxdump 2>/dev/null | head -1)
  r=0
  for _ in 1 2; do
    timeout 120 "$VMM" replay "$dump" 2>&1 | grep -q 'replay reproduced the dump.s crash: SIGSEGV' && r=$((r+1))
  done
  [ "$r" = 2 ] && ok "sparseround: seed $found's round retired the crash, its dump replays 2/2" ||
    bad "sparseround: seed $found's dump ($dump) replayed $r/2"
fi

# The twin under sparse rounds alone: no bug.
out=$(timeout 120 "$VMM" run --no-control --attach 5/s --sim-kind sparse "$TWIN" 1000 2>&1); st=$?
[ "$st" = 0 ] && printf '%s\n' "$out" | grep -q 'sparseround: ok' &&
  ok "sparseround_ok: exit 0 under sparse rounds" || bad "sparseround_ok: status $st: $(printf '%s\n' "$out" | tail -3)"

summary "sparse rounds"
