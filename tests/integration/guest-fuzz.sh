#!/usr/bin/env bash
# jinx-vmm under a hostile guest (images/bin/guestfuzz, docs/hardening.md): random
# syscalls over many seeds, every fatal variant (wild jumps, privileged instructions,
# writes to the page tables' and the agent's addresses, smashed stacks, deadlock, a crash
# with a 64 TiB reservation to dump, ...), hostile single steps under --serial (steps), cue points taken in the guest (cues),
# thread and memory exhaustion. Whatever the
# guest does, jinx-vmm must report a guest outcome - the one the mode or variant calls
# for - within its time limit, with its JSON report, nothing on stderr that looks like a
# VMM failure or a sanitizer, no file outside --dump-dir (it runs in an empty scratch
# directory, with its control socket in a scratch runtime directory that must end
# empty), and a complete .core/.jinxdump pair for every dump. The file layer too: wild
# paths, huge lengths, bad flags, shared descriptors, mappings past the end (files mode).
#   GUEST_FUZZ_SEEDS=N (default 16) syscall-mode seeds, GUEST_FUZZ_ITERS=N (default 5000)
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$(cd "$(dirname "$BIN/jinx-vmm")" && pwd)/jinx-vmm"
FUZZ="$PWD/images/bin/guestfuzz"
[ -x "$FUZZ" ] || { echo "no $FUZZ (make images)"; exit 1; }
seeds=${GUEST_FUZZ_SEEDS:-16}; iters=${GUEST_FUZZ_ITERS:-5000}
mk_tmp
mkdir -p "$tmp/cwd" "$tmp/dumps" "$tmp/rt"
calls=0
declare -A hist
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; sed 's/^/     | /' "$tmp/err" | grep -v "unsupported syscall" | head -15; }

# run LABEL ALLOWED_STATUS_REGEX [jinx-vmm options...] -- guestfuzz args...
run() {
  local label=$1 want=$2; shift 2
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  rm -f "$tmp/report.json"
  (cd "$tmp/cwd" && JINX_RUNTIME_DIR="$tmp/rt" timeout 90 "$VMM" run --timeout 30s \
     --report "$tmp/report.json" --dump-dir "$tmp/dumps" "${opts[@]}" "$FUZZ" -- "$@" \
     </dev/null >"$tmp/out" 2>"$tmp/err"); local st=$?
  local outcome; outcome=$(sed -n 's/^{"outcome":"\([a-z]*\)".*/\1/p' "$tmp/report.json" 2>/dev/null)
  hist["${outcome:-none} $st"]=$(( ${hist["${outcome:-none} $st"]:-0} + 1 ))
  local n; n=$(sed -n 's/.*guestfuzz: mode=[a-z]* seed=[0-9]* syscalls=\([0-9]*\).*/\1/p' "$tmp/err")
  calls=$((calls + ${n:-0}))
  if [ ! -s "$tmp/report.json" ]; then bad "$label: status $st and no report (jinx-vmm did not finish)"; return; fi
  case "$outcome" in exit|signal|deadlock) ;; *) bad "$label: outcome '$outcome' (status $st)"; return ;; esac
  echo "$st" | grep -Eqx -- "$want" || { bad "$label: status $st, wanted $want"; return; }
  # (The RDRAND warning is about the host, printed on hosts without CPUID faulting; "#DB
  # debug" names the vector of a SIGTRAP from the program's own trace flag.)
  if grep -Eiv '^(guestfuzz:|jinx-vmm: (rounds|stats):|jinx-vmm: warning: this host cannot hide RDRAND|jinx-vmm: +#DB debug$)' "$tmp/err" | grep -Eiq 'internal|sanitizer|runtime error|cannot|panic|bug|assert'; then
    bad "$label: jinx-vmm complains on stderr"; return
  fi
  local stray; stray=$(find "$tmp/cwd" "$tmp/rt" -mindepth 1 | tr '\n' ' ')
  if [ -n "$stray" ]; then
    bad "$label: files left outside --dump-dir: $stray"
    rm -rf "${tmp:?}/cwd/"* "${tmp:?}/rt/"*; return
  fi
  local f
  for f in "$tmp/dumps"/*; do
    [ -e "$f" ] || continue
    case "$f" in
      *.jinxdump) [ -f "${f%.jinxdump}.core" ] || { bad "$label: $f without its .core"; return; } ;;
      *.core) [ -f "${f%.core}.jinxdump" ] || { bad "$label: $f without its .jinxdump"; return; } ;;
      *) bad "$label: stray file in the dump directory: $f"; return ;;
    esac
  done
  rm -f "$tmp/dumps"/*
  # shellcheck disable=SC2119 # this suite's ok counts silently, it takes no message
  ok
}

# Random syscalls: a clean exit 0 (half with the control socket, half without).
for s in $(seq 1 "$seeds"); do
  ctl=(); [ $((s % 2)) = 0 ] && ctl=(--no-control)
  run "syscalls seed $s" 0 "${ctl[@]}" --seed "$s" -- syscalls "$s" "$iters"
done
# The same under simulation rounds (snapshots, restores and replays of a guest in an
# mmap storm): exit 0 and no replay divergence; and serialized.
for s in 1 2; do
  run "syscalls seed $s --attach" 0 --no-control --stats --attach 20/s --seed "$s" -- syscalls "$s" "$iters"
  grep -q '"divergences":0' "$tmp/err" || bad "syscalls seed $s --attach: divergences or no rounds"
done
run "syscalls seed 3 --serial" 0 --serial --seed 3 -- syscalls 3 150 2
# Snapshots restore exactly while the guest maps, unmaps and scribbles (status 125 if not).
run "syscalls seed 4 --snapshot-selftest" 0 --no-control --snapshot-selftest 5 --selftest-interval 20ms -- syscalls 4 "$iters"
run "mem --snapshot-selftest" 0 --no-control --mem 64M --snapshot-selftest 5 --selftest-interval 5ms -- mem 4 500

# Single steps ended in the guest-agent (guestfuzz-steps.h, vmm/sched/guest_step.h): every
# kind of access to shared pages, the program's own TF, a write to the agent's step block,
# the agent's #DB handler run in user mode on a forged ARMED block. The same line and
# status with --no-guest-cues (every step's end an exit), and the default really ends steps
# in the guest. Seed % 4 picks the end: exit 0, SIGSEGV, SIGSEGV, TF with no step (4 on
# this host: PVM ignores a TF the program sets, until jinx returns to the program from an
# exception, e.g. the first touch of a page it owns, with the flags the program had; 133,
# SIGTRAP, as Linux, where it traps).
want_steps=(0 139 139 '4|133')
for s in 1 2 3 4 5 6; do
  run "steps seed $s --serial" "${want_steps[$((s % 4))]}" --serial --seed "$s" -- steps "$s" 150 3
  a="$(grep -E 'guestfuzz: mode=steps|exit status' "$tmp/err")"; g=$(sed -n 's/.*steps: [0-9]* single steps, \([0-9]*\) ended in the guest.*/\1/p' "$tmp/err")
  run "steps seed $s --serial --no-guest-cues" "${want_steps[$((s % 4))]}" --serial --no-guest-cues --seed "$s" -- steps "$s" 150 3
  b="$(grep -E 'guestfuzz: mode=steps|exit status' "$tmp/err")"; n=$(sed -n 's/.*steps: [0-9]* single steps, \([0-9]*\) ended in the guest.*/\1/p' "$tmp/err")
  [ -n "$a" ] && [ "$a" = "$b" ] || bad "steps seed $s: in-guest and exit paths differ: '$a' vs '$b'"
  [ "${g:-0}" -gt 100 ] && [ "${n:-1}" = 0 ] || bad "steps seed $s: steps ended in the guest: ${g:-none} (want > 100), with --no-guest-cues ${n:-none} (want 0)"
