#!/usr/bin/env bash
# Whole-run exploration (jinx-vmm run --explore, what jinx test runs first): the snapshot
# is taken at the first thread creation; whole runs from it find a short test's bug
# (threads living well under a millisecond, which rounds never reach), the bug run is
# replayed live (the program really crashes, dump written) and `jinx-vmm replay`
# reproduces it; the same seed finds it at the same schedule with the same choices, on
# an idle CPU and on one a busy loop starves (a run's budget is CPU time); a
# deadlock replays too, and the nest strategy meets a three-lock cycle within a few runs;
# the portfolio's window sweep meets lw-flag's lost wakeup within 5 schedules; the wake
# strategy meets bb-if's overtaken consumer within 5 and nothing in its twin; the lanes
# portfolio's sweep lane meets aba-stack exactly where sweep alone does;
# a bug-free twin runs many schedules and reports nothing; a
# program without threads has nothing to explore and just ends; a program too long for
# whole runs hands over to simulation rounds; a bug met in free execution is searched
# for again from snapshots before it is reported; `jinx test --strategy/--depth` (options
# before or after IMAGE) reports schedules to bug, strategy and replayability in --json;
# options of --explore without it, and bad values, are refused.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; CTL="$BIN/jinxctl"; JINX="$BIN/jinx"
C=images/bin/corpus
need_python
mk_tmp
# The exploration summary line of a run's stderr, as JSON.
xget() { xjson "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)" 2>/dev/null; }
dump_of() { sed -n 's/.*dump written to \(.*\.jinxdump\).*/\1/p' "$1" | tail -1; }

# 1. A short test's assertion: found, replayed live, dump replays.
"$VMM" run --no-control --quiet --explore 20s --dump-dir "$tmp/d1" "$C/order-done-flag" \
  2>"$tmp/a.err"; st=$?
[ "$st" = 134 ] && ok "order-done-flag: whole runs found the assertion (134)" ||
  { bad "order-done-flag: status $st, want 134"; tail -5 "$tmp/a.err"; }
[ "$(xget "$tmp/a.err" "d['snapshot'] and d['schedules_to_bug'] > 0 and d['reproduced']")" = True ] &&
  ok "snapshot at the first clone, bug at schedule $(xget "$tmp/a.err" "d['schedules_to_bug']") of $(xget "$tmp/a.err" "d['schedules']"), reproduced live" ||
  bad "explore summary: $(xjson "$tmp/a.err")"
d1=$(dump_of "$tmp/a.err")
if [ -n "$d1" ]; then
  n=0
  for i in 1 2 3 4 5; do
    "$VMM" replay "$d1" >/dev/null 2>"$tmp/r.err"
    [ $? = 134 ] && grep -q "replay reproduced the dump's crash" "$tmp/r.err" && n=$((n+1))
  done
  [ $n = 5 ] && ok "the dump replayed 5/5" || { bad "the dump replayed $n/5"; tail -3 "$tmp/r.err"; }
  grep -q "replaying whole run" "$tmp/r.err" && ok "replay names the whole run" ||
    bad "replay does not say it replays a whole run"
  "$CTL" inspect --disasm 0 "$d1" >"$tmp/i.out" 2>&1
  grep -q "^run: *whole run" "$tmp/i.out" && grep -q '^interleaving' "$tmp/i.out" &&
    ok "inspect shows the whole run and its interleaving" || bad "inspect: $(head -c 300 "$tmp/i.out")"
else
  bad "no dump written"
fi

# 2. Determinism: the same seed finds it at the same schedule with the same choices.
"$VMM" run --no-control --quiet --explore 20s --seed 7 "$C/order-done-flag" 2>"$tmp/s1.err"
"$VMM" run --no-control --quiet --explore 20s --seed 7 "$C/order-done-flag" 2>"$tmp/s2.err"
a=$(xget "$tmp/s1.err" "(d['schedules_to_bug'], d['note'])"); b=$(xget "$tmp/s2.err" "(d['schedules_to_bug'], d['note'])")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "seed 7 twice: the same schedule finds it ($a)" ||
  bad "seed 7 twice: '$a' vs '$b'"

