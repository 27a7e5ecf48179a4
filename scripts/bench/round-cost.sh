#!/usr/bin/env bash
# Cost of one simulation round, phase by phase, against the fragment length and the
# number of simulations K: jinx-vmm run --attach --verbose-rounds prints every round's
# phase times (stop, snapshot, record, explore, simulate, score, retire, resume) and the
# worker VMs' sync time and the cue points a simulation reached (its fragment is cut by a
# 50 ms wall budget, so a slower simulation covers less); this takes the median over ROUNDS rounds for each image,
# fragment length, K and number of worker VMs (--workers N: 0 = every simulation in the
# program's VM, one after the other). Images: throughput (4 threads, mutex-contended:
# about one round with simulations a run), circle (which often crashes in the first
# round: then the next seed runs, until ROUNDS rounds are in), pingpong (`throughput
# pingpong 200000`: two threads meeting on a mutex, a round with simulations every
# time, so a worker stays warm). The worker counts run in turn for each seed, so each
# column sees the same programs and seeds under the same host load.
#
#   scripts/bench/round-cost.sh [--quick] [--rounds N] [--fragments "500us 1ms 2ms 5ms"]
#                               [--sims "1 4 8 16"] [--workers "0 1"] [--images "throughput circle"]
#
#   --quick   pingpong, fragment 1ms, K 1 and 8, 2 rounds each, workers 0 and 1 (the CI
#             smoke test: pingpong has simulations in every round, throughput not always)
#
# Medians are over the rounds that ran at least one simulation (a round whose recording
# ends with the program, or finds nothing to reorder, has none; the table counts them).
# Results: bench-results/round-cost.{csv,json,png}, raw round lines in round-cost.raw.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
BIN=${BIN:-bin}; VMM=$BIN/jinx-vmm
ROUNDS=5; FRAGS="500us 1ms 2ms 5ms"; SIMS="1 4 8 16"; WORKERS="0 1"; IMAGES="throughput circle"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) ROUNDS=2; FRAGS="1ms"; SIMS="1 8"; WORKERS="0 1"; IMAGES="pingpong"; shift ;;
    --workers) [ $# -ge 2 ] || bench_die "--workers needs a list"; WORKERS=$2; shift 2 ;;
    --images) [ $# -ge 2 ] || bench_die "--images needs a list"; IMAGES=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || bench_die "--rounds needs a number"; ROUNDS=$2; shift 2 ;;
    --fragments) [ $# -ge 2 ] || bench_die "--fragments needs a list"; FRAGS=$2; shift 2 ;;
    --sims) [ $# -ge 2 ] || bench_die "--sims needs a list"; SIMS=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
case "$ROUNDS" in ''|*[!0-9]*|0) bench_die "--rounds $ROUNDS: expected a positive number" ;; esac
bench_need_build images/bin/throughput images/bin/circle
mkdir -p "$RESULTS"
raw=$RESULTS/round-cost.raw; csv=$RESULTS/round-cost.csv; js=$RESULTS/round-cost.json
png=$RESULTS/round-cost.png; dat=$RESULTS/round-cost.dat
: >"$raw"
PHASES="stop snapshot record explore simulate score retire resume"
err=$RESULTS/round-cost.stderr

# One jinx-vmm run with rounds as fast as the duty limit allows, until WANT round lines
# are in (then SIGTERM to this run) or the program ends. Appends "TAG <round line>".
collect() { # tag want seed frag k workers image args...
  local tag=$1 want=$2 seed=$3 frag=$4 k=$5 w=$6; shift 6
  : >"$err" # now: the child's own redirection may come after the first count below
  "$VMM" run --no-control --quiet --verbose-rounds --seed "$seed" --attach 1000/s \
    --fragment "$frag" --sims "$k" --workers "$w" "$@" >/dev/null 2>"$err" &
  local pid=$! waited=0
  while kill -0 "$pid" 2>/dev/null; do
    [ "$(grep -c '^jinx: round [0-9]*: [0-9]* cue points' "$err")" -ge "$want" ] && { kill -TERM "$pid" 2>/dev/null; break; }
    sleep 0.1; waited=$((waited + 1))
    [ $waited -gt 1200 ] && { kill -TERM "$pid" 2>/dev/null; echo "round-cost: $tag: no rounds in 120 s" >&2; break; }
  done
  wait "$pid" 2>/dev/null
  grep '^jinx: round [0-9]*: [0-9]* cue points' "$err" | head -n "$want" | sed "s|^|$tag |" >>"$raw"
  grep -q "could not\|^jinx-vmm: .*expected" "$err" && { cat "$err" >&2; bench_die "jinx-vmm refused the run"; }
  return 0
}

