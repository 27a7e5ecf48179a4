#!/usr/bin/env bash
# `jinxctl inspect --html` in a real browser (headless chromium, offline): for a dump of
# every buggy image (found by `jinx test`), the page loads, its script runs under its
# CSP, it has one column per thread, the first differing cue point highlighted and the
# crashing frame (htmlcheck.py); a doctored dump whose symbols, command line and detail
# are markup and script, in a directory whose name holds quotes, injects nothing; a
# synthetic dump of 25000 cue points renders in under 2 s and stays under 5 MiB; bad
# output paths and bad dumps are refused clearly. Saves the screenshot the docs show
# (in the test's temporary directory; SCREENSHOT=docs/img/inspect-html.png refreshes the
# committed one, SCREENSHOT= for none), so a test run leaves the tree clean.
#   tests/integration/html.sh [--corpus]   (--corpus: also every buggy corpus program,
#                                           CORPUS_BUDGET seconds of jinx test each, default 15)
# Env: HTML_IMAGES (names of the buggy images to page, default all; make test pages a
# subset, tests/quick.conf).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
CTL="$BIN/jinxctl"; JINX="$BIN/jinx"
SCREENSHOT=${SCREENSHOT-@tmp}
CORPUS=0; [ "${1:-}" = "--corpus" ] && CORPUS=1
mk_tmp

# Debian's chromium; as root the test installs it (scripts/setup-deps.sh does too).
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "html.sh: installing chromium" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
  fi
  command -v chromium >/dev/null || { echo "FAIL chromium is needed (apt-get install chromium)"; exit 1; }
fi
browser() { # browser OUT_DOM URL [extra flags]: the DOM after load and script
  local out=$1 url=$2; shift 2
  timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chrome" \
    "$@" --dump-dom "$url" >"$out" 2>"$tmp/chrome.err"
}
cc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -iquote . -iquote vmm -o "$tmp/htmldump" \
  tests/integration/htmldump.c "$BUILD/libjinxvmm.a" "$BUILD/libexplorer.a" "$BUILD/libjinxlib.a" -lcapstone -lpthread -lm \
  || { echo "FAIL cannot build htmldump"; exit 1; }

# page NAME DUMP [htmlcheck args]: --html, --json, the browser, the DOM checks.
page() {
  local name=$1 dump=$2; shift 2
  local out="$tmp/$name.html"
  if ! "$CTL" inspect --html "$out" "$dump" 2>"$tmp/err"; then
    bad "$name: inspect --html failed: $(head -c 300 "$tmp/err")"; return 1; fi
  "$CTL" inspect --json --disasm 0 "$dump" >"$tmp/$name.json" 2>/dev/null
  local fd frag=""  # select the first difference, as a click on it would
  fd=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["round"]; print(r["first_difference"] if r else -1)' "$tmp/$name.json")
  [ "${fd:--1}" -ge 0 ] && { frag="#cue-$fd"; set -- "$@" --select "$fd"; }
  if ! browser "$tmp/$name.dom" "file://$out$frag"; then bad "$name: chromium failed"; tail -3 "$tmp/chrome.err"; return 1; fi
  if python3 tests/integration/htmlcheck.py "$tmp/$name.dom" "$tmp/$name.json" "$@" >"$tmp/check"; then
    ok "$name: $(stat -c %s "$out") bytes, $(grep -c '^ok' "$tmp/check") DOM checks, $(grep -o 'rendered in [0-9]* ms' "$tmp/check" || grep -o 'data-render-ms=[0-9]*' "$tmp/check") ($(grep -o 'id="tl-stats">[^<]*' "$out" | sed 's/.*">//' | cut -c1-70))"
  else bad "$name: DOM checks"; grep FAIL "$tmp/check"; return 1; fi
}