# 2b. Load: a run's budget is CPU time (serialize.h, budget_cpu), so a seed finds its bug
# at the same schedule on a starved CPU as on an idle one. pre2-relay seed 5's bug run
# takes ~180 ms of CPU; sharing one CPU with a busy loop at nice 13 it gets ~5% of it,
# and with a 2 s wall budget that run was cut: 71 schedules, 15 cut, nothing found in 120 s.
cpu=$(( $(nproc) - 1 ))
if command -v taskset >/dev/null; then
  # (--no-stress-runs: stress runs take a share of the wall time, which a starved CPU
  # stretches; the controlled schedules are what this compares.)
  "$VMM" run --no-control --quiet --explore 60s --no-stress-runs --seed 5 "$C/pre2-relay" 2>"$tmp/l1.err"
  taskset -c "$cpu" sh -c 'while :; do :; done' & hog=$!
  taskset -c "$cpu" nice -n 13 "$VMM" run --no-control --quiet --explore 60s --no-stress-runs --seed 5 \
    "$C/pre2-relay" 2>"$tmp/l2.err"
  kill "$hog"; wait "$hog" 2>/dev/null
  a=$(xget "$tmp/l1.err" "(d['schedules_to_bug'], d['cut'], d['note'])")
  b=$(xget "$tmp/l2.err" "(d['schedules_to_bug'], d['cut'], d['note'])")
  [ -n "$a" ] && [ "$a" = "$b" ] && [ "$(xget "$tmp/l1.err" "d['schedules_to_bug'] > 0")" = True ] &&
    ok "seed 5 on a CPU shared with a busy loop: the same schedule finds it, none cut ($a)" ||
    bad "seed 5 idle '$a' vs starved '$b'"
else
  bad "taskset (util-linux) is needed"
fi

# 3. A deadlock (lock-order inversion): found and replayed.
"$VMM" run --no-control --quiet --explore 30s --dump-dir "$tmp/d3" images/bin/deadlock-abba \
  2>"$tmp/dl.err"; st=$?
d3=$(dump_of "$tmp/dl.err")
if [ "$st" = 123 ] && [ -n "$d3" ]; then
  "$VMM" replay "$d3" >/dev/null 2>"$tmp/dr.err"; rst=$?
  [ "$rst" = 123 ] && grep -q "replay reproduced the dump's outcome (deadlock" "$tmp/dr.err" &&
    ok "deadlock-abba: deadlock found at schedule $(xget "$tmp/dl.err" "d['schedules_to_bug']"), replayed" ||
    { bad "deadlock replay: status $rst"; tail -3 "$tmp/dr.err"; }
else
  bad "deadlock-abba: status $st, dump '$d3'"; tail -5 "$tmp/dl.err"
fi

# 3b. nest: a three-lock cycle within a few runs (pct/portfolio took 25-117 before it);
# the first run knows no lock words yet, the next ones preempt at nested locks.
"$VMM" run --no-control --quiet --seed 3 --explore 30s --explore-strategy nest \
  --dump-dir "$tmp/d3b" "$C/dl-cycle3" 2>"$tmp/nest.err"; st=$?
d3b=$(dump_of "$tmp/nest.err")
if [ "$st" = 123 ] && [ -n "$d3b" ] && [ "$(xget "$tmp/nest.err" "d['schedules_to_bug'] <= 8")" = True ]; then
  "$VMM" replay "$d3b" >/dev/null 2>"$tmp/nr.err"; rst=$?
  [ "$rst" = 123 ] && ok "dl-cycle3 --explore-strategy nest: deadlock at schedule $(xget "$tmp/nest.err" "d['schedules_to_bug']") ($(xget "$tmp/nest.err" "d['note']")), replayed" ||
    { bad "dl-cycle3 nest replay: status $rst"; tail -3 "$tmp/nr.err"; }
else
  bad "dl-cycle3 nest: status $st, $(xjson "$tmp/nest.err")"; tail -3 "$tmp/nest.err"
fi

# 3c. sweep in the portfolio: lw-flag's lost wakeup needs the waiter preempted right
# after its unlocked check of `ready` until the setter signalled: the sweep's first
# target (index 4) is that read, the setter's write waits for it (before: 25 9 25).
"$VMM" run --no-control --quiet --seed 1 --explore 30s --dump-dir "$tmp/d3c" "$C/lw-flag" \
  2>"$tmp/sw.err"; st=$?
