#!/usr/bin/env bash
# What real programs ask of the Linux layer (issue 28), kept short (< 60 s):
#  - Verdict trust: a program whose failure follows a file operation jinx refused (a
#    write, create, mkdir ... outside its cwd, /tmp and the grants; an open outside the
#    grants) gets "could not test" (jinx test exit 2) naming the call and the path, never
#    BUG FOUND: fopen("/etc/output.txt","w") then exit 1, assert(fout != NULL), and the
#    same after two threads ran (output.txt in the cwd works: files.sh); a program that probes and copes ends well (the refusals only noted);
#    libc's own probes of /proc and /sys are no limit (a crash after them is a bug).
#    Nothing is written on the host.
#  - Scheduling and resource syscalls (tests/guest/schedres.c, musl static and glibc
#    dynamic): what Linux answers any unprivileged program (sched_*, priorities, affinity
#    arguments, rlimit and sysinfo errors, madvise) is byte-for-byte the native run's; what
#    jinx alone answers (FIFO/RR refused, one CPU count through sched_getaffinity, sysconf
#    and get_nprocs, RLIMIT_STACK = the default thread stack, sysinfo's RAM = --mem, uptime
#    in virtual time) holds in free, --serial and --attach 5/s runs, the same every time.
#  - Pipes, eventfds, poll/select/epoll, socket pairs, dup/fcntl (tests/guest/pipes.c,
#    pipefds.c): the native answers free, --serial (the same trace twice) and --attach 5/s
#    (worker VMs checked: no divergence); a deadlock through a pipe read is found by jinx
#    test and its dump replays; no false bug (JINX_LONG=1: 40 --attach runs, 20 s budgets).
#  - Signals (tests/guest/signals.c, musl and glibc): pthread_kill/sigwait ping-pong, a
#    sigtimedwait timeout in virtual time, pending sets under the mask, sigpending, SIG_IGN
#    dropping a pending signal: the native answers free, --serial (the same trace twice)
#    and --attach 5/s; an unhandled SIGTERM by pthread_kill ends the program (143), is a
#    bug for jinx test (not a limit) and its dump replays; a signal pending while blocked
#    acts when unblocked (138).
#  - The CPU files (/proc/cpuinfo, /sys/devices/system/cpu): schedres's jinx checks.
# Guest programs: tests/guest/fileout.c, schedres.c, pipes.c, pipefds.c, signals.c. Without /dev/kvm
# this fails (make check-kvm).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$(realpath "$BIN/jinx-vmm")"; JINX="$(realpath "$BIN/jinx")"; G="$(realpath "$BUILD/guest-tests")"
for p in fileout schedres schedres_glibc pipes pipefds pipefds_glibc signals signals_glibc; do [ -x "$G/$p" ] || { echo "FAIL no $G/$p (make guest-tests)"; exit 1; }; done
mk_tmp
mkdir "$tmp/cwd"; cd "$tmp/cwd" || exit 1
ERR_TAIL=12

# vmm NAME WANT_STATUS ERR_REGEX -- jinx-vmm args
vmm() {
  local name=$1 want=$2 re=$3; shift 4
  timeout 60 "$VMM" "$@" >"$tmp/out" 2>"$tmp/err"; local st=$?
  cat "$tmp/out" >>"$tmp/err"
  if [ "$st" = "$want" ] && { [ -z "$re" ] || grep -Eq -- "$re" "$tmp/err"; }; then ok "$name"
  else bad "$name: status $st, wanted $want${re:+ and /$re/}"; fi
}
# jt NAME WANT_STATUS OUT_REGEX -- jinx test args (stdout and stderr together)
jt() {
  local name=$1 want=$2 re=$3; shift 4
  local t0=$SECONDS
  timeout 60 "$JINX" test --dump-dir "$tmp/dumps" "$@" >"$tmp/out" 2>"$tmp/err"; local st=$?
  cat "$tmp/out" >>"$tmp/err"
  if [ "$st" = "$want" ] && grep -Eq -- "$re" "$tmp/err"; then ok "$name ($((SECONDS - t0)) s)"
  else bad "$name: status $st, wanted $want and /$re/"; fi
}

echo "-- refused file operations: could not test, never a bug"
F="$G/fileout"
# The program writes in its cwd, /tmp and the grants (in the VM: tests/integration/files.sh);
# elsewhere (/etc) a write is refused.
LIM='open\("/etc/output.txt", O_WRONLY\|O_CREAT\|O_TRUNC\) was refused'
vmm "write refused outside the writable area: EACCES, listed as a jinx limit" 1 \
  "jinx limit: the program's $LIM \(EACCES\): jinx lets the program write only below" -- run --no-control "$F" write /etc/output.txt
vmm "output.txt in the cwd (a grant or not): written, in the VM" 0 "" -- run --no-control --ro-dir . "$F" write
jt "output.txt: exit 1 after the refused write is could not test" 2 \
  "could not test: the program's $LIM \(EACCES\).*" -- --budget 10s "$F" write /etc/output.txt
