#!/usr/bin/env bash
# Serialized execution: the same program, seed and schedule give the same cue-point
# trace and output every time; another schedule gives another interleaving; schedule
# files are untrusted input and bad ones are refused with line and column.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; G="$BUILD/guest-tests"
mk_tmp

# The runs of a program go two at a time (SERIAL_JOBS): a serialized run executes one vCPU
# at a time, and its trace must not depend on what else runs.
# SERIAL_RUNS_MAX caps each program's number of runs (asan-guest: 3; default: none).
JOBS=${SERIAL_JOBS:-2}; RUNS_MAX=${SERIAL_RUNS_MAX:-0}
deterministic() { # NAME RUNS ARGS...
  local name=$1 runs=$2; shift 2
  [ "$RUNS_MAX" -gt 0 ] && [ "$runs" -gt "$RUNS_MAX" ] && runs=$RUNS_MAX
  for i in $(seq "$runs"); do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    { timeout 60 "$VMM" run --serial --trace "$tmp/t.$i" "$@" >"$tmp/o.$i" 2>/dev/null
      echo "status $?" >>"$tmp/o.$i"; } &
  done
  wait
  local distinct
  distinct=$(cat "$tmp"/t.1 | md5sum; for i in $(seq 2 "$runs"); do cmp -s "$tmp/t.1" "$tmp/t.$i" && cmp -s "$tmp/o.1" "$tmp/o.$i" || echo diff; done)
  if ! echo "$distinct" | grep -q diff && [ -s "$tmp/t.1" ]; then ok "$name: $runs runs, identical traces ($(wc -l <"$tmp/t.1") cue points) and output"
  else
    bad "$name: runs differ"
    # Name the first run unlike run 1 and show where (trace, or output and status).
    for i in $(seq 2 "$runs"); do
      cmp -s "$tmp/t.1" "$tmp/t.$i" && cmp -s "$tmp/o.1" "$tmp/o.$i" && continue
      echo "     run $i differs from run 1:"; diff "$tmp/t.1" "$tmp/t.$i" | head -5
      diff "$tmp/o.1" "$tmp/o.$i" | head -5; break
    done
  fi
  rm -f "$tmp"/t.* "$tmp"/o.*
}
deterministic circle 10 images/bin/circle
deterministic correct 5 images/bin/correct
deterministic race-o1o2 5 images/bin/race-o1o2
deterministic pingpong 3 images/bin/throughput pingpong 30
deterministic futex-test 3 $G/futex
deterministic circle-sync-only 5 --no-memory-cues images/bin/circle
deterministic threads-8 3 $G/threads 8

"$VMM" run --serial --policy roundrobin --trace "$tmp/rr" images/bin/circle >/dev/null 2>&1
"$VMM" run --serial --policy continue --trace "$tmp/cont" images/bin/circle >/dev/null 2>&1
if [ -s "$tmp/rr" ] && [ -s "$tmp/cont" ] && ! cmp -s "$tmp/rr" "$tmp/cont"; then ok "two policies, two interleavings"; else bad "policies gave the same trace"; fi

printf '# T1 creates both threads, then T3 runs before T2\nT1 x2\nT3 x1\nT2 x1\n' >"$tmp/s.txt"
out=$("$VMM" run --no-memory-cues --schedule "$tmp/s.txt" --trace "$tmp/st" images/bin/circle 2>&1)
if echo "$out" | grep -q "0 divergences" && sed -n 4p "$tmp/st" | grep -q " T3 "; then ok "schedule file followed (T3 runs after the third cue point)"; else bad "schedule not followed"; echo "$out" | tail -3; head -4 "$tmp/st"; fi
printf '{"version":1,"segments":[{"thread":1,"steps":2},{"thread":3,"steps":1}]}' >"$tmp/s.json"
if "$VMM" run --no-memory-cues --schedule "$tmp/s.json" --trace "$tmp/sj" images/bin/circle >/dev/null 2>&1 && sed -n 4p "$tmp/sj" | grep -q " T3 "; then ok "JSON schedule followed"; else bad "JSON schedule"; fi

