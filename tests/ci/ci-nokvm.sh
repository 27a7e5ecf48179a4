#!/usr/bin/env bash
# The CI driver (.ci/run) on a host whose KVM is unusable (issue 29), made so with
# JINX_KVM_DEVICE=/dev/null (jinx-vmm then opens /dev/null as its KVM device; check-kvm
# says "/dev/null (JINX_KVM_DEVICE) is not a KVM device"). Cheap: .ci/run runs only its
# unit step (on one planted test binary, through JINX_CI_MAKE_ARGS) and its guest steps,
# which it must skip:
#   1. a passing unit test: .ci/run exits 0, its summary counts 1 passed, 0 failed,
#      3 skipped, and its last line is "GUEST SUITES NOT RUN: <check-kvm's reason> (N
#      suites skipped: ...)" with N the number of guest suites make lists;
#   2. a failing unit test: .ci/run exits 1, the summary counts it failed, and the
#      GUEST SUITES NOT RUN line is still the last;
#   3. jinx-vmm run itself refuses to start with JINX_KVM_DEVICE=/dev/null (status 125).
# Needs bin/jinx-vmm (make check-ci builds it). Env: BIN (default bin).
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${BIN:-bin}; VMM="$BIN/jinx-vmm"
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
[ -x "$VMM" ] || { echo "FAIL no $VMM (make $VMM)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export JINX_KVM_DEVICE=/dev/null
steps=unit,integration,valgrind,asan-guest

why=$("$VMM" check-kvm 2>&1); st=$?
if [ $st = 1 ] && [[ $why == "/dev/null (JINX_KVM_DEVICE) is not a KVM device"* ]]; then
  ok "check-kvm with JINX_KVM_DEVICE=/dev/null: status 1, '$why'"
else bad "check-kvm with JINX_KVM_DEVICE=/dev/null: status $st, '$why'"; fi
nsuites=$(make -s --no-print-directory list-guest-suites | wc -l)

printf '#!/bin/sh\necho "planted unit test: passes"\n' >"$tmp/pass"
printf '#!/bin/sh\necho "planted unit test: fails"; exit 1\n' >"$tmp/fail"
chmod +x "$tmp/pass" "$tmp/fail"

# run_ci NAME TEST: .ci/run on the planted TEST; sets st, out, last.
run_ci() {
  JINX_CI_MAKE_ARGS="UNIT_TESTS=$tmp/$2" .ci/run --only "$steps" >"$tmp/$1.out" 2>&1; st=$?
  last=$(tail -1 "$tmp/$1.out")
}
check_common() { # NAME: the skip line and the guest steps skipped, whatever the unit test did.
  if [[ $last == "GUEST SUITES NOT RUN: $why ($nsuites suites skipped: integration "*", valgrind 1, asan-guest "*")" ]]; then
    ok "$1: the last line is '$last'"
  else bad "$1: the last line is '$last' (wanted GUEST SUITES NOT RUN: $why ($nsuites suites skipped: ...))"; fi
  if [ "$(grep -c '^== CI step [a-z-]*: SKIPPED (KVM unusable' "$tmp/$1.out")" = 3 ] &&
     ! grep -q '^== CI step: \(integration\|valgrind\|asan-guest\)' "$tmp/$1.out"; then
    ok "$1: the three guest steps skipped, none started"
  else bad "$1: guest steps not skipped as expected"; grep '^== CI' "$tmp/$1.out"; fi
}

run_ci green pass
if [ $st = 0 ]; then ok "green: .ci/run exits 0 with KVM unusable and every host step passing"
else bad "green: .ci/run exits $st"; tail -20 "$tmp/green.out"; fi
grep -q '^== CI summary: 1 passed, 0 failed, 3 skipped (steps)' "$tmp/green.out" &&
  ok "green: summary '$(grep '^== CI summary' "$tmp/green.out")'" ||
  bad "green: summary '$(grep '^== CI summary' "$tmp/green.out")'"
grep -q "planted unit test: passes" "$tmp/green.out" && ok "green: the planted unit test ran" ||
  bad "green: the planted unit test did not run"
check_common green

run_ci red fail
if [ $st = 1 ]; then ok "red: .ci/run exits 1 when a unit test fails, KVM unusable"
else bad "red: .ci/run exits $st"; tail -20 "$tmp/red.out"; fi
grep -q '^== CI summary: 0 passed, 1 failed, 3 skipped (steps)' "$tmp/red.out" &&
  grep -q '^== CI FAILED steps: unit$' "$tmp/red.out" &&
  ok "red: summary '$(grep '^== CI summary' "$tmp/red.out")', the unit step named" ||
  bad "red: summary '$(grep '^== CI summary' "$tmp/red.out")'"
check_common red

# jinx-vmm run itself: the device is not KVM, the run cannot start (125), and says why.
"$VMM" run --no-control /bin/true >/dev/null 2>"$tmp/run.err"; st=$?
if [ $st = 125 ] && grep -q "/dev/null" "$tmp/run.err"; then ok "jinx-vmm run with JINX_KVM_DEVICE=/dev/null: status 125, '$(head -1 "$tmp/run.err")'"
else bad "jinx-vmm run with JINX_KVM_DEVICE=/dev/null: status $st"; cat "$tmp/run.err"; fi

echo "ci self-test: $pass passed, $fail failed"
[ $fail = 0 ]
