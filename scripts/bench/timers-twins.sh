#!/usr/bin/env bash
# Issue 27's false-positive bar with timers ending early: `jinx test --timers early` on
# every bug-free program of the corpus (manifest `expected: none`: the twins of
# images/corpus and images/corpus-compute, correct, throughput, cxx-pool) finds nothing.
# A find is a false positive; "could not test" and a run stopped by its cap are counted
# apart (a program that waits on time in a loop must not livelock either: a run that
# never ends would show as few schedules).
#
#   scripts/bench/timers-twins.sh [--budget S] [--builds LIST] [--seed N] [NAME ...]
#
# Builds (each where it exists):
#   plain  images/bin/corpus/NAME, images/bin/corpus-compute/NAME, images/bin/NAME (musl)
#   widen  the -DWIDEN_WINDOW builds (images/bin/corpus/widen/NAME, ...): they sleep
#          (nanosleep) in the window their bug needs, so their twins are programs that
#          wait on time where a schedule could end a timer early
#   dyn    images/bin/dyn/corpus/NAME, images/bin/dyn/NAME (gcc -pthread, glibc)
#   tsan, asan, ubsan   scripts/bench/san-corpus.sh's builds ($BUILD/san-corpus/VARIANT/NAME;
#          run it first): gcc's TSan runtime's background thread sleeps 100 ms in a loop
# Default: --builds "plain widen", --budget 10 (seconds per program), seed 1.
# Prints a line per run and a summary per build; writes $RESULTS/timers-twins-<time>.csv.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.sh
BIN=${BIN:-bin}; SC=${BUILD:-build}/san-corpus
budget=10; builds="plain widen"; seed=1; names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=$2; shift 2 ;;
    --builds) builds=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) bench_die "unknown option $1" ;;
    *) names+=("$1"); shift ;;
  esac
done
if [ ${#names[@]} = 0 ]; then
  for m in images/*.manifest images/corpus/*.manifest images/corpus-compute/*.manifest; do
    grep -q '^expected: none$' "$m" && names+=("$(basename "$m" .manifest)")
  done
fi
# The image of NAME in BUILD, or nothing.
image() {
  local b=$1 n=$2 d
  for d in corpus/ corpus-compute/ ""; do
    case "$b" in
      plain) [ -x "images/bin/$d$n" ] && { echo "images/bin/$d$n"; return; } ;;
      widen) [ -x "images/bin/${d}widen/$n" ] && { echo "images/bin/${d}widen/$n"; return; } ;;
      dyn) [ -x "images/bin/dyn/$d$n" ] && { echo "images/bin/dyn/$d$n"; return; } ;;
    esac
  done
  case "$b" in asan*|ubsan*|tsan*) [ -x "$SC/$b/$n" ] && echo "$SC/$b/$n" ;; esac
  return 0
}
bench_need_build
mkdir -p "$RESULTS"
csv="$RESULTS/timers-twins-$(date -u +%Y%m%d-%H%M%S).csv"
echo "build,program,found,could_not_test,schedules,timers_early_all,whole_runs_too_long,outcome" >"$csv"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for b in $builds; do
  for n in "${names[@]}"; do
    img=$(image "$b" "$n"); [ -n "$img" ] || continue
    set +e
    timeout $((budget + 120)) "$BIN/jinx" test --jobs 1 --timers early --seeds "$seed-$((seed + 100000))" \
      --budget "${budget}s" --json --dump-dir "$tmp/dumps" "$img" >"$tmp/j.json" 2>"$tmp/err"
    st=$?; set -e
    line=$(python3 -c 'import json,sys
try: d = json.load(open(sys.argv[1]))
except Exception: print("error,error,0,0,0,status " + sys.argv[2]); sys.exit()
print(",".join(str(x).lower() for x in (d.get("found"), d.get("could_not_test"), d.get("schedules", 0),
      d.get("timers_early_all", 0), int(bool(d.get("whole_runs_too_long"))))) + "," + (d.get("outcome") or "-").replace(",", ";"))' \
      "$tmp/j.json" "$st")
    echo "$b,$n,$line" | tee -a "$csv"
  done
done
echo
echo "jinx test --timers early --budget ${budget}s --jobs 1, seed $seed ($(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo ?))"
for b in $builds; do
  awk -F, -v b="$b" '$1 == b { n++; if ($3 == "true") fp++; if ($4 == "true") cnt++; if ($3 == "error") err++
                                s += $5; t += $6; if ($7 > 0) stop++ }
    END { if (n) printf "%-6s %3d programs: %d false positives, %d could not test, %d errors, %d with whole runs too long (sparse); %d schedules, %d timers ended early\n",
                 b, n, fp, cnt, err, stop, s, t }' "$csv"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); results: $csv"
