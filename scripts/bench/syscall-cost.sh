#!/usr/bin/env bash
# What one guest syscall costs, broken down, with the raw KVM exit beside every figure
# (issue 14). Two parts, taken in the same run:
#  1. scripts/bench/syscall-probe.c: a bare KVM guest timing each step of the syscall
#     path (user SYSCALL, user vs ring-0 MMIO read, port I/O from user mode, #PF / int3
#     round trips in the guest, CR3 reload, invlpg, memory cue points handled wholly in
#     the guest, with PTE writes or with two page-table roots) against a ring-0 `out`
#     (the raw exit).
#  2. jinx-vmm itself: images/bin/syscall-loop KIND N; one syscall costs
#     (wall(N) - wall(0)) / N (medians of RUNS runs), with the guest-agent's in-guest
#     answers (default) and with --no-guest-answers (every syscall exits).
#
#   scripts/bench/syscall-cost.sh [--quick] [--probe-only]
#     env: RUNS=5  N=20000  KINDS="getppid getpid clock uname"  PROBE_REPEAT=5
#   --quick   RUNS=3, N=5000, probe 3 rounds of 2000 exits
#   --probe-only  part 1 only (no jinx-vmm runs; no build needed)
# Results: bench-results/syscall-cost.json (probe table + jinx figures).
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
BIN=${BIN:-bin}; BUILD=${BUILD:-build}
RUNS=${RUNS:-5}; N=${N:-20000}; KINDS=${KINDS:-"getppid getpid clock uname"}
PROBE_REPEAT=${PROBE_REPEAT:-5}; PROBE_EXITS=${PROBE_EXITS:-5000}
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) RUNS=3; N=5000; PROBE_REPEAT=3; PROBE_EXITS=2000; shift ;;
    --probe-only) PROBE_ONLY=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
[ -n "${PROBE_ONLY:-}" ] || bench_need_build images/bin/syscall-loop
mkdir -p "$RESULTS" "$BUILD/bench"
probe=$BUILD/bench/syscall-probe
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$probe" scripts/bench/syscall-probe.c \
  || bench_die "cannot build $probe"

echo "== the syscall path, step by step (bare KVM guest; median of $PROBE_REPEAT rounds) =="
probe_json=$("$probe" --json --exits "$PROBE_EXITS" --batch 5000 --repeat "$PROBE_REPEAT") \
  || bench_die "$probe failed"
raw=$(python3 - "$probe_json" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
print("%-16s %10s %8s  %s" % ("probe", "us", "x raw", "per"), file=sys.stderr)
for p in d["probes"]:
    if p["ok"]:
        print("%-16s %10.3f %8.2f  %s" % (p["probe"], p["us"], p["x_raw"], p["per"]), file=sys.stderr)
    else:
        print("%-16s %10s %8s  (%s)" % (p["probe"], "failed", "", p["why"]), file=sys.stderr)
print(d["raw_exit_us"])
PY
) || bench_die "cannot read the probe's JSON"
if [ -n "${PROBE_ONLY:-}" ]; then
  js=$RESULTS/syscall-probe.json
  echo "{\"host\":$(bench_host),\"raw_exit_us\":$raw,\"probe\":$probe_json}" >"$js"
  bench_check_json "$js"
  echo "results: $js"
  exit 0
fi

wall() { # KIND N [OPTIONS]: median wall_ms of RUNS runs (jinx-vmm --stats)
  local kind=$1 n=$2; shift 2
  for _ in $(seq "$RUNS"); do
    "$BIN/jinx-vmm" run --no-control --stats "$@" images/bin/syscall-loop "$kind" "$n" 2>&1 >/dev/null \
      | sed -n 's/.*wall_ms=\([0-9.]*\).*/\1/p'
  done | bench_med
}
exits() { # KIND N [OPTIONS]: exits of one run
  local kind=$1 n=$2; shift 2
  "$BIN/jinx-vmm" run --no-control --stats "$@" images/bin/syscall-loop "$kind" "$n" 2>&1 >/dev/null \
    | sed -n 's/.* exits=\([0-9]*\).*/\1/p'
}

echo
echo "== jinx-vmm, one syscall (N=$N, median of $RUNS; raw exit ${raw} us, from the probe above) =="
printf '%-10s %-20s %10s %8s %12s\n' kind path us/syscall "x raw" exits/syscall
rows=""
for kind in $KINDS; do
  base=$(wall "$kind" 0)
  for path in in-guest exit; do
    opt=""; [ "$path" = exit ] && opt=--no-guest-answers
    # shellcheck disable=SC2086
    w=$(wall "$kind" "$N" $opt)
    # shellcheck disable=SC2086
    e0=$(exits "$kind" 0 $opt); e1=$(exits "$kind" "$N" $opt)
    us=$(awk -v a="$w" -v b="$base" -v n="$N" 'BEGIN{printf "%.2f", (a-b)*1000/n}')
    x=$(awk -v u="$us" -v r="$raw" 'BEGIN{printf "%.2f", (r > 0) ? u / r : 0}')
    epc=$(awk -v a="$e1" -v b="$e0" -v n="$N" 'BEGIN{printf "%.3f", (a-b)/n}')
    printf '%-10s %-20s %10s %8s %12s\n' "$kind" "$path" "$us" "$x" "$epc"
    rows="$rows{\"kind\":\"$kind\",\"path\":\"$path\",\"us_per_syscall\":$us,\"x_raw\":$x,\"exits_per_syscall\":$epc},"
  done
done
js=$RESULTS/syscall-cost.json
echo "{\"host\":$(bench_host),\"n\":$N,\"runs\":$RUNS,\"raw_exit_us\":$raw,\"probe\":$probe_json,\"jinx\":[${rows%,}]}" >"$js"
bench_check_json "$js"
echo "results: $js"
