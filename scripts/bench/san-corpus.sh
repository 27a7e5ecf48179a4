#!/usr/bin/env bash
# Issue 27's first bar, measured: ASan, UBSan and TSan builds of the corpus (every program
# with a manifest: images/*.manifest, images/corpus/, images/corpus-compute/) run under
# `jinx-vmm run` with the same output and status as natively.
#
# Builds each program with gcc (g++ for the C++ ones) as each sanitizer variant, runs it
# natively and under `bin/jinx-vmm run`, and compares stdout and exit status:
#  - a bug-free program (manifest `expected: none`: the twins, correct, throughput,
#    cxx-pool) must match one native run byte for byte, its status too; where native
#    runs print different things themselves (correct's reader_sum, throughput's times),
#    the status must match ("varies");
#  - a buggy one's output and status depend on the schedule: jinx's outcome must be one
#    that the native runs also showed, the manifest's `ok` or its `expected` (a native
#    timeout and jinx's deadlock, 123, are the same outcome);
#  - a status jinx gives for its own reasons (125: could not run; a limit in --report)
#    is "jinx" and counts as different.
# Prints a table, program x variant: native status(es), jinx status, same/allowed/DIFF,
# boot to the first thread creation under jinx (`--stats` boot_to_first_clone_us: the
# corpus programs start their threads first thing in main, so about boot to main), and
# the wall time ratio jinx/native (the native run's median). Writes
# $RESULTS/san-corpus-<time>.csv.
#
#   scripts/bench/san-corpus.sh [--variants LIST] [--static] [--runs N] [--jobs J]
#                               [--twins-only] [NAME ...]
#
# Variants: asan ubsan tsan (dynamic, the default) and, with --static, asan-static
# (-static-libasan), ubsan-static (-static: glibc and libubsan linked in) and tsan-static
# (-static-libtsan). gcc refuses `-static` with -fsanitize=address or thread ("cannot
# specify -static"), so their static variants link only the runtime statically.
# --runs N: native runs of each program (default 3).
# --jobs J: programs at once (default 1; at most 2: each is a guest VM). NAME: corpus
# names (circle, dl-abba, matmul-reduce-ok, ...); default all 86.
# Builds go to $BUILD/san-corpus/VARIANT/NAME (rebuilt when the source is newer).
# KEEP=DIR keeps the outputs of each DIFF or jinx row in DIR/VARIANT-NAME/.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.sh
BIN=${BIN:-bin}; OUT=${BUILD:-build}/san-corpus
variants="asan ubsan tsan"; runs=3; jobs=1; twins_only=0; names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --variants) variants=$2; shift 2 ;;
    --static) variants="$variants asan-static ubsan-static tsan-static"; shift ;;
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --twins-only) twins_only=1; shift ;;
    --one) shift; break ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    -*) bench_die "unknown option $1" ;;
    *) names+=("$1"); shift ;;
  esac
done
[ "$jobs" -ge 1 ] && [ "$jobs" -le 2 ] || bench_die "--jobs 1 or 2 (each job is a guest VM)"

# The manifest of NAME and its source: "manifest source".
locate() {
  local n=$1 d
  for d in images/corpus images/corpus-compute; do
    [ -f "$d/$n.manifest" ] && { echo "$d/$n.manifest $d/$n.c"; return; }
  done
  if [ -f "images/$n.manifest" ]; then
    if [ -f "images/src/$n.cpp" ]; then echo "images/$n.manifest images/src/$n.cpp"
    else echo "images/$n.manifest images/src/$n.c"; fi
  fi
}
field() { sed -n "s/^$2: *//p" "$1" | head -1; }

flags_of() {
  case "$1" in
    asan) echo "-fsanitize=address" ;;
    asan-static) echo "-fsanitize=address -static-libasan" ;;
    ubsan) echo "-fsanitize=undefined -fno-sanitize-recover" ;;
    ubsan-static) echo "-fsanitize=undefined -fno-sanitize-recover -static" ;;
    tsan) echo "-fsanitize=thread -pie -fPIE" ;;
    tsan-static) echo "-fsanitize=thread -pie -fPIE -static-libtsan" ;;
    *) bench_die "unknown variant $1" ;;
  esac
}

