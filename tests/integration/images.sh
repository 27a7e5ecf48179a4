#!/usr/bin/env bash
# Boots every image in images/ as its manifest describes: the plain build must end with
# its `ok` outcome or its bug's `expected` outcome (never anything else; the correct
# program only ever `ok`), and the widened build (-DWIDEN_WINDOW) must show the bug's
# expected outcome, reported by jinx-vmm with the right kind.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"
status_of() { # outcome text -> exit status
  case "$1" in
    "exit "*) echo "${1#exit }" ;;
    deadlock) echo 123 ;;
    "signal "*) local s=${1#signal SIG}; echo $((128 + $(kill -l "$s"))) ;;
    none) echo none ;;
    *) echo "?" ;;
  esac
}
field() { sed -n "s/^$2: *//p" "$1" | head -1; }

for m in images/*.manifest; do
  name=$(field "$m" name); args=$(field "$m" args)
  ok=$(status_of "$(field "$m" ok)"); bad=$(status_of "$(field "$m" expected)")
  for run in 1 2 3; do
    # shellcheck disable=SC2086
    timeout 120 "$VMM" run --timeout 60s --seed $run "images/bin/$name" $args >/dev/null 2>/tmp/jinx-img-err.$$; got=$?
    if [ "$got" = "$ok" ] || [ "$got" = "$bad" ]; then pass=$((pass+1)); echo "ok   $name run $run (status $got)";
    else fail=$((fail+1)); echo "FAIL $name run $run: status $got, wanted $ok or $bad"; head -20 /tmp/jinx-img-err.$$; fi
  done
  [ -x "images/bin/widen/$name" ] || continue
  wargs=$(field "$m" widened_args); [ -n "$wargs" ] || wargs=$args
  seen=0
  for run in $(seq 1 10); do
    # shellcheck disable=SC2086
    timeout 120 "$VMM" run --timeout 60s --seed $run "images/bin/widen/$name" $wargs >/dev/null 2>/tmp/jinx-img-err.$$; got=$?
    if [ "$got" = "$bad" ]; then seen=1; break; fi
    if [ "$got" != "$ok" ]; then break; fi
  done
  if [ $seen = 1 ]; then pass=$((pass+1)); echo "ok   $name widened shows its bug (status $got, run $run)";
  else fail=$((fail+1)); echo "FAIL $name widened: status $got, wanted $bad"; head -20 /tmp/jinx-img-err.$$; fi
done
rm -f /tmp/jinx-img-err.$$
summary "image tests"
