# Shared plumbing of tests/integration/*.sh (sourced, not run): each suite keeps its own
# checks and messages, and takes from here what all of them would otherwise repeat.
#   . "$(dirname "$0")/lib.sh"
# It sets BUILD and BIN to their defaults (build, bin) unless the caller set them, and the
# counters pass and fail; a suite redefines any function below whose output it wants
# otherwise (after sourcing this file).
# shellcheck shell=bash

BUILD=${BUILD:-build}; BIN=${BIN:-bin}
pass=0; fail=0

# ok/bad MESSAGE: one check passed or failed. A suite that sets ERR_TAIL=N gets, under
# each failure, the last N lines of $tmp/err: by the suites' convention the failed
# command's stderr, which is what one needs to see in a CI log.
ok() { pass=$((pass+1)); echo "ok   $*"; }
bad() {
  fail=$((fail+1)); echo "FAIL $*"
  [ "${ERR_TAIL:-0}" = 0 ] || sed 's/^/     | /' "$tmp/err" 2>/dev/null | tail -"$ERR_TAIL"
}
# summary NAME: the suite's last line, "NAME: P passed, F failed", and its exit status
# (run-suites.sh and CI judge the suite by it).
summary() { echo "$1: $pass passed, $fail failed"; [ "$fail" = 0 ]; }

# mk_tmp: $tmp, a scratch directory removed when the suite exits.
mk_tmp() { tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; }
need_python() { command -v python3 >/dev/null || { echo "FAIL python3 is needed"; exit 1; }; }
# jget FILE EXPR: the Python expression EXPR of the JSON in FILE (as d); empty output if
# FILE is missing or not JSON, so a check compares it and fails instead of the suite dying.
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
# xjson FILE: the last exploration summary (`jinx-vmm: explore: {...}`) in a run's stderr.
xjson() { sed -n 's/^jinx-vmm: explore: \({.*}\)$/\1/p' "$1" | tail -1; }

# Background, then judge in order. Contract: only for checks whose verdict no CPU load
# changes, so that they may share the wall time of their budgets instead of running one
# after the other: a clean run ("nothing found in BUDGET" holds however few schedules a
# loaded CPU leaves it; a false bug is false at any speed) or a deterministic one (a
# serialized run's status and trace are its schedule's). A check with a wall-clock bound
# tight enough to trip on a shared core must not use it.
#   bg_start [WORD...] -- COMMAND...
#       starts COMMAND in the background (needs $tmp); its stdout, stderr and exit status
#       are kept, and so are the WORDs, for the judge.
#   bg_judge JUDGE
#       for each job started since the last bg_judge, in the order they were started:
#       waits for it, then runs JUDGE WORD... with bg_st (its exit status), bg_out and
#       bg_err (the files holding its stdout and its stderr) set. The suite's foreground
#       checks may run between the two calls.
# The files are $tmp/bg.N.out and $tmp/bg.N.err, N = 1, 2, ... in each batch: a suite may
# read them after bg_judge (the next batch reuses the names).
bg_n=0; bg_pids=(); bg_words=()
bg_start() {
  local words=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do words+=("$1"); shift; done
  shift
  bg_n=$((bg_n+1))
  bg_words[bg_n]=""
  [ ${#words[@]} = 0 ] || bg_words[bg_n]=$(printf '%q ' "${words[@]}")
  ( "$@" >"$tmp/bg.$bg_n.out" 2>"$tmp/bg.$bg_n.err"; echo $? >"$tmp/bg.$bg_n.st" ) &
  bg_pids[bg_n]=$!
}
# shellcheck disable=SC2034 # bg_st, bg_out and bg_err are for JUDGE, the suite's
bg_judge() {
  local i
  for ((i = 1; i <= bg_n; i++)); do
    wait "${bg_pids[i]}" 2>/dev/null
    bg_st=$(cat "$tmp/bg.$i.st" 2>/dev/null); bg_out=$tmp/bg.$i.out; bg_err=$tmp/bg.$i.err
    eval "$1 ${bg_words[i]}"
  done
  bg_n=0; bg_pids=(); bg_words=()
}
