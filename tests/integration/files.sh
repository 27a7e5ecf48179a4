#!/usr/bin/env bash
# The private writable file layer (issue 28 item 1; docs/guest.md "Files"), kept short:
#  - tests/guest/files.c (musl static, glibc dynamic) run in a scratch cwd: create, write,
#    read back, pwrite/writev, O_APPEND/O_EXCL, stat sizes, readdir, rename, unlink of an
#    open file, ftruncate/truncate, mkstemp in /tmp, mkdir/rmdir, a private mmap of a
#    written file; four threads appending to one log: the output is byte-identical to the
#    native run's under jinx-vmm run, --serial and --attach 5/s;
#  - over host files in a granted cwd (files host): appended to, renamed, unlinked, a
#    directory removed and made again, as natively, and the host files unchanged;
#  - simulations that write files leave nothing behind (counters under --attach 5/s with
#    worker VMs checked: exact counts, no divergence);
#  - a program that writes files and crashes: jinx test dumps it, the dump lists what was
#    written (path, size, SHA-256 = the native files'), its replay sees the same files (the
#    digest line the program prints from them is the native one);
#  - --file-mem: a program that writes more gets "could not test" (exit 2), never a bug;
#  - --out-dir copies what was written; jinx test on the file programs finds nothing;
#  - nothing is ever written on the host (the scratch cwd stays empty, no /tmp names).
# Without /dev/kvm this fails (make check-kvm).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$(realpath "$BIN/jinx-vmm")"; JINX="$(realpath "$BIN/jinx")"; CTL="$(realpath "$BIN/jinxctl")"
G="$(realpath "$BUILD/guest-tests")"
for p in files files_glibc; do [ -x "$G/$p" ] || { echo "FAIL no $G/$p (make guest-tests)"; exit 1; }; done
mk_tmp
mkdir "$tmp/cwd" "$tmp/native"; cd "$tmp/cwd" || exit 1
ERR_TAIL=12
host_tmp() { ls -d /tmp/jinx-files-* 2>/dev/null | wc -l; }
[ "$(host_tmp)" = 0 ] || echo "note: /tmp/jinx-files-* exist before the runs"
tmp_before=$(host_tmp)

# vmm NAME WANT_STATUS ERR_REGEX -- jinx-vmm args (stdout in $tmp/out, both in $tmp/err)
vmm() {
  local name=$1 want=$2 re=$3; shift 4
  timeout 60 "$VMM" "$@" >"$tmp/out" 2>"$tmp/err"; local st=$?
  cat "$tmp/out" >>"$tmp/err"
  if [ "$st" = "$want" ] && { [ -z "$re" ] || grep -Eq -- "$re" "$tmp/err"; }; then ok "$name"
  else bad "$name: status $st, wanted $want${re:+ and /$re/}"; fi
}
jt() {
  local name=$1 want=$2 re=$3; shift 4
  local t0=$SECONDS
  timeout 60 "$JINX" test --dump-dir "$tmp/dumps" "$@" >"$tmp/out" 2>"$tmp/err"; local st=$?
  cat "$tmp/out" >>"$tmp/err"
  if [ "$st" = "$want" ] && grep -Eq -- "$re" "$tmp/err"; then ok "$name ($((SECONDS - t0)) s)"
  else bad "$name: status $st, wanted $want and /$re/"; fi
}
native() { (cd "$tmp/native" && "$@" >"$tmp/native.out" 2>&1); }
same() { cmp -s "$tmp/native.out" "$tmp/out" && ok "$1: byte-identical to native" \
  || bad "$1 differs from native: $(diff "$tmp/native.out" "$tmp/out" | head -4 | tr '\n' ' ')"; }

echo "-- the file programs: native output under run, --serial, --attach 5/s"
# (a serialized run of the log takes ~500 cue points a line, its lines being copied on a
# thread stack that the thread's creator shares: 3 lines a thread there)
for run in "files basic|,--serial,--attach 5/s" "files_glibc basic|,--serial,--attach 5/s" \
           "files log 200|,--attach 5/s" "files_glibc log 200|" "files log 3|--serial"; do
  prog=${run%%|*}; IFS=, read -r -a modes <<<"${run#*|},"
  # shellcheck disable=SC2086
  native "$G/"$prog
  for mode in "${modes[@]}"; do
    # shellcheck disable=SC2086
    vmm "$prog ${mode:-free}" 0 "" -- run --no-control --quiet $mode "$G/"$prog
    same "$prog ${mode:-free}"
  done
done
native "$G/files" counters 300
vmm "counters --attach 5/s, worker VMs checked" 0 "" -- run --no-control --quiet --attach 5/s --check-workers "$G/files" counters 300
same "counters --attach: simulations' writes vanished at every restore"
grep -Eq "diverged|gave another result" "$tmp/err" && bad "counters --attach: a replay or a worker diverged" \
  || ok "counters --attach: no divergence, workers agree"

