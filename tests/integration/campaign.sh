#!/usr/bin/env bash
# `jinx campaign` end to end (issue 16, docs/campaigns.md):
#  - refusals that need no cluster: run-task without an index, a changed image (could not
#    test, exit 3, listed by merge), a bad results file (merge names it), plan's usage;
#  - a private single-node Slurm cluster (scripts/slurm/local-slurm.sh: its own munged,
#    slurmctld and slurmd in a temp dir, 2 CPUs), installed first as root if missing;
#  - an 8-task campaign (circle, deadlock-abba, glibc circle, correct x 2 seed chunks)
#    submitted as a Slurm array (every array task must complete with exit 0), and the same
#    plan run sequentially with run-task in a loop into a second directory; both merged;
#  - merge twice gives byte-identical report.json, junit.xml and table;
#  - the two reports agree on everything that is deterministic: each task's status (bug
#    or not, could not test, no result) and, per bug, image, outcome and crash function
#    with the tasks that found it. Which seed of a chunk finds a bug first, its cue
#    points, its dump and the racing pair of the retired schedule depend on when the
#    rounds start in wall time, so they are printed, not compared (the full reports are
#    compared too and the result printed, for information);
#  - the smallest reproducer's dump is one jinxctl inspect reads.
# Never skips: without root, KVM or a Slurm that starts, it FAILS. It stops the daemons it
# started, by pid, even on failure, and checks that none is left.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
root=$(pwd)
JINX=$(cd "$BIN" && pwd)/jinx
JINXCTL=$(cd "$BIN" && pwd)/jinxctl
BUDGET=${BUDGET:-15s}
fatal() { echo "FAIL $*"; echo "campaign: FAILED ($pass passed, $((fail+1)) failed)"; exit 1; }

tmp=$(mktemp -d /tmp/jinx-campaign.XXXXXX) || fatal "mktemp"
chmod 0755 "$tmp"
cleanup() {
  if [ -f "$tmp/slurm/slurm.conf" ]; then
    "$root/scripts/slurm/local-slurm.sh" stop "$tmp/slurm" || echo "FAIL stopping the Slurm daemons"
    for d in munged slurmctld slurmd; do
      if [ -f "$tmp/slurm/$d.pid" ] && kill -0 "$(cat "$tmp/slurm/$d.pid")" 2>/dev/null; then
        echo "FAIL $d (pid $(cat "$tmp/slurm/$d.pid")) is still running"; exit 1
      fi
    done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ -x "$JINX" ] || fatal "no $JINX (run make)"
[ -c /dev/kvm ] || fatal "no /dev/kvm: the campaign's tasks boot guests"
for img in circle deadlock-abba correct glibc/circle; do
  [ -x "images/bin/$img" ] || fatal "no images/bin/$img (run make)"
done

echo "-- refusals"
out=$(env -u SLURM_ARRAY_TASK_ID "$JINX" campaign run-task "$tmp/none" 2>&1); st=$?
if [ $st = 2 ] && echo "$out" | grep -q "give --index N, or run it as a Slurm array"; then
  ok "run-task without --index or \$SLURM_ARRAY_TASK_ID: exit 2, says which to give"
else bad "run-task without an index: exit $st: $out"; fi
out=$("$JINX" campaign plan --budget 5s images/bin/correct 2>&1); st=$?
if [ $st = 2 ] && echo "$out" | grep -q "no -o DIR"; then ok "plan without -o: exit 2"
else bad "plan without -o: exit $st: $out"; fi
out=$("$JINX" campaign plan --bogus -o "$tmp/x" images/bin/correct 2>&1); st=$?
if [ $st = 2 ] && echo "$out" | grep -q "bogus"; then ok "plan --bogus: refused, named"
else bad "plan --bogus: exit $st: $out"; fi
out=$("$JINX" test images/bin/correct --seeds 5-2 2>&1); st=$?
if [ $st = 2 ] && echo "$out" | grep -q "seeds 5-2: expected FIRST-LAST"; then ok "jinx test --seeds 5-2: refused"
else bad "jinx test --seeds 5-2: exit $st: $out"; fi
out=$("$JINX" test images/bin/correct --strategy nosuch 2>&1); st=$?
if [ $st = 2 ] && echo "$out" | grep -q "nosuch"; then ok "jinx test --strategy nosuch: refused"
else bad "jinx test --strategy nosuch: exit $st: $out"; fi
out=$("$JINX" test images/bin/correct --seeds 3-4 --budget 20s --json --dump-dir "$tmp/jt" 2>/dev/null); st=$?
if [ $st = 0 ] && echo "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); assert d['runs'] <= 2 and d['seed'] in (3, 4), d"; then
  ok "jinx test --seeds 3-4: runs seeds 3 and 4 only"
