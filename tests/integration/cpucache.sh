#!/usr/bin/env bash
# The CPU model cache (vmm/kvm/cpucache.h, docs/cpu-models.md "The cache"): the first
# run with a model asks libvirt and writes the file, later runs read it and never load
# libvirt; the CPUID table the guest gets (recorded in a dump) is byte-identical either
# way; a damaged file (a feature renamed, truncated, garbage, oversized, a symlink) is
# ignored, libvirt asked and the file rebuilt exactly; $XDG_CACHE_HOME/jinx is the default
# place; an unwritable place still runs; --cpu-model host does not consult it. And the
# code-scan cache beside it (vmm/linux/scancache.h).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"
G="$BUILD/guest-tests"; DOCTOR=scripts/dump-cpuid.py
tmp=$(mktemp -d); [ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT; echo "tmp $tmp"
[ -x "$G/cpuid" ] || { echo "FAIL $G/cpuid not built (make guest-tests)"; exit 1; }
unset XDG_CACHE_HOME
export JINX_CACHE_DIR="$tmp/c"
F="$JINX_CACHE_DIR/cpu-model-kvm64.txt"

# run NAME [args]: the cpuid guest dumps its table; prints the cache status, leaves
# $tmp/NAME.json (the recorded table).
run() {
  local name=$1; shift
  mkdir -p "$tmp/$name"
  # on one host CPU: KVM_GET_SUPPORTED_CPUID reports the APIC ID of the CPU it ran on
  taskset -c 0 "$VMM" run --no-control --quiet --stats "$@" --dump-dir "$tmp/$name" "$G/cpuid" abort \
    >/dev/null 2>"$tmp/$name.err"
  local d; d=$(ls "$tmp/$name"/*.jinxdump 2>/dev/null | head -1)
  [ -n "$d" ] && "$DOCTOR" show "$d" >"$tmp/$name.json"
  sed -n 's/.*cpu_model_cache=\([a-z]*\).*/\1/p' "$tmp/$name.err" | tail -1
}
same_table() { [ -s "$tmp/$1.json" ] && cmp -s "$tmp/$1.json" "$tmp/$2.json"; }

st=$(run first)
[ "$st" = miss ] && [ -s "$F" ] && ok "first run: libvirt asked, $F written" \
  || bad "first run: status '$st', file $(ls -l "$F" 2>&1)"
cp "$F" "$tmp/good"
st=$(run second)
[ "$st" = hit ] && ok "second run: answered from the cache" || bad "second run: status '$st'"
same_table first second && ok "the table from the cache is the table from libvirt" \
  || bad "tables differ between libvirt and the cache"
if LD_DEBUG=files "$VMM" run --no-control --quiet images/bin/correct 2>&1 >/dev/null | grep -q libvirt
then bad "libvirt loaded on a cache hit"; else ok "a cache hit never loads libvirt"; fi
if LD_DEBUG=files JINX_CACHE_DIR="$tmp/empty" "$VMM" run --no-control --quiet images/bin/correct \
     2>&1 >/dev/null | grep -q "file=libvirt.so.0"
then ok "(control) a miss does load libvirt"; else bad "(control) libvirt not seen loading on a miss"; fi

# damage: each is ignored, libvirt asked again, the file rebuilt as it was
damage() { # NAME, then the command that damages $F
  local name=$1; shift
  "$@"
  local st; st=$(run "$name")
  if [ "$st" = miss ] && cmp -s "$F" "$tmp/good" && same_table first "$name"; then
    ok "$name: ignored, rebuilt identical, same table"
  else bad "$name: status '$st', rebuilt $(cmp "$F" "$tmp/good" 2>&1)"; fi
}
damage "feature renamed (checksum now wrong)" sed -i 's/^sse2$/avx2/' "$F"
damage "truncated" truncate -s 100 "$F"
damage "garbage" sh -c "head -c 3000 /dev/urandom >'$F'"
damage "empty" truncate -s 0 "$F"
damage "oversized (1 MiB)" sh -c "cat '$tmp/good' >'$F'; head -c 1048576 /dev/zero >>'$F'"
echo "keep" >"$tmp/target"
damage "a symlink in its place (not followed)" ln -sf "$tmp/target" "$F"
[ "$(cat "$tmp/target")" = keep ] && [ ! -L "$F" ] && ok "the symlink's target untouched, replaced by a file" \
  || bad "symlink: target $(cat "$tmp/target"), $(ls -l "$F")"
# a consistent file for another libvirt (the key): rebuilt too
python3 - "$F" <<'PY'
import hashlib, sys
t = open(sys.argv[1]).read().split("\n")
t = [("key " + "0" * 64) if l.startswith("key ") else l for l in t if not l.startswith("sha256 ")]
body = "\n".join(t[:-1]) + "\n"
open(sys.argv[1], "w").write(body + "sha256 " + hashlib.sha256(body.encode()).hexdigest() + "\n")
PY
st=$(run forgedkey)
[ "$st" = miss ] && cmp -s "$F" "$tmp/good" && ok "a well-formed file with another key: rebuilt" \
  || bad "forged key: status '$st'"

# where it lives
unset JINX_CACHE_DIR
st=$(XDG_CACHE_HOME="$tmp/xdg" run xdg)
[ "$st" = miss ] && [ -s "$tmp/xdg/jinx/cpu-model-kvm64.txt" ] && ok "\$XDG_CACHE_HOME/jinx by default" \
  || bad "XDG_CACHE_HOME: status '$st'"
st=$(JINX_CACHE_DIR=/proc/jinx-cannot run unwritable)
[ "$st" = unwritable ] && same_table first unwritable && ok "an unwritable place: libvirt asked, same table" \
  || bad "unwritable: status '$st'"
st=$(JINX_CACHE_DIR="$tmp/c" run host --cpu-model host)
[ "$st" = none ] && ok "--cpu-model host does not consult the cache" || bad "host: status '$st'"

# The code-scan cache (vmm/linux/scancache.h): a dynamic C++ program's second boot takes
# every file's scan from the cache, and patches exactly the sites the first boot did; a
# damaged entry is rescanned, with the same sites.
CXX="images/bin/dyn/cxx-big"
if grep -qw -E "vmx|svm" /proc/cpuinfo; then
  echo "skip scan cache: nothing is patched on this host (CPUID and RDTSC are trapped)"
elif [ ! -x "$CXX" ]; then bad "$CXX not built (make images)"
else
  export JINX_CACHE_DIR="$tmp/scan"
  boot() { # NAME: the boot's --stats line and --report
    "$VMM" run --no-control --quiet --stats --report "$tmp/$1.report" "$CXX" -- --main-only \
      >/dev/null 2>"$tmp/$1.err" || echo "status $?" >>"$tmp/$1.err"
    sed -n 's/.*scan_cache_hits=\([0-9]*\) scan_cache_misses=\([0-9]*\).*/\1 \2/p' "$tmp/$1.err" | tail -1
  }
  sites() { python3 -c 'import json,sys; p=json.load(open(sys.argv[1])).get("cpuid_patches"); print(json.dumps(p, sort_keys=True))' "$tmp/$1.report" 2>/dev/null; }
  read -r h1 m1 <<<"$(boot s1)"; read -r h2 m2 <<<"$(boot s2)"
  n=$(ls "$JINX_CACHE_DIR"/scan-*.txt 2>/dev/null | wc -l)
  [ "${h1:-x}" = 0 ] && [ "${m1:-0}" -gt 0 ] && [ "$n" = "$m1" ] && ok "scan cache: the first boot scans $m1 files and writes $n entries" \
    || { bad "scan cache: first boot hits '$h1' misses '$m1', $n entries"; tail -3 "$tmp/s1.err"; }
  [ "${h2:-x}" = "$m1" ] && [ "${m2:-x}" = 0 ] && ok "scan cache: the second boot takes all $h2 from the cache" \
    || { bad "scan cache: second boot hits '$h2' misses '$m2'"; tail -3 "$tmp/s2.err"; }
  a=$(sites s1); b=$(sites s2)
  [ -n "$a" ] && [ "$a" != null ] && [ "$a" = "$b" ] && ok "scan cache: the same patched sites either way ($(echo "$a" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sites"])'))" \
    || bad "scan cache: sites differ: $a / $b"
  for f in "$JINX_CACHE_DIR"/scan-*.txt; do printf 'garbage\n' >"$f"; done
  read -r h3 m3 <<<"$(boot s3)"; c=$(sites s3)
  [ "${m3:-x}" = "$m1" ] && [ "$c" = "$a" ] && ok "scan cache: damaged entries are rescanned, same sites" \
    || bad "scan cache: after damage hits '$h3' misses '$m3', sites $c"
  read -r h4 m4 <<<"$(boot s4)"
  [ "${h4:-x}" = "$m1" ] && ok "scan cache: and rewritten" || bad "scan cache: not rewritten (hits '$h4')"
fi

summary "cpucache tests"
