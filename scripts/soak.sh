#!/usr/bin/env bash
# Soak: jinx-vmm under simulation rounds for a long time, watched for leaks and lies.
#
#   scripts/soak.sh [--minutes N] [--out DIR] [--interval S] [--rss-growth-mib M] [--args ARGS] [IMAGE...]
#
# Each IMAGE (default: throughput and correct, two programs without a bug) runs in its own
# loop, concurrently with the others: `jinx-vmm run --attach 5/s --stats --seed K IMAGE`,
# re-run with the next seed as soon as it ends, until N minutes (default 60) have passed
# (the run under way then finishes). Every S seconds (default 2) the script samples each
# live jinx-vmm's RSS (VmRSS) and open fd count (/proc/PID/fd) into DIR/samples.csv; each
# run's outcome, rounds, retirements, divergences and simulation bugs go into
# DIR/runs.csv; DIR/summary.json totals them.
#
# It fails (exit 1) on
#   - a leak: within one run, RSS grew by more than M MiB (default 64) from the first
#     sample taken after warm-up (5 s or a quarter of the run, whichever is longer: guest
#     memory is touched at boot; the rounds' snapshot buffers and a worker VM are
#     allocated in the first rounds that need them) to the run's largest sample, the
#     count of fds other than KVM VMs and vCPUs grew after warm-up, or the process ever
#     held more VMs than its own plus one worker per other CPU;
#   - a replay divergence (a retired simulation that real execution did not follow);
#   - a false report: these programs have no bug, so a run that does not exit 0, or whose
#     simulations report a bug (sim_bugs > 0), is jinx lying.
# The binary is copied into DIR first, so rebuilding the tree does not disturb a soak.
# Known images take arguments that make each run last a while (image_args below); --args
# gives every image ARGS instead (split on spaces).
set -u
minutes=60; out=""; interval=2; growth_mib=64; args_all=""; args_set=0; judge=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --rss-growth-mib) growth_mib=$2; shift 2 ;;
    --args) args_all=$2; args_set=1; shift 2 ;;
    --judge) judge=("$2" "$3"); shift 3 ;; # (testing) judge one run's samples file
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --*) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
# One run's samples (age_s,rss_kb,fds other than VMs and vCPUs,VMs per line) and wall
# time -> "warm_rss max_rss last_rss warm_fds max_fds leak" ("-" for no warm sample).
# Warm-up ends at max(5 s, a quarter of the run): on a loaded host the first rounds
# (snapshot buffers, a worker VM) come late. A leak: RSS grew by more than M MiB past
# warm-up, fds other than VMs and vCPUs grew after it, or there were ever more VMs than
# the program's own plus one worker per other CPU (rounds/worker.c).
judge_run() {
  awk -F, -v wall="$2" -v lim=$((growth_mib * 1024)) -v maxvms="$(nproc)" '
    BEGIN { w = wall / 4; if (w < 5) w = 5 }
    $4 + 0 > maxvms { vmleak = 1 }
    $1 + 0 >= w {
      if (wr == "") { wr = $2; wf = $3 }
      if ($2 > mr) mr = $2; if ($3 > mf) mf = $3; lr = $2
    }
    END { leak = (vmleak || (wr != "" && (mr - wr > lim || mf > wf))) ? 1 : 0
          printf "%s %d %d %s %d %d\n", (wr == "" ? "-" : wr), mr, lr, (wr == "" ? "-" : wf), mf, leak }' "$1"
}

