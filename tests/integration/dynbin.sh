#!/usr/bin/env bash
# Dynamically linked programs and the read-only file layer (docs/contract.md "Files"):
# every dynamic build (images/bin/dyn: gcc -pthread, g++) runs free with its manifest's
# `ok` or `expected` outcome and no "unsupported syscall"; dyn-files reads a file from
# --ro-dir, lists and mmaps it, and is refused every escape (.., absolute and relative
# symlinks out, an absolute path outside, /proc) and every write with the errno a program
# expects, nothing created on the host; cxx-tests' --filter reaches the program, and
# `jinx test` finds Circle.Area's bug in the C++ dynamic binary; a round-found dump of the
# dynamic circle replays. Env: BUDGET (jinx test budget, seconds, default 90).
set -u
BIN=${BIN:-bin}; VMM="$BIN/jinx-vmm"; JINX="$BIN/jinx"; BUDGET=${BUDGET:-90}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
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
expect read:/proc/self/environ "read /proc/self/environ: EACCES"
expect read:data/sub/../../secret/s.txt "read data/sub/../../secret/s.txt: EACCES"
expect write:data/in.txt "write data/in.txt: open EROFS creat EROFS mkdir EROFS unlink EROFS"
expect write:data/new "write data/new: open ENOENT creat EROFS mkdir EROFS unlink ENOENT"
expect write:"$d/made" "write $d/made: open ENOENT creat ENOENT mkdir ENOENT unlink ENOENT"
if [ -e "$d/data/new" ] || [ -e "$d/made" ] || [ "$(cat "$d/data/in.txt")" != "$(printf 'first line\nsecond')" ]; then
  bad "the guest changed the host: $(ls "$d" "$d/data")"; else ok "nothing created or changed on the host"; fi
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

# 4. a round-found dump of a dynamic program replays
rm -rf "$tmp/rd"; found=""
for seed in 1 2 3 4 5 6 7 8; do
  timeout 60 "$VMM" run --no-control --quiet --attach 5/s --seed $seed --dump-dir "$tmp/rd" images/bin/dyn/circle >/dev/null 2>&1
  found=$(ls "$tmp"/rd/*.jinxdump 2>/dev/null | head -1); [ -n "$found" ] && break
done
if [ -z "$found" ]; then bad "no dump of the dynamic circle in 8 seeds"
else
  timeout 60 "$VMM" replay "$found" >"$tmp/rp" 2>&1; st=$?
  if [ $st = 134 ]; then ok "dump of the dynamic circle replays (SIGABRT)"
  elif grep -q "no round records\|free execution" "$tmp/rp"; then ok "dynamic circle dump (free-execution crash: no replay to check)"
  else bad "replay of the dynamic circle: status $st: $(tail -3 "$tmp/rp")"; fi
fi

echo "dynbin: $pass passed, $fail failed"
[ $fail = 0 ]
