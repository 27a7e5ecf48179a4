#!/usr/bin/env bash
# Do rounds simulate on long-running programs whose threads compute between their shared
# accesses? Each workload runs under `jinx-vmm run --attach 5/s --stats` for SECS seconds
# (ended by --timeout) and the rounds' status at exit (its "progress" object,
# vmm/rounds/round_progress.h) gives: rounds, the share of rounds that ran simulations,
# why the others ran none, the median cue points a fragment recorded, the median
# simulations a round ran and the median cue points a simulation reached. The workloads
# are bug-free: the CSV's sim_bugs (simulations that ended in a bug) must stay 0.
#
#   scripts/bench/rounds-progress.sh [--quick] [--seconds S] [--seeds "1 2"] [--workloads "throughput correct pipeline"] [--json]
#
#   workloads: throughput = throughput 4 60000 2048 (4 threads: private hash, one mutex),
#              correct    = correct 2000000 200000 (long private work units between the
#                           shapes of circle, flag-open and wsq),
#              pipeline   = pipeline 1000000 20000 (stages computing privately, joined by
#                           condition-variable queues; images/src/pipeline.c)
#   --quick    throughput and correct, 8 s each, seed 1 (tests/integration/rounds-progress.sh)
#   --json     one JSON object on stdout instead of the table
#
# Results: bench-results/rounds-progress.{csv,json}; the raw status lines in
# rounds-progress.raw. Exit 0, or 2 for a usage error or a run without a rounds status.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
BIN=${BIN:-bin}; VMM=$BIN/jinx-vmm
SECS=20; SEEDS="1"; WORKLOADS="throughput correct pipeline"; JSON=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) SECS=8; SEEDS="1"; WORKLOADS="throughput correct"; shift ;;
    --seconds) [ $# -ge 2 ] || bench_die "--seconds needs a number"; SECS=$2; shift 2 ;;
    --seeds) [ $# -ge 2 ] || bench_die "--seeds needs a list"; SEEDS=$2; shift 2 ;;
    --workloads) [ $# -ge 2 ] || bench_die "--workloads needs a list"; WORKLOADS=$2; shift 2 ;;
    --json) JSON=1; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
case "$SECS" in ''|*[!0-9]*) bench_die "--seconds: expected a whole number of seconds" ;; esac
[ "$SECS" -ge 2 ] || bench_die "--seconds: at least 2"
for s in $SEEDS; do case "$s" in ''|*[!0-9]*) bench_die "--seeds: expected numbers, got '$s'" ;; esac; done
args_of() {
  case "$1" in
    throughput) echo "images/bin/throughput 4 60000 2048" ;;
    correct) echo "images/bin/correct 2000000 200000" ;;
    pipeline) echo "images/bin/pipeline 1000000 20000" ;;
    *) return 1 ;;
  esac
}
for w in $WORKLOADS; do args_of "$w" >/dev/null || bench_die "unknown workload '$w' (throughput, correct, pipeline)"; done
bench_need_build images/bin/throughput images/bin/correct images/bin/pipeline
mkdir -p "$RESULTS"
raw=$RESULTS/rounds-progress.raw; : >"$raw"
csv=$RESULTS/rounds-progress.csv
echo "workload,seed,rounds,rounds_with_sims,pct_with_sims,nosim_ended,nosim_unusable,nosim_none,nosim_other,record_cut,record_stopped,median_cues,median_sims,median_sim_cues,simulations,divergences,sim_bugs" >"$csv"
host=$(bench_host)

# The status object of one run, as CSV fields (python3 reads the JSON).
fields_of() {
  python3 -c '
import json, sys
s = json.loads(sys.argv[1]); p = s.get("progress", {})
r = s["rounds"]; w = p.get("rounds_with_sims", 0)
print(",".join(str(x) for x in [r, w, "%.1f" % (100.0 * w / r if r else 0),
      p.get("nosim_ended", 0), p.get("nosim_unusable", 0), p.get("nosim_none", 0),
      p.get("nosim_other", 0), p.get("record_cut", 0), p.get("record_stopped", 0),
      p.get("median_cues", 0), p.get("median_sims", 0), p.get("median_sim_cues", 0),
      s["simulations"], s["divergences"], s["sim_bugs"]]))' "$1"
}

for w in $WORKLOADS; do
  for seed in $SEEDS; do
    # shellcheck disable=SC2046
    out=$("$VMM" run --no-control --stats --seed "$seed" --attach 5/s --timeout "${SECS}s" \
          $(args_of "$w") 2>&1 >/dev/null)
    line=$(printf '%s\n' "$out" | sed -n 's/^jinx-vmm: rounds: //p' | tail -1)
    echo "$w seed $seed: $line" >>"$raw"
    if [ -z "$line" ]; then
      printf '%s\n' "$out" | tail -5 >&2
      bench_die "$w (seed $seed): no rounds status at exit (see above)"
    fi
    echo "$w,$seed,$(fields_of "$line")" >>"$csv"
  done
done

python3 - "$csv" "$RESULTS/rounds-progress.json" "$host" "$SECS" "$JSON" <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    for k in r:
        if k not in ("workload",):
            r[k] = float(r[k]) if "." in r[k] else int(r[k])
out = {"host": json.loads(sys.argv[3]), "seconds": int(sys.argv[4]), "rate": "5/s", "runs": rows}
json.dump(out, open(sys.argv[2], "w"), indent=1)
if sys.argv[5] == "1":
    print(json.dumps(out))
else:
    print("%-10s %4s %6s %9s %12s %11s %10s %9s %7s" % ("workload", "seed", "rounds", "with sims",
          "why not", "cues/frag", "sims/round", "cues/sim", "cut/stop"))
    for r in rows:
        why = "e%d u%d n%d o%d" % (r["nosim_ended"], r["nosim_unusable"], r["nosim_none"], r["nosim_other"])
        print("%-10s %4d %6d %8.1f%% %12s %11d %10d %9d %3d/%d" % (r["workload"], r["seed"], r["rounds"],
              r["pct_with_sims"], why, r["median_cues"], r["median_sims"], r["median_sim_cues"],
              r["record_cut"], r["record_stopped"]))
    print("(why not: e recording ended, u trace unusable, n no schedule proposed, o other;"
          " medians over the run's rounds; cut/stop: recordings cut by the wall budget / stopped between cue points)")
EOF
bench_check_json "$RESULTS/rounds-progress.json"
[ "$JSON" = 1 ] || echo "results: $csv $RESULTS/rounds-progress.json"
