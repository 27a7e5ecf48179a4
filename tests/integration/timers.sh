#!/usr/bin/env bash
# Timers that end early (docs/timers.md; explorer/timers.h, sched/timers.h): a sleep is no
# synchronization. On tests/guest/sleepuaf.c (main frees a buffer after usleep(50000)
# while a reader still reads it) and tests/guest/sleepdouble.c (a sender frees a message
# after its 50 ms timed wait runs out while the receiver still works on it, which frees it
# too), tests/guest/sleeporder.c (a worker sleeps 10 ms, "main has published the
# configuration by then", and uses it), and their fixed twins sleepuaf_ok, sleepdouble_ok
# and sleeporder_ok (proper synchronization, plus
# a usleep(1000) polling loop, pthread_cond_timedwait retried on timeout, nanosleep(1 ms)
# between pieces of work). Checks:
#  1. `jinx test` finds each bug in every seed of SEEDS, with a report that names the timer
#     that ended early ("thread 1's nanosleep(50 ms) ended early while thread 2 was at
#     sleepuaf.c:72", --json "timers_early" and "early_timers"), and the dump replays to
#     the same crash (jinx-vmm replay) and names it (jinxctl inspect, --json, --html);
#     sleepuaf_hot (a hot shared counter cuts the traced runs) is found by a sparse run;
#     a hand-written schedule's 'timer T1 at N' line ends main's sleep at choice N;
#  2. `--timers strict` (jinx-vmm run --explore, options after the image too) keeps
#     today's behaviour: no timer ends early, the bug is not found; a bad mode is refused;
#  3. the twins: nothing found in TWIN_BUDGET seconds each, no run cut (no livelock), while
#     timers did end early (timers_early_all > 0);
#  4. two widened corpus twins (they sleep where the bug's window would be): nothing found
#     in CORPUS_TWIN_BUDGET (3) seconds each (CORPUS_TWINS: their images).
# Env: SEEDS (default 1-10), TWIN_BUDGET (default 60), BUDGET (default 60 s per seed),
# REPLAYS (default 20: replays of the first seed's dump), BUGS and TWINS (the programs;
# default all three of each).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; JT="$BIN/jinx"; CTL="$BIN/jinxctl"
G="$BUILD/guest-tests"
SEEDS=${SEEDS:-1-10}; TWIN_BUDGET=${TWIN_BUDGET:-60}; BUDGET=${BUDGET:-60}; REPLAYS=${REPLAYS:-20}
BUGS=${BUGS:-sleepuaf sleepdouble sleeporder}; TWINS=${TWINS:-sleepuaf_ok sleepdouble_ok sleeporder_ok}
for p in $BUGS $TWINS sleepuaf_hot; do
  [ -x "$G/$p" ] || { echo "FAIL $G/$p not built (make guest-tests)"; exit 1; }
