#!/usr/bin/env bash
# Ensures the Debian packages Jinx builds against are installed.
# As root it installs what is missing (apt-get update once first);
# otherwise it prints the exact apt-get line to run and fails.
set -u
# gcc/libc6-dev build the glibc images (static glibc: libc.a is in libc6-dev), g++ and
# libstdc++-12-dev the C++ images (static libstdc++).
PKGS="linux-libc-dev libcapstone-dev libcmocka-dev musl-tools gcc libc6-dev g++ libstdc++-12-dev binutils make clang gdb python3 valgrind libvirt-dev libvirt0"
# libFuzzer and the sanitizer runtimes for clang: `make fuzz-smoke` (CI runs it) and the
# clang TSan and MSan guest tests (tests/guest/guest.mk, `make guest-tests`).
OPTIONAL="libclang-rt-14-dev"
# Benchmark plots (scripts/bench/*.sh draw PNGs with gnuplot). Installed as root like the
# rest; otherwise only a note: the benchmarks still run and say that the plot is missing.
BENCH="gnuplot-nox"
# The browser test of `jinxctl inspect --html` (tests/integration/html.sh: headless
# chromium, offline). Installed as root like the rest; otherwise a note (html.sh fails
# and names the package).
BENCH="$BENCH chromium"
# `jinx campaign` on Slurm: tests/integration/campaign.sh starts a private single-node
# cluster (scripts/slurm/local-slurm.sh). Installed as root like the rest; otherwise a note
# (that test installs them itself as root, and fails loudly without them).
BENCH="$BENCH slurm-wlm munge"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=""
for p in $PKGS $OPTIONAL; do
  installed "$p" || missing="$missing $p"
done
bench_missing=""
for p in $BENCH; do
  installed "$p" || bench_missing="$bench_missing $p"
done
if [ -n "$bench_missing" ] && [ "$(id -u)" -eq 0 ]; then
  missing="$missing$bench_missing"
elif [ -n "$bench_missing" ]; then
  echo "jinx setup: note: benchmark plots, the browser test and the Slurm campaign test need:$bench_missing (sudo apt-get install -y$bench_missing)" >&2
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "jinx setup: installing missing Debian packages:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || { echo "jinx setup: apt-get update failed" >&2; exit 1; }
  # shellcheck disable=SC2086
  apt-get install -y -qq $missing >&2 || { echo "jinx setup: apt-get install$missing failed" >&2; exit 1; }
  exit 0
fi
echo "jinx setup: missing Debian packages:$missing" >&2
echo "jinx setup: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
exit 1
