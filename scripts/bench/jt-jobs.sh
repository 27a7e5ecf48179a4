#!/usr/bin/env bash
# `jinx test --jobs 1` against `--jobs 2` (issue 14 item 4; docs/explore.md, "Jobs"):
#   throughput   a bug-free corpus twin for a fixed budget, --jobs 1 and --jobs 2 in
#                alternating order (odd pairs 1 then 2, even pairs 2 then 1): whole-run
#                schedules done within the budget, and the per-pair ratio 2 jobs / 1 job;
#                the median of the ratios is the figure (the host is shared: a ratio of two
#                neighbouring runs is less moved by others' load than either count).
#   time to bug  buggy corpus programs, --jobs 1 and --jobs 2 alternating, repetition r
#                starting at seed 1 + 100 (r - 1): jinx test's seconds to the bug.
# The load average at each run's start is recorded beside it.
#
#   scripts/bench/jt-jobs.sh [--pairs N] [--budget DUR] [--twin NAME] [--programs a,b]
#                            [--reps N] [--bug-budget DUR] [--quick]
#
#   --pairs N         throughput pairs (default 5)
#   --budget DUR      each throughput run's --budget (default 20s)
#   --twin NAME       the bug-free corpus program (default lw-flag-ok)
#   --programs LIST   buggy corpus programs for time to bug (default
#                     aba-stack,bb-shared-cond,dl-cycle3,pre3-chain)
#   --reps N          time-to-bug repetitions per program and --jobs (default 3)
#   --bug-budget DUR  their --budget (default 60s)
#   --quick           1 pair of 4 s, atom-counter once with 20 s (CI smoke)
#
# Results: bench-results/jt-jobs.{csv,json,png}.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
export BIN=${BIN:-bin}

pairs=5; budget=20; twin=lw-flag-ok; programs=aba-stack,bb-shared-cond,dl-cycle3,pre3-chain
reps=3; bug_budget=60
parse_dur() { case "$1" in *[!0-9sm]*|''|s|m) return 1 ;; *m) echo $(( ${1%m} * 60 )) ;;
  *s) echo "${1%s}" ;; *) echo "$1" ;; esac; }
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) [ $# -ge 2 ] || bench_die "--pairs needs a number"; pairs=$2; shift 2 ;;
    --budget) [ $# -ge 2 ] || bench_die "--budget needs a duration"
              budget=$(parse_dur "$2") || bench_die "--budget $2: expected seconds such as 20s"; shift 2 ;;
    --twin) [ $# -ge 2 ] || bench_die "--twin needs a name"; twin=$2; shift 2 ;;
    --programs) [ $# -ge 2 ] || bench_die "--programs needs a list"; programs=$2; shift 2 ;;
    --reps) [ $# -ge 2 ] || bench_die "--reps needs a number"; reps=$2; shift 2 ;;
    --bug-budget) [ $# -ge 2 ] || bench_die "--bug-budget needs a duration"
                  bug_budget=$(parse_dur "$2") || bench_die "--bug-budget $2: expected seconds"; shift 2 ;;
    --quick) pairs=1; budget=4; programs=atom-counter; reps=1; bug_budget=20; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
for n in "$pairs" "$reps"; do case "$n" in ''|*[!0-9]*|0) bench_die "expected a positive number, got '$n'" ;; esac; done
C=images/bin/corpus
IFS=, read -r -a progs <<<"$programs"
need=("$C/$twin"); for p in "${progs[@]}"; do need+=("$C/$p"); done
bench_need_build "$BIN/jinx" "${need[@]}"
mkdir -p "$RESULTS"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv=$RESULTS/jt-jobs.csv
echo "kind,program,index,jobs,load,seconds,schedules,schedules_per_second,found,seed" >"$csv"

# one KIND PROGRAM INDEX JOBS BUDGET [jinx test args...]: a row of the CSV
one() {
  local kind=$1 prog=$2 idx=$3 jobs=$4 b=$5; shift 5
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  "$BIN/jinx" test "$C/$prog" --jobs "$jobs" --budget "${b}s" --json --dump-dir "$tmp/d" "$@" \
    >"$tmp/out.json" 2>"$tmp/err"
  local row
  row=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print("%.2f,%d,%.1f,%d,%d" % (d["seconds"], d["schedules"], d["schedules_per_second"], d["found"], d["seed"]))' \
    "$tmp/out.json" 2>/dev/null) || { tail -3 "$tmp/err" >&2; row="nan,0,0,0,0"; }
  echo "$kind,$prog,$idx,$jobs,$load,$row" >>"$csv"
  echo "  $kind $prog #$idx --jobs $jobs (load $load): $row" >&2
  rm -rf "$tmp/d"
}

echo "throughput: $twin, $pairs pairs of ${budget} s" >&2
for i in $(seq "$pairs"); do
  if [ $((i % 2)) = 1 ]; then order="1 2"; else order="2 1"; fi
  for j in $order; do one throughput "$twin" "$i" "$j" "$budget"; done
