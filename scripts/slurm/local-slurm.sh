#!/usr/bin/env bash
# A private single-node Slurm cluster on this machine, all in one directory, for CI and
# for trying a campaign without a real cluster (docs/campaigns.md):
#
#   scripts/slurm/local-slurm.sh start DIR [CPUS]   # munged, slurmctld, slurmd; waits until idle
#   export SLURM_CONF=DIR/slurm.conf                # then sbatch, squeue, sinfo talk to it
#   scripts/slurm/local-slurm.sh stop DIR           # cancels its jobs, stops exactly its daemons
#
# Needs root (slurmd runs jobs as their submitter) and the Debian packages slurm-wlm and
# munge (scripts/setup-deps.sh installs them). Everything lives in DIR: its own munge key
# and socket (the system's munge, if any, is not used), state, spool, logs, and the pid
# of every daemon it started (DIR/*.pid): stop kills those pids, nothing found by name.
# Ports: SLURMCTLD_PORT/SLURMD_PORT, default random in 20000..29999. Exit 0, or 1 with
# the daemons' logs on stderr.
set -u
cmd=${1:-}; dir=${2:-}
die() { echo "local-slurm: $*" >&2; exit 1; }
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: $0 start|stop DIR [CPUS]"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
  if alive "$dir/slurmctld.pid" && [ -f "$dir/slurm.conf" ]; then
    SLURM_CONF="$dir/slurm.conf" scancel --quiet --full --state=PENDING,RUNNING,SUSPENDED \
      --cluster=jinxci 2>/dev/null
    SLURM_CONF="$dir/slurm.conf" scancel --quiet --full 2>/dev/null
    for _ in $(seq 1 20); do   # let slurmd end the job steps it started
      [ -z "$(SLURM_CONF="$dir/slurm.conf" squeue -h 2>/dev/null)" ] && break; sleep 0.5
    done
  fi
  local d left=""
  for d in slurmd slurmctld munged; do
    if alive "$dir/$d.pid"; then kill "$(cat "$dir/$d.pid")" 2>/dev/null; fi
  done
  for _ in $(seq 1 40); do
    left=""
    for d in slurmd slurmctld munged; do alive "$dir/$d.pid" && left="$left $d"; done
    [ -z "$left" ] && break; sleep 0.25
  done
  for d in $left; do kill -9 "$(cat "$dir/$d.pid")" 2>/dev/null; done
  sleep 0.2
  left=""
  for d in slurmd slurmctld munged; do alive "$dir/$d.pid" && left="$left $d"; done
  [ -z "$left" ] || die "still running after SIGKILL:$left"
  return 0
}

logs() {
  local f
  for f in "$dir"/munged.log "$dir"/slurmctld.log "$dir"/slurmd.log; do
    [ -f "$f" ] && { echo "---- $f (last lines)" >&2; tail -n 25 "$f" >&2; }
  done
}

start() {
  local cpus=${3:-2}
  [ "$(id -u)" -eq 0 ] || die "needs root: slurmd runs jobs as the user who submitted them"
  for b in munged slurmctld slurmd sbatch sinfo scancel squeue; do
    command -v "$b" >/dev/null || die "$b not found: apt-get install slurm-wlm munge (scripts/setup-deps.sh)"
  done
  mkdir -p "$dir" && chmod 0755 "$dir" || die "cannot create $dir"
  dir=$(cd "$dir" && pwd)
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" || die "cannot create $dir/*"
  chmod 0700 "$dir/munge"
  # munged wants a key readable by its user only, and private directories.
  if [ ! -s "$dir/munge/munge.key" ]; then
    head -c 1024 /dev/urandom > "$dir/munge/munge.key" || die "cannot write a munge key"
  fi
  chmod 0400 "$dir/munge/munge.key"
  munged -F --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pidfile" --log-file="$dir/munged.log" \
    --seed-file="$dir/munge/munged.seed" 2>>"$dir/munged.log" &
  echo $! > "$dir/munged.pid"
  for _ in $(seq 1 40); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.25; done
  [ -S "$dir/munge/munge.socket" ] || { logs; stop; die "munged did not start"; }
  local port=$((20000 + RANDOM % 9990)) host
  local cport=${SLURMCTLD_PORT:-$port} dport=${SLURMD_PORT:-$((port + 1))}
  host=$(hostname -s)
  cat > "$dir/slurm.conf" <<EOF
# A private single-node cluster (scripts/slurm/local-slurm.sh); nothing outside $dir.
ClusterName=jinxci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pidfile
SlurmdPidFile=$dir/slurmd.pidfile
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=jinxci NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=jinxci Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld -D -c -f "$dir/slurm.conf" >>"$dir/slurmctld.log" 2>&1 &
  echo $! > "$dir/slurmctld.pid"
  slurmd -D -N jinxci -f "$dir/slurm.conf" >>"$dir/slurmd.log" 2>&1 &
  echo $! > "$dir/slurmd.pid"
  local state=""
  for _ in $(seq 1 60); do
    state=$(SLURM_CONF="$dir/slurm.conf" sinfo -h -N -o %t 2>/dev/null | head -1)
    case $state in idle|mix|alloc) break;; esac
    alive "$dir/slurmctld.pid" && alive "$dir/slurmd.pid" || break
    sleep 0.5
  done
  case $state in
    idle|mix|alloc) echo "local-slurm: node jinxci $state ($cpus CPUs), SLURM_CONF=$dir/slurm.conf";;
    *) logs; stop; die "the node did not come up (state '${state:-none}'): logs above";;
  esac
}

case $cmd in
  start) start "$@";;
  stop) [ -d "$dir" ] || exit 0; dir=$(cd "$dir" && pwd); stop;;
  *) die "usage: $0 start|stop DIR [CPUS]";;
esac
