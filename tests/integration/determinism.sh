#!/usr/bin/env bash
# Determinism at scale (issue 3): for every image, free-run a little, snapshot, then
# execute the same short serialized fragment (same schedule) 100 times from that
# snapshot: all 100 must end with the same cue-point trace and the same guest memory
# (jinx-vmm prints "simulations: N of N identical"). Images that end before the fragment
# have nothing to compare and are skipped, as in serial.sh. Then: different schedules
# on circle must give different interleavings, each one reproducible.
# Env: RUNS (default 100), RECORD (fragment length, default 200us = 200 cue points),
# IMAGE_DIR (where the builds are, default images/bin; images/bin/glibc for the glibc
# builds), IMAGES (names, default every images/*.manifest with a build in IMAGE_DIR;
# the schedule checks on circle run when IMAGE_DIR has a circle), DET_JOBS (images simulated
# at a time, default 2).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"
RUNS=${RUNS:-100}; RECORD=${RECORD:-200us}; IMAGE_DIR=${IMAGE_DIR:-images/bin}
IMAGES=${IMAGES:-$(for m in images/*.manifest; do n=$(basename "$m" .manifest); [ -x "$IMAGE_DIR/$n" ] && echo "$n"; done)}
mk_tmp
field() { sed -n "s/^$2: *//p" "$1" | head -1; }

sim() { # N RECORD ARGS...: simulate; a program that ends within 1 ms is tried again with
  # the snapshot taken at once (--after 0ms). A buggy program may also end in its first
  # simulation (a fragment that meets its bug ends the program): the free run to the
  # snapshot varies, so 1 ms is tried three times before 0 ms. (0 ms is the last resort:
  # before glibc's startup has run CPUID, the CPU numbers that native CPUID gives on a
  # PVM host make glibc's cpu_features differ between simulations.) Sets out, st.
  local n=$1 rec=$2 after; shift 2
  for after in 1ms 1ms 1ms 0ms; do
    out=$(timeout 170 "$VMM" run --after $after --record "$rec" --simulate "$n" "$@" 2>&1); st=$?
    echo "$out" | grep -q "simulation 1:" && return
  done
}

# check_image NAME: its RUNS simulations; prints "ok ..." or "FAIL ..." and the details.
check_image() {
  local name=$1 m="images/$1.manifest" args first
  args=$(field "$m" args)
  # shellcheck disable=SC2086
  sim "$RUNS" "$RECORD" "$IMAGE_DIR/$name" $args
  first=$(echo "$out" | sed -n 's/.*simulation 1: \([0-9]*\) cue points, trace \([0-9a-f]*\).*/\1 cue points, trace \2/p')
  if echo "$out" | grep -q "simulations: $RUNS of $RUNS identical"; then
    echo "ok   $name: $RUNS executions of one schedule from one snapshot identical ($first)"
  elif [ -z "$first" ] && [ $st -ne 124 ] && [ $st -ne 125 ]; then
    echo "ok   $name: program ended before the fragment (status $st; nothing to compare)"
  else
    echo "FAIL $name: status $st"; echo "$out" | grep -E "simulations:|status|error|differs|both after|wall guard" | tail -9
  fi
}
# DET_JOBS images at a time: the simulations run one vCPU at a time (a core each), and what is
# checked, identical results, must not depend on timing anyway.
JOBS=${DET_JOBS:-2}; k=0
for name in $IMAGES; do
  [ -x "$IMAGE_DIR/$name" ] || { bad "$name: no build $IMAGE_DIR/$name"; continue; }
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  k=$((k + 1)); check_image "$name" >"$tmp/img.$k" 2>&1 &
done
wait
for i in $(seq 1 $k); do
  cat "$tmp/img.$i"
  pass=$((pass + $(grep -c '^ok   ' "$tmp/img.$i"))); fail=$((fail + $(grep -c '^FAIL ' "$tmp/img.$i")))
done

if [ ! -x "$IMAGE_DIR/circle" ]; then
  summary "determinism tests ($IMAGE_DIR)"; exit
fi
CIRCLE="$IMAGE_DIR/circle"
# Different schedules, different interleavings. From one snapshot of circle: the
# round-robin default, the `continue` default and an explicit schedule (threads 3 and 2
# first if they exist, then turns of 7 cue points) must give three different traces,
# each one identical 10 times.
printf 'T3 x30\nT2 x30\ndefault roundrobin 7\n' >"$tmp/s3.txt"
declare -A seen=()
for how in "--policy roundrobin" "--policy continue" "--schedule $tmp/s3.txt"; do
  # shellcheck disable=SC2086
  sim 10 300us $how "$CIRCLE" 400 # 400 calls: 1 ms in, circle is mid-run (with 12 it may be ending)
  th=$(echo "$out" | sed -n 's/.*simulation 1: .* trace \([0-9a-f]*\),.*/\1/p')
  if echo "$out" | grep -q "simulations: 10 of 10 identical" && [ -n "$th" ]; then
    seen[$th]=1; ok "circle ${how%% $tmp*}: trace $th, 10 of 10 identical"
  else bad "circle $how: $(echo "$out" | grep -E "simulations:|status" | tail -2)"; fi
done
if [ "${#seen[@]}" = 3 ]; then ok "circle: three schedules from one snapshot, three different traces"
else bad "circle: only ${#seen[@]} distinct traces from three schedules"; fi
# The same from the start of the program, comparing the printed traces themselves: main
# runs until it has created both threads (its cue points before anyone else's under the
# `continue` policy: 6 with musl, more with glibc), then T3 or T2 goes first.
"$VMM" run --serial --policy continue --trace "$tmp/cont" "$CIRCLE" >/dev/null 2>&1
n1=$(awk '$2 != "T1" {exit} {n++} END {print n + 0}' "$tmp/cont")
printf 'T1 x%d\nT3 x40\ndefault roundrobin\n' "$n1" >"$tmp/a.txt"
printf 'T1 x%d\nT2 x40\ndefault roundrobin\n' "$n1" >"$tmp/b.txt"
for s in a b; do for i in 1 2; do
  "$VMM" run --serial --schedule "$tmp/$s.txt" --trace "$tmp/t.$s.$i" "$CIRCLE" >/dev/null 2>&1
done; done
if [ -s "$tmp/t.a.1" ] && cmp -s "$tmp/t.a.1" "$tmp/t.a.2" && cmp -s "$tmp/t.b.1" "$tmp/t.b.2" && ! cmp -s "$tmp/t.a.1" "$tmp/t.b.1"; then
  ok "circle from the start: two schedules, two different traces, each reproduced exactly (first difference at event $(cmp "$tmp/t.a.1" "$tmp/t.b.1" | sed -n 's/.*line \([0-9]*\).*/\1/p'))"
else bad "circle from the start: schedule traces not as expected"; fi

summary "determinism tests ($IMAGE_DIR)"
