#!/usr/bin/env bash
# Sanitizer builds under jinx (issue 27, docs/sanitizers.md):
#  - ASan (dynamic and -static-libasan) and UBSan (-fno-sanitize-recover) builds run
#    unmodified under `jinx-vmm run` and `--serial` with the same stderr (pid and
#    addresses masked; /usr/lib/debug granted, as the native symbolizer reads it) and the
#    same exit status as natively; a clean ASan build exits 0 (LeakSanitizer kept off).
#  - Their reports are bugs: `jinx test` finds the racy use-after-free, double free
#    (ASan) and signed overflow (UBSan) with the report's tool and kind in its summary
#    and --json; the dump replays to the same report; jinxctl inspect (text, --json,
#    --html) shows it. The bug-free twins: nothing found.
#  - A sanitizer failing for jinx's reasons (guest memory) is "could not test" (exit 2).
#  - TSan (gcc's, PIE): a clean build runs as natively; the race that needs a schedule
#    (san_race: the worker's racy write happens only when it takes the lock before main)
#    is found with report tsan data-race, its dump replays to it, its twin is clean.
#    clang's TSan build too with JINX_LONG=1.
#  - MSan (clang's): its report and a clean run as natively, free and --serial
#    (MSAN_OPTIONS=symbolize=0 on both sides: clang's runtimes symbolize with an external
#    llvm-symbolizer process, which a guest cannot start); the uninitialized read that
#    needs a schedule (san_uninit) is found, its dump replays, its twin is clean.
#  - LeakSanitizer: jinx-vmm and jinx test say that it is off.
#  - A deadlock in a TSan build (gcc's and clang's) is a deadlock, status 123: TSan's
#    background thread, which sleeps and wakes forever, is not the program's.
#  - One corpus twin built as ASan, UBSan and TSan: the same output and status as
#    natively (scripts/bench/san-corpus.sh runs the whole corpus); clang's MSan runtime,
#    linked into the program, is skipped as change points (linux/santext.c).
# JINX_LONG=1 (make check-long): seeds 1..10 for each bug (make test: seed 1, and not the
# double free, the slowest to find), 5 replays of each dump, 20 s for each twin.
# Guest programs: tests/guest/san_*.c (guest.mk). Without /dev/kvm this fails.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; CTL="$BIN/jinxctl"; JINX="$BIN/jinx"; G="$BUILD/guest-tests"
LONG=${JINX_LONG:-0}
SEEDS=${SEEDS:-$([ "$LONG" = 1 ] && echo 10 || echo 1)}
REPLAYS=${REPLAYS:-$([ "$LONG" = 1 ] && echo 5 || echo 1)}
BUDGET=${BUDGET:-60s}
TWIN_BUDGET=${TWIN_BUDGET:-$([ "$LONG" = 1 ] && echo 20s || echo 4s)}
for p in san_direct_asan san_direct_asan_static san_direct_ubsan san_uaf_asan san_uaf_asan_ok \
         san_dfree_asan san_dfree_asan_ok san_overflow_ubsan san_overflow_ubsan_ok \
         san_race_tsan san_race_tsan_ok san_race_tsan_clang san_race_tsan_clang_ok san_direct_msan \
         san_uninit_msan san_uninit_msan_ok san_hang_tsan san_hang_tsan_clang; do
  [ -x "$G/$p" ] || { echo "FAIL no $G/$p (make guest-tests)"; exit 1; }
done
need_python
mk_tmp
ERR_TAIL=8
# The program's stderr as a native run prints it: jinx-vmm's lines out, pids and
# addresses masked (ASLR natively, jinx's fixed layout in the guest).
norm() { grep -v '^jinx-vmm' "$1" | sed -E 's/==[0-9]+==/==P==/g; s/0x[0-9a-f]+/ADDR/g'; }
DEBUG_DIR=(); [ -d /usr/lib/debug ] && DEBUG_DIR=(--ro-dir /usr/lib/debug)

