#!/usr/bin/env bash
# Sparse schedules (vmm/sched/sparse.h, explorer/sparse.h, rounds/explore_sparse.h) on
# tests/guest/sparsebank.c: two tellers bump a hot statistics counter between operations
# (~80 000 shared accesses a run) and withdraw with an unlocked check-then-act; its twin
# sparsebank_ok holds a mutex. Checks:
#  1. a hand-written sparse schedule stops teller T2 before its N-th execution of the
#     withdrawal's second load (found in the binary): N = 21..40 (the account drained by
#     the other teller meanwhile) crashes, N = 20 and 41 do not, each the same cue-point
#     count every time, and no memory cue point at all;
#  2. `jinx test` finds the bug by a sparse run (strategy "sparse"), the traced runs being
#     cut, and its dump replays the crash (jinx-vmm replay, twice);
#  3. the twin: no bug reported in BUDGET_OK, and sparse runs did run (sparse_schedules)
#     with change points that fired (decisions_per_sparse_schedule);
#  4. how they start (explore_sparse.h, explore_stress.h), on the twin: the first traced
#     run is a learning prefix stopped at 5000 cue points, a stress run follows it at once
#     (not after 5 s), then the probe (no point), the deciding prefix, and sparse runs;
#  5. a spin-yield barrier (images/corpus-compute/phase-stencil-ok, when built): its
#     sparse runs end, hundreds of sched_yield cue points each (every yield hands over).
#  6. sampled sparse runs (sched/crew_sample.h): matmul-reduce, whose racy total no traced
#     prefix reaches, found by a sparse run after sampled ones; its dump replays;
#  7. chained points (a point that counts from another's firing): a hand-written schedule
#     on wsq-last crashes with the chain, not without it, the same way twice; and its
#     serialized trace flags the accesses near a thread's own stack pointer ('stack').
# Env: BUDGET (default 120 s), BUDGET_OK (default 20 s), BUDGET_START (default 90 s, a
# bound: checks 4 and 5 stop after 5 and 6 runs, ~2 s of CPU each), BUDGET_MM (30 s).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; JT="$BIN/jinx"
PROG="$BUILD/guest-tests/sparsebank"; TWIN="$BUILD/guest-tests/sparsebank_ok"
BUDGET=${BUDGET:-120}; BUDGET_OK=${BUDGET_OK:-20}; BUDGET_MM=${BUDGET_MM:-30}
for p in "$PROG" "$TWIN"; do [ -x "$p" ] || { echo "FAIL $p not built (make guest-tests)"; exit 1; }; done
mk_tmp

# The withdrawal's second load: the instruction after the check's `cmp $0x9` and `jle`.
site=$(objdump -d --no-show-raw-insn "$PROG" | awk '/<teller>:/,/^$/' |
       awk '/cmp +\$0x9,/ {getline; getline; print $1; exit}' | tr -d ':')
if [ -z "$site" ]; then
  bad "cannot find the withdrawal's second load in teller (objdump)"
else
  for n in 20 21 30 40 41; do
    printf 'sparse\npreempt T2 0x%s x%s\ndefault roundrobin\n' "$site" "$n" > "$tmp/s.sched"
    want=0; [ "$n" -ge 21 ] && [ "$n" -le 40 ] && want=134
    cues=""; same=1
    for rep in 1 2 3; do
      out=$(timeout 60 "$VMM" run --no-control --serial --schedule "$tmp/s.sched" "$PROG" 2>&1); st=$?
      c=$(echo "$out" | sed -n 's/.*serial: \([0-9]*\) cue points (0 memory accesses.*/\1/p')
      [ "$st" = "$want" ] && [ -n "$c" ] || same=0
      [ -z "$cues" ] && cues=$c
      [ "$c" = "$cues" ] || same=0
    done
    if [ $same = 1 ]; then
      ok "point T2 0x$site x$n: status $want three times, $cues cue points each, none from memory"
    else
      bad "point T2 0x$site x$n: wanted status $want and one cue-point count; last status $st"
      echo "$out" | tail -4
    fi
  done
fi

# jinx test: the traced runs are cut (each shared access a cue point), sparse runs find it.
out=$(timeout $((BUDGET + 60)) "$JT" test --budget "${BUDGET}s" --json --dump-dir "$tmp/d" "$PROG" 2>"$tmp/jt.err"); st=$?
eval "$(echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("found=%s strat=%s sparse=%s dump=%s sps=%s to_bug=%s" % (str(d["found"]).lower(),
      d.get("strategy", ""), d.get("sparse_schedules", 0), d.get("dump", ""),
      d.get("schedules_per_second", 0), d.get("schedules_to_bug", 0)))' 2>/dev/null || echo found=none)"
if [ $st = 1 ] && [ "$found" = true ] && [ "$strat" = sparse ] && [ "${sparse:-0}" -gt 0 ]; then
  ok "jinx test: found by a sparse run (schedule $to_bug, $sparse sparse, $sps schedules/s)"
else
  bad "jinx test: status $st, found=$found strategy=${strat:-} sparse=${sparse:-}"
  tail -5 "$tmp/jt.err"