d3c=$(dump_of "$tmp/sw.err")
if [ "$st" = 123 ] && [ -n "$d3c" ] &&
   [ "$(xget "$tmp/sw.err" "d['schedules_to_bug'] <= 5 and d['strategy'] == 'sweep'")" = True ]; then
  "$VMM" replay "$d3c" >/dev/null 2>"$tmp/swr.err"; rst=$?
  [ "$rst" = 123 ] && ok "lw-flag portfolio: lost wakeup at schedule $(xget "$tmp/sw.err" "d['schedules_to_bug']") ($(xget "$tmp/sw.err" "d['note']")), replayed" ||
    { bad "lw-flag sweep replay: status $rst"; tail -3 "$tmp/swr.err"; }
else
  bad "lw-flag portfolio: status $st, $(xjson "$tmp/sw.err")"; tail -3 "$tmp/sw.err"
fi

# 3d. wake: bb-if's woken consumer must be overtaken by a consumer that starts after the
# producer's put (the older half of the children last, the woken thread lowered): its
# second variant, every seed (the portfolio before it: 16 58 12 schedules); its twin,
# which waits with while, shows nothing under the same schedules.
"$VMM" run --no-control --quiet --seed 1 --explore 30s --explore-strategy wake \
  --dump-dir "$tmp/d3d" "$C/bb-if" 2>"$tmp/wk.err"; st=$?
d3d=$(dump_of "$tmp/wk.err")
if [ "$st" = 134 ] && [ -n "$d3d" ] && [ "$(xget "$tmp/wk.err" "d['schedules_to_bug'] <= 5")" = True ]; then
  "$VMM" replay "$d3d" >/dev/null 2>"$tmp/wkr.err"; rst=$?
  [ "$rst" = 134 ] && grep -q "replay reproduced the dump's crash: SIGABRT" "$tmp/wkr.err" && ok "bb-if --explore-strategy wake: abort at schedule $(xget "$tmp/wk.err" "d['schedules_to_bug']") ($(xget "$tmp/wk.err" "d['note']")), replayed" ||
    { bad "bb-if wake replay: status $rst"; tail -3 "$tmp/wkr.err"; }
else
  bad "bb-if wake: status $st, $(xjson "$tmp/wk.err")"; tail -3 "$tmp/wk.err"
fi
"$VMM" run --no-control --quiet --seed 1 --explore 3s --explore-runs 9 --explore-strategy wake \
  "$C/bb-if-ok" >/dev/null 2>"$tmp/wko.err"; st=$?
[ "$st" = 0 ] && [ "$(xget "$tmp/wko.err" "d['schedules'] >= 2 and d['schedules_to_bug'] == 0")" = True ] &&
  ok "bb-if-ok --explore-strategy wake: $(xget "$tmp/wko.err" "d['schedules']") schedules, nothing found" ||
  { bad "bb-if-ok wake: status $st, $(xjson "$tmp/wko.err")"; tail -3 "$tmp/wko.err"; }

# 3e. lanes (online.h): the sweep lane learns from its own runs only, so its schedule k
# is sweep alone's k: aba-stack seed 1, found by sweep alone at its schedule 2, is met at
# the lane's second slot (index 2: schedule 3), and its dump replays.
"$VMM" run --no-control --quiet --seed 1 --explore 30s --explore-strategy lanes --dump-dir "$tmp/d3e" \
  "$C/aba-stack" 2>"$tmp/ln.err"; st=$?
d3e=$(dump_of "$tmp/ln.err")
if [ -n "$d3e" ] &&
   [ "$(xget "$tmp/ln.err" "d['schedules_to_bug'] == 3 and d['strategy'] == 'sweep' and 'lane-index=1' in d['note']")" = True ]; then
  "$VMM" replay "$d3e" >/dev/null 2>"$tmp/lnr.err"; rst=$?
  [ "$rst" = "$st" ] && ok "aba-stack lanes: found at schedule 3 by the sweep lane's second run ($(xget "$tmp/ln.err" "d['note']")), replayed" ||
    { bad "aba-stack lanes replay: status $rst (run: $st)"; tail -3 "$tmp/lnr.err"; }
