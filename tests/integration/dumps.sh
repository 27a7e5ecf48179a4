#!/usr/bin/env bash
# Crash dumps (docs/dumps.md): for every buggy image's widened build and the guest crash
# programs, `jinx-vmm run --dump-dir D` must leave a .core that gdb reads (right threads,
# faulting function, `x/i $pc`) and a .jinxdump that `jinxctl inspect` reads (thread,
# signal, function; --json parses); damaged copies (truncated, bit-flipped, wrong image)
# are refused with status 2 and a message; D never holds anything but finished pairs.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; CTL="$BIN/jinxctl"; G="$BUILD/guest-tests"
mk_tmp
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

for tool in gdb python3; do
  command -v $tool >/dev/null || { echo "FAIL $tool is needed (apt-get install $tool)"; exit 1; }
done

# Only finished pairs, never a temporary or a lone file.
only_pairs() {
  local d=$1 f
  for f in "$d"/* "$d"/.[!.]*; do
    [ -e "$f" ] || continue
    case "$f" in
      *.core) [ -f "${f%.core}.jinxdump" ] || { echo "     lone core $f"; return 1; } ;;
      *.jinxdump) [ -f "${f%.jinxdump}.core" ] || { echo "     lone dump $f"; return 1; } ;;
      *) echo "     stray file $f"; return 1 ;;
    esac
  done
}

# refused NAME FILE [args]: inspect must exit 2 with a message on stderr.
refused() {
  local name=$1 file=$2; shift 2
  "$CTL" inspect "$@" "$file" >"$tmp/ro" 2>"$tmp/re"; local st=$?
  if [ $st = 2 ] && [ -s "$tmp/re" ] && [ ! -s "$tmp/ro" ]; then ok "$name refused: $(head -c 150 "$tmp/re")";
  else bad "$name: status $st (wanted 2)"; head -5 "$tmp/re" "$tmp/ro"; fi
}

# dumpcase NAME STATUS SIGNAME THREADS FUNC IMAGE ARGS...
#   SIGNAME: e.g. SIGABRT, or "deadlock"; THREADS: expected count or "-" (any, but gdb,
#   inspect and the report must agree); FUNC: expected function of the crashing frame in
#   gdb, or "-" (the one jinx-vmm's report names).
dumpcase() {
  local name=$1 want=$2 sig=$3 nthr=$4 func=$5 image=$6; shift 6
  local D="$tmp/d-$name" got= run
  mkdir -p "$D"
  for run in 1 2 3 4 5 6 7 8 9 10; do # widened races fail most runs: retry with another seed
    rm -f "$D"/*
    timeout 120 "$VMM" run --timeout 60s --seed $run --dump-dir "$D" "$image" "$@" \
      >/dev/null 2>"$tmp/err"; got=$?
    [ "$got" = "$want" ] && break
  done
  if [ "$got" != "$want" ]; then bad "$name: status $got, wanted $want"; head -20 "$tmp/err"; return; fi
  local jd core
  jd=$(sed -n 's/^jinx-vmm: dump written to \(.*\) (+ .core)$/\1/p' "$tmp/err")
  core=${jd%.jinxdump}.core
  if [ -z "$jd" ] || [ ! -f "$jd" ] || [ ! -f "$core" ]; then
    bad "$name: no dump reported or written"; cat "$tmp/err"; ls -la "$D"; return; fi
  check "$name: dump dir holds one finished pair" test "$(ls -A "$D" | wc -l)" = 2
  check "$name: no temporary or partial file" only_pairs "$D"

  # What jinx-vmm itself reported: thread and function of the crash.
  local tid= sym=
  if [ "$sig" != deadlock ]; then
    tid=$(sed -n 's/.* in thread \([0-9]*\) at 0x[0-9a-f]* .*/\1/p' "$tmp/err" | head -1)
    sym=$(sed -n 's/.* in thread [0-9]* at 0x[0-9a-f]* \([A-Za-z_0-9.]*\).*/\1/p' "$tmp/err" | head -1)
  fi
  [ "$func" = - ] && func=$sym

  # gdb reads the core with the image.
  gdb -batch -ex 'info threads' -ex bt -ex 'x/i $pc' "$image" "$core" >"$tmp/gdb" 2>&1
  local gthreads
  # (gdb names a glibc program's threads through libthread_db: "Thread 0x... (LWP n)")
  gthreads=$(grep -cE '^[* ] +[0-9]+ +(Thread 0x[0-9a-f]+ \()?LWP [0-9]+' "$tmp/gdb")
  local n
  n=$("$CTL" inspect --json "$jd" 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["threads"]))')
  if [ "$gthreads" -ge 1 ] && [ "$gthreads" = "$n" ] && { [ "$nthr" = - ] || [ "$nthr" = "$gthreads" ]; }; then
    ok "$name: gdb sees $gthreads threads (dump: $n)"; else bad "$name: gdb sees $gthreads threads, dump $n, wanted $nthr"; head -30 "$tmp/gdb"; fi
  if [ "$sig" != deadlock ]; then
    check "$name: gdb: terminated with $sig" grep -q "Program terminated with signal $sig" "$tmp/gdb"
    check "$name: gdb: current thread is LWP $tid" grep -qE "^\* +1 +(Thread 0x[0-9a-f]+ \()?LWP $tid[ )]" "$tmp/gdb"
  fi
  if grep -qE "^#0 +(0x[0-9a-f]+ in )?$func \(" "$tmp/gdb" && grep -qE '^=> 0x[0-9a-f]+ <' "$tmp/gdb"; then
    ok "$name: gdb: #0 in $func, x/i \$pc decodes"; else bad "$name: gdb: wanted #0 in $func and x/i"; head -30 "$tmp/gdb"; fi

  # jinxctl inspect: outcome, thread, signal, function; --json; --thread.
  "$CTL" inspect "$jd" >"$tmp/insp" 2>"$tmp/inspe"; local st=$?
  if [ "$sig" = deadlock ]; then
    if [ $st = 0 ] && grep -q "^outcome: deadlock" "$tmp/insp" && \
       [ "$(grep -c 'blocked in futex wait' "$tmp/insp")" -ge 2 ]; then ok "$name: inspect: deadlock, threads blocked in futex wait";
    else bad "$name: inspect (status $st)"; head -30 "$tmp/insp" "$tmp/inspe"; fi
  else
    if [ $st = 0 ] && grep -qE "^outcome: killed by $sig \(signal [0-9]+\) in thread $tid at 0x[0-9a-f]+ $sym" "$tmp/insp" && \
       grep -q "^thread $tid (crashed)" "$tmp/insp" && grep -q "^  => 0x" "$tmp/insp" && \
       grep -qE "^    #0 0x[0-9a-f]+ $sym" "$tmp/insp"; then ok "$name: inspect: $sig in thread $tid at $sym";
    else bad "$name: inspect (status $st) wanted $sig thread $tid $sym"; head -40 "$tmp/insp" "$tmp/inspe"; fi
  fi
  # DWARF line info (via addr2line) where the image has it.
  if readelf -S "$image" 2>/dev/null | grep -q '\.debug_line'; then
    check "$name: inspect: backtrace frames carry source lines" \
      grep -qE '^    #[0-9]+ 0x[0-9a-f]+ .* \(.+\.(c|cpp):[0-9]+\)$' "$tmp/insp"
  fi
  "$CTL" inspect --json "$jd" >"$tmp/json" 2>&1
  if python3 - "$tmp/json" "$sig" "${tid:-0}" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