done
mk_tmp
first=${SEEDS%-*}; last=${SEEDS#*-}

# 1. Each bug, each seed: found, named, replayed.
for p in $BUGS; do
  found=0; times=""; named=0; replayed=0; n=0
  for s in $(seq "$first" "$last"); do
    n=$((n+1))
    out=$(timeout $((BUDGET + 60)) "$JT" test "$G/$p" --budget "${BUDGET}s" --jobs 1 --seeds "$s-$s" \
          --json --dump-dir "$tmp/$p" 2>"$tmp/err"); st=$?
    eval "$(echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d.get("early_timers") or [{}]
print("f=%s secs=%.1f early=%s dump=%s text=%s" % (str(d["found"]).lower(), d["seconds"],
      d.get("timers_early", 0), d.get("dump") or "", json.dumps(t[0].get("text", ""))))' \
          2>/dev/null || echo f=none)"
    if [ $st = 1 ] && [ "$f" = true ]; then
      found=$((found+1)); times="$times $secs"
      case "$text" in *"ended early"*) [ "${early:-0}" -ge 1 ] && named=$((named+1)) ;; esac
      [ -n "$dump" ] && [ "$s" = "$first" ] && firstdump=$dump
    else
      echo "  $p seed $s: status $st, found ${f:-?}"; tail -3 "$tmp/err"
    fi
  done
  if [ "$found" = "$n" ] && [ "$named" = "$n" ]; then
    ok "$p: found in $found of $n seeds (seconds:$times), each naming the timer that ended early"
  else
    bad "$p: found in $found of $n seeds, $named naming a timer that ended early"
  fi
  if [ -n "${firstdump:-}" ]; then
    same=0
    for k in $(seq 1 "$REPLAYS"); do
      r=$(timeout 120 "$VMM" replay "$firstdump" 2>&1); rst=$?
      echo "$r" | grep -q "replay reproduced the dump's crash" && same=$((same+1))
    done
    i=$("$CTL" inspect --image "$G/$p" "$firstdump" 2>&1)
    if [ "$same" = "$REPLAYS" ] && echo "$i" | grep -q "^timers:  [12] ended early" &&
       echo "$i" | grep -q "ended early"; then
      ok "$p: the dump replays to the same crash $same/$REPLAYS (status $rst), jinxctl inspect names the timer"
    else
      bad "$p: $same/$REPLAYS replays reproduced it (last status $rst), or inspect without the timer"
      echo "$r" | tail -2; echo "$i" | grep -A2 "^timers" | head -3
    fi
    ij=$("$CTL" inspect --json --image "$G/$p" "$firstdump" 2>/dev/null |
         python3 -c 'import json,sys; d=json.load(sys.stdin); r=d.get("round") or d
print(len(r.get("early_timers", [])))' 2>/dev/null)
    [ "${ij:-0}" -ge 1 ] && ok "$p: inspect --json lists early_timers ($ij)" ||
      bad "$p: inspect --json has no early_timers"
    "$CTL" inspect --html "$tmp/$p.html" --image "$G/$p" "$firstdump" >/dev/null 2>&1 &&
      grep -q "<th>timer</th><td>thread [0-9]&#39;s [a-z_ ]*.*ended early" "$tmp/$p.html" &&
      ok "$p: inspect --html names the timer" || bad "$p: inspect --html without the timer"
  fi
  unset firstdump
done

# 1b. Sparse runs (docs/sparse.md): sleepuaf_hot's traced runs are cut by a hot counter.
out=$(timeout 150 "$JT" test "$G/sleepuaf_hot" --budget 60s --jobs 1 --seeds 1-1 --json \
      --dump-dir "$tmp/hot" 2>"$tmp/err"); st=$?
eval "$(echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("f=%s secs=%.1f strat=%s early=%s sparse=%s dump=%s" % (str(d["found"]).lower(), d["seconds"],
      d.get("strategy", ""), d.get("timers_early", 0), d.get("sparse_schedules", 0), d.get("dump") or ""))' \
      2>/dev/null || echo f=none)"
if [ $st = 1 ] && [ "$f" = true ] && [ "$strat" = sparse ] && [ "${early:-0}" -ge 1 ] &&
   timeout 120 "$VMM" replay "$dump" 2>&1 | grep -q "replay reproduced the dump's crash"; then
  ok "sleepuaf_hot: found by a sparse run with a timer ended early in $secs s ($sparse sparse), replayed"
else bad "sleepuaf_hot: status $st, found ${f:-?}, strategy ${strat:-?}, timers_early ${early:-?}"; fi

# 3. The twins: no false bug and no livelock with timers ending early. They run in the
# background (lib.sh's bg_start) beside 1c and 2, which are clean or deterministic too: a
# false bug is false at any speed, and "none cut" holds on a shared CPU (a run's budget is
# CPU time).
for p in $TWINS; do
  bg_start "$p" -- timeout $((TWIN_BUDGET + 60)) "$JT" test "$G/$p" --budget "${TWIN_BUDGET}s" --jobs 1 --json \
      --dump-dir "$tmp/$p"
done

# 1c. A hand-written schedule (explorer/schedule.h): 'timer T1 at N' ends main's sleep at
# choice N of a --serial run from boot: at choice 40 (the reader reading) it crashes, the
# same cue points twice; at choice 1 main is not asleep yet: nothing ends, said so.
for n in 40 1; do
  printf 'timer T1 at %s\ndefault roundrobin\n' "$n" > "$tmp/t.sched"
  want=139; line="1 of the schedule's 1 timers ended early, 0 found"
  [ "$n" = 1 ] && want=0 && line="0 of the schedule's 1 timers ended early, 1 found"
  c1=""; good=1
  for rep in 1 2; do
    out=$(timeout 60 "$VMM" run --no-control --serial --schedule "$tmp/t.sched" "$G/sleepuaf" 2>&1); st=$?
    c=$(echo "$out" | sed -n 's/.*serial: \([0-9]*\) cue points.*/\1/p')
    [ "$st" = "$want" ] && echo "$out" | grep -q "timers: $line" || good=0
    [ -z "$c1" ] && c1=$c; [ "$c" = "$c1" ] || good=0
  done
  [ $good = 1 ] && ok "--schedule 'timer T1 at $n': status $want twice, $c1 cue points each" ||
    { bad "--schedule 'timer T1 at $n': status $st (wanted $want)"; echo "$out" | tail -3; }
