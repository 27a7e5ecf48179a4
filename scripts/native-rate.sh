#!/usr/bin/env bash
# Native stress-testing baseline: runs images/bin/NAME N times on Linux, with the args of
# images/NAME.manifest, and counts the runs whose outcome differs from the manifest's `ok`.
#
#   scripts/native-rate.sh [--runs N] [--timeout DUR] [--widen] [--update] [--quiet] NAME...
#
#   --runs N       runs per image (default 1000)
#   --timeout DUR  per-run bound, passed to timeout(1) (default 5s); a run that hits it
#                  counts as "deadlock"
#   --widen        run the -DWIDEN_WINDOW build (images/bin/widen/NAME) instead
#   --update       write the numbers into images/NAME.manifest:
#                  native_runs/native_failures/native_failure_kinds/native_failure_rate/
#                  measured_on, or with --widen: the same as widened_runs, widened_failures,
#                  widened_failure_kinds, widened_failure_rate, widened_measured_on
#   --quiet        no progress dots
#   NAME may also be `all` (every images/*.manifest).
#
# Outcome classes: `exit N`, `signal SIGxxx`, `deadlock` (timeout expired). A failure is
# any outcome other than the manifest's `ok`; the table also shows how many failures are
# the manifest's `expected` outcome. Runs are sequential (one at a time); core dumps are
# disabled. Exit status: 0, or 2 on usage errors.
set -u
cd "$(dirname "$0")/.." || exit 2

runs=1000 tmo=5s widen=0 update=0 quiet=0 names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --runs=*) runs="${1#*=}"; shift ;;
    --timeout) tmo="$2"; shift 2 ;;
    --timeout=*) tmo="${1#*=}"; shift ;;
    --widen) widen=1; shift ;;
    --update) update=1; shift ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "native-rate: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
case "$runs" in ''|*[!0-9]*) echo "native-rate: --runs needs a number" >&2; exit 2 ;; esac
if [ ${#names[@]} -eq 0 ]; then
  echo "usage: scripts/native-rate.sh [--runs N] [--timeout DUR] [--widen] [--update] NAME..." >&2
  exit 2
fi
if [ "${names[*]}" = all ]; then
  names=()
  for m in images/*.manifest; do names+=("$(basename "$m" .manifest)"); done
fi

ulimit -c 0

. scripts/manifest-lib.sh
host_desc() {
  local cpu
  cpu="$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n1)"
  printf '%s, Linux %s %s, %s CPUs (%s), loadavg %s at start' "$(date -u +%Y-%m-%dT%H:%MZ)" \
    "$(uname -r)" "$(uname -m)" "$(nproc)" "${cpu:-unknown cpu}" \
    "$(cut -d' ' -f1 /proc/loadavg)"
}

printf '%-14s %6s %6s %9s %9s  %s\n' image runs fail rate expected breakdown
status=0
for name in "${names[@]}"; do
  mf="images/$name.manifest"
  if [ $widen -eq 1 ]; then bin="images/bin/widen/$name"; else bin="images/bin/$name"; fi
  if [ ! -f "$mf" ]; then echo "native-rate: no manifest $mf" >&2; status=2; continue; fi
  if [ ! -x "$bin" ]; then echo "native-rate: no binary $bin (run make images)" >&2; status=2; continue; fi
  ok="$(mf_get "$mf" ok)"; expected="$(mf_get "$mf" expected)"
  read -r -a args <<<"$(mf_get "$mf" args)"
  [ -n "$ok" ] || ok="exit 0"
  desc="$(host_desc)"
  declare -A counts=()
  fail=0 exp=0
  for ((i = 1; i <= runs; i++)); do
    # the subshell keeps bash's "Aborted"/"Segmentation fault" job messages quiet
    (timeout "$tmo" "$bin" "${args[@]}" >/dev/null 2>&1; exit $?) 2>/dev/null
    o="$(classify $?)"
    if [ "$o" != "$ok" ]; then
      fail=$((fail + 1))
      counts["$o"]=$(( ${counts["$o"]:-0} + 1 ))
      [ "$o" = "$expected" ] && exp=$((exp + 1))
      [ $quiet -eq 1 ] || printf 'x' >&2
    elif [ $quiet -eq 0 ] && [ $((i % 100)) -eq 0 ]; then
      printf '.' >&2
    fi
  done
  [ $quiet -eq 1 ] || printf '\n' >&2
  rate="$(awk -v f=$fail -v n=$runs 'BEGIN{ if (n) printf "%.4f", f/n; else print "nan" }')"
  breakdown=""
  for o in "${!counts[@]}"; do breakdown+="${breakdown:+, }$o: ${counts[$o]}"; done
  printf '%-14s %6d %6d %9s %9d  %s\n' "$name" "$runs" "$fail" "$rate" "$exp" "${breakdown:--}"
  unset counts
  if [ $update -eq 1 ]; then mf_record_rates "$mf" "$widen" "$runs" "$fail" "${breakdown:-none}" "$rate" "$desc" "$tmo"; fi
done
exit $status
