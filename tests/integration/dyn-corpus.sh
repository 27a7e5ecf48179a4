#!/usr/bin/env bash
# Dynamic builds (images/bin/dyn/NAME and images/bin/dyn/corpus/NAME: plain gcc -pthread,
# host glibc loaded by ld-linux in the guest) give the musl builds' outcomes, for every
# image with a manifest and every corpus program:
#  - free execution and --attach 20/s (rounds): the manifest's `ok` or `expected` status
#    (what images.sh and corpus.sh hold the musl builds to), no "unsupported syscall", no
#    replay divergence under --attach;
#  - --serial: the same status as the musl build under --serial (a serialized run is
#    deterministic: what it finds is the program's, not the libc's), or, where the two
#    libcs give the program different code and so different schedules, both within the
#    manifest's statuses (counted and listed, not failed).
# Env: BIN (default bin), ONLY="name ..." (a subset), DYN_TIMEOUT (per run, default 30s),
# DYN_JOBS (programs checked at a time, default 2).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
VMM="$BIN/jinx-vmm"; T=${DYN_TIMEOUT:-30s}; JOBS=${DYN_JOBS:-2}
mk_tmp
differ=()
ok() { pass=$((pass+1)); }
status_of() { case "$1" in "exit "*) echo "${1#exit }" ;; deadlock) echo 123 ;;
  "signal SIG"*) local n; n=$(kill -l "${1#signal SIG}" 2>/dev/null) && echo $((128 + n)) || echo "?" ;;
  *) echo none ;; esac; }
field() { sed -n "s/^$2:[[:space:]]*//p" "$1" | head -1 | sed 's/[[:space:]]*$//'; }
[ -x "$VMM" ] || { echo "FAIL no $VMM (run make -j2)"; exit 1; }

# run LABEL WANT_OK WANT_BUG IMAGE [options...] -- [args...]: sets st; prints "ok" or
# "FAIL ..." (check_one's output is counted by the caller).
run() {
  local label=$1 good=$2 bug=$3 img=$4; shift 4
  local opts=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  local err=$tmp/err.$BASHPID
  timeout 120 "$VMM" run --no-control --quiet --timeout "$T" "${opts[@]}" "$img" -- "$@" >/dev/null 2>"$err"; st=$?
  if grep -q "unsupported syscall" "$err"; then echo "FAIL $label: $(grep -m1 unsupported "$err")"; return; fi
  if [ "$st" != "$good" ] && [ "$st" != "$bug" ]; then echo "FAIL $label: status $st, want $good or $bug: $(tail -2 "$err")"; return; fi
  local div; div=$(sed -n 's/.*"divergences":\([0-9]*\).*/\1/p' "$err")
  [ "${div:-0}" = 0 ] || { echo "FAIL $label: $div replay divergences"; return; }
  echo ok
}

# check_one NAME GOOD BUG DYN MUSL ARGS...: the four runs of one program; prints one line
# per run ("ok", "FAIL ...") and "differ NAME(...)" when the --serial statuses differ.
check_one() {
  local name=$1 good=$2 bug=$3 dyn=$4 musl=$5; shift 5
  run "$name (dynamic) free" "$good" "$bug" "$dyn" --seed 1 -- "$@"
  run "$name (dynamic) --attach 20/s" "$good" "$bug" "$dyn" --stats --attach 20/s --seed 1 -- "$@"
  run "$name (dynamic) --serial" "$good" "$bug" "$dyn" --serial -- "$@"; local dst=$st
  timeout 120 "$VMM" run --no-control --quiet --timeout "$T" --serial "$musl" -- "$@" >/dev/null 2>&1; local mst=$?
  [ "$dst" = "$mst" ] || echo "differ $name(dyn $dst, musl $mst)"
}
# collect FILE: counts what a check_one printed.
collect() {
  local line
  while IFS= read -r line; do
    # shellcheck disable=SC2119 # this suite's ok counts silently, it takes no message
    case "$line" in ok) ok ;; "FAIL "*) bad "${line#FAIL }" ;; "differ "*) differ+=("${line#differ }") ;; esac
  done <"$1"
}

n=0
for m in images/*.manifest images/corpus/*.manifest; do
  name=$(basename "$m" .manifest)
  case "$m" in images/corpus/*) musl=images/bin/corpus/$name; dyn=images/bin/dyn/corpus/$name ;;
    *) musl=images/bin/$name; dyn=images/bin/dyn/$name ;; esac
  [ -n "${ONLY:-}" ] && ! [[ " $ONLY " == *" $name "* ]] && continue
  [ -x "$dyn" ] && [ -x "$musl" ] || { bad "$name: $dyn or $musl not built (make images)"; continue; }
  good=$(status_of "$(field "$m" ok)"); bug=$(status_of "$(field "$m" expected)")
  read -r -a args <<<"$(field "$m" args)"; [ "$name" = throughput ] && args=(pingpong 30) # long serialized
  n=$((n + 1))
  # DYN_JOBS programs at a time: nothing checked here depends on timing (any of the
  # manifest's statuses, no divergence, and --serial runs are deterministic).
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  check_one "$name" "$good" "$bug" "$dyn" "$musl" "${args[@]}" >"$tmp/res.$n" 2>&1 &
done
wait
for i in $(seq 1 "$n"); do collect "$tmp/res.$i"; done
[ $n -gt 0 ] || bad "no program checked (ONLY='${ONLY:-}')"
echo "dyn-corpus: $n programs; --serial status differs from the musl build's for ${#differ[@]}: ${differ[*]:-none}"
summary "dyn-corpus"
