#!/usr/bin/env bash
# jinx test's verdict from what its runs report, with a stand-in jinx-vmm (a shell script
# that prints an exploration summary and exits as told): needs no KVM, so it runs with
# the unit tests on any host.
#  - a bug met in exploration only (a timed run whose live replay was stopped before it
#    got there, the program then ending well: seqlock-plain's seed 1 in session 31) is
#    the verdict when no run leaves a dump: BUG FOUND (exit 1), no dump, --json's
#    "exploration_only" and --junit's failure say so;
#  - a later run that leaves a dump decides instead, and the report names that run's
#    strategy and schedule;
#  - a replay that differed on a sparse schedule (a bug in jinx), a run that met a jinx
#    limit, or a summary that does not say how the replay went: nothing found (exit 0),
#    the mismatch named.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"
JINX="${BIN:-bin}/jinx"
IMG="${BIN:-bin}/jinxctl" # any ELF: the stand-in never runs it
[ -x "$JINX" ] || { echo "FAIL no $JINX (make)"; exit 1; }
need_python
mk_tmp
ERR_TAIL=6

# The stand-in's behaviour per seed comes from $tmp/mode.<seed>:
#   ok         30 schedules, nothing found, exit 0
#   unrep      30 schedules; schedule 12 (timed) met an abort, its replay stopped; exit 0
#   limited    the same, but that run met a jinx limit
#   oldvmm     the same, from a jinx-vmm whose summary has no "replay"
#   mismatch   schedule 3 (sparse) met an abort, its replay differed; exit 0
#   bug        9 schedules; schedule 9 (pct) met an abort, replayed: SIGABRT, exit 134
cat >"$tmp/fake-vmm" <<FAKE
#!/bin/bash
while [ \$# -gt 0 ]; do
  case \$1 in --seed) seed=\$2;; --report) rep=\$2;; --dump-dir) dd=\$2;; esac; shift
done
mode=\$(cat "$tmp/mode.\$seed" 2>/dev/null || echo ok)
xl() { # schedules to_bug reproduced limited strategy bug_outcome replay
  local tail=",\"bug_outcome\":\"\$6\",\"replay\":\"\$7\""
  [ "\$7" = none ] && tail=""
  echo "jinx-vmm: explore: {\"snapshot\":true,\"schedules\":\$1,\"schedules_to_bug\":\$2,\"seconds\":1.0,\"reproduced\":\$3,\"gave_up\":false,\"limited\":\$4,\"strategy\":\"\$5\",\"note\":\"x\"\$tail}" >&2
}
report() { printf '{"outcome":"%s","exit_status":%d,"limits":[],"stderr_tail":"%s"}' "\$1" "\$2" "\$3" >"\$rep"; }
case \$mode in
  ok)       report exit 0 ""; xl 30 0 false false "" "" ""; exit 0;;
  unrep)    report exit 0 ""; xl 30 12 false false timed assert stopped; exit 0;;
  limited)  report exit 0 ""; xl 30 12 false true timed assert stopped; exit 0;;
  oldvmm)   report exit 0 ""; xl 30 12 false false timed assert none; exit 0;;
  mismatch) report exit 0 ""; xl 30 3 false false sparse assert differs; exit 0;;
  bug)      report signal 134 "check failed: seed \$seed"; xl 9 9 true false pct assert same; exit 134;;
esac
FAKE
chmod +x "$tmp/fake-vmm"
# run NAME WANT_STATUS MODE... -- args: seeds 1.. get the modes; JSON in $tmp/out
run() {
  local name=$1 want=$2 i=1; shift 2
  rm -f "$tmp"/mode.*
  while [ "$1" != -- ]; do echo "$1" >"$tmp/mode.$i"; i=$((i + 1)); shift; done
  shift
  JINX_VMM="$tmp/fake-vmm" timeout 60 "$JINX" test "$IMG" --seeds "1-$((i - 1))" --budget 30s --jobs 1 \
    --dump-dir "$tmp/d" --json "$@" >"$tmp/out" 2>"$tmp/err"; st=$?
  [ "$st" = "$want" ] || { bad "$name: status $st, wanted $want"; return 1; }
}

if run "met in exploration only" 1 unrep ok ok -- --junit "$tmp/j.xml"; then
  got=$(jget "$tmp/out" '(d["found"], d["seed"], d["runs"], d["outcome"], d["dump"], d["replayable"], d["strategy"], d["schedules_to_bug"], d["exploration_only"])')
  want="(True, 1, 3, 'abort or failure exit', None, False, 'timed', 12, {'seed': 1, 'schedule': 12, 'class': 'assert', 'replay': 'stopped'})"
  [ "$got" = "$want" ] && ok "a bug met in exploration only, no dump in 3 runs: BUG FOUND (exit 1), seed 1, no dump" ||
    bad "met in exploration only: $got"
  grep -q "found by:  whole-run schedule 12 (strategy timed.*in exploration only: its live replay was stopped" "$tmp/err" &&
    grep -q "dump:      none: no run met the bug live" "$tmp/err" &&
    ok "the text report says it was met in exploration only and why there is no dump" ||
    bad "text report: $(cat "$tmp/err")"
  grep -q '<failure type="abort or failure exit" message="abort or failure exit, met in exploration only (seed 1, no dump)"' "$tmp/j.xml" &&
    ok "--junit: a failure, met in exploration only" || bad "--junit: $(head -c 600 "$tmp/j.xml")"
fi
if run "a later run leaves a dump" 1 unrep bug -- ; then
  got=$(jget "$tmp/out" '(d["seed"], d["outcome"], d["strategy"], d["schedules_to_bug"], d["reproduced"], d["exploration_only"])')
  [ "$got" = "(2, 'SIGABRT', 'pct', 39, True, None)" ] &&
    ok "a later run's bug decides: seed 2, SIGABRT, its own strategy and schedule (30 + 9)" || bad "later bug: $got"
fi
if run "bug-free" 0 ok ok -- ; then
  got=$(jget "$tmp/out" '(d["found"], d["runs"], d["jinx_mismatches"])')
  [ "$got" = "(False, 2, 0)" ] && ok "nothing met: nothing found (exit 0)" || bad "bug-free: $got"
fi
if run "a replay that differed" 0 mismatch ok -- ; then
  got=$(jget "$tmp/out" '(d["found"], d["jinx_mismatches"])')
  [ "$got" = "(False, 1)" ] && grep -q "a bug in jinx, not a verdict on the program" "$tmp/err" &&
    ok "a sparse schedule whose replay differed: jinx's mismatch, named; nothing found (exit 0)" ||
    bad "mismatch: $got"
fi
run "a run that met a jinx limit" 0 limited -- && ok "a run that met a jinx limit: not a verdict (exit 0)"
run "an older jinx-vmm's summary" 0 oldvmm -- && ok "a summary without \"replay\": not a verdict (exit 0)"

summary "jinx-test-verdicts"
