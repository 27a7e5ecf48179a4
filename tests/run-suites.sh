#!/usr/bin/env bash
# Runs test suites (the unit test binaries, or the integration scripts) and reports:
#   == SUITE            its output
#   -- SUITE: N s       (N ms with --ms) as each one ends
# then the slowest ten, and "NAME: P passed, F failed" (exit 1 if any failed).
#   tests/run-suites.sh [--name NAME] [--ms] [--quick FILE] [--pair SUITE...] [--] SUITE...
# --quick FILE: lines "SUITE VAR=VALUE..." (# comments): unless JINX_LONG=1, SUITE runs
#   with those variables (a representative subset of its loops: fewer seeds, runs or
#   programs; tests/quick.conf, docs/testing.md). A variable already in the environment
#   is left as it is; commas in a value stand for spaces (lists of names). With JINX_LONG=1 (make check-long) every suite runs its defaults.
# --pair names suites that check nothing timing-dependent (results, traces, messages,
#   files; no wall-clock bound tight enough to trip when a core is shared): they run
#   two at a time, beside each other only, each one's output printed whole when it ends.
#   They run first, in --pair's order (longest first packs best); then the others, alone,
#   in the command line's order. A --pair suite not on the command line is not run.
# Env: the suites get BUILD and BIN as they are; JINX_SUITE_JOBS (default 2) is the
#   number of paired suites at a time (1: everything one after another).
set -u
name=tests; unit=s; pairs=" "; quick_conf=""
while [ $# -gt 0 ]; do
  case $1 in
    --name) name=$2; shift 2 ;;
    --ms) unit=ms; shift ;;
    --quick) quick_conf=$2; shift 2 ;;
    --pair) shift
            while [ $# -gt 0 ] && [ "$1" != -- ] && [ "${1#--}" = "$1" ]; do pairs+="$1 "; shift; done ;;
    --) shift; break ;;
    -*) echo "tests/run-suites.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
jobs=${JINX_SUITE_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "tests/run-suites.sh: JINX_SUITE_JOBS must be a positive integer" >&2; exit 2; }
suites=("$@")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
fmt() { if [ "$unit" = ms ]; then echo "$1 ms"; else echo "$(( ($1 + 500) / 1000 )) s"; fi; }
# quick_env SUITE: sets env_of to the VAR=VALUE words make test gives SUITE.
quick_env() {
  env_of=()
  [ -n "$quick_conf" ] && [ "${JINX_LONG:-0}" != 1 ] || return 0
  local suite rest w v
  while read -r suite rest; do
    [ "$suite" = "$1" ] || continue
    for w in $rest; do
      v=${w%%=*}
      [ -n "${!v+x}" ] && continue # set by the caller: theirs wins
      env_of+=("$v=$(printf '%s' "${w#*=}" | tr ',' ' ')") # commas: spaces (lists)
    done
  done < <(sed 's/#.*//' "$quick_conf")
}
# launch SUITE: runs it with its quick variables.
launch() { quick_env "$1"; env ${env_of[@]+"${env_of[@]}"} "$1"; }
say_quick() { quick_env "$1"; [ ${#env_of[@]} = 0 ] || echo "   (make test's subset: ${env_of[*]}; JINX_LONG=1 for all)"; }
passed=0; failed=0; failed_names=""
: >"$tmp/times"
# finish SUITE STATUS MS: books a suite that ended.
finish() {
  echo "-- $1: $(fmt "$3")"
  printf '%s %s\n' "$3" "$1" >>"$tmp/times"
  if [ "$2" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failed_names+=" $1"; fi
}

declare -A pid_of=() start_of=() log_of=()
# reap: waits for one paired suite to end, prints it and books it.
reap() {
  wait -n 2>/dev/null || true
  local t st
  for t in "${!pid_of[@]}"; do
    kill -0 "${pid_of[$t]}" 2>/dev/null && continue
    wait "${pid_of[$t]}"; st=$?
    echo "== $t (run beside another)"; say_quick "$t"; cat "${log_of[$t]}"
    finish "$t" "$st" $(( $(now_ms) - ${start_of[$t]} ))
    unset "pid_of[$t]"
  done
}
# The paired suites first, in --pair's order (longest first packs best), two at a time;
# then the others one after another, in the command line's order.
pooled=(); alone=()
for t in "${suites[@]}"; do
  if [ "$jobs" -gt 1 ] && [[ $pairs == *" $t "* ]]; then :; else alone+=("$t"); fi
done
if [ "$jobs" -gt 1 ]; then
  for t in $pairs; do [[ " ${suites[*]} " == *" $t "* ]] && pooled+=("$t"); done
fi
k=0
for t in ${pooled[@]+"${pooled[@]}"}; do
  while [ ${#pid_of[@]} -ge "$jobs" ]; do reap; done
  k=$((k + 1)); log_of[$t]=$tmp/log.$k; start_of[$t]=$(now_ms)
  launch "$t" >"${log_of[$t]}" 2>&1 & pid_of[$t]=$!
done
while [ ${#pid_of[@]} -gt 0 ]; do reap; done
for t in ${alone[@]+"${alone[@]}"}; do
  echo "== $t"; say_quick "$t"; s=$(now_ms)
  launch "$t"; st=$?
  finish "$t" "$st" $(( $(now_ms) - s ))
done

[ -z "$quick_conf" ] || [ "${JINX_LONG:-0}" = 1 ] ||
  echo "-- $name: make test's subsets ($quick_conf); make check-long (JINX_LONG=1) runs every loop in full"
echo "-- slowest ten ($name):"
sort -rn "$tmp/times" | head -10 | while read -r ms t; do echo "--   $(fmt "$ms")  $t"; done
if [ $failed = 0 ]; then echo "$name: $passed passed, all passed"
else echo "$name: $passed passed, $failed FAILED:$failed_names"; exit 1; fi
