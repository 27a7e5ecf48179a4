#!/usr/bin/env bash
# Cost of serialized execution: wall time per cue point and KVM exits per cue point,
# for whole serialized runs of a few images (median of RUNS runs each).
# The raw KVM exit round trip (scripts/bench/syscall-probe.c, ring-0 `out`) is measured
# in the same run (median of 3 rounds of 3000 exits, before and after the runs) and
# printed beside each figure (x raw, against the one before). Every image runs in three
# paths, alternating run by run: `guest` (the default: a single step's end is handled by
# the guest-agent, vmm/sched/guest_step.h), `exit` (--no-guest-cues: every step's end is
# an exit) and `cues` (--guest-cue-points: memory cue points taken in the guest while the
# schedule surely keeps the running thread, vmm/sched/guest_cue.h). `circle@segs` is
# circle under a schedule of 400-cue-point segments (where the cue points' budget is
# known); the others follow the default policy. in_guest = steps ended in the guest /
# single steps; cues_in_guest = cue points taken in the guest / cue points.
#   scripts/bench/cue-cost.sh [--quick]    (--quick: RUNS=2)
set -eu
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}
case "${1:-}" in
  --quick) RUNS=2 ;;
  '') ;;
  *) echo "cue-cost.sh: unknown argument $1 (usage: cue-cost.sh [--quick])" >&2; exit 2 ;;
esac
. scripts/bench/lib.sh
bench_need_kvm
mkdir -p bench-results "${BUILD:-build}/bench"
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
probe=${BUILD:-build}/bench/syscall-probe
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$probe" scripts/bench/syscall-probe.c
raw_exit() { "$probe" --json --exits 3000 --repeat 3 r0-out | sed -n 's/.*"raw_exit_us":\([0-9.]*\).*/\1/p'; }
raw_us=$(raw_exit)
segs=bench-results/cue-cost-segs.txt
printf 'T1 x400\nT2 x400\nT3 x400\nT1 x400\nT2 x400\nT3 x400\ndefault continue\n' >"$segs"
printf '%-22s %-6s %7s %7s %9s %8s %9s %6s %8s %13s\n' image path cues exits wall_ms us/cue exits/cue "x raw" in_guest cues_in_guest
json="["
for spec in "circle" "circle@segs" "correct" "throughput 2 5 4096" "race-o1o2"; do
  name=${spec%% *}; img=${spec%@segs}; sched=""
  [ "$img" != "$spec" ] && sched="--schedule $segs"
  for path in guest exit cues; do : >"bench-results/cue-cost-$name-$path.raw"; done
  for _ in $(seq "$RUNS"); do
    for path in guest exit cues; do
      opt=""; [ $path = exit ] && opt=--no-guest-cues; [ $path = cues ] && opt=--guest-cue-points
      # shellcheck disable=SC2086
      "${BIN:-bin}"/jinx-vmm run --serial --stats $opt $sched --timeout 120s images/bin/$img 2>&1 >/dev/null \
        | grep -E "serial:|stats:|steps:|guest cues:" | tr '\n' ' ' >>"bench-results/cue-cost-$name-$path.raw"
      echo >>"bench-results/cue-cost-$name-$path.raw"
    done
  done
  for path in guest exit cues; do
    raw=bench-results/cue-cost-$name-$path.raw
    cues=$(sed -n 's/.*serial: \([0-9]*\) cue points.*/\1/p' "$raw" | med)
    exits=$(sed -n 's/.* exits=\([0-9]*\).*/\1/p' "$raw" | med)
    wall=$(sed -n 's/.*wall_ms=\([0-9.]*\).*/\1/p' "$raw" | med)
    steps=$(sed -n 's/.*steps: \([0-9]*\) single steps.*/\1/p' "$raw" | med)
    gsteps=$(sed -n 's/.*single steps, \([0-9]*\) ended in the guest.*/\1/p' "$raw" | med)
    us=$(awk -v w="$wall" -v c="$cues" 'BEGIN{printf "%.1f", w*1000/c}')
    epc=$(awk -v e="$exits" -v c="$cues" 'BEGIN{printf "%.2f", e/c}')
    x=$(awk -v u="$us" -v r="$raw_us" 'BEGIN{printf "%.1f", (r > 0) ? u / r : 0}')
    share=$(awk -v g="${gsteps:-0}" -v s="${steps:-0}" 'BEGIN{printf "%.2f", (s > 0) ? g / s : 0}')
    gcues=$(sed -n 's/.*guest cues: \([0-9]*\) memory cue points.*/\1/p' "$raw" | med)
    cshare=$(awk -v g="${gcues:-0}" -v c="${cues:-0}" 'BEGIN{printf "%.2f", (c > 0) ? g / c : 0}')
    printf '%-22s %-6s %7s %7s %9s %8s %9s %6s %8s %13s\n' "$spec" "$path" "$cues" "$exits" "$wall" "$us" "$epc" "$x" "$share" "$cshare"
    json="$json{\"image\":\"$spec\",\"path\":\"$path\",\"cues\":$cues,\"exits\":$exits,\"wall_ms\":$wall,\"us_per_cue\":$us,\"exits_per_cue\":$epc,\"x_raw\":$x,\"in_guest_share\":$share,\"cues_in_guest_share\":$cshare},"
  done
done
raw_us_end=$(raw_exit)
echo "raw exit (ring-0 out, bare guest): $raw_us us before the runs, $raw_us_end us after"
echo "{\"raw_exit_us\":$raw_us,\"raw_exit_us_after\":$raw_us_end,\"images\":${json%,}]}" >bench-results/cue-cost.json
