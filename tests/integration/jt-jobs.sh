#!/usr/bin/env bash
# `jinx test --jobs N` (issue 14 item 4, issue 13 item 3): runs side by side, the first
# verdict stops the others, nothing left behind.
#  - refusals: --jobs 0, garbage, over the maximum (exit 2, naming --jobs); --jobs after
#    IMAGE is honoured;
#  - with a stand-in jinx-vmm (a shell script; exact, whatever the host's load): two runs
#    really overlap; schedules are summed over the runs and the rate is over the jobs'
#    wall time; the first bug stops the other run (SIGTERM), which is gone afterwards, its
#    exploration still counted; a run that ignores SIGTERM is killed after the grace time;
#    SIGTERM to jinx test itself stops every run (exit 143), and SIGKILL to it still ends
#    them (PR_SET_PDEATHSIG); no private directory is left; when jinx-vmm cannot run the
#    image at all, status 2 and --json/--junit still say could not test, with its reason;
#  - real runs: --jobs 2 finds a corpus bug, its dump replays, and the reported seed alone
#    (--jobs 1 --seeds S-S) meets the same bug at the same schedule; a bug-free twin under
#    --jobs 2: nothing found, both jobs ran; no jinx-vmm left in jinx test's process
#    group; --jobs 1 as before (one run at a time, no private directories).
# Without /dev/kvm this fails (make check-kvm).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; JINX="$BIN/jinx"; C=images/bin/corpus
for f in "$VMM" "$JINX" "$C/atom-counter" "$C/lw-flag-ok"; do
  [ -x "$f" ] || { echo "FAIL no $f (make)"; exit 1; }
done
need_python
command -v setsid >/dev/null || { echo "FAIL setsid (util-linux) is needed"; exit 1; }
tmp=$(mktemp -d)
# A stand-in run left behind by a failed check is killed by its pid (never by name).
reap_fakes() { local f; for f in "$tmp"/pid.*; do [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null; done; }
trap 'reap_fakes; rm -rf "$tmp"' EXIT
ERR_TAIL=8
ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
# no_private DIR: no per-job directory left in DIR
no_private() { [ -z "$(find "$1" -maxdepth 1 -name '.jinx-test-*' 2>/dev/null)" ]; }

echo "-- refusals"
for bad_jobs in 0 abc -1 33 2x ""; do
  "$JINX" test "$C/lw-flag-ok" --jobs "$bad_jobs" --budget 1s --dump-dir "$tmp/r" >"$tmp/out" 2>"$tmp/err"; st=$?
  if [ $st = 2 ] && grep -q -- "--jobs $bad_jobs: expected a number from 1 to 32" "$tmp/err"; then ok "--jobs '$bad_jobs': refused (2)"
  else bad "--jobs '$bad_jobs': status $st"; fi
done

echo "-- a stand-in jinx-vmm (exact counts)"
# Its behaviour per seed comes from $tmp/mode.<seed> (default: "ok 1"):
#   ok S        sleep S seconds, then: 7 schedules in 2.0 s, nothing found (exit 0)
#   bug S       sleep S seconds, then: a bug (SIGABRT, exit 134), 3 schedules in 1.0 s
#   long        run until stopped; on SIGTERM: 5 schedules in 4.0 s, exit 143
#   stubborn    run until SIGKILL (ignores SIGTERM)
#   novm        jinx-vmm cannot run the image at all: its message, exit 125, no report
# Each run writes its pid to $tmp/pid.<seed> and, while it runs, $tmp/up.<seed>.
cat >"$tmp/fake-vmm" <<FAKE
#!/bin/bash
while [ \$# -gt 0 ]; do
  case \$1 in --seed) seed=\$2;; --report) rep=\$2;; --dump-dir) dd=\$2;; esac; shift
