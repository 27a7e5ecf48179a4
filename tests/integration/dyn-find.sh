#!/usr/bin/env bash
# `jinx test` on the dynamic builds (issue 15's "jinx test finds the dynamic builds' bugs
# and their dumps replay"): for every buggy image with a manifest and every buggy corpus
# program, the dynamic build (images/bin/dyn/NAME, images/bin/dyn/corpus/NAME: gcc
# -pthread / g++, host glibc loaded by ld-linux in the guest) is given to `jinx test`,
# which must exit 1 with a dump whose status is the manifest's `expected` one, and
# `jinx-vmm replay` of that dump must reproduce it (status and "replay reproduced"). A
# dump `jinx test` itself calls not replayable (a crash met in free execution that its
# replay search did not find again) is a failure: the done-when asks for replaying dumps.
# Prints one line per program (seed, schedules to the bug, time) and a summary.
#   tests/integration/dyn-find.sh            every buggy image and corpus program
#   ONLY="circle order-init" tests/integration/dyn-find.sh
# Env: BIN (default bin), BUDGET (jinx test budget per program, seconds, default 60).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
VMM="$BIN/jinx-vmm"; JINX="$BIN/jinx"; BUDGET=${BUDGET:-60}
mk_tmp
n=0
field() { sed -n "s/^$2:[[:space:]]*//p" "$1" | head -1 | sed 's/[[:space:]]*$//'; }
status_of() { case "$1" in "exit "*) echo "${1#exit }" ;; deadlock) echo 123 ;;
  "signal SIG"*) local s; s=$(kill -l "${1#signal SIG}" 2>/dev/null) && echo $((128 + s)) || echo "?" ;;
  *) echo none ;; esac; }
need_python
[ -x "$JINX" ] && [ -x "$VMM" ] || { echo "FAIL no $JINX or $VMM (run make -j2)"; exit 1; }

for m in images/*.manifest images/corpus/*.manifest; do
  name=$(basename "$m" .manifest)
  case "$m" in images/corpus/*) dyn=images/bin/dyn/corpus/$name ;; *) dyn=images/bin/dyn/$name ;; esac
  [ -n "${ONLY:-}" ] && ! [[ " $ONLY " == *" $name "* ]] && continue
  bug=$(status_of "$(field "$m" expected)")
  [ "$bug" = none ] && continue
  n=$((n + 1))
  [ -x "$dyn" ] || { bad "$name: $dyn not built (make images)"; continue; }
  read -r -a args <<<"$(field "$m" args)"
  rm -rf "$tmp/d"; t0=$(date +%s.%N)
  timeout $((BUDGET + 120)) "$JINX" test --budget "${BUDGET}s" --json --dump-dir "$tmp/d" "$dyn" -- "${args[@]}" \
    >"$tmp/j.json" 2>"$tmp/err"; st=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  got=$(jget "$tmp/j.json" 'd["status"]'); dump=$(jget "$tmp/j.json" 'd["dump"]')
  if ! { [ $st = 1 ] && [ "$got" = "$bug" ] && [ -f "$dump" ]; }; then
    bad "$name (dynamic): jinx test exit $st, dump status '$got', wanted exit 1 with status $bug: $(tail -2 "$tmp/err")"
    continue
  fi
  how="seed $(jget "$tmp/j.json" 'd["seed"]'), $(jget "$tmp/j.json" 'd.get("schedules_to_bug","-")') schedules, $(printf %.1f "$secs") s"
  if grep -q "unsupported syscall" "$tmp/err"; then bad "$name (dynamic): $(grep -m1 unsupported "$tmp/err")"; continue; fi
  timeout 120 "$VMM" replay "$dump" >"$tmp/r" 2>&1; rst=$?
  if [ "$rst" = "$bug" ] && grep -q "replay reproduced" "$tmp/r"; then ok "$name (dynamic): found ($how), dump replays (status $rst)"
  else bad "$name (dynamic): found ($how) but replay gave status $rst: $(grep -v '^jinx-vmm:   ' "$tmp/r" | tail -2)"; fi
done
[ $n -gt 0 ] || bad "no program checked (ONLY='${ONLY:-}')"
echo "dyn-find: $n buggy dynamic builds; $pass found with replaying dumps, $fail failed"
[ $fail = 0 ]
