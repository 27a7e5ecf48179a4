#!/usr/bin/env bash
# The guest-agent's in-guest syscall answers (vmm/kvm/answers.h): a loop of N getppid
# (getpid, getpgrp) makes (almost) no exits and gets the VMM's answers (syscall-loop
# checks every one and exits 1 on a wrong one); with --no-guest-answers each one exits;
# gettid and uname, which the agent must not answer, still exit every time; the answers
# also hold under --serial.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; PROG=images/bin/syscall-loop; N=${N:-3000}
[ -x "$PROG" ] || { echo "no $PROG: run make"; exit 2; }

run() { # KIND N [OPTIONS]: sets st (exit status) and ex (exits)
  local kind=$1 n=$2 out; shift 2
  out=$(timeout 120 "$VMM" run --no-control --stats "$@" "$PROG" "$kind" "$n" 2>&1 >/dev/null); st=$?
  ex=$(sed -n 's/.* exits=\([0-9]*\).*/\1/p' <<<"$out")
  [ -n "$ex" ] || ex=-1
}

for kind in getppid getpid getpgrp; do
  run "$kind" "$N"
  if [ "$st" = 0 ] && [ "$ex" -ge 0 ] && [ "$ex" -lt 100 ]; then ok "$kind x$N answered in the guest ($ex exits)"
  else bad "$kind x$N: status $st, $ex exits (want 0 and < 100)"; fi
  run "$kind" "$N" --no-guest-answers
  if [ "$st" = 0 ] && [ "$ex" -ge "$N" ]; then ok "$kind --no-guest-answers: every one exits ($ex)"
  else bad "$kind --no-guest-answers: status $st, $ex exits (want 0 and >= $N)"; fi
done
for kind in gettid uname; do
  run "$kind" "$N"
  if [ "$st" = 0 ] && [ "$ex" -ge "$N" ]; then ok "$kind is not answered in the guest ($ex exits)"
  else bad "$kind: status $st, $ex exits (want 0 and >= $N)"; fi
done
run getppid "$N" --serial
if [ "$st" = 0 ] && [ "$ex" -ge 0 ] && [ "$ex" -lt 100 ]; then ok "getppid under --serial: answered ($ex exits)"
else bad "getppid under --serial: status $st, $ex exits"; fi
summary "guest-answers tests"