done

# Memory cue points taken in the guest-agent (guestfuzz-steps.h "cues",
# vmm/sched/guest_cue.h), under a schedule of long segments so that the agent has a
# budget: the same hostile accesses, then by seed % 3 an exit, a write to the real cue
# block (SIGSEGV) or the agent's #PF handler run in user mode on a forged ON block
# (SIGSEGV). The same line and status with --no-guest-cues, and cue points really taken
# in the guest.
printf 'T1 x300\nT2 x300\nT3 x300\nT1 x300\nT2 x300\nT3 x300\nT1 x300\nT2 x300\nT3 x300\n' >"$tmp/segs.txt"
want_cues=(0 139 139)
for s in 3 4 5 6; do
  run "cues seed $s --serial --guest-cue-points" "${want_cues[$((s % 3))]}" --serial --guest-cue-points --schedule "$tmp/segs.txt" --stats --seed "$s" -- cues "$s" 150 3
  a="$(grep -E 'guestfuzz: mode=cues|exit status|rflags' "$tmp/err")"; g=$(sed -n 's/.*guest cues: \([0-9]*\) memory cue points.*/\1/p' "$tmp/err")
  run "cues seed $s --serial --no-guest-cues" "${want_cues[$((s % 3))]}" --serial --guest-cue-points --no-guest-cues --schedule "$tmp/segs.txt" --stats --seed "$s" -- cues "$s" 150 3
  b="$(grep -E 'guestfuzz: mode=cues|exit status|rflags' "$tmp/err")"; n=$(sed -n 's/.*guest cues: \([0-9]*\) memory cue points.*/\1/p' "$tmp/err")
  [ -n "$a" ] && [ "$a" = "$b" ] || bad "cues seed $s: in-guest and exit paths differ: '$a' vs '$b'"
  [ "${g:-0}" -gt 1000 ] && [ "${n:-1}" = 0 ] || bad "cues seed $s: cue points taken in the guest: ${g:-none} (want > 1000), with --no-guest-cues ${n:-none} (want 0)"
done