# A dump of each buggy image: jinx test with rounds until the bug (most take < 2 s).
buggy=""
for m in images/*.manifest; do
  name=$(basename "$m" .manifest)
  grep -q '^bug: none' "$m" && continue
  [ -n "${HTML_IMAGES:-}" ] && ! [[ " $HTML_IMAGES " == *" $name "* ]] && continue
  buggy="$buggy images/bin/$name"
done
if [ $CORPUS = 1 ]; then
  for p in images/bin/corpus/*; do case "$p" in *-ok) ;; *) [ -f "$p" ] && [ -x "$p" ] && buggy="$buggy $p" ;; esac; done
fi
round_dump=""; shot_dump=""; missed=0
for img in $buggy; do
  name=$(basename "$img"); [ "${img#images/bin/corpus/}" != "$img" ] && name="corpus-$name"
  budget=60; [ "$name" != "${name#corpus-}" ] && budget=${CORPUS_BUDGET:-15}
  timeout $((budget + 60)) "$JINX" test "$img" --budget ${budget}s --dump-dir "$tmp/d-$name" >"$tmp/jt" 2>&1
  st=$?
  dump=$(ls "$tmp/d-$name"/*.jinxdump 2>/dev/null | head -1)
  if [ $st != 1 ] || [ -z "$dump" ]; then
    # Finding bugs is rounds.sh's and replay.sh's to hold; here a miss (a loaded
    # machine) only costs the page, unless it becomes the rule.
    echo "note $name: no bug within ${budget}s (status $st): no page"
    [ "$name" = "${name#corpus-}" ] && missed=$((missed + 1))
    continue
  fi
  page "$name" "$dump" || continue
  if "$CTL" inspect --json --disasm 0 "$dump" 2>/dev/null | grep -q '"round":{'; then
    [ -z "$round_dump" ] && round_dump=$dump
    [ "$name" = flag-open ] && shot_dump=$dump
  fi
done
if [ $missed -le 2 ]; then ok "pages for the dumps of all but $missed buggy images"
else bad "$missed buggy images gave no dump"; fi
[ -n "$round_dump" ] || { bad "no dump with round records among the images: cannot go on"; exit 1; }
[ -n "$shot_dump" ] || shot_dump=$round_dump

# Hostile strings, in a directory whose name holds quotes and markup.
hd="$tmp/q\"u'o<t>e"; mkdir -p "$hd"
core="${round_dump%.jinxdump}.core"
cp "$core" "$hd/" && "$tmp/htmldump" hostile "$round_dump" "$hd/evil.jinxdump" \
  || bad "cannot doctor a hostile dump"
page hostile "$hd/evil.jinxdump" --hostile

# 25000 synthetic cue points over 4 threads: rendered in < 2 s, file < 5 MiB.
cp "$core" "$tmp/" && "$tmp/htmldump" big "$round_dump" "$tmp/big.jinxdump" 25000 \
  || bad "cannot make the synthetic dump"
t0=$(date +%s%N)
page big "$tmp/big.jinxdump" --threads 4 --max-ms 2000
t1=$(date +%s%N)
sz=$(stat -c %s "$tmp/big.html" 2>/dev/null || echo 0)
rows=$(grep -o '<div class="r[ "]' "$tmp/big.html" | wc -l)
if [ "$sz" -gt 0 ] && [ "$sz" -lt $((5 << 20)) ] && [ "$rows" -ge 20000 ]; then
  ok "25000 cue points: $rows rows, $sz bytes (< 5 MiB), chromium load + dump $(( (t1 - t0) / 1000000 )) ms"
else bad "25000 cue points: $rows rows, $sz bytes"; fi

# The CLI: options after the dump, clear errors.
if "$CTL" inspect "$round_dump" --html "$tmp/after.html" && [ -s "$tmp/after.html" ]; then
  ok "--html after the DUMP argument"; else bad "--html after the DUMP argument"; fi
"$CTL" inspect --html /nonexistent-dir/x.html "$round_dump" 2>"$tmp/e"; st=$?
if [ $st = 1 ] && grep -q "cannot write /nonexistent-dir/x.html" "$tmp/e"; then ok "unwritable OUT: status 1, $(head -c 120 "$tmp/e")"
else bad "unwritable OUT: status $st: $(cat "$tmp/e")"; fi
head -c 100 "$round_dump" >"$tmp/trunc.jinxdump"
"$CTL" inspect --html "$tmp/t.html" "$tmp/trunc.jinxdump" 2>"$tmp/e"; st=$?
if [ $st = 2 ] && [ -s "$tmp/e" ] && [ ! -e "$tmp/t.html" ]; then ok "truncated dump refused (status 2), no page written"
else bad "truncated dump: status $st"; fi
"$CTL" inspect --html "$tmp/j.html" --json "$round_dump" >/dev/null 2>"$tmp/e"; st=$?
if [ $st = 2 ] && grep -q "does not combine with --json" "$tmp/e" && [ ! -e "$tmp/j.html" ]; then
  ok "--html with --json refused"; else bad "--html with --json: status $st"; fi
"$CTL" inspect --html 2>"$tmp/e"; st=$?
if [ $st = 2 ] && grep -q "html" "$tmp/e"; then ok "--html without a value refused"; else bad "--html without a value: status $st"; fi

# The screenshot the docs show.
[ "$SCREENSHOT" = @tmp ] && SCREENSHOT=$tmp/inspect-html.png
if [ -n "$SCREENSHOT" ] && "$CTL" inspect --html "$tmp/shot.html" "$shot_dump"; then
  mkdir -p "$(dirname "$SCREENSHOT")"
  fd=$("$CTL" inspect --json --disasm 0 "$shot_dump" | python3 -c 'import json,sys; print(json.load(sys.stdin)["round"]["first_difference"])')
  timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chrome" \
    --hide-scrollbars --screenshot="$SCREENSHOT" --window-size=1200,900 "file://$tmp/shot.html#cue-$fd" \
    >/dev/null 2>&1
  if [ -s "$SCREENSHOT" ]; then ok "screenshot $SCREENSHOT"; else bad "no screenshot"; fi
fi

summary "html"
