#!/usr/bin/env bash
# Debian tools run unmodified (issue 28; the corpus and its table:
# scripts/bench/debian-tools.sh, docs/real-programs.md): Debian's own xz and zstd (dynamic
# glibc) compress a generated 48 KiB input with two threads (xz -T2 with 16 KiB blocks
# under jinx-vmm run; zstd -T2 under run and --serial; xz is too slow traced, ~1000 cue
# points a second on its shared pages: docs/real-programs.md), each byte-identical to the
# native run's stdout; nothing is written on the host; `xz -k` writing in.bin.xz in its
# cwd makes the native file's bytes (fetched with --out-dir) and leaves the host's
# directory as it was; pbzip2 -p2 (its signal thread sigwaits until pthread_kill) under
# run and --serial, byte-identical. Installs xz-utils, zstd and pbzip2 when missing (as
# root, apt-get); SKIP only when it cannot. nproc, getconf and /proc/cpuinfo count the
# guest's CPUs alike (default and --vcpus 1). ~5 s.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$(realpath "$BIN/jinx-vmm")"
if ! { command -v xz && command -v zstd; } >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -q xz-utils zstd ||
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q xz-utils zstd; }; } >/dev/null 2>&1
fi
XZ=$(command -v xz) && ZSTD=$(command -v zstd) ||
  { echo "SKIP debian-tools: xz or zstd is not installed and could not be (apt-get install xz-utils zstd as root)"; exit 0; }
mk_tmp
mkdir -p "$tmp/w" "$tmp/nat" "$tmp/out"
python3 - "$tmp/w/in.bin" <<'EOF'
import random, sys
r = random.Random(28)
words = [''.join(r.choice('abcdefghij') for _ in range(r.randint(2, 8))) for _ in range(300)]
out = bytearray()
while len(out) < 48 * 1024:
    out += (' '.join(r.choice(words) for _ in range(8)) + '\n').encode() if r.random() < 0.8 \
        else bytes(r.getrandbits(8) for _ in range(256))
open(sys.argv[1], 'wb').write(out[:48 * 1024])
EOF
args=(-T2 --block-size=16KiB)
state() { (cd "$tmp/w" && find . -printf '%p %s %T@\n' | sort; sha256sum in.bin); }
before=$(state)
for run in "$XZ -T2 --block-size=16KiB -c" "$ZSTD -T2 -c" "--serial $ZSTD -T2 -c"; do
  set -- $run; mode=""; [ "$1" = --serial ] && { mode=--serial; shift; }
  prog=$1; shift
  want=$("$prog" "$@" "$tmp/w/in.bin" | sha256sum)
  got=$(cd "$tmp/w" && timeout 60 "$VMM" run --no-control --quiet $mode --ro-dir . "$prog" -- "$@" in.bin 2>"$tmp/err" | sha256sum)
  name="$(basename "$prog") $* ${mode:-(free)}"
  if [ "$got" = "$want" ] && ! grep -q "jinx limit\|unsupported" "$tmp/err"; then ok "$name: the native bytes"
  else bad "$name: $(tail -3 "$tmp/err" | tr '\n' ' ')"; fi
done
# pbzip2: a signal thread in sigwait, woken at the end by pthread_kill (thread-directed
# signals: vmm/linux/signals.h), free and --serial.
PBZ=$(command -v pbzip2)
if [ -z "$PBZ" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q pbzip2 >/dev/null 2>&1; PBZ=$(command -v pbzip2)
fi
if [ -n "$PBZ" ]; then
  want=$("$PBZ" -p2 -c "$tmp/w/in.bin" | sha256sum)
  for mode in "" --serial; do
    got=$(cd "$tmp/w" && timeout 60 "$VMM" run --no-control --quiet $mode --ro-dir . "$PBZ" -- -p2 -c in.bin 2>"$tmp/err" | sha256sum)
    if [ "$got" = "$want" ] && ! grep -q "jinx limit\|unsupported\|sigwait error\|Couldn't" "$tmp/err"; then
      ok "pbzip2 -p2 -c ${mode:-(free)}: the native bytes, its signal thread woken by pthread_kill"
    else bad "pbzip2 ${mode:-(free)}: $(tail -3 "$tmp/err" | tr '\n' ' ')"; fi
  done
else echo "SKIP pbzip2: not installed and could not be (apt-get install pbzip2 as root)"; fi
# The CPU count through every route a tool takes (issue 28): coreutils' nproc
# (sched_getaffinity), nproc --all and getconf (glibc's sysconf: /sys/devices/system/cpu,
# its readdir), and /proc/cpuinfo, all the guest's CPUs: with --vcpus 1, one.
for vc in "" "--vcpus 1"; do
  want=$([ -n "$vc" ] && echo 1 || "$VMM" run --no-control --quiet /usr/bin/nproc 2>/dev/null)
  # shellcheck disable=SC2086
  got="$("$VMM" run --no-control --quiet $vc /usr/bin/nproc 2>&1) $("$VMM" run --no-control --quiet $vc /usr/bin/nproc -- --all 2>&1) \
$("$VMM" run --no-control --quiet $vc /usr/bin/getconf -- _NPROCESSORS_ONLN 2>&1) $("$VMM" run --no-control --quiet $vc /usr/bin/getconf -- _NPROCESSORS_CONF 2>&1) \
$("$VMM" run --no-control --quiet $vc /bin/cat -- /proc/cpuinfo 2>&1 | grep -c '^processor')"
  [ "$got" = "$want $want $want $want $want" ] && [ "$want" -ge 1 ] 2>/dev/null \
    && ok "nproc, nproc --all, getconf ONLN/CONF, /proc/cpuinfo ${vc:-(default)}: $want CPUs each" \
    || bad "CPU counts ${vc:-(default)} differ: '$got' (want $want)"
done
[ "$(state)" = "$before" ] && ok "nothing written on the host" || bad "the host's directory changed: $(ls -l "$tmp/w")"

# A tool that writes its output file in the cwd: private under jinx, the same bytes.
cp "$tmp/w/in.bin" "$tmp/nat/in.bin"
(cd "$tmp/nat" && "$XZ" "${args[@]}" -k in.bin)
(cd "$tmp/w" && timeout 60 "$VMM" run --no-control --quiet --ro-dir . --out-dir "$tmp/out" "$XZ" -- "${args[@]}" -k in.bin) 2>"$tmp/err"
st=$?
f="$tmp/out$(realpath "$tmp/w")/in.bin.xz"
if [ "$st" = 0 ] && [ -f "$f" ] && cmp -s "$f" "$tmp/nat/in.bin.xz"; then ok "xz -T2 -k: in.bin.xz written privately, the native bytes (--out-dir)"
else bad "xz -T2 -k: status $st, $(tail -2 "$tmp/err" | tr '\n' ' ')"; fi
[ "$(state)" = "$before" ] && ok "xz -k under jinx left the host's directory unchanged" || bad "xz -k changed the host: $(ls -l "$tmp/w")"
summary "debian-tools"
