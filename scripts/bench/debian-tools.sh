#!/usr/bin/env bash
# Debian's own multithreaded tools, unmodified (dynamic glibc binaries from the archive),
# as a real-program corpus (issue 28): for each tool, on a generated input,
#   native   the tool run natively (the reference bytes: SHA-256 of its stdout)
#   run      bin/jinx-vmm run (free execution), its stdout's SHA-256 against native
#   attach   bin/jinx-vmm run --attach 5/s (simulation rounds while it runs), likewise
#   serial   bin/jinx-vmm run --serial (traced: one thread at a time, a cue point at every
#            shared access) on the small input, against native on the same input; bounded
#            by --serial-timeout (a tool that does not finish shows "timeout")
#   jinx     bin/jinx test --budget B --jobs 1 --json on the small input: found (must be
#            false), could_not_test (must be false), schedules, schedules/s, sparse ones
# and checks that the working directory on the host is unchanged by every jinx run. One
# more check writes a file: `xz -T2 -k in.bin` in a scratch copy, natively and under
# jinx-vmm run (--out-dir copies what the program wrote): the same in.bin.xz bytes, and
# the host's copy gains nothing under jinx (the program's writes are private).
#
#   scripts/bench/debian-tools.sh [--budget DUR] [--tools a,b,...] [--size KIB]
#                                 [--small KIB] [--serial-timeout DUR] [--quick] [--markdown]
#
#   --budget DUR          jinx test's budget per tool (default 60s)
#   --tools LIST          default xz,zstd,pigz,pbzip2,sort,sort-8m
#   --size KIB            the input of native, run and attach (default 2048)
#   --small KIB           the input of serial and jinx test (default 128)
#   --serial-timeout DUR  one --serial run's bound (default 60s)
#   --quick               budget 15s, serial timeout 20s, input 512 KiB (a smoke test)
#   --markdown            print the table as Markdown (for docs/real-programs.md)
#
# Installs what is missing (xz-utils, zstd, pigz, pbzip2, coreutils) with apt-get when run
# as root (one `apt-get update` first); otherwise, or without the network, the tools it
# cannot find are skipped with a clear message. Needs `make` (bin/jinx, bin/jinx-vmm).
# Inputs are generated from a fixed seed (text lines of a 2000-word vocabulary mixed with
# random binary runs), so every run compresses the same bytes. Times are wall
# milliseconds of one run each, start-up included. Results:
# bench-results/debian-tools.{csv,json}. Not part of `make test` (tests/integration/
# debian-tools.sh is the short check).
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
export BIN=${BIN:-bin}
ROOT=$PWD

budget=60 tools="xz,zstd,pigz,pbzip2,sort,sort-8m" size=2048 small=128 ser_tmo=60 markdown=0
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) [ $# -ge 2 ] || bench_die "--budget needs a duration"
              budget=$(bench_seconds "$2") || bench_die "--budget $2: expected seconds such as 30s or 2m"; shift 2 ;;
    --tools) [ $# -ge 2 ] || bench_die "--tools needs a list"; tools=$2; shift 2 ;;
    --size) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || bench_die "--size needs KiB"; size=$2; shift 2 ;;
    --small) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || bench_die "--small needs KiB"; small=$2; shift 2 ;;
    --serial-timeout) [ $# -ge 2 ] || bench_die "--serial-timeout needs a duration"
                      ser_tmo=$(bench_seconds "$2") || bench_die "--serial-timeout $2: expected seconds"; shift 2 ;;
    --quick) budget=15; ser_tmo=20; size=512; shift ;;
    --markdown) markdown=1; shift ;;
    -h|--help) sed -n '2,/^set -u$/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown argument $1 (--help for usage)" ;;
  esac
done
[ "$budget" -ge 1 ] 2>/dev/null || bench_die "--budget: at least 1s"
[ -x "$BIN/jinx" ] || bench_die "no $BIN/jinx: run make first"
bench_need_build