fi
if [ -n "${dump:-}" ] && [ -f "$dump" ]; then
  r=0
  for rep in 1 2; do
    timeout 120 "$VMM" replay "$dump" > "$tmp/rp.out" 2>&1
    grep -q "replay reproduced the dump's crash: SIGABRT" "$tmp/rp.out" && r=$((r+1))
  done
  if [ $r = 2 ]; then ok "its dump replays the crash, 2 of 2"
  else bad "its dump replayed $r of 2"; tail -3 "$tmp/rp.out"; fi
else
  bad "no dump to replay"
fi

# The twin: nothing found, and the sparse runs did run.
out=$(timeout $((BUDGET_OK + 60)) "$JT" test --budget "${BUDGET_OK}s" --json "$TWIN" 2>"$tmp/ok.err"); st=$?
found=$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(str(d["found"]).lower(), d.get("decisions_per_sparse_schedule",0) > 0, d.get("sparse_schedules",0))' 2>/dev/null)
if [ $st = 0 ] && [ "${found%% *}" = false ] && [ "${found##* }" -gt 0 ] && [[ "$found" == *" True "* ]]; then
  ok "twin: nothing found in ${BUDGET_OK} s (${found##* } sparse schedules, change points fired)"
else
  bad "twin: status $st, found/sparse: ${found:-none}"
  tail -5 "$tmp/ok.err"
fi

# How sparse and stress runs start, on the twin (it never ends in a bug).
BUDGET_START=${BUDGET_START:-90} # a bound: it stops after 5 runs (~2 s of CPU)
timeout $((BUDGET_START + 60)) "$VMM" run --no-control --quiet --explore "${BUDGET_START}s" --seed 1 \
  --explore-runs 5 --verbose-explore "$TWIN" >/dev/null 2>"$tmp/start.err"
runs=$(grep -E '^jinx-vmm: explore: (run [0-9]+|stress run [0-9]+)' "$tmp/start.err")
order=$(echo "$runs" | sed -E 's/^jinx-vmm: explore: stress run [0-9]+.*/S/;
  s/^jinx-vmm: explore: run [0-9]+: learning prefix, cut at its cue-point cap, 5000 cue points.*/P/;
  s/^jinx-vmm: explore: run [0-9]+ \(sparse\): normal.*\(sparse probe .*/B/;
  s/^jinx-vmm: explore: run [0-9]+ \(sparse\): .*/X/; s/^jinx-vmm: explore: run [0-9]+: .*/T/' |
  tr -d '\n' | tr -s S | sed 's/X.*/X/')  # stress runs catch up on their share at once
case "$order" in
  PSBPX|PSBPSX|PSBSPX|PSBSPSX)
    ok "start: learning prefix of 5000 cue points, a stress run at once, the probe, the deciding prefix, sparse runs ($order)" ;;
  *) bad "start: wanted prefix, stress run, probe, prefix, ... sparse runs; got '$order'"
     echo "$runs" | cut -c1-160 ;;
esac

# A spin-yield barrier: every sched_yield hands over, so its sparse runs end.
PS=images/bin/corpus-compute/phase-stencil-ok
if [ -x "$PS" ]; then
  timeout $((BUDGET_START + 60)) "$VMM" run --no-control --quiet --explore "${BUDGET_START}s" --explore-runs 6 --seed 1 --no-stress-runs \
    --verbose-explore "$PS" >/dev/null 2>"$tmp/ps.err"
  n=$(grep -cE '^jinx-vmm: explore: run [0-9]+ \(sparse\): normal, [0-9]{3,} cue points' "$tmp/ps.err")
  c=$(grep -cE '^jinx-vmm: explore: run [0-9]+ \(sparse\): cut' "$tmp/ps.err")
  if [ "$n" -ge 3 ] && [ "$c" = 0 ]; then
    ok "spin-yield barrier: $n sparse runs ended (hundreds of yields each), none cut"
  else
    bad "spin-yield barrier: $n sparse runs ended, $c cut"
    grep -E 'explore: run [0-9]+' "$tmp/ps.err" | head -5 | cut -c1-160
  fi
else
  echo "skip spin-yield barrier: no $PS (make corpus-compute)"
fi

