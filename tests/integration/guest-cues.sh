#!/usr/bin/env bash
# Single steps ended in the guest-agent (vmm/sched/guest_step.h): serialized runs give the
# same trace, output and status with the in-guest path (default) and with --no-guest-cues
# (every step's end an exit), on images and on tests/guest/insns (every family of
# memory-operand instruction on shared pages: SSE, AVX, atomics, straddling accesses,
# rep strings, the stack, xsave). The default really ends steps in the guest and makes
# about one exit per memory cue point; --no-guest-cues about two.
set -u
BIN=${BIN:-bin}; BUILD=${BUILD:-build}; VMM="$BIN/jinx-vmm"; G="$BUILD/guest-tests"
[ -x "$G/insns" ] || { echo "no $G/insns (make guest-tests)"; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }

# run TAG [options] -- PROGRAM ARGS: sets st; files $tmp/TAG.{out,err,trace}
run() {
  local tag=$1; shift
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  timeout 300 "$VMM" run --no-control --serial --stats --timeout 240s --trace "$tmp/$tag.trace" \
    "${opts[@]}" "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.err"; st=$?
}
num() { sed -n "$2" "$1" | head -1; }

for spec in "circle" "race-o1o2" "throughput 2 5 4096" "insns"; do
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

echo "guest cue tests: $pass passed, $fail failed"
[ $fail = 0 ]