done

# 2. --timers strict: today's behaviour (after the image, as options may be).
out=$(timeout 60 "$VMM" run --no-control --seed 1 --explore 5s --no-stress-runs "$G/sleepuaf" \
      --timers strict 2>&1); st=$?
early=$(echo "$out" | sed -n 's/.*"timers_early":\([0-9]*\).*/\1/p' | tail -1)
if [ $st = 0 ] && [ "$early" = 0 ]; then
  ok "--timers strict: sleepuaf explored 5 s, no timer ended early, nothing found"
else bad "--timers strict: status $st, timers_early ${early:-none}"; fi
out=$(timeout 60 "$VMM" run --no-control --seed 1 --explore 5s "$G/sleepuaf" --timers sometimes 2>&1); st=$?
[ $st = 2 ] || [ $st = 125 ] && echo "$out" | grep -q "expected strict" &&
  ok "--timers sometimes: refused ($st)" || bad "--timers sometimes: status $st"
out=$(timeout 60 "$JT" test "$G/sleepuaf" --timers never 2>&1); st=$?
[ $st = 2 ] && echo "$out" | grep -q "expected strict" && ok "jinx test --timers never: refused" ||
  bad "jinx test --timers never: status $st"
out=$(timeout 90 "$JT" test "$G/sleepuaf" --budget 8s --jobs 1 --seeds 1-1 --timers strict --json \
      --dump-dir "$tmp/strict" 2>/dev/null); st=$?
all=$(echo "$out" | sed -n 's/.*"timers_early_all":\([0-9]*\).*/\1/p')
[ $st = 0 ] && [ "$all" = 0 ] && ok "jinx test --timers strict: nothing found, no timer ended early" ||
  bad "jinx test --timers strict: status $st, timers_early_all ${all:-none}"

# 3. The twins, judged (they ran beside 1c and 2).
judge_twin() {
  local p=$1 st=$bg_st out all sch cut
  out=$(cat "$bg_out" 2>/dev/null)
  all=$(echo "$out" | sed -n 's/.*"timers_early_all":\([0-9]*\).*/\1/p')
  sch=$(echo "$out" | sed -n 's/.*"schedules":\([0-9]*\).*/\1/p')
  cut=$(grep -ho '"cut":[0-9]*' "$tmp/$p"/jinx-test-last.log 2>/dev/null | tail -1 | cut -d: -f2)
  if [ "$st" = 0 ] && [ "${all:-0}" -gt 0 ] && [ "${cut:-0}" = 0 ]; then
    ok "$p: nothing found in ${TWIN_BUDGET} s ($sch schedules, $all timers ended early, none cut)"
  else
    bad "$p: status ${st:-none}, timers_early_all ${all:-none}, cut ${cut:-?}"; tail -5 "$bg_err"
  fi
}
bg_judge judge_twin

# 4. Corpus twins that sleep: the -DWIDEN_WINDOW builds of images/corpus's bug-free twins
# sleep (nanosleep) where their bug's window would be; a timer ending early there must find
# nothing (scripts/bench/timers-twins.sh runs every corpus twin this way).
for img in ${CORPUS_TWINS:-images/bin/corpus/widen/order-init-ok images/bin/corpus/widen/dl-abba-ok}; do
  [ -x "$img" ] || { bad "$img not built (make images)"; continue; }
  out=$(timeout $((${CORPUS_TWIN_BUDGET:-3} + 60)) "$JT" test "$img" --budget "${CORPUS_TWIN_BUDGET:-3}s" \
        --jobs 1 --json --dump-dir "$tmp/ct" 2>"$tmp/err"); st=$?
  all=$(echo "$out" | sed -n 's/.*"timers_early_all":\([0-9]*\).*/\1/p')
  sch=$(echo "$out" | sed -n 's/.*"schedules":\([0-9]*\).*/\1/p')
  if [ $st = 0 ] && [ "${sch:-0}" -gt 0 ]; then
    ok "$img: nothing found in ${CORPUS_TWIN_BUDGET:-3} s ($sch schedules, ${all:-0} timers ended early)"
  else
    bad "$img: status $st, schedules ${sch:-none}"; tail -5 "$tmp/err"
  fi
done

summary "timers tests"