o = j["outcome"]
if sys.argv[2] == "deadlock":
    assert o["kind"] == "deadlock", o
else:
    assert o["kind"] == "signal" and o["signame"] == sys.argv[2] and o["thread"] == int(sys.argv[3]), o
    t = j["threads"][0]
    assert t["crashed"] and t["tid"] == int(sys.argv[3]) and t["backtrace"] and t["disassembly"], t
PY
  then ok "$name: inspect --json parses and agrees"; else bad "$name: inspect --json"; head -c 600 "$tmp/json"; echo; fi
  local first
  first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"][-1]["tid"])' "$tmp/json" 2>/dev/null)
  "$CTL" inspect --thread "$first" --disasm 3 "$jd" >"$tmp/one" 2>&1
  if [ "$(grep -c '^thread ' "$tmp/one")" = 1 ] && grep -q "^thread $first" "$tmp/one" && \
     [ "$(grep -cE '^  (=>|  ) 0x' "$tmp/one")" -le 3 ]; then ok "$name: inspect --thread $first --disasm 3"; else bad "$name: --thread"; head -20 "$tmp/one"; fi

  # Damaged copies are refused, never crash the reader.
  local size c
  size=$(stat -c %s "$jd")
  for cut in 0 15 $((size / 2)) $((size - 1)); do
    c="$tmp/cut/$(basename "$jd")"; mkdir -p "$tmp/cut"; rm -f "$tmp/cut/"*
    head -c $cut "$jd" >"$c"; cp "$core" "$tmp/cut/"
    refused "$name: .jinxdump cut to $cut bytes" "$c"
  done
  for off in 3 9 $((size / 3)) $((size / 2 + 5)) $((size - 3)); do
    c="$tmp/flip/$(basename "$jd")"; mkdir -p "$tmp/flip"; rm -f "$tmp/flip/"*
    cp "$jd" "$core" "$tmp/flip/"
    python3 -c 'import sys; p,o=sys.argv[1],int(sys.argv[2]); b=bytearray(open(p,"rb").read()); b[o]^=0x10; open(p,"wb").write(b)' "$c" $off
    refused "$name: .jinxdump bit flipped at byte $off" "$c"
  done
  rm -f "$tmp/flip/"*; cp "$jd" "$core" "$tmp/flip/"
  truncate -s -4096 "$tmp/flip/$(basename "$core")"
  refused "$name: truncated core" "$tmp/flip/$(basename "$jd")"
  rm -f "$tmp/flip/"*; cp "$jd" "$core" "$tmp/flip/"
  python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[100]^=1; open(p,"wb").write(b)' "$tmp/flip/$(basename "$core")"
  refused "$name: bit-flipped core" "$tmp/flip/$(basename "$jd")"
}