printf 'T1 x2\nT2 banana\n' >"$tmp/bad.txt"
out=$("$VMM" run --schedule "$tmp/bad.txt" images/bin/circle 2>&1); st=$?
if [ $st = 125 ] && echo "$out" | grep -q "line 2, column"; then ok "bad schedule refused with its position"; else bad "bad schedule: status $st: $out"; fi
head -c 3000 /dev/urandom >"$tmp/noise"
"$VMM" run --schedule "$tmp/noise" images/bin/circle >/dev/null 2>&1; st=$?
if [ $st = 125 ]; then ok "random bytes as schedule refused"; else bad "random schedule: status $st"; fi
"$VMM" run --trace "$tmp/x" images/bin/circle >/dev/null 2>&1; st=$?
if [ $st = 125 ]; then ok "--trace without --serial refused"; else bad "--trace alone: status $st"; fi

# Memory cue points: fine-grained interleaving of shared accesses finds Circle's
# atomicity violation, deterministically, while the correct program stays correct.
for i in 1 2 3; do
  "$VMM" run --serial --timeout 60s images/bin/circle >/dev/null 2>"$tmp/ce.$i"; echo "status $?" >>"$tmp/ce.$i"
done
if grep -q "status 134" "$tmp/ce.1" && grep -q "Assertion failed" "$tmp/ce.1" && cmp -s "$tmp/ce.1" "$tmp/ce.2" && cmp -s "$tmp/ce.1" "$tmp/ce.3"; then
  ok "circle's bug fires under serialized execution, identically 3 times"
else bad "circle under --serial: $(tail -3 "$tmp/ce.1")"; fi
"$VMM" run --serial --timeout 60s images/bin/correct >/dev/null 2>"$tmp/co"; st=$?
if [ $st = 0 ] && grep -q "shared pages" "$tmp/co" && ! grep -q " 0 memory accesses" "$tmp/co"; then ok "correct program passes under serialized execution with memory cue points"; else bad "correct under --serial: status $st"; tail -3 "$tmp/co"; fi
"$VMM" run --serial --trace "$tmp/mt" images/bin/circle >/dev/null 2>&1
if grep -q "RMW(lock)" "$tmp/mt" && grep -q "lock cmpxchg" "$tmp/mt" && grep -Eq " (R|W) 0x40[0-9a-f]+/4 " "$tmp/mt"; then ok "trace records reads, writes and locked RMWs with decoded instructions"; else bad "memory events missing from the trace"; fi

# The Circle bug on purpose: record circle with the `continue` policy (it passes), then
# replay the recorded interleaving up to the writer's first unlock of the circle's lock
# and let the reader in there -- between SetRadius's two critical sections, where the
# article's simulations put it. The assertion must fire, every time. Letting the reader in
# one critical section later (after the second unlock) must not fail.
"$VMM" run --serial --policy continue --trace "$tmp/cont" images/bin/circle >/dev/null 2>&1; st=$?
# the circle's lock word: the_circle's mutex, 4 bytes in (musl's _m_lock)
lock=$(printf '0x%x' $(( 0x$(nm images/bin/circle | awk '$3=="the_circle" {print $1}') + 4 )))
mapfile -t unl < <(awk -v L="$lock" '$2=="T2" && $4==L"/4" && /pthread_mutex_unlock/ && /RMW/ {print $1}' "$tmp/cont")
mksched() { # schedule = the recorded choices up to event $1, then the reader
  awk -v last="$1" 'NR>=2 && NR<=last+2 {print $2}' "$tmp/cont" |
    awk 'BEGIN{p="";n=0} {if ($1==p) n++; else {if (p!="") print p" x"n; p=$1; n=1}} END{print p" x"n}'
  echo "T3 x400"; echo "default continue"
}
if [ $st = 0 ] && [ "${#unl[@]}" -ge 2 ]; then
  mksched "${unl[0]}" >"$tmp/bug.sched"; mksched "${unl[1]}" >"$tmp/nobug.sched"
  b1=$("$VMM" run --serial --policy continue --schedule "$tmp/bug.sched" images/bin/circle 2>&1); s1=$?
  b2=$("$VMM" run --serial --policy continue --schedule "$tmp/bug.sched" images/bin/circle 2>&1); s2=$?
  "$VMM" run --serial --policy continue --schedule "$tmp/nobug.sched" images/bin/circle >/dev/null 2>&1; s3=$?
  if [ $s1 = 134 ] && [ $s2 = 134 ] && echo "$b1" | grep -q "Assertion failed" && echo "$b1" | grep -q " 0 divergences" && [ $s3 = 0 ]; then
    ok "circle: reader let in between the writer's critical sections fails (twice); one section later passes"
  else bad "circle schedule: statuses $s1 $s2 $s3"; cat "$tmp/bug.sched"; echo "$b1" | tail -3; fi
