#!/usr/bin/env bash
# Every family of memory-operand instruction on pages two threads share
# (tests/guest/insns.c, insns_vec.c) must give the results a free run gives, under serialized
# execution and under simulation rounds: the guest checks each result itself (status 0,
# "NAME: ok, N checks" per family) and its output must equal the free run's, line for
# line. Under --serial the trace must show that the instructions really were cue points
# on the shared arena (otherwise the test would prove nothing). AVX/AVX-512 families must
# run, not be skipped, when the CPU model offers them (as the guest's CPUID shows it), and
# be skipped when it does not.
# Env: ITERS (iterations under --serial, default 1), ATTACH_ITERS (under --attach 50/s,
# default 30000: ~2 s of the program, long enough for rounds to happen in it), CPU_MODEL
# (--cpu-model, default jinx-vmm's own: kvm64, which hides AVX; `host` for every family
# the host has).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; G="$BUILD/guest-tests"
ITERS=${ITERS:-1}; ATTACH_ITERS=${ATTACH_ITERS:-30000}; CPU_MODEL=${CPU_MODEL:-}
MODEL_ARGS=(); [ -n "$CPU_MODEL" ] && MODEL_ARGS=(--cpu-model "$CPU_MODEL")
tmp=$(mktemp -d); [ -n "${KEEP_TMP:-}" ] && echo "temporary files in $tmp" || trap 'rm -rf "$tmp"' EXIT
[ -x "$G/insns" ] || { echo "FAIL $G/insns not built (make guest-tests)"; exit 1; }

# run NAME ITERS ARGS...: jinx-vmm run ARGS $G/insns ITERS; sets st, out file $tmp/NAME.out/.err
run() {
  local name=$1 n=$2; shift 2
  timeout 600 "$VMM" run --no-control "${MODEL_ARGS[@]}" --timeout 500s "$@" "$G/insns" "$n" >"$tmp/$name.out" 2>"$tmp/$name.err"; st=$?
}
# same NAME REF: status 0 and output equal to the reference free run's
same() {
  local name=$1 ref=$2
  if [ $st = 0 ] && cmp -s "$tmp/$name.out" "$tmp/$ref.out" && ! grep -qi "internal error" "$tmp/$name.err"; then
    ok "$name: status 0, the same $(grep -c ': ok,' "$tmp/$name.out") family results as the free run"
  else
    bad "$name: status $st"
    diff "$tmp/$ref.out" "$tmp/$name.out" | head -10 | sed 's/^/     | /'
    grep -v '^jinx-vmm: rounds: {' "$tmp/$name.err" | tail -12 | sed 's/^/     | /'
  fi
}

# Free runs: the references.
for n in "$ITERS" "$ATTACH_ITERS"; do
  run "free-$n" "$n"
  if [ $st = 0 ] && grep -q "^insns ok: $n iterations" "$tmp/free-$n.out"; then ok "free run, $n iterations: $(grep -c ': ok,' "$tmp/free-$n.out") families ok"
  else bad "free run, $n iterations: status $st"; tail -5 "$tmp/free-$n.out" "$tmp/free-$n.err"; fi
done
ref="free-$ITERS"
# Every family ran or says why not; AVX and AVX-512 run exactly where the model has them.
for f in mov straddle alu movs rep-movs rep-stos repe-cmps repne-scas sse maskmovdqu atomic stack fxsave xsave; do
  grep -q "^$f: ok, [1-9]" "$tmp/$ref.out" || bad "family $f did not run: $(grep "^$f:" "$tmp/$ref.out")"
done
# The model's leaf 7 EBX as the guest reads it (cpumodel.sh checks that this is the
# model's table): avx2 is bit 5, avx512f bit 16.
l7b=$("$VMM" run --no-control --quiet "${MODEL_ARGS[@]}" "$G/cpuid" | sed -n 's/^leaf7 ebx=\([0-9a-f]*\).*/\1/p')
[ -n "$l7b" ] || bad "no leaf 7 from $G/cpuid under model '${CPU_MODEL:-default}'"
for f in "avx:avx2:5" "avx512:avx512f:16"; do
  IFS=: read -r fam flag bit <<<"$f"
  if [ -n "$l7b" ] && (( (0x$l7b >> bit) & 1 )); then
    if grep -q "^$fam: ok, [1-9]" "$tmp/$ref.out"; then ok "$fam family runs (model ${CPU_MODEL:-default} has $flag)"
    else bad "$fam family: $(grep "^$fam:" "$tmp/$ref.out") although the model has $flag"; fi
  elif grep -q "^$fam: skipped" "$tmp/$ref.out"; then ok "$fam family skipped: model ${CPU_MODEL:-default} has no $flag"
  else bad "$fam family: $(grep "^$fam:" "$tmp/$ref.out") although the model has no $flag"; fi
