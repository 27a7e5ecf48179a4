#!/usr/bin/env bash
# Trustworthy verdicts (issue 13, part 5): a failure caused by jinx's own limits is never
# reported as a bug, and options are never ignored.
#  - Correct programs with many threads (100 alive at once; 400 created and joined one
#    after the other, so thread ids pass the explorer's 255) end well in free execution,
#    under --serial (same trace twice) and under `jinx test --budget 10s` (exit 0).
#  - Programs that fail only because jinx lacks something (the thread maximum, a --vcpus
#    cap, guest memory, a syscall, a signal handler) make jinx-vmm list the limit and
#    `jinx test` exit 2 with "could not test: <what>, <option>".
#  - A program whose main exits while a worker still runs (and would then wait for ever)
#    is no bug: a stress run's end is its exit, whatever the threads do after.
#  - A real bug's report shows the program's last stderr lines (the assertion).
#  - Options before or after the positional arguments work for jinx test, jinx-vmm run,
#    jinx-vmm replay and jinxctl; unknown options are refused (125 for jinx-vmm run, 2
#    for the others), never ignored.
# Guest program: tests/guest/verdict.c. Without /dev/kvm this fails (make check-kvm).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; CTL="$BIN/jinxctl"; JINX="$BIN/jinx"; G="$BUILD/guest-tests"
P="$G/verdict"
[ -x "$P" ] || { echo "FAIL no $P (make guest-tests)"; exit 1; }
need_python
mk_tmp
ERR_TAIL=8

# vmm NAME WANT_STATUS ERR_REGEX -- jinx-vmm args: one run, status and stderr checked.
vmm() {
  local name=$1 want=$2 re=$3; shift 4
  timeout 120 "$VMM" "$@" >"$tmp/out" 2>"$tmp/err"; local st=$?
  if [ "$st" = "$want" ] && { [ -z "$re" ] || grep -Eq -- "$re" "$tmp/err"; }; then ok "$name"
  else bad "$name: status $st, wanted $want${re:+ and /$re/ on stderr}"; fi
}
# jt NAME WANT_STATUS OUT_REGEX -- jinx test args (stdout and stderr together).
jt() {
  local name=$1 want=$2 re=$3; shift 4
  local t0=$SECONDS
  timeout 120 "$JINX" test "$@" >"$tmp/out" 2>"$tmp/err"; local st=$?
  cat "$tmp/out" >>"$tmp/err"
  if [ "$st" = "$want" ] && grep -Eq -- "$re" "$tmp/err"; then ok "$name ($((SECONDS - t0)) s)"
  else bad "$name: status $st, wanted $want and /$re/"; fi
}

# jt_bg NAME WANT_STATUS OUT_REGEX -- jinx test args: the same check in the background
# (lib.sh's bg_start), judged by jt_wait. For the clean runs only: "nothing found in
# BUDGET" holds however few schedules a loaded CPU leaves them (a false bug is false at any
# speed), so they share the budget's wall time instead of running one after the other.
jt_bg() { local name=$1 want=$2 re=$3; shift 4; bg_start "$name" "$want" "$re" -- timeout 120 "$JINX" test "$@"; }
# vmm_bg NAME WANT_STATUS ERR_REGEX -- jinx-vmm args: for runs whose result no load
# changes (serialized runs: their trace and status are the schedule's), beside the clean
# jinx test runs, whose budgets are wall time the CPU would otherwise leave to them alone.
vmm_bg() { local name=$1 want=$2 re=$3; shift 4; bg_start "$name" "$want" "$re" -- timeout 120 "$VMM" "$@"; }
# bg_check NAME WANT_STATUS OUT_REGEX: one background run judged (stdout after stderr, as
# jt's), its output left in its bg.N.err for the BUG FOUND check after jt_wait.
bg_check() {
  local name=$1 want=$2 re=$3
  cat "$bg_out" >>"$bg_err"
  cp "$bg_err" "$tmp/err"
  if [ "$bg_st" = "$want" ] && grep -Eq -- "$re" "$tmp/err"; then ok "$name"
  else bad "$name: status $bg_st, wanted $want and /$re/"; fi
}
jt_wait() { bg_judge bg_check; }

echo "-- many threads: free execution, serialized, jinx test"
vmm "100 threads alive at once" 0 "" -- run --no-control "$P" alive 100
vmm "253 threads besides main (254 at once, the maximum)" 0 "" -- run --no-control "$P" alive 253
vmm "400 threads one after the other" 0 "" -- run --no-control "$P" seq 400
vmm "255th thread refused: a jinx limit, not the program's failure" 255 \
  "jinx limit: thread limit reached: more than 254 threads at once, jinx's maximum; no option raises it" \
  -- run --no-control --report "$tmp/r.json" "$P" alive 254