dumpcase segv 139 SIGSEGV 1 null_deref "$G/crash" segv
# musl's raise blocks the application's signals around its tkill: SIGABRT stays pending and
# acts when raise restores the mask, in __restore_sigs, as on Linux (vmm/linux/signals.h).
dumpcase assert 134 SIGABRT 1 __restore_sigs "$G/crash" assert
if "$CTL" inspect "$(ls "$tmp"/d-assert/*.jinxdump)" | grep -qE '#[0-9]+ 0x[0-9a-f]+ failing_assert\+'; then
  ok "assert: inspect backtrace reaches failing_assert"; else bad "assert: backtrace lacks failing_assert"; fi
dumpcase thread-segv 139 SIGSEGV 2 null_deref "$G/crash" thread-segv
dumpcase div0 136 SIGFPE 1 divide "$G/crash" div0
dumpcase ud 132 SIGILL 1 main "$G/crash" ud
dumpcase deadlock 123 deadlock 3 __syscall_cp_c "$G/crash" deadlock
for m in images/*.manifest; do
  name=$(sed -n 's/^name: *//p' "$m"); exp=$(sed -n 's/^expected: *//p' "$m")
  args=$(sed -n 's/^widened_args: *//p' "$m"); [ -n "$args" ] || args=$(sed -n 's/^args: *//p' "$m")
  [ -x "images/bin/widen/$name" ] || continue
  case "$exp" in
    "signal SIGABRT") # musl's abort ends in raise's __restore_sigs; glibc's (the C++ images) in pthread_kill's helper
      func=__restore_sigs; [ -f "images/src/$name.cpp" ] && func=-
      # shellcheck disable=SC2086
      dumpcase "$name" 134 SIGABRT - "$func" "images/bin/widen/$name" $args ;;
    "signal SIGSEGV") # shellcheck disable=SC2086
      dumpcase "$name" 139 SIGSEGV - - "images/bin/widen/$name" $args ;;
    deadlock) # shellcheck disable=SC2086
      dumpcase "$name" 123 deadlock 3 __syscall_cp_c "images/bin/widen/$name" $args ;;
  esac