# 1. The same output and status as natively, free and serialized.
# MODES (default "run serial"), ENV (K=V for both sides) may be set for one call.
same() {
  local prog=$1 arg=$2 env=() genv=()
  [ -n "${ENV:-}" ] && { env=("$ENV"); genv=(--env "$ENV"); }
  env "${env[@]}" "$G/$prog" "$arg" >"$tmp/n.out" 2>"$tmp/n.err"; local nst=$?
  for mode in ${MODES:-run serial}; do
    local extra=(); [ "$mode" = serial ] && extra=(--serial)
    timeout 120 "$VMM" run --quiet --no-control "${extra[@]}" "${genv[@]}" "${DEBUG_DIR[@]}" "$G/$prog" "$arg" \
      >"$tmp/j.out" 2>"$tmp/err"; local st=$?
    if [ "$st" = "$nst" ] && cmp -s "$tmp/n.out" "$tmp/j.out" &&
       diff <(norm "$tmp/n.err") <(norm "$tmp/err") >"$tmp/diff"; then
      ok "$prog $arg ($mode): status $st and output as native"
    else
      cp "$tmp/diff" "$tmp/err" 2>/dev/null
      bad "$prog $arg ($mode): status $st (native $nst) or output differs"
    fi
  done
}
same san_direct_asan uaf
same san_direct_asan dfree
same san_direct_asan clean
same san_direct_asan_static uaf
same san_direct_ubsan overflow
same san_direct_ubsan clean
same san_uaf_asan_ok -
# TSan from boot under --serial takes 40 s (its runtime's start-up on pages the threads
# share, docs/sanitizers.md): free execution only.
MODES=run same san_race_tsan_ok -
ENV=MSAN_OPTIONS=symbolize=0 same san_direct_msan uninit
ENV=MSAN_OPTIONS=symbolize=0 same san_direct_msan clean

# A deadlock in a TSan build is a deadlock (123), as without TSan, though TSan's own
# background thread wakes every 100 ms all the program's life (natively: a hang).
for p in san_hang_tsan san_hang_tsan_clang; do
  timeout 120 "$VMM" run --no-control "$G/$p" >/dev/null 2>"$tmp/err"; st=$?
  if [ "$st" = 123 ] && grep -q "the sanitizer runtime's own thread only wakes from its sleeps" "$tmp/err"; then
    ok "$p: deadlock (123), TSan's sleeping thread aside"
  else bad "$p: status $st, wanted 123 (a deadlock)"; fi
done

# LeakSanitizer is off, and said so.
timeout 60 "$VMM" run --no-control "$G/san_direct_asan" clean >/dev/null 2>"$tmp/err"
if grep -q "^jinx-vmm: LeakSanitizer off (detect_leaks=0 added to ASAN_OPTIONS)" "$tmp/err"; then
  ok "jinx-vmm says LeakSanitizer is off"
else bad "jinx-vmm does not say that LeakSanitizer is off"; fi

# The guest's memory: a sanitizer's reservations are backed at first touch (demand_pages).
timeout 60 "$VMM" run --quiet --no-control --report "$tmp/r.json" "$G/san_direct_asan" clean \
  >/dev/null 2>"$tmp/err"
dp=$(jget "$tmp/r.json" "d['stats']['demand_pages']")
if [ -n "$dp" ] && [ "$dp" -gt 0 ] && [ "$dp" -lt 16384 ]; then
  ok "ASan's shadow is demand-paged: $dp pages touched (of terabytes reserved)"
else bad "demand_pages: '$dp'"; fi

# jinx's limit, not the program's: ASan cannot start in 24M of guest RAM (its mmap gets ENOMEM).
timeout 60 "$JINX" test --budget 10s --mem 24M --json "$G/san_uaf_asan" >"$tmp/j.json" 2>"$tmp/err"
st=$?
if [ "$st" = 2 ] && [ "$(jget "$tmp/j.json" "d['could_not_test']")" = True ]; then
  ok "ASan in --mem 24M: could not test ($(jget "$tmp/j.json" "d['reason']" | cut -c1-70)...)"
else bad "ASan in --mem 24M: status $st, wanted 2 (could not test)"; fi

# The corpus's sanitizer builds (scripts/bench/san-corpus.sh, all 86 programs there): one
# bug-free twin as ASan, UBSan and TSan, natively and under jinx-vmm run, the same
# output and status.
RESULTS="$tmp" BUILD="$BUILD" BIN="$BIN" timeout 300 scripts/bench/san-corpus.sh --runs 1 \
  --variants "asan ubsan tsan" order-init-ok >"$tmp/sc" 2>"$tmp/err"
for v in asan ubsan tsan; do
  if grep -qE "^$v +1 programs: +1 same" "$tmp/sc"; then ok "corpus order-init-ok as $v: same output and status as natively"
  else cat "$tmp/sc" >>"$tmp/err"; bad "corpus order-init-ok as $v: $(grep -E "^$v " "$tmp/sc" | head -1)"; fi
done

# A runtime linked into the program (clang's MSan) is found by its symbols: sparse points
# skip it, and the C library with it (linux/santext.c).
timeout 120 "$VMM" run --no-control --explore 2s --explore-runs 1 --verbose-explore \
  "$G/san_uninit_msan_ok" >/dev/null 2>"$tmp/err"
if grep -qE "sparse points skip [0-9]+ code ranges: 0 of shared sanitizer runtimes, [1-9][0-9]* of a runtime linked into the program, [1-9]" "$tmp/err"; then
  ok "clang's MSan runtime inside the program: skipped as change points ($(grep -o 'skip [0-9]* code ranges' "$tmp/err"))"
