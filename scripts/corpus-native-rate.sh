#!/usr/bin/env bash
# Native failure rate of test programs: runs each binary N times on Linux (no Jinx), one
# run at a time, with a timeout that turns a hang (a deadlock) into an outcome, and counts
# the runs whose outcome is not the manifest's `ok`.
#
#   scripts/corpus-native-rate.sh [options] [NAME...]
#
#   --runs N          runs per program (default 1000)
#   --timeout DUR     per-run bound for timeout(1) (default 2s); a run that hits it
#                     counts as "deadlock"
#   --bin-dir DIR     where the binaries are (default images/bin/corpus)
#   --manifest-dir D  where NAME.manifest files are (default images/corpus)
#   --widen           run DIR/widen/NAME (the -DWIDEN_WINDOW build) instead
#   --update          write native_runs, native_failures, native_failure_kinds,
#                     native_failure_rate, measured_on into each manifest (with --widen:
#                     widened_runs ... widened_measured_on)
#   --json            print one JSON object {"runs":N,"timeout":..,"programs":[...]}
#                     instead of the table
#   --quiet           no progress dots on stderr
#   NAME...           programs (default: every NAME.manifest in the manifest dir)
#
# The same works for the other images: --bin-dir images/bin --manifest-dir images.
# Outcome classes: `exit N`, `signal SIGxxx`, `deadlock`. A program's args come from its
# manifest's `args`; `ok` defaults to `exit 0`. Exit status: 0; 2 on a usage error or a
# missing manifest or binary.
set -u
cd "$(dirname "$0")/.." || exit 2

runs=1000 tmo=2s bindir=images/bin/corpus mfdir=images/corpus widen=0 update=0 json=0
quiet=0 names=()
need() { [ $# -ge 2 ] || { echo "corpus-native-rate: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) need "$@"; runs="$2"; shift 2 ;;
    --runs=*) runs="${1#*=}"; shift ;;
    --timeout) need "$@"; tmo="$2"; shift 2 ;;
    --timeout=*) tmo="${1#*=}"; shift ;;
    --bin-dir) need "$@"; bindir="$2"; shift 2 ;;
    --bin-dir=*) bindir="${1#*=}"; shift ;;
    --manifest-dir) need "$@"; mfdir="$2"; shift 2 ;;
    --manifest-dir=*) mfdir="${1#*=}"; shift ;;
    --widen) widen=1; shift ;;
    --update) update=1; shift ;;
    --json) json=1; shift ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; names+=("$@"); break ;;
    -*) echo "corpus-native-rate: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
case "$runs" in ''|*[!0-9]*|0) echo "corpus-native-rate: --runs needs a positive number, not '$runs'" >&2; exit 2 ;; esac
case "$tmo" in ''|*[!0-9.smh]*) echo "corpus-native-rate: --timeout needs a duration like 2s, not '$tmo'" >&2; exit 2 ;; esac
[ -d "$mfdir" ] || { echo "corpus-native-rate: no manifest dir $mfdir" >&2; exit 2; }
if [ ${#names[@]} -eq 0 ]; then
  for m in "$mfdir"/*.manifest; do [ -f "$m" ] && names+=("$(basename "$m" .manifest)"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "corpus-native-rate: no manifests in $mfdir" >&2; exit 2; }
[ $widen -eq 1 ] && bindir="$bindir/widen"

ulimit -c 0

. scripts/manifest-lib.sh
host_desc() {
  printf '%s, Linux %s %s, %s CPUs, loadavg %s at start' "$(date -u +%Y-%m-%dT%H:%MZ)" \
    "$(uname -r)" "$(uname -m)" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)"
}
jstr() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }

status=0 first=1
if [ $json -eq 1 ]; then printf '{"runs":%d,"timeout":"%s","widen":%s,"programs":[' "$runs" "$tmo" \
  "$([ $widen -eq 1 ] && echo true || echo false)"
else printf '%-24s %6s %6s %8s %8s  %s\n' program runs fail rate expected "failure kinds"; fi
for name in "${names[@]}"; do
  mf="$mfdir/$name.manifest" bin="$bindir/$name"
  if [ ! -f "$mf" ]; then echo "corpus-native-rate: no manifest $mf" >&2; status=2; continue; fi
  if [ ! -x "$bin" ]; then echo "corpus-native-rate: no binary $bin (run make -j2 images)" >&2; status=2; continue; fi
  ok="$(mf_get "$mf" ok)"; expected="$(mf_get "$mf" expected)"
  read -r -a args <<<"$(mf_get "$mf" args)"
  [ -n "$ok" ] || ok="exit 0"
  desc="$(host_desc)"
  declare -A counts=()
  fail=0 exp=0
  for ((i = 1; i <= runs; i++)); do
    # the subshell keeps bash's "Aborted"/"Segmentation fault" job messages quiet
    (timeout -s KILL "$tmo" "$bin" "${args[@]}" >/dev/null 2>&1; exit $?) 2>/dev/null
    st=$?
    [ $st -eq 137 ] && st=124     # killed by timeout's SIGKILL: it hung
    o="$(classify $st)"
    if [ "$o" != "$ok" ]; then
      fail=$((fail + 1))
      counts["$o"]=$(( ${counts["$o"]:-0} + 1 ))
      [ "$o" = "$expected" ] && exp=$((exp + 1))
      [ $quiet -eq 1 ] || printf 'x' >&2
    elif [ $quiet -eq 0 ] && [ $((i % 100)) -eq 0 ]; then
      printf '.' >&2
    fi
  done
  [ $quiet -eq 1 ] || printf ' %s\n' "$name" >&2
  rate="$(awk -v f=$fail -v n=$runs 'BEGIN{ printf "%.4f", f/n }')"
  kinds=""
  for o in "${!counts[@]}"; do kinds+="${kinds:+, }$o: ${counts[$o]}"; done
  if [ $json -eq 1 ]; then
    [ $first -eq 1 ] || printf ','
    printf '{"name":%s,"runs":%d,"failures":%d,"rate":%s,"expected_failures":%d,"kinds":%s}' \
      "$(jstr "$name")" "$runs" "$fail" "$rate" "$exp" "$(jstr "${kinds:-none}")"
  else
    printf '%-24s %6d %6d %8s %8d  %s\n' "$name" "$runs" "$fail" "$rate" "$exp" "${kinds:--}"
  fi
  first=0
  unset counts
  if [ $update -eq 1 ]; then mf_record_rates "$mf" "$widen" "$runs" "$fail" "${kinds:-none}" "$rate" "$desc" "$tmo"; fi
done
[ $json -eq 1 ] && printf ']}\n'
exit $status