[ "$(jget "$tmp/r.json" 'd["limits"][0]["kind"]')" = threads ] && ok "report JSON lists the limit" || bad "report JSON limits: $(cat "$tmp/r.json")"
grep -q "may come from jinx, not from the program" "$tmp/err" && ok "the report says the failure may be jinx's" || bad "no caveat in the report"
vmm "--vcpus 16 caps, and the limit names the option" 255 "jinx limit: .*--vcpus 16.*raise it with --vcpus N" \
  -- run --no-control --vcpus 16 "$P" alive 20
vmm "--mem 16M: memory exhausted is a limit naming --mem" 255 "jinx limit: guest memory exhausted.*--mem SIZE" \
  -- run --no-control --mem 16M "$P" alive 40

# Serialized: thread ids past 255 are mapped to explorer ids (an exited thread's), the
# run ends, and the same run gives the same trace (judged after jt_wait).
for i in 1 2; do
  vmm_bg "--serial: 300 threads one after the other (run $i)" 0 "0 divergences" \
    -- run --no-control --serial --trace "$tmp/t$i.txt" "$P" seq 300
done
vmm_bg "--serial: 40 threads alive at once" 0 "0 divergences" -- run --no-control --serial "$P" alive 40

jt_bg "jinx test: 100 threads alive at once, no bug" 0 "nothing found in" -- --budget 10s --dump-dir "$tmp/d1" "$P" -- alive 100
jt_bg "jinx test: 400 threads one after the other, no bug" 0 "nothing found in" -- --budget 10s --dump-dir "$tmp/d2" "$P" -- seq 400
# A stress run (free execution) ends at the exit; libc's _exit then makes SYS_exit, and the
# worker left running waits for ever: that looked like a deadlock (BUG FOUND on xz -T2).
jt_bg "main exits while a worker still runs: nothing found" 0 "nothing found" \
  -- --budget 15s --dump-dir "$tmp/d3" "$P" -- exitwait
jt_wait
grep -q "BUG FOUND" "$tmp"/bg.*.err && bad "jinx test reported a bug in a correct program"
if cmp -s "$tmp/t1.txt" "$tmp/t2.txt" && [ -s "$tmp/t1.txt" ]; then ok "--serial: the same trace twice ($(wc -l <"$tmp/t1.txt") cue points)"
else bad "--serial: traces differ"; fi
maxid=$(awk '{print $2}' "$tmp/t1.txt" | sed -n 's/^T//p' | sort -n | tail -1)
reused=$(grep -c " create T2 " "$tmp/t1.txt")
if [ "${maxid:-999}" -le 255 ] && [ "$reused" -ge 2 ]; then ok "--serial: explorer ids stay <= 255 (max $maxid), id 2 reused ($reused creates)"
else bad "--serial: explorer ids: max ${maxid:-none}, creates of T2: $reused"; fi

echo "-- could not test"
# --jobs 1 for the 254-thread runs: one such run needs the whole CPU to get as far as the
# limit within 10 s on the loaded 2-core CI host; two at once (the default there) each get
# half of it, and neither got that far (nothing found: 2 schedules in 10 s).
jt "255 threads at once: could not test (exit 2)" 2 \
  "could not test: thread limit reached: more than 254 threads at once, jinx's maximum, no option raises it" \
  -- --budget 10s --jobs 1 --dump-dir "$tmp/d" "$P" -- alive 254
# (Unless the budget ran out while the run that met the limit was replayed live: the live
# program never got to print it, see below.)
if grep -q "budget ran out before the live program got as far" "$tmp/err"; then
  echo "     (the live replay was cut by the budget: no stderr to show)"
else
  grep -q "stderr: *verdict: pthread_create of thread 254" "$tmp/err" && ok "could-not-test report shows the program's stderr" || bad "no stderr lines in the could-not-test report"
fi
# The budget runs out while the run that met the limit is replayed live (a 6 s budget
# leaves the replay of a 250-thread run too little time under load): still could not test.
# (Under heavy load no run may get as far as the limit within 6 s: then there is nothing to
# judge, and the check is skipped, saying so.)
timeout 120 "$JINX" test --budget 6s --jobs 1 --dump-dir "$tmp/d" "$P" -- alive 254 >"$tmp/err" 2>&1; st=$?
if ! grep -q "warning: thread limit reached" "$tmp/d/jinx-test-last.log" 2>/dev/null; then
  echo "     (skipped: within 6 s no run got as far as the thread limit; status $st)"
elif [ "$st" = 2 ] && grep -q "could not test: thread limit reached: more than 254 threads at once" "$tmp/err"; then
  ok "255 threads at once, a budget short for the live replay: could not test"
  grep -q "was stopped by the timeout" "$tmp/d/jinx-test-last.log" &&
    echo "     (the live replay was cut by the budget this time)"
