#!/usr/bin/env bash
# Single steps ended in the guest-agent (vmm/sched/guest_step.h): serialized runs give the
# same trace, output and status with the in-guest path (default) and with --no-guest-cues
# (every step's end an exit), on images and on tests/guest/insns (every family of
# memory-operand instruction on shared pages: SSE, AVX, atomics, straddling accesses,
# rep strings, the stack, xsave). The default really ends steps in the guest and makes
# about one exit per memory cue point; --no-guest-cues about two. The same for memory cue
# points taken in the guest (--guest-cue-points), below.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; G="$BUILD/guest-tests"
[ -x "$G/insns" ] || { echo "no $G/insns (make guest-tests)"; exit 2; }
mk_tmp

# run TAG [options] -- PROGRAM ARGS: sets st; files $tmp/TAG.{out,err,trace}
run() {
  local tag=$1; shift
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  timeout 300 "$VMM" run --no-control --serial --stats --timeout 240s --trace "$tmp/$tag.trace" \
    "${opts[@]}" "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.err"; st=$?
}
num() { sed -n "$2" "$1" | head -1; }

# GUEST_CUES_SUBSET=1 (make test, tests/quick.conf): circle and insns only (race-o1o2 and
# throughput show the same in make check-long).
specs=("circle" "race-o1o2" "throughput 2 5 4096" "insns")
[ "${GUEST_CUES_SUBSET:-0}" = 1 ] && specs=("circle" "insns")
for spec in "${specs[@]}"; do
  name=${spec%% *}
  # shellcheck disable=SC2086
  if [ "$name" = insns ]; then prog=("$G/insns" 1); extra=(--cpu-model host)
  else prog=(images/bin/$spec); extra=(); fi
  run guest "${extra[@]}" -- "${prog[@]}"; sg=$st
  run exit --no-guest-cues "${extra[@]}" -- "${prog[@]}"; se=$st
  if [ "$sg" = "$se" ] && cmp -s "$tmp/guest.trace" "$tmp/exit.trace" && cmp -s "$tmp/guest.out" "$tmp/exit.out" &&
     [ -s "$tmp/guest.trace" ]; then
    ok "$name: same status ($sg), output and trace ($(wc -l <"$tmp/guest.trace") cue points) in both paths"
  else
    bad "$name: status $sg vs $se, trace $(wc -l <"$tmp/guest.trace") vs $(wc -l <"$tmp/exit.trace") lines"
    diff "$tmp/guest.trace" "$tmp/exit.trace" | head -6 | sed 's/^/     | /'
  fi
  steps=$(num "$tmp/guest.err" 's/.*steps: \([0-9]*\) single steps.*/\1/p')
  ing=$(num "$tmp/guest.err" 's/.*single steps, \([0-9]*\) ended in the guest.*/\1/p')
  ing_off=$(num "$tmp/exit.err" 's/.*single steps, \([0-9]*\) ended in the guest.*/\1/p')
  if [ -n "$steps" ] && [ "$steps" -gt 0 ] && [ "$ing" -ge $((steps * 9 / 10)) ] && [ "$ing_off" = 0 ]; then
    ok "$name: $ing of $steps single steps ended in the guest (0 with --no-guest-cues)"
  else bad "$name: steps ended in the guest: ${ing:-?} of ${steps:-?}, with --no-guest-cues ${ing_off:-?}"; fi
  cues=$(wc -l <"$tmp/guest.trace")
  eg=$(num "$tmp/guest.err" 's/.* exits=\([0-9]*\).*/\1/p'); ee=$(num "$tmp/exit.err" 's/.* exits=\([0-9]*\).*/\1/p')
  # Each step ended in the guest is one exit fewer.
  if [ -n "$eg" ] && [ -n "$ee" ] && [ $((ee - eg)) -ge "$ing" ] && [ "$cues" -gt 0 ]; then
    ok "$name: $eg exits in the guest path, $ee without ($(awk -v a="$eg" -v b="$ee" -v c="$cues" 'BEGIN{printf "%.2f vs %.2f per cue point", a/c, b/c}'))"
  else bad "$name: exits $eg (guest) vs $ee (exit path), $ing steps ended in the guest"; fi
