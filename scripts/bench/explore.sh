#!/usr/bin/env bash
# Whole-run exploration on the corpus (images/corpus/, docs/explore.md): for every buggy
# corpus program, seeded repetitions of
#   S        jinx-vmm run --explore BUDGET --explore-strategy S --seed R, for each strategy S
#   native   the static binary run natively in a loop for the same budget (stress testing)
# and the bug-free twins (*-ok) under the default strategy for false positives. Every bug
# found is replayed (jinx-vmm replay) --replays times: same status, "reproduced".
#
#   scripts/bench/explore.sh [--programs a,b,...] [--strategies portfolio,pct,...] [--reps N]
#                            [--budget DUR] [--replays N] [--no-native] [--no-twins] [--quick]
#
#   --programs LIST    default: every buggy corpus program (images/bin/corpus/, not *-ok)
#   --strategies LIST  default portfolio,pct,pos,random,rf,window,flip,nest,sweep (lanes: online.h)
#   --reps N           seeds 1..N per program and mode (default 10)
#   --budget DUR       per repetition (default 60s)
#   --replays N        replays of each dump found (default 3; the issue's bar is 20)
#   --twin-strategy S  the twins' strategy (default: jinx-vmm's default, portfolio)
#   --quick            3 programs, portfolio, 1 rep, 4 s, 1 replay, 2 twins (CI smoke)
#
# Per program and mode: found k/n, median schedules to bug, median seconds to bug (wall
# time of the whole jinx-vmm run: boot, snapshot, runs, live replay, dump), over the
# repetitions that found it; misses count as "> budget" in the medians. Results:
# bench-results/explore.{csv,json,png}, raw repetitions in bench-results/explore-runs.csv.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
export BIN=${BIN:-bin}

programs=""; strats=portfolio,pct,pos,random,rf,window,flip,nest,sweep; reps=10; budget=60; replays=3
native=1; twins=1; ntwins=0; twin_budget=20; twin_strat=()
parse_dur() { case "$1" in *[!0-9sm]*|''|s|m) return 1 ;; *m) echo $(( ${1%m} * 60 )) ;;
  *s) echo "${1%s}" ;; *) echo "$1" ;; esac; }
while [ $# -gt 0 ]; do
  case "$1" in
    --programs) [ $# -ge 2 ] || bench_die "--programs needs a list"; programs=$2; shift 2 ;;
    --strategies) [ $# -ge 2 ] || bench_die "--strategies needs a list"; strats=$2; shift 2 ;;
    --reps) [ $# -ge 2 ] || bench_die "--reps needs a number"; reps=$2; shift 2 ;;
    --budget) [ $# -ge 2 ] || bench_die "--budget needs a duration"
              budget=$(parse_dur "$2") || bench_die "--budget $2: expected seconds such as 20s or 2m"; shift 2 ;;
    --replays) [ $# -ge 2 ] || bench_die "--replays needs a number"; replays=$2; shift 2 ;;
    --no-native) native=0; shift ;;
    --no-twins) twins=0; shift ;;
    --twin-strategy) [ $# -ge 2 ] || bench_die "--twin-strategy needs a strategy"
                     twin_strat=(--explore-strategy "$2"); shift 2 ;;
    --quick) programs=order-init,order-done-flag,atom-counter; strats=portfolio; reps=1
             budget=4; replays=1; ntwins=2; twin_budget=3; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
