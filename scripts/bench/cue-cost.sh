#!/usr/bin/env bash
# Cost of serialized execution: wall time per cue point and KVM exits per cue point,
# for whole serialized runs of a few images (median of RUNS runs each).
set -eu
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}
mkdir -p bench-results
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-26s %8s %8s %10s %10s %8s\n' image cues exits wall_ms us/cue exits/cue
json="["
for spec in "circle" "correct" "throughput 2 5 4096" "race-o1o2"; do
  raw=bench-results/cue-cost-${spec%% *}.raw; : >"$raw"
  for r in $(seq "$RUNS"); do
    # shellcheck disable=SC2086
    "${BIN:-bin}"/jinx-vmm run --serial --stats --timeout 120s images/bin/$spec 2>&1 >/dev/null \
      | grep -E "serial:|stats:" | tr '\n' ' ' >>"$raw"; echo >>"$raw"
  done
  cues=$(sed -n 's/.*serial: \([0-9]*\) cue points.*/\1/p' "$raw" | med)
  exits=$(sed -n 's/.* exits=\([0-9]*\).*/\1/p' "$raw" | med)
  wall=$(sed -n 's/.*wall_ms=\([0-9.]*\).*/\1/p' "$raw" | med)
  us=$(awk -v w="$wall" -v c="$cues" 'BEGIN{printf "%.1f", w*1000/c}')
  epc=$(awk -v e="$exits" -v c="$cues" 'BEGIN{printf "%.2f", e/c}')
  printf '%-26s %8s %8s %10s %10s %8s\n' "$spec" "$cues" "$exits" "$wall" "$us" "$epc"
  json="$json{\"image\":\"$spec\",\"cues\":$cues,\"exits\":$exits,\"wall_ms\":$wall,\"us_per_cue\":$us,\"exits_per_cue\":$epc},"
done
echo "${json%,}]" >bench-results/cue-cost.json
