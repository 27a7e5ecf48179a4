#!/usr/bin/env python3
"""Reads or rewrites the CPUID record (type 7) and the CPUID_PATCHES record (type 8) of a
.jinxdump, for tests and for answering "what would this dump need?" by hand
(docs/dumps.md has the format).

  dump-cpuid.py show DUMP                       the model and table as JSON
  dump-cpuid.py set DUMP OUT LEAF SUB REG BIT   OUT: DUMP with that bit set (END re-digested)
  dump-cpuid.py dup DUMP OUT                    OUT: the table's first entry twice (malformed)
  dump-cpuid.py patches DUMP                    the patched sites' addresses as JSON (null: no record)
  dump-cpuid.py patchkinds DUMP                 {"cpuid": n, "rdtsc": n, "rdtscp": n} (null: no record)
  dump-cpuid.py badpatch DUMP OUT               OUT: a CPUID_PATCHES record naming address 0x1
"""
import hashlib, json, struct, sys

REGS = {"eax": 3, "ebx": 4, "ecx": 5, "edx": 6}

def records(buf):
    off, out = 16, []
    while off + 16 <= len(buf):
        typ, flags, n = struct.unpack_from("<IIQ", buf, off)
        out.append([typ, flags, bytearray(buf[off + 16:off + 16 + n])])
        off += 16 + n + (-n % 8)
    return out

def encode(header, recs):
    b = bytearray(header)
    for typ, flags, data in recs:
        if typ == 0xFFFF:
            data = hashlib.sha256(b).digest()
        b += struct.pack("<IIQ", typ, flags, len(data)) + data + b"\0" * (-len(data) % 8)
    return bytes(b)

def parse_cpuid(data):
    n = struct.unpack_from("<I", data, 0)[0]
    model = data[4:4 + n].decode()
    off = 4 + n
    cnt = struct.unpack_from("<I", data, off)[0]
    off += 8
    ents = [list(struct.unpack_from("<7I", data, off + 28 * i)) for i in range(cnt)]
    return model, ents, off

def main():
    cmd, path = sys.argv[1], sys.argv[2]
    buf = open(path, "rb").read()
    recs = records(buf)
    if cmd in ("patches", "patchkinds", "badpatch"):
        prec = next((r for r in recs if r[0] == 8), None)
        if cmd in ("patches", "patchkinds"):
            if prec is None:
                print(json.dumps(None))
                return
            n, version = struct.unpack_from("<II", prec[2], 0)
            ents = struct.unpack_from("<%dQ" % n, prec[2], 8)
            # version 1: the kind in bits 56..63 (0 cpuid, 1 rdtsc, 2 rdtscp); 0: cpuid only
            sites = [(e & ((1 << 56) - 1), e >> 56 if version else 0) for e in ents]
            if cmd == "patches":
                print(json.dumps(["0x%x" % a for a, _ in sites]))
            else:
                names = ("cpuid", "rdtsc", "rdtscp")
                print(json.dumps({k: sum(1 for _, x in sites if x == i) for i, k in enumerate(names)}))
            return
        bad = [8, 0, bytearray(struct.pack("<IIQ", 1, 0, 1))]
        recs = [r for r in recs if r[0] != 8]
        recs.insert(len(recs) - 1, bad)  # before END
        open(sys.argv[3], "wb").write(encode(buf[:16], recs))
        return
    rec = next((r for r in recs if r[0] == 7), None)
    if rec is None:
        sys.exit("no CPUID record in " + path)
    model, ents, off = parse_cpuid(rec[2])
    if cmd == "show":
        print(json.dumps({"model": model, "cpuid": ents}))
        return
    if cmd == "set":
        leaf, sub, reg, bit = int(sys.argv[4], 0), int(sys.argv[5]), sys.argv[6], int(sys.argv[7])
        for i, e in enumerate(ents):
            if e[0] == leaf and (e[1] == sub or not e[2] & 1):
                e[REGS[reg]] |= 1 << bit
                struct.pack_into("<7I", rec[2], off + 28 * i, *e)
                break
        else:
            sys.exit("no leaf 0x%x.%d in the table" % (leaf, sub))
    elif cmd == "dup":
        first = rec[2][off:off + 28]
        struct.pack_into("<I", rec[2], off - 8, len(ents) + 1)
        rec[2][off:off] = first
    open(sys.argv[3], "wb").write(encode(buf[:16], recs))

main()
