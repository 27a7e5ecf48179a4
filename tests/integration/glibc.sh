#!/usr/bin/env bash
# glibc and C++ builds, held to the same manifests as the musl builds: every C image's
# glibc build (images/bin/glibc/NAME, gcc -static -pthread) and every C++ image
# (images/bin/NAME from images/src/NAME.cpp, g++ -static -pthread) must end with its
# manifest's `ok` or `expected` outcome (the bug-free ones only `ok`) in free execution,
# under --serial (round-robin and continue) and under --attach 5/s, never with "could not
# run" (125), a KVM internal error or an "unsupported syscall" warning (issue 15);
# `jinx test` must find each buggy one's bug (exit 1, a dump with the expected status) and nothing in the bug-free ones (exit 0). Then
# determinism.sh's and replay.sh's checks on glibc builds (IMAGE_DIR=images/bin/glibc).
# Env: BUDGET (jinx test budget of a buggy image, seconds, default 60: it stops at the
# first find), CLEAN_BUDGET (of a bug-free image, default 8), GLIBC_DETERMINISM and
# GLIBC_REPLAY (the glibc builds those two scripts run on), GLIBC_IMAGES (names of the
# images checked, default every images/*.manifest), SEEDS (free runs, default "1 2");
# make test runs a subset (tests/quick.conf), make check-long all.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; JINX="$BIN/jinx"
SEEDS=${SEEDS:-1 2}
BUDGET=${BUDGET:-60}; CLEAN_BUDGET=${CLEAN_BUDGET:-8}
GLIBC_DETERMINISM=${GLIBC_DETERMINISM:-circle wsq correct}
GLIBC_REPLAY=${GLIBC_REPLAY:-circle wsq}
mk_tmp
field() { sed -n "s/^$2: *//p" "images/$1.manifest" | head -1; }
status_of() { case "$1" in "exit "*) echo "${1#exit }" ;; deadlock) echo 123 ;;
  "signal "*) local s=${1#signal SIG}; echo $((128 + $(kill -l "$s"))) ;; none) echo none ;; *) echo "?" ;; esac; }
need_python

# outcome LABEL OK BAD: judges $st and $tmp/err of the last run.
outcome() {
  local label=$1 want_ok=$2 want_bad=$3
  if grep -q "internal error" "$tmp/err"; then bad "$label: KVM internal error (status $st)"; grep -E "error|instruction" "$tmp/err" | head -5
  elif grep -q "unsupported syscall" "$tmp/err"; then bad "$label: $(grep -m1 'unsupported syscall' "$tmp/err")"
  elif [ "$st" = "$want_ok" ] || [ "$st" = "$want_bad" ]; then ok "$label: status $st"
  else bad "$label: status $st, wanted $want_ok${want_bad:+ or $want_bad}"; grep -v '^jinx-vmm: rounds: {' "$tmp/err" | tail -8; fi
}

# judge_run LABEL: a background run's outcome, as outcome judges a foreground one.
judge_run() { cp "$bg_err" "$tmp/err"; st=$bg_st; outcome "$1" "$good" "$bug"; }

images=()
for m in images/*.manifest; do
  name=$(basename "$m" .manifest)
  [ -n "${GLIBC_IMAGES:-}" ] && ! [[ " $GLIBC_IMAGES " == *" $name "* ]] && continue
  if [ -f "images/src/$name.cpp" ]; then images+=("images/bin/$name")
  else images+=("images/bin/glibc/$name"); fi
done

for img in "${images[@]}"; do
  name=$(basename "$img")
  [ -x "$img" ] || { bad "$img: not built (make)"; continue; }
  args=$(field "$name" args); good=$(status_of "$(field "$name" ok)"); bug=$(status_of "$(field "$name" expected)")
  [ "$bug" = none ] && bug=""
  sargs=$args; [ "$name" = throughput ] && sargs="pingpong 30" # its default run is long serialized

  # The free runs and the two serialized policies side by side (lib.sh's bg_start): their
  # outcomes are the program's or the schedule's (a serialized run uses one CPU; no
  # wall-clock bound here is tight), then judged in order.
  for seed in $SEEDS; do
    # shellcheck disable=SC2086
    bg_start "$img free (seed $seed)" -- timeout 120 "$VMM" run --no-control --timeout 60s --seed $seed "$img" $args
  done
  for pol in roundrobin continue; do
    # shellcheck disable=SC2086
    bg_start "$img --serial --policy $pol" -- timeout 200 "$VMM" run --no-control --timeout 150s --serial --policy $pol "$img" $sargs
  done
  bg_judge judge_run
  # shellcheck disable=SC2086
  timeout 200 "$VMM" run --no-control --timeout 150s --stats --attach 5/s "$img" $args >/dev/null 2>"$tmp/err"; st=$?
  outcome "$img --attach 5/s" "$good" "$bug"
  div=$(sed -n 's/.*"divergences":\([0-9]*\).*/\1/p' "$tmp/err")
  [ "${div:-0}" = 0 ] || bad "$img --attach 5/s: $div replay divergences"

  if [ -n "$bug" ]; then
    # shellcheck disable=SC2086
    timeout $((BUDGET + 120)) "$JINX" test --budget "${BUDGET}s" --json --dump-dir "$tmp/d-$name" "$img" -- $args \
      >"$tmp/j.json" 2>"$tmp/err"; st=$?
    got=$(jget "$tmp/j.json" 'd["status"]'); dump=$(jget "$tmp/j.json" 'd["dump"]')
    if [ $st = 1 ] && [ "$got" = "$bug" ] && [ -f "$dump" ]; then ok "$img: jinx test found the bug (status $got, seed $(jget "$tmp/j.json" 'd["seed"]'))"
    else bad "$img: jinx test exit $st, dump status '$got', wanted exit 1 with status $bug"; tail -5 "$tmp/err"; fi
  else
    # shellcheck disable=SC2086
    timeout $((CLEAN_BUDGET + 120)) "$JINX" test --budget "${CLEAN_BUDGET}s" --dump-dir "$tmp/d-$name" "$img" -- $args \
      >"$tmp/out" 2>"$tmp/err"; st=$?
    if [ $st = 0 ] && grep -q "nothing found" "$tmp/out" "$tmp/err"; then ok "$img: jinx test found nothing in ${CLEAN_BUDGET} s"
    else bad "$img: jinx test exit $st, wanted 0 (nothing found)"; tail -n 5 "$tmp/out" "$tmp/err"; fi
  fi
  rm -rf "$tmp/d-$name"
done

# Determinism and replayable dumps on glibc builds: the same scripts as for musl.
echo "== determinism.sh on images/bin/glibc: $GLIBC_DETERMINISM"
if IMAGE_DIR=images/bin/glibc IMAGES="$GLIBC_DETERMINISM" RUNS=${RUNS:-20} BIN=$BIN tests/integration/determinism.sh; then
  ok "determinism.sh on glibc builds ($GLIBC_DETERMINISM)"; else bad "determinism.sh on glibc builds ($GLIBC_DETERMINISM)"; fi
echo "== replay.sh on images/bin/glibc: $GLIBC_REPLAY"
if IMAGE_DIR=images/bin/glibc IMAGES="$GLIBC_REPLAY" REPLAYS=${REPLAYS:-5} BIN=$BIN tests/integration/replay.sh; then
  ok "replay.sh on glibc builds ($GLIBC_REPLAY)"; else bad "replay.sh on glibc builds ($GLIBC_REPLAY)"; fi

summary "glibc/C++ image tests"
