#!/usr/bin/env bash
# The guest's clock in free execution (vmm/kvm/vclock.h; guest program
# tests/guest/clockcheck.c): clock_gettime, gettimeofday and time answered by the agent
# with no exit, in one non-decreasing sequence with the VMM's own answers (CPUTIME, TAI),
# also across the pauses, snapshots and serialized fragments of rounds (--attach); bad
# pointers give EFAULT with the registers kept; --no-guest-answers and --serial keep
# every time syscall on the VMM (exits counted).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; PROG=${BUILD:-build}/guest-tests/clockcheck; N=${N:-3000}
[ -x "$PROG" ] || { echo "no $PROG: run make guest-tests"; exit 2; }

run() { # ARGS...: sets o (output), st (status), ex (exits), out (the program's line)
  o=$(timeout 120 "$VMM" run --no-control --stats "$@" 2>&1); st=$?
  ex=$(sed -n 's/.* exits=\([0-9]*\).*/\1/p' <<<"$o" | tail -1)
  out=$(grep '^clockcheck\|CHECK' <<<"$o" | tr '\n' ' ')
  [ -n "$ex" ] || ex=-1
}

# Which path answers: 4 time syscalls an iteration.
run "$PROG" fast "$N"
if [ "$st" = 0 ] && [ "$ex" -ge 0 ] && [ "$ex" -lt 100 ]; then ok "fast x$N: answered in the guest ($ex exits)"
else bad "fast x$N: status $st, $ex exits (want 0 and < 100): $out"; fi
run --no-guest-answers "$PROG" fast "$N"
if [ "$st" = 0 ] && [ "$ex" -ge $((4 * N)) ]; then ok "fast --no-guest-answers: every one exits ($ex)"
else bad "fast --no-guest-answers: status $st, $ex exits (want 0 and >= $((4 * N))): $out"; fi
run --serial "$PROG" fast 300
if [ "$st" = 0 ] && [ "$ex" -ge 1200 ]; then ok "fast under --serial: the VMM answers ($ex exits)"
else bad "fast under --serial: status $st, $ex exits (want 0 and >= 1200): $out"; fi

# Guest and VMM answers interleaved: one non-decreasing sequence, a small gap.
for opt in "" --no-guest-answers; do
  # shellcheck disable=SC2086
  run $opt "$PROG" mix 2000
  if [ "$st" = 0 ]; then ok "mix ${opt:-(default)}: $out"; else bad "mix ${opt:-(default)}: status $st: $out"; fi
done

# Bad pointers: EFAULT, never a crash; rdx and the others kept.
for opt in "" --no-guest-answers; do
  # shellcheck disable=SC2086
  run $opt "$PROG" faults
  if [ "$st" = 0 ]; then ok "faults ${opt:-(default)}: $out"; else bad "faults ${opt:-(default)}: status $st: $out"; fi
done

# Rounds: the world stops (snapshot, simulations in worker VMs and here, serialized
# record and tail, restores) while 4 threads read the clocks; a block left stale by a
# pause would put the guest's answers ahead of the VMM's, and the check sees time go back.
run --attach 20/s "$PROG" run 1500
rounds=$(sed -n 's/.*"rounds":\([0-9]*\).*/\1/p' <<<"$o")
if [ "$st" = 0 ] && [ "${rounds:-0}" -ge 1 ]; then ok "4 threads under --attach 20/s, $rounds rounds: $out"
else bad "under --attach: status $st, ${rounds:-no} rounds (want 0 and >= 1): $out"; fi
# A pause must stop a loop of in-guest answers: on PVM the kick is taken where the guest
# enters the agent, i.e. mid-answer, where the vCPU is let run on; the block is off while
# the pause waits, so the next answer exits. Without that, no selftest round ever ran
# (the pause waited for the program's end: 0 of 3).
run --snapshot-selftest 3 --selftest-interval 5ms "$PROG" fast 100000
srounds=$(grep -c "selftest round" <<<"$o")
if [ "$st" = 0 ] && [ "$srounds" = 3 ] && grep -q "snapshot selftest: PASS" <<<"$o"; then
  ok "a loop of in-guest answers pauses: $srounds selftest rounds, exact"
else bad "pausing a loop of in-guest answers: status $st, $srounds of 3 selftest rounds: $(tail -2 <<<"$o" | tr '\n' ' ')"; fi
summary "guest-clock tests"
