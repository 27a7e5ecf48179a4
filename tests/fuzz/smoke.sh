#!/usr/bin/env bash
# `make fuzz-smoke`: each libFuzzer harness for SECONDS on its seed corpus (tests/fuzz/corpus/T)
# plus a fresh scratch corpus ($FUZZ_BUILD/corpus-T), JOBS harnesses at a time. Each harness
# is one process on one core for its SECONDS whichever way they are scheduled, so two at a
# time on the 2-core CI host give every harness the same fuzzing as one after another, in
# half the wall time (libFuzzer stops at -max_total_time, not at a count of inputs).
#   tests/fuzz/smoke.sh [--seconds N] [--jobs J] [--build DIR] TARGET...
# Prints, per harness as it ends, the inputs executed and new units; a crash prints the
# end of its log and makes the status 1 (after the others have finished).
set -u
cd "$(dirname "$0")/../.." || exit 2
seconds=10; jobs=2; build=build-fuzz; targets=()
usage() { echo "usage: tests/fuzz/smoke.sh [--seconds N] [--jobs J] [--build DIR] TARGET..." >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    -*) echo "tests/fuzz/smoke.sh: unknown option $1" >&2; usage ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "tests/fuzz/smoke.sh: --seconds needs a positive integer, got '$seconds'" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "tests/fuzz/smoke.sh: --jobs needs a positive integer, got '$jobs'" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || usage
for t in "${targets[@]}"; do
  [ -x "$build/fuzz_$t" ] || { echo "tests/fuzz/smoke.sh: no harness $build/fuzz_$t (make $build/fuzz_$t)" >&2; exit 2; }
done

# one T: runs harness T; its status is the harness's.
one() {
  local t=$1 scratch=corpus-$1
  rm -rf "${build:?}/$scratch"; mkdir -p "$build/$scratch"
  ( cd "$build" && "./fuzz_$t" -max_total_time="$seconds" -max_len=65536 \
      -print_final_stats=1 "$scratch" "../tests/fuzz/corpus/$t" ) >"$build/fuzz_$t.log" 2>&1
}
# report T STATUS: what one T left in its log.
report() {
  local t=$1 st=$2
  echo "== fuzz_$t for $seconds s"
  if [ "$st" != 0 ]; then
    tail -40 "$build/fuzz_$t.log"; echo "fuzz_$t: FAILED (status $st, log: $build/fuzz_$t.log)"; return 1
  fi
  grep -E "^stat::(number_of_executed_units|new_units_added)" "$build/fuzz_$t.log"
}

failed=0
declare -A pid_of=()
i=0
while [ $i -lt ${#targets[@]} ] || [ ${#pid_of[@]} -gt 0 ]; do
  if [ $i -lt ${#targets[@]} ] && [ ${#pid_of[@]} -lt "$jobs" ]; then
    one "${targets[$i]}" & pid_of[${targets[$i]}]=$!
    i=$((i + 1)); continue
  fi
  wait -n
  for t in "${!pid_of[@]}"; do
    kill -0 "${pid_of[$t]}" 2>/dev/null && continue
    wait "${pid_of[$t]}"; st=$?
    unset "pid_of[$t]"
    report "$t" "$st" || failed=1
  done
done
if [ $failed = 0 ]; then echo "fuzz smoke: no crash (${#targets[@]} harnesses, $seconds s each, $jobs at a time)"
else echo "fuzz smoke: FAILED"; fi
exit $failed
