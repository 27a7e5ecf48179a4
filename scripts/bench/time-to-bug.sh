#!/usr/bin/env bash
# Time to bug, side by side: for every buggy image (a manifest with an `expected`
# failure), seeded repetitions of
#   native   the static binary run natively on Linux in a loop (stress testing)
#   stress   jinx-vmm free execution, no rounds (scripts/bench/attach-find.sh --stress)
#   S        jinx-vmm --attach RATE --strategy S, for each strategy S (portfolio = default)
# Each repetition runs the image again and again (seeds BASE+1, BASE+2, ...) until the
# first failure or until the budget is spent (then: "not found within budget").
#
#   scripts/bench/time-to-bug.sh [--images circle,flag-open,...] [--runs N] [--budget DUR]
#                                [--strategies portfolio,pct,...] [--rate 5/s] [--quick]
#
#   --images LIST      default: every image whose manifest has an expected failure
#   --runs N           repetitions per image and mode (default 3)
#   --budget DUR       per repetition, e.g. 20s, 2m (default 10s)
#   --strategies LIST  default portfolio,jinx,pct,pctvb,race,random,bounded
#   --rate R           rounds per second for the attach modes (default 5/s)
#   --quick            circle only, 2 runs, portfolio only (budget 3s; the CI smoke test)
#   --from-raw FILE    measure nothing: summarize a time-to-bug-runs.csv of an earlier
#                      (possibly interrupted) run; give its --runs and --budget too
#
# A mode stops repeating once its median is known to exceed the budget (more than half
# of the planned repetitions missed). Medians count a miss as "more than the budget", so
# a median of ">20s" means most repetitions did not find the bug. Spread: min and max
# over all repetitions. Runs, rounds and simulations to bug: medians over the
# repetitions that found it. The headline is the speed-up native / portfolio (median
# wall time to the first failure).
# Results: bench-results/time-to-bug.{csv,json,png}, raw repetitions in
# bench-results/time-to-bug-runs.csv.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
export BIN=${BIN:-bin}

ALL_STRATS=portfolio,jinx,pct,pctvb,race,random,bounded
from_raw=""; images=""; runs=3; budget=10; strats=$ALL_STRATS; rate=5/s
while [ $# -gt 0 ]; do
  case "$1" in
    --images) [ $# -ge 2 ] || bench_die "--images needs a list"; images=$2; shift 2 ;;
    --runs) [ $# -ge 2 ] || bench_die "--runs needs a number"; runs=$2; shift 2 ;;
    --budget) [ $# -ge 2 ] || bench_die "--budget needs a duration"
              budget=$(bench_seconds "$2") || bench_die "--budget $2: expected seconds such as 20s or 2m"; shift 2 ;;
    --strategies) [ $# -ge 2 ] || bench_die "--strategies needs a list"; strats=$2; shift 2 ;;
    --rate) [ $# -ge 2 ] || bench_die "--rate needs a rate such as 5/s"; rate=$2; shift 2 ;;
    --from-raw) [ $# -ge 2 ] || bench_die "--from-raw needs a file"; from_raw=$2; shift 2 ;;
    --quick) images=circle; runs=2; budget=3; strats=portfolio; shift ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
case "$runs" in ''|*[!0-9]*|0) bench_die "--runs $runs: expected a positive number" ;; esac
[ "$budget" -ge 1 ] 2>/dev/null || bench_die "--budget: at least 1s"
for s in ${strats//,/ }; do
  case ",$ALL_STRATS," in *",$s,"*) ;; *) bench_die "--strategies: unknown strategy $s (known: $ALL_STRATS)" ;; esac
done
if [ -n "$from_raw" ]; then
  [ -s "$from_raw" ] || bench_die "--from-raw $from_raw: no such file"
  images=$(awk -F, 'NR > 1 && !s[$1]++ {printf "%s%s", (n++ ? "," : ""), $1}' "$from_raw")
  strats=$(awk -F, 'NR > 1 && $2 != "native" && $2 != "stress" && !s[$2]++ {printf "%s%s", (n++ ? "," : ""), $2}' "$from_raw")
  [ -n "$images" ] || bench_die "--from-raw $from_raw: no rows"
fi
if [ -z "$images" ]; then
  for m in images/*.manifest; do
    e=$(sed -n 's/^expected:[[:space:]]*//p' "$m" | head -1)
    [ -n "$e" ] && [ "$e" != none ] && images="$images${images:+,}$(basename "$m" .manifest)"
  done
