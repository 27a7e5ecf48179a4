#!/usr/bin/env bash
# Dumps of dynamically linked programs (docs/dumps.md "The core file"): `jinx test` finds
# the bug of a glibc C program (images/bin/dyn/circle) and of a g++ one
# (images/bin/dyn/cxx-tests, Circle.Area) and writes a dump; gdb must open its core as
# it opens a Linux core: relocate the PIE, load libc (and libstdc++) from the link map,
# and unwind from the libc frames of the abort into the program's function that asserted.
# jinx test's own report must name the libc frames too (vmm/linux/backtrace.c).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
JINX="$BIN/jinx"; CTL="$BIN/jinxctl"
mk_tmp
for tool in gdb; do
  command -v $tool >/dev/null || { echo "FAIL $tool is needed (apt-get install $tool)"; exit 1; }
done
[ -w /dev/kvm ] || { echo "FAIL /dev/kvm is not usable"; exit 1; }

# libc's frames of an abort, with or without libc6-dbg (without it gdb has only the
# dynamic symbols: raise, abort, pthread_kill@@GLIBC_2.34, __assert_fail).
LIBC_FRAME='(__GI_)?(raise|abort|__pthread_kill[a-z_]*|pthread_kill(@@GLIBC_[0-9.]+)?|__assert_fail[a-z_]*)'

# jinx's own names of the same frames: "libc.so.6!abort+0x2f" (or "libc.so.6+0x8aeec"
# where no symbol holds the address).
JINX_LIBC='libc\.so\.6!(__GI_)?(raise|gsignal|abort|__pthread_kill[a-z_]*|pthread_kill[@A-Z_0-9.]*|__assert_fail[a-z_.]*)\+0x[0-9a-f]+'

# dyncase NAME FUNC JFUNC LIBS IMAGE [-- ARGS]: FUNC is the program's function that
# asserted (a regular expression on gdb's frame text), JFUNC the frame jinx's own
# backtrace names for it (the symbol gdb's inline frames sit in), LIBS the libraries gdb
# must have loaded.
dyncase() {
  local name=$1 func=$2 jfunc=$3 libs=$4 image=$5; shift 5
  local D="$tmp/d-$name"
  timeout 120 "$JINX" test --budget 30s --dump-dir "$D" "$image" "$@" >"$tmp/out" 2>&1
  local st=$? core
  core=$(sed -n 's/^ *dump: *.* (+ \(.*\.core\))$/\1/p' "$tmp/out" | head -1)
  if [ $st != 1 ] || [ -z "$core" ] || [ ! -f "$core" ]; then
    bad "$name: jinx test status $st, wanted 1 (bug found) with a dump"; tail -20 "$tmp/out"; return; fi
  ok "$name: jinx test found the bug and wrote $(basename "$core")"

  # jinx test's report: the libc frames of the abort by name, then the program's frame.
  local bt
  bt=$(sed -n '/^  backtrace:/,/^  [a-z]*:/p' "$tmp/out" | sed '$d' | sed 's/^  backtrace://; s/^ *//')
  if echo "$bt" | grep -qE "^$JINX_LIBC\$" && echo "$bt" | grep -qE "^$jfunc\+0x"; then
    ok "$name: jinx test's backtrace names libc's frames and the program's"
  else bad "$name: jinx test's backtrace lacks libc's frames or the program's ($jfunc)"; echo "$bt"; fi
  # jinxctl inspect of the dump: the same, through the core and the dump's file list.
  "$CTL" inspect --disasm 0 --thread "$(sed -n 's/^  thread: *\([0-9]*\).*/\1/p' "$tmp/out")" \
    "${core%.core}.jinxdump" >"$tmp/inspect" 2>&1
  if grep -qE "^    #[0-9]+ 0x[0-9a-f]+ $JINX_LIBC\$" "$tmp/inspect" &&
     grep -qE "^    #[0-9]+ 0x[0-9a-f]+ $jfunc\+0x" "$tmp/inspect"; then
    ok "$name: jinxctl inspect names libc's frames and the program's"
  else bad "$name: jinxctl inspect's backtrace lacks libc's frames or the program's ($jfunc)"
    sed -n '/backtrace:/,/^$/p' "$tmp/inspect"; fi

  gdb -batch -iex 'set verbose on' -ex bt -ex 'info sharedlibrary' "$image" "$core" \
    >"$tmp/gdb" 2>&1
  local frames
  frames=$(grep -E '^#[0-9]+ ' "$tmp/gdb")
  if grep -q 'Using PIE (Position Independent Executable) displacement' "$tmp/gdb"; then
    ok "$name: gdb relocates the PIE"; else bad "$name: gdb found no PIE displacement"; fi
  if grep -q 'No shared libraries loaded' "$tmp/gdb"; then
    bad "$name: gdb loaded no shared library"; fi
  local lib
  for lib in $libs; do
    if grep -qE "^0x[0-9a-f]+ +0x[0-9a-f]+ +Yes.* /.*/$lib" "$tmp/gdb"; then
      ok "$name: info sharedlibrary lists ${lib//\\/}, symbols read"
    else bad "$name: info sharedlibrary does not list ${lib//\\/}"; grep -A8 '^From' "$tmp/gdb"; fi
  done
  if echo "$frames" | grep -qE "^#[0-9]+ +(0x[0-9a-f]+ in )?$LIBC_FRAME \("; then
    ok "$name: gdb's backtrace has libc's abort: $(echo "$frames" | grep -oE " $LIBC_FRAME \(" | head -1)"
  else bad "$name: no libc frame in gdb's backtrace"; echo "$frames" | head -12; fi
  if echo "$frames" | grep -qE "^#[0-9]+ +(0x[0-9a-f]+ in )?[^ ]*$func "; then
    ok "$name: gdb's backtrace reaches ${func//\\/}"
  else bad "$name: gdb's backtrace does not reach $func"; echo "$frames" | head -16; fi
  if echo "$frames" | grep -qE '^#[0-9]+ +0x[0-9a-f]+ in \?\? \(\)$' &&
     ! echo "$frames" | grep -qE "$func"; then
    bad "$name: gdb's frames are unnamed"; fi
}

dyncase circle 'get_area' 'reader' 'libc.so.6' images/bin/dyn/circle
dyncase cxx-tests '(\(anonymous namespace\)::)?Circle::GetArea' '_ZNSt6thread11_State_impl[A-Za-z0-9_]*circle_area[A-Za-z0-9_]*' \
  'libc.so.6 libstdc\+\+.so.6' images/bin/dyn/cxx-tests -- --filter='Circle.*'

summary "dyn-core"