done
echo "time to bug: ${progs[*]}, $reps repetitions, budget ${bug_budget} s" >&2
for p in "${progs[@]}"; do
  for r in $(seq "$reps"); do
    first=$((1 + 100 * (r - 1)))
    if [ $((r % 2)) = 1 ]; then order="1 2"; else order="2 1"; fi
    for j in $order; do one bug "$p" "$r" "$j" "$bug_budget" --seeds "$first-$((first + 99))"; done
  done
done

python3 - "$csv" "$RESULTS/jt-jobs.json" "$(bench_host)" "$budget" "$bug_budget" <<'PY' || bench_die "summary failed"
import csv, json, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1])))
host, budget, bug_budget = json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def med(v): return st.median(v) if v else None
thr = {}
for r in rows:
    if r["kind"] == "throughput":
        thr.setdefault(int(r["index"]), {})[int(r["jobs"])] = r
pairs = []
for i in sorted(thr):
    a, b = thr[i].get(1), thr[i].get(2)
    if not a or not b: continue
    s1, s2 = int(a["schedules"]), int(b["schedules"])
    pairs.append({"pair": i, "schedules_1": s1, "schedules_2": s2,
                  "rate_1": float(a["schedules_per_second"]), "rate_2": float(b["schedules_per_second"]),
                  "ratio": s2 / s1 if s1 else None, "load_1": float(a["load"]), "load_2": float(b["load"])})
ratios = [p["ratio"] for p in pairs if p["ratio"] is not None]
bugs = {}
for r in rows:
    if r["kind"] != "bug": continue
    b = bugs.setdefault(r["program"], {1: [], 2: []})
    b[int(r["jobs"])].append({"rep": int(r["index"]), "found": r["found"] == "1",
                              "seconds": float(r["seconds"]) if r["seconds"] != "nan" else None,
                              "schedules": int(r["schedules"]), "seed": int(r["seed"]), "load": float(r["load"])})
summary = {}
for p, b in bugs.items():
    summary[p] = {}
    for j in (1, 2):
        runs = b[j]
        secs = [x["seconds"] if x["found"] else float(bug_budget) for x in runs if x["seconds"] is not None]
        summary[p][str(j)] = {"found": sum(x["found"] for x in runs), "n": len(runs),
                              "median_seconds": med(secs), "runs": runs}
    pr = [b[2][k]["seconds"] / b[1][k]["seconds"] for k in range(min(len(b[1]), len(b[2])))
          if b[1][k]["found"] and b[2][k]["found"] and b[1][k]["seconds"]]
    summary[p]["median_ratio_seconds_2_over_1"] = med(pr)
out = {"host": host, "budget_s": budget, "bug_budget_s": bug_budget, "pairs": pairs,
       "median_ratio_schedules_2_over_1": med(ratios), "time_to_bug": summary}
json.dump(out, open(sys.argv[2], "w"), indent=1)
print("throughput (%d s budget): schedules --jobs 1 vs --jobs 2 per pair:" % budget)
for p in pairs:
    print("  pair %d: %d vs %d (ratio %.2f; load %.1f / %.1f)" % (p["pair"], p["schedules_1"], p["schedules_2"],
          p["ratio"] or 0, p["load_1"], p["load_2"]))
print("  median ratio: %s" % ("%.2f" % med(ratios) if ratios else "-"))
print("time to bug (seconds, budget %d s):" % bug_budget)
for p, s in summary.items():
    f = lambda j: " ".join("%.1f" % x["seconds"] if x["found"] else "-" for x in s[j]["runs"])
    print("  %-16s jobs 1: %s (found %d/%d)   jobs 2: %s (found %d/%d)   median ratio %s" % (
        p, f("1"), s["1"]["found"], s["1"]["n"], f("2"), s["2"]["found"], s["2"]["n"],
        "%.2f" % s["median_ratio_seconds_2_over_1"] if s["median_ratio_seconds_2_over_1"] else "-"))
PY
bench_check_json "$RESULTS/jt-jobs.json"
awk -F, '$1 == "throughput" { print $3, $4, $7 }' "$csv" >"$tmp/thr.dat"
bench_plot "$RESULTS/jt-jobs.png" "set title 'jinx test on $twin, ${budget} s: whole-run schedules, --jobs 1 vs 2'
set xlabel 'pair'; set ylabel 'schedules'; set key left; set yrange [0:*]
plot '$tmp/thr.dat' using (\$2 == 1 ? \$1 : 1/0):3 with linespoints title '--jobs 1', \
     '$tmp/thr.dat' using (\$2 == 2 ? \$1 : 1/0):3 with linespoints title '--jobs 2'"
echo "results: $csv $RESULTS/jt-jobs.json"