build_one() {
  local v=$1 n=$2 src=$3 out="$OUT/$1/$2" cc cflags
  # A twin NAME-ok.c includes NAME.c: rebuild when either changed.
  local dep=$src; [[ $n == *-ok ]] && dep="${src%-ok.c}.c"
  if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$dep" ]; then return 0; fi
  mkdir -p "$OUT/$v"
  local libs=""
  if [[ $src == *.cpp ]]; then cc=g++; cflags="-std=c++17"; else cc=gcc; cflags="-std=c11 -D_GNU_SOURCE"; fi
  # g++ -static -fsanitize=undefined (gcc 12) puts libubsan.a after libstdc++.a, whose
  # typeinfo libubsan needs: undefined references unless named again after it.
  [ "$cc" = g++ ] && [ "$v" = ubsan-static ] && libs="-lubsan -lstdc++"
  # shellcheck disable=SC2046,SC2086
  $cc $cflags -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -I images/corpus -I images/src \
    $(flags_of "$v") -o "$out" "$src" $libs 2>"$out.log" || { echo "build failed: $out ($out.log)" >&2; return 0; }
}

# The first sanitizer report header in a stderr file, as "tool:kind", or "-".
report_of() {
  grep -oE 'ERROR: AddressSanitizer: [a-z-]+|runtime error: [a-z -]+|WARNING: ThreadSanitizer: [a-z -]+[a-z]' "$1" \
    | head -1 | sed -E 's/ERROR: AddressSanitizer: /asan:/; s/runtime error: /ubsan:/; s/WARNING: ThreadSanitizer: /tsan:/; s/ /_/g' \
    | grep . || echo -
}

ns() { date +%s%N; }

# One program under one variant: a CSV line on stdout.
# variant,name,class,native_statuses,native_report,jinx_status,jinx_report,verdict,boot_to_clone_ms,native_ms,jinx_ms,ratio,limits
one() {
  local v=$1 n=$2 man src; read -r man src < <(locate "$n")
  local exe="$OUT/$v/$n" tmp
  [ -x "$exe" ] || { echo "$v,$n,-,-,-,-,-,build-failed,-,0,0,0,0"; return 0; }
  tmp=$(mktemp -d)
  local expected ok cls nat=() nst="" nrep="-" t0 t1 nms=()
  expected=$(field "$man" expected); ok=$(field "$man" ok)
  cls=$([ "$expected" = none ] && echo ok || echo buggy)
  local env=(env -i LD_BIND_NOW=1)
  [[ $v == asan* ]] && env+=(ASAN_OPTIONS=detect_leaks=0)   # what jinx-vmm adds (LeakSanitizer needs a fork)
  local k nruns=$runs
  for k in $(seq 1 "$nruns"); do
    t0=$(ns); set +e
    timeout 30 "${env[@]}" "$exe" >"$tmp/n$k.out" 2>"$tmp/n$k.err"; nst=$?; set -e; t1=$(ns)
    nat+=("$nst"); nms+=("$(( (t1 - t0) / 1000000 ))")
    [ "$nrep" = - ] && nrep=$(report_of "$tmp/n$k.err")
  done
  t0=$(ns); set +e
  timeout 600 "$BIN/jinx-vmm" run --quiet --no-control --stats --report "$tmp/r.json" "$exe" \
    >"$tmp/j.out" 2>"$tmp/j.err"; local jst=$?; set -e; t1=$(ns)
  local jms=$(( (t1 - t0) / 1000000 )) jrep; jrep=$(report_of "$tmp/j.err")
  local clone; clone=$(sed -n 's/.*boot_to_first_clone_us=\([-0-9.]*\).*/\1/p' "$tmp/j.err" | head -1)
  clone=$(awk -v u="${clone:--1}" 'BEGIN { if (u < 0) print "-"; else printf "%.1f", u / 1000 }')
  local limits; limits=$(python3 -c 'import json,sys
try: print(len(json.load(open(sys.argv[1]))["limits"]))
except Exception: print(0)' "$tmp/r.json")
  local nmed; nmed=$(printf '%s\n' "${nms[@]}" | bench_med)
  local verdict
  if [ "$jst" = 125 ] || { [ "$jst" = 124 ] && [[ " ${nat[*]} " != *" 124 "* ]]; }; then
    verdict=jinx   # could not run, or jinx-vmm's own timeout where no native run hung
  elif [ "$cls" = ok ]; then
    verdict=DIFF
    for k in $(seq 1 "$nruns"); do
      [ "$jst" = "${nat[$((k-1))]}" ] && cmp -s "$tmp/n$k.out" "$tmp/j.out" && verdict=same
    done
    # Output that differs between native runs (correct's reader_sum, throughput's times)
    # is the program's own: then the status is what is compared. Up to 10 more native
    # runs look for jinx's output or such a difference.
    for k in $(seq $((nruns + 1)) $((nruns + 10))); do
      [ "$verdict" = DIFF ] && [ "$jst" = "${nat[0]}" ] || break
      set +e; timeout 30 "${env[@]}" "$exe" >"$tmp/n$k.out" 2>/dev/null; set -e
      if cmp -s "$tmp/n$k.out" "$tmp/j.out"; then verdict=same
      elif ! cmp -s "$tmp/n$k.out" "$tmp/n1.out"; then verdict=varies; fi
    done
    [ "$verdict" = DIFF ] && [ "$jst" = "${nat[0]}" ] && [ "$nruns" -gt 1 ] &&
      ! cmp -s "$tmp/n1.out" "$tmp/n2.out" && verdict=varies
  else
    local allowed=" ${nat[*]} 0 " s
    case "$expected" in
      "signal SIGABRT") allowed+=" 134 " ;; "signal SIGSEGV") allowed+=" 139 " ;;
      deadlock) allowed+=" 123 " ;; "exit "*) allowed+=" ${expected#exit } " ;;
    esac
    for s in "${nat[@]}"; do [ "$s" = 124 ] && allowed+=" 123 "; done   # a native hang is jinx's deadlock
    [[ $v == tsan* ]] && allowed+=" 66 "   # TSan's exit after a race report, which the buggy programs have
    verdict=DIFF
    for k in $(seq 1 "$nruns"); do
      [ "$jst" = "${nat[$((k-1))]}" ] && cmp -s "$tmp/n$k.out" "$tmp/j.out" && verdict=same
    done
    [ "$verdict" = DIFF ] && [[ $allowed == *" $jst "* ]] && verdict=allowed
  fi
  local ratio; ratio=$(awk -v j="$jms" -v n="$nmed" 'BEGIN { printf "%.1f", j / (n > 0 ? n : 1) }')
  echo "$v,$n,$cls,$(IFS=/; echo "${nat[*]}"),$nrep,$jst,$jrep,$verdict,$clone,$nmed,$jms,$ratio,$limits"
  if { [ "$verdict" = DIFF ] || [ "$verdict" = jinx ]; } && [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP/$v-$n"; cp "$tmp"/* "$KEEP/$v-$n/"
  fi
  rm -rf "$tmp"
}