else bad "jinx test --seeds 3-4: exit $st: $out"; fi
cp images/bin/correct "$tmp/prog"
"$JINX" campaign plan --budget 5s --seeds 2 -o "$tmp/chg" "$tmp/prog" >/dev/null || bad "plan of a copy"
printf 'x' >> "$tmp/prog"   # a new build after planning
out=$("$JINX" campaign run-task "$tmp/chg" --index 0 --json 2>"$tmp/chg.err"); st=$?
if [ $st = 3 ] && grep -q "changed since the campaign was planned" "$tmp/chg.err" &&
   grep -q '"status":"could_not_test"' "$tmp/chg/results/0.json" &&
   [ "$out" = "$(cat "$tmp/chg/results/0.json")" ]; then
  ok "run-task on a changed image: could not test (exit 3), result says so (--json: the result)"
else bad "run-task on a changed image: exit $st: $out $(cat "$tmp/chg.err")"; fi
printf '{"version":1,"task":1,' > "$tmp/chg/results/1.json"   # half a file
"$JINX" campaign merge "$tmp/chg" > "$tmp/chg.out" 2>&1; st=$?
if [ $st = 3 ] && grep -q "could not test: task 0" "$tmp/chg.out" &&
   grep -q "bad result: task 1: results/1.json: not a JSON object" "$tmp/chg.out" &&
   python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['counts']['could_not_test']==1 and d['bad_result'][0]['task']==1" "$tmp/chg/report.json"; then
  ok "merge lists the could-not-test task and the bad result (exit 3)"
else bad "merge of a changed image and a bad result: exit $st"; cat "$tmp/chg.out"; fi
"$JINX" campaign merge "$tmp/chg" --json > "$tmp/chg.json" 2>/dev/null
if cmp -s "$tmp/chg.json" "$tmp/chg/report.json"; then ok "merge --json prints report.json"
else bad "merge --json differs from report.json"; fi

# The array script outside Slurm: index 0 + offset 1 is task 1 (its bad result replaced).
SLURM_ARRAY_TASK_ID=0 JINX_TASK_OFFSET=1 JINX=$JINX bash scripts/slurm/jinx-campaign.sbatch "$tmp/chg" >/dev/null 2>&1; st=$?
if [ $st = 0 ] && grep -q '"task":1,.*"status":"could_not_test"' "$tmp/chg/results/1.json"; then
  ok "jinx-campaign.sbatch: JINX_TASK_OFFSET shifts the index; a recorded result exits 0"
else bad "jinx-campaign.sbatch with an offset: exit $st: $(cat "$tmp/chg/results/1.json")"; fi
SLURM_ARRAY_TASK_ID=0 JINX_TASK_OFFSET=7 JINX=$JINX bash scripts/slurm/jinx-campaign.sbatch "$tmp/chg" >/dev/null 2>&1; st=$?
if [ $st = 2 ]; then ok "jinx-campaign.sbatch: no such task: the array task fails (exit 2, rerun material)"
else bad "jinx-campaign.sbatch for task 7 of 2: exit $st"; fi

echo "-- a private Slurm cluster"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
  [ "$(id -u)" -eq 0 ] || fatal "slurm-wlm and munge are missing and this is not root: sudo apt-get install -y slurm-wlm munge"
  echo "installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq slurm-wlm munge; } >"$tmp/apt.log" 2>&1 ||
    { tail -20 "$tmp/apt.log"; fatal "apt-get install slurm-wlm munge failed"; }
fi
[ "$(id -u)" -eq 0 ] || fatal "needs root to start slurmd (it runs jobs as their submitter)"
"$root/scripts/slurm/local-slurm.sh" start "$tmp/slurm" 2 || fatal "could not start Slurm (logs above)"
export SLURM_CONF=$tmp/slurm/slurm.conf
ok "munged, slurmctld and slurmd started (pids $(cat "$tmp/slurm/munged.pid") $(cat "$tmp/slurm/slurmctld.pid") $(cat "$tmp/slurm/slurmd.pid"))"