done
mode=\$(cat "$tmp/mode.\$seed" 2>/dev/null || echo "ok 1")
# Marked only once its signal handling is in place: a SIGTERM between the two would kill
# it by default and leave up.<seed> behind (seen once in CI).
mark() { echo \$\$ >"$tmp/pid.\$seed"; : >"$tmp/up.\$seed"; }
xl() { echo "jinx-vmm: explore: {\"snapshot\":true,\"schedules\":\$1,\"schedules_to_bug\":\$2,\"seconds\":\$3,\"reproduced\":true,\"gave_up\":false,\"limited\":false,\"strategy\":\"pct\",\"note\":\"x\"}" >&2; }
report() { printf '{"outcome":"%s","exit_status":%d,"limits":[],"stderr_tail":"%s"}' "\$1" "\$2" "\$3" >"\$rep"; }
case \$mode in
  ok*) mark; sleep \${mode#ok }; report exit 0 ""; xl 7 0 2.0; rm -f "$tmp/up.\$seed"; exit 0;;
  bug*) mark; sleep \${mode#bug }; report signal 134 "check failed: seed \$seed"; : >"\$dd/fake.core"
        xl 3 2 1.0; rm -f "$tmp/up.\$seed"; exit 134;;
  long) trap 'xl 5 0 4.0; rm -f "$tmp/up.\$seed"; exit 143' TERM; mark; while :; do sleep 0.1; done;;
  stubborn) trap '' TERM; mark; while :; do sleep 0.1; done;;
  novm) echo "jinx-vmm: /dev/kvm: stand-in: no KVM device here" >&2; exit 125;;
esac
FAKE
chmod +x "$tmp/fake-vmm"
fake() { # NAME WANT_STATUS -- jinx test args; JSON in $tmp/out, stderr in $tmp/err, ms in $el
  local name=$1 want=$2; shift 3
  local t0; t0=$(ms)
  JINX_VMM="$tmp/fake-vmm" timeout 60 "$JINX" test "$@" --json >"$tmp/out" 2>"$tmp/err"; st=$?
  el=$(( $(ms) - t0 ))
  [ "$st" = "$want" ] || { bad "$name: status $st, wanted $want"; return 1; }
}
alive() { [ -f "$tmp/pid.$1" ] && kill -0 "$(cat "$tmp/pid.$1")" 2>/dev/null; }

reap_fakes; rm -f "$tmp"/mode.* "$tmp"/pid.* "$tmp"/up.*; echo "ok 2" >"$tmp/mode.1"; echo "ok 2" >"$tmp/mode.2"
if fake "two runs of 2 s, --jobs 2" 0 -- "$C/lw-flag-ok" --jobs 2 --seeds 1-2 --budget 30s --dump-dir "$tmp/f1"; then
  got=$(jget "$tmp/out" '(d["runs"], d["schedules"], d["schedules_per_second"], d["jobs"])')
  if [ "$got" = "(2, 14, 7.0, 2)" ] && [ "$el" -lt 3800 ]; then
    ok "--jobs 2: two 2 s runs side by side in $el ms; 14 schedules (7 + 7), 7.0/s (14 over 2.0 s of the jobs' wall time)"
  else bad "--jobs 2: (runs, schedules, rate, jobs) $got in $el ms, wanted (2, 14, 7.0, 2) in < 3800 ms"; fi
  no_private "$tmp/f1" && ok "--jobs 2: no private directory left" || bad "private directories left: $(ls -A "$tmp/f1")"
  grep -q "nothing found in .*(2 runs, seeds 1..2, 2 at once; 14 whole-run schedules, 7.0/s)" "$tmp/err" &&
    ok "text report: runs, seeds, jobs, schedules and rate" || bad "text report: $(grep 'nothing found' "$tmp/err")"
fi
if fake "the same with --jobs 1" 0 -- --jobs 1 --seeds 1-2 --budget 30s --dump-dir "$tmp/f2" "$C/lw-flag-ok"; then
  got=$(jget "$tmp/out" '(d["runs"], d["schedules"], d["schedules_per_second"], d["jobs"])')
  if [ "$got" = "(2, 14, 3.5, 1)" ] && [ "$el" -ge 4000 ]; then ok "--jobs 1: one after the other ($el ms), 14 schedules, 3.5/s"
  else bad "--jobs 1: $got in $el ms, wanted (2, 14, 3.5, 1) in >= 4000 ms"; fi
