#!/usr/bin/env bash
# Sparse schedules against traced ones and against native stress, side by side in one run
# (issue 26): for each program and seed, `jinx test --jobs 1 --seeds S-S` with this build
# (BIN) and, if BASE_BIN is given, with another build (e.g. one made from the commit before
# sparse runs), and native stress (the binary run again and again until it fails, within
# the same budget). Prints a table per program: found k/n, median time to bug, median
# schedules per second, cue points per schedule, sparse schedules; writes CSV and JSON
# under $RESULTS/sparse-<time>.{csv,json}.
#
#   scripts/bench/sparse.sh [--budget S] [--seeds N] [--quick] [PROGRAM -- ARGS ...]
#   BASE_BIN=/tmp/base/bin scripts/bench/sparse.sh build/guest-tests/sparsebank
#
# Defaults: budget 60 s, seeds 1..3, programs: build/guest-tests/sparsebank and its twin.
# --quick: one seed, 20 s (the smoke test).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.sh
BIN=${BIN:-bin}; BASE_BIN=${BASE_BIN:-}
budget=60; seeds=3
progs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --quick) budget=20; seeds=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) bench_die "unknown option $1" ;;
    *) progs+=("$1"); shift ;;
  esac
done
[ ${#progs[@]} -gt 0 ] || progs=(build/guest-tests/sparsebank build/guest-tests/sparsebank_ok)
bench_need_build "${progs[@]}"
mkdir -p "$RESULTS"
stamp=$(date -u +%Y%m%d-%H%M%S)
csv="$RESULTS/sparse-$stamp.csv"
echo "program,runner,seed,found,seconds,schedules,sparse_schedules,schedules_per_second,cues_per_schedule" > "$csv"

# One jinx test run: "found seconds schedules sparse sps cues".
jt() {
  local bin=$1 prog=$2 seed=$3 out
  out=$(timeout $((budget + 90)) "$bin/jinx" test --jobs 1 --seeds "$seed-$seed" --budget "${budget}s" \
        --json --dump-dir "$tmp/d$seed" "$prog" 2>/dev/null || true)
  echo "$out" | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception:
    print("error 0 0 0 0 0"); sys.exit()
print(str(d.get("found")).lower(), d.get("seconds", 0), d.get("schedules", 0),
      d.get("sparse_schedules", 0), d.get("schedules_per_second", 0), d.get("cues_per_schedule", 0))'
}

# Native stress: the program again and again until it fails or the budget is spent.
native() {
  local prog=$1 t0 n=0 st
  t0=$(date +%s.%N)
  while awk -v a="$t0" -v b="$(date +%s.%N)" -v l="$budget" 'BEGIN{exit !(b - a < l)}'; do
    n=$((n + 1))
    st=0; timeout 20 "$prog" >/dev/null 2>&1 || st=$?
    if [ $st != 0 ]; then
      echo "true $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}') $n 0 0 0"
      return
    fi
  done
  echo "false $budget $n 0 0 0"
}

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '%-28s %-8s %6s %10s %10s %9s %10s\n' program runner found med_s sched/s cues/sch sparse
for prog in "${progs[@]}"; do
  runners="native new"; [ -n "$BASE_BIN" ] && runners="native base new"
  for runner in $runners; do
    : > "$tmp/rows"
    for seed in $(seq 1 "$seeds"); do
      case $runner in
        native) row=$(native "$prog") ;;
        base) row=$(jt "$BASE_BIN" "$prog" "$seed") ;;
        new) row=$(jt "$BIN" "$prog" "$seed") ;;
      esac
      echo "$row" >> "$tmp/rows"
      echo "$(basename "$prog"),$runner,$seed,$(echo "$row" | tr ' ' ',')" >> "$csv"
    done
    found=$(awk '$1=="true"' "$tmp/rows" | wc -l)
    med=$(awk '$1=="true" {print $2}' "$tmp/rows" | bench_med)
    sps=$(awk '{print $5}' "$tmp/rows" | bench_med)
    cues=$(awk '{print $6}' "$tmp/rows" | bench_med)
    sparse=$(awk '{print $4}' "$tmp/rows" | bench_med)
    printf '%-28s %-8s %3s/%-2s %10s %10s %9s %10s\n' "$(basename "$prog")" "$runner" "$found" \
      "$seeds" "$med" "$sps" "$cues" "$sparse"
  done
done
python3 - "$csv" > "$RESULTS/sparse-$stamp.json" <<'EOF'
import csv, json, sys
print(json.dumps(list(csv.DictReader(open(sys.argv[1]))), indent=1))
EOF
echo "results: $csv, $RESULTS/sparse-$stamp.json (budget ${budget} s, load $(cut -d' ' -f1-3 /proc/loadavg))"
