#!/usr/bin/env bash
# Snapshot/restore exactness while real programs run: N times, snapshot, run on, restore,
# compare every page and every vCPU's registers, system registers and XSAVE state with a
# full reference copy, and the VMM's frame bitmap and descriptor table with the
# snapshot's (fdchurn moves descriptors up and down the table meanwhile); then the
# program must still finish correctly from the restored state (correct programs exit 0
# after being rewound again and again).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; G="$BUILD/guest-tests"
check() { # NAME MIN_ROUNDS ARGS...: rounds are cut short when the program ends first
  local name=$1 min=$2; shift 2
  out=$(timeout 120 "$VMM" run --mem 128M --vcpus 64 --env JINX_TEST=yes "$@" 2>&1); st=$?
  rounds=$(echo "$out" | grep -c "selftest round .*differences: 0 pages, 0 vCPUs")
  if [ $st = 0 ] && echo "$out" | grep -q "snapshot selftest: PASS" && [ "$rounds" -ge "$min" ]; then
    pass=$((pass+1)); echo "ok   $name ($rounds exact restores)"
  else
    fail=$((fail+1)); echo "FAIL $name (status $st, $rounds exact rounds)"; echo "$out" | grep -v "differences: 0 pages, 0 vCPUs" | head -12
  fi
}
check correct    1 --snapshot-selftest 20 --selftest-interval 300us images/bin/correct 40 120000
check throughput 2 --snapshot-selftest 10 --selftest-interval 2ms images/bin/throughput 4 1000
check pingpong   2 --snapshot-selftest 10 --selftest-interval 1ms images/bin/throughput pingpong 5000
check threads-60 2 --snapshot-selftest 20 --selftest-interval 300us $G/threads 60
check dirty-1000 2 --snapshot-selftest 5 --selftest-interval 5ms $G/dirty 1000 4 500
check fdchurn    2 --snapshot-selftest 10 --selftest-interval 1ms $G/fdchurn 300
# Short programs: whatever rounds fit must be exact, and the program must still pass.
check futex      0 --snapshot-selftest 10 --selftest-interval 1ms $G/futex
check syscalls   0 --snapshot-selftest 10 --selftest-interval 1ms $G/syscalls alpha beta
summary "snapshot tests"