else bad "circle continue recording: status $st, unlocks found: ${#unl[@]}"; fi

# Cue-point accuracy (tests/guest/accuracy.c): the futex handshakes fix the order of
# every access to acc_x and acc_y, each alone on its page; the trace must list exactly
# these (thread, kind, variable/size) on those pages, whatever the policy.
hexsym() { printf '0x%x' "0x$(nm "$1" | awk -v s="$2" '$3==s {print $1}')"; }
ax=$(hexsym $G/accuracy acc_x); ay=$(hexsym $G/accuracy acc_y)
want="T1 W acc_x/4;T1 RMW(lock) acc_y/8;T2 R acc_x/4;T2 W acc_x/4;T2 RMW(lock) acc_y/8;T1 R acc_x/4;T1 W acc_x/4;T1 R acc_y/2;T2 R acc_x/4;"
onpages() { # TRACE: the accesses on acc_x's and acc_y's pages, as "T1 W acc_x/4;..."
  awk -v X="$ax" -v Y="$ay" 'function pg(a) { return substr(a, 1, length(a) - 3) }
    { split($4, a, "/"); n = "";
      if (pg(a[1]) == pg(X) && length(a[1]) == length(X)) n = (a[1] == X ? "acc_x" : "acc_x?" a[1]);
      if (pg(a[1]) == pg(Y) && length(a[1]) == length(Y)) n = (a[1] == Y ? "acc_y" : "acc_y?" a[1]);
      if (n != "") printf "%s %s %s/%s;", $2, $3, n, a[2] }' "$1"
}
for pol in roundrobin continue; do
  "$VMM" run --serial --policy $pol --trace "$tmp/acc" $G/accuracy >"$tmp/acc.out" 2>&1; st=$?
  got=$(onpages "$tmp/acc")
  if [ $st = 0 ] && [ "$got" = "$want" ]; then ok "accuracy ($pol): exactly the 9 expected accesses to acc_x/acc_y, in order"
  else bad "accuracy ($pol): status $st"; echo "  want $want"; echo "  got  $got"; fi
  # TLB coherence: T1 used acc_x and acc_y while it owned them; T2's accesses shared the
  # pages (revoking T1's mapping); T1's next accesses must have trapped, i.e. appear.
  if echo "$got" | grep -q "T2 RMW(lock) acc_y/8;T1 R acc_x/4;T1 W acc_x/4;T1 R acc_y/2;"; then
    ok "accuracy ($pol): a revoked page traps on the owner's next access (TLB coherence)"
  else bad "accuracy ($pol): T1's accesses after revocation missing: $got"; fi
done
"$VMM" run --serial --no-memory-cues --trace "$tmp/acc" $G/accuracy >/dev/null 2>&1; st=$?
if [ $st = 0 ] && [ -z "$(onpages "$tmp/acc")" ]; then ok "accuracy: no memory cue points with --no-memory-cues"; else bad "accuracy --no-memory-cues: status $st"; fi

# Spin detection (tests/guest/spin.c): main spins on a plain flag that a runnable worker
# sets. `continue` alone keeps the spinner forever (livelock: timeout); with spin
# detection the spinner is deprioritised after N identical reads, the worker runs and
# sets the flag, and main sees it at its next read: exactly N reads of 0.
out=$("$VMM" run --serial --policy continue --timeout 60s $G/spin 2>&1); st=$?
nd=$(echo "$out" | sed -n 's/.* \([0-9]*\) spin deprioritisations.*/\1/p')
if [ $st = 0 ] && [ "${nd:-0}" -ge 1 ] && echo "$out" | grep -q "flag seen after 8 reads of 0"; then
  ok "spin: the spinner is deprioritised ($nd spin deprioritisations) and the program ends under --policy continue"