# tool -> "package|command|arguments|input" (the input file is the last argument; input
# "lines": 300000 short lines, both sizes, as sort sorts in threads only from 128K lines
# on, and with -S 8M it spills them to temporary files in /tmp instead, in one thread)
spec() {
  case "$1" in
    xz)     echo "xz-utils|xz|-T2 --block-size=64KiB -c" ;;
    zstd)   echo "zstd|zstd|-T2 -c" ;;
    pigz)   echo "pigz|pigz|-p 2 -c" ;;
    pbzip2) echo "pbzip2|pbzip2|-p2 -c" ;;
    sort)   echo "coreutils|sort|--parallel=2 -S 32M|lines" ;;
    sort-8m) echo "coreutils|sort|--parallel=2 -S 8M|lines" ;;
    *) return 1 ;;
  esac
}
IFS=, read -r -a list <<<"$tools"
[ ${#list[@]} -gt 0 ] || bench_die "no tools"
for t in "${list[@]}"; do spec "$t" >/dev/null || bench_die "unknown tool $t (xz, zstd, pigz, pbzip2, sort, sort-8m)"; done

# Install what is missing, once.
missing=""
for t in "${list[@]}"; do
  IFS='|' read -r pkg cmd _ <<<"$(spec "$t")"
  command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "SKIP install: not root (or no apt-get); missing tools are skipped (apt-get install$missing)" >&2
  else
    echo "installing:$missing (apt-get update once first)" >&2
    if ! { apt-get update -q >/dev/null 2>&1 &&
           DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; }; then
      echo "SKIP install: apt-get failed (no network or no archive?); missing tools are skipped" >&2
    fi
  fi
fi

ulimit -c 0
export LC_ALL=C # sort's order; the guest's environment is empty, so its libc is in C too
mkdir -p "$RESULTS"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
W=$tmp/work; mkdir -p "$W"
gen() { # FILE KIB
  python3 - "$1" "$2" <<'EOF'
import random, sys
path, kib = sys.argv[1], int(sys.argv[2])
r = random.Random(28)
words = [''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(r.randint(2, 9)))
         for _ in range(2000)]
out = bytearray()
while len(out) < kib * 1024:
    if r.random() < 0.8:
        out += (' '.join(r.choice(words) for _ in range(r.randint(3, 14))) + '\n').encode()
    else:
        out += bytes(r.getrandbits(8) for _ in range(r.randint(64, 1024)))
open(path, 'wb').write(out[:kib * 1024])
EOF
}
gen "$W/input.bin" "$size"; gen "$W/small.bin" "$small"
python3 -c 'import random, sys
r = random.Random(28)
open(sys.argv[1], "w").write("".join("%x\n" % r.getrandbits(24) for _ in range(300000)))' "$W/lines.txt"
host=$(bench_host)
csv=$RESULTS/debian-tools.csv
echo "tool,command,input,native_ms,run_ms,run_same,attach_ms,attach_same,serial_ms,serial_same,host_unchanged,found,could_not_test,schedules,schedules_per_second,sparse_schedules,jinx_status,note" >"$csv"
now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
state() { (cd "$W" && find . -printf '%p %s %T@\n' | sort && sha256sum input.bin small.bin lines.txt); }
state >"$tmp/state0"

# jinx-vmm run MODE... -- ARGS: prints "ms sha status"
vmm_run() { # TIMEOUT MODE-WORDS(one string) CMD ARGS...
  local tmo=$1 mode=$2 t0 st; shift 2
  t0=$(now_ms)
  # shellcheck disable=SC2086
  (cd "$W" && timeout -s KILL $((tmo + 10)) "$ROOT/$BIN/jinx-vmm" run --no-control --quiet \
     --timeout "${tmo}s" $mode --ro-dir "$W" "$@") >"$tmp/out" 2>"$tmp/err"; st=$?
  echo "$(( $(now_ms) - t0 )) $(sha256sum <"$tmp/out" | cut -c1-64) $st"
}

host_ok=yes
for t in "${list[@]}"; do
  IFS='|' read -r pkg cmd args kind <<<"$(spec "$t")"
  big=input.bin sml=small.bin
  [ "$kind" = lines ] && big=lines.txt sml=lines.txt
  p=$(command -v "$cmd" 2>/dev/null)
  if [ -z "$p" ]; then
    echo "SKIP $t: $cmd not installed (apt-get install $pkg)" >&2
    echo "$t,$cmd $args,,,,,,,,,,,,,,,,skipped: not installed" >>"$csv"; continue
  fi
  note=""
  printf '%s: native ...' "$t" >&2
  # shellcheck disable=SC2086
  t0=$(now_ms); (cd "$W" && "$p" $args $big) >"$tmp/nat" 2>/dev/null; nst=$?; nms=$(( $(now_ms) - t0 ))
  nsha=$(sha256sum <"$tmp/nat" | cut -c1-64)
  # shellcheck disable=SC2086
  (cd "$W" && "$p" $args $sml) >"$tmp/nat-small" 2>/dev/null
  nsmall=$(sha256sum <"$tmp/nat-small" | cut -c1-64)
  [ "$nst" = 0 ] || note="native status $nst"
  same() { # SHA STATUS REF
    if [ "$1" = "$3" ] && [ "$2" = 0 ]; then echo yes
    elif [ "$2" = 124 ] || [ "$2" = 137 ]; then echo timeout
    else echo "no(status $2)"; fi
  }
  printf ' run ...' >&2
  # shellcheck disable=SC2086
  read -r rms rsha rst <<<"$(vmm_run 120 "" "$p" -- $args $big)"
  [ "$rst" = 0 ] || note="$note${note:+; }run: $(grep -v '^jinx-vmm:   ' "$tmp/err" | grep -m1 -E 'limit|unsupported|error' | cut -c1-160)"
  printf ' attach ...' >&2
  # shellcheck disable=SC2086
  read -r ams asha ast <<<"$(vmm_run 120 "--attach 5/s" "$p" -- $args $big)"
  printf ' serial ...' >&2
  # shellcheck disable=SC2086
  read -r sms ssha sst <<<"$(vmm_run "$ser_tmo" "--serial" "$p" -- $args $sml)"
  state >"$tmp/state1"; hu=yes
  cmp -s "$tmp/state0" "$tmp/state1" || { hu=no; host_ok=no; }
  printf ' jinx test ...' >&2
  # shellcheck disable=SC2086
  (cd "$W" && "$ROOT/$BIN/jinx" test --budget "${budget}s" --jobs 1 --json --dump-dir "$tmp/dumps" \
     --ro-dir "$W" "$p" -- $args $sml) >"$tmp/jt.out" 2>"$tmp/jt.err"; jst=$?
  state >"$tmp/state1"; cmp -s "$tmp/state0" "$tmp/state1" || { hu=no; host_ok=no; }
  js=$(grep -a '^{"image"' "$tmp/jt.out" | tail -1)
  [ -n "$js" ] || js='{}'
  if [ "$jst" = 2 ]; then note="$note${note:+; }$(grep -m1 -a 'could not test' "$tmp/jt.err" "$tmp/jt.out" | sed 's/^[^:]*://' | cut -c1-200)"; fi
  rm -rf "$tmp/dumps"
  printf ' done\n' >&2
  python3 - "$js" >"$tmp/jrow" <<'EOF'
import json, sys
try:
    r = json.loads(sys.argv[1])
except Exception:
    r = {}
f = lambda k, d="?": r.get(k, d)
print(",".join(str(x).lower() if isinstance(x, bool) else str(x) for x in
               [f("found"), f("could_not_test"), f("schedules"), f("schedules_per_second"), f("sparse_schedules")]))
EOF
  inp="$size KiB / $small KiB"; [ "$kind" = lines ] && inp="300000 lines (1.9 MiB)"
  echo "$t,$cmd $args,$inp,$nms,$rms,$(same "$rsha" "$rst" "$nsha"),$ams,$(same "$asha" "$ast" "$nsha"),$sms,$(same "$ssha" "$sst" "$nsmall"),$hu,$(cat "$tmp/jrow"),$jst,${note//,/;}" >>"$csv"
done

# A tool that writes a file in its cwd: xz -T2 -k in.bin (keeps in.bin, makes in.bin.xz).
wfile=skipped
if command -v xz >/dev/null 2>&1; then
  mkdir -p "$tmp/nat-w" "$tmp/jx-w" "$tmp/outdir"
  cp "$W/small.bin" "$tmp/nat-w/in.bin"; cp "$W/small.bin" "$tmp/jx-w/in.bin"
  (cd "$tmp/nat-w" && xz -T2 --block-size=64KiB -k in.bin)
  before=$(cd "$tmp/jx-w" && find . -printf '%p %s %T@\n' | sort)
  (cd "$tmp/jx-w" && "$ROOT/$BIN/jinx-vmm" run --no-control --quiet --ro-dir . --out-dir "$tmp/outdir" \
     "$(command -v xz)" -- -T2 --block-size=64KiB -k in.bin) >/dev/null 2>"$tmp/werr"; wst=$?
  after=$(cd "$tmp/jx-w" && find . -printf '%p %s %T@\n' | sort)
  got="$tmp/outdir$(realpath "$tmp/jx-w")/in.bin.xz"
  if [ "$wst" = 0 ] && [ "$before" = "$after" ] && [ -f "$got" ] && cmp -s "$got" "$tmp/nat-w/in.bin.xz"; then
    wfile="identical in.bin.xz (via --out-dir), host dir unchanged"
  else
    wfile="FAILED: status $wst, host dir $([ "$before" = "$after" ] && echo unchanged || echo CHANGED), $( [ -f "$got" ] && { cmp -s "$got" "$tmp/nat-w/in.bin.xz" && echo same bytes || echo other bytes; } || echo no in.bin.xz)"
    host_ok=no
  fi
fi

python3 - "$csv" "$RESULTS/debian-tools.json" "$budget" "$host" "$markdown" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$size" "$small" "$ser_tmo" "$wfile" <<'EOF'
import csv, json, sys
sys.dont_write_bytecode = True  # no __pycache__ left in scripts/bench
sys.path.insert(0, "scripts/bench")
from table import print_table
(path, out, budget, host, md, commit, load_end, size, small, ser_tmo, wfile) = sys.argv[1:12]
host = json.loads(host); md = md == "1"
rows = list(csv.DictReader(open(path)))
hdr = ["tool", "input (run / serial, jinx test)", "native ms", "run ms", "attach ms", "serial ms", "bytes identical (run/attach/serial)",
       "host unchanged", "jinx test found / could not test", "schedules", "schedules/s", "sparse"]
table = []
for r in rows:
    if r["note"].startswith("skipped"):
        table.append([r["tool"], "-", "-", "-", "-", "-", "skipped: not installed", "-", "-", "-", "-", "-"]); continue
    cnt = r["could_not_test"]
    table.append([f'`{r["command"]}`', r["input"], r["native_ms"], r["run_ms"], r["attach_ms"], r["serial_ms"],
                  f'{r["run_same"]} / {r["attach_same"]} / {r["serial_same"]}', r["host_unchanged"],
                  f'{r["found"]} / {cnt}', r["schedules"], r["schedules_per_second"], r["sparse_schedules"]])
print(f"Debian tools, jinx test --budget {budget}s --jobs 1, "
      f"serial bound {ser_tmo} s, commit {commit}, {host['date']}, {host['cpus']} CPUs, "
      f"load {host['loadavg_start']} at start, {load_end} at end")
print_table(hdr, table, md)
for r in rows:
    if r["note"]:
        print(f'note {r["tool"]}: {r["note"]}')
print(f"writes a file (xz -T2 -k in.bin under jinx-vmm run): {wfile}")
bad = [r["tool"] for r in rows if r["found"] == "true"]
print("false bugs: " + (", ".join(bad) if bad else "none"))
json.dump(dict(host=host, commit=commit, budget_s=int(budget), input_kib=int(size), small_kib=int(small),
               serial_timeout_s=int(ser_tmo), load_end=load_end, writes_file=wfile, rows=rows),
          open(out, "w"), indent=1)
EOF
bench_check_json "$RESULTS/debian-tools.json"
echo "results: $csv $RESULTS/debian-tools.json" >&2
[ "$host_ok" = yes ] || { echo "the host changed under a jinx run" >&2; exit 1; }
