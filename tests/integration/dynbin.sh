#!/usr/bin/env bash
# Dynamically linked programs and the read-only file layer (docs/contract.md "Files"):
# every dynamic build (images/bin/dyn: gcc -pthread, g++) runs free with its manifest's
# `ok` or `expected` outcome and no "unsupported syscall"; dyn-files reads a file from
# --ro-dir, lists and mmaps it, and is refused every escape (.., absolute and relative
# symlinks out, an absolute path outside, /proc/self/* but exe, maps, cmdline and environ, a symlink swapped
# between inside and outside while the guest reads through it) and every write with the errno a program
# expects, nothing created on the host; cxx-tests' --filter reaches the program, and
# `jinx test` finds Circle.Area's bug in the C++ dynamic binary and its dump replays;
# --serial gives the musl builds' outcomes, deterministically; a round-found dump of the
# dynamic circle replays; a dump of dyn-heldfile (a file held open across the crash)
# replays exactly and is refused once the file changes. Env: BUDGET (jinx test budget, seconds, default 90).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; JINX="$BIN/jinx"; BUDGET=${BUDGET:-90}
mk_tmp
field() { sed -n "s/^$2: *//p" "images/$1.manifest" | head -1; }
status_of() { case "$1" in "exit "*) echo "${1#exit }" ;; deadlock) echo 123 ;;
  "signal "*) local s=${1#signal SIG}; echo $((128 + $(kill -l "$s"))) ;; *) echo "?" ;; esac; }

# 1. every dynamic build of an image with a manifest, free execution
for m in images/*.manifest; do
  n=$(basename "$m" .manifest); img=images/bin/dyn/$n
  [ -x "$img" ] || { bad "$n: $img missing (make images)"; continue; }
  timeout 60 "$VMM" run --no-control --quiet "$img" >/dev/null 2>"$tmp/err"; st=$?
  want_ok=$(status_of "$(field "$n" ok)"); want_bad=$(status_of "$(field "$n" expected)")
  if grep -q "unsupported syscall" "$tmp/err"; then bad "$n: $(grep -m1 unsupported "$tmp/err")"
  elif [ "$st" = "$want_ok" ] || [ "$st" = "$want_bad" ]; then ok "$n (dynamic) free: status $st"
  else bad "$n (dynamic) free: status $st, want $want_ok or $want_bad: $(tail -2 "$tmp/err")"; fi
done

# 2. the file layer, seen by dyn-files
d=$tmp/tree; mkdir -p "$d/data/sub" "$d/secret"
printf 'first line\nsecond\n' > "$d/data/in.txt"; echo SECRET > "$d/secret/s.txt"
ln -s "$d/secret/s.txt" "$d/data/abs-link"; ln -s ../secret/s.txt "$d/data/rel-link"
ln -s in.txt "$d/data/inner-link"
files() { (cd "$d" && "$OLDPWD/$VMM" run --no-control --quiet --ro-dir data \
  "$OLDPWD/images/bin/dyn/dyn-files" "$@" 2>"$tmp/ferr"); }
expect() { # ARG WANT-LINE
  out=$(files "$1"); if [ "$out" = "$2" ]; then ok "dyn-files $1 -> $2"
  else bad "dyn-files $1: got '$out', want '$2' ($(tail -1 "$tmp/ferr"))"; fi; }
expect read:data/in.txt "read data/in.txt: 18 bytes (lseek end 18) first line"
expect read:data/inner-link "read data/inner-link: 18 bytes (lseek end 18) first line"
expect mmap:data/in.txt "mmap data/in.txt: first line"
expect stat:data/in.txt "stat data/in.txt: size 18"
expect list:data "list data: abs-link in.txt inner-link rel-link sub"
expect cwd "cwd OK"
expect read:data/nope "read data/nope: ENOENT"
expect read:data/in.txt/x "read data/in.txt/x: ENOTDIR"
expect read:data/../secret/s.txt "read data/../secret/s.txt: EACCES"
expect read:data/abs-link "read data/abs-link: EACCES"
expect read:data/rel-link "read data/rel-link: EACCES"
expect read:"$d/secret/s.txt" "read $d/secret/s.txt: EACCES"
expect read:/etc/passwd "read /etc/passwd: EACCES"
# /proc/self/environ, cmdline and maps are answered from the guest's own state (sanitizer
# runtimes read them at start, docs/sanitizers.md): the environment is empty without --env.
expect read:/proc/self/environ "read /proc/self/environ: 0 bytes (lseek end 0) "
out=$(files read:/proc/self/maps)
case "$out" in "read /proc/self/maps: "[1-9]*" bytes (lseek end "*") 5555"*"-"*" r--p "*) ok "dyn-files /proc/self/maps: the guest's own mappings (${out:0:60}...)" ;;
  *) bad "dyn-files /proc/self/maps: $out" ;; esac
expect read:data/sub/../../secret/s.txt "read data/sub/../../secret/s.txt: EACCES"
# /proc and /dev: /proc/self/exe (the program, granted) and the three above; the rest refused
expect readlink:/proc/self/exe "readlink /proc/self/exe: $(realpath images/bin/dyn/dyn-files)"
for p in /proc/self/mem /proc/self/fd/0 /proc/self/root/etc/passwd \
         /proc/self/cwd/secret/s.txt /proc/1/environ /proc/self/status /dev/null /sys/kernel/notes; do
  out=$(files read:$p stat:$p readlink:$p | tr '\n' ' ')
  case "$out" in "read $p: E"*" stat $p: E"*" readlink $p: E"*) ok "dyn-files $p refused: ${out%% stat*}" ;;
    *) bad "dyn-files $p: $out" ;; esac
done
# Writes below the cwd, /tmp and the grants work as on Linux, privately (docs/guest.md);
# elsewhere they are refused.
expect write:data/in.txt "write data/in.txt: open OK creat OK mkdir EEXIST unlink OK"
expect write:data/new "write data/new: open ENOENT creat OK mkdir EEXIST unlink OK"
expect write:"$d/made" "write $d/made: open ENOENT creat OK mkdir EEXIST unlink OK"
expect write:/etc/jinx-made "write /etc/jinx-made: open ENOENT creat EACCES mkdir EACCES unlink ENOENT"
if [ -e "$d/data/new" ] || [ -e "$d/made" ] || [ "$(cat "$d/data/in.txt")" != "$(printf 'first line\nsecond')" ]; then
  bad "the guest changed the host: $(ls "$d" "$d/data")"; else ok "nothing created or changed on the host"; fi
# A symlink swapped while the guest runs: a host loop flips data/swap (and data/swapdir, a
# path component) between a target inside the grant and one outside, atomically (rename
# over), while the guest opens and reads through it over and over. It must never read the
# outside content; both sides of the flip must have been seen (the race was real).
echo inner > "$d/data/sub/s.txt"; ln -s in.txt "$d/data/swap"; ln -s sub "$d/data/swapdir"
python3 - "$d/data" "$tmp/stop-swap" <<'PY' &
import os, sys
d, stop = sys.argv[1], sys.argv[2]
flips = [("swap", "in.txt", "../secret/s.txt"), ("swapdir", "sub", "../secret")]
i = 0
while not os.path.exists(stop):
    for name, a, b in flips:
        os.symlink(b if i % 2 else a, os.path.join(d, name + ".new"))
        os.replace(os.path.join(d, name + ".new"), os.path.join(d, name))
    i += 1
PY
swapper=$!
for target in data/swap data/swapdir/s.txt; do
  out=$(files loop:3000:$target); echo "     $out"
  if echo "$out" | grep -Eq "^loop $target: inside [1-9][0-9]* secret 0 refused [1-9][0-9]*$"; then
    ok "symlink swapped under the guest ($target): outside content never read"
  else bad "symlink swapped under the guest ($target): $out ($(tail -1 "$tmp/ferr"))"; fi
done
touch "$tmp/stop-swap"; wait "$swapper"
rm -f "$d/data/swap" "$d/data/swapdir" "$d/data/sub/s.txt"
out=$("$VMM" run --no-control --ro-dir "$d/nonexistent" images/bin/dyn/dyn-files cwd 2>&1); st=$?
[ $st = 125 ] && echo "$out" | grep -q "nonexistent" && ok "--ro-dir of a missing directory refused (125)" \
  || bad "--ro-dir missing: status $st: $out"

# 3. C++: --filter reaches the program; jinx test finds the Circle bug
out=$("$VMM" run --no-control --quiet images/bin/dyn/cxx-tests -- --filter='Counter.*:Queue.*' 2>&1); st=$?
if [ $st = 0 ] && echo "$out" | grep -q "PASSED  \] 2 tests" && ! echo "$out" | grep -q Circle; then
  ok "cxx-tests --filter ran the 2 selected tests"; else bad "cxx-tests --filter: status $st: $out"; fi
"$JINX" test images/bin/dyn/cxx-tests --budget "${BUDGET}s" --dump-dir "$tmp/dumps" -- --filter='Circle.*' >"$tmp/jt" 2>&1; st=$?
if [ $st = 1 ] && grep -q "GetArea" "$tmp/jt"; then ok "jinx test found Circle.Area's bug in the dynamic C++ binary"
else bad "jinx test cxx-tests: status $st: $(tail -5 "$tmp/jt")"; fi
# The dump the report names: a bug first met in free execution (a stress run) leaves that
# dump too, and the search from snapshots then writes the one that replays.
cdump=$(sed -n 's/.*jinx-vmm replay \([^ ]*\.jinxdump\).*/\1/p' "$tmp/jt" | head -1)
if [ -n "$cdump" ]; then timeout 60 "$VMM" replay "$cdump" >"$tmp/cr" 2>&1; st=$?
  if [ $st = 134 ] && grep -q "replay reproduced" "$tmp/cr"; then ok "cxx-tests' Circle dump replays"
  elif grep -q "^  replay: .*the search from snapshots did not" "$tmp/jt"; then
    ok "cxx-tests' Circle bug met in free execution, and the report says its dump does not replay"
  else bad "replay of the cxx-tests dump: status $st: $(grep -v '^jinx-vmm:   ' "$tmp/cr" | tail -3)"; fi
else bad "jinx test cxx-tests names no dump: $(grep -E 'next|replay' "$tmp/jt" | head -3)"; fi

# --serial: dynamic builds give the musl builds' outcomes, and the same trace twice
for n in circle cxx-race; do
  timeout 60 "$VMM" run --no-control --quiet --serial "images/bin/$n" >/dev/null 2>&1; want=$?
  timeout 60 "$VMM" run --no-control --quiet --serial "images/bin/dyn/$n" >/dev/null 2>"$tmp/se"; st=$?
  if [ $st = "$want" ] && ! grep -q unsupported "$tmp/se"; then ok "$n (dynamic) --serial: status $st, as the musl build"
  else bad "$n (dynamic) --serial: status $st, the musl build $want: $(tail -2 "$tmp/se")"; fi
done
for i in 1 2; do timeout 60 "$VMM" run --no-control --quiet --serial --trace "$tmp/st.$i" images/bin/dyn/circle >/dev/null 2>&1; done
if [ -s "$tmp/st.1" ] && cmp -s "$tmp/st.1" "$tmp/st.2"; then ok "dynamic circle --serial: the same trace twice"
else bad "dynamic circle --serial traces differ or are empty"; fi

# 4. a round-found dump of a dynamic program replays
rm -rf "$tmp/rd"; found=""
# One round per run, taken at the first clone: about 4 runs in 10 meet the bug (8 seeds all
# missed once in CI), so up to 24 seeds (a few seconds each).
statuses=""
for seed in $(seq 1 24); do
  timeout 60 "$VMM" run --no-control --quiet --attach 5/s --seed $seed --dump-dir "$tmp/rd" images/bin/dyn/circle >/dev/null 2>"$tmp/rderr"
  statuses="$statuses $?"
  found=$(ls "$tmp"/rd/*.jinxdump 2>/dev/null | head -1); [ -n "$found" ] && break
done
# On a miss, say how each run ended and what the last one printed: 24 misses in a row
# at ~4 in 10 is not chance (it happened once in CI, cause unknown).
if [ -z "$found" ]; then bad "no dump of the dynamic circle in 24 seeds (statuses:$statuses; last run: $(tail -3 "$tmp/rderr" | tr '\n' ' '))"
else
  timeout 60 "$VMM" replay "$found" >"$tmp/rp" 2>&1; st=$?
  if [ $st = 134 ]; then ok "dump of the dynamic circle replays (SIGABRT)"
  elif grep -q "no round records\|free execution" "$tmp/rp"; then ok "dynamic circle dump (free-execution crash: no replay to check)"
  else bad "replay of the dynamic circle: status $st: $(tail -3 "$tmp/rp")"; fi
fi

# 5. files are guest state: dyn-heldfile holds a --ro-dir file open across the crash; its
# dump records the file, its snapshot the descriptor and offset, so the replay (from
# another directory) is exact; after the file changes, replay refuses (status 2).
hd=$tmp/held; mkdir -p "$hd"; head -c 300 /dev/urandom > "$hd/radii"
(cd "$hd" && "$OLDPWD/$JINX" test --budget "${BUDGET}s" --dump-dir dumps --ro-dir . \
  "$OLDPWD/images/bin/dyn/dyn-heldfile" -- radii) >"$tmp/ht" 2>&1; st=$?
hdump=$(ls "$hd"/dumps/*.jinxdump 2>/dev/null | head -1)
if [ $st = 1 ] && [ -n "$hdump" ]; then ok "jinx test found dyn-heldfile's bug (file held open)"
  "$BIN/jinxctl" inspect --json "$hdump" > "$tmp/hj" 2>&1
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=[x for x in d["files"] if x["path"]==sys.argv[2]]; sys.exit(not (f and f[0]["size"]==300 and f[0]["now"]=="unchanged" and d["ro_dirs"]==[sys.argv[3]]))' \
      "$tmp/hj" "$(realpath "$hd/radii")" "$(realpath "$hd")"; then ok "inspect --json lists the held file and the --ro-dir"
  else bad "inspect --json files: $(head -c 400 "$tmp/hj")"; fi
  timeout 60 "$VMM" replay "$hdump" >"$tmp/hr" 2>&1; st=$?
  if [ $st = 134 ] && grep -q "replay reproduced" "$tmp/hr"; then ok "dyn-heldfile dump replays exactly (descriptor and offset restored)"
  else bad "replay of dyn-heldfile: status $st: $(grep -v '^jinx-vmm:   ' "$tmp/hr" | tail -3)"; fi
  printf x >> "$hd/radii"
  timeout 60 "$VMM" replay "$hdump" >"$tmp/hr" 2>&1; st=$?
  if [ $st = 2 ] && grep -q "radii, which the program read, has changed" "$tmp/hr"; then ok "replay refuses the dump after its file changed (status 2)"
  else bad "replay after the file changed: status $st: $(tail -2 "$tmp/hr")"; fi
  "$BIN/jinxctl" inspect "$hdump" 2>&1 | grep -q "radii (300 bytes, .*CHANGED now)" && ok "inspect shows the file CHANGED" \
    || bad "inspect does not show the changed file: $("$BIN/jinxctl" inspect "$hdump" 2>&1 | grep radii)"
else bad "jinx test dyn-heldfile: status $st: $(tail -5 "$tmp/ht")"; fi

summary "dynbin"