else
  bad "aba-stack lanes: status $st, $(xjson "$tmp/ln.err")"; tail -3 "$tmp/ln.err"
fi

# 4. A bug-free twin: many schedules, nothing reported.
"$VMM" run --no-control --quiet --explore 3s --explore-strategy random "$C/order-done-flag-ok" >/dev/null \
  2>"$tmp/ok.err"; st=$?
[ "$st" = 0 ] && [ "$(xget "$tmp/ok.err" "d['schedules'] >= 5 and d['schedules_to_bug'] == 0")" = True ] &&
  ok "order-done-flag-ok: $(xget "$tmp/ok.err" "d['schedules']") schedules in 3 s, nothing found, exit 0" ||
  { bad "twin: status $st, $(xjson "$tmp/ok.err")"; tail -3 "$tmp/ok.err"; }

# --replayable-only (what jinx test's search for a replayable dump runs): traced and
# sparse runs only, no stress run and no timed run (a timed run's decisions are found
# again by counting executions, which can outlast the replay: seqlock-plain's). On the
# long sparse twin, where both come without it.
SB="$BUILD/guest-tests/sparsebank_ok"
for ro in "" --replayable-only; do
  "$VMM" run --no-control --quiet --explore 4s $ro "$SB" >/dev/null 2>"$tmp/ro.err"; st=$?
  if [ -n "$ro" ]; then
    [ "$st" = 0 ] && [ "$(xget "$tmp/ro.err" "d['timed_runs'] == 0 and d['stress_runs'] == 0 and d['sparse_schedules'] > 0")" = True ] &&
      ok "--replayable-only: $(xget "$tmp/ro.err" "d['sparse_schedules']") sparse runs, no timed or stress run" ||
      { bad "--replayable-only: status $st, $(xjson "$tmp/ro.err")"; tail -3 "$tmp/ro.err"; }
  else
    [ "$st" = 0 ] && [ "$(xget "$tmp/ro.err" "d['timed_runs'] > 0 and d['stress_runs'] > 0")" = True ] &&
      ok "without it: $(xget "$tmp/ro.err" "d['timed_runs']") timed and $(xget "$tmp/ro.err" "d['stress_runs']") stress runs beside the sparse ones" ||
      { bad "sparsebank_ok without --replayable-only: status $st, $(xjson "$tmp/ro.err")"; tail -3 "$tmp/ro.err"; }
  fi
done
[ "$(xget "$tmp/ok.err" "d['timed_runs'] == 0")" = True ] &&
  ok "order-done-flag-ok's traced runs end and no timed run is made" ||
  bad "the twin made timed runs: $(xjson "$tmp/ok.err")"

# jinx test on it counts the whole-run schedules of runs that found nothing.
"$JINX" test --budget 4s --json "$C/order-done-flag-ok" >"$tmp/okj.json" 2>"$tmp/okj.err"; st=$?
n=$(python3 -c "import json; d=json.load(open('$tmp/okj.json')); print(d['schedules'] if not d['found'] else -1)" 2>/dev/null)
[ "$st" = 0 ] && [ "${n:-0}" -ge 5 ] && ok "jinx test on the twin: nothing found, $n whole-run schedules reported" ||
  { bad "jinx test on the twin: status $st, schedules '${n}'"; tail -3 "$tmp/okj.err"; }

# 5. No thread: nothing to explore, the program's own end.
"$VMM" run --no-control --quiet --explore 5s --env JINX_TEST=yes "$BUILD/guest-tests/syscalls" alpha beta >/dev/null 2>"$tmp/nt.err"; st=$?
[ "$st" = 0 ] && [ "$(xget "$tmp/nt.err" "d['snapshot']")" = False ] &&
  ok "a program that never clones: no snapshot, exit 0" || bad "no-thread program: status $st, $(xjson "$tmp/nt.err")"

# 5b. A test that reports failure by its exit status: a bug at the first whole run, dumped,
# and the dump replays to the same status.
"$VMM" run --no-control --quiet --explore 20s --dump-dir "$tmp/fx" "$BUILD/guest-tests/verdict" fail 3 \
  >/dev/null 2>"$tmp/fx.err"; st=$?
