# Shared helpers for scripts/bench/*.sh (sourced, not run).
# shellcheck shell=bash

RESULTS=${RESULTS:-bench-results}

bench_die() { echo "$(basename "$0"): $*" >&2; exit 2; }

# Median of the numbers on stdin (one a line); "nan" when there are none.
# 20, 20s, 2m -> seconds on stdout; status 1 for anything else.
bench_seconds() {
  case "$1" in
    *[!0-9sm]*|''|s|m) return 1 ;;
    *m) echo $(( ${1%m} * 60 )) ;;
    *s) echo "${1%s}" ;;
    *) echo "$1" ;;
  esac
}
bench_med() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }

# "min q1 median q3 max n" of the numbers on stdin (nearest-rank quartiles); "nan ... 0" if none.
bench_summary() {
  sort -g | awk '{a[NR]=$1} END {
    if (!NR) { print "nan nan nan nan nan 0"; exit }
    q1 = a[int((NR+3)/4)]; q3 = a[int((3*NR+3)/4)]
    print a[1], q1, a[int((NR+1)/2)], q3, a[NR], NR }'
}

# The benchmarks boot guests: on a machine that cannot, every run would fail with status
# 125 and the tables would read as results (nothing found, false positives), so they stop
# with jinx-vmm check-kvm's reason.
bench_need_kvm() {
  local why
  why=$("${BIN:-bin}/jinx-vmm" check-kvm 2>&1) || bench_die "this machine cannot boot guests: $why"
}

# The build must exist: the benchmarks time it, they do not build it (and bench_need_kvm).
bench_need_build() {
  [ -x "${BIN:-bin}/jinx-vmm" ] || bench_die "no ${BIN:-bin}/jinx-vmm: run make first"
  local f
  for f in "$@"; do [ -x "$f" ] || bench_die "no $f: run make first"; done
  bench_need_kvm
}

# Host description for the JSON results.
bench_host() {
  local cpu
  cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n1)
  printf '{"date":"%s","kernel":"%s","cpus":%s,"cpu":"%s","kvm":"%s","loadavg_start":"%s"}' \
    "$(date -u +%Y-%m-%dT%H:%MZ)" "$(uname -r)" "$(nproc)" "${cpu:-unknown}" \
    "$( [ -d /sys/module/kvm_pvm ] && echo pvm || echo hardware)" "$(cut -d' ' -f1 /proc/loadavg)"
}

# Check a result file parses (JSON) before announcing it.
bench_check_json() {
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" \
    || bench_die "internal error: $1 is not valid JSON"
}

# bench_plot OUT.png SCRIPT: run gnuplot on SCRIPT (its text, terminal and output are set
# here); without gnuplot, say so and go on (the table, CSV and JSON are what matters).
bench_plot() {
  local out=$1 script=$2 gp=${GNUPLOT:-gnuplot}
  if ! command -v "$gp" >/dev/null 2>&1; then
    echo "plot: gnuplot not installed, no $out (apt-get install gnuplot-nox, or scripts/setup-deps.sh as root)"
    return 0
  fi
  if printf 'set terminal pngcairo size 1100,650 noenhanced font ",10"\nset output "%s"\n%s\n' "$out" "$script" \
      | "$gp" 2>"$out.log"; then
    rm -f "$out.log"; echo "plot: $out"
  elif printf 'set terminal png size 1100,650 noenhanced\nset output "%s"\n%s\n' "$out" "$script" \
      | "$gp" 2>"$out.log"; then
    rm -f "$out.log"; echo "plot: $out"
  else
    echo "plot: gnuplot failed, no $out (see $out.log)"
  fi
}
