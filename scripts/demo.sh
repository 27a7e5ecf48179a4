#!/usr/bin/env bash
# `make demo`: boots the Circle image and the correct image under jinx-vmm (free
# execution: all threads in parallel on KVM), then the Circle image with its bug window
# widened, to show what a detected failure looks like.
set -u
cd "$(dirname "$0")/.."
VMM=bin/jinx-vmm
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# Every step boots a guest: on a machine that cannot, say why once and stop.
if ! why=$($VMM check-kvm 2>&1); then
  echo "make demo: the demo boots guests on KVM, and this machine cannot: $why" >&2
  exit 1
fi
say "jinx-vmm run images/bin/circle   (the Jinx article's Circle class; its bug is rare)"
$VMM run images/bin/circle; echo "exit status $?"
say "jinx-vmm run images/bin/correct  (same shape, no bug)"
$VMM run images/bin/correct; echo "exit status $?"
say "jinx-vmm run --serial images/bin/circle  (one thread at a time, switching at every shared access: the bug fires, identically every time)"
$VMM run --serial images/bin/circle; echo "exit status $?"
say "jinx-vmm run --serial images/bin/correct  (the same on the correct program: no false alarm)"
$VMM run --serial images/bin/correct; echo "exit status $?"
say "jinx-vmm run images/bin/widen/circle 200  (the bug's window widened by a sleep, 200 calls: it fires)"
$VMM run images/bin/widen/circle 200; echo "exit status $?"
say "jinx-vmm run images/bin/widen/deadlock-abba  (lock-order inversion, widened)"
$VMM run images/bin/widen/deadlock-abba; echo "exit status $?"
say "jinx-vmm run --attach 5/s --dump-dir DIR images/bin/circle  (simulation rounds: rerun with seed 1, 2, ... until the bug shows)"
dumps=$(mktemp -d /tmp/jinx-demo-XXXXXX)
for seed in $(seq 1 30); do
  out=$($VMM run --no-control --attach 5/s --verbose-rounds --seed "$seed" --dump-dir "$dumps" images/bin/circle 2>&1); st=$?
  if [ $st != 0 ]; then
    echo "run $seed (seed $seed):"; echo "$out" | grep -v "^jinx-vmm:   r[0-9a-z]* " | head -30
    echo "exit status $st"
    break
  fi
  echo "run $seed: no bug ($(echo "$out" | grep -c '^jinx: round') round lines)"
done
dump=$(ls "$dumps"/*.jinxdump 2>/dev/null | head -1)
if [ -n "$dump" ]; then
  say "jinxctl inspect $dump"
  bin/jinxctl inspect --disasm 4 "$dump" | head -40
  if bin/jinxctl inspect --disasm 0 "$dump" 2>/dev/null | grep -q '^interleaving'; then
    say "jinx-vmm replay $dump  (from the round's snapshot and schedule: the same crash, every time)"
    for i in 1 2 3; do $VMM replay "$dump" 2>&1 | grep -E "replay (reproduced|did NOT)"; done
  else
    echo "(this crash was met in free execution: no snapshot to replay from, docs/dumps.md)"
  fi
fi
rm -rf "$dumps"
echo
echo "Next: make test (every test), docs/rounds.md, scripts/bench/time-to-bug.sh."