done

# Serialized: round-robin (the default policy) and continue, with the trace.
run serial-rr "$ITERS" --serial --policy roundrobin --trace "$tmp/rr.trace"
same serial-rr "$ref"
run serial-continue "$ITERS" --serial --policy continue
same serial-continue "$ref"

# The instructions were cue points on the shared arena: for each one the trace has an
# event whose address lies in `arena` and whose decoded instruction starts with it.
# (the arena is page-aligned: its three pages are the addresses with these prefixes)
base=$((0x$(nm "$G/insns" | awk '$3=="arena" {print $1}')))
pages=$(printf '0x%x ' $((base >> 12)) $(((base >> 12) + 1)) $(((base >> 12) + 2)))
awk -v P="$pages" 'BEGIN { n = split(P, p, " "); for (i = 1; i <= n; i++) pg[p[i]] = 1 }
  { split($4, a, "/"); if (!(substr(a[1], 1, length(a[1]) - 3) in pg)) next
    i = index($0, "; "); if (i) print substr($0, i + 2) }' "$tmp/rr.trace" >"$tmp/arena.insns"
want="mov|movzx|movsx|add|sub|and|or|xor|inc|dec|neg|not|shl|sar|adc|rol|cmp|test|imul|movsb|movsw|movsd|movsq|lodsq|stosq|cmpsb|scasb"
want="$want|rep movsb|rep movsq|rep stosb|rep stosq|repe cmpsb|repe cmpsq|repne scasb"
want="$want|movups|movaps|movdqu|movdqa|movntdq|lddqu|movq|movd|movlps|movhps|paddd|addps|pxor|pshufd|addsd|maskmovdqu"
want="$want|lock cmpxchg8b|lock cmpxchg16b|lock xadd|xadd|xchg|lock cmpxchg|cmpxchg|lock add|lock sub|lock or|lock and|lock xor|lock inc|lock dec|lock not|lock neg|lock bts|lock btr|lock btc|bt"
want="$want|push|pop|call|ret|pushfq|popfq|leave|fxsave64|fxrstor64"
grep -q "^xsave: ok" "$tmp/$ref.out" && want="$want|xsave64|xrstor64"
grep -q "^xsave: ok" "$tmp/$ref.out" && grep -q "xsaveopt=1" "$tmp/$ref.out" && want="$want|xsaveopt64"
grep -q "^xsave: ok" "$tmp/$ref.out" && grep -q "xsavec=1" "$tmp/$ref.out" && want="$want|xsavec64"
grep -q "^avx: ok" "$tmp/$ref.out" && want="$want|vmovdqu|vpbroadcastd|vpaddd|vpgatherdd|vmaskmovps"
grep -q "^avx512: ok" "$tmp/$ref.out" && want="$want|vmovdqu64|vmovdqu32|vpbroadcastq|kmovw"
missing=""
IFS='|' read -ra list <<<"$want"
for m in "${list[@]}"; do
  [ "$m" = kmovw ] && continue # not a memory access; listed for the family's sake only
  grep -Eq "^$m( |$)" "$tmp/arena.insns" || missing="$missing, $m"
done
if [ -s "$tmp/arena.insns" ] && [ -z "$missing" ]; then
  ok "serial trace: every instruction of the test was a cue point on the shared arena ($(wc -l <"$tmp/arena.insns") events)"
else bad "serial trace: no cue point on the arena for: ${missing#, }"; fi

# Simulation rounds during the run: rounds happen, no replay divergence, same results.
run attach "$ATTACH_ITERS" --stats --attach 50/s
same attach "free-$ATTACH_ITERS"
rounds=$(sed -n 's/.*"rounds":\([0-9]*\).*/\1/p' "$tmp/attach.err"); div=$(sed -n 's/.*"divergences":\([0-9]*\).*/\1/p' "$tmp/attach.err")
if [ "${rounds:-0}" -ge 1 ] && [ "${div:-1}" = 0 ]; then ok "attach: $rounds rounds during the run, no divergence"
else bad "attach: rounds '${rounds}', divergences '${div}'"; fi

summary "insns tests"
