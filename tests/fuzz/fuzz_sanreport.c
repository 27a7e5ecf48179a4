/* libFuzzer harness for the sanitizer report parser (vmm/linux/sanreport.c: the guest's
 * stderr, untrusted) and the dump's SANREPORT record (vmm/dump/sanrec.c). Beyond "no
 * crash, no leak": a report found has a valid tool and kind, at most SANREPORT_LINES
 * lines, each terminated and printable; encoding it as a record and decoding it gives it
 * back; the raw input as a record is refused or decodes to a valid report. */
#include "dump/sanrec.h"
#include "linux/sanreport.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct san_report *r)
{
    if (!sanreport_valid(r->tool, r->kind) || r->nlines < 0 || r->nlines > SANREPORT_LINES)
        abort();
    for (int i = 0; i < r->nlines; i++) {
        if (!memchr(r->lines[i], 0, SANREPORT_LINE_LEN))
            abort();
        for (const char *c = r->lines[i]; *c; c++)
            if (*c != '\t' && ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f))
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct san_report r, back;
    char err[256];
    if (sanreport_parse((const char *)data, size, &r)) {
        check(&r);
        struct dumpfile d;
        memset(&d, 0, sizeof d);
        if (sanrec_add(&d, &r) == 0) {
            if (sanrec_find(&d, &back, err, sizeof err) != 1 || memcmp(&r, &back, sizeof r))
                abort();
        }
        for (size_t i = 0; i < d.nextra; i++)
            free(d.extra[i].data);
        free(d.extra);
    }
    if (sanrec_decode(data, size, &back, err, sizeof err) == 0)
        check(&back);
    else if (!memchr(err, 0, sizeof err) || !err[0])
        abort();
    return 0;
}
