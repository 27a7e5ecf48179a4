#!/usr/bin/env bash
# Free execution under jinx-vmm against the same static binary run natively on Linux,
# same thread count, alternating runs in one session so machine noise hits both alike.
# Reports the median ratio of the CPU-bound phase and of the mutex-contended phase, and
# the futex round-trip cost (two threads ping-ponging through a condition variable).
# env JINX_OPTS: extra jinx-vmm options (e.g. --no-guest-answers: every syscall exits).
set -eu
cd "$(dirname "$0")/../.."
# Each CPU phase is long (CPU units) so that the 3 clock_gettime calls per iteration, a
# vDSO call natively but a syscall under jinx-vmm, do not dominate what is measured.
RUNS=${RUNS:-7}; THREADS=${THREADS:-4}; ITERS=${ITERS:-20}; CPU=${CPU:-409600}; PINGS=${PINGS:-20000}
IMG=images/bin/throughput
. scripts/bench/lib.sh
bench_need_kvm
mkdir -p bench-results
: >bench-results/free-vs-native.raw
for r in $(seq "$RUNS"); do
  echo "native $($IMG "$THREADS" "$ITERS" "$CPU")" >>bench-results/free-vs-native.raw
  # shellcheck disable=SC2086
  echo "jinx $(bin/jinx-vmm run --quiet ${JINX_OPTS:-} $IMG "$THREADS" "$ITERS" "$CPU")" >>bench-results/free-vs-native.raw
done
echo "native $($IMG pingpong "$PINGS")" >>bench-results/free-vs-native.raw
# shellcheck disable=SC2086
echo "jinx $(bin/jinx-vmm run --quiet ${JINX_OPTS:-} $IMG pingpong "$PINGS")" >>bench-results/free-vs-native.raw
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
get() { grep "^$1 " bench-results/free-vs-native.raw | sed -n "s/.*$2=\([0-9.]*\).*/\1/p" | med; }
nc=$(get native cpu_phase_ms); jc=$(get jinx cpu_phase_ms)
nm=$(get native mutex_phase_ms); jm=$(get jinx mutex_phase_ms)
np=$(get native pingpong_roundtrip_ns); jp=$(get jinx pingpong_roundtrip_ns)
rc=$(awk -v a="$jc" -v b="$nc" 'BEGIN{printf "%.3f", a/b}')
rm=$(awk -v a="$jm" -v b="$nm" 'BEGIN{printf "%.3f", a/b}')
rp=$(awk -v a="$jp" -v b="$np" 'BEGIN{printf "%.2f", a/b}')
printf 'throughput image, %d threads, %d iterations, median of %d alternating runs\n' "$THREADS" "$ITERS" "$RUNS"
printf '  %-22s %12s %12s %8s\n' phase native jinx-vmm ratio
printf '  %-22s %10s ms %10s ms %8s   (budget 1.10)\n' "CPU-bound" "$nc" "$jc" "$rc"
printf '  %-22s %10s ms %10s ms %8s\n' "mutex-contended" "$nm" "$jm" "$rm"
printf '  %-22s %10s ns %10s ns %8s\n' "futex round trip" "$np" "$jp" "$rp"
printf '{"threads":%d,"iters":%d,"runs":%d,"cpu_ms":{"native":%s,"jinx":%s,"ratio":%s},"mutex_ms":{"native":%s,"jinx":%s,"ratio":%s},"futex_roundtrip_ns":{"native":%s,"jinx":%s,"ratio":%s}}\n' \
  "$THREADS" "$ITERS" "$RUNS" "$nc" "$jc" "$rc" "$nm" "$jm" "$rm" "$np" "$jp" "$rp" >bench-results/free-vs-native.json
