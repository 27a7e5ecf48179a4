#!/usr/bin/env bash
# The compute corpus (images/corpus-compute/), native stress against `jinx test`, side by
# side: for every buggy program (a manifest whose `expected` is not none),
#   native   the static binary run natively on Linux in a loop, one run at a time, until
#            the first failing run (any outcome but the manifest's `ok`; a run that
#            outlives --run-timeout counts as a deadlock) or until the budget is spent
#   jinx     one `bin/jinx test --budget B --json IMAGE` (its defaults otherwise: seeds
#            1, 2, ..., --jobs 2 on 2 or more CPUs), read from its --json; "found by" is
#            its strategy, "rounds" for a find in a simulation round
# and prints one table: program, native time to bug (and runs), jinx time to bug,
# schedules, schedules per second (the --json's schedules_per_second), sparse schedules,
# cue points per schedule and decisions (points that fired) per sparse schedule, found
# or not.
#
#   scripts/bench/compute-corpus.sh [--budget DUR] [--programs a,b,...] [--run-timeout DUR]
#                                   [--seeds N] [--quick] [--markdown]
#
#   --budget DUR       per program and side, e.g. 30s, 2m (default 30s)
#   --programs LIST    default: every buggy program of images/corpus-compute
#   --run-timeout DUR  one native run's bound (default 2s; the whole run is at most the
#                      budget)
#   --seeds N          N rounds: round s runs native stress once more and
#                      `jinx test --seeds s-s --jobs 1` (one seed, one CPU: a seed's own
#                      time), and the table gives per program the finds of each side, the
#                      median time to bug of each, and in how many seeds jinx found the
#                      bug no later than native stress did (default: one round of jinx
#                      test's own defaults, as before)
#   --quick            bank-stats and wsq-last only, budget 5s (a smoke test)
#   --markdown         print the table as Markdown (for images/corpus-compute/README.md)
#
# Not part of `make test`. Needs `make` (bin/jinx, bin/jinx-vmm, images/bin/corpus-compute).
# Time to bug: wall seconds from the start of that side until its first failure (jinx:
# its --json's seconds_to_bug, when it met the bug, before any search for a replayable
# dump; the process's wall time when the build has no such field);
# "-" when not found within the budget. A jinx run that stopped because the program met
# one of jinx's own limits ("could not test") is shown as such, never as a find.
# Results: bench-results/compute-corpus.{csv,json}.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
export BIN=${BIN:-bin}
. scripts/manifest-lib.sh

MF=images/corpus-compute BINDIR=images/bin/corpus-compute
budget=30 programs="" run_tmo=2 markdown=0 seeds=0
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) [ $# -ge 2 ] || bench_die "--budget needs a duration"
              budget=$(bench_seconds "$2") || bench_die "--budget $2: expected seconds such as 30s or 2m"; shift 2 ;;
    --programs) [ $# -ge 2 ] || bench_die "--programs needs a list"; programs=$2; shift 2 ;;
    --run-timeout) [ $# -ge 2 ] || bench_die "--run-timeout needs a duration"
                   run_tmo=$(bench_seconds "$2") || bench_die "--run-timeout $2: expected seconds"; shift 2 ;;
    --seeds) [ $# -ge 2 ] || bench_die "--seeds needs a count"
             seeds=$2; [ "$seeds" -ge 1 ] 2>/dev/null || bench_die "--seeds $2: a count >= 1"; shift 2 ;;
    --quick) programs=bank-stats,wsq-last; budget=5; shift ;;
    --markdown) markdown=1; shift ;;
    -h|--help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