grep -Eq "stderr: +error opening /etc/output.txt" "$tmp/err" && ok "... and shows the program's message" || bad "no stderr line"
jt "assert(fout != NULL) after a refused write: could not test" 2 "could not test: the program's $LIM \(EACCES\)" \
  -- --budget 10s --ro-dir . "$F" assert /etc/output.txt
grep -q "BUG FOUND" "$tmp/err" && bad "a bug reported after a refused write"
jt "two threads, then the refused write: could not test" 2 "could not test: the program's $LIM" \
  -- --budget 10s "$F" threads /etc/output.txt
jt "two threads, then output.txt in the cwd: nothing found" 0 "nothing found" -- --budget 5s "$F" threads
jt "a program that probes and copes: nothing found, refusals noted" 0 \
  "note: .*mkdir\(\"/etc/newdir\"\) was refused" -- --seeds 1-2 "$F" probe /etc /etc/hostname
grep -q 'open("/etc/hostname", O_RDONLY) was refused (EACCES): the path lies outside what jinx lets the guest read; grant its directory with --ro-dir DIR' "$tmp/err" \
  && ok "... an open outside the grants is noted with --ro-dir" || bad "no note for the open outside the grants"
jt "libc's /proc and /sys probes are no limit: a crash after them is a bug" 1 "BUG FOUND" \
  -- --budget 5s --seeds 1-1 "$F" sysprobe
[ -z "$(ls -A "$tmp/cwd")" ] && ok "nothing was written on the host" || { ls -la "$tmp/cwd"; bad "files appeared in the cwd"; }

echo "-- scheduling and resource syscalls: as native, deterministic"
for b in schedres schedres_glibc; do
  "$G/$b" >"$tmp/native" 2>&1 || true
  vmm "$b: the portable answers are the native ones" 0 "" -- run --no-control "$G/$b"
  if grep "^answers:" "$tmp/native" >"$tmp/na" && grep "^answers:" "$tmp/out" >"$tmp/ja" && cmp -s "$tmp/na" "$tmp/ja"; then
    ok "$b: $(wc -w <"$tmp/ja") answers identical to native"
  else bad "$b answers differ: $(diff <(tr ' ' '\n' <"$tmp/na") <(tr ' ' '\n' <"$tmp/ja") | head -6 | tr '\n' ' ')"; fi
  for mode in "" --serial "--attach 5/s"; do
    # shellcheck disable=SC2086
    vmm "$b: jinx's own answers, ${mode:-free}" 0 "jinx answers ok: [0-9]+ CPUs" -- run --no-control $mode --mem 256M "$G/$b" jinx 268435456
    grep "^jinx answers" "$tmp/out" >>"$tmp/cpus.$b"
  done
  [ "$(sort -u "$tmp/cpus.$b" | wc -l)" = 1 ] && ok "$b: the same CPU count in every mode" || bad "$b: CPU counts differ: $(sort -u "$tmp/cpus.$b" | tr '\n' ' ')"
done

echo "-- pipes, eventfds, poll"
# serial_and_attach NAME PROG: PROG small under --serial twice gives the native answer
# ("NAME ok ..." on its output) and the same trace; PROG under --attach 5/s with worker
# VMs checked gives the native answer with no divergence.
serial_and_attach() {
  local name=$1 prog=$2 want
  want=$("$prog" small 2>&1 | grep "^$name ok")
  vmm "$name small --serial" 0 "" -- run --no-control --serial --trace "$tmp/t1" "$prog" small
  grep -qxF "$want" "$tmp/out" && ok "$name --serial: the native answer" || bad "$name --serial output"
  vmm "$name small --serial again" 0 "" -- run --no-control --serial --trace "$tmp/t2" "$prog" small
  cmp -s "$tmp/t1" "$tmp/t2" && ok "$name --serial: the same trace twice" || bad "$name --serial traces differ"
  want=$("$prog" 2>&1 | grep "^$name ok")
  vmm "$name --attach 5/s, worker VMs checked" 0 "" -- run --no-control --attach 5/s --check-workers "$prog"
  grep -qxF "$want" "$tmp/out" && ok "$name --attach: the native answer" || bad "$name --attach output"
  grep -Eq "diverged|gave another result" "$tmp/err" && bad "$name --attach: a replay or a worker diverged" \
    || ok "$name --attach: no divergence, workers agree"
}

P="$G/pipes"
want=$("$P" 2>&1 | grep "^pipes ok")
vmm "pipes: free run, the native answer" 0 "" -- run --no-control "$P"
grep -qxF "$want" "$tmp/out" && ok "pipes: '$want'" || bad "pipes output differs from native ('$want')"
serial_and_attach pipes "$P" # ($want, the free run's native answer, stays for the loop below)
if [ "${JINX_LONG:-0}" = 1 ]; then # the divergence a worker sharing the program's pipes made
  n=0; for i in $(seq 1 40); do
    timeout 60 "$VMM" run --no-control --attach 5/s "$P" >"$tmp/out" 2>"$tmp/err"
    { grep -q diverged "$tmp/err" || ! grep -qxF "$want" "$tmp/out"; } && n=$((n+1))
  done
  [ "$n" = 0 ] && ok "pipes --attach: 40 runs, no divergence" || bad "pipes --attach: $n of 40 runs diverged or differed"
