#!/usr/bin/env bash
# Writes the seed corpora of the elf, schedule and control harnesses (tests/fuzz/corpus/):
# small valid inputs the fuzzer mutates, plus a few invalid ones that reach the error
# paths. Run by `make fuzz-seeds`; the output is committed, so this only needs rerunning
# when a format changes. Every seed stays under 64 KiB (fuzz-smoke's -max_len).
set -euo pipefail
cd "$(dirname "$0")/../.."
C=tests/fuzz/corpus
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# ---- elf: tiny static musl programs, as the loader sees them, and broken variants ----
# (crash-* files are reproducers of fixed fuzz_elf crashes, kept by hand: not written here)
mkdir -p $C/elf
cat >"$tmp/t.c" <<'SRC'
#include <pthread.h>
static int counter;
static void *worker(void *a) { counter++; return a; }
int main(void) { pthread_t t; pthread_create(&t, 0, worker, 0); pthread_join(t, 0); return counter - 1; }
SRC
# -Os without debug info keeps the ELF small; the symbol table stays (symbolization).
musl-gcc -static -Os -pthread -o "$tmp/exec" "$tmp/t.c"
musl-gcc -static-pie -fPIE -Os -pthread -o "$tmp/pie" "$tmp/t.c"
cp "$tmp/exec" $C/elf/static-exec
cp "$tmp/pie" $C/elf/static-pie
strip -o $C/elf/static-exec-stripped "$tmp/exec"
head -c 64 "$tmp/exec" >$C/elf/header-only
head -c 2000 "$tmp/exec" >$C/elf/truncated
printf 'not an elf file\n' >$C/elf/not-elf
# ELFCLASS32 in e_ident.
{ head -c 4 "$tmp/exec"; printf '\001'; tail -c +6 "$tmp/exec"; } >$C/elf/class32
# A dynamically linked executable (PT_INTERP), stripped: refused with a hint.
printf 'int main(void){return 0;}\n' >"$tmp/d.c"
gcc -O1 -o "$tmp/dyn" "$tmp/d.c" && strip -o $C/elf/dynamic "$tmp/dyn"
for f in $C/elf/*; do
  [ "$(stat -c %s "$f")" -lt 65536 ] || { echo "mkseeds: $f is 64 KiB or more" >&2; exit 1; }
done

# ---- schedule: text and JSON forms (explorer/schedule.c, schedule_json.c) ----
mkdir -p $C/schedule
printf '# jinx loc=0x5004 A=T1 B=T2 pos=2/4\nT1 x3\nT2 x4\nT1 x4\ndefault continue\n' >$C/schedule/text
printf 'T1\nT2 x2\n\n# comment\nT3 x1000000000\ndefault roundrobin 3\n' >$C/schedule/text-roundrobin
printf 'T0 x1\n' >$C/schedule/text-bad-thread
printf 'T1 x3\ndefault continue\ndefault continue\n' >$C/schedule/text-two-defaults
printf '{"version":1,"default":"continue","quantum":1,"note":"jinx loc=0x5004 A=T1 B=T2 pos=2/4","segments":[{"thread":1,"steps":3},{"thread":2,"steps":4},{"thread":1,"steps":4}]}\n' >$C/schedule/json
printf '{"version":1,"default":"roundrobin","quantum":7,"segments":[],"extra":{"a":[1,2.5e3,null,true,"\\ud83d\\ude00"]}}' >$C/schedule/json-unknown-keys
printf '{"version":2,"segments":[]}' >$C/schedule/json-bad-version
printf '{"version":1,"segments":[{"thread":1,"steps":01}]}' >$C/schedule/json-leading-zero
printf '{"version":1,"note":"\\u00e9t\\u00e9 \\"quoted\\" \\\\ tab\\t","segments":[{"thread":255,"steps":1}]}' >$C/schedule/json-escapes

# ---- control: one request line each (vmm/control/control_req.c over lib/json.c) ----
mkdir -p $C/control
printf '{"cmd":"ping"}' >$C/control/ping
printf '{"cmd":"status"}' >$C/control/status
printf '{"cmd":"detach"}' >$C/control/detach
printf '{"cmd":"follow"}' >$C/control/follow
printf '{"cmd":"attach","rate":5,"strategy":"pct","depth":3,"sims":8,"fragment_us":2000,"seed":42,"follow":true}' >$C/control/attach-full
printf ' {"cmd":"attach","rate":0.5e1,"strategy":"portfolio","max_duty_pct":50} ' >$C/control/attach-exponent
printf '{"cmd":"attach","rates":5}' >$C/control/unknown-field
printf '{"cmd":"attach","rate":-1}' >$C/control/negative-rate
printf '{"cmd":"attach","depth":3.0}' >$C/control/depth-fraction
printf '{"cmd":"reboot"}' >$C/control/unknown-cmd
printf '{"cmd":"ping","cmd":"status"}' >$C/control/duplicate-key
printf '{"cmd":"st\\u0061tus"}' >$C/control/escaped
printf '{"cmd":"ping","x":"\\ud800"}' >$C/control/lone-surrogate
printf '{"cmd":"ping"' >$C/control/unterminated
# A reply as jinxctl reads it (nested objects): the nested reader is fuzzed on the same input.
printf '{"ok":true,"status":{"attached":true,"rate":5,"last":{"sims":8,"note":"a\\nb"},"strategies":[1,[2,{"x":null}]]},"control":{"clients":2}}' >$C/control/reply-nested
# ---- pathconf: byte 0 = cwd (0 g, 1 g/sub, 2 the tree's root, 3 /) | 4 follow the last
# symlink; then a guest path (fuzz_pathconf.c's tree: g/{file,sub/f,rel-out,abs-out,loop,
# in,dot,to-one}, secret/s, one) ----
mkdir -p $C/pathconf
seed() { printf "\\$(printf %03o "$1")%s" "$2" >"$C/pathconf/$3"; }
seed 4 file plain; seed 4 ../g/./sub//f dotdot-in; seed 4 ../secret/s dotdot-out
seed 4 rel-out/s rel-link-out; seed 4 abs-out/s abs-link-out; seed 4 loop/x loop
seed 4 in in-link; seed 0 in in-nofollow; seed 5 up up-link-out; seed 4 dot/dot/file dot-link
seed 4 to-one file-grant-link; seed 6 one file-grant; seed 7 /etc/passwd abs-outside
seed 7 /proc/self/exe proc; seed 5 ../../../../.. root-clamp; seed 4 file/x notdir
seed 4 "" empty; printf '\004%04096d' 0 >$C/pathconf/too-long

# ---- libdeps: a small dynamically linked program with a DT_RUNPATH, and broken variants ----
mkdir -p $C/libdeps
printf 'int main(void) { return 0; }\n' >"$tmp/d.c"
gcc -Os -o "$tmp/dyn" "$tmp/d.c" -Wl,-rpath,'$ORIGIN/lib' -Wl,--enable-new-dtags
strip -o $C/libdeps/dyn-runpath "$tmp/dyn"
gcc -Os -o "$tmp/dyn2" "$tmp/d.c" -Wl,-rpath,/opt/x -Wl,--disable-new-dtags
strip -o $C/libdeps/dyn-rpath "$tmp/dyn2"
head -c 1000 $C/libdeps/dyn-runpath >$C/libdeps/truncated
cp $C/elf/static-exec-stripped $C/libdeps/static
printf 'not an elf file\n' >$C/libdeps/not-elf

echo "mkseeds.sh: seeds written under $C/{elf,schedule,control,pathconf,libdeps}"
