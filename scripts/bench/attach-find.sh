#!/usr/bin/env bash
# Time to the first failure of an image, run again and again (seed 1, 2, ...) until it
# fails or the budget runs out: under jinx-vmm with simulation rounds (--attach RATE),
# without rounds (--stress: the same VMM, free execution only), or natively (--native:
# the same static binary on Linux, no VMM; a run hanging for --run-timeout is a deadlock).
#   scripts/bench/attach-find.sh [--stress|--native] [--rate 5/s] [--budget 60]
#                                [--first-seed N] [--run-timeout SECONDS] [--json]
#                                [--strategy S --sims K ...] IMAGE [ARGS...]
# Other --options (one value each) go to `jinx-vmm run` in attach mode.
# Prints: image, mode, found (yes/no), runs, seconds, the exit status that ended it.
# With --json: one JSON object, which in attach mode also has the rounds, simulations and
# cue points summed over all runs up to the failure (from jinx-vmm --stats).
set -u
BIN=${BIN:-bin}; VMM="$BIN/jinx-vmm"
rate=5/s; budget=60; stress=0; native=0; json=0; seed0=1; run_tmo=""; extra=()
usage() { echo "usage: $0 [--stress|--native] [--rate R] [--budget SECONDS] [--first-seed N] [--run-timeout SECONDS] [--json] IMAGE [ARGS...]" >&2; exit 2; }
num() { case "$2" in ''|*[!0-9]*) echo "$0: $1 needs a whole number, got '$2'" >&2; exit 2 ;; esac; }
while [ $# -gt 0 ]; do
  case "$1" in
    --stress) stress=1; shift ;;
    --native) native=1; shift ;;
    --rate) [ $# -ge 2 ] || usage; rate=$2; shift 2 ;;
    --budget) [ $# -ge 2 ] || usage; budget=${2%s}; num --budget "$budget"; shift 2 ;;
    --first-seed) [ $# -ge 2 ] || usage; seed0=$2; num --first-seed "$seed0"; shift 2 ;;
    --run-timeout) [ $# -ge 2 ] || usage; run_tmo=${2%s}; num --run-timeout "$run_tmo"; shift 2 ;;
    --json) json=1; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    --*) [ $# -ge 2 ] || usage; extra+=("$1" "$2"); shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
[ $((stress + native)) -le 1 ] || { echo "$0: --stress and --native exclude each other" >&2; exit 2; }
img=$1; shift
[ -x "$img" ] || { echo "$0: no executable $img (run make)" >&2; exit 2; }
name=$(basename "$img")
. "$(dirname "$0")/lib.sh"
[ $native = 1 ] || bench_need_kvm
ok=$(sed -n 's/^ok: *exit //p' "images/$name.manifest" 2>/dev/null | head -1); ok=${ok:-0}
if [ $native = 1 ]; then
  run_tmo=${run_tmo:-2}; ulimit -c 0
elif [ $stress = 1 ]; then run_tmo=${run_tmo:-60}
else run_tmo=${run_tmo:-120}
fi
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
start=$(now_ms); runs=0; found=no; st=0; rounds=0; sims=0; cues=0
errf=$(mktemp); trap 'rm -f "$errf"' EXIT
while :; do
  runs=$((runs + 1)); seed=$((seed0 + runs - 1))
  # a run never outlasts the budget: it gets what is left of it (at least 1 s)
  left=$(( budget - ($(now_ms) - start) / 1000 )); [ $left -lt 1 ] && left=1
  tmo=$run_tmo; [ "$left" -lt "$tmo" ] && tmo=$left
  if [ $native = 1 ]; then
    # the subshell keeps bash's "Aborted"/"Segmentation fault" job messages quiet
    (timeout "$tmo" "$img" "$@" >/dev/null 2>&1; exit $?) 2>/dev/null; st=$?
    if [ "$st" = 124 ] && [ "$tmo" = "$run_tmo" ]; then found=yes; break; fi  # a hang: deadlock
  elif [ $stress = 1 ]; then
    timeout "$tmo" "$VMM" run --no-control --quiet --seed $seed "$img" "$@" >/dev/null 2>&1; st=$?
  else
    timeout "$tmo" "$VMM" run --no-control --quiet --stats --seed $seed --attach "$rate" "${extra[@]}" \
      "$img" "$@" >/dev/null 2>"$errf"; st=$?
    r=$(sed -n 's/^jinx-vmm: rounds: .*"rounds":\([0-9]*\).*/\1/p' "$errf" | head -1)
    s=$(sed -n 's/^jinx-vmm: rounds: .*"simulations":\([0-9]*\).*/\1/p' "$errf" | head -1)
    c=$(sed -n 's/^jinx-vmm: rounds: .*"cues_total":\([0-9]*\).*/\1/p' "$errf" | head -1)
    rounds=$((rounds + ${r:-0})); sims=$((sims + ${s:-0})); cues=$((cues + ${c:-0}))
  fi
  [ "$st" = 125 ] && [ $native = 0 ] && { echo "$0: jinx-vmm could not run $img (status 125)" >&2; cat "$errf" >&2; exit 2; }
  if [ "$st" != "$ok" ] && [ "$st" != 124 ] && [ "$st" != 125 ]; then found=yes; break; fi
  [ $(( ($(now_ms) - start) / 1000 )) -ge "$budget" ] && break
done
secs=$(awk -v ms="$(( $(now_ms) - start ))" 'BEGIN{printf "%.2f", ms/1000}')
if [ $native = 1 ]; then mode=native; elif [ $stress = 1 ]; then mode=stress; else mode="attach $rate"; fi
if [ $json = 1 ]; then
  printf '{"image":"%s","mode":"%s","found":%s,"runs":%d,"seconds":%s,"status":%d' \
    "$name" "$mode" "$([ $found = yes ] && echo true || echo false)" "$runs" "$secs" "$st"
  [ $native = 0 ] && [ $stress = 0 ] && printf ',"rounds":%d,"simulations":%d,"cues":%d' "$rounds" "$sims" "$cues"
  printf '}\n'
else
  printf '%-12s %-12s found=%-3s runs=%-5d seconds=%-8s status=%d\n' "$name" "$mode" "$found" "$runs" "$secs" "$st"
fi
