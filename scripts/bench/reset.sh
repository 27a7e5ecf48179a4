#!/usr/bin/env bash
# Reset-to-snapshot cost against the number of dirty pages (and vCPUs): the guest keeps
# writing N pages spread over T threads; jinx-vmm's snapshot selftest snapshots, lets
# it run, restores (timing each phase), and checks the restore is exact.
# Usage: scripts/bench/reset.sh [ROUNDS]   (env: PAGES="10 100 1000 10000", THREADS=3)
set -eu
cd "$(dirname "$0")/../.."
ROUNDS=${1:-15}; PAGES=${PAGES:-"10 100 1000 10000"}; THREADS=${THREADS:-3}
mkdir -p bench-results
med() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
printf 'reset cost, %s writer threads + main = %s vCPUs, median of %s restores\n' "$THREADS" $((THREADS+1)) "$ROUNDS"
printf '  %8s %10s %10s %10s %10s %10s %10s\n' pages copied total_us dirtylog copy invalid vcpus
json="["
for n in $PAGES; do
  interval_us=$((2000 + n * 20))
  raw=bench-results/reset-$n.raw
  bin/jinx-vmm run --mem 512M --snapshot-selftest "$ROUNDS" --selftest-interval "${interval_us}us" \
    build/guest-tests/dirty "$n" "$THREADS" $(( (ROUNDS * 2 + 4) * interval_us / 1000 + 200 )) 2>&1 \
    | grep "selftest round" >"$raw" || true
  f() { sed -n "s/.*$1 \([0-9.]*\).*/\1/p" "$raw" | med; }
  copied=$(sed -n 's/.*: \([0-9]*\) pages copied.*/\1/p' "$raw" | med)
  total=$(sed -n 's/.*restore \([0-9.]*\) us.*/\1/p' "$raw" | med)
  dl=$(f "dirty log"); cp=$(f "copy"); inv=$(f "invalidate"); vc=$(f "vcpus")
  printf '  %8s %10s %10s %10s %10s %10s %10s\n' "$n" "$copied" "$total" "$dl" "$cp" "$inv" "$vc"
  json="$json{\"pages\":$n,\"copied\":$copied,\"restore_us\":$total,\"dirty_log_us\":$dl,\"copy_us\":$cp,\"invalidate_us\":$inv,\"vcpus_us\":$vc},"
done
echo "${json%,}]" >bench-results/reset.json
