#include "dump/sanrec.h"
#include "lib/util.h"
#include <string.h>

int sanrec_add(struct dumpfile *d, const struct san_report *r)
{
    struct dbuf b = {0};
    bput_u32(&b, SANREC_VERSION);
    bput_str(&b, r->tool, sizeof r->tool - 1);
    bput_str(&b, r->kind, SANREPORT_KIND_LEN - 1);
    int n = r->nlines < 0 ? 0 : r->nlines > SANREPORT_LINES ? SANREPORT_LINES : r->nlines;
    bput_u32(&b, (uint32_t)n);
    for (int i = 0; i < n; i++)
        bput_str(&b, r->lines[i], SANREPORT_LINE_LEN - 1);
    int rc = b.oom ? -1 : dumpfile_add_record(d, DREC_SANREPORT, 0, b.p, b.len);
    dbuf_free(&b);
    return rc;
}

int sanrec_decode(const uint8_t *p, size_t len, struct san_report *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct bcur c = bcur_make(p, len);
    uint32_t version = bget_u32(&c);
    if (c.bad || version != SANREC_VERSION)
        return jx_fail(err, errlen, "SANREPORT: version %u (expected %u)", version, SANREC_VERSION);
    if (!bget_str(&c, r->tool, sizeof r->tool) || !bget_str(&c, r->kind, sizeof r->kind) ||
        !sanreport_valid(r->tool, r->kind)) {
        memset(r, 0, sizeof *r);
        return jx_fail(err, errlen, "SANREPORT: bad tool or kind");
    }
    uint32_t n = bget_u32(&c);
    if (c.bad || n > SANREPORT_LINES) {
        memset(r, 0, sizeof *r);
        return jx_fail(err, errlen, "SANREPORT: %u lines (at most %d)", n, SANREPORT_LINES);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!bget_str(&c, r->lines[i], SANREPORT_LINE_LEN)) {
            memset(r, 0, sizeof *r);
            return jx_fail(err, errlen, "SANREPORT: line %u is malformed", i);
        }
        for (const char *s = r->lines[i]; *s; s++)
            if (*s != '\t' && ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)) {
                memset(r, 0, sizeof *r);
                return jx_fail(err, errlen, "SANREPORT: line %u is not printable text", i);
            }
    }
    r->nlines = (int)n;
    return 0;
}

int sanrec_find(const struct dumpfile *d, struct san_report *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < d->nextra; i++)
        if (d->extra[i].type == DREC_SANREPORT)
            return sanrec_decode(d->extra[i].data, d->extra[i].len, r, err, errlen) < 0 ? -1 : 1;
    return 0;
}