else
  bad "255 threads at once, 6 s budget: a run met the thread limit, status $st, wanted 2 (could not test)"
fi
grep -q "did not reproduce" "$tmp/d/jinx-test-last.log" 2>/dev/null &&
  bad "a live replay differed from its run: $(grep 'did not reproduce' "$tmp/d/jinx-test-last.log")"
# The same judged from a stand-in jinx-vmm (every time, whatever the load): a timeout whose
# exploration found a run that met a limit and failed but did not replay it to its end is
# "could not test"; the same timeout after runs that met the limit and ended well is not.
fake_vmm() { # $1: the explore line's "limited"
  cat >"$tmp/fake-vmm" <<FAKE
#!/bin/sh
while [ \$# -gt 0 ]; do [ "\$1" = --report ] && rep=\$2; shift; done
printf '%s' '{"outcome":"timeout","exit_status":124,"detail":"no outcome within 6000 ms","limits":[{"kind":"threads","what":"thread limit reached: more than 254 threads at once, jinx'"'"'s maximum","option":"","count":1}],"stderr_tail":""}' >"\$rep"
echo 'jinx-vmm: explore: {"snapshot":true,"schedules":2,"schedules_to_bug":2,"seconds":4.9,"reproduced":false,"gave_up":false,"limited":$1,"strategy":"flip","note":"x"}' >&2
exit 124
FAKE
  chmod +x "$tmp/fake-vmm"
}
fake_vmm true
JINX_VMM="$tmp/fake-vmm" jt "stand-in jinx-vmm: limited run's replay cut by the timeout: could not test" 2 \
  "could not test: thread limit reached: more than 254 threads at once, jinx's maximum, no option raises it" \
  -- --budget 6s --dump-dir "$tmp/d" "$P" -- alive 254
grep -q "why: .*budget ran out before the live program got as far" "$tmp/err" && ok "the report says the live replay was cut" ||
  bad "the report does not say why (the live replay was cut)"
fake_vmm false
JINX_VMM="$tmp/fake-vmm" jt "stand-in jinx-vmm: a timeout after runs that met the limit and ended well: nothing found" 0 \
  "nothing found" -- --budget 2s --dump-dir "$tmp/d" "$P" -- alive 254
jt "--vcpus 16: could not test, raise it with --vcpus" 2 "could not test: thread limit reached \(--vcpus 16\).*, raise it with --vcpus N \(at most 254\)" \
  -- --budget 10s --dump-dir "$tmp/d" --vcpus 16 "$P" -- alive 20
jt "--mem 16M: could not test, raise it with --mem" 2 "could not test: guest memory exhausted.*, raise it with --mem SIZE \(now 16M" \
  -- "$P" --mem 16M --budget 10s --dump-dir "$tmp/d" -- alive 40
jt "an unsupported syscall the program needed: could not test" 2 \
  "could not test: the program used syscall 41 \(socket\), which jinx does not implement \(-ENOSYS\), no option raises it" \
  -- --budget 10s --dump-dir "$tmp/d" --json "$P" -- nosys
[ "$(jget "$tmp/out" 'd["could_not_test"], d["found"], d["limits"][0]["kind"], d["status"]')" = "True False syscall 134" ] \
  && ok "--json: could_not_test, the limits, the failing status" || bad "--json: $(cat "$tmp/out")"
jt "a futex operation jinx lacks (FUTEX_LOCK_PI): could not test" 2 \
  "could not test: the program used syscall 202 \(futex\) operation 6, which jinx does not implement \(-ENOSYS\)" \
  -- --budget 10s --dump-dir "$tmp/d" "$P" -- pifutex
jt "a signal handler jinx does not run: could not test" 2 "could not test: signal 10 \(SIGUSR1\) ended the program" \
  -- --budget 10s --dump-dir "$tmp/d" "$P" -- handler
jt "KVM could not run an instruction (jinx-vmm stops the program): could not test" 2 \
  "could not test: vCPU 0: KVM could not run the instruction at .*movntdqa" \
  -- --budget 10s --dump-dir "$tmp/d" "$G/kvmlimit"
jt "--junit: could not test is an error, not a failure" 2 "could not test" \
  -- --budget 10s --dump-dir "$tmp/d" --junit "$tmp/j.xml" "$P" -- nosys
grep -q 'failures="0" errors="1"' "$tmp/j.xml" && grep -q '<error type="could-not-test"' "$tmp/j.xml" && ok "--junit: <error type=could-not-test>" || bad "--junit: $(cat "$tmp/j.xml")"


echo "-- a real bug: the last stderr lines"
jt "assertion: BUG FOUND with the assertion text" 1 "stderr: +verdict: step 4" \
  -- --budget 10s --dump-dir "$tmp/d" --json "$P" -- assert
grep -Eq '^ +Assertion failed: !broken' "$tmp/err" && ok "text report: the assertion line" || bad "text report lacks the assertion"
tail_json=$(jget "$tmp/out" 'd["stderr_tail"]')
if echo "$tail_json" | grep -q "Assertion failed: !broken" && [ "$(echo "$tail_json" | wc -l)" -le 10 ]; then ok "--json: stderr_tail (last $(echo "$tail_json" | wc -l) lines)"
else bad "--json stderr_tail: $tail_json"; fi

echo "-- options before or after the positional arguments; unknown ones refused"
t0=$SECONDS
"$JINX" test "$P" --budget 2s --dump-dir "$tmp/opt" --json -- alive 4 >"$tmp/out" 2>"$tmp/err"; st=$?
if [ $st = 0 ] && [ $((SECONDS - t0)) -le 10 ] && [ "$(jget "$tmp/out" 'd["found"]')" = False ] && [ -s "$tmp/opt/jinx-test-last.log" ]; then
  ok "jinx test IMAGE --budget 2s --dump-dir D --json: all three honoured ($((SECONDS - t0)) s)"
else bad "jinx test IMAGE --budget --dump-dir --json: status $st in $((SECONDS - t0)) s"; fi
for args in "$P --bogus" "--bogus $P" "$P --budget" "$P --json=1" "$P --vcpus 999" "$P --mem 1M"; do
  "$JINX" test $args >"$tmp/out" 2>"$tmp/err"; st=$?
  if [ $st = 2 ] && grep -Eq "unknown option|needs a value|takes no value|--vcpus 999|--mem 1M" "$tmp/err"; then ok "jinx test $args: refused (2)"
  else bad "jinx test $args: status $st"; fi
done
vmm "jinx-vmm run IMAGE ARGS --report F --timeout 1s: options after IMAGE" 124 "timeout" \
  -- run "$G/crash" spin --no-control --report "$tmp/late.json" --timeout 1s
[ "$(jget "$tmp/late.json" 'd["outcome"]')" = timeout ] && ok "--report after IMAGE written" || bad "--report after IMAGE"
vmm "jinx-vmm run: options among the program's arguments" 0 "" -- run "$P" waves --quiet 10 --no-control 3
grep -q "verdict waves 10 ok" "$tmp/out" && ok "the program got its arguments (waves 10 3)" || bad "program arguments: $(cat "$tmp/out")"
vmm "jinx-vmm run IMAGE --bogus: refused (125)" 125 "unknown option '--bogus'" -- run "$P" --bogus
vmm "jinx-vmm run --vcpus=3x: refused (125)" 125 "--vcpus 3x" -- run --vcpus=3x "$P"
vmm "jinx-vmm run IMAGE -- --bogus: the program's argument" 2 "verdict: unknown mode --bogus" -- run --no-control "$P" -- --bogus
# replay and inspect: a dump of a crash in free execution (no round records).
"$VMM" run --no-control --dump-dir "$tmp/dumps" "$G/crash" segv >/dev/null 2>&1
dump=$(ls "$tmp/dumps"/*.jinxdump 2>/dev/null | head -1)
if [ -n "$dump" ]; then
  vmm "jinx-vmm replay DUMP --verbose --timeout 5s: options after DUMP" 2 "no round records|free execution" \
    -- replay "$dump" --verbose --timeout 5s
  vmm "jinx-vmm replay DUMP --bogus: refused (2)" 2 "unknown option '--bogus'" -- replay "$dump" --bogus
  vmm "jinx-vmm replay A B: one DUMP only (2)" 2 "expected one DUMP" -- replay "$dump" "$dump"
  "$CTL" inspect "$dump" --json --disasm 0 >"$tmp/out" 2>"$tmp/err"; st=$?
  [ $st = 0 ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/out" 2>/dev/null && ok "jinxctl inspect DUMP --json: options after DUMP" || bad "jinxctl inspect DUMP --json: status $st"
  "$CTL" inspect "$dump" --bogus >"$tmp/out" 2>"$tmp/err"; st=$?
  [ $st = 2 ] && grep -q "unknown option '--bogus'" "$tmp/err" && ok "jinxctl inspect DUMP --bogus: refused (2)" || bad "jinxctl inspect --bogus: status $st"
else
  bad "no dump of crash segv"
fi
for args in "status --bogus" "detach --bogus" "attach --rate 5/s extra" "attach --bogus" "list extra" "status --vm"; do
  "$CTL" $args >"$tmp/out" 2>"$tmp/err"; st=$?
  if [ $st = 2 ] && grep -Eq "unknown option|unexpected argument|takes no arguments|needs a value" "$tmp/err"; then ok "jinxctl $args: refused (2)"
  else bad "jinxctl $args: status $st"; fi
done

summary "verdict tests"