echo "-- over host files in a granted cwd: copied in, renamed, removed; the host unchanged"
mk_host() { rm -rf "$1"; mkdir -p "$1/sub"; for f in a b c; do echo "host $f" >"$1/$f.txt"; done; echo "host d" >"$1/sub/d.txt"; }
mk_host "$tmp/hnative"; (cd "$tmp/hnative" && "$G/files" host >"$tmp/native.out" 2>&1)
mk_host "$tmp/hgrant"
state() { (cd "$tmp/hgrant" && find . -printf '%p %y %s %m\n' | sort && find . -type f -exec sha256sum {} + | sort); }
hbefore=$(state)
cd "$tmp/hgrant" || exit 1
for mode in "" --serial "--attach 5/s"; do
  # shellcheck disable=SC2086
  vmm "files host ${mode:-free}" 0 "" -- run --no-control --quiet --ro-dir . $mode "$G/files" host
  same "files host ${mode:-free}"
done
cd "$tmp/cwd" || exit 1
[ "$(state)" = "$hbefore" ] && ok "the granted host files are unchanged" || bad "the granted host directory changed"

echo "-- a crash after writing files: the dump lists them, its replay sees them"
native "$G/files" crash 2>/dev/null
want=$(grep "^digest" "$tmp/native.out")
for f in before.txt after.txt; do sha256sum <"$tmp/native/$f" | cut -c1-16 >>"$tmp/native.sha"; done
rm -f /tmp/jinx-files-part0.txt /tmp/jinx-files-part1.txt # the native run's
jt "jinx test finds the crash" 1 "BUG FOUND" -- --budget 10s --seeds 1-1 "$G/files" crash
d=$(ls "$tmp"/dumps/files-*.jinxdump 2>/dev/null | head -1)
if [ -n "$d" ]; then
  "$CTL" inspect "$d" >"$tmp/inspect" 2>&1
  grep -q "^written: 4 files" "$tmp/inspect" && ok "the dump lists the 4 files written" || bad "no written files in inspect: $(grep -A4 written "$tmp/inspect")"
  n=0; while read -r s; do grep -q "sha256 $s" "$tmp/inspect" && n=$((n+1)); done <"$tmp/native.sha"
  [ "$n" = 2 ] && ok "... with the native files' SHA-256" || bad "SHA-256 of the written files differ from native"
  vmm "its replay reproduces the crash" 139 "replay reproduced the dump's crash" -- replay "$d"
  grep -qxF "$want" "$tmp/out" && ok "... and reads the same files ('$want')" || bad "replay's digest differs from native '$want'"
else bad "no dump"; fi
vmm "--out-dir copies what the program wrote" 139 "jinx: 4 files the program wrote .* copied to" \
  -- run --no-control --out-dir "$tmp/outdir" "$G/files" crash
cmp -s "$tmp/native/before.txt" "$tmp/outdir/$tmp/cwd/before.txt" && cmp -s "$tmp/native/after.txt" "$tmp/outdir/$tmp/cwd/after.txt" \
  && [ -f "$tmp/outdir/tmp/jinx-files-part1.txt" ] && ok "... at DIR/<path>, the native bytes" || bad "out-dir contents: $(find "$tmp/outdir" -type f | head -5 | tr '\n' ' ')"

echo "-- bounded memory: a jinx limit, never a bug"
vmm "more than --file-mem: ENOSPC, listed as a jinx limit" 1 \
  "jinx limit: the program wrote more than 8 MiB of files; raise it with --file-mem SIZE" \
  -- run --no-control --file-mem 8M "$G/files" big 16
jt "jinx test: could not test" 2 "could not test: the program wrote more than 8 MiB of files, raise it with --file-mem SIZE" \
  -- --budget 5s --seeds 1-1 --file-mem 8M "$G/files" big 16
vmm "within --file-mem: written" 0 "big: 4 MiB written" -- run --no-control --file-mem 8M "$G/files" big 4

echo "-- jinx test on the file programs: nothing found"
jt "files log" 0 "nothing found" -- --budget 4s --seeds 1-2 "$G/files" log
jt "files_glibc basic" 0 "nothing found" -- --budget 3s --seeds 1-1 "$G/files_glibc" basic

[ -z "$(ls -A "$tmp/cwd")" ] && ok "nothing was written on the host (the scratch cwd is empty)" \
  || { ls -la "$tmp/cwd"; bad "files appeared in the cwd"; }
[ "$(host_tmp)" = "$tmp_before" ] && ok "... nor in /tmp" || bad "/tmp/jinx-files-* appeared: $(ls -d /tmp/jinx-files-* | head -3)"
summary "files"
