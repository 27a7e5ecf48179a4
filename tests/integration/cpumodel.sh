#!/usr/bin/env bash
# CPU models (docs/cpu-models.md): the guest's CPUID table comes from a libvirt model
# (default kvm64), dumps record it, replay presents exactly it or refuses a host that
# cannot. Checks: unknown/bad model names refused; the table recorded under kvm64 holds
# kvm64's features and none beyond (no SSSE3..AVX-512, XCR0 x87|SSE) while --cpu-model
# host keeps at least as many; what the guest program itself reads with CPUID is the
# recorded table (trapped by KVM, or patched where user CPUID is not trapped: PVM
# without cpuid_fault), for a static musl program and for a dynamic glibc one (inline
# CPUID, __builtin_cpu_supports, glibc's usable features) under kvm64, Nehalem and
# Haswell-noTSX, with --report's patch counts; --cpu-model host reads the host's own
# CPUID; a dump made under a model (kvm64, Nehalem) replays under it;
# a doctored dump naming a feature this host's KVM lacks is refused naming it; a
# malformed CPUID record is refused; `jinx test --cpu-model` passes it through; `jinx
# hosts baseline` on saved host CPU XMLs.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
VMM="$BIN/jinx-vmm"; CTL="$BIN/jinxctl"; JINX="$BIN/jinx"
G="$BUILD/guest-tests"; DOCTOR=scripts/dump-cpuid.py
mk_tmp
[ -x "$G/cpuid" ] || { echo "FAIL $G/cpuid not built (make guest-tests)"; exit 1; }
py() { python3 -c "$@"; }

# ---- names ----
"$VMM" run --no-control --cpu-model NoSuchCPU "$G/cpuid" >/dev/null 2>"$tmp/e"; st=$?
if [ $st = 125 ] && grep -q "libvirt does not know this model.*kvm64.*Haswell-noTSX" "$tmp/e"; then
  ok "unknown model refused (125), the known ones listed"
else bad "unknown model: status $st"; cat "$tmp/e"; fi
"$VMM" run --no-control --cpu-model "a'b" "$G/cpuid" >/dev/null 2>"$tmp/e"; st=$?
if [ $st = 125 ] && grep -q "not a CPU model name" "$tmp/e"; then ok "bad model name refused"
else bad "bad model name: status $st"; cat "$tmp/e"; fi
"$JINX" test --cpu-model "a b" images/bin/circle >/dev/null 2>"$tmp/e"; st=$?
if [ $st = 2 ] && grep -q "not a CPU model name" "$tmp/e"; then ok "jinx test: bad model name refused"
else bad "jinx test bad model: status $st"; fi

"$VMM" run --no-control --quiet --cpu-model Nehalem --report "$tmp/r.json" "$G/cpuid" >/dev/null 2>&1
py 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["cpu_model"] != "Nehalem")' "$tmp/r.json" \
  && ok "--report names the model" || bad "--report: no cpu_model Nehalem"