echo "round cost: median over $ROUNDS rounds with simulations; times in ms; attach 1000/s (duty-limited to 50%)"
echo "workers: worker VMs simulating beside the program's VM (0: one after the other in it);"
echo "sync: bringing the workers to the round's snapshot (part of simulate); $(getconf _NPROCESSORS_ONLN) CPUs online"
hdr=$(printf '%-10s %6s %3s %2s %7s %6s' image frag K W rounds cues; for p in $PHASES; do printf ' %8s' "$p"; done; printf ' %8s %8s %8s %9s' sync sim-cues per-sim round)
echo "$hdr"
echo "image,fragment_ms,sims,workers,rounds_used,rounds_total,cues_median,$(echo $PHASES | tr ' ' ','),sync_ms,sim_cues_median,per_sim_ms,round_ms,sims_median" >"$csv"
json="{\"host\":$(bench_host),\"rounds\":$ROUNDS,\"goal_round_ms_at_1ms_k8\":10,\"rows\":["
for img in $IMAGES; do
  case $img in
    throughput) args=(images/bin/throughput 4 200000 2048) ;;
    pingpong) args=(images/bin/throughput pingpong 200000) ;;
    circle) args=(images/bin/circle) ;;
    *) bench_die "--images: unknown image $img (throughput, circle, pingpong)" ;;
  esac
  for f in $FRAGS; do
    for k in $SIMS; do
      # Every worker count runs each seed, in turn, until each has ROUNDS rounds.
      seed=1
      while :; do
        short=0
        for w in $WORKERS; do
          tag="$img:$f:$k:$w"
          have=$(grep -c "^$tag " "$raw")
          [ "$have" -ge "$ROUNDS" ] && continue
          short=1
          collect "$tag" $((ROUNDS - have)) "$seed" "$f" "$k" "$w" "${args[@]}"
        done
        [ $short = 0 ] && break
        seed=$((seed + 1))
        [ $seed -gt $((ROUNDS * 4)) ] && { echo "round-cost: $img:$f:$k: too few rounds in $((seed - 1)) runs" >&2; break; }
      done
      for w in $WORKERS; do
      tag="$img:$f:$k:$w"
      rows=$(grep "^$tag " "$raw")
      total=$(printf '%s' "$rows" | grep -c .)
      used_rows=$(printf '%s\n' "$rows" | grep -v ' 0 simulations,')
      used=$(printf '%s' "$used_rows" | grep -c .)
      fms=$(echo "$f" | awk '/us$/ {printf "%g", $0/1000; next} /ms$/ {printf "%g", $0+0; next} {print "nan"}')
      m() { printf '%s\n' "$used_rows" | sed -n "s/.*[ (]$1 \\([0-9.]*\\).*/\\1/p" | bench_med; }
      cues=$(printf '%s\n' "$used_rows" | sed -n 's/.*: \([0-9]*\) cue points.*/\1/p' | bench_med)
      nsim=$(printf '%s\n' "$used_rows" | sed -n 's/.* \([0-9]*\) simulations,.*/\1/p' | bench_med)
      round=$(printf '%s\n' "$used_rows" | sed -n 's/.*, \([0-9.]*\) ms (stop.*/\1/p' | bench_med)
      persim=$(printf '%s\n' "$used_rows" | sed -n 's/.* \([0-9]*\) simulations,.* simulate \([0-9.]*\).*/\2 \1/p' \
               | awk '$2 > 0 {printf "%.3f\n", $1/$2}' | bench_med)
      sync=$(printf '%s\n' "$used_rows" | sed -n 's/.*worker sync \([0-9.]*\) ms.*/\1/p' | bench_med)
      simcues=$(printf '%s\n' "$used_rows" | sed -n 's/.* \([0-9]*\) cue points a simulation.*/\1/p' | bench_med)
      line=$(printf '%-10s %6s %3s %2s %3s/%-3s %6s' "$img" "$f" "$k" "$w" "$used" "$total" "$cues")
      c="$img,$fms,$k,$w,$used,$total,$cues"; j="{\"image\":\"$img\",\"fragment_ms\":$fms,\"sims\":$k,\"workers\":$w,\"rounds_used\":$used,\"rounds_total\":$total,\"cues_median\":$cues"
      for p in $PHASES; do
        v=$(m "$p"); line="$line $(printf ' %8s' "$v")"; c="$c,$v"; j="$j,\"${p}_ms\":$v"
      done
      line="$line $(printf ' %8s %8s %8s %9s' "$sync" "$simcues" "$persim" "$round")"
      echo "$line"
      echo "$c,$sync,$simcues,$persim,$round,$nsim" >>"$csv"
      json="$json${j//nan/null},\"sync_ms\":${sync/nan/null},\"sim_cues_median\":${simcues/nan/null},\"per_sim_ms\":${persim/nan/null},\"round_ms\":${round/nan/null},\"sims_median\":${nsim/nan/null}},"
      done
    done
  done
done
echo "${json%,}]}" >"$js"
bench_check_json "$js"
goal=$(awk -F, '$1=="throughput" && $2=="1" && $3=="8" && $4=="0" {print $NF=="" ? "" : $(NF-1)}' "$csv")
[ -n "$goal" ] && echo "goal (issue 6): round <= 10 ms at 1 ms fragment, K = 8; measured on throughput: $goal ms"
echo "results: $csv $js $raw"

# Plot: stacked phases of the median round, one bar per image/fragment/K.
awk -F, 'NR > 1 { printf "%s/%sms/K%s/W%s", $1, $2, $3, $4; for (i = 8; i <= 15; i++) printf " %s", ($i == "nan" ? 0 : $i); print "" }' "$csv" >"$dat"
plot="set title 'Round cost by phase (median round, ms; W: worker VMs)'
set ylabel 'ms'; set style data histograms; set style histogram rowstacked; set style fill solid 0.7 border -1
set boxwidth 0.8; set key outside right; set xtics rotate by -45 font ',8'; set grid ytics
plot for [i=2:9] '$dat' using i:xtic(1) title word('$PHASES', i-1)"
bench_plot "$png" "$plot"
