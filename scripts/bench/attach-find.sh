#!/usr/bin/env bash
# Time to the first failure of an image, run again and again (seed 1, 2, ...) until it
# fails or the budget runs out: under jinx-vmm with simulation rounds (--attach RATE),
# or without (--stress: the same VMM, free execution only).
#   scripts/bench/attach-find.sh [--stress] [--rate 5/s] [--budget 60] [--json] IMAGE [ARGS...]
# Prints: image, mode, found (yes/no), runs, seconds, the exit status that ended it.
set -u
BIN=${BIN:-bin}; VMM="$BIN/jinx-vmm"
rate=5/s; budget=60; stress=0; json=0; extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stress) stress=1; shift ;;
    --rate) rate=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --json) json=1; shift ;;
    --) shift; break ;;
    --*) extra+=("$1" "$2"); shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--stress] [--rate R] [--budget SECONDS] IMAGE [ARGS...]" >&2; exit 2; }
img=$1; shift
name=$(basename "$img")
ok=$(sed -n 's/^ok: *exit //p' "images/$name.manifest" 2>/dev/null | head -1); ok=${ok:-0}
start=$(date +%s%N); runs=0; found=no; st=0
while :; do
  runs=$((runs + 1))
  if [ $stress = 1 ]; then
    timeout 60 "$VMM" run --no-control --quiet --seed $runs "$img" "$@" >/dev/null 2>&1; st=$?
  else
    timeout 120 "$VMM" run --no-control --quiet --seed $runs --attach "$rate" "${extra[@]}" "$img" "$@" >/dev/null 2>&1; st=$?
  fi
  if [ "$st" != "$ok" ] && [ "$st" != 124 ] && [ "$st" != 125 ]; then found=yes; break; fi
  [ "$st" = 125 ] && { echo "$0: jinx-vmm could not run $img (status 125)" >&2; exit 2; }
  now=$(date +%s%N); [ $(( (now - start) / 1000000000 )) -ge "$budget" ] && break
done
secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN{printf "%.2f", (b-a)/1e9}')
mode=$([ $stress = 1 ] && echo stress || echo "attach $rate")
if [ $json = 1 ]; then
  printf '{"image":"%s","mode":"%s","found":%s,"runs":%d,"seconds":%s,"status":%d}\n' \
    "$name" "$mode" "$([ $found = yes ] && echo true || echo false)" "$runs" "$secs" "$st"
else
  printf '%-12s %-12s found=%-3s runs=%-5d seconds=%-8s status=%d\n' "$name" "$mode" "$found" "$runs" "$secs" "$st"
fi
