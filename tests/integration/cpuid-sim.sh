#!/usr/bin/env bash
# CPUID must not depend on the host CPU a vCPU's thread happens to run on. On PVM without
# CPUID faulting a native CPUID shows the host CPU's APIC id (leaf 1 EBX[31:24], leaf 0xB
# EDX): executions of one schedule from one snapshot then differed whenever the fragment
# ran a CPUID (glibc's startup when the snapshot came early on a loaded host: cxx-race 14
# of 100 identical, the differing page glibc's cpu_features). jinx answers CPUID itself
# (docs/cpu-models.md). tests/guest/cpuidsim.c runs CPUID in two threads and lets the
# answer pick the shared slot it writes. Checks:
#  1. the same program with jinx-vmm pinned to each host CPU in turn (taskset) sees the
#     same CPU ids (deterministic: no luck needed to catch a native CPUID);
#  2. from a snapshot taken at once (--after 0ms, so the fragment runs CPUID), RUNS
#     executions of one schedule are identical, three times; a difference is printed
#     with its first differing cue point (jinx-vmm's "differs from the first" lines).
# Env: RUNS (default 40).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; PROG="$BUILD/guest-tests/cpuidsim"
RUNS=${RUNS:-40}
[ -x "$PROG" ] || { echo "FAIL $PROG not built (make guest-tests)"; exit 1; }

ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then
  ids=""
  for c in 0 $((ncpu - 1)); do
    out=$(taskset -c "$c" timeout 60 "$VMM" run --no-control --quiet "$PROG" 2>&1); st=$?
    got=$(echo "$out" | sed -n 's/.*CPU ids summed \([0-9]*\).*/\1/p')
    [ $st = 0 ] && [ -n "$got" ] || { bad "pinned to CPU $c: status $st: $out"; continue; }
    ids="$ids $c:$got"
  done
  set -- $ids
  if [ $# = 2 ] && [ "${1#*:}" = "${2#*:}" ]; then
    ok "pinned to host CPUs $(echo $ids | sed 's/:[0-9]*//g'): the guest sees the same CPU ids (sum ${1#*:})"
  elif [ $# = 2 ]; then
    bad "the guest's CPUID depends on the host CPU: ids summed per host CPU$ids"
  fi
else
  echo "skip pinned comparison: one host CPU"
fi

for i in 1 2 3; do
  out=$(timeout 170 "$VMM" run --no-control --after 0ms --record 200us --simulate "$RUNS" "$PROG" 2>&1); st=$?
  if echo "$out" | grep -q "simulations: $RUNS of $RUNS identical" && echo "$out" | grep -q "simulation 1: 200 cue points"; then
    ok "snapshot $i: $RUNS executions of one schedule identical ($(echo "$out" | sed -n 's/.*simulation 1: \([0-9]* cue points, trace [0-9a-f]*\).*/\1/p'))"
  else
    bad "snapshot $i: status $st"; echo "$out" | grep -E "simulations:|differs|both after|error" | head -8
  fi
done

# rdtsc/rdtscp (tests/guest/tscsim.c): the same property for the TSC. On PVM CR4.TSD does
# not make a user rdtsc fault, so jinx patches them (docs/cpu-models.md "Patching RDTSC");
# elsewhere they trap. Either way the answer is virtual time: a serialized run (twice, and
# under --cpu-model host, where CPUID is not patched but rdtsc is), simulations of one
# schedule, and an explored crash whose place the TSC decides replayed three times must
# agree. (Before rdtsc patching: serialized runs printed different hashes, and explore's
# live replay of the crash did not reproduce it.)
TP="$BUILD/guest-tests/tscsim"
mk_tmp
if [ ! -x "$TP" ]; then bad "$TP not built (make guest-tests)"
else
  if ! grep -qw -E "vmx|svm" /proc/cpuinfo; then
    timeout 60 "$VMM" run --no-control --quiet --report "$tmp/t.json" "$TP" >/dev/null 2>&1
    got=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["cpuid_patches"]; f=[x for x in p["files"] if x["file"].endswith("tscsim")][0]; print(p["rdtsc"], p["rdtscp"], f["tsc"], f["tsc_unsure"])' "$tmp/t.json" 2>/dev/null)
    want=$(objdump -d "$TP" | awk -F'\t' '{print $NF}' | sed 's/ *$//' | awk '$1=="rdtsc"{a++} $1=="rdtscp"{b++} END{print a+0, b+0, a+b, 0}')
    [ -n "$got" ] && [ "$got" = "$want" ] && ok "--report: every rdtsc/rdtscp objdump finds in tscsim is patched (rdtsc rdtscp tsc unsure: $got)" \
      || bad "tscsim patch counts '$got', objdump says '$want'"
  fi
  for model in default host; do
    args=(); [ $model = default ] || args=(--cpu-model host)
    outs=""
    for i in 1 2; do
      o=$(timeout 120 "$VMM" run --no-control --quiet --serial "${args[@]}" "$TP" 2>/dev/null); outs="$outs|$o"
    done
    a=$(echo "$outs" | cut -d'|' -f2); b=$(echo "$outs" | cut -d'|' -f3)
    [ -n "$a" ] && [ "$a" = "$b" ] && echo "$a" | grep -q "monotonic 1 aux [12]\$" \
      && ok "--serial ($model model) twice: the same TSC-derived output ($a)" \
      || bad "--serial ($model model) twice: '$a' vs '$b'"
  done
  out=$(timeout 170 "$VMM" run --no-control --after 0ms --record 1000us --simulate 10 "$TP" 2>&1)
  echo "$out" | grep -q "simulations: 10 of 10 identical" && echo "$out" | grep -q "simulation 1: 1000 cue points" \
    && ok "tscsim: 10 executions of one 1000-cue-point schedule identical (memory too)" \
    || { bad "tscsim simulations"; echo "$out" | grep -E "simulations:|differs|error" | head -5; }
  mkdir -p "$tmp/d"
  # (--no-stress-runs: a stress run could meet the crash first, in free execution, with
  # no schedule to replay; this checks the controlled search.)
  timeout 170 "$VMM" run --no-control --quiet --explore 30s --no-stress-runs --dump-dir "$tmp/d" "$TP" crash >/dev/null 2>"$tmp/x.err"; st=$?
  it=$(sed -n 's/^tscsim: crashing at iteration //p' "$tmp/x.err" | tail -1)
  d=$(sed -n 's/.*dump written to \(.*\.jinxdump\).*/\1/p' "$tmp/x.err" | tail -1)
  if [ $st = 134 ] && [ -n "$d" ] && grep -q '"reproduced":true' "$tmp/x.err"; then
    n=0; its=""
    for i in 1 2 3; do
      timeout 120 "$VMM" replay "$d" >/dev/null 2>"$tmp/r.err"; rs=$?
      ri=$(sed -n 's/^tscsim: crashing at iteration //p' "$tmp/r.err" | tail -1); its="$its $ri"
      [ $rs = 134 ] && [ "$ri" = "$it" ] && grep -q "replay reproduced the dump's crash" "$tmp/r.err" && n=$((n+1))
    done
    [ $n = 3 ] && ok "explore: the TSC-placed crash (iteration $it) reproduced live, its dump replayed 3/3 at the same iteration" \
      || bad "tscsim dump replayed $n/3 (iterations: explored $it, replays$its)"
  else
    bad "tscsim crash under --explore: status $st, dump '$d'"; grep -E "explore|crashing" "$tmp/x.err" | tail -3
  fi
  # A patched rdtscp whose third byte the program overwrote is no longer answered: the
  # program's own ud2, SIGILL (status 132), never a VMM error.
  if ! grep -qw -E "vmx|svm" /proc/cpuinfo; then
    o=$(timeout 60 "$VMM" run --no-control --quiet "$TP" smc 2>"$tmp/smc.err"); st=$?
    [ $st = 132 ] && echo "$o" | grep -q "^smc patched=1 aux=0\$" && ! echo "$o" | grep -q "ran on" \
      && ok "rdtscp patched (aux 0: the main thread's vCPU), its F9 overwritten: the program's own ud2, SIGILL (132)" \
      || { bad "tscsim smc: status $st, '$o'"; tail -3 "$tmp/smc.err"; }
  fi
  # Free execution: what a patched rdtsc costs (one exit each); informational.
  o=$(timeout 120 "$VMM" run --no-control --quiet "$TP" loop 2000 2>/dev/null)
  echo "$o" | grep -q "monotonic 1\$" && ok "free execution: rdtsc/rdtscp non-decreasing ($o)" \
    || bad "tscsim loop: '$o'"
fi

summary "cpuid-sim tests"