done

# The image check: another build is refused, --image finds a moved one.
jd=$(ls "$tmp"/d-segv/*.jinxdump)
cp "$G/crash" "$tmp/moved-crash"
"$CTL" inspect --image "$tmp/moved-crash" "$jd" >/dev/null 2>"$tmp/e"
check "inspect --image: a moved copy of the same build is accepted" test $? = 0
printf 'x' >>"$tmp/moved-crash"
refused "another build of the image" "$jd" --image "$tmp/moved-crash"
grep -q "not the build the dump was taken from" "$tmp/re" && ok "another build: message names the mismatch" || bad "another build: message"
refused "a missing dump file" "$tmp/nonexistent.jinxdump"
refused "a file that is not a dump" "$G/crash"

# No dump without --dump-dir, and none for a normal exit; a bad --dump-dir fails early.
D="$tmp/none"; mkdir -p "$D"
"$VMM" run --dump-dir "$D" "$G/crash" exit 3 >/dev/null 2>&1
check "no dump for a normal exit" test -z "$(ls -A "$D")"
( cd "$tmp/none" && "$OLDPWD/$VMM" run "$OLDPWD/$G/crash" segv >/dev/null 2>&1 )
check "no dump without --dump-dir" test -z "$(ls -A "$D")"
"$VMM" run --dump-dir "$G/crash" "$G/crash" segv >/dev/null 2>"$tmp/e"; st=$?
if [ $st = 125 ] && grep -q "not a directory" "$tmp/e"; then ok "--dump-dir on a file: status 125 before running"; else bad "--dump-dir on a file: status $st"; cat "$tmp/e"; fi

# --max-dump-size: a dump over the cap is refused whole (nothing in D, not even a
# temporary), with the sizes named; the outcome and exit status stay the crash's; under
# a cap it fits, the dump is written; a bad cap fails before running.
D="$tmp/capped"; mkdir -p "$D"
"$VMM" run --no-control --dump-dir "$D" --max-dump-size 16K "$G/crash" segv >/dev/null 2>"$tmp/e"; st=$?
if [ $st = 139 ] && grep -q "no crash dump written: it would take [0-9]* KiB on disk .*over --max-dump-size 16 KiB; the outcome stands" "$tmp/e" &&
   [ -z "$(ls -A "$D")" ]; then ok "--max-dump-size 16K: refused whole, status 139 kept"
else bad "--max-dump-size 16K: status $st, dir: $(ls -A "$D")"; cat "$tmp/e"; fi
"$VMM" run --no-control --dump-dir "$D" --max-dump-size 64M "$G/crash" segv >/dev/null 2>"$tmp/e"; st=$?
if [ $st = 139 ] && grep -q "dump written" "$tmp/e" && only_pairs "$D" && [ -n "$(ls -A "$D")" ]; then ok "--max-dump-size 64M: written"
else bad "--max-dump-size 64M: status $st"; cat "$tmp/e"; fi
"$VMM" run --no-control --max-dump-size lots "$G/crash" segv >/dev/null 2>"$tmp/e"; st=$?
if [ $st = 125 ] && grep -q "max-dump-size lots" "$tmp/e"; then ok "--max-dump-size lots: refused"; else bad "--max-dump-size lots: status $st"; fi

summary "dump tests"