if [ "${1:-}" != "" ] && [ "${SAN_CORPUS_ONE:-}" = 1 ]; then one "$@"; exit 0; fi

if [ ${#names[@]} = 0 ]; then
  for m in images/*.manifest images/corpus/*.manifest images/corpus-compute/*.manifest; do
    names+=("$(basename "$m" .manifest)")
  done
fi
if [ "$twins_only" = 1 ]; then
  keep=(); for n in "${names[@]}"; do
    read -r man _ < <(locate "$n"); [ "$(field "$man" expected)" = none ] && keep+=("$n")
  done; names=("${keep[@]}")
fi
for n in "${names[@]}"; do [ -n "$(locate "$n")" ] || bench_die "no manifest for $n"; done
bench_need_build
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
echo "building ${#names[@]} programs x {$variants} in $OUT ..."
for v in $variants; do
  for n in "${names[@]}"; do read -r _ src < <(locate "$n"); echo "$v $n $src"; done
done | xargs -P 2 -L 1 bash -c 'set -e; . scripts/bench/lib.sh; OUT='"$OUT"'; '"$(declare -f flags_of build_one)"'; build_one "$@"' _

mkdir -p "$RESULTS"
csv="$RESULTS/san-corpus-$(date -u +%Y%m%d-%H%M%S).csv"
echo "variant,program,class,native,native_report,jinx,jinx_report,verdict,boot_to_clone_ms,native_ms,jinx_ms,ratio,limits" >"$csv"
for v in $variants; do for n in "${names[@]}"; do echo "$v $n"; done; done \
  | SAN_CORPUS_ONE=1 xargs -P "$jobs" -L 1 "$0" --runs "$runs" --one | tee -a "$csv" \
  | awk -F, '{ printf "%-13s %-24s %-5s %-12s %-6s %-7s %6s ms %7s/%-7s ms x%s  %s %s\n", $1, $2, $3, $4, $6, $8, $9, $10, $11, $12, $5, $7 }'

echo
echo "same: byte for byte and status as a native run; varies: status as natively, output differing"
echo "between native runs too; allowed: a buggy program's outcome that native runs or its manifest show"
echo "summary ($(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo ?)):"
for v in $variants; do
  tail -n +2 "$csv" | awk -F, -v v="$v" '$1 == v' >"$csv.$v"
  med=$(cut -d, -f12 "$csv.$v" | bench_med)
  awk -F, -v med="$med" '
    { n++; c[$8]++; if ($9 != "-") { b += $9; nb++ } if ($13 > 0) lim++ }
    END { if (n) printf "%-13s %3d programs: %3d same, %d varies, %3d allowed, %d DIFF, %d jinx, %d met a limit; boot to first clone %.1f ms mean; wall ratio median x%s\n",
                 $1, n, c["same"], c["varies"], c["allowed"], c["DIFF"], c["jinx"], lim, nb ? b / nb : -1, med }' "$csv.$v"
  rm -f "$csv.$v"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); results: $csv"