fi

reap_fakes; rm -f "$tmp"/mode.* "$tmp"/pid.* "$tmp"/up.*; echo long >"$tmp/mode.1"; echo "bug 1" >"$tmp/mode.2"
if fake "a bug in seed 2 while seed 1 runs on" 1 -- "$C/lw-flag-ok" --jobs 2 --budget 40s --dump-dir "$tmp/f3"; then
  got=$(jget "$tmp/out" '(d["seed"], d["runs"], d["runs_stopped"], d["schedules"], d["outcome"])')
  if [ "$got" = "(2, 1, 1, 8, 'SIGABRT')" ] && [ "$el" -lt 8000 ]; then
    ok "the first bug decides: seed 2 reported in $el ms, seed 1 stopped, its 5 schedules counted (3 + 5)"
  else bad "bug in seed 2: (seed, runs, stopped, schedules, outcome) $got in $el ms"; fi
  if [ -f "$tmp/pid.1" ] && ! alive 1 && [ ! -e "$tmp/up.1" ]; then ok "the stopped run got SIGTERM and is gone"
  else bad "seed 1's run: pid $(cat "$tmp/pid.1" 2>/dev/null) alive or not stopped by SIGTERM"; fi
  no_private "$tmp/f3" && ok "nothing of the stopped run left in the dump directory" || bad "left: $(ls -A "$tmp/f3")"
  grep -q "check failed: seed 2" "$tmp/f3/jinx-test-last.json" && ok "jinx-test-last.json is the deciding run's" ||
    bad "jinx-test-last.json: $(cat "$tmp/f3/jinx-test-last.json")"
fi

reap_fakes; rm -f "$tmp"/mode.* "$tmp"/pid.* "$tmp"/up.*; echo stubborn >"$tmp/mode.1"; echo "bug 1" >"$tmp/mode.2"
if fake "a run that ignores SIGTERM" 1 -- "$C/lw-flag-ok" --jobs 2 --budget 40s --dump-dir "$tmp/f4"; then
  if [ "$el" -ge 5000 ] && [ "$el" -lt 15000 ] && ! alive 1; then ok "a run that ignores SIGTERM is killed after the 5 s grace ($el ms)"
  else bad "stubborn run: $el ms, alive: $(alive 1 && echo yes || echo no)"; fi
fi

# jinx-vmm could not run the image (no /dev/kvm, say): status 2, and a script asking for
# --json or --junit still gets its answer, could not test, with jinx-vmm's reason.
reap_fakes; rm -f "$tmp"/mode.* "$tmp"/pid.* "$tmp"/up.*; echo novm >"$tmp/mode.1"; echo novm >"$tmp/mode.2"
if fake "jinx-vmm cannot run the image" 2 -- "$C/lw-flag-ok" --jobs 1 --budget 30s --dump-dir "$tmp/f7" \
     --junit "$tmp/f7.xml"; then
  got=$(jget "$tmp/out" '(d["found"], d["could_not_test"], d["outcome"], d["status"], d["runs"])')
  reason=$(jget "$tmp/out" 'd["reason"]')
  if [ "$got" = "(False, True, 'jinx-vmm error', 125, 1)" ] &&
     [ "$reason" = "jinx-vmm could not run the image (status 125): /dev/kvm: stand-in: no KVM device here" ]; then
    ok "jinx-vmm could not run the image: --json says could not test, with its reason"
  else bad "jinx-vmm could not run the image: $got, reason '$reason'"; fi
  grep -q '<error type="could-not-test" message="could not test: jinx-vmm could not run the image (status 125): /dev/kvm: stand-in' "$tmp/f7.xml" &&
    ok "--junit: an error, could not test, with the reason" || bad "--junit: $(head -c 600 "$tmp/f7.xml")"
  grep -q "stand-in: no KVM device here" "$tmp/err" && ok "jinx-vmm's message is on stderr" ||
    bad "stderr lacks jinx-vmm's message"