else bad "clang's MSan runtime inside the program is not skipped"; fi

# 2. Reports are bugs: jinx test finds each racy program, names the report, and its dump
# replays to the same report.
find_bug() {
  local prog=$1 tool=$2 kind=$3
  for seed in $(seq 1 "$SEEDS"); do
    local dir="$tmp/dumps-$prog-$seed" t0=$SECONDS
    timeout 200 "$JINX" test --budget "$BUDGET" --seeds "$seed-$((seed + 1000))" --dump-dir "$dir" \
      --json "$G/$prog" >"$tmp/j.json" 2>"$tmp/err"; local st=$?
    local got; got=$(jget "$tmp/j.json" "d['report']['tool'] + ' ' + d['report']['kind']")
    local dump; dump=$(jget "$tmp/j.json" "d['dump']")
    local leak; leak=$(jget "$tmp/j.json" "d['leak_check']")
    if [ "$seed" = 1 ] && { [ "$tool" = asan ] && [ "$leak" != off ] || [ "$tool" != asan ] && [ "$leak" != none ]; }; then
      bad "$prog: --json leak_check '$leak' (ASan: off, else none)"
    fi
    if [ "$st" = 1 ] && [ "$got" = "$tool $kind" ] && [ -f "$dump" ]; then
      ok "$prog seed $seed: BUG FOUND, report $got ($((SECONDS - t0)) s, $(jget "$tmp/j.json" "d['seconds']") s to bug)"
    else
      cat "$tmp/j.json" >>"$tmp/err"; bad "$prog seed $seed: status $st, report '$got', dump '$dump'"
      continue
    fi
    local good=0
    for _ in $(seq 1 "$REPLAYS"); do
      timeout 120 "$VMM" replay "$dump" >/dev/null 2>"$tmp/err"
      grep -q "replay printed the dump's sanitizer report: $tool $kind" "$tmp/err" &&
        grep -q "replay reproduced the dump's outcome" "$tmp/err" && good=$((good + 1))
    done
    if [ "$good" = "$REPLAYS" ]; then ok "$prog seed $seed: the dump replays to $tool $kind ($good/$REPLAYS)"
    else bad "$prog seed $seed: $good/$REPLAYS replays reproduced the report"; fi
    if [ "$seed" = 1 ]; then
      "$CTL" inspect "$dump" >"$tmp/ins" 2>"$tmp/err"
      "$CTL" inspect --json "$dump" >"$tmp/ins.json" 2>>"$tmp/err"
      "$CTL" inspect --html "$tmp/p.html" "$dump" >/dev/null 2>>"$tmp/err"
      if grep -q "^report:  $tool $kind" "$tmp/ins" &&
         [ "$(jget "$tmp/ins.json" "d['outcome']['report']['kind']")" = "$kind" ] &&
         grep -q "<th>report</th><td>$tool $kind" "$tmp/p.html"; then
        ok "$prog: jinxctl inspect, --json and --html show the report"
      else bad "$prog: inspect does not show the report"; fi
    fi
  done
}
find_bug san_uaf_asan asan heap-use-after-free
# san_dfree takes 20-45 s to find on a shared 2-core host: make check-long's (or DFREE=1).
if [ "$LONG" = 1 ] || [ "${DFREE:-0}" = 1 ]; then find_bug san_dfree_asan asan double-free; fi
find_bug san_overflow_ubsan ubsan signed-integer-overflow
find_bug san_race_tsan tsan data-race
# MSan's uninitialized read that needs a schedule (san_uninit.c: its branch must stay a
# branch; a select carried the shadow on unchecked and the first version never failed).
find_bug san_uninit_msan msan use-of-uninitialized-value
TWINS="san_uaf_asan_ok san_dfree_asan_ok san_overflow_ubsan_ok san_race_tsan_ok san_uninit_msan_ok"
if [ "$LONG" = 1 ]; then
  find_bug san_race_tsan_clang tsan data-race
  TWINS="$TWINS san_race_tsan_clang_ok"
fi

# The bug-free twins: nothing found. Side by side (each --jobs 1; lib.sh's bg_start): a
# false bug is false at any speed, and a budget is a bound on the wall time anyway.
for twin in $TWINS; do
  bg_start "$twin" -- timeout 120 "$JINX" test --budget "$TWIN_BUDGET" --jobs 1 --dump-dir "$tmp/twin-$twin" "$G/$twin"
done
# judge_twin TWIN: jinx test's verdict is its stdout's last line: after its stderr in what
# bad shows.
judge_twin() {
  cat "$bg_err" "$bg_out" >"$tmp/err"
  if [ "$bg_st" = 0 ]; then ok "$1: nothing found in $TWIN_BUDGET"
  else bad "$1: status $bg_st, wanted 0"; fi
}
bg_judge judge_twin

summary "sanitizers"