fx=$(ls "$tmp"/fx/*.jinxdump 2>/dev/null | head -1)
if [ "$st" = 3 ] && [ "$(xget "$tmp/fx.err" "d['schedules_to_bug'], d['reproduced']")" = "1 True" ] &&
   [ -n "$fx" ]; then
  "$VMM" replay "$fx" >/dev/null 2>"$tmp/fxr.err"; rst=$?
  [ "$rst" = 3 ] && grep -q "replay reproduced" "$tmp/fxr.err" &&
    ok "exit status 3 after two threads: a bug at whole run 1, dumped, replayed" ||
    { bad "exit-status bug replay: status $rst"; tail -3 "$tmp/fxr.err"; }
else
  bad "exit-status bug: status $st, dump '$fx', $(xjson "$tmp/fx.err")"; tail -3 "$tmp/fx.err"
fi

# 6. Too long for whole runs: rounds take over (--attach), the program ends well; the
# exploration keeps to its budget (a run stretched to 16 s of CPU time took 34 s of wall
# time on a loaded host where 8 s were left, serialize.h's wall_deadline), and a budget
# spent before any whole run ended counts as too long. Since traced runs hand over to
# sparse ones when a whole traced run would outlast a stretched budget (docs/sparse.md),
# a sparse whole run may instead end within the budget (on an idle host it does): then
# exploration goes on sparse, gives nothing up, and still keeps to its budget.
"$VMM" run --no-control --quiet --stats --explore 8s --attach 5/s images/bin/throughput 4 3000 256 \
  >/dev/null 2>"$tmp/long.err"; st=$?
if [ "$st" = 0 ] && [ "$(xget "$tmp/long.err" "d['gave_up'] and d['seconds'] < 11")" = True ] &&
   grep -q '^jinx-vmm: rounds: {.*"rounds":[1-9]' "$tmp/long.err"; then
  ok "throughput: too long for whole runs, rounds took over after $(xget "$tmp/long.err" "d['seconds']") s of an 8 s budget, exit 0"
elif [ "$st" = 0 ] &&
     [ "$(xget "$tmp/long.err" "not d['gave_up'] and d['sparse_schedules'] > d['sparse_cut'] and d['seconds'] < 11")" = True ]; then
  ok "throughput: too long for traced runs, $(xget "$tmp/long.err" "d['sparse_schedules'] - d['sparse_cut']") sparse whole runs ended within the 8 s budget ($(xget "$tmp/long.err" "d['seconds']") s), exit 0"
else
  bad "long program: status $st, $(xjson "$tmp/long.err")"; grep rounds "$tmp/long.err" | head -2
fi

# 7. jinx test: strategy and depth, options after IMAGE, JSON fields.
"$JINX" test "$C/order-init" --strategy pct --depth 2 --budget 30s --dump-dir "$tmp/jt" --json \
  >"$tmp/jt.json" 2>"$tmp/jt.err"; st=$?
r=$(python3 -c "import json; d=json.load(open('$tmp/jt.json')); print(d['found'], d['whole_run'], d['strategy'], d['replayable'], d['schedules_to_bug'] >= 1, d['schedules_per_second'] > 0)" 2>&1)
[ "$st" = 1 ] && [ "$r" = "True True pct True True True" ] &&
  ok "jinx test IMAGE --strategy pct --depth 2 --json: found by whole run $(python3 -c "import json; print(json.load(open('$tmp/jt.json'))['schedules_to_bug'])"), replayable" ||
  { bad "jinx test --strategy: status $st, $r"; head -5 "$tmp/jt.err"; }
grep -q "found by:  whole-run schedule" "$tmp/jt.err" && ok "the text report says which schedule found it" ||
  bad "text report lacks the schedule line"

# 8. A bug met in free execution (whole runs give up, and main computes for seconds
#    before its abort, longer than any round's serialized tail): before it is reported,
#    the next seeds look for it from snapshots; the report says how that went, and a
#    dump it calls replayable does replay. 45 s: main's private loop takes ~7 s alone on
#    this host and up to 25 s beside two jobs and a loaded host, after whole runs gave
#    up (25 s missed the crash itself twice under load, session 18). Seeds 1-4:
#    the search ends when they are spent (two more runs), not at the budget's end.
"$JINX" test --budget 45s --seeds 1-4 --dump-dir "$tmp/fc" "$BUILD/guest-tests/freecrash" --json >"$tmp/fc.json" \
  2>"$tmp/fc.err"; st=$?
r=$(python3 -c "import json; d=json.load(open('$tmp/fc.json')); print(d['found'], d['replay_search'], d['replayable'], d['whole_runs_too_long'])" 2>&1)
case "$r" in *found*)
  # The search's runs ran with --replayable-only: the last judged one's log (a search
  # run's) shows no stress run.
  grep -q '^jinx-vmm: explore: {.*"stress_runs":0,' "$tmp/fc/jinx-test-last.log" &&
    ok "freecrash: the search's runs made no stress run (--replayable-only)" ||
    bad "freecrash: a search run made stress runs: $(grep '^jinx-vmm: explore:' "$tmp/fc/jinx-test-last.log" | cut -c1-300)"
esac
case "$st $r" in
  "1 True not found False True")
    grep -q "^  replay: *met in free execution; the search from snapshots did not" "$tmp/fc.err" &&
      ok "freecrash: met in free execution, not met again from snapshots: reported as not replayable" ||
      bad "freecrash: the text report does not say the search failed" ;;
  "1 True found True True")
    d=$(python3 -c "import json; print(json.load(open('$tmp/fc.json'))['dump'])")
    "$VMM" replay "$d" >/dev/null 2>"$tmp/fcr.err"; rst=$?
    [ "$rst" = 134 ] && grep -q "^  replay: *first met in free execution" "$tmp/fc.err" &&
      ok "freecrash: met in free execution, met again from a snapshot: that dump replays" ||
      { bad "freecrash: search said found, replay status $rst"; tail -3 "$tmp/fcr.err"; } ;;
  "1 True None True True")
    # Rare: a round's serialized tail met the abort itself (its dump has round records),
    # so no search was needed; acceptable only if that dump really replays the abort.
    d=$(python3 -c "import json; print(json.load(open('$tmp/fc.json'))['dump'])")
    "$VMM" replay "$d" >/dev/null 2>"$tmp/fcr.err"; rst=$?
    [ "$rst" = 134 ] && ok "freecrash: met by a round (no search needed), that dump replays" ||
      { bad "freecrash: reported replayable without a search, replay status $rst"; tail -3 "$tmp/fcr.err"; tail -6 "$tmp/fc.err"; } ;;
  "1 True None True False")
    # A sparse whole run reached the abort (its probe may take 4 prefixes' CPU time, and
    # the workers' 800 000 increments cost a sparse run nothing): a schedule, no search;
    # acceptable only if that dump really replays the abort.
    d=$(python3 -c "import json; print(json.load(open('$tmp/fc.json'))['dump'])")
    "$VMM" replay "$d" >/dev/null 2>"$tmp/fcr.err"; rst=$?
    [ "$rst" = 134 ] && ok "freecrash: a sparse whole run met the abort (no search needed), that dump replays" ||
      { bad "freecrash: reported replayable from a schedule, replay status $rst"; tail -3 "$tmp/fcr.err"; } ;;
  *) bad "freecrash: status $st, $r (want a search after a free-execution crash)"; tail -4 "$tmp/fc.err" ;;
esac

# 9. Refusals.
for args in "--explore-strategy pct" "--explore 0" "--explore 5s --explore-strategy nope" \
            "--explore 5s --explore-depth 99" "--explore 5s --serial"; do
  # shellcheck disable=SC2086
  "$VMM" run --no-control $args "$C/order-init" >/dev/null 2>"$tmp/ref.err"; st=$?
  [ "$st" = 125 ] && ok "jinx-vmm run $args: refused ($(head -1 "$tmp/ref.err" | cut -c1-70))" ||
    bad "jinx-vmm run $args: status $st"
done
"$JINX" test --strategy nope "$C/order-init" >/dev/null 2>&1; st=$?
[ "$st" = 2 ] && ok "jinx test --strategy nope: refused (2)" || bad "jinx test --strategy nope: status $st"

summary "explore tests"