# Sampled sparse runs (sched/crew_sample.h): matmul-reduce's workers add each row's sum
# to a total after computing it, far past the 5000-cue-point prefix, so no traced run
# shows the total; sampled runs do (a fault per page and turn, and per 20 ms), and the
# next sparse runs preempt a worker between its read and its write of the total. Traced
# and sparse runs alone (no stress or timed run): without sampling, 320 sparse runs in
# 20 s found nothing; with it, seeds 1-3 found it in 4-6 s.
MM=images/bin/corpus-compute/matmul-reduce
if [ -x "$MM" ]; then
  mkdir -p "$tmp/mm"
  timeout $((BUDGET_MM + 60)) "$VMM" run --no-control --quiet --explore "${BUDGET_MM}s" --seed 1 --no-stress-runs \
    --dump-dir "$tmp/mm" "$MM" >/dev/null 2>"$tmp/mm.err"; st=$?
  r=$(xjson "$tmp/mm.err" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['strategy'], d['sampled_runs'] > 0, d['reproduced'], d['schedules_to_bug'])" 2>&1)
  d=$(sed -n 's/.*dump written to \(.*\.jinxdump\).*/\1/p' "$tmp/mm.err" | tail -1)
  case "$st $r" in
    "134 sparse True True "*)
      "$VMM" replay "$d" >/dev/null 2>"$tmp/mmr.err"; rst=$?
      [ "$rst" = 134 ] && grep -q "replay reproduced" "$tmp/mmr.err" &&
        ok "matmul-reduce: sampled sparse runs learnt the total, a sparse run found the lost update (schedule ${r##* }), its dump replays" ||
        { bad "matmul-reduce: the dump did not replay (status $rst)"; tail -3 "$tmp/mmr.err"; } ;;
    *) bad "matmul-reduce: status $st, $r (wanted a sparse find after sampled runs)"; xjson "$tmp/mm.err" | cut -c1-400 ;;
  esac
else
  echo "skip sampled runs: no $MM (make corpus-compute)"
fi

# Chained points (explorer/schedule.h): wsq-last's owner stopped before publishing its
# 6th task (the 2nd of its 2nd round), a thief stopped before its CAS of top with that
# task in view, and a point chained to the thief's: the owner's next store of top, where
# it takes the last task without a CAS. The thief's CAS then wins and both run task 4.
# Without "after 2" the same point is the owner's first store of top (its 1st round),
# before the thief ever stopped: no bug. Each twice, the same cue points each time.
WSQ=images/bin/corpus-compute/wsq-last
if [ -x "$WSQ" ]; then
  dis=$(objdump -d --no-show-raw-insn "$WSQ")
  pub=$(echo "$dis" | awk '/<owner>:/,/^$/' | awk '/xchg +%rax,.*<bottom>/ {print $1; exit}' | tr -d ':')
  cas=$(echo "$dis" | awk '/<thief>:/,/^$/' | awk '/lock cmpxchg/ {print $1; exit}' | tr -d ':')
  sto=$(echo "$dis" | awk '/<owner>:/,/^$/' | awk '/xchg +%rax,.*<top>/ {print $1; exit}' | tr -d ':')
  if [ -z "$pub" ] || [ -z "$cas" ] || [ -z "$sto" ]; then
    bad "chained points: cannot find wsq-last's publish, CAS and store of top (objdump)"
  else
    for chain in " after 2" ""; do
      printf 'sparse\npreempt T2 0x%s x6\npreempt T3 0x%s x1\npreempt T0 0x%s x1%s\nT1 x4\nT2\nT3\nT2\nT3\nT2\n' \
        "$pub" "$cas" "$sto" "$chain" > "$tmp/ch.sched"
      want=0; [ -n "$chain" ] && want=134
      res=""
      for rep in 1 2; do
        out=$(timeout 60 "$VMM" run --no-control --serial --schedule "$tmp/ch.sched" "$WSQ" 2>&1); st=$?
        c=$(echo "$out" | sed -n 's/.*serial: \([0-9]*\) cue points (0 memory accesses.*/\1/p')
        twice=$(echo "$out" | grep -c "task 4 run twice")
        res+="$st/$c/$twice "
      done
      set -- $res
      if [ "$1" = "$2" ] && [ "${1%%/*}" = "$want" ] && { [ "$want" = 0 ] || [ "${1##*/}" = 1 ]; }; then
        ok "chained points: 'preempt T0 0x$sto x1${chain:- (not chained)}': status $want twice ($(echo "$1" | cut -d/ -f2) cue points)"
      else
        bad "chained points: 'preempt T0 0x$sto x1$chain': wanted status $want the same twice, got $res"
        echo "$out" | tail -3
      fi
    done
  fi
  # Accesses near the thread's own stack pointer are flagged (EX_F_STACK: the trace's
  # "stack"), so that sparse learning does not guess a thread's frames racy: _start's
  # call pushes on main's stack, __init_libc's store goes to a global.
  timeout 60 "$VMM" run --no-control --serial --trace "$tmp/wsq.trace" "$WSQ" >/dev/null 2>&1
  if grep -Eq ' W 0x[0-9a-f]+/8 stack .*_start\+.*; call ' "$tmp/wsq.trace" &&
     grep -E '__init_libc\+' "$tmp/wsq.trace" | grep -q ' W ' &&
     ! grep -E '__init_libc\+' "$tmp/wsq.trace" | grep -q ' stack '; then
    ok "stack accesses: _start's call flagged 'stack' in the trace, __init_libc's global stores not ($(grep -c ' stack ' "$tmp/wsq.trace") of $(wc -l < "$tmp/wsq.trace") cue points)"
  else
    bad "stack accesses: wanted _start's call flagged 'stack' and __init_libc's stores not"
    head -3 "$tmp/wsq.trace"
  fi
else
  echo "skip chained points: no $WSQ (make corpus-compute)"
fi

summary "sparse tests"