fi
JINX_VMM="$tmp/fake-vmm" "$JINX" test "$C/lw-flag-ok" --jobs 1 --budget 30s --dump-dir "$tmp/f8" >"$tmp/out" 2>"$tmp/err"; st=$?
if [ $st = 2 ] && [ ! -s "$tmp/out" ] && grep -q "stand-in: no KVM device here" "$tmp/err"; then
  ok "without --json: status 2, jinx-vmm's message on stderr, nothing on stdout"
else bad "without --json: status $st, stdout $(head -c 200 "$tmp/out")"; fi

reap_fakes; rm -f "$tmp"/mode.* "$tmp"/pid.* "$tmp"/up.*; echo long >"$tmp/mode.1"; echo long >"$tmp/mode.2"
JINX_VMM="$tmp/fake-vmm" setsid "$JINX" test "$C/lw-flag-ok" --jobs 2 --budget 60s --dump-dir "$tmp/f5" \
  >"$tmp/out" 2>"$tmp/err" & jp=$!
for _ in $(seq 50); do [ -f "$tmp/pid.1" ] && [ -f "$tmp/pid.2" ] && break; sleep 0.1; done
kill -TERM $jp; wait $jp; st=$?
if [ $st = 143 ] && ! alive 1 && ! alive 2 && grep -q "interrupted by SIGTERM" "$tmp/err" && no_private "$tmp/f5"; then
  ok "SIGTERM to jinx test: both runs stopped, exit 143, nothing left"
else bad "SIGTERM to jinx test: status $st, runs alive: $(alive 1 && echo 1) $(alive 2 && echo 2)"; fi

# SIGKILL to jinx test (nothing can be cleaned up): its runs still get SIGTERM
# (PR_SET_PDEATHSIG) and end, instead of exploring on to their timeout as orphans.
reap_fakes; rm -f "$tmp"/mode.* "$tmp"/pid.* "$tmp"/up.*; echo long >"$tmp/mode.1"; echo long >"$tmp/mode.2"
JINX_VMM="$tmp/fake-vmm" "$JINX" test "$C/lw-flag-ok" --jobs 2 --budget 60s --dump-dir "$tmp/f6" \
  >"$tmp/out" 2>"$tmp/err" & jp=$!
for _ in $(seq 50); do [ -f "$tmp/pid.1" ] && [ -f "$tmp/pid.2" ] && break; sleep 0.1; done
kill -KILL $jp; wait $jp 2>/dev/null
for _ in $(seq 30); do alive 1 || alive 2 || break; sleep 0.1; done
if ! alive 1 && ! alive 2 && [ ! -e "$tmp/up.1" ] && [ ! -e "$tmp/up.2" ]; then
  ok "SIGKILL to jinx test: both runs got SIGTERM and ended"
else bad "SIGKILL to jinx test: runs alive: $(alive 1 && echo 1) $(alive 2 && echo 2)"; fi