else bad "spin under continue: status $st, '$nd' deprioritisations"; echo "$out" | tail -4; fi
out=$("$VMM" run --serial --policy continue --spin-threshold 3 --timeout 60s $G/spin 2>&1); st=$?
if [ $st = 0 ] && echo "$out" | grep -q "flag seen after 3 reads of 0"; then ok "spin: --spin-threshold 3 gives way after exactly 3 reads"
else bad "spin --spin-threshold 3: status $st"; echo "$out" | tail -3; fi
"$VMM" run --serial --policy continue --spin-threshold 0 --timeout 3s $G/spin >/dev/null 2>&1; st=$?
if [ $st = 124 ]; then ok "spin: without spin detection the same run livelocks (timeout)"; else bad "spin without detection: status $st (expected 124)"; fi
"$VMM" run --serial --timeout 60s $G/spin >"$tmp/sp.out" 2>&1; st=$?
if [ $st = 0 ] && grep -q "flag seen" "$tmp/sp.out"; then ok "spin: passes under roundrobin too"; else bad "spin under roundrobin: status $st"; fi
deterministic spin-continue 3 --policy continue $G/spin

# --after/--record: free run, one serialized fragment with memory cue points, free again.
# (the correct program may end inside the fragment: then fewer cue points, still correct)
for spec in "throughput 4 300:1000" "correct 12 120000:1"; do
  min=${spec##*:}; spec=${spec%:*}
  # shellcheck disable=SC2086
  out=$("$VMM" run --after 2ms --record 1ms --trace "$tmp/frag" images/bin/$spec 2>&1); st=$?
  n=$(echo "$out" | sed -n 's/.*recorded a fragment of \([0-9]*\) cue points.*/\1/p')
  if [ $st = 0 ] && [ "${n:-0}" -ge "$min" ] && [ "$(wc -l <"$tmp/frag")" -ge "$min" ]; then
    ok "${spec%% *}: recorded a fragment ($n cue points) mid-run, program still correct"
  else bad "${spec%% *} --record: status $st, '$n' cue points"; echo "$out" | tail -3; fi
done

# --simulate: the same fragment from the same snapshot, again and again: identical trace
# and identical final memory every time; the program then goes on from the snapshot.
for spec in "throughput 4 300:20ms" "correct 12 120000:3ms"; do
  after=${spec##*:}; spec=${spec%:*}
  # shellcheck disable=SC2086
  out=$("$VMM" run --after "$after" --record 1ms --simulate 20 images/bin/$spec 2>&1); st=$?
  if [ $st = 0 ] && echo "$out" | grep -q "simulations: 20 of 20 identical"; then
    ok "${spec%% *}: 20 simulations of one fragment from one snapshot, all identical"
  elif [ $st = 0 ] && ! echo "$out" | grep -q "simulation 1:"; then
    ok "${spec%% *}: program ended before the fragment (nothing to compare)"
  else bad "${spec%% *} --simulate: status $st"; echo "$out" | grep -E "simulation|status" | tail -22; fi
done

# rep string instructions on shared pages (tests/guest/repstep.c): the same results as a
# free run, the program never sees the int3 that ends each step, and a step costs a
# few exits, not one per iteration (~150 000 iterations here: TF alone would need as many).
free=$("$VMM" run --no-control $G/repstep 4 2>/dev/null)
for pol in continue roundrobin; do
  out=$("$VMM" run --no-control --serial --policy $pol --stats $G/repstep 4 2>"$tmp/rs.err"); st=$?
  exits=$(sed -n 's/.* exits=\([0-9]*\).*/\1/p' "$tmp/rs.err")
  if [ $st = 0 ] && [ -n "$free" ] && [ "$out" = "$free" ] && [ "${exits:-999999}" -lt 20000 ]; then
    ok "repstep ($pol): rep movs/stos/cmps on shared pages as in a free run, $exits exits"
  else bad "repstep ($pol): status $st, '$out' vs free '$free', ${exits:-?} exits"; tail -3 "$tmp/rs.err"; fi
done

summary "serial tests"
