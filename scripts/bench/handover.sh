#!/usr/bin/env bash
# Is handing the turn between host threads a large part of a cue point's cost?
# Runs scripts/bench/handover-probe.c's five modes alternately, ROUNDS times (default 5),
# and prints each mode's median us per exit and its ratio to the raw exit (single) of the
# same run. docs/benchmarks.md ("Where a cue point's time goes").
#   scripts/bench/handover.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.sh
rounds=${1:-5}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "usage: $0 [ROUNDS>=1]"
[ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo "handover.sh: /dev/kvm is not usable: this benchmark needs KVM" >&2; exit 1; }
probe=${BUILD:-build}/bench/handover-probe
mkdir -p "$(dirname "$probe")"
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -pthread -o "$probe" scripts/bench/handover-probe.c
out=$(mktemp); trap 'rm -f "$out"' EXIT
for ((r = 0; r < rounds; r++)); do
    for m in single onethread handover migrate pinned; do "$probe" "$m" >>"$out"; done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { grep "^$1 " "$out" | cut -d' ' -f2 | bench_med; }
raw=$(median single)
for m in single onethread handover migrate pinned; do
    v=$(median "$m")
    awk -v m="$m" -v v="$v" -v raw="$raw" 'BEGIN { printf "%-10s %7.2f us per exit  %5.2fx raw\n", m, v, v / raw }'
done