fi
for n in ${images//,/ }; do
  [ -f "images/$n.manifest" ] || bench_die "no images/$n.manifest"
  e=$(sed -n 's/^expected:[[:space:]]*//p' "images/$n.manifest" | head -1)
  [ -n "$e" ] && [ "$e" != none ] || bench_die "$n has no expected failure (not a buggy image)"
  bench_need_build "images/bin/$n"
done

mkdir -p "$RESULTS"
raw=$RESULTS/time-to-bug-runs.csv; csv=$RESULTS/time-to-bug.csv; js=$RESULTS/time-to-bug.json
png=$RESULTS/time-to-bug.png; dat=$RESULTS/time-to-bug.dat
modes="native stress ${strats//,/ }"
t_start=${EPOCHREALTIME/./}
if [ -n "$from_raw" ]; then
  [ "$from_raw" -ef "$raw" ] || cp "$from_raw" "$raw"
else
echo "image,mode,rep,first_seed,found,runs,seconds,status,rounds,simulations,cues" >"$raw"
need=$(( (runs + 1) / 2 ))

echo "time to bug: images $images; modes: $modes; $runs runs each, budget ${budget}s, attach $rate"
echo "  (host: $(nproc) CPUs, $( [ -d /sys/module/kvm_pvm ] && echo 'kvm_pvm' || echo 'hardware KVM'), loadavg $(cut -d' ' -f1 /proc/loadavg))"

for n in ${images//,/ }; do
  read -r -a args <<<"$(sed -n 's/^args:[[:space:]]*//p' "images/$n.manifest" | head -1)"
  for mode in $modes; do
    misses=0
    for rep in $(seq "$runs"); do
      seed=$(( (rep - 1) * 1000 + 1 ))
      case $mode in
        native) how=(--native) ;;
        stress) how=(--stress) ;;
        *) how=(--rate "$rate" --strategy "$mode") ;;
      esac
      line=$(scripts/bench/attach-find.sh "${how[@]}" --budget "$budget" --first-seed "$seed" --json \
               "images/bin/$n" "${args[@]}") || bench_die "attach-find.sh failed for $n ($mode)"
      g() { echo "$line" | sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p"; }
      found=$(g found)
      printf '%s,%s,%d,%d,%s,%s,%s,%s,%s,%s,%s\n' "$n" "$mode" "$rep" "$seed" "$found" "$(g runs)" \
        "$(g seconds)" "$(g status)" "$(g rounds)" "$(g simulations)" "$(g cues)" >>"$raw"
      [ "$found" = true ] || misses=$((misses + 1))
      [ $((runs - misses)) -lt $need ] && break   # the median is already "> budget"
    done
    printf '.' >&2
  done
done
echo >&2
fi

# Summaries: one row per image and mode.
echo "image,mode,reps,found,time_median_s,time_min_s,time_max_s,runs_median,rounds_median,simulations_median,speedup_native_over_mode" >"$csv"
fmt_t() { case "$1" in inf) echo ">${budget}s" ;; nan) echo "-" ;; *) printf '%.2fs' "$1" ;; esac; }
printf '\n%-14s %-10s %6s %10s %21s %9s %9s %9s %10s\n' image mode found "median" "spread [min..max]" runs rounds sims speed-up
json="{\"host\":$(bench_host),\"budget_s\":$budget,\"runs\":$runs,\"rate\":\"$rate\",\"cells\":["
headline=""
for n in ${images//,/ }; do
  native_med=""
  for mode in $modes; do
    rows=$(awk -F, -v n="$n" -v m="$mode" '$1==n && $2==m' "$raw")
    [ -n "$rows" ] || continue
    reps=$(echo "$rows" | wc -l)
    nfound=$(echo "$rows" | awk -F, '$5=="true"' | wc -l)
    # misses count as +inf: the median is censored when half or more missed
    read -r tmin _ tmed _ tmax _ <<<"$(echo "$rows" | awk -F, '{print ($5=="true") ? $7 : "inf"}' | bench_summary)"
    # a mode stopped early: its median is over the planned runs, all later ones misses too
    [ "$reps" -lt "$runs" ] && tmed=inf
    rmed=$(echo "$rows" | awk -F, '$5=="true"{print $6}' | bench_med)
    romed=$(echo "$rows" | awk -F, '$5=="true" && $9!=""{print $9}' | bench_med)
    smed=$(echo "$rows" | awk -F, '$5=="true" && $10!=""{print $10}' | bench_med)
    [ "$mode" = native ] && native_med=$tmed
    # speed-up native/mode; a censored side gives a bound (>, <) or nothing
    sp=""; spj=null
    if [ "$mode" != native ] && [ -n "$native_med" ]; then
      if [ "$native_med" != inf ] && [ "$tmed" != inf ]; then
        sp=$(awk -v a="$native_med" -v b="$tmed" 'BEGIN{printf "%.2f", a/b}'); spj=$sp
      elif [ "$native_med" = inf ] && [ "$tmed" != inf ]; then
        sp=">$(awk -v a="$budget" -v b="$tmed" 'BEGIN{printf "%.2f", a/b}')"; spj="\"$sp\""
      elif [ "$native_med" != inf ]; then
        sp="<$(awk -v a="$native_med" -v b="$budget" 'BEGIN{printf "%.2f", a/b}')"; spj="\"$sp\""
      else sp="n/a"; spj="\"n/a\""
      fi
    fi
    [ "$mode" = portfolio ] && headline="$headline$(printf '  %-14s native %-8s portfolio %-8s speed-up %s' "$n" "$(fmt_t "$native_med")" "$(fmt_t "$tmed")" "${sp:-n/a}")\n"
    dash() { [ "$1" = nan ] && echo - || echo "$1"; }
    printf '%-14s %-10s %3d/%-2d %10s %21s %9s %9s %9s %10s\n' "$n" "$mode" "$nfound" "$reps" "$(fmt_t "$tmed")" \
      "[$(fmt_t "$tmin")..$(fmt_t "$tmax")]" "$(dash "$rmed")" "$(dash "$romed")" "$(dash "$smed")" "${sp:--}"
    csvt() { case "$1" in inf) echo ">$budget" ;; *) echo "$1" ;; esac; }
    echo "$n,$mode,$reps,$nfound,$(csvt "$tmed"),$(csvt "$tmin"),$(csvt "$tmax"),${rmed/nan/},${romed/nan/},${smed/nan/},$sp" >>"$csv"
    jn() { case "$1" in inf|nan|"") echo null ;; *) echo "$1" ;; esac; }
    json="$json{\"image\":\"$n\",\"mode\":\"$mode\",\"reps\":$reps,\"found\":$nfound,\"time_median_s\":$(jn "$tmed"),\"time_median_censored\":$([ "$tmed" = inf ] && echo true || echo false),\"time_min_s\":$(jn "$tmin"),\"time_max_s\":$(jn "$tmax"),\"runs_median\":$(jn "$rmed"),\"rounds_median\":$(jn "$romed"),\"simulations_median\":$(jn "$smed"),\"speedup_native_over_mode\":$spj},"
  done
