#!/usr/bin/env bash
# A fault in flight across the end of a serialized fragment (vmm/kvm/exception.c,
# fault_went_away): a vCPU paused between a #PF's delivery to the agent's stub and the
# stub's exit makes that exit when its thread next runs. When the fragment was stopped
# there (a hard stop: serialize_fragment_run_from stops its running thread wherever it
# is), the fault was taken on a page trapped by page ownership (crew.h), and the fragment's
# end mapped every page again: the exit came in free execution, nobody claimed the fault,
# and the bug-free throughput was killed by SIGSEGV at a read of its own .data (seen once
# in ~25 runs of `--explore 8s --attach 5/s` at load 9, 3 in 24 with the wall guard cut
# to 30 ms). JINX_TEST_FAULT_IN_FLIGHT=N (a test hook) ends a --record fragment at its
# N-th not-present fault with that fault left in the stub, every time: before the fix
# each of these runs was killed by SIGSEGV (status 139), after it the instruction runs
# again and the program ends well.
# Checks: for several N and two programs, the hook fired, status 0, the program's output.
set -u
BIN=${BIN:-bin}; VMM="$BIN/jinx-vmm"
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }

check() { # NAME N WANT ARGS...
  local name=$1 n=$2 want=$3; shift 3
  local out st
  out=$(JINX_TEST_FAULT_IN_FLIGHT=$n timeout 60 "$VMM" run --no-control --after 30ms \
        --record 2ms "$@" 2>&1); st=$?
  if ! echo "$out" | grep -q "test hook: the fault at .* is left in flight"; then
    bad "$name, fault $n: the hook did not fire (status $st)"
    echo "$out" | tail -3
  elif [ $st = 0 ] && echo "$out" | grep -q "$want" && ! echo "$out" | grep -q "killed by"; then
    ok "$name, fault $n left in flight at the fragment's end: the program ended well"
  else
    bad "$name, fault $n: status $st"
    echo "$out" | grep -E "killed|#PF|error" | head -3
  fi
}

for n in 1 2 5 20; do
  check throughput "$n" "throughput: threads=4" images/bin/throughput 4 300 256
done
for n in 1 7; do
  check pingpong "$n" "throughput:" images/bin/throughput pingpong 2000
done

echo "fault-in-flight tests: $pass passed, $fail failed"
[ $fail = 0 ]
