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
# Env: BIN (default bin), ONLY="name ..." (a subset), DYN_TIMEOUT (per run, default 30s).
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${BIN:-bin}; VMM="$BIN/jinx-vmm"; T=${DYN_TIMEOUT:-30s}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0; differ=()
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
status_of() { case "$1" in "exit "*) echo "${1#exit }" ;; deadlock) echo 123 ;;
  "signal SIG"*) local n; n=$(kill -l "${1#signal SIG}" 2>/dev/null) && echo $((128 + n)) || echo "?" ;;
  *) echo none ;; esac; }
field() { sed -n "s/^$2:[[:space:]]*//p" "$1" | head -1 | sed 's/[[:space:]]*$//'; }
[ -x "$VMM" ] || { echo "FAIL no $VMM (run make -j2)"; exit 1; }

# run LABEL WANT_OK WANT_BUG IMAGE [options...] -- [args...]: sets st
run() {
  local label=$1 good=$2 bug=$3 img=$4; shift 4
  local opts=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  timeout 120 "$VMM" run --no-control --quiet --timeout "$T" "${opts[@]}" "$img" -- "$@" >/dev/null 2>"$tmp/err"; st=$?
  if grep -q "unsupported syscall" "$tmp/err"; then bad "$label: $(grep -m1 unsupported "$tmp/err")"; return; fi
  if [ "$st" != "$good" ] && [ "$st" != "$bug" ]; then bad "$label: status $st, want $good or $bug: $(tail -2 "$tmp/err")"; return; fi
  local div; div=$(sed -n 's/.*"divergences":\([0-9]*\).*/\1/p' "$tmp/err")
  [ "${div:-0}" = 0 ] || { bad "$label: $div replay divergences"; return; }
  ok
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
  run "$name (dynamic) free" "$good" "$bug" "$dyn" --seed 1 -- "${args[@]}"
  run "$name (dynamic) --attach 20/s" "$good" "$bug" "$dyn" --stats --attach 20/s --seed 1 -- "${args[@]}"
  run "$name (dynamic) --serial" "$good" "$bug" "$dyn" --serial -- "${args[@]}"; dst=$st
  timeout 120 "$VMM" run --no-control --quiet --timeout "$T" --serial "$musl" -- "${args[@]}" >/dev/null 2>&1; mst=$?
  [ "$dst" = "$mst" ] || differ+=("$name(dyn $dst, musl $mst)")
done
[ $n -gt 0 ] || bad "no program checked (ONLY='${ONLY:-}')"
echo "dyn-corpus: $n programs; --serial status differs from the musl build's for ${#differ[@]}: ${differ[*]:-none}"
echo "dyn-corpus: $pass passed, $fail failed"
[ $fail = 0 ]