# ---- the table under kvm64 (the default) and host ----
table() { # MODEL DIR: runs cpuid abort, prints the dump path
  local args=(); [ "$1" = default ] || args=(--cpu-model "$1")
  "$VMM" run --no-control --quiet "${args[@]}" --dump-dir "$2" "$G/cpuid" abort >"$2.out" 2>"$2.err"
  sed -n 's/.*dump written to \(.*\.jinxdump\).*/\1/p' "$2.err"
}
mkdir -p "$tmp/k" "$tmp/h"
dk=$(table default "$tmp/k"); dh=$(table host "$tmp/h")
[ -f "$dk" ] && [ -f "$dh" ] || { bad "no dump from cpuid abort"; cat "$tmp/k.err"; exit 1; }
"$DOCTOR" show "$dk" >"$tmp/k.json"; "$DOCTOR" show "$dh" >"$tmp/h.json"
# reg(JSON, leaf, sub, regindex 3..6)
check_k=$(py '
import json,sys
d=json.load(open(sys.argv[1]))
def reg(l,s,r):
    for e in d["cpuid"]:
        if e[0]==l and (e[1]==s or not e[2]&1): return e[r]
    return 0
bad=[]
if d["model"]!="kvm64": bad.append("model "+d["model"])
l1c, l7b = reg(1,0,5), reg(7,0,4)
for name,v,b in [("ssse3",l1c,9),("sse4.1",l1c,19),("sse4.2",l1c,20),("popcnt",l1c,23),("avx",l1c,28),("rdrand",l1c,30),("hypervisor",l1c,31),("avx2",l7b,5),("avx512f",l7b,16),("bmi2",l7b,8),("rdseed",l7b,18),("sha",l7b,29)]:
    if v>>b&1: bad.append(name+" present")
for name,v,b in [("sse2",reg(1,0,6),26),("fxsr",reg(1,0,6),24),("lm",reg(0x80000001,0,6),29)]:
    if not v>>b&1: bad.append(name+" missing")
if reg(0xd,0,3)!=3: bad.append("xcr0 mask %x" % reg(0xd,0,3))
print(" ".join(bad) or "ok")' "$tmp/k.json")
[ "$check_k" = ok ] && ok "kvm64 table: SSE2/FXSR/LM, no SSSE3..SSE4.2/POPCNT/AVX/AVX2/AVX-512/RDRAND/RDSEED, XCR0 mask 0x3" || bad "kvm64 table: $check_k"
"$CTL" inspect --json --disasm 0 "$dk" >"$tmp/ik.json" 2>/dev/null
"$CTL" inspect --json --disasm 0 "$dh" >"$tmp/ih.json" 2>/dev/null
sup=$(py '
import json,sys
k=set(json.load(open(sys.argv[1]))["cpu"]["features"]); h=set(json.load(open(sys.argv[2]))["cpu"]["features"])
print("ok" if k and k<=h else "kvm64 has %s beyond host" % sorted(k-h))' "$tmp/ik.json" "$tmp/ih.json")
[ "$sup" = ok ] && ok "inspect shows the model's features; host's table has all of kvm64's and $(py 'import json,sys; print(len(json.load(open(sys.argv[1]))["cpu"]["features"]))' "$tmp/ih.json") in all" || bad "host vs kvm64: $sup"
"$CTL" inspect --disasm 0 "$dk" 2>/dev/null | grep -q "^cpu:     model kvm64 (" && ok "inspect text names the model" || bad "inspect text: no cpu line"

# ---- what the guest's own CPUID shows ----
# Where user-mode CPUID traps (VMX/SVM, PVM with cpuid_fault) KVM answers it; elsewhere
# jinx patches the program's cpuid instructions (docs/cpu-models.md): either way the
# program reads exactly the recorded table. PREFIX: the program's line prefix.
table_lines() { # JSON PREFIX
  py '
import json,sys
d=json.load(open(sys.argv[1])); p=sys.argv[2]
def reg(l,s,r):
    for e in d["cpuid"]:
        if e[0]==l and (e[1]==s or not e[2]&1): return e[r]
    return 0
print(p+"leaf1 ecx=%08x edx=%08x" % (reg(1,0,5)&~(1<<27), reg(1,0,6)))
print(p+"leaf7 ebx=%08x ecx=%08x edx=%08x" % (reg(7,0,4), reg(7,0,5), reg(7,0,6)))
print(p+"leafd eax=%08x" % reg(0xd,0,3))' "$1" "$2"
}
"$G/cpuid" >"$tmp/native.out"
want=$(table_lines "$tmp/k.json" ""); got=$(grep -E "^(leaf1|leaf7|leafd eax)" "$tmp/k.out")
[ "$got" = "$want" ] && grep -q "rdrand=0 rdseed=0" "$tmp/k.out" \
  && ok "guest CPUID (static musl, inline asm) = the recorded kvm64 table, no RDRAND/RDSEED" \
  || { bad "guest CPUID differs from the kvm64 table"; diff <(echo "$want") <(echo "$got"); }
# A program that rewrites a patched site gets what it wrote (here: a real cpuid again).
if ! grep -qw -E "vmx|svm|cpuid_fault" /proc/cpuinfo; then
  "$G/cpuid" smc >"$tmp/smc-native.out"
  "$VMM" run --no-control --quiet "$G/cpuid" smc >"$tmp/smc.out" 2>"$tmp/smc.err"; st=$?
  t1=$(sed -n 's/^leaf1 ecx=\([0-9a-f]*\).*/\1/p' "$tmp/k.out"); n1=$(sed -n 's/.*after=//p' "$tmp/smc-native.out")
  [ $st = 0 ] && grep -q "^smc patched=1 before=$t1 after=$n1\$" "$tmp/smc.out" \
    && ok "the program sees its cpuid patched, writes it back and then reads the host's CPUID (status 0)" \
    || { bad "self-modified patched site: status $st, want patched=1 before=$t1 after=$n1"; cat "$tmp/smc.out" "$tmp/smc.err"; }
fi
# A file mapped read-only and made executable later (mprotect) is patched then.
if ! grep -qw -E "vmx|svm|cpuid_fault" /proc/cpuinfo; then
  "$VMM" run --no-control --quiet "$G/cpuid" mapexec >"$tmp/mx.out" 2>"$tmp/mx.err"; st=$?
  [ $st = 0 ] && grep -q "^mapexec before=c after=u ecx=$t1\$" "$tmp/mx.out" \
    && ok "a file mapping made executable by mprotect gets its cpuid patched (reads the table's leaf 1)" \
    || { bad "mapexec: status $st, want before=c after=u ecx=$t1"; cat "$tmp/mx.out" "$tmp/mx.err"; }
  # Libraries ld.so maps (mmap PROT_EXEC): libstdc++ and libgcc_s of the dynamic C++ pool,
  # as many sites per file as objdump finds, none unsure; rdtsc/rdtscp too (ld.so's,
  # libc's: "tsc" against objdump's rdtsc + rdtscp).
  "$VMM" run --no-control --quiet --report "$tmp/cxx.json" images/bin/dyn/cxx-pool >/dev/null 2>&1
  libs=$(py '
import json,sys,subprocess
p=json.load(open(sys.argv[1])).get("cpuid_patches") or {}
out=[]
for f in p.get("files",[]):
    dis=subprocess.run(["objdump","-d",f["file"]],capture_output=True,text=True).stdout.split("\n")
    ins=[l.split("\t")[-1].strip() for l in dis]
    want=sum(1 for i in ins if i=="cpuid")
    tsc=sum(1 for i in ins if i in ("rdtsc","rdtscp"))
    out.append("%s:%d/%d/%d/%d/%d/%d" % (f["file"].rsplit("/",1)[-1], f["cpuid"], want, f["unsure"], f["tsc"], tsc, f["tsc_unsure"]))
print(" ".join(out))' "$tmp/cxx.json")
  if echo "$libs" | grep -q "libstdc++" && echo "$libs" | grep -q "libgcc_s" && \
     ! echo "$libs" | tr ' ' '\n' | awk -F'[:/]' '$2 != $3 || $4 != 0 || $5 != $6 {bad=1} END {exit !bad}'; then
    ok "libraries mapped by ld.so are patched, every cpuid and rdtsc(p) objdump shows (file:cpuid/objdump/unsure/tsc/objdump/tsc_unsure: $libs)"
  else bad "library patch counts: $libs"; fi
fi
# --cpu-model host: no patching, the program reads what the host's CPU says natively
# (here: its own CPUID where it is not trapped, KVM's table where it is).
if ! grep -qw -E "vmx|svm" /proc/cpuinfo && ! grep -qw cpuid_fault /proc/cpuinfo; then
  cmp -s <(grep -v '^rdrand' "$tmp/native.out") <(grep -v '^rdrand' "$tmp/h.out") \
    && ok "--cpu-model host: the program reads the host's own CPUID (not trapped here, not patched)" \
    || { bad "--cpu-model host: guest CPUID is not the host's"; diff "$tmp/native.out" "$tmp/h.out"; }
  "$VMM" run --no-control --quiet --serial --cpu-model host "$G/cpuid" >/dev/null 2>"$tmp/w.err"
  grep -q "reads the host's CPUID, not CPU model host's" "$tmp/w.err" \
    && ok "--serial --cpu-model host warns that the program reads the host's CPUID" \
    || { bad "no warning about native CPUID under --serial --cpu-model host"; cat "$tmp/w.err"; }
fi

# glibc, dynamically linked: inline CPUID, libgcc's __builtin_cpu_supports and glibc's own
# usable features (what its string functions dispatch on) under three models. Every line
# must agree with the model's table: a feature the model hides is seen nowhere.
GL="$G/cpuid_glibc"
[ -x "$GL" ] || bad "$GL not built (make guest-tests)"
"$GL" >"$tmp/gl-native.out" 2>&1
for model in default Nehalem Haswell-noTSX; do
  args=(); [ $model = default ] || args=(--cpu-model $model)
  mkdir -p "$tmp/m-$model"
  dm=$(table $model "$tmp/m-$model"); "$DOCTOR" show "$dm" >"$tmp/m-$model.json" 2>/dev/null
  "$VMM" run --no-control --quiet "${args[@]}" --report "$tmp/gl-$model.json" "$GL" >"$tmp/gl-$model.out" 2>"$tmp/gl-$model.err"; st=$?
  [ $st = 0 ] || { bad "cpuid_glibc under $model: status $st"; cat "$tmp/gl-$model.err"; continue; }
  want=$(table_lines "$tmp/m-$model.json" "asm "); got=$(grep -E "^asm (leaf1|leaf7|leafd eax)" "$tmp/gl-$model.out")
  [ "$got" = "$want" ] && ok "$model: glibc program's inline CPUID = the model's table" \
    || { bad "$model: glibc program's CPUID differs from the table"; diff <(echo "$want") <(echo "$got"); }
  # XSAVE size: where the guest's XCR0 is the host's (PVM), leaf 0xD's EBX must be at
  # least the host's, or glibc's lazy-binding trampoline overflows its XSAVE area.
  gx=$(sed -n 's/^xgetbv xcr0=//p' "$tmp/gl-$model.out"); nx=$(sed -n 's/^xgetbv xcr0=//p' "$tmp/gl-native.out")
  gb=$(sed -n 's/^asm leafd ebx=//p' "$tmp/gl-$model.out"); nb=$(sed -n 's/^asm leafd ebx=//p' "$tmp/gl-native.out")
  if [ -n "$gx" ] && [ "$gx" = "$nx" ] && [ -n "$gb" ] && [ -n "$nb" ]; then
    [ "$gb" -ge "$nb" ] && ok "$model: XCR0 is the host's ($gx): leaf 0xD EBX $gb >= the host's $nb" \
      || bad "$model: XCR0 is the host's ($gx) but leaf 0xD EBX is $gb < the host's $nb (XSAVE areas overflow)"
  elif [ -z "$gx" ] || [ -z "$gb" ]; then bad "$model: cpuid_glibc printed no XCR0 or leaf 0xD EBX"
  else ok "$model: XCR0 $gx is not the host's $nx (it is loaded): leaf 0xD EBX $gb is the model's"; fi
  verdict=$(py '
import json,sys
d=json.load(open(sys.argv[1]))
def reg(l,s,r):
    for e in d["cpuid"]:
        if e[0]==l and (e[1]==s or not e[2]&1): return e[r]
    return 0
# Bit positions from the Intel SDM / AMD APM (CPUID leaf 1 ECX, leaf 7 EBX).
bits={"sse3":(1,5,0),"ssse3":(1,5,9),"sse4.1":(1,5,19),"sse4.2":(1,5,20),"popcnt":(1,5,23),
      "avx":(1,5,28),"fma":(1,5,12),"aes":(1,5,25),"avx2":(7,4,5),"bmi2":(7,4,8),"avx512f":(7,4,16)}
seen=[]; bad=[]
for line in open(sys.argv[2]):
    w=line.split()
    if w[0] in ("gcc","glibc"):
        name,val=w[1].split("=")
        l,r,b=bits[name]
        if val=="1":
            seen.append(w[0]+":"+name)
            if not reg(l,0,r)>>b&1: bad.append(w[0]+" sees "+name)
print("; ".join(bad) if bad else "ok %d" % len(seen))' "$tmp/m-$model.json" "$tmp/gl-$model.out")
  case "$verdict" in ok*) ok "$model: __builtin_cpu_supports and glibc see no feature the model hides (${verdict#ok } seen)";;
    *) bad "$model: $verdict";; esac
  sites=$(py '
import json,sys
p=json.load(open(sys.argv[1])).get("cpuid_patches") or {}
f={x["file"].rsplit("/",1)[-1]:x["sites"] for x in p.get("files",[])}
print(f.get("cpuid_glibc",0), sum(f.values()))' "$tmp/gl-$model.json")
  set -- $sites
  if grep -qw -E "vmx|svm|cpuid_fault" /proc/cpuinfo; then :
  elif [ "${1:-0}" -ge 4 ] && [ "${2:-0}" -gt "$1" ]; then ok "$model: --report counts $1 patched sites in the program, $2 in all (ld.so's too)"
  else bad "$model: --report patch counts '$sites'"; fi
done
# A dump records the patched sites (replay answers them: its snapshot holds them patched).
if ! grep -qw -E "vmx|svm|cpuid_fault" /proc/cpuinfo; then
  mkdir -p "$tmp/gd"
  "$VMM" run --no-control --quiet --report "$tmp/gd.json" --dump-dir "$tmp/gd" "$GL" abort >/dev/null 2>&1
  gd=$(ls "$tmp"/gd/*.jinxdump 2>/dev/null | head -1)
  np=$([ -f "$gd" ] && "$DOCTOR" patches "$gd" | py 'import json,sys; print(len(json.load(sys.stdin) or []))')
  nr=$(py 'import json,sys; print(json.load(open(sys.argv[1]))["cpuid_patches"]["sites"])' "$tmp/gd.json" 2>/dev/null)
  [ -n "$np" ] && [ "$np" = "$nr" ] && [ "$np" -gt 0 ] && ok "the dump records the $np patched CPUID sites --report counts" \
    || bad "dump's patched sites '$np' vs --report's '$nr'"
fi
# The model reaches glibc's dispatch: where the host has AVX2, kvm64 picks another strlen.
if grep -q "^glibc avx2=1" "$tmp/gl-native.out"; then
  a=$(grep "^impl strlen" "$tmp/gl-native.out"); b=$(grep "^impl strlen" "$tmp/gl-default.out")
  [ -n "$b" ] && [ "$a" != "$b" ] && ok "glibc's strlen under kvm64 ($b) is not the host's AVX2 one ($a)" \
    || bad "glibc's strlen under kvm64 is the host's ($a / $b)"
fi
# ---- replay under the recorded model; refusal on a missing feature ----
replayable() { "$CTL" inspect --disasm 0 "$1" 2>/dev/null | grep -q '^interleaving'; }
for model in default Nehalem; do
  args=(); [ $model = default ] || args=(--cpu-model $model)
  want=${model/default/kvm64}
  "$JINX" test --budget 60s --json "${args[@]}" --dump-dir "$tmp/r-$model" images/bin/circle >"$tmp/t.json" 2>/dev/null
  d=$(py 'import json,sys; print(json.load(open(sys.argv[1])).get("dump",""))' "$tmp/t.json" 2>/dev/null)
  [ -f "$d" ] || { bad "$model: jinx test left no dump"; continue; }
  m=$("$DOCTOR" show "$d" | py 'import json,sys; print(json.load(sys.stdin)["model"])')
  [ "$m" = "$want" ] && ok "jinx test ${args[*]}: the dump records model $m" || bad "$model: dump has model '$m'"
  # Some of circle's crashes happen in free execution (no round records): more seeds.
  seed=1; t0=$SECONDS
  while ! replayable "$d" && [ $((SECONDS - t0)) -lt 30 ]; do
    seed=$((seed + 1))
    "$VMM" run --no-control --quiet --seed $seed --attach 5/s "${args[@]}" --dump-dir "$tmp/r2-$model" images/bin/circle >/dev/null 2>"$tmp/run.err"
    d=$(sed -n 's/.*dump written to \(.*\.jinxdump\).*/\1/p' "$tmp/run.err")
  done
  replayable "$d" || { bad "$model: no replayable dump in 30 s"; continue; }
  "$VMM" replay "$d" >/dev/null 2>"$tmp/rp.err"; st=$?
  if [ $st = 134 ] && grep -q "replay reproduced" "$tmp/rp.err"; then
    ok "$model: a dump made under $want replays under it (status 134)"
  else bad "$model: replay status $st"; tail -3 "$tmp/rp.err"; fi
  [ $model = default ] && rdump=$d
done
# A feature this host's KVM lacks (absent from the host table), set in the dump's table.
pick=$(py '
import json,sys
d=json.load(open(sys.argv[1]))
def reg(l,s,r):
    for e in d["cpuid"]:
        if e[0]==l and (e[1]==s or not e[2]&1): return e[r]
    return None
for name,l,s,rn,r,b in [("avx512f",7,0,"ebx",4,16),("avx2",7,0,"ebx",4,5),("sha-ni",7,0,"ebx",4,29),("avx",1,0,"ecx",5,28),("ssse3",1,0,"ecx",5,9),("rtm",7,0,"ebx",4,11)]:
    v=reg(l,s,r)
    if v is not None and not v>>b&1: print(name,l,s,rn,b); break' "$tmp/h.json")
if [ -n "$pick" ] && [ -n "${rdump:-}" ]; then
  set -- $pick
  cp "${rdump%.jinxdump}.core" "$tmp/doc.core" 2>/dev/null
  "$DOCTOR" set "$rdump" "$tmp/doc.jinxdump" $2 $3 $4 $5
  "$VMM" replay "$tmp/doc.jinxdump" >/dev/null 2>"$tmp/doc.err"; st=$?
  if [ $st = 2 ] && grep -q "cannot present CPU model kvm64.*lacks 1 feature: $1 " "$tmp/doc.err"; then
    ok "doctored dump with $1 refused (status 2) naming it"
  else bad "doctored dump ($1): status $st"; cat "$tmp/doc.err"; fi
  "$DOCTOR" dup "$rdump" "$tmp/dup.jinxdump"
  "$VMM" replay "$tmp/dup.jinxdump" >/dev/null 2>"$tmp/dup.err"; st=$?
  [ $st = 2 ] && grep -q "CPUID record malformed (leaf 0x0 subleaf 0 twice)" "$tmp/dup.err" \
    && ok "malformed CPUID record refused (status 2)" || { bad "malformed record: status $st"; cat "$tmp/dup.err"; }
  if ! grep -qw -E "vmx|svm|cpuid_fault" /proc/cpuinfo; then
    "$DOCTOR" badpatch "$rdump" "$tmp/bp.jinxdump"
    "$VMM" replay "$tmp/bp.jinxdump" >/dev/null 2>"$tmp/bp.err"; st=$?
    [ $st = 2 ] && grep -q "CPUID_PATCHES record malformed (site 0: 0x1 " "$tmp/bp.err" \
      && ok "malformed CPUID_PATCHES record refused (status 2)" || { bad "bad patch record: status $st"; cat "$tmp/bp.err"; }
  fi
else bad "no feature to doctor with (host table has them all?) or no dump"; fi

# ---- jinx hosts baseline ----
H=tests/data/hosts
out=$("$JINX" hosts baseline $H/haswell.xml $H/skylake.xml 2>/dev/null); st=$?
[ $st = 0 ] && [ "$out" = Haswell-noTSX ] && ok "hosts baseline: Haswell + Skylake-Server -> Haswell-noTSX" || bad "hosts baseline: $st '$out'"
out=$("$JINX" hosts baseline --json $H/*.xml 2>/dev/null | py 'import json,sys; print(json.load(sys.stdin)["model"])'); 
[ "$out" = Westmere ] && ok "hosts baseline --json with a Westmere host -> Westmere" || bad "hosts baseline 3 hosts: '$out'"
"$JINX" hosts baseline /etc/hostname >/dev/null 2>&1; st=$?
[ $st = 2 ] && ok "hosts baseline: a file with no <cpu> refused (2)" || bad "hosts baseline junk: $st"

summary "cpumodel tests"
