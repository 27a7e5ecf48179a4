#!/usr/bin/env bash
# What a boot to main is made of, in counts that a loaded shared host does not blur
# (docs/benchmarks.md "Boot to main": the breakdown). For one image (default the
# dynamic C++ binary of boot-dyn.sh), each of these over RUNS runs (median):
#   cpu_ms          jinx-vmm's CPU time, whole run (perf stat task-clock)
#   host_faults     host page faults jinx-vmm took (perf stat page-faults)
#   host syscalls   jinx-vmm's own calls that the boot's cost hangs on, from one strace -c
#                   run: mprotect and madvise (each drops KVM translations: an MMU
#                   notifier round), pread64/preadv (file fills)
#   kvm_user_exits  exits to jinx-vmm (kvm:kvm_userspace_exit)
#   kvm_mmu_faults  guest page faults KVM served itself (kvmmmu:kvm_mmu_spte_requested)
#   proc_cpu_ms     CPU of `jinx-vmm --version` (process start: its own dynamic linking)
#   native_ms       the program run natively, spawn to its first line (the guest's own
#                   work has this floor)
#
#   scripts/bench/boot-probe.sh [--runs N] [--bin DIR] [IMAGE]    (needs perf and strace)
# Prints one JSON object.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/bench/lib.sh
RUNS=11; BINDIR=${BIN:-bin}; IMG=images/bin/dyn/cxx-big
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=${2:-}; shift 2 ;;
    --bin) BINDIR=${2:-}; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) bench_die "unknown option $1 (--help for usage)" ;;
    *) IMG=$1; shift ;;
  esac
done
case "$RUNS" in ''|*[!0-9]*|0) bench_die "--runs takes a positive number" ;; esac
for t in perf strace python3; do command -v $t >/dev/null || bench_die "needs $t (apt-get install linux-perf strace)"; done
VMM=$BINDIR/jinx-vmm
[ -x "$VMM" ] && [ -x "$IMG" ] || bench_die "no $VMM or $IMG: run make first"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
args=(run --no-control "$IMG"); case "$IMG" in *cxx-big*) args+=(-- --main-only) ;; esac
"$VMM" "${args[@]}" >/dev/null 2>&1 || bench_die "$VMM ${args[*]} failed"   # warm caches
perf stat -x, -r "$RUNS" -e task-clock,page-faults -e kvm:kvm_userspace_exit \
  -e kvmmmu:kvm_mmu_spte_requested "$VMM" "${args[@]}" >/dev/null 2>"$tmp/stat" \
  || bench_die "perf stat failed: $(tail -2 "$tmp/stat")"
perf stat -x, -r "$RUNS" -e task-clock "$VMM" --version >/dev/null 2>"$tmp/proc"
strace -f -c -o "$tmp/strace" "$VMM" "${args[@]}" >/dev/null 2>&1
python3 - "$tmp" "$IMG" "$RUNS" "$VMM" <<'PY'
import json, os, subprocess, sys, time, statistics
tmp, img, runs, vmm = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def stat(path):
    out = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) > 2 and f[0] and f[0][0].isdigit():
            out[f[2]] = float(f[0])
    return out
s, p = stat(tmp + "/stat"), stat(tmp + "/proc")
calls = {}
for line in open(tmp + "/strace"):
    f = line.split()
    if len(f) >= 5 and f[-1] in ("mprotect", "madvise", "pread64", "preadv") and f[3].isdigit():
        calls[f[-1]] = int(f[3])
argv = [img] + (["--main-only"] if "cxx-big" in img else [])
ts = []
for _ in range(runs):
    t = time.monotonic()
    q = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    q.stdout.readline(); ts.append((time.monotonic() - t) * 1e3); q.communicate()
print(json.dumps({"image": img, "runs": runs, "jinx_vmm": vmm,
                  "cpu_ms": round(s.get("task-clock", -1), 2), "host_faults": s.get("page-faults"),
                  "host_syscalls": calls, "kvm_user_exits": s.get("kvm:kvm_userspace_exit"),
                  "kvm_mmu_faults": s.get("kvmmmu:kvm_mmu_spte_requested"),
                  "proc_cpu_ms": round(p.get("task-clock", -1), 2),
                  "native_ms": round(statistics.median(ts), 2),
                  "loadavg": open("/proc/loadavg").read().split()[0]}))
PY