echo "-- real runs"
# run_jt NAME -- args: jinx test in its own process group; afterwards no process of that
# group may be left (a stopped jinx-vmm would still be in it).
run_jt() {
  local name=$1; shift 2
  local t0=$SECONDS
  setsid "$JINX" test "$@" --json >"$tmp/out" 2>"$tmp/err" & local jp=$!
  wait $jp; st=$?
  el=$((SECONDS - t0))
  left=$(pgrep -g "$jp" 2>/dev/null | tr '\n' ' ')
  [ -z "$left" ] && ok "$name: no process of jinx test's group left (pgrep -g $jp)" ||
    bad "$name: left running in jinx test's group: $left"
}
run_jt "--jobs 2 on atom-counter" -- "$C/atom-counter" --jobs 2 --budget 60s --dump-dir "$tmp/real"
seed=$(jget "$tmp/out" 'd["seed"]'); dump=$(jget "$tmp/out" 'd["dump"]')
if [ $st = 1 ] && [ "$(jget "$tmp/out" 'd["replayable"], d["jobs"]')" = "True 2" ] && [ -f "$dump" ]; then
  ok "--jobs 2: atom-counter's bug found in $el s (seed $seed, $(jget "$tmp/out" 'd["runs_stopped"]') run(s) stopped)"
  n=$(ls "$tmp/real"/*.jinxdump | wc -l)
  [ "$n" = 1 ] && no_private "$tmp/real" && ok "one dump in the dump directory, no private directory" ||
    bad "$n dumps, or private directories: $(ls -A "$tmp/real")"
  want=$(jget "$tmp/out" 'd["status"]')
  timeout 120 "$VMM" replay "$dump" >/dev/null 2>"$tmp/err"; rst=$?
  [ "$rst" = "$want" ] && grep -q "replay reproduced" "$tmp/err" && ok "its dump replays (status $rst)" ||
    bad "replay of $dump: status $rst, wanted $want"
  cp "$tmp/out" "$tmp/jobs2.json"
  timeout 120 "$JINX" test "$C/atom-counter" --jobs 1 --seeds "$seed-$seed" --budget 60s --json \
    --dump-dir "$tmp/alone" >"$tmp/out" 2>"$tmp/err"; st=$?
  a=$(jget "$tmp/jobs2.json" '(d["outcome"], d["schedules_to_bug"], d["strategy"])')
  b=$(jget "$tmp/out" '(d["outcome"], d["schedules_to_bug"], d["strategy"])')
  [ $st = 1 ] && [ "$a" = "$b" ] && ok "seed $seed alone (--jobs 1 --seeds $seed-$seed): the same bug at the same schedule $b" ||
    bad "seed $seed alone: status $st, $b; with --jobs 2: $a"
else bad "--jobs 2 on atom-counter: status $st, $(head -c 300 "$tmp/out")"; fi

run_jt "--jobs 2 on lw-flag-ok" -- --jobs 2 --budget 8s --dump-dir "$tmp/twin" "$C/lw-flag-ok"
runs=$(jget "$tmp/out" 'd["runs"]'); sch=$(jget "$tmp/out" 'd["schedules"]')
if [ $st = 0 ] && [ "$(jget "$tmp/out" 'd["found"], d["jobs"]')" = "False 2" ] && [ "${runs:-0}" -ge 2 ] && [ "${sch:-0}" -gt 0 ]; then
  ok "--jobs 2 on the bug-free twin: nothing found, $runs runs, $sch schedules ($(jget "$tmp/out" 'd["schedules_per_second"]')/s)"
else bad "--jobs 2 on lw-flag-ok: status $st, $(head -c 300 "$tmp/out")"; fi
grep -q "seeds 1, 2 running (2 jobs)" "$tmp/err" && ok "one status line names both runs" || bad "status line: $(head -2 "$tmp/err")"
no_private "$tmp/twin" && ok "no private directory left" || bad "left: $(ls -A "$tmp/twin")"

# --jobs 1: one run at a time, files straight in the dump directory, as before --jobs.
"$JINX" test --jobs 1 --budget 4s --dump-dir "$tmp/one" "$C/lw-flag-ok" >"$tmp/err" 2>&1 & jp=$!
priv=0; up=0
while kill -0 $jp 2>/dev/null; do
  n=$(pgrep -P $jp -c 2>/dev/null); [ "${n:-0}" -gt "$up" ] && up=$n
  [ -n "$(find "$tmp/one" -maxdepth 1 -name '.jinx-test-*' 2>/dev/null)" ] && priv=1
  sleep 0.05
done
wait $jp; st=$?
if [ $st = 0 ] && [ "$up" = 1 ] && [ $priv = 0 ] && ! grep -q "at once" "$tmp/err" && [ -s "$tmp/one/jinx-test-last.log" ]; then
  ok "--jobs 1: one jinx-vmm at a time, no private directory, jinx-test-last.log as before"
else bad "--jobs 1: status $st, most runs at once $up, private dir seen $priv"; fi

summary "jinx test --jobs"