done
elapsed=$(awk -v a="$t_start" -v b="${EPOCHREALTIME/./}" 'BEGIN{printf "%.0f", (b-a)/1e6}')
echo "${json%,}],\"elapsed_s\":$elapsed}" >"$js"
bench_check_json "$js"
printf '\nheadline: median wall time to the first failure, native stress vs jinx-vmm --attach %s (portfolio)\n' "$rate"
if [ -n "$headline" ]; then printf '%b' "$headline"; else echo "  (portfolio not among the strategies: see the speed-up column)"; fi
echo "(>${budget}s: not found within the budget in most repetitions; speed-ups with > or < are bounds)"
echo "results: $csv $js $raw (${elapsed}s)"

# Plot: median time per image, one bar per mode, min..max error bars; misses at the budget.
{
  printf 'image'; for m in $modes; do printf ' %s %s_min %s_max' "$m" "$m" "$m"; done; echo
  for n in ${images//,/ }; do
    printf '%s' "$n"
    for m in $modes; do
      awk -F, -v n="$n" -v m="$m" -v b="$budget" '$1==n && $2==m {
        v = ($5 ~ /^>/) ? b : $5; lo = ($6 ~ /^>/) ? b : $6; hi = ($7 ~ /^>/) ? b : $7; f = 1
        printf " %s %s %s", v, lo, hi } END { if (!f) printf " NaN NaN NaN" }' "$csv"
    done
    echo
  done
} >"$dat"
nm=$(echo $modes | wc -w)
plot="set title 'Time to first failure (median, min..max; not found = plotted at the ${budget}s budget)'
set ylabel 'seconds (log)'; set logscale y; set yrange [0.01:$((budget * 2))]
set style data histograms; set style histogram errorbars gap 2 lw 1; set style fill solid 0.6 border -1
set key outside right; set xtics rotate by -30; set grid ytics
plot for [i=0:$((nm - 1))] '$dat' using (column(2+3*i)):(column(3+3*i)):(column(4+3*i)):xtic(1) title columnheader(2+3*i)"
bench_plot "$png" "$plot"
