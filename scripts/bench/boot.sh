#!/usr/bin/env bash
# Boot latency: process start of jinx-vmm -> first guest instruction (first KVM_RUN of
# thread 1) and -> first guest syscall, median over N runs of a small image.
set -eu
cd "$(dirname "$0")/../.."
N=${1:-21}; IMAGE=${IMAGE:-images/bin/correct}
. scripts/bench/lib.sh
bench_need_kvm
mkdir -p bench-results
for i in $(seq "$N"); do
  bin/jinx-vmm run --stats --quiet "$IMAGE" 2>&1 >/dev/null | sed -n 's/.*stats: //p'
done >bench-results/boot.raw
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
first_insn=$(sed -n 's/.*boot_to_first_guest_instruction_us=\([0-9.]*\).*/\1/p' bench-results/boot.raw | med)
first_sys=$(sed -n 's/.*boot_to_first_syscall_us=\([0-9.]*\).*/\1/p' bench-results/boot.raw | med)
printf 'boot (median of %d, %s)\n  to first guest instruction: %8.1f us   (budget 20000 us)\n  to first guest syscall:     %8.1f us\n' \
  "$N" "$IMAGE" "$first_insn" "$first_sys"
printf '{"runs":%d,"image":"%s","boot_to_first_guest_instruction_us":%s,"boot_to_first_syscall_us":%s}\n' \
  "$N" "$IMAGE" "$first_insn" "$first_sys" >bench-results/boot.json
