#!/usr/bin/env bash
# The control socket and jinxctl against real VMs: socket and directory modes; ping,
# status, attach, detach and follow through jinxctl and as raw protocol lines; hostile
# clients (malformed lines, an over-long line, a disconnect mid-line, a flood of 10000
# requests, another uid); VM discovery (none, several, stale sockets); then the guest
# must still finish with its normal output and status. Last, SIGTERM and SIGINT stop
# jinx-vmm cleanly and remove the socket. (Rounds themselves are the round driver's
# tests; here the driver may be the stub.)
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; CTL="$BIN/jinxctl"
tmp=$(mktemp -d)
shared=/tmp/jinx-ctl-shared-$$      # for the other-uid test: must be reachable by nobody
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp" "$shared"
}
trap cleanup EXIT
check() { # DESCRIPTION COMMAND... : ok if the command succeeds
  local d=$1; shift
  if "$@"; then ok "$d"; else bad "$d"; fi
}
has() { grep -qF -- "$2" <<<"$1"; } # TEXT SUBSTRING

cc -O2 -Wall -o "$tmp/ctlsend" tests/integration/ctlsend.c || { echo "FAIL cannot build ctlsend"; exit 1; }
raw() { "$tmp/ctlsend" "$@"; }     # raw protocol lines: printf '...\n' | raw SOCKET

# Starts a VM in the background: start_vm NAME [jinx-vmm run args...]; sets $vm_pid and
# $vm_sock (from the line jinx-vmm prints).
start_vm() {
  local name=$1; shift
  "$VMM" run "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  vm_pid=$!; pids+=("$vm_pid")
  vm_sock=
  for _ in $(seq 200); do
    vm_sock=$(sed -n 's/^jinx-vmm: control socket \(.*\) (jinxctl attach --rate 5\/s)$/\1/p' "$tmp/$name.err" 2>/dev/null)
    [ -n "$vm_sock" ] && [ -S "$vm_sock" ] && return 0
    sleep 0.05
  done
  echo "FAIL $name: no control socket line on stderr:"; cat "$tmp/$name.err"; return 1
}

export JINX_RUNTIME_DIR="$tmp/run"
# ---- the main VM: a correct program that runs for several seconds ---------------------
start_vm main images/bin/correct 400000 || exit 1
main_pid=$vm_pid; sock=$vm_sock
check "socket named after image and pid" test "$sock" = "$JINX_RUNTIME_DIR/correct-$main_pid.sock"
check "socket mode 0600" test "$(stat -c %a "$sock")" = 600
check "socket directory created with mode 0700" test "$(stat -c %a "$JINX_RUNTIME_DIR")" = 700

# ---- jinxctl ----------------------------------------------------------------------------
out=$("$CTL" list 2>&1)
check "jinxctl list shows the VM" has "$out" "$sock  pid $main_pid  image images/bin/correct  rounds: detached"
out=$("$CTL" status 2>&1); st=$?
if [ $st = 0 ] && has "$out" "VM: images/bin/correct (pid $main_pid)" && has "$out" "rounds: detached" &&
   has "$out" "rounds done: 0" && has "$out" "round time, ms" && has "$out" "retirements: 0"; then
  ok "jinxctl status finds the only VM and prints the human status"
else bad "jinxctl status: status $st: $out"; fi
out=$("$CTL" attach --rate 20/s --strategy pct --depth 4 --sims 3 --fragment 2ms --seed 42 --no-follow 2>&1); st=$?
if [ $st = 0 ] && has "$out" "attached to $sock: 20/s, strategy pct (depth 4), 3 simulations/round, fragment 2 ms, tail 4 ms, seed 42"; then
  ok "jinxctl attach --no-follow"
