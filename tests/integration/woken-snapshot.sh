#!/usr/bin/env bash
# A snapshot taken just after a thread was woken (vmm/kvm/vm.c, run_thread's
# completion_pending): the woken thread's host thread has put its syscall result in
# kvm_run, KVM owes the read's completion, and a pause comes before its next KVM_RUN.
# The pause must finish that completion, or the snapshot records the vCPU still at the
# syscall read and every restore runs the syscall again: simulation 1 (the live VM) then
# differs from all the restored ones at cue point 0 ('T3 futex_wait ... (no block)' in
# the restores only). Seen as 1 of 100 identical about once in 30 loaded runs of
# determinism.sh's cxx-race --no-guest-cues; JINX_TEST_WAKE_DELAY_US (a test hook that
# widens that window) makes it happen every time with pingpong (two threads meeting on a
# mutex and two condition variables): before the fix 4 of 4 runs differed, after it none.
# Checks: three times, RUNS executions of one schedule from one snapshot of pingpong,
# taken with the window widened, are identical. Env: RUNS (default 20).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; RUNS=${RUNS:-20}

for try in 1 2 3; do
  out=$(JINX_TEST_WAKE_DELAY_US=200 timeout 170 "$VMM" run --no-control --after 30ms --record 200us \
        --simulate "$RUNS" images/bin/throughput pingpong 2000 2>&1); st=$?
  first=$(echo "$out" | sed -n 's/.*simulation 1: \([0-9]*\) cue points.*/\1/p')
  if echo "$out" | grep -q "simulations: $RUNS of $RUNS identical" && [ "${first:-0}" -ge 100 ]; then
    ok "try $try: $RUNS executions of one schedule identical ($first cue points each)"
  else
    bad "try $try: status $st, simulation 1 had ${first:-no} cue points"
    echo "$out" | grep -E "simulations:|differs|wall guard|error" | head -4
  fi
done

summary "woken-snapshot tests"
