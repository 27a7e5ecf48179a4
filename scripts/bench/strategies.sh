#!/usr/bin/env bash
# Whole-run strategies on the bug corpus: every buggy images/corpus program (NAME.c
# without -ok) x strategy x seed, each one `jinx-vmm run --explore BUDGET` from the
# first clone, reading schedules_to_bug from its explore JSON line (0 = not found).
#
#   scripts/bench/strategies.sh [--programs a,b,...] [--strategies portfolio,pct,...]
#                               [--seeds N] [--budget DUR] [--jobs N] [--many] [--quick]
#                               [--out DIR] [--from-raw FILE]
#
#   --programs LIST    default: every buggy corpus program except many-* (their runs
#                      are too long for a whole-run budget; --many keeps them)
#   --strategies LIST  default portfolio,pct,pos,random,rf
#   --seeds N          seeds 1..N per program and strategy (default 3)
#   --budget DUR       per exploration, e.g. 15s (default 15s)
#   --jobs N           explorations at once (default 1: the machine is shared)
#   --quick            5 programs, portfolio only, 2 seeds, 8 s (a smoke test)
#   --from-raw FILE    measure nothing: print the table of an earlier raw CSV (give
#                      its --budget too: a median of misses shows as ">BUDGET")
#
# Prints a table per strategy: found k/n, median schedules to bug over the found ones
# (and over all, a miss counting as infinite: ">budget" when most missed), the
# programs missed. Results: OUT/strategies-runs.csv (raw, one line per exploration)
# and OUT/strategies.csv (the table); OUT defaults to bench-results.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
export BIN=${BIN:-bin}

programs=""; strats=portfolio,pct,pos,random,rf; seeds=3; budget=15; jobs=1; many=0
out=$RESULTS; from_raw=""
parse_dur() { case "$1" in *[!0-9s]*|''|s) return 1 ;; *s) echo "${1%s}" ;; *) echo "$1" ;; esac; }
while [ $# -gt 0 ]; do
  case "$1" in
    --programs) [ $# -ge 2 ] || bench_die "--programs needs a list"; programs=$2; shift 2 ;;
    --strategies) [ $# -ge 2 ] || bench_die "--strategies needs a list"; strats=$2; shift 2 ;;
    --seeds) [ $# -ge 2 ] || bench_die "--seeds needs a number"; seeds=$2; shift 2 ;;
    --budget) [ $# -ge 2 ] || bench_die "--budget needs a duration"
              budget=$(parse_dur "$2") || bench_die "--budget $2: expected seconds such as 15s"; shift 2 ;;
    --jobs) [ $# -ge 2 ] || bench_die "--jobs needs a number"; jobs=$2; shift 2 ;;
    --many) many=1; shift ;;
    --out) [ $# -ge 2 ] || bench_die "--out needs a directory"; out=$2; shift 2 ;;
    --from-raw) [ $# -ge 2 ] || bench_die "--from-raw needs a file"; from_raw=$2; shift 2 ;;
    --quick) programs=atom-counter,order-init,dl-abba,pre2-two-reads,lw-flag
             strats=portfolio; seeds=2; budget=8; shift ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
for n in "$seeds" "$jobs" "$budget"; do
  case "$n" in ''|*[!0-9]*|0) bench_die "--seeds, --jobs and --budget must be positive numbers (got $n)" ;; esac
done

table() { # raw CSV -> table on stdout and $out/strategies.csv
  awk -F, -v budget="$budget" -v csv="$out/strategies.csv" '
    function median(list, n,   a, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n ? a[int((n + 1) / 2)] : "-"
    }
    NR == 1 { next }
    { s = $2; if (!(s in n)) order[++ns] = s; n[s]++
      if ($4 > 0) { k[s]++; found[s] = found[s] " " $4; all[s] = all[s] " " $4 }
      else { all[s] = all[s] " 1e18"; if (index(" " miss[s] " ", " " $1 " ") == 0) miss[s] = miss[s] " " $1 } }
    END {
      printf "%-10s %7s %14s %12s  %s\n", "strategy", "found", "median(found)", "median(all)", "missed"
      print "strategy,runs,found,median_found,median_all,missed" > csv
      for (i = 1; i <= ns; i++) {
        s = order[i]; mf = median(found[s]); ma = median(all[s])
        if (ma == "1e18") ma = ">" budget "s"
        printf "%-10s %3d/%-3d %14s %12s %s\n", s, k[s], n[s], mf, ma, miss[s]
        printf "%s,%d,%d,%s,%s,%s\n", s, n[s], k[s], mf, ma, miss[s] > csv
      }
    }' "$1"
}

mkdir -p "$out" || bench_die "cannot create $out"
if [ -n "$from_raw" ]; then
  [ -r "$from_raw" ] || bench_die "cannot read $from_raw"
  table "$from_raw"; exit 0
fi
bench_need_build
if [ -z "$programs" ]; then
  for f in images/corpus/*.c; do
    nm=$(basename "$f" .c)
    case "$nm" in *-ok) continue ;; many-*) [ "$many" = 1 ] || continue ;; esac
    programs="$programs${programs:+,}$nm"
  done
fi
for p in ${programs//,/ }; do
  [ -x "images/bin/corpus/$p" ] || bench_die "no images/bin/corpus/$p: run make -j2 images"
done

raw=$out/strategies-runs.csv
echo "program,strategy,seed,schedules_to_bug,schedules,cues_mean,seconds" > "$raw"
one() { # program strategy seed -> one CSV line
  local line
  line=$("$BIN/jinx-vmm" run --no-control --quiet --explore "${budget}s" --explore-strategy "$2" \
           --seed "$3" "images/bin/corpus/$1" 2>&1 | grep -o 'explore: {.*}' | head -n1)
  python3 - "$1" "$2" "$3" "${line#explore: }" <<'EOF'
import json, sys
p, s, seed, js = sys.argv[1:5]
try:
    j = json.loads(js)
except ValueError:
    j = {}
print(f"{p},{s},{seed},{j.get('schedules_to_bug', 0)},{j.get('schedules', 0)},"
      f"{j.get('cues_mean', 0)},{j.get('seconds', 0)}")
EOF
}
export -f one; export budget
for p in ${programs//,/ }; do
  for s in ${strats//,/ }; do
    for seed in $(seq 1 "$seeds"); do echo "$p $s $seed"; done
  done
done | xargs -P "$jobs" -L 1 bash -c 'one "$0" "$1" "$2"' | tee -a "$raw" >&2
table "$raw"
