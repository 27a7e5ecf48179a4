#!/usr/bin/env bash
# Issue 27's bar, measured: each of its programs (sanitizer builds of racy tests, the
# sleep-ordered bugs) found by `jinx test --budget 60s --seeds S-S --jobs 1` in every
# seed, the first found dump replaying to the same report every time, and nothing found
# on the bug-free twins. Prints, per program: found k/n, median and max time to the bug
# (the summary's seconds), the strategy that found it most often, replays of one dump that
# reproduced its outcome (and, for a sanitizer's report, printed the same tool and kind);
# per twin: schedules run and whether anything was found (a false positive). Writes
# $RESULTS/sanitizers-<time>.csv. The host's load average is printed at the start and end
# (the machine is shared: times are upper bounds; counts are what to compare).
#
#   scripts/bench/sanitizers.sh [--budget S] [--seeds N] [--replays R] [--twin-budget S]
#                               [--quick] [PROGRAM ...]
#   PROGRAM is a name under build/guest-tests; a name ending in _ok is a twin.
#
# Defaults: budget 60 s, seeds 1..10, 20 replays, twins 60 s each (one run, seeds from 1);
# programs: san_uaf_asan san_dfree_asan san_overflow_ubsan san_race_tsan san_race_tsan_clang
# san_uninit_msan sleepuaf sleepdouble sleeporder and their _ok twins. --quick: 2 seeds, 3 replays, twins 10 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.sh
BIN=${BIN:-bin}; G=${BUILD:-build}/guest-tests
budget=60; seeds=10; replays=20; twin_budget=60
progs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --replays) replays=$2; shift 2 ;;
    --twin-budget) twin_budget=$2; shift 2 ;;
    --quick) seeds=2; replays=3; twin_budget=10; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) bench_die "unknown option $1" ;;
    *) progs+=("$1"); shift ;;
  esac
done
if [ ${#progs[@]} = 0 ]; then
  for p in san_uaf_asan san_dfree_asan san_overflow_ubsan san_race_tsan san_race_tsan_clang \
           san_uninit_msan sleepuaf sleepdouble sleeporder; do progs+=("$p"); done
  for p in san_uaf_asan san_dfree_asan san_overflow_ubsan san_race_tsan san_race_tsan_clang \
           san_uninit_msan sleepuaf sleepdouble sleeporder; do progs+=("${p}_ok"); done
fi
paths=(); for p in "${progs[@]}"; do paths+=("$G/$p"); done
bench_need_build "${paths[@]}"
mkdir -p "$RESULTS"
stamp=$(date -u +%Y%m%d-%H%M%S)
csv="$RESULTS/sanitizers-$stamp.csv"
echo "program,seed,found,seconds,schedules,strategy,outcome,report" >"$csv"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"

# One jinx test run, its JSON's fields as "found seconds schedules strategy outcome report dump".
jt() {
  local prog=$1 seedarg=$2 bud=$3 dir=$4
  timeout $((bud + 120)) "$BIN/jinx" test --jobs 1 $seedarg --budget "${bud}s" --json \
    --dump-dir "$dir" "$G/$prog" 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception:
    print("error 0 0 - - - -"); sys.exit()
r = d.get("report") or {}
rep = (r.get("tool", "") + ":" + r.get("kind", "")) if r else "-"
print(str(d.get("found")).lower() if not d.get("could_not_test") else "limit",
      d.get("seconds", 0), d.get("schedules", 0), d.get("strategy") or "-",
      (d.get("outcome") or "-").replace(" ", "_"), rep, d.get("dump") or "-")' || echo "error 0 0 - - - -"
}

table=(); twins=()
for prog in "${progs[@]}"; do
  if [[ $prog == *_ok ]]; then
    read -r found secs scheds strat outcome rep dump < <(jt "$prog" "" "$twin_budget" "$tmp/twin")
    echo "$prog,all,$found,$secs,$scheds,$strat,$outcome,$rep" >>"$csv"
    fp=$([ "$found" = false ] && echo 0 || echo "1 ($found $outcome $rep)")
    twins+=("$(printf '%-22s %6ss %10s  %s' "$prog" "$twin_budget" "$scheds" "$fp")")
    echo "twin $prog: $found in ${twin_budget}s, $scheds schedules"
    continue
  fi
  n=0; times=(); first_dump=""; want=""; strats=()
  for s in $(seq 1 "$seeds"); do
    read -r found secs scheds strat outcome rep dump < <(jt "$prog" "--seeds $s-$s" "$budget" "$tmp/d-$prog-$s")
    echo "$prog,$s,$found,$secs,$scheds,$strat,$outcome,$rep" >>"$csv"
    echo "$prog seed $s: $found ${secs}s schedules $scheds $strat $outcome $rep"
    if [ "$found" = true ]; then
      n=$((n + 1)); times+=("$secs"); strats+=("$strat")
      [ -z "$first_dump" ] && { first_dump=$dump; want=$rep; }
    fi
  done
  good=0
  if [ -n "$first_dump" ] && [ -f "$first_dump" ]; then
    for _ in $(seq 1 "$replays"); do
      timeout 120 "$BIN/jinx-vmm" replay "$first_dump" >/dev/null 2>"$tmp/rep" || true
      grep -qE "replay reproduced the dump's (outcome|crash)" "$tmp/rep" || continue
      if [ "$want" != "-" ]; then
        grep -q "replay printed the dump's sanitizer report: ${want%%:*} ${want#*:}" "$tmp/rep" || continue
      fi
      good=$((good + 1))
    done
  fi
  med=$(printf '%s\n' "${times[@]:-}" | grep . | bench_med)
  max=$(printf '%s\n' "${times[@]:-}" | grep . | sort -g | tail -1)
  strat=$(printf '%s\n' "${strats[@]:-}" | grep . | sort | uniq -c | sort -rn | awk 'NR==1{print $2}')
  table+=("$(printf '%-22s %5s %8s %8s  %-8s %7s  %s' "$prog" "$n/$seeds" "${med:-nan}" "${max:--}" \
            "${strat:--}" "$good/$([ -n "$first_dump" ] && echo "$replays" || echo 0)" "${want:--}")")
done

echo
echo "jinx test --budget ${budget}s --jobs 1, seeds 1..$seeds ($(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo ?))"
printf '%-22s %5s %8s %8s  %-8s %7s  %s\n' program found median_s max_s strategy replays report
for l in "${table[@]:-}"; do [ -n "$l" ] && echo "$l"; done
if [ ${#twins[@]} -gt 0 ]; then
  echo
  printf '%-22s %7s %10s  %s\n' twin budget schedules false_positive
  for l in "${twins[@]}"; do echo "$l"; done
fi
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); results: $csv"
