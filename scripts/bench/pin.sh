#!/usr/bin/env bash
# Pinned against unpinned serialized execution (vmm/kvm/pin.h; docs/benchmarks.md,
# "Pinning serialized execution"), alternating run by run in one session, the load
# average and the raw exit (syscall-probe's ring-0 `out`) recorded beside:
#   serial    whole --serial runs of a few images: us per cue point and exits per cue point
#   explore   jinx-vmm run --explore DUR images/bin/corpus/lw-flag-ok: schedules per second
#   jobs      jinx test --jobs 2 --budget DUR on the same program: schedules per second
# "pin" is the default, "nopin" adds --no-pin. Each figure is the median over ROUNDS
# (default 5), and the per-round ratio pin/nopin's median is printed beside (a ratio of
# neighbouring runs moves less with others' load than either figure).
#   scripts/bench/pin.sh [--rounds N] [--explore DUR] [--no-jobs] [--quick]
#   (--quick: 2 rounds, 6 s explorations, no jobs)
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
rounds=5; xdur=12; jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || bench_die "--rounds needs a positive number"; rounds=$2; shift 2 ;;
    --explore) [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*s?$ ]] || bench_die "--explore needs seconds such as 12s"; xdur=${2%s}; shift 2 ;;
    --no-jobs) jobs=0; shift ;;
    --quick) rounds=2; xdur=6; jobs=0; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
bench_need_build "${BIN:-bin}/jinx"
VMM=${BIN:-bin}/jinx-vmm
mkdir -p "$RESULTS" "${BUILD:-build}/bench"
probe=${BUILD:-build}/bench/syscall-probe
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$probe" scripts/bench/syscall-probe.c || exit 1
raw_exit() { "$probe" --json --exits 3000 --repeat 3 r0-out | sed -n 's/.*"raw_exit_us":\([0-9.]*\).*/\1/p'; }
raw=$RESULTS/pin-runs.txt; : >"$raw"
load() { cut -d' ' -f1 /proc/loadavg; }
raw0=$(raw_exit); load0=$(load)
images=("circle" "correct" "race-o1o2")
for ((r = 1; r <= rounds; r++)); do
  # odd rounds pinned first, even rounds unpinned first
  if ((r % 2)); then order="pin nopin"; else order="nopin pin"; fi
  for mode in $order; do
    opt=""; [ $mode = nopin ] && opt=--no-pin
    for img in "${images[@]}"; do
      # shellcheck disable=SC2086
      out=$("$VMM" run --serial --stats --no-control $opt --timeout 120s "images/bin/$img" 2>&1 >/dev/null)
      cues=$(sed -n 's/.*serial: \([0-9]*\) cue points.*/\1/p' <<<"$out")
      exits=$(sed -n 's/.* exits=\([0-9]*\).*/\1/p' <<<"$out")
      wall=$(sed -n 's/.*wall_ms=\([0-9.]*\).*/\1/p' <<<"$out")
      echo "serial $img $mode $r $(load) $cues $exits $wall" >>"$raw"
    done
    # shellcheck disable=SC2086
    out=$("$VMM" run --no-control $opt --explore "${xdur}s" images/bin/corpus/lw-flag-ok 2>&1 >/dev/null)
    sched=$(sed -n 's/.*"schedules":\([0-9]*\).*/\1/p' <<<"$out" | tail -1)
    secs=$(sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' <<<"$out" | tail -1)
    echo "explore lw-flag-ok $mode $r $(load) ${sched:-0} ${secs:-0}" >>"$raw"
    if [ $jobs = 1 ]; then
      # shellcheck disable=SC2086
      out=$("${BIN:-bin}/jinx" test --jobs 2 --budget "${xdur}s" --json $opt --dump-dir "$RESULTS/pin-jt" images/bin/corpus/lw-flag-ok 2>/dev/null)
      sched=$(sed -n 's/.*"schedules":\([0-9]*\).*/\1/p' <<<"$out" | head -1)
      secs=$(sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' <<<"$out" | head -1)
      echo "jobs lw-flag-ok $mode $r $(load) ${sched:-0} ${secs:-0}" >>"$raw"
    fi
  done
done
raw1=$(raw_exit); load1=$(load)
echo "load: $load0 at the start, $load1 at the end; raw exit $raw0 us before, $raw1 us after"
med() { bench_med; }
printf '%-22s %10s %10s %8s   %s\n' what pin nopin ratio "(median of per-round pin/nopin)"
for img in "${images[@]}"; do
  for mode in pin nopin; do
    grep "^serial $img $mode " "$raw" | awk '{ if ($6) printf "%.1f %.2f\n", $8 * 1000 / $6, $7 / $6 }' >"$raw.$mode"
  done
  up=$(cut -d' ' -f1 "$raw.pin" | med); un=$(cut -d' ' -f1 "$raw.nopin" | med)
  ep=$(cut -d' ' -f2 "$raw.pin" | med); en=$(cut -d' ' -f2 "$raw.nopin" | med)
  ratio=$(paste -d' ' <(cut -d' ' -f1 "$raw.pin") <(cut -d' ' -f1 "$raw.nopin") | awk '{print $1 / $2}' | med)
  printf '%-22s %10s %10s %8.2f   us per cue point (x raw %.1f / %.1f), exits per cue point %s / %s\n' \
    "serial $img" "$up" "$un" "$ratio" "$(awk -v u="$up" -v r="$raw0" 'BEGIN{print u / r}')" \
    "$(awk -v u="$un" -v r="$raw0" 'BEGIN{print u / r}')" "$ep" "$en"
done
for kind in explore jobs; do
  grep -q "^$kind " "$raw" || continue
  for mode in pin nopin; do
    grep "^$kind lw-flag-ok $mode " "$raw" | awk '{ if ($7 > 0) printf "%.2f\n", $6 / $7; else print 0 }' >"$raw.$mode"
  done
  ratio=$(paste -d' ' "$raw.pin" "$raw.nopin" | awk '{ if ($2 > 0) print $1 / $2 }' | med)
  printf '%-22s %10s %10s %8.2f   schedules per second (per round: %s against %s)\n' "$kind lw-flag-ok" \
    "$(med <"$raw.pin")" "$(med <"$raw.nopin")" "$ratio" "$(paste -sd, "$raw.pin")" "$(paste -sd, "$raw.nopin")"
done
rm -f "$raw.pin" "$raw.nopin"
rm -rf "$RESULTS/pin-jt"
echo "runs: $raw (kind image mode round load cues|schedules exits|seconds wall_ms)"