if [ ${#judge[@]} = 2 ]; then judge_run "${judge[0]}" "${judge[1]}"; exit; fi
case "$minutes" in ''|*[!0-9.]*) echo "soak.sh: --minutes wants a number" >&2; exit 2 ;; esac
BIN=${BIN:-bin}
[ $# -gt 0 ] || set -- images/bin/throughput images/bin/correct
for img in "$@"; do [ -x "$img" ] || { echo "soak.sh: no image $img (run make)" >&2; exit 2; }; done
[ -x "$BIN/jinx-vmm" ] || { echo "soak.sh: no $BIN/jinx-vmm (run make)" >&2; exit 2; }
# Runs that cannot boot (status 125) would be counted as false reports: say why instead.
why=$("$BIN/jinx-vmm" check-kvm 2>&1) || { echo "soak.sh: this machine cannot boot guests: $why" >&2; exit 2; }
out=${out:-soak-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out/logs" || exit 2
cp "$BIN/jinx-vmm" "$out/jinx-vmm" || exit 2
VMM="$out/jinx-vmm"
end=$(( $(date +%s) + ${minutes%.*} * 60 ))
[ "${minutes%.*}" = "$minutes" ] || end=$(awk -v m="$minutes" -v n="$(date +%s)" 'BEGIN{printf "%d", n + m*60}')
t0=$(date +%s)

image_args() { # long-enough runs of the known images; none for others
  [ "$args_set" = 1 ] && { echo "$args_all"; return; }
  case "$(basename "$1")" in
    correct) echo "20000 120000 3000" ;;
    throughput) echo "4 8000" ;;
  esac
}

echo "t_s,image,run,pid,rss_kb,fds" >"$out/samples.csv"
echo "image,run,seed,status,wall_s,rounds,retired,divergences,sim_bugs,rss_warm_kb,rss_max_kb,rss_end_kb,fds_warm,fds_max,leak" >"$out/runs.csv"

# One image's loop: runs, samples, appends to the CSVs (short appends: safe to interleave).
soak_image() {
  local img=$1 name; name=$(basename "$img")
  local run=0
  while [ "$(date +%s)" -lt "$end" ]; do
    run=$((run + 1))
    local seed=$run log="$out/logs/$name-$run.log" start; start=$(date +%s.%N)
    # shellcheck disable=SC2046
    "$VMM" run --no-control --attach 5/s --stats --seed "$seed" --timeout 15m "$img" \
      $(image_args "$img") >/dev/null 2>"$log" &
    local pid=$! rss fds vms kvmfds samples="$out/logs/$name-$run.samples"
    : >"$samples"
    while kill -0 "$pid" 2>/dev/null; do
      rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
      fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
      # VMs (the program's and its worker VMs, built when a round first simulates) and
      # their vCPUs are counted apart: a worker's fds arrive whenever that round comes.
      vms=$(find "/proc/$pid/fd" -lname 'anon_inode:kvm-vm' 2>/dev/null | wc -l)
      kvmfds=$(find "/proc/$pid/fd" -lname 'anon_inode:kvm-v*' 2>/dev/null | wc -l)
      if [ -n "$rss" ] && [ "$fds" -gt 0 ]; then # (0 fds: the process is exiting)
        local age; age=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN{printf "%.1f", n - s}')
        echo "$(( $(date +%s) - t0 )),$name,$run,$pid,$rss,$fds" >>"$out/samples.csv"
        echo "$age,$rss,$((fds - kvmfds)),$vms" >>"$samples"
      fi
      sleep "$interval"
    done
    wait "$pid"; local st=$?
    local wall; wall=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN{printf "%.1f", n - s}')
    local js; js=$(sed -n 's/^jinx-vmm: rounds: //p' "$log")
    num() { echo "$js" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
    local rounds retired div bugs
    rounds=$(num rounds); retired=$(num retired); div=$(num divergences); bugs=$(num sim_bugs)
    local warm_rss max_rss last_rss warm_fds max_fds leak
    read -r warm_rss max_rss last_rss warm_fds max_fds leak < <(judge_run "$samples" "$wall")
    [ "$warm_rss" = - ] && warm_rss="" && warm_fds=""
    echo "$name,$run,$seed,$st,$wall,${rounds:-0},${retired:-0},${div:-0},${bugs:-0},${warm_rss:-},${max_rss},${last_rss},${warm_fds:-},${max_fds},$leak" >>"$out/runs.csv"
  done
}

for img in "$@"; do soak_image "$img" & done
wait

# Summary: per image and overall, from the CSVs.
awk -F, -v minutes="$minutes" -v growth="$growth_mib" -v out="$out" '
  FNR == 1 { next }
  FILENAME ~ /samples.csv$/ {
    if (!($2 in first_rss)) first_rss[$2] = $5
    last_rss[$2] = $5; if ($5 > max_rss[$2]) max_rss[$2] = $5
    if (!($2 in min_fds) || $6 < min_fds[$2]) min_fds[$2] = $6
    if ($6 > max_fds[$2]) max_fds[$2] = $6
    nsamples[$2]++; next
  }
  {
    img[$1] = 1; runs[$1]++; rounds[$1] += $6; retired[$1] += $7; div[$1] += $8
    if ($4 != 0 || $9 > 0) false_reports[$1]++
    if ($15 == 1) leaks[$1]++
    status_hist[$1 "," $4]++
  }
  END {
    printf "{\"minutes\":%s,\"rss_growth_limit_mib\":%d,\"dir\":\"%s\",\"images\":{", minutes, growth, out
    sep = ""; bad = 0
    for (i in img) {
      printf "%s\"%s\":{\"runs\":%d,\"rounds\":%d,\"retired\":%d,\"divergences\":%d,\"false_reports\":%d,\"leaky_runs\":%d,\"samples\":%d,\"rss_kb\":{\"start\":%d,\"end\":%d,\"max\":%d},\"fds\":{\"min\":%d,\"max\":%d},\"statuses\":{",
        sep, i, runs[i], rounds[i], retired[i], div[i], false_reports[i] + 0, leaks[i] + 0,
        nsamples[i], first_rss[i], last_rss[i], max_rss[i], min_fds[i], max_fds[i]
      s2 = ""
      for (k in status_hist) { split(k, p, ","); if (p[1] == i) { printf "%s\"%s\":%d", s2, p[2], status_hist[k]; s2 = "," } }
      printf "}}"; sep = ","
      if (div[i] > 0 || false_reports[i] > 0 || leaks[i] > 0 || runs[i] == 0 || nsamples[i] == 0) bad = 1
    }
    printf "},\"pass\":%s}\n", bad ? "false" : "true"
  }' "$out/samples.csv" "$out/runs.csv" >"$out/summary.json"
cat "$out/summary.json"
grep -q '"pass":true' "$out/summary.json"
