#!/usr/bin/env bash
# Ensures the Debian packages Jinx builds against are installed.
# As root it installs what is missing (apt-get update once first);
# otherwise it prints the exact apt-get line to run and fails.
set -u
PKGS="linux-libc-dev libcapstone-dev libcmocka-dev musl-tools gcc make clang gdb python3"
# libFuzzer and the sanitizer runtimes for clang: `make fuzz-smoke` (CI runs it).
OPTIONAL="libclang-rt-14-dev"
missing=""
for p in $PKGS $OPTIONAL; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
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