done

# Memory cue points taken in the guest (--guest-cue-points, vmm/sched/guest_cue.h): the
# same trace, output and status as the exit path, with cue points really taken in the
# guest and fewer exits; none with --no-guest-cues. circle runs under a schedule of long
# segments (the budget is the rest of a segment), insns under the default policy (the
# budget is unbounded while one thread is alone).
printf 'T1 x400\nT2 x400\nT3 x400\nT1 x400\nT2 x400\nT3 x400\ndefault continue\n' >"$tmp/segs.txt"
for spec in "circle" "insns"; do
  if [ "$spec" = insns ]; then prog=("$G/insns" 1); extra=(--cpu-model host)
  else prog=(images/bin/circle); extra=(--schedule "$tmp/segs.txt"); fi
  run cues --guest-cue-points "${extra[@]}" -- "${prog[@]}"; sc=$st
  run exit --no-guest-cues "${extra[@]}" -- "${prog[@]}"; se=$st
  run off --no-guest-cues --guest-cue-points "${extra[@]}" -- "${prog[@]}"; so=$st
  cues=$(wc -l <"$tmp/cues.trace")
  if [ "$sc" = "$se" ] && [ "$so" = "$se" ] && cmp -s "$tmp/cues.trace" "$tmp/exit.trace" &&
     cmp -s "$tmp/cues.out" "$tmp/exit.out" && cmp -s "$tmp/off.trace" "$tmp/exit.trace" && [ "$cues" -gt 0 ]; then
    ok "$spec --guest-cue-points: same status ($sc), output and trace ($cues cue points) as the exit path"
  else
    bad "$spec --guest-cue-points: status $sc vs $se, trace $cues vs $(wc -l <"$tmp/exit.trace") lines"
    grep -h "error" "$tmp/cues.err" | head -3 | sed 's/^/     | /'
    diff "$tmp/cues.trace" "$tmp/exit.trace" | head -6 | sed 's/^/     | /'
  fi
  gc=$(num "$tmp/cues.err" 's/.*guest cues: \([0-9]*\) memory cue points.*/\1/p')
  go=$(num "$tmp/off.err" 's/.*guest cues: \([0-9]*\) memory cue points.*/\1/p')
  ec=$(num "$tmp/cues.err" 's/.* exits=\([0-9]*\).*/\1/p'); ee=$(num "$tmp/exit.err" 's/.* exits=\([0-9]*\).*/\1/p')
  # Each cue point taken in the guest saves its #PF exit (and its step's #DB exit).
  if [ -n "$gc" ] && [ "$gc" -ge $((cues / 20)) ] && [ "$go" = 0 ] && [ -n "$ec" ] &&
     [ $((ee - ec)) -ge "$gc" ]; then
    ok "$spec: $gc of $cues cue points taken in the guest, $ec exits against $ee (0 with --no-guest-cues)"
  else bad "$spec: cue points in the guest ${gc:-?} of $cues (off: ${go:-?}), exits ${ec:-?} vs ${ee:-?}"; fi
done

# Snapshots and restores with cue points taken in the guest: every simulation of one
# schedule from one snapshot is the same (trace and memory).
printf 'T1 x100\nT2 x100\nT3 x100\nT1 x100\nT2 x100\nT3 x100\n' >"$tmp/segs100.txt"
timeout 200 "$VMM" run --no-control --stats --after 1ms --record 300us --simulate 6 --schedule "$tmp/segs100.txt" \
  --guest-cue-points images/bin/cxx-race >/dev/null 2>"$tmp/sim.err"
same=$(num "$tmp/sim.err" 's/.*simulations: \([0-9]*\) of 6 identical.*/\1/p')
gc=$(num "$tmp/sim.err" 's/.*guest cues: \([0-9]*\) memory cue points.*/\1/p')
if [ "$same" = 6 ] && [ "${gc:-0}" -gt 0 ]; then ok "cxx-race --simulate 6 --guest-cue-points: 6 of 6 identical, $gc cue points taken in the guest"
else bad "cxx-race --simulate 6 --guest-cue-points: ${same:-?} of 6 identical, ${gc:-?} cue points in the guest"; fi

summary "guest cue tests"
