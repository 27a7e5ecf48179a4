#!/usr/bin/env bash
# Boots the guest test programs under jinx-vmm and checks every outcome kind: exit
# status, fatal signals with thread and symbol, deadlock, timeout, bad ELF files.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; G="$BUILD/guest-tests"
mk_tmp

# expect NAME STATUS STDERR_REGEX STDOUT_REGEX -- jinx-vmm args...
expect() {
  local name=$1 status=$2 errre=$3 outre=$4; shift 5
  timeout 60 "$VMM" "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  local ok=1
  echo "$got" | grep -Eqx -- "$status" || ok=0
  if [ "$errre" = EMPTY ]; then [ ! -s "$tmp/err" ] || ok=0;
  elif [ -n "$errre" ]; then grep -Eq -- "$errre" "$tmp/err" || ok=0; fi
  [ -z "$outre" ] || grep -Eq -- "$outre" "$tmp/out" || ok=0
  if [ $ok = 1 ]; then pass=$((pass+1)); echo "ok   $name";
  else fail=$((fail+1)); echo "FAIL $name (status $got, wanted $status)"; sed 's/^/     | /' "$tmp/out" "$tmp/err" | head -30; fi
}

expect syscalls 0 "unsupported syscall 41 \(socket\)" "syscalls ok" -- run --seed 7 --env JINX_TEST=yes $G/syscalls -- alpha beta
n=$(grep -c "unsupported syscall 41 (socket)" "$tmp/err")
if [ "$n" = 1 ]; then pass=$((pass+1)); echo "ok   unknown syscall reported once"; else fail=$((fail+1)); echo "FAIL unknown syscall reported $n times"; fi
r1=$(grep random "$tmp/out")
"$VMM" run --seed 7 --env JINX_TEST=yes $G/syscalls alpha beta 2>/dev/null | grep random >"$tmp/r2"
"$VMM" run --seed 8 --env JINX_TEST=yes $G/syscalls alpha beta 2>/dev/null | grep random >"$tmp/r3"
if [ "$r1" = "$(cat $tmp/r2)" ] && [ "$r1" != "$(cat $tmp/r3)" ]; then pass=$((pass+1)); echo "ok   getrandom seeded"; else fail=$((fail+1)); echo "FAIL getrandom seeded: '$r1' '$(cat $tmp/r2)' '$(cat $tmp/r3)'"; fi
expect futex 0 "" "futex ok" -- run $G/futex
expect threads-100 0 "" "100 created" -- run --vcpus 128 $G/threads 100
expect threads-limit 0 "thread limit reached \(--vcpus 8\)" "refused" -- run --vcpus 8 $G/threads 20 limit
expect exit-status 42 "exited with status 42" "" -- run $G/crash exit 42
expect quiet-exit0 0 EMPTY "nothing" -- run --quiet --no-control $G/crash
expect quiet-socket-line 0 "^jinx-vmm: control socket .* \(jinxctl attach --rate 5/s\)$" "nothing" -- run --quiet $G/crash
expect segv 139 "SIGSEGV .* in thread 1 at 0x[0-9a-f]+ null_deref" "" -- run $G/crash segv
expect segv-backtrace 139 "#1 0x[0-9a-f]+ main" "" -- run $G/crash segv
expect assert 134 "SIGABRT .* thread 1" "" -- run $G/crash assert
expect assert-message 134 "Assertion failed" "" -- run $G/crash assert
expect abort 134 "SIGABRT" "" -- run $G/crash abort
expect ud 132 "#UD invalid opcode" "" -- run $G/crash ud
expect div0 136 "SIGFPE .* divide" "" -- run $G/crash div0
expect hlt 139 "#GP general protection" "" -- run $G/crash hlt
expect mov-cr3 139 "#GP general protection" "" -- run $G/crash cr3
expect out-port 139 "#GP general protection" "" -- run $G/crash out
expect pagetable-write 139 "(protection violation|unmapped address) \(write\) at address 0xffff800000003000" "" -- run $G/crash pagetable
expect int80 "(139|132)" "SIG(SEGV|ILL)" "" -- run $G/crash int80
expect wild-jump 139 "instruction fetch" "" -- run $G/crash wild
expect write-text 139 "protection violation \(write\)" "" -- run $G/crash text
expect thread-segv 139 "SIGSEGV .* in thread 2 at 0x[0-9a-f]+ null_deref" "" -- run $G/crash thread-segv
expect thread-exit 7 "exited with status 7" "" -- run $G/crash thread-exit
expect deadlock 123 "deadlock: all 3 live threads are blocked" "" -- run $G/crash deadlock
expect deadlock-threads 123 "thread [23] waits on futex 0x[0-9a-f]+ a\+" "" -- run $G/crash deadlock
expect timeout 124 "timeout: no outcome within 1000 ms" "" -- run --timeout 1s $G/crash spin
expect sleep-is-virtual 5 "" "" -- run --timeout 5s $G/crash sleep
"$VMM" run --report "$tmp/r.json" $G/crash segv >/dev/null 2>&1
if grep -q '"outcome":"signal","exit_status":139' "$tmp/r.json" && grep -q '"symbol":"null_deref' "$tmp/r.json"; then pass=$((pass+1)); echo "ok   report json"; else fail=$((fail+1)); echo "FAIL report json"; cat "$tmp/r.json"; fi

# RDRAND/RDSEED hidden from CPUID: trapped (VMX/SVM, PVM with CPUID faulting) or patched
# (docs/cpu-models.md); with --cpu-model host on a host that traps nothing, jinx-vmm says
# so when determinism matters.
expect cpuid-rdrand-hidden 0 "" "rdrand=0 rdseed=0" -- run $G/cpuid
if ! grep -qw -E "vmx|svm" /proc/cpuinfo && ! grep -qw cpuid_fault /proc/cpuinfo; then
  expect cpuid-rdrand-unhideable 0 "cannot hide RDRAND/RDSEED" "" -- run --serial --cpu-model host $G/cpuid
fi

# An instruction KVM cannot run (an SSE4.1 load from MMIO): jinx's limit, named with
# address, bytes and disassembly, status 125, in free and serialized execution alike.
for mode in "" --serial; do
  expect "kvm-limit ${mode:-free}" 125 "KVM could not run the instruction at 0x[0-9a-f]+ main\+0x[0-9a-f]+ \[66 0f 38 2a 00\] 'movntdqa xmm0, xmmword ptr \[rax\]'.*a jinx limitation, not a bug in the program" "" -- run --no-control $mode $G/kvmlimit
done

# Malformed ELF files: rejected with a clear message and status 125.
head -c 100 $G/crash >"$tmp/trunc"; expect elf-truncated 125 "truncated" "" -- run "$tmp/trunc"
printf 'hello world, not an elf at all............................................' >"$tmp/text"; expect elf-garbage 125 "not an ELF file" "" -- run "$tmp/text"
cp $G/crash "$tmp/arm"; printf '\xb7\x00' | dd of="$tmp/arm" bs=1 seek=18 conv=notrunc 2>/dev/null; expect elf-machine 125 "wrong machine 183" "" -- run "$tmp/arm"
expect elf-dynamic 0 "" "" -- run /bin/true   # a dynamically linked host program runs (dynbin.sh tests more)
expect elf-missing 125 "No such file" "" -- run "$tmp/nope"
expect bad-option 125 "--vcpus 0" "" -- run --vcpus 0 $G/crash
expect bad-mem 125 "--mem 3M" "" -- run --mem 3M $G/crash

summary "guest tests"