case "$reps" in ''|*[!0-9]*|0) bench_die "--reps $reps: expected a positive number" ;; esac
case "$replays" in ''|*[!0-9]*) bench_die "--replays $replays: expected a number" ;; esac
[ "$budget" -ge 1 ] 2>/dev/null || bench_die "--budget: at least 1s"
C=images/bin/corpus
[ -d "$C" ] || bench_die "no $C: run make first"
bench_need_build
if [ -z "$programs" ]; then
  programs=$(for f in "$C"/*; do [ -f "$f" ] || continue; n=$(basename "$f"); case $n in *-ok) ;; *) printf '%s,' "$n" ;; esac; done)
  programs=${programs%,}
fi
IFS=, read -r -a progs <<<"$programs"
IFS=, read -r -a modes <<<"$strats"
for s in "${modes[@]}"; do
  case $s in portfolio|pct|pos|random|rf|window|flip|nest|sweep|wake|lanes) ;; *) bench_die "unknown strategy $s (portfolio, pct, pos, random, rf, window, flip, nest, sweep, wake, lanes)" ;; esac
done
for p in "${progs[@]}"; do [ -f "$C/$p" ] && [ -x "$C/$p" ] || bench_die "no program $C/$p (make builds the corpus)"; done
[ "$native" = 1 ] && modes+=(native)

mkdir -p "$RESULTS"
raw=$RESULTS/explore-runs.csv; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "program,mode,seed,found,schedules_to_bug,seconds,status,replayed,replays" >"$raw"
host=$(bench_host)

# One repetition of jinx-vmm: prints "found schedules seconds status replayed".
explore_rep() { # program strategy seed
  local p=$1 s=$2 seed=$3 d="$tmp/d-$1-$2-$3" t0 st js found=0 sched=0 secs rep=0
  mkdir -p "$d"; t0=${EPOCHREALTIME/./}
  "$BIN/jinx-vmm" run --no-control --quiet --seed "$seed" --explore "${budget}s" \
    --explore-strategy "$s" --timeout "$((budget + 30))s" --dump-dir "$d" "$C/$p" \
    >/dev/null 2>"$tmp/run.err"; st=$?
  secs=$(awk -v a="$t0" -v b="${EPOCHREALTIME/./}" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')
  js=$(sed -n 's/^jinx-vmm: explore: \({.*}\)$/\1/p' "$tmp/run.err" | tail -1)
  sched=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["schedules_to_bug"])' "$js" 2>/dev/null || echo 0)
  [ "${sched:-0}" -gt 0 ] && found=1
  local dump; dump=$(sed -n 's/.*dump written to \(.*\.jinxdump\).*/\1/p' "$tmp/run.err" | tail -1)
  if [ $found = 1 ] && [ -n "$dump" ]; then
    local i
    for ((i = 0; i < replays; i++)); do
      "$BIN/jinx-vmm" replay "$dump" >/dev/null 2>"$tmp/rep.err"
      [ $? = "$st" ] && grep -q "replay reproduced" "$tmp/rep.err" && rep=$((rep + 1))
    done
  fi
  rm -rf "$d"
  echo "$found $sched $secs $st $rep"
}