# Every fatal variant (the seed picks it): a signal, a deadlock or the variant's exit.
first=$("$VMM" run --no-control "$FUZZ" -- fatal 0 10 2>&1 </dev/null >/dev/null | sed -n 's/.*variant=\([a-z0-9-]*\).*/\1/p')
[ "$first" = jump-user ] || { echo "FAIL cannot start the fuzzer (variant 0: '$first')"; exit 1; }
for s in $(seq 117 155); do # 39 variants, seed % 39: 117 is variant 0
  want='0|[0-9]|[1-9][0-9]|123|13[2-6]|139'
  # smash-stack (variant 22) returns a word of its smashed frame from main: any exit
  # status (236 once the syscalls before it changed), or a signal.
  [ $(( (s - 117) % 39 )) = 22 ] && want='[0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5]'
  run "fatal seed $s" "$want" -- fatal "$s" 300
  v=$(sed -n 's/.*variant=\([a-z0-9-]*\).*/\1/p' "$tmp/err")
  [ "$v" != bigmap-crash ] || grep -q "dump written" "$tmp/err" || bad "fatal seed $s ($v): no dump written"
done
# Limits: threads until EAGAIN (at --vcpus 16 and at the default, the maximum), memory
# until ENOMEM; each is listed as a jinx limit in the report.
run "threads --vcpus 16" 0 --vcpus 16 -- threads 1
grep -q "jinx limit: thread limit reached (--vcpus 16)" "$tmp/err" || bad "--vcpus 16: no jinx limit in the report"
run "threads (default: 254)" 0 -- threads 1
grep -q "threads=254 error=Resource temporarily unavailable" "$tmp/err" || bad "254 threads, then EAGAIN"
grep -q '"kind":"threads"' "$tmp/report.json" || bad "254 threads: no threads limit in the JSON report"
# A deadlock of 254 threads (more than the report lists waiters for), dumped.
run "deadlock of 254 threads" 123 --vcpus 254 -- fatal 28 100
grep -q "all 254 live threads are blocked" "$tmp/err" && grep -q "dump written" "$tmp/err" || bad "deadlock of 254 threads: report or dump"
run "mem --mem 32M" 0 --mem 32M -- mem 1 500
run "mem --mem 64M" 0 --mem 64M -- mem 2 500

# The file layer (guestfuzz files, guestfuzz-files.h; writes stay in the VM): a granted directory with a
# file, a subdirectory and symlinks out of it (relative, absolute, "..", a loop), a secret
# beside it. Wild paths, huge lengths, bad flags, other threads' descriptors, files mapped
# past their end: exit 0 (the in-guest checks pass), the secret never read, and the host
# tree exactly as before (nothing created, changed or removed; run() checks the cwd too).
ro=$tmp/files/ro; mkdir -p "$ro/sub"
echo "inside data" >"$ro/data"; echo "OUTSIDE-SECRET-$$-$RANDOM" >"$tmp/files/secret"
ln -s ../secret "$ro/out"; ln -s "$tmp/files/secret" "$ro/abs"; ln -s .. "$ro/up"; ln -s loop "$ro/loop"
tree_state() { (cd "$tmp/files" && find . -printf '%p %y %s %m %l\n' | sort && find . -type f -exec sha256sum {} + | sort); }
before=$(tree_state)
files_run() { # LABEL [jinx-vmm options...] -- SEED ITERS THREADS
  local label=$1; shift
  run "$label" 0 --ro-dir "$ro" "$@"
  local line; line=$(grep "guestfuzz: mode=files" "$tmp/err")
  echo "$line" | grep -q "secret_reads=0 checks=ok" || bad "$label: $line"
  [ "$(tree_state)" = "$before" ] || { bad "$label: the host tree changed"; diff <(echo "$before") <(tree_state) | head; }
}
for s in 1 2 3 4; do files_run "files seed $s" --seed "$s" -- files "$s" "$iters" 4 "$ro"; done
files_run "files seed 5 --attach" --no-control --stats --attach 20/s --seed 5 -- files 5 "$iters" 4 "$ro"
grep -q '"divergences":0' "$tmp/err" || bad "files seed 5 --attach: divergences or no rounds"
# (~50 000 cue points, ~11 s here alone; 60 s: under the ASan jinx-vmm beside another
# suite and memcheck it took more than 30.)
files_run "files seed 6 --serial" --serial --timeout 60s --seed 6 -- files 6 300 2 "$ro"
# The secret check can fail: grant the directory that holds the secret and it is read.
# Whether a run's random paths reach it depends on how its four threads interleave (free
# execution): up to three seeds (seed 7 read it 0 times in one CI run, 4-7 times in three
# runs by hand).
seen=0
for s in 7 8 9; do
  run "files seed $s: the secret check sees a granted secret" 0 --ro-dir "$tmp/files" -- files "$s" "$iters" 4 "$ro"
  grep -q "secret_reads=[1-9]" "$tmp/err" && { seen=$s; break; }
done
[ "$seen" != 0 ] || bad "files with the secret granted: secret_reads stayed 0 in seeds 7-9 (the check is blind)"

echo "outcomes (report outcome, exit status: runs):"
for k in "${!hist[@]}"; do echo "  $k: ${hist[$k]}"; done | sort
echo "guest syscalls issued: $calls"
summary "guest fuzz tests"
