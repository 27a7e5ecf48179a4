#!/usr/bin/env bash
# Pinning (vmm/kvm/pin.h): while a VM runs serialized its vCPU host threads share one
# CPU; free execution gets the process's affinity mask back. Checked on the host
# threads themselves (/proc/PID/task/*/status Cpus_allowed_list, the threads named
# jinx-vcpuN), while tests/guest/pinwork runs:
#  1. --serial: every vCPU thread on the CPU jinx-vmm says (--stats' "pin:" line and
#     pin_cpu=), one of the allowed ones; --pin-cpu N: on N;
#     two runs started side by side get different CPUs;
#  2. --no-pin: every vCPU thread keeps the whole mask, pin_cpu=-1, no "pin:" line;
#  3. free execution after a recorded fragment (--after/--record): pinned for the
#     fragment, every vCPU thread back on the whole mask afterwards;
#  4. a user's mask is respected: under taskset -c L the pinned CPU is L, and --pin-cpu
#     outside the mask is refused (125, naming the CPU and the allowed ones), as is
#     --pin-cpu with --no-pin;
#  5. jinx test --jobs 2 (a stand-in jinx-vmm records its command line): the two jobs get
#     --pin-cpu of two different allowed CPUs, --jobs 1 none, --no-pin passes --no-pin.
# Needs /dev/kvm and at least 2 allowed CPUs (with one, pinning cannot be told apart).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; JINX="$BIN/jinx"
PROG="$BUILD/guest-tests/pinwork"
for f in "$VMM" "$JINX" "$PROG"; do [ -x "$f" ] || { echo "FAIL no $f (make, make guest-tests)"; exit 1; }; done
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# expand "0-2,5" into "0 1 2 5"
expand() { local r out=""; for r in ${1//,/ }; do
  if [[ $r == *-* ]]; then out="$out $(seq -s ' ' "${r%-*}" "${r#*-}")"; else out="$out $r"; fi
done; echo $out; }
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
cpus=($(expand "$allowed"))
[ ${#cpus[@]} -ge 2 ] || { echo "FAIL this test needs 2 allowed CPUs (Cpus_allowed_list: $allowed)"; exit 1; }
first=${cpus[0]}; last=${cpus[${#cpus[@]}-1]}

# vcpu_masks PID: "jinx-vcpuN LIST" for each vCPU host thread
vcpu_masks() { local t; for t in /proc/"$1"/task/*; do
  [[ $(cat "$t/comm" 2>/dev/null) == jinx-vcpu* ]] &&
    echo "$(cat "$t/comm") $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status")"
done; }
# wait_for FILE PATTERN SECONDS
wait_for() { local i; for ((i = 0; i < $3 * 20; i++)); do grep -qs "$2" "$1" && return 0; sleep 0.05; done; return 1; }
# sample NAME PATTERN -- jinx-vmm args: runs it, waits for PATTERN on its stderr, samples
# the vCPU threads' masks 0.3 s later into $tmp/NAME.masks, waits for its end ($st)
sample() { local name=$1 pat=$2; shift 3
  "$@" >/dev/null 2>"$tmp/$name.err" & local pid=$!; pids+=("$pid")
  if wait_for "$tmp/$name.err" "$pat" 30; then sleep 0.3; vcpu_masks "$pid" >"$tmp/$name.masks"; else : >"$tmp/$name.masks"; fi
  wait "$pid"; st=$?
}
# all_on NAME LIST: at least MIN vCPU threads sampled, every one with mask LIST
all_on() { local n; n=$(wc -l <"$tmp/$1.masks")
  [ "$n" -ge "${3:-2}" ] && ! awk -v want="$2" '$2 != want { bad = 1 } END { exit !bad }' "$tmp/$1.masks"; }
show() { echo "     masks:"; sed 's/^/     | /' "$tmp/$1.masks"; grep -E "pin|error|cannot" "$tmp/$1.err" | head -4 | sed 's/^/     | /'; }

echo "-- serialized: pinned (allowed CPUs: $allowed)"
sample serial "pin: serialized" -- "$VMM" run --no-control --serial --stats "$PROG" 100 0
cpu=$(sed -n "s/.*pin: serialized execution's host threads on CPU \([0-9]*\) .*/\1/p" "$tmp/serial.err")
if [ $st = 0 ] && [ -n "$cpu" ] && [[ " ${cpus[*]} " == *" $cpu "* ]] && grep -q "pin_cpu=$cpu\$" "$tmp/serial.err" &&
   all_on serial "$cpu" 3; then
  ok "--serial: all $(wc -l <"$tmp/serial.masks") vCPU threads on CPU $cpu (status 0)"
else bad "--serial: status $st, CPU '${cpu:-}'"; show serial; fi
sample given "pin: serialized" -- "$VMM" run --no-control --serial --stats --pin-cpu "$last" "$PROG" 100 0
if [ $st = 0 ] && all_on given "$last" 3 && grep -q "pin_cpu=$last\$" "$tmp/given.err"; then
  ok "--pin-cpu $last: all vCPU threads on CPU $last"
else bad "--pin-cpu $last: status $st"; show given; fi

echo "-- two serialized runs side by side"
"$VMM" run --no-control --serial --stats "$PROG" 100 0 >/dev/null 2>"$tmp/two1.err" & p1=$!; pids+=("$p1")
"$VMM" run --no-control --serial --stats "$PROG" 100 0 >/dev/null 2>"$tmp/two2.err" & p2=$!; pids+=("$p2")
wait "$p1"; s1=$?; wait "$p2"; s2=$?
c1=$(sed -n 's/.*pin_cpu=\([0-9-]*\)$/\1/p' "$tmp/two1.err"); c2=$(sed -n 's/.*pin_cpu=\([0-9-]*\)$/\1/p' "$tmp/two2.err")
if [ $s1 = 0 ] && [ $s2 = 0 ] && [ -n "$c1" ] && [ -n "$c2" ] && [ "$c1" != "$c2" ] && [ "$c1" -ge 0 ] && [ "$c2" -ge 0 ]; then
  ok "two jinx-vmm at once: CPUs $c1 and $c2 (a CPU held by one is not taken by the other)"
else bad "two jinx-vmm at once: status $s1/$s2, CPUs '${c1:-}' and '${c2:-}'"; fi

echo "-- --no-pin"
"$VMM" run --no-control --serial --stats --no-pin "$PROG" 100 0 >/dev/null 2>"$tmp/nopin.err" & pid=$!; pids+=("$pid")
sleep 1; vcpu_masks "$pid" >"$tmp/nopin.masks"; wait "$pid"; st=$?
if [ $st = 0 ] && all_on nopin "$allowed" 1 && grep -q "pin_cpu=-1\$" "$tmp/nopin.err" &&
   ! grep -q "pin: serialized" "$tmp/nopin.err"; then
  ok "--no-pin: every vCPU thread keeps CPUs $allowed"
else bad "--no-pin: status $st"; show nopin; fi

echo "-- free execution after a serialized fragment"
sample free "recorded a fragment" -- "$VMM" run --no-control --stats --after 300ms --record 100us "$PROG" 10 20000
if [ $st = 0 ] && grep -q "pin: serialized" "$tmp/free.err" && all_on free "$allowed" 3; then
  ok "pinned for the fragment, then all $(wc -l <"$tmp/free.masks") vCPU threads back on CPUs $allowed"
else bad "free after --record: status $st"; show free; fi

echo "-- the user's mask"
sample tset "pin: serialized" -- taskset -c "$last" "$VMM" run --no-control --serial --stats "$PROG" 100 0
if [ $st = 0 ] && all_on tset "$last" 3 && grep -q "free execution: CPUs $last)" "$tmp/tset.err"; then
  ok "under taskset -c $last: pinned to $last"
else bad "taskset -c $last: status $st"; show tset; fi
taskset -c "$last" "$VMM" run --no-control --serial --pin-cpu "$first" "$PROG" 1 0 >/dev/null 2>"$tmp/refused.err"; st=$?
if [ $st = 125 ] && grep -q -- "--pin-cpu $first: this process may not run on CPU $first (its affinity mask allows $last)" "$tmp/refused.err"; then
  ok "--pin-cpu $first under taskset -c $last: refused (125)"
else bad "--pin-cpu outside the mask: status $st"; cat "$tmp/refused.err"; fi
"$VMM" run --no-control --serial --pin-cpu "$first" --no-pin "$PROG" 1 0 >/dev/null 2>"$tmp/both.err"; st=$?
if [ $st = 125 ] && grep -q -- "--pin-cpu and --no-pin" "$tmp/both.err"; then ok "--pin-cpu with --no-pin: refused (125)"
else bad "--pin-cpu with --no-pin: status $st"; cat "$tmp/both.err"; fi

echo "-- jinx test --jobs"
# A stand-in jinx-vmm: its command line into args.<seed>, then "nothing found".
cat >"$tmp/fake-vmm" <<FAKE
#!/bin/bash
args="\$*"
while [ \$# -gt 0 ]; do case \$1 in --seed) seed=\$2;; --report) rep=\$2;; esac; shift; done
echo "\$args" >"$tmp/args.\$seed"
sleep 0.5
printf '{"outcome":"exit","exit_status":0,"limits":[],"stderr_tail":""}' >"\$rep"
echo 'jinx-vmm: explore: {"snapshot":true,"schedules":1,"schedules_to_bug":0,"seconds":0.5,"reproduced":true,"gave_up":false,"limited":false,"strategy":"pct","note":"x"}' >&2
FAKE
chmod +x "$tmp/fake-vmm"
pinof() { sed -n 's/.*--pin-cpu \([0-9]*\) .*/\1/p' "$tmp/args.$1"; }
rm -f "$tmp"/args.*
JINX_VMM="$tmp/fake-vmm" "$JINX" test --jobs 2 --seeds 1-2 --budget 30s --dump-dir "$tmp/d1" "$PROG" -- 1 0 >/dev/null 2>"$tmp/jt.err"; st=$?
p1=$(pinof 1); p2=$(pinof 2)
if [ $st = 0 ] && [ -n "$p1" ] && [ -n "$p2" ] && [ "$p1" != "$p2" ] && [[ " ${cpus[*]} " == *" $p1 "* ]] &&
   [[ " ${cpus[*]} " == *" $p2 "* ]] && grep -q -- "--pin-cpu $p1 -- 1 0" "$tmp/args.1"; then
  ok "--jobs 2: the two runs pinned to CPUs $p1 and $p2 (before the program's --)"
else bad "--jobs 2: status $st, --pin-cpu '${p1:-}' and '${p2:-}'"; cat "$tmp"/args.* "$tmp/jt.err" 2>/dev/null | head; fi
rm -f "$tmp"/args.*
JINX_VMM="$tmp/fake-vmm" "$JINX" test --jobs 1 --seeds 1-1 --budget 30s --dump-dir "$tmp/d2" "$PROG" -- 1 0 >/dev/null 2>"$tmp/jt.err"; st=$?
if [ $st = 0 ] && [ -f "$tmp/args.1" ] && ! grep -q -- "--pin-cpu\|--no-pin" "$tmp/args.1"; then
  ok "--jobs 1: no pinning option (jinx-vmm picks its CPU)"
else bad "--jobs 1: status $st"; cat "$tmp"/args.* 2>/dev/null; fi
rm -f "$tmp"/args.*
JINX_VMM="$tmp/fake-vmm" "$JINX" test --no-pin --jobs 2 --seeds 1-2 --budget 30s --dump-dir "$tmp/d3" "$PROG" -- 1 0 >/dev/null 2>"$tmp/jt.err"; st=$?
if [ $st = 0 ] && grep -q -- "--no-pin" "$tmp/args.1" && grep -q -- "--no-pin" "$tmp/args.2" &&
   ! grep -q -- "--pin-cpu" "$tmp/args.1" "$tmp/args.2"; then
  ok "jinx test --no-pin: both runs get --no-pin"
else bad "jinx test --no-pin: status $st"; cat "$tmp"/args.* 2>/dev/null; fi

summary "pin"