# One repetition of native stress: the binary in a loop until a failure or the budget.
native_rep() { # program
  local p=$1 t0=${EPOCHREALTIME/./} end runs=0 st=0
  end=$(( t0 + budget * 1000000 ))
  while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do
    timeout 5 "$C/$p" >/dev/null 2>&1; st=$?; runs=$((runs + 1))
    [ $st != 0 ] && break
  done
  local secs; secs=$(awk -v a="$t0" -v b="${EPOCHREALTIME/./}" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')
  [ $st != 0 ] && echo "1 $runs $secs $st 0" || echo "0 $runs $secs 0 0"
}

total=$(( ${#progs[@]} * ${#modes[@]} * reps )); done_n=0
for p in "${progs[@]}"; do
  for m in "${modes[@]}"; do
    for ((seed = 1; seed <= reps; seed++)); do
      done_n=$((done_n + 1))
      printf '\r[%d/%d] %s %s seed %d   ' "$done_n" "$total" "$p" "$m" "$seed" >&2
      if [ "$m" = native ]; then r=$(native_rep "$p"); else r=$(explore_rep "$p" "$m" "$seed"); fi
      read -r found sched secs st rep <<<"$r"
      echo "$p,$m,$seed,$found,$sched,$secs,$st,$rep,$([ "$m" = native ] && echo 0 || echo "$replays")" >>"$raw"
    done
  done
done
printf '\r%60s\r' "" >&2

# The twins: nothing may be reported.
fp_raw=$RESULTS/explore-twins.csv; echo "twin,seed,status,schedules,false_positive" >"$fp_raw"
if [ "$twins" = 1 ]; then
  tw=()
  for f in "$C"/*-ok; do tw+=("$(basename "$f")"); done
  [ "$ntwins" -gt 0 ] && tw=("${tw[@]:0:$ntwins}")
  for t in "${tw[@]}"; do
    "$BIN/jinx-vmm" run --no-control --quiet --seed 1 --explore "$(( budget < twin_budget ? budget : twin_budget ))s" \
      "${twin_strat[@]}" --timeout "$((budget + 30))s" "$C/$t" >/dev/null 2>"$tmp/tw.err"; st=$?
    js=$(sed -n 's/^jinx-vmm: explore: \({.*}\)$/\1/p' "$tmp/tw.err" | tail -1)
    n=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["schedules"])' "$js" 2>/dev/null || echo 0)
    echo "$t,1,$st,$n,$([ "$st" = 0 ] && echo 0 || echo 1)" >>"$fp_raw"
  done
fi

python3 - "$raw" "$fp_raw" "$RESULTS" "$budget" "$host" <<'EOF'
import csv, json, sys, statistics
raw, fp_raw, out, budget, host = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
rows = list(csv.DictReader(open(raw)))
twins = list(csv.DictReader(open(fp_raw)))
progs, modes = [], []
for r in rows:
    if r["program"] not in progs: progs.append(r["program"])
    if r["mode"] not in modes: modes.append(r["mode"])
def med(xs):
    return statistics.median_low(xs) if xs else None
summary = []
for p in progs:
    for m in modes:
        rs = [r for r in rows if r["program"] == p and r["mode"] == m]
        hit = [r for r in rs if r["found"] == "1"]
        n, k = len(rs), len(hit)
        # Medians over all repetitions, a miss counting as "more than the budget".
        secs = sorted([float(r["seconds"]) for r in hit] + [float("inf")] * (n - k))
        sch = sorted([int(r["schedules_to_bug"]) for r in hit] + [10**12] * (n - k))
        ms = secs[(n - 1) // 2] if n else float("inf")
        mk = sch[(n - 1) // 2] if n else 10**12
        rep = [r for r in hit if m != "native"]
        replayed = sum(1 for r in rep if int(r["replayed"]) == int(r["replays"]) and int(r["replays"]) > 0)
        summary.append(dict(program=p, mode=m, reps=n, found=k,
                            median_seconds=None if ms == float("inf") else round(ms, 3),
                            median_schedules=None if mk == 10**12 else mk,
                            bugs_replayed_all=replayed, bugs_with_dump=len(rep)))
with open(f"{out}/explore.csv", "w") as f:
    f.write("program,mode,found,reps,median_schedules,median_seconds,bugs_replayed_every_time,bugs\n")
    for s in summary:
        f.write("%s,%s,%d,%d,%s,%s,%d,%d\n" % (s["program"], s["mode"], s["found"], s["reps"],
                "" if s["median_schedules"] is None else s["median_schedules"],
                "" if s["median_seconds"] is None else s["median_seconds"],
                s["bugs_replayed_all"], s["bugs_with_dump"]))
fp = sum(int(t["false_positive"]) for t in twins)
res = dict(host=json.loads(host), budget_s=budget, summary=summary,
           twins=dict(runs=len(twins), false_positives=fp,
                      detail=[dict(t) for t in twins]))
# Headline per mode: programs found in every repetition; median of the medians.
head = {}
for m in modes:
    ss = [s for s in summary if s["mode"] == m]
    allfound = sum(1 for s in ss if s["found"] == s["reps"])
    meds = [s["median_schedules"] for s in ss if s["median_schedules"] is not None]
    secs = [s["median_seconds"] for s in ss if s["median_seconds"] is not None]
    bugs = sum(s["bugs_with_dump"] for s in ss); okr = sum(s["bugs_replayed_all"] for s in ss)
    head[m] = dict(programs=len(ss), found_every_time=allfound,
                   median_schedules=med(meds), median_seconds=med(secs),
                   replayed_every_time_pct=round(100.0 * okr / bugs, 1) if bugs else None)
res["per_mode"] = head
json.dump(res, open(f"{out}/explore.json", "w"), indent=1)
# Table.
w = max(len(p) for p in progs) if progs else 8
print("%-*s" % (w, "program") + "".join("  %-22s" % m for m in modes))
for p in progs:
    line = "%-*s" % (w, p)
    for m in modes:
        s = next(x for x in summary if x["program"] == p and x["mode"] == m)
        cell = "%d/%d" % (s["found"], s["reps"])
        if s["median_seconds"] is not None:
            cell += " %ss" % s["median_seconds"]
            if m != "native": cell += " %sx" % s["median_schedules"]
            else: cell += " %sr" % s["median_schedules"]
        else:
            cell += " >%ds" % budget
        line += "  %-22s" % cell
    print(line)
print("(k/n found, median seconds, median schedules (x) or native runs (r) to bug; misses count as > budget)")
for m, h in head.items():
    print("%-10s found every time: %d/%d programs; median of medians: %s schedules, %s s; bugs replayed every time: %s%%"
          % (m, h["found_every_time"], h["programs"], h["median_schedules"], h["median_seconds"],
             h["replayed_every_time_pct"]))
print("twins: %d runs, %d false positives" % (len(twins), fp))
# Data for the plot: one row per program, median seconds per mode (budget for a miss).
with open(f"{out}/explore.dat", "w") as f:
    f.write("program " + " ".join(modes) + "\n")
    for p in progs:
        vals = []
        for m in modes:
            s = next(x for x in summary if x["program"] == p and x["mode"] == m)
            vals.append(str(s["median_seconds"] if s["median_seconds"] is not None else budget))
        f.write(p + " " + " ".join(vals) + "\n")
EOF
bench_check_json "$RESULTS/explore.json"
ncol=$(( ${#modes[@]} + 1 ))
bench_plot "$RESULTS/explore.png" "set title 'Median seconds to bug per corpus program (budget ${budget}s = not found)'
set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8
set logscale y; set ylabel 'seconds'; set xtics rotate by -60; set key outside
plot for [i=2:$ncol] '$RESULTS/explore.dat' using i:xtic(1) title columnheader(i)"
echo "results: $RESULTS/explore.csv $RESULTS/explore.json (raw: $raw, twins: $fp_raw)"