echo "-- the same 8 tasks through Slurm and sequentially"
plan() {
  "$JINX" campaign plan --budget "$BUDGET" --seeds 20 --chunk 10 -o "$1" images/bin/circle \
    images/bin/deadlock-abba images/bin/glibc/circle images/bin/correct > "$tmp/plan.out"
}
plan "$tmp/A" || fatal "plan A: $(cat "$tmp/plan.out")"
plan "$tmp/B" || fatal "plan B"
n=$(grep -vc '^#' "$tmp/A/tasks.tsv")
if [ "$n" = 8 ] && cmp -s "$tmp/A/tasks.tsv" "$tmp/B/tasks.tsv"; then ok "plan: 8 tasks, the same tasks.tsv twice"
else bad "plan: $n tasks, or two plans differ"; fi
t0=$SECONDS
# Submitted, then watched every 0.2 s: `sbatch --wait` sleeps 2, 8, then 32 s between its
# checks, which made this array take 42 s although its tasks were done within ~25 s.
# Its status was the highest exit code of the array tasks: here each task must be
# COMPLETED with exit code 0 (scontrol keeps finished jobs for MinJobAge, 300 s).
job=$(JINX=$JINX sbatch --parsable --array=0-$((n-1)) --output="$tmp/slurm/out-%A_%a.txt" \
  scripts/slurm/jinx-campaign.sbatch "$tmp/A"); st=$?
job=${job%%;*}
if [ $st = 0 ]; then
  # squeue lists the job until every array task has ended (a failing squeue: ask again)
  while [ $((SECONDS - t0)) -lt 240 ]; do
    q=$(squeue -h -j "$job" -o %i 2>/dev/null) && [ -z "$q" ] && break
    sleep 0.2
  done
  states=$(scontrol -o show job "$job" 2>&1)
  done_ok=$(printf '%s\n' "$states" | grep -c 'JobState=COMPLETED .*ExitCode=0:0')
  [ "$done_ok" = "$n" ] || { st=1; printf '%s\n' "$states" |
    sed -n 's/.*ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z]*\) .*ExitCode=\([0-9:]*\).*/     task \1: \2, exit code \3/p'; }
fi
slurm_s=$((SECONDS - t0))
nres=$(ls "$tmp/A/results/"*.json 2>/dev/null | wc -l)
if [ $st = 0 ] && [ "$nres" = "$n" ]; then ok "sbatch --array=0-$((n-1)): every task completed (exit 0) and recorded a result ($slurm_s s)"
else bad "sbatch --array: status $st, $nres results of $n"; tail -n 5 "$tmp/slurm/"out-* "$tmp/slurm/slurmd.log" 2>/dev/null; fi
t0=$SECONDS
for i in $(seq 0 $((n-1))); do
  "$JINX" campaign run-task "$tmp/B" --index "$i" >>"$tmp/B.out" 2>&1
  st=$?; [ $st = 0 ] || [ $st = 1 ] || bad "sequential task $i: exit $st"
done
echo "     sequential: $((SECONDS - t0)) s; Slurm (2 CPUs): $slurm_s s"

"$JINX" campaign merge "$tmp/A" > "$tmp/A.table1"; stA=$?
cp "$tmp/A/report.json" "$tmp/A.report1"; cp "$tmp/A/junit.xml" "$tmp/A.junit1"
"$JINX" campaign merge "$tmp/A" > "$tmp/A.table2"
if cmp -s "$tmp/A.report1" "$tmp/A/report.json" && cmp -s "$tmp/A.junit1" "$tmp/A/junit.xml" &&
   cmp -s "$tmp/A.table1" "$tmp/A.table2"; then ok "merge twice: byte-identical report.json, junit.xml and table"
else bad "merge twice differs"; fi
"$JINX" campaign merge --quiet "$tmp/B"; stB=$?
cat "$tmp/A.table1"
if [ $stA = 1 ] && [ $stB = 1 ]; then ok "merge: exit 1 (bugs found) for both"
else bad "merge exit $stA (Slurm) / $stB (sequential), wanted 1"; fi