else bad "jinxctl attach: status $st: $out"; fi
out=$("$CTL" status --json 2>&1)
if has "$out" '{"attached":true,"rate":20,"strategy":"pct","depth":4,"sims":3,"fragment_us":2000,"tail_us":4000,"seed":42,' &&
   { ! command -v python3 >/dev/null ||   # an independent JSON parser, when there is one
     python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["last_ns"]["round"]>=0' "$out" 2>/dev/null; }; then
  ok "jinxctl status --json: the configuration attached, valid JSON"
else bad "status --json: $out"; fi
out=$("$CTL" attach --sim-kind sparse --no-follow 2>&1); st=$?
js=$("$CTL" status --json 2>&1); txt=$("$CTL" status 2>&1)
if [ $st = 0 ] && has "$out" "seed 1, simulations sparse" && has "$js" '"sim_kind":"sparse"' &&
   has "$txt" "simulations: sparse,"; then
  ok "jinxctl attach --sim-kind sparse: attached, status --json and status name it"
else bad "jinxctl attach --sim-kind sparse: status $st: $out / $js"; fi
out=$("$CTL" detach --vm "$main_pid" 2>&1)
check "jinxctl detach (--vm PID)" has "$out" "rounds detached from $sock"
out=$("$CTL" detach --vm correct 2>&1)
check "jinxctl detach again (--vm NAME): nothing attached" has "$out" "had no rounds attached"
out=$("$CTL" status --json --vm "$sock")
check "status --json after detach" has "$out" '"attached":false'

# follow: one jinxctl attached and following sees another's detach, and leaves on Ctrl-C
"$CTL" attach --rate 5/s >"$tmp/follow.out" 2>&1 &
fpid=$!; pids+=("$fpid")
for _ in $(seq 100); do grep -q "following its events" "$tmp/follow.out" && break; sleep 0.05; done
"$CTL" detach >/dev/null 2>&1
for _ in $(seq 100); do grep -q "jinx: rounds detached" "$tmp/follow.out" && break; sleep 0.05; done
kill -INT $fpid; wait $fpid; st=$?
if [ "$st" = 0 ] && grep -q "jinx: rounds detached" "$tmp/follow.out" && grep -q "stopped following; the rounds go on" "$tmp/follow.out"; then
  ok "jinxctl attach follows events until Ctrl-C"
else bad "follow: status $st: $(cat "$tmp/follow.out")"; fi

# bad usage: exit 2, a message naming the option, nothing sent
usage_ok=0
for args in "--rate 0/s" "--rate fast" "--strategy best" "--depth 0" "--sims 65" "--fragment 1s" "--bogus" "--sim-kind fast"; do
  out=$("$CTL" attach $args 2>&1); st=$?
  if [ $st = 2 ] && [ -n "$out" ]; then usage_ok=$((usage_ok+1)); else bad "jinxctl attach $args: status $st: $out"; fi
done
check "8 bad jinxctl attach options: status 2 with a message" test $usage_ok = 8
out=$("$CTL" attach --depth 0 2>&1)
check "jinxctl attach --depth 0: usage error naming the range" has "$out" "depth 0: expected an integer from 1 to 32"
out=$("$CTL" frobnicate 2>&1); st=$?
check "unknown jinxctl command: status 2" test $st = 2
out=$("$CTL" inspect x.jinxdump 2>&1); st=$?
check "jinxctl inspect is dispatched (placeholder or real)" test $st != 0 -o -n "$out"
out=$("$CTL" status --vm "$tmp/nope.sock" 2>&1); st=$?
check "--vm to a missing socket: status 1, clear message" test $st = 1 -a -n "$(has "$out" "no such socket" && echo y)"
check "jinxctl --help" has "$("$CTL" --help)" "usage: jinxctl COMMAND"

# ---- raw protocol -------------------------------------------------------------------------
out=$(printf '{"cmd":"ping"}\n' | raw "$sock")
check "raw ping" has "$out" "{\"ok\":true,\"protocol\":1,\"pid\":$main_pid,\"image\":\"images/bin/correct\""
out=$(printf '{"cmd":"attach","rate":5,"strategy":"random","sims":8,"fragment_us":1000,"seed":7}\n{"cmd":"status"}\n{"cmd":"detach"}\n' | raw "$sock")
if [ "$(echo "$out" | wc -l)" = 3 ] && has "$out" '"attached":true,"config":"5/s, strategy random' &&
   has "$out" '"status":{"attached":true,"rate":5,"strategy":"random"' && has "$out" '"was_attached":true'; then
  ok "raw attach, status, detach on one connection"
else bad "raw attach/status/detach: $out"; fi
printf '%s\n' 'not json' '{"cmd":"ping"' '{"cmd":"reboot"}' '{"cmd":"attach","rate":"fast"}' \
  '{"cmd":"attach","depth":99}' '{"cmd":"attach","sims":2.5}' '{"cmd":"ping","extra":1}' \
  '{"cmd":"attach","rate":5,"rate":6}' '{"cmd":"status"} trailing' '{}' '[1]' \
  $'{"cmd":"\xff"}' '{"cmd":"attach","sim_kind":"dense"}' '{"cmd":"ping"}' >"$tmp/bad.txt"
out=$(raw "$sock" <"$tmp/bad.txt")
n_err=$(grep -c '^{"ok":false,"error":"' <<<"$out"); n_ok=$(grep -c '^{"ok":true' <<<"$out")
if [ "$n_err" = 13 ] && [ "$n_ok" = 1 ] && has "$out" 'unknown command \"reboot\"' &&
   has "$out" '\"sim_kind\" must be one of' &&
   has "$out" '\"depth\" must be an integer from 1 to 32' && has "$out" 'duplicate field' &&
   has "$out" 'invalid UTF-8' && has "$out" 'unknown field \"extra\" for ping'; then
  ok "13 malformed requests: 13 error replies naming the problem, then a ping still works"
else bad "malformed requests: $n_err errors, $n_ok ok: $out"; fi
out=$("$CTL" status --json --vm "$sock")
check "malformed attaches left the rounds detached" has "$out" '"attached":false'
out=$( (head -c 5000 /dev/zero | tr '\0' x; printf '\n{"cmd":"ping"}\n') | raw "$sock")
if has "$out" "request longer than 4096 bytes: closing the connection" && ! has "$out" '"ok":true'; then
  ok "over-long line: error reply, connection closed"
else bad "over-long line: $out"; fi
printf '{"cmd":"attach","ra' | raw -c "$sock"
printf '{"cmd":"ping"}\n{"cmd":"sta' | raw -c "$sock"
out=$(printf '{"cmd":"ping"}\n' | raw "$sock")
check "clients that disconnect mid-line disturb nothing" has "$out" '"ok":true'
out=$(raw -f 10000 "$sock")
check "flood of 10000 requests: 10000 replies ($out)" test "$out" = "replies=10000 ok=10000"
out=$("$CTL" status --vm "$sock" 2>&1)
check "status after the flood" has "$out" "rounds: detached"

# ---- discovery: several VMs, stale sockets ---------------------------------------------------
start_vm second images/bin/correct 2000000 || exit 1
second_pid=$vm_pid; second_sock=$vm_sock
out=$("$CTL" status 2>&1); st=$?
if [ $st = 1 ] && has "$out" "2 VMs are running" && has "$out" "--vm" && has "$out" "$second_sock"; then
  ok "two VMs and no --vm: an error listing them"
else bad "two VMs: status $st: $out"; fi
out=$("$CTL" status --vm correct 2>&1); st=$?
check "--vm NAME matching two VMs is refused" test $st = 1
out=$("$CTL" status --vm "$second_pid" 2>&1)
check "--vm PID picks one" has "$out" "(pid $second_pid)"
raw -l "$JINX_RUNTIME_DIR/ghost-999999.sock" >/dev/null
out=$("$CTL" list 2>&1)
if has "$out" "removed stale socket $JINX_RUNTIME_DIR/ghost-999999.sock" && [ ! -e "$JINX_RUNTIME_DIR/ghost-999999.sock" ] &&
   [ "$(grep -c ' pid ' <<<"$out")" = 2 ]; then
  ok "jinxctl list: two live VMs, the stale socket removed"
else bad "list with a stale socket: $out"; fi

# SIGTERM with a follower attached: the follower is told, jinx-vmm exits 143, socket gone
"$CTL" attach --vm "$second_sock" --rate 5/s >"$tmp/follow2.out" 2>&1 &
fpid=$!; pids+=("$fpid")
for _ in $(seq 100); do grep -q "following its events" "$tmp/follow2.out" && break; sleep 0.05; done
kill -TERM "$second_pid"; wait "$second_pid"; st=$?; wait $fpid; fst=$?
if [ "$st" = 143 ] && grep -q "SIGTERM received: stopping the VM" "$tmp/second.err" &&
   grep -q "interrupted by SIGTERM: the guest was stopped, control socket removed; exit status 143" "$tmp/second.err" &&
   [ ! -e "$second_sock" ]; then
  ok "SIGTERM: clean stop, clear message, status 143, socket removed"
else bad "SIGTERM: status $st, socket $(ls "$second_sock" 2>&1): $(cat "$tmp/second.err")"; fi
if [ "$fst" = 0 ] && grep -q "jinx: the VM stopped: interrupted by SIGTERM" "$tmp/follow2.out"; then
  ok "the follower was told how the VM ended"
else bad "follower at SIGTERM: status $fst: $(cat "$tmp/follow2.out")"; fi

# ---- another uid (nobody) ----------------------------------------------------------------------
if [ "$(id -u)" = 0 ]; then
  mkdir -m 0755 "$shared"; cp "$tmp/ctlsend" "$shared/ctlsend"; chmod 0755 "$shared/ctlsend"
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  JINX_RUNTIME_DIR=$shared start_vm third images/bin/correct 2000000 || exit 1
  third_pid=$vm_pid; third_sock=$vm_sock
  check "socket mode 0600 in a 0755 directory" test "$(stat -c %a "$third_sock")" = 600
  out=$(printf '{"cmd":"ping"}\n' | as_nobody "$shared/ctlsend" "$third_sock")
  check "uid 65534: connect refused by the socket's mode (EACCES)" has "$out" "connect: Permission denied"
  out=$(JINX_RUNTIME_DIR=$shared as_nobody "$CTL" status --vm "$third_sock" 2>&1); st=$?
  check "uid 65534: jinxctl says permission denied and what to do" test $st = 1 -a -n "$(has "$out" "belongs to another user" && echo y)"
  kill -INT "$third_pid"; wait "$third_pid"; st=$?
  if [ "$st" = 130 ] && grep -q "interrupted by SIGINT" "$tmp/third.err" && [ ! -e "$third_sock" ]; then
    ok "SIGINT: clean stop, status 130, socket removed"
  else bad "SIGINT: status $st: $(cat "$tmp/third.err")"; fi
  # The SO_PEERCRED check, reached through a socket widened for tests only.
  JINX_TEST=yes JINX_TEST_SOCKET_MODE=0666 JINX_RUNTIME_DIR=$shared start_vm fourth images/bin/correct 2000000 || exit 1
  fourth_pid=$vm_pid; fourth_sock=$vm_sock
  check "JINX_TEST_SOCKET_MODE widens the socket (tests only)" test "$(stat -c %a "$fourth_sock")" = 666
  out=$(printf '{"cmd":"attach"}\n' | as_nobody "$shared/ctlsend" "$fourth_sock")
  if has "$out" '{"ok":false,"error":"permission denied: uid 65534 may not control this VM' &&
     ! has "$("$CTL" status --json --vm "$fourth_sock")" '"attached":true'; then
    ok "uid 65534 through an open socket: refused by SO_PEERCRED, nothing attached"
  else bad "SO_PEERCRED: $out"; fi
  out=$(printf '{"cmd":"ping"}\n' | raw "$fourth_sock")
  check "root (uid 0) is let in" has "$out" '"ok":true'
  kill -TERM "$fourth_pid"; wait "$fourth_pid"
else
  echo "FAIL the other-uid tests need root, to run clients as uid 65534 (run the tests as root)"; fail=$((fail+1))
fi

# ---- the main guest is undisturbed -----------------------------------------------------------
wait "$main_pid"; st=$?
if [ "$st" = 0 ] && grep -q "^correct: ok calls=400000 " "$tmp/main.out" && [ ! -e "$sock" ]; then
  ok "after all that, the guest completed normally (status 0, its output intact), socket removed"
else bad "main guest: status $st: $(tail -2 "$tmp/main.out") $(tail -3 "$tmp/main.err")"; fi
out=$("$CTL" status 2>&1); st=$?
check "no VM left: jinxctl says so (status 1)" test $st = 1 -a -n "$(has "$out" "no running VM found" && echo y)"
"$VMM" run --no-control images/bin/correct 10 >/dev/null 2>"$tmp/nc.err"; st=$?
check "--no-control: no socket line" test $st = 0 -a -z "$(grep 'control socket' "$tmp/nc.err")"
"$VMM" run --strategy pct images/bin/correct 10 >/dev/null 2>"$tmp/as.err"; st=$?
check "--strategy without --attach is refused" test $st = 125 -a -n "$(grep 'add --attach RATE' "$tmp/as.err")"
"$VMM" run --attach 10/s --sims 4 images/bin/correct 10 >/dev/null 2>"$tmp/at.err"; st=$?
check "--attach 10/s --sims 4 runs" test $st = 0
"$VMM" run --attach 0/s images/bin/correct 10 >/dev/null 2>"$tmp/at0.err"; st=$?
check "--attach 0/s is refused" test $st = 125 -a -n "$(grep -- '--attach 0/s: expected' "$tmp/at0.err")"

summary "control"
