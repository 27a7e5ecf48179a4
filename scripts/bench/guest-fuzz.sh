#!/usr/bin/env bash
# jinx-vmm under the hostile guest (images/bin/guestfuzz) at volume: at least CALLS guest
# syscalls in all (default 1000000, in runs of 250000 random syscalls from 4 threads),
# then every fatal variant once, thread exhaustion and memory exhaustion. Reports guest
# syscalls per second, the outcome histogram, and jinx-vmm's RSS and open fds sampled
# every second during each run (first sample, middle, last, max): a leak shows as growth
# from the middle of a long run to its end. RSS is split into the guest's memory (the
# RSS of jinx-vmm's guest RAM mapping, from /proc/PID/smaps: it follows what the guest
# has mapped) and the rest, jinx-vmm's own (host_rss).
#
#   scripts/bench/guest-fuzz.sh [--quick] [--calls N]
#   --quick   one run of 20000 syscalls, 6 fatal variants (the CI smoke test)
# Results: bench-results/guest-fuzz.{csv,json}.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
BIN=${BIN:-bin}
calls=1000000; per_run=250000; variants=38
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) calls=20000; per_run=20000; variants=6; shift ;;
    --calls) calls=$2; shift 2 ;;
    *) bench_die "usage: $0 [--quick] [--calls N]" ;;
  esac
done
FUZZ=images/bin/guestfuzz
bench_need_build "$FUZZ"
mkdir -p "$RESULTS" || exit 2
csv=$RESULTS/guest-fuzz.csv; js=$RESULTS/guest-fuzz.json
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
MEM_MIB=512
echo "run,mode,seed,status,outcome,syscalls,wall_s,samples,rss_first_kb,rss_mid_kb,rss_last_kb,rss_max_kb,host_rss_first_kb,host_rss_mid_kb,host_rss_last_kb,fds_first,fds_mid,fds_last" >"$csv"

# RSS of the guest RAM mapping (the one whose size is exactly --mem) in kB.
guest_rss() {
  awk -v want=$((MEM_MIB * 1024)) '
    /^[0-9a-f]+-[0-9a-f]+ / { cur = 0; next }
    /^Size:/ { cur = ($2 == want) }
    /^Rss:/ && cur { print $2; exit }' "/proc/$1/smaps" 2>/dev/null
}

run=0; total=0; total_ns=0
# one MODE SEED ARGS...: a run, sampled every second; appends a CSV row.
one() {
  local mode=$1 seed=$2; shift 2
  run=$((run + 1))
  local s=${EPOCHREALTIME/./}
  "$BIN/jinx-vmm" run --no-control --mem ${MEM_MIB}M --timeout 10m --seed "$seed" \
    --report "$tmp/r.json" "$FUZZ" -- "$mode" "$seed" "$@" </dev/null >/dev/null 2>"$tmp/err" &
  local pid=$! rss=() host=() fds=() r g f
  while kill -0 "$pid" 2>/dev/null; do
    r=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
    g=$(guest_rss "$pid"); f=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
    if [ -n "$r" ] && [ "$f" -gt 0 ]; then rss+=("$r"); host+=($((r - ${g:-0}))); fds+=("$f"); fi
    sleep 1
  done
  wait "$pid"; local st=$?
  local ns=$(( (${EPOCHREALTIME/./} - s) * 1000 ))
  local n; n=$(sed -n 's/.*guestfuzz: mode=[a-z]* seed=[0-9]* syscalls=\([0-9]*\).*/\1/p' "$tmp/err")
  local outcome; outcome=$(sed -n 's/^{"outcome":"\([a-z]*\)".*/\1/p' "$tmp/r.json" 2>/dev/null)
  total=$((total + ${n:-0}))
  [ "$mode" = syscalls ] && total_ns=$((total_ns + ns))
  local k=${#rss[@]} mid=$(( ${#rss[@]} / 2 )) max=0 x
  for x in "${rss[@]}"; do [ "$x" -gt "$max" ] && max=$x; done
  if [ "$k" -gt 0 ]; then
    echo "$run,$mode,$seed,$st,${outcome:-none},${n:-0},$(awk -v n="$ns" 'BEGIN{printf "%.2f", n/1e9}'),$k,${rss[0]},${rss[$mid]},${rss[$((k-1))]},$max,${host[0]},${host[$mid]},${host[$((k-1))]},${fds[0]},${fds[$mid]},${fds[$((k-1))]}" >>"$csv"
  else
    echo "$run,$mode,$seed,$st,${outcome:-none},${n:-0},$(awk -v n="$ns" 'BEGIN{printf "%.2f", n/1e9}'),0,,,,,,,,,," >>"$csv"
  fi
  echo "run $run: $mode seed $seed -> ${outcome:-none} (status $st), ${n:-0} syscalls, $k samples" >&2
}

seed=1
while [ "$total" -lt "$calls" ]; do
  one syscalls "$seed" "$per_run" 4
  seed=$((seed + 1))
  [ "$seed" -gt 1000 ] && bench_die "no progress: $total syscalls after 1000 runs"
done
for v in $(seq 0 $((variants - 1))); do one fatal $((1026 + v)) 2000; done # 1026 % 38 = 0
one threads 1
one mem 1 2000

awk -F, -v host="$(bench_host)" -v total="$total" -v ns="$total_ns" '
  NR == 1 { next }
  { hist[$5 " " $4]++; runs++
    if ($2 == "syscalls" && $8 > 0) {
      long++; if ($12 > rssmax) rssmax = $12
      g = $15 - $14; if (g > hostgrow) hostgrow = g
      fg = $18 - $17; if (fg > fdgrow) fdgrow = fg
      if (!first_host) first_host = $13; last_host = $15; first_fds = $16; last_fds = $18
    } }
  END {
    printf "{\"host\":%s,\"runs\":%d,\"guest_syscalls\":%d,\"syscall_runs_s\":%.2f,\"syscalls_per_s\":%.0f,", host, runs, total, ns / 1e9, ns ? total / (ns / 1e9) : 0
    printf "\"outcomes\":{"; sep = ""
    for (k in hist) { printf "%s\"%s\":%d", sep, k, hist[k]; sep = "," }
    printf "},\"syscall_runs\":{\"n\":%d,\"rss_max_kb\":%d,\"host_rss_first_kb\":%d,\"host_rss_last_kb\":%d,\"host_rss_growth_mid_to_end_kb_max\":%d,\"fds_first\":%d,\"fds_last\":%d,\"fds_growth_mid_to_end_max\":%d}}\n",
      long, rssmax, first_host, last_host, hostgrow, first_fds, last_fds, fdgrow
  }' "$csv" >"$js"
bench_check_json "$js"
cat "$js"
# Every run must have ended in a guest outcome.
if awk -F, 'NR > 1 && ($5 == "none" || $5 == "error" || $4 == 125) { bad = 1 } END { exit !bad }' "$csv"; then
  echo "guest-fuzz: a run did not end in a guest outcome (see $csv)" >&2; exit 1
fi
