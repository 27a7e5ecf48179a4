#!/usr/bin/env bash
# What a sanitizer costs under jinx, per sanitizer, on one corpus program (default
# order-init-ok, a bug-free twin): boot to main (`--stats` boot_to_first_clone_us: the
# corpus programs create their threads first thing in main), the guest's wall time and
# guest memory at exit (guest_frames_used x 4 KiB) of a free run (median of RUNS), and
# the cost of a cue point: the first whole run of `jinx-vmm run --explore` from the
# snapshot (traced: one thread at a time, page ownership), its cue points and CPU time.
# Builds: plain (gcc -pthread), asan, ubsan, tsan (gcc, as scripts/bench/san-corpus.sh),
# tsan-clang and msan (clang, the runtime linked into the program). Prints a table.
#
#   scripts/bench/san-cost.sh [--runs N] [NAME]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.sh
BIN=${BIN:-bin}; OUT=${BUILD:-build}/san-cost
runs=3; name=order-init-ok
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) bench_die "unknown option $1" ;;
    *) name=$1; shift ;;
  esac
done
src=images/corpus/$name.c; [ -f "$src" ] || src=images/corpus-compute/$name.c
[ -f "$src" ] || bench_die "no images/corpus/$name.c"
bench_need_build
mkdir -p "$OUT"
base="-std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -pthread -I images/corpus -I images/src"
declare -A how=(
  [plain]="gcc $base"
  [asan]="gcc $base -fsanitize=address"
  [ubsan]="gcc $base -fsanitize=undefined -fno-sanitize-recover"
  [tsan]="gcc $base -fsanitize=thread -pie -fPIE"
  [tsan-clang]="clang $base -fsanitize=thread -pie -fPIE"
  [msan]="clang $base -fsanitize=memory -pie -fPIE"
)
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs); $name"
printf '%-11s %12s %10s %10s %10s %12s %12s\n' build boot_main_ms wall_ms mem_MiB cues run_cpu_ms us_per_cue
for b in plain asan ubsan tsan tsan-clang msan; do
  exe="$OUT/$name-$b"
  # shellcheck disable=SC2086
  [ "$exe" -nt "$src" ] || ${how[$b]} -o "$exe" "$src" 2>"$exe.log" || { echo "$b: build failed ($exe.log)"; continue; }
  env=(); [ "$b" = msan ] && env=(--env MSAN_OPTIONS=symbolize=0)
  : >"$OUT/stats"
  for _ in $(seq 1 "$runs"); do
    timeout 300 "$BIN/jinx-vmm" run --quiet --no-control --stats "${env[@]}" "$exe" >/dev/null 2>"$OUT/err" || true
    grep -o 'jinx-vmm: stats:.*' "$OUT/err" >>"$OUT/stats" || true
  done
  med() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$OUT/stats" | bench_med; }
  clone=$(awk -v u="$(med boot_to_first_clone_us)" 'BEGIN { printf "%.1f", u / 1000 }')
  mem=$(awk -v f="$(med guest_frames_used)" 'BEGIN { printf "%.0f", f * 4 / 1024 }')
  timeout 300 "$BIN/jinx-vmm" run --no-control --explore 60s --explore-runs 1 --verbose-explore \
    "${env[@]}" "$exe" >/dev/null 2>"$OUT/err" || true
  line=$(grep -m1 'explore: run 1:' "$OUT/err" || true)
  cues=$(sed -n 's/.*, \([0-9]*\) cue points in.*/\1/p' <<<"$line")
  cpu=$(sed -n 's/.*(\([0-9.]*\) ms CPU).*/\1/p' <<<"$line")
  per=$(awk -v c="${cues:-0}" -v t="${cpu:-0}" 'BEGIN { if (c > 0) printf "%.1f", t * 1000 / c; else print "-" }')
  printf '%-11s %12s %10s %10s %10s %12s %12s\n' "$b" "$clone" "$(med wall_ms)" "$mem" "${cues:--}" "${cpu:--}" "$per"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
