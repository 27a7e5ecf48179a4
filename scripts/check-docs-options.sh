#!/usr/bin/env bash
# Every option that a command prints in its --help must be documented somewhere in
# README.md or docs/*.md (docs/usage.md has an index of them all), and every long option
# the commands' parsers accept (their option tables in vmm/: `{"name", ...`) must be in
# some --help.
#
#   scripts/check-docs-options.sh [--also FILE]...
#
# Reads the --help of jinx-vmm, jinxctl and jinx, and of their subcommands (jinx-vmm
# replay and check-kvm, jinxctl inspect, jinx campaign and hosts), from $BIN (default
# bin/: run `make` first). An option counts as documented when `--NAME` appears as a whole
# word (so --seeds does not document --seed). --also FILE checks the options mentioned in
# FILE too, e.g. an old README: `--also <(git show OLDREV:README.md)`.
# Exit 0: all documented; 1: some are not (listed); 2: usage error or no binaries.
# Run by `make check-docs` (CI's layers step).
set -u
cd "$(dirname "$0")/.." || exit 2
BIN=${BIN:-bin}
also=()
while [ $# -gt 0 ]; do
  case $1 in
    --also) [ $# -ge 2 ] || { echo "usage: $0 [--also FILE]..." >&2; exit 2; }
            also+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--also FILE]..." >&2; exit 2 ;;
  esac
done
for b in jinx-vmm jinxctl jinx; do
  [ -x "$BIN/$b" ] || { echo "check-docs-options: $BIN/$b not built (run make)" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Each help text, whatever its exit status (some print usage to stderr).
helps=("jinx-vmm --help" "jinx-vmm replay --help" "jinx-vmm check-kvm --help"
       "jinxctl --help" "jinxctl inspect --help"
       "jinx --help" "jinx test --help" "jinx campaign --help" "jinx hosts --help")
for h in "${helps[@]}"; do
  read -r cmd args <<<"$h"
  # shellcheck disable=SC2086
  out=$("$BIN/$cmd" $args 2>&1)
  if [ -z "$out" ]; then
    echo "check-docs-options: $BIN/$h printed nothing" >&2; exit 2
  fi
  printf '%s\n' "$out" | grep -oE -- '--[a-z][a-z0-9-]*' | sed "s|\$|	$h|" >>"$tmp/opts"
done
for f in "${also[@]+"${also[@]}"}"; do
  grep -oE -- '--[a-z][a-z0-9-]*' "$f" | sed "s|\$|	$f|" >>"$tmp/opts" ||
    { echo "check-docs-options: no options in $f" >&2; exit 2; }
done

# The parsers' option tables: getopt's `{"name", required_argument|no_argument, ...}` and
# the cli module's `{"name", CLI_FLAG|CLI_U64|..., ...}`.
grep -ohE '\{"[a-z][a-z0-9-]*", *(CLI_[A-Z0-9_]+|required_argument|no_argument|optional_argument)' \
  vmm/*/*.c | sed -E 's/^\{"([^"]*)".*/--\1/' | sort -u >"$tmp/parsed"
[ -s "$tmp/parsed" ] || { echo "check-docs-options: no option tables found in vmm/" >&2; exit 2; }
cut -f1 "$tmp/opts" | sort -u >"$tmp/helped"
unhelped=$(comm -23 "$tmp/parsed" "$tmp/helped")
if [ -n "$unhelped" ]; then
  for o in $unhelped; do echo "accepted but in no --help: $o"; done
  echo "check-docs-options: $(echo "$unhelped" | wc -w) accepted options are in no command's --help" >&2
  exit 1
fi

docs=(README.md docs/*.md)
cat "${docs[@]}" >"$tmp/docs"
total=0 missing=0
while IFS=$'\t' read -r opt from; do
  total=$((total + 1))
  if ! grep -qE -- "(^|[^a-z0-9-])${opt}([^a-z0-9-]|\$)" "$tmp/docs"; then
    echo "undocumented: $opt (from $from)"
    missing=$((missing + 1))
  fi
done < <(sort -u -k1,1 "$tmp/opts")
if [ "$missing" -gt 0 ]; then
  echo "check-docs-options: $missing of $total options are in no file of README.md docs/*.md" >&2
  exit 1
fi
echo "check-docs-options: all $total options are documented in README.md or docs/*.md"