# The deterministic projection of a report (see the header).
proj() {
  python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
bugs = {}
for b in d["bugs"]:
    key = (b["image"].rsplit("/", 1)[-1], b["outcome"], b["function"].split("+")[0])
    bugs.setdefault(key, set()).update(b["tasks"])
c = {k: v for k, v in d["counts"].items() if k not in ("bugs", "duplicates")}
print(json.dumps({"tasks": d["tasks"], "counts": c,
                  "bugs": sorted([list(k) + [sorted(v)] for k, v in bugs.items()]),
                  "could_not_test": [x["task"] for x in d["could_not_test"]],
                  "no_result": d["no_result"], "bad_result": d["bad_result"]}, sort_keys=True))
EOF
}
pa=$(proj "$tmp/A/report.json"); pb=$(proj "$tmp/B/report.json")
if [ -n "$pa" ] && [ "$pa" = "$pb" ]; then ok "Slurm and sequential reports agree on the deterministic part: $pa"
else bad "the reports differ:"; echo "  Slurm:      $pa"; echo "  sequential: $pb"; fi
# For information: what else differs (the task-seconds always do).
python3 - "$tmp/A/report.json" "$tmp/B/report.json" <<'EOF'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
a.pop("timing"); b.pop("timing")
if a == b:
    print("     (the full reports are identical but for the task-seconds)")
else:
    diff = []
    for x, y in zip(a["bugs"], b["bugs"]):
        diff += ["%s: %s %s / %s" % (x["signature"], k, x[k], y.get(k)) for k in x if x[k] != y.get(k)]
    if len(a["bugs"]) != len(b["bugs"]) or a["counts"] != b["counts"]:
        diff.append("bug lists: %d / %d" % (len(a["bugs"]), len(b["bugs"])))
    print("     (full reports also differ where timing decides: %s)" % "; ".join(diff[:6]))
EOF
if python3 - "$tmp/A/report.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["counts"]
assert d["tasks"] == 8 and c["found"] == 6 and c["nothing"] == 2, c
assert c["could_not_test"] == 0 and c["no_result"] == 0 and c["bad_result"] == 0, c
assert sum(b["hits"] for b in d["bugs"]) == 6
assert all(b["dump"] is None or b["dump"].startswith("dumps/%d/" % b["task"]) for b in d["bugs"])
found = {t for b in d["bugs"] for t in b["tasks"]}
assert found == {0, 1, 2, 4, 5, 6}, found      # correct is tasks 3 and 7
assert all(not b["image"].endswith("/correct") for b in d["bugs"])
EOF
then ok "report: 6 bugs found (circle, deadlock-abba, glibc circle), correct clean, no result missing"
else bad "report.json content"; cat "$tmp/A/report.json"; fi
if python3 -c "
import sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot().find('testsuite')
assert s.get('tests') == '8' and s.get('failures') == '6' and s.get('errors') == '0'
assert len(s.findall('testcase')) == 8
" "$tmp/A/junit.xml"; then ok "junit.xml: 8 test cases, 6 failures"
else bad "junit.xml"; cat "$tmp/A/junit.xml"; fi
dump=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(next(b['dump'] for b in d['bugs'] if b['dump']))" "$tmp/A/report.json")
if [ -n "$dump" ] && "$JINXCTL" inspect "$tmp/A/$dump" >"$tmp/inspect.out" 2>&1; then
  ok "the smallest reproducer's dump ($dump) is read by jinxctl inspect"
else bad "jinxctl inspect $tmp/A/$dump"; tail -3 "$tmp/inspect.out"; fi

echo "-- a rerun replaces only its own result"
others() { md5sum "$tmp/B/results/"{1,2,3,4,5,6,7}.json; stat -c %i "$tmp/B/results/"{1,2,3,4,5,6,7}.json; }
sum=$(others); ino=$(stat -c %i "$tmp/B/results/0.json")
"$JINX" campaign run-task "$tmp/B" --index 0 > /dev/null; st=$?
if [ $st = 1 ] && [ "$sum" = "$(others)" ] && [ "$ino" != "$(stat -c %i "$tmp/B/results/0.json")" ] &&
   [ -L "$tmp/B/dumps/0/bug.jinxdump" ] && [ "$(ls "$tmp/B/dumps/0/"*.jinxdump | wc -l)" = 2 ] &&
   ! ls "$tmp/B/results/".*.tmp.* >/dev/null 2>&1; then
  ok "rerun of task 0: its result replaced (renamed in), its dumps replaced, the others untouched"
else bad "rerun of task 0 (exit $st)"; ls -la "$tmp/B/dumps/0/"; fi

"$root/scripts/slurm/local-slurm.sh" stop "$tmp/slurm" || bad "stopping the Slurm daemons"
left=""
for d in munged slurmctld slurmd; do kill -0 "$(cat "$tmp/slurm/$d.pid")" 2>/dev/null && left="$left $d"; done
if [ -z "$left" ]; then ok "the daemons it started are stopped (by pid)"
else bad "still running:$left"; fi

summary "campaign"
