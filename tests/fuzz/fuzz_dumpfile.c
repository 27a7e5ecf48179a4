/* libFuzzer harness for the .jinxdump parser (vmm/dump/dumpfile.c), its CPUID record
 * (vmm/dump/cpuidrec.c) and its CPUID_PATCHES record (vmm/dump/patchrec.c). Two properties:
 * - any input is refused or accepted without a crash, leak or out-of-bounds access;
 * - what the parser accepts (digest check skipped, so mutations get past it) encodes
 *   back into a dump that parses again, with the digest checked. */
#include "dump/dumpfile.h"
#include "dump/cpuidrec.h"
#include "dump/patchrec.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct dumpfile d, e;
    char err[512];
    if (dumpfile_parse(data, size, 0, &d, err, sizeof err) == 0)
        dumpfile_free(&d);
    if (dumpfile_parse(data, size, DUMPFILE_NO_CHECKSUM, &d, err, sizeof err) < 0)
        return 0;
    struct cpuid_rec cr;
    if (cpuidrec_find(&d, &cr, err, sizeof err) == 0 && cr.present) {
        struct dbuf cb = {0};
        struct cpuid_rec back;
        if (cpuidrec_encode(cr.model, cr.table, &cb) < 0 ||
            cpuidrec_parse(cb.p, cb.len, &back, err, sizeof err) < 0 ||
            back.table->nent != cr.table->nent ||
            memcmp(back.table->entries, cr.table->entries,
                   cr.table->nent * sizeof cr.table->entries[0]) != 0)
            abort(); /* a CPUID record that parses encodes back to the same table */
        cpuidrec_free(&back);
        cpuidrec_free(&cr);
        dbuf_free(&cb);
    }
    struct patch_rec pr;
    if (patchrec_find(&d, &pr, err, sizeof err) == 0 && pr.present) {
        struct dbuf pb = {0};
        struct patch_rec back;
        if (patchrec_encode_kinds(pr.va, pr.kind, pr.n, &pb) < 0 ||
            patchrec_parse(pb.p, pb.len, &back, err, sizeof err) < 0 || back.n != pr.n ||
            (pr.n && (memcmp(back.va, pr.va, pr.n * sizeof *pr.va) != 0 ||
                      memcmp(back.kind, pr.kind, pr.n) != 0)))
            abort(); /* a CPUID_PATCHES record that parses encodes back to the same sites */
        patchrec_free(&back);
        patchrec_free(&pr);
        dbuf_free(&pb);
    }
    struct dbuf b = {0};
    if (dumpfile_encode(&d, &b) < 0)
        abort(); /* whatever parses must encode */
    if (dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err) < 0)
        abort(); /* ... and parse back */
    if (e.nthreads != d.nthreads || memcmp(&e.outcome, &d.outcome, sizeof d.outcome) != 0 ||
        memcmp(e.threads, d.threads, d.nthreads * sizeof *d.threads) != 0)
        abort();
    dumpfile_free(&e);
    dumpfile_free(&d);
    dbuf_free(&b);
    return 0;
}