[ "$budget" -ge 1 ] 2>/dev/null || bench_die "--budget: at least 1s"
[ "$run_tmo" -ge 1 ] 2>/dev/null || bench_die "--run-timeout: at least 1s"
if [ -z "$programs" ]; then
  for m in "$MF"/*.manifest; do
    e=$(mf_get "$m" expected)
    [ -n "$e" ] && [ "$e" != none ] && programs="$programs${programs:+,}$(basename "$m" .manifest)"
  done
fi
IFS=, read -r -a progs <<<"$programs"
[ ${#progs[@]} -gt 0 ] || bench_die "no programs"
for p in "${progs[@]}"; do
  [ -f "$MF/$p.manifest" ] || bench_die "no $MF/$p.manifest"
  [ -x "$BINDIR/$p" ] || bench_die "no $BINDIR/$p: run make first"
done
[ -x "$BIN/jinx" ] || bench_die "no $BIN/jinx: run make first"
bench_need_build
ulimit -c 0

mkdir -p "$RESULTS"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv=$RESULTS/compute-corpus.csv
echo "program,seed,expected,native_found,native_seconds,native_runs,native_outcome,jinx_found,jinx_seconds,jinx_status,schedules,schedules_per_second,jinx_runs,could_not_test,replayable,found_by,sparse_schedules,cues_per_schedule,decisions_per_sparse_schedule" >"$csv"
host=$(bench_host)
now_us() { echo "${EPOCHREALTIME/./}"; }
secs_since() { awk -v a="$1" -v b="$(now_us)" 'BEGIN { printf "%.2f", (b - a) / 1e6 }'; }

# Native stress: prints "found seconds runs outcome".
native_side() { # program
  local p=$1 ok t0 end runs=0 st o left tmo
  ok=$(mf_get "$MF/$p.manifest" ok); [ -n "$ok" ] || ok="exit 0"
  t0=$(now_us); end=$(( t0 + budget * 1000000 ))
  while :; do
    left=$(( (end - $(now_us)) / 1000 ))            # ms
    [ "$left" -gt 0 ] || break
    tmo=$(( left < run_tmo * 1000 ? left : run_tmo * 1000 ))
    (timeout -s KILL "$(awk -v m="$tmo" 'BEGIN { printf "%.3f", m / 1000 }')" "$BINDIR/$p" >/dev/null 2>&1; exit $?) 2>/dev/null
    st=$?; runs=$((runs + 1))
    if [ $st -eq 137 ]; then
      # killed: a hang, unless it was only the budget's end that cut it short
      [ "$tmo" -lt $((run_tmo * 1000)) ] && { runs=$((runs - 1)); break; }
      st=124
    fi
    o=$(classify "$st")
    if [ "$o" != "$ok" ]; then echo "1 $(secs_since "$t0") $runs ${o// /_}"; return; fi
  done
  echo "0 $(secs_since "$t0") $runs -"
}

# jinx test: prints "found seconds status schedules sps runs could_not_test replayable found_by"
# (found_by: the --json's strategy, "rounds" for a round's find).
jinx_side() { # program seed (0: jinx test's defaults)
  local p=$1 t0 st js secs sd=()
  [ "$2" -gt 0 ] && sd=(--seeds "$2-$2" --jobs 1)
  t0=$(now_us)
  "$BIN/jinx" test --budget "${budget}s" "${sd[@]}" --json --dump-dir "$tmp/dumps-$p" "$BINDIR/$p" \
    >"$tmp/jt.out" 2>"$tmp/jt.err"; st=$?
  secs=$(secs_since "$t0")
  js=$(grep '^{' "$tmp/jt.out" | tail -1)
  rm -rf "$tmp/dumps-$p"
  python3 - "$js" "$st" "$secs" <<'EOF'
import json, sys
js, st, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    r = json.loads(js)
except Exception:
    print(f"0 {secs} {st} 0 0 0 error - - 0 0 0"); sys.exit()
found = 1 if r.get("found") else 0
# the time to bug: when jinx test met it (seconds_to_bug, before its search for a
# replayable dump of a bug met in free execution), else the process's wall time
if found and r.get("seconds_to_bug"):
    secs = f'{r["seconds_to_bug"]:.2f}'
print(found, secs, st, r.get("schedules", 0), r.get("schedules_per_second", 0), r.get("runs", 0),
      "yes" if r.get("could_not_test") else "no",
      ("yes" if r.get("replayable") else "no") if found else "-",
      (r.get("strategy") or "-") if found else "-",
      r.get("sparse_schedules", 0), r.get("cues_per_schedule", 0),
      r.get("decisions_per_sparse_schedule", 0))
EOF
}

i=0
for s in $(seq "$([ "$seeds" -gt 0 ] && echo 1 || echo 0)" "$seeds"); do
for p in "${progs[@]}"; do
  i=$((i + 1))
  exp=$(mf_get "$MF/$p.manifest" expected)
  printf '[%d/%d] %s%s: native stress ...' "$i" "$(( ${#progs[@]} * (seeds > 0 ? seeds : 1) ))" "$p" \
    "$([ "$s" -gt 0 ] && echo " seed $s")" >&2
  read -r nf ns nr no <<<"$(native_side "$p")"
  printf ' jinx test ...' >&2
  read -r jf js jst sch sps jr cnt rep fby ssch cps dps <<<"$(jinx_side "$p" "$s")"
  printf ' done (%s %s s, jinx %s %s s, load %s)\n' "$nf" "$ns" "$jf" "$js" "$(cut -d' ' -f1 /proc/loadavg)" >&2
  echo "$p,$s,${exp// /_},$nf,$ns,$nr,$no,$jf,$js,$jst,$sch,$sps,$jr,$cnt,$rep,$fby,$ssch,$cps,$dps" >>"$csv"
done
done

python3 - "$csv" "$RESULTS/compute-corpus.json" "$budget" "$host" "$markdown" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'EOF'
import csv, json, sys
sys.dont_write_bytecode = True  # no __pycache__ left in scripts/bench
sys.path.insert(0, "scripts/bench")
from table import print_table
path, out, budget, host, md, commit, load_end = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5] == "1", sys.argv[6], sys.argv[7]
rows = list(csv.DictReader(open(path)))
def t(found, s):
    return f"{float(s):.1f} s" if found == "1" else f"- (>{budget} s)"
def med(v):
    v = sorted(v)
    return None if not v else (v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2)
multi = any(r["seed"] != "0" for r in rows)
table = []
if not multi:
    hdr = ["program", "native time to bug", "native runs", "jinx time to bug", "schedules", "schedules/s",
           "sparse", "cues/schedule", "decisions/sparse", "found (native / jinx)"]
    for r in rows:
        jf = "could not test" if r["could_not_test"] == "yes" else (
            f'yes ({r.get("found_by") or "-"})' if r["jinx_found"] == "1" else "no")
        table.append([r["program"], t(r["native_found"], r["native_seconds"]), r["native_runs"],
                      t(r["jinx_found"] if r["could_not_test"] != "yes" else "0", r["jinx_seconds"]),
                      r["schedules"], r["schedules_per_second"], r["sparse_schedules"],
                      r["cues_per_schedule"], r.get("decisions_per_sparse_schedule") or "0",
                      f'{"yes" if r["native_found"] == "1" else "no"} / {jf}'])
    nn = sum(r["native_found"] == "1" for r in rows)
    nj = sum(r["jinx_found"] == "1" and r["could_not_test"] != "yes" for r in rows)
    total = len(rows)
else:
    # per program over its seeds: finds, medians (a miss counts as the budget), how often
    # jinx was no later than native stress, and how the finds were made
    hdr = ["program", "native found", "native median", "jinx found", "jinx median", "jinx times",
           "jinx <= native", "schedules/s (median)", "cues/schedule (median)",
           "decisions/sparse (median)", "found by"]
    progs = []
    for r in rows:
        if r["program"] not in progs:
            progs.append(r["program"])
    nn = nj = 0
    for p in progs:
        rs = [r for r in rows if r["program"] == p]
        def tt(found, secs):
            return float(secs) if found == "1" else float(budget)
        nf = sum(r["native_found"] == "1" for r in rs)
        jf = sum(r["jinx_found"] == "1" and r["could_not_test"] != "yes" for r in rs)
        nn += nf == len(rs); nj += jf == len(rs)
        nt = [tt(r["native_found"], r["native_seconds"]) for r in rs]
        jt = [tt(r["jinx_found"] if r["could_not_test"] != "yes" else "0", r["jinx_seconds"]) for r in rs]
        le = sum(r["jinx_found"] == "1" and (r["native_found"] != "1" or float(r["jinx_seconds"]) <= float(r["native_seconds"]))
                 for r in rs)
        by = {}
        for r in rs:
            if r["jinx_found"] == "1":
                by[r["found_by"]] = by.get(r["found_by"], 0) + 1
        fmt = lambda v, f: (f"{v:.1f} s" if v < budget or f == len(rs) else f"- (>{budget} s)")
        table.append([p, f"{nf}/{len(rs)}", fmt(med(nt), nf), f"{jf}/{len(rs)}", fmt(med(jt), jf),
                      " ".join(f"{x:.1f}" if r["jinx_found"] == "1" else "-" for x, r in zip(jt, rs)),
                      f"{le}/{len(rs)}",
                      f'{med([float(r["schedules_per_second"]) for r in rs]):.1f}',
                      f'{med([float(r["cues_per_schedule"]) for r in rs]):.1f}',
                      f'{med([float(r.get("decisions_per_sparse_schedule") or 0) for r in rs]):.2f}',
                      " ".join(f"{k} {v}" for k, v in sorted(by.items())) or "-"])
    total = len(progs)
print(f"compute corpus, budget {budget} s per side, commit {commit}, {host['date']}, "
      f"{host['cpus']} CPUs, load {host['loadavg_start']} at start, {load_end} at end")
print_table(hdr, table, md)
print(f"found{' in every seed' if multi else ''}: native {nn} of {total}, jinx {nj} of {total}")
json.dump(dict(host=host, commit=commit, budget_s=budget, load_end=load_end, rows=rows), open(out, "w"), indent=1)
EOF
bench_check_json "$RESULTS/compute-corpus.json"
echo "results: $csv $RESULTS/compute-corpus.json" >&2
