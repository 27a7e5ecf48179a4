#!/usr/bin/env bash
# CPUID must not depend on the host CPU a vCPU's thread happens to run on. On PVM without
# CPUID faulting a native CPUID shows the host CPU's APIC id (leaf 1 EBX[31:24], leaf 0xB
# EDX): executions of one schedule from one snapshot then differed whenever the fragment
# ran a CPUID (glibc's startup when the snapshot came early on a loaded host: cxx-race 14
# of 100 identical, the differing page glibc's cpu_features). jinx answers CPUID itself
# (docs/cpu-models.md). tests/guest/cpuidsim.c runs CPUID in two threads and lets the
# answer pick the shared slot it writes. Checks:
#  1. the same program with jinx-vmm pinned to each host CPU in turn (taskset) sees the
#     same CPU ids (deterministic: no luck needed to catch a native CPUID);
#  2. from a snapshot taken at once (--after 0ms, so the fragment runs CPUID), RUNS
#     executions of one schedule are identical, three times; a difference is printed
#     with its first differing cue point (jinx-vmm's "differs from the first" lines).
# Env: RUNS (default 40).
set -u
BUILD=${BUILD:-build}; BIN=${BIN:-bin}; VMM="$BIN/jinx-vmm"; PROG="$BUILD/guest-tests/cpuidsim"
RUNS=${RUNS:-40}
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
[ -x "$PROG" ] || { echo "FAIL $PROG not built (make guest-tests)"; exit 1; }

ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then
  ids=""
  for c in 0 $((ncpu - 1)); do
    out=$(taskset -c "$c" timeout 60 "$VMM" run --no-control --quiet "$PROG" 2>&1); st=$?
    got=$(echo "$out" | sed -n 's/.*CPU ids summed \([0-9]*\).*/\1/p')
    [ $st = 0 ] && [ -n "$got" ] || { bad "pinned to CPU $c: status $st: $out"; continue; }
    ids="$ids $c:$got"
  done
  set -- $ids
  if [ $# = 2 ] && [ "${1#*:}" = "${2#*:}" ]; then
    ok "pinned to host CPUs $(echo $ids | sed 's/:[0-9]*//g'): the guest sees the same CPU ids (sum ${1#*:})"
  elif [ $# = 2 ]; then
    bad "the guest's CPUID depends on the host CPU: ids summed per host CPU$ids"
  fi
else
  echo "skip pinned comparison: one host CPU"
fi

for i in 1 2 3; do
  out=$(timeout 170 "$VMM" run --no-control --after 0ms --record 200us --simulate "$RUNS" "$PROG" 2>&1); st=$?
  if echo "$out" | grep -q "simulations: $RUNS of $RUNS identical" && echo "$out" | grep -q "simulation 1: 200 cue points"; then
    ok "snapshot $i: $RUNS executions of one schedule identical ($(echo "$out" | sed -n 's/.*simulation 1: \([0-9]* cue points, trace [0-9a-f]*\).*/\1/p'))"
  else
    bad "snapshot $i: status $st"; echo "$out" | grep -E "simulations:|differs|both after|error" | head -8
  fi
done

echo "cpuid-sim tests: $pass passed, $fail failed"
[ $fail = 0 ]