fi
vmm "a read nobody will answer is a deadlock" 123 "deadlock: all 1 live threads are blocked" -- run --no-control "$P" deadlock
vmm "... under --serial too" 123 "deadlock" -- run --no-control --serial "$P" deadlock
vmm "a write with no reader: SIGPIPE" 141 "SIGPIPE" -- run --no-control "$P" sigpipe

echo "-- dup/fcntl, select/pselect6, epoll, socketpair (tests/guest/pipefds.c)"
P="$G/pipefds"
"$P" >"$tmp/native" 2>&1
vmm "pipefds: free run" 0 "" -- run --no-control "$P"
cmp -s "$tmp/native" "$tmp/out" && ok "pipefds: the native answers and output ($(tail -1 "$tmp/out"))" \
  || bad "pipefds output differs from native: $(diff "$tmp/native" "$tmp/out" | head -4 | tr '\n' ' ')"
"$G/pipefds_glibc" small >"$tmp/native" 2>&1
vmm "pipefds_glibc (dynamic, glibc's wrappers) small" 0 "" -- run --no-control "$G/pipefds_glibc" small
cmp -s "$tmp/native" "$tmp/out" && ok "pipefds_glibc: the native answers and output" \
  || bad "pipefds_glibc output differs from native: $(diff "$tmp/native" "$tmp/out" | head -4 | tr '\n' ' ')"
serial_and_attach pipefds "$P"
vmm "pipefds hostile: wild arguments from two threads, answered" 0 "pipefds hostile: done" \
  -- run --no-control "$P" hostile
vmm "... under rounds, worker VMs checked" 0 "" -- run --no-control --attach 20/s --check-workers --stats "$P" hostile
grep -Eq "diverged|gave another result" "$tmp/err" && bad "pipefds hostile --attach: a replay or a worker diverged" \
  || ok "pipefds hostile --attach: no divergence, workers agree"
budget=6s; progs=("pipefds small"); [ "${JINX_LONG:-0}" = 1 ] && { budget=20s; progs+=("pipes small" pipefds); }
for prog in "${progs[@]}"; do
  # shellcheck disable=SC2086
  jt "jinx test $prog --budget $budget: nothing found" 0 "nothing found" -- --budget $budget $G/$prog
  grep -Eq "BUG FOUND|could not test|jinx limit" "$tmp/err" && bad "$prog: a false bug or a limit"
done
rm -rf "$tmp/dumps"
jt "a deadlock through a pipe read (a lock held across it): found" 1 "BUG FOUND.*deadlock|deadlock" \
  -- --budget 20s "$P" deadlock
d=$(ls -t "$tmp"/dumps/*.jinxdump 2>/dev/null | head -1)
vmm "... its dump replays (the pipe is in the snapshot)" 123 "replay reproduced the dump's outcome \(deadlock" \
  -- replay "$d"

echo "-- signals: pthread_kill, sigwait, pending sets (tests/guest/signals.c)"
P="$G/signals"
"$G/signals_glibc" small >"$tmp/native" 2>&1
vmm "signals_glibc (glibc's tgkill, sigwait) small: free run" 0 "" -- run --no-control "$G/signals_glibc" small
cmp -s "$tmp/native" "$tmp/out" && ok "signals_glibc: the native answers" \
  || bad "signals_glibc output differs from native: $(diff "$tmp/native" "$tmp/out" | head -4 | tr '\n' ' ')"
serial_and_attach signals "$P"
vmm "pthread_kill(SIGTERM) to a thread that does not block it: the program ends" 143 \
  "killed by SIGTERM .* in thread 2" -- run --no-control "$P" fatal
vmm "a signal to a thread that blocks it stays pending, acts when unblocked" 138 \
  "unblock: SIGUSR1 pending while blocked.*|killed by SIGUSR1" -- run --no-control "$P" unblock
jt "jinx test signals small --timers strict: nothing found" 0 "nothing found" \
  -- --budget 3s --timers strict "$P" small
grep -Eq "BUG FOUND|could not test|jinx limit" "$tmp/err" && bad "signals: a false bug or a limit"
rm -rf "$tmp/dumps"
jt "an unhandled SIGTERM by pthread_kill is the program's outcome: a bug, not a limit" 1 \
  "BUG FOUND" -- --budget 10s "$P" fatal
grep -q "could not test" "$tmp/err" && bad "signals fatal: could not test"
d=$(ls -t "$tmp"/dumps/*.jinxdump 2>/dev/null | head -1)
vmm "... its dump replays" 143 "replay reproduced" -- replay "$d"

summary "syscalls-linux"
