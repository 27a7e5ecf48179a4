#!/usr/bin/env bash
# Which crash dumps can `jinx-vmm replay` reproduce? Runs each buggy image under
# `jinx-vmm run --attach RATE --dump-dir` for seeds 1..N with each --tail value, and
# classifies every run: no crash; a crash retired from a simulation (replayable); a crash
# in the serialized tail after a retired suspicious schedule (replayable); a crash in free
# execution (not replayable: no snapshot and schedule lead to it). Replayable dumps are
# then replayed (--replays each) and must reproduce their crash every time.
#   scripts/bench/replayable.sh [--seeds 10] [--tails "0 4ms"] [--rate 5/s] [--replays 3]
#                               [--quick] [IMAGE...]
# Writes $RESULTS/replayable.{csv,json} and prints a table. Exit 1 if a replay failed.
set -u
cd "$(dirname "$0")/../.."
. scripts/bench/lib.sh
BIN=${BIN:-bin}; VMM="$BIN/jinx-vmm"; CTL="$BIN/jinxctl"
seeds=10; tails="0 4ms"; rate=5/s; replays=3; images=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --tails) tails=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --replays) replays=$2; shift 2 ;;
    --quick) seeds=3; replays=1; images=(circle race-o1o2); shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --*) bench_die "unknown option $1" ;;
    *) images+=("$1"); shift ;;
  esac
done
case "$seeds$replays" in *[!0-9]*) bench_die "--seeds and --replays take whole numbers" ;; esac
[ ${#images[@]} -gt 0 ] || images=(circle flag-open race-o1o2 race-lock-x bounding-2v bounding-3t deadlock-abba wsq)
bench_need_build "$CTL"
mkdir -p "$RESULTS"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv="$RESULTS/replayable.csv"; json="$RESULTS/replayable.json"
echo "image,tail,seed,class,replays_ok,replays" >"$csv"
replay_fail=0
printf '%-14s %-6s %5s %6s %9s %6s %6s %10s\n' image tail runs crash sim-crash tail free replays-ok
for img in "${images[@]}"; do
  [ -x "images/bin/$img" ] || bench_die "no images/bin/$img (run make)"
  for t in $tails; do
    nc=0; ns=0; nt=0; nf=0; rok=0; rall=0
    for s in $(seq 1 "$seeds"); do
      rm -rf "$tmp/d"; mkdir "$tmp/d"
      timeout 120 "$VMM" run --no-control --quiet --seed "$s" --attach "$rate" --tail "$t" \
        --dump-dir "$tmp/d" "images/bin/$img" >/dev/null 2>"$tmp/err"
      dump=$(sed -n 's/.*dump written to \(.*\.jinxdump\).*/\1/p' "$tmp/err" | head -1)
      class=none; ok=0; n=0
      if [ -n "$dump" ]; then
        nc=$((nc + 1))
        if "$CTL" inspect --disasm 0 "$dump" 2>/dev/null | grep -q '^interleaving'; then
          if grep -q "serialized tail" "$tmp/err"; then class=tail; nt=$((nt + 1))
          else class=sim; ns=$((ns + 1)); fi
          for _ in $(seq 1 "$replays"); do
            n=$((n + 1))
            if "$VMM" replay "$dump" 2>&1 | grep -q "replay reproduced"; then ok=$((ok + 1)); fi
          done
          rok=$((rok + ok)); rall=$((rall + n))
          [ $ok = $n ] || { replay_fail=1; echo "replay FAILED: $img tail $t seed $s ($ok/$n)"; }
        else class=free; nf=$((nf + 1)); fi
      fi
      echo "$img,$t,$s,$class,$ok,$n" >>"$csv"
    done
    printf '%-14s %-6s %5s %6s %9s %6s %6s %10s\n' "$img" "$t" "$seeds" "$nc" "$ns" "$nt" "$nf" "$rok/$rall"
  done
done
python3 - "$csv" "$json" "$(bench_host)" <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out = {"host": json.loads(sys.argv[3]), "runs": rows, "summary": {}}
for r in rows:
    k = r["tail"]
    s = out["summary"].setdefault(k, {"runs": 0, "crashes": 0, "sim": 0, "tail": 0, "free": 0})
    s["runs"] += 1
    if r["class"] != "none":
        s["crashes"] += 1
        s[r["class"]] += 1
for k, s in out["summary"].items():
    s["replayable_share"] = round((s["sim"] + s["tail"]) / s["crashes"], 3) if s["crashes"] else None
json.dump(out, open(sys.argv[2], "w"), indent=1)
for k, s in out["summary"].items():
    print(f"tail {k}: {s['crashes']} crashes in {s['runs']} runs, replayable {s['sim'] + s['tail']} "
          f"({s['sim']} simulated, {s['tail']} in the tail), free {s['free']}")
EOF
bench_check_json "$json"
echo "results: $csv $json"
exit $replay_fail
