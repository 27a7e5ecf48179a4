#!/usr/bin/env bash
# Long fuzzing runs of the libFuzzer harnesses (tests/fuzz/fuzz_*.c), one after another.
#   scripts/fuzz.sh [--seconds N] [--json FILE] [TARGET...]
# TARGET is a harness name (elf, schedule, control, dumpfile, corefile, roundrec, campaign, pathconf, libdeps, cpufeat; default:
# all). Each runs N seconds (default 300) on its seed corpus plus a scratch corpus kept in
# build-fuzz/long-corpus-TARGET (so a second run continues where the first stopped).
# Prints per target the inputs executed (libFuzzer's number_of_executed_units), the new
# corpus units and whether it crashed; writes the same as JSON (default
# build-fuzz/fuzz-summary.json). A crash, leak or timeout leaves its reproducer in
# build-fuzz/ (replay: build-fuzz/fuzz_TARGET FILE) and makes the exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
FB=build-fuzz
seconds=300
json=$FB/fuzz-summary.json
targets=()
usage() { echo "usage: scripts/fuzz.sh [--seconds N] [--json FILE] [TARGET...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
    --json) [ $# -ge 2 ] || usage; json=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "scripts/fuzz.sh: unknown option $1" >&2; usage ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "scripts/fuzz.sh: --seconds needs a positive integer" >&2; exit 2; }
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do t=${f#tests/fuzz/fuzz_}; targets+=("${t%.c}"); done
fi
for t in "${targets[@]}"; do
  [ -f "tests/fuzz/fuzz_$t.c" ] || { echo "scripts/fuzz.sh: no harness tests/fuzz/fuzz_$t.c" >&2; exit 2; }
done
make -s "${targets[@]/#/$FB/fuzz_}"

failed=0
rows=()
printf '%-10s %8s %14s %10s %8s\n' target seconds executed new_units crashed
for t in "${targets[@]}"; do
  scratch=$FB/long-corpus-$t; mkdir -p "$scratch"
  log=$FB/fuzz-long-$t.log
  before=$(ls "$FB" | grep -Ec '^(crash|leak|timeout|oom)-' || true)
  start=$(date +%s)
  rc=0
  ( cd "$FB" && "./fuzz_$t" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
      "long-corpus-$t" "../tests/fuzz/corpus/$t" ) >"$log" 2>&1 || rc=$?
  took=$(( $(date +%s) - start ))
  after=$(ls "$FB" | grep -Ec '^(crash|leak|timeout|oom)-' || true)
  execd=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  newu=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  crashed=false
  if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
    crashed=true; failed=1
    grep -E "^(==[0-9]+==ERROR|SUMMARY)|Test unit written" "$log" | sed "s/^/  $t: /" || true
  fi
  printf '%-10s %8s %14s %10s %8s\n' "$t" "$took" "${execd:-?}" "${newu:-?}" "$crashed"
  rows+=("{\"target\":\"$t\",\"seconds\":$took,\"executed\":${execd:-null},\"new_units\":${newu:-null},\"crashed\":$crashed,\"log\":\"$log\"}")
done
{ printf '{"seconds_per_target":%s,"results":[' "$seconds"
  (IFS=,; printf '%s' "${rows[*]}")
  printf ']}\n'; } >"$json"
echo "summary: $json"
exit $failed
