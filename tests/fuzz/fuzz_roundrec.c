/* libFuzzer harness for the round records of a .jinxdump (vmm/dump/snapfile.c, vmm/dump/roundrec.c):
 * the first byte picks the parser (SNAPSHOT, schedule, trace, score, shared variables, VM
 * options), the rest is the record payload. Whatever parses must encode again and parse
 * back to the same bytes: a parser that accepts what its encoder cannot reproduce is a
 * bug too. */
#include "lib/bytes.h"
#include "dump/roundrec.h"
#include "dump/snapfile.h"
#include <stdlib.h>
#include <string.h>

static void same_bytes(const uint8_t *a, size_t alen, const struct dbuf *b)
{
    if (b->oom || alen != b->len || memcmp(a, b->p, alen) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    char err[300];
    struct dbuf b = {0};
    switch (data[0] % 6) {
    case 0: {
        struct snap_image s;
        if (snapfile_parse(p, n, &s, err, sizeof err) == 0) {
            if (snapfile_encode(&s, &b) < 0)
                abort();
            struct snap_image s2;
            struct dbuf b2 = {0};
            if (snapfile_parse(b.p, b.len, &s2, err, sizeof err) < 0 || snapfile_encode(&s2, &b2) < 0)
                abort();
            same_bytes(b2.p, b2.len, &b);
            dbuf_free(&b2);
            snapimg_free(&s2);
            snapimg_free(&s);
        }
        break;
    }
    case 1: {
        struct ex_schedule s;
        if (rr_schedule_parse(p, n, &s, err, sizeof err) == 0) {
            struct ex_schedule s2;
            if (rr_schedule_encode(&s, &b) < 0 ||
                rr_schedule_parse(b.p, b.len, &s2, err, sizeof err) < 0 || !ex_schedule_equal(&s, &s2))
                abort();
            ex_schedule_free(&s2);
        }
        ex_schedule_free(&s);
        break;
    }
    case 2: {
        struct ex_trace t;
        if (rr_trace_parse(p, n, &t, err, sizeof err) == 0) {
            struct ex_trace t2;
            if (rr_trace_encode(&t, &b) < 0 || rr_trace_parse(b.p, b.len, &t2, err, sizeof err) < 0 ||
                ex_trace_first_difference(&t, &t2) != -1)
                abort();
            struct rr_var *v;
            size_t nv;
            if (rr_shared_vars(&t, &v, &nv) == 0)
                free(v);
            ex_trace_free(&t2);
            ex_trace_free(&t);
        }
        break;
    }
    case 3: {
        struct rr_score s;
        if (rr_score_parse(p, n, &s, err, sizeof err) == 0) {
            struct rr_score s2;
            struct dbuf b2 = {0};
            if (rr_score_encode(&s, &b) < 0 || rr_score_parse(b.p, b.len, &s2, err, sizeof err) < 0 ||
                rr_score_encode(&s2, &b2) < 0)
                abort();
            same_bytes(b2.p, b2.len, &b);
            dbuf_free(&b2);
        }
        break;
    }
    case 4: {
        struct rr_var *v;
        size_t nv;
        if (rr_vars_parse(p, n, &v, &nv, err, sizeof err) == 0) {
            struct rr_var *v2;
            size_t nv2;
            struct dbuf b2 = {0};
            if (rr_vars_encode(v, nv, &b) < 0 || rr_vars_parse(b.p, b.len, &v2, &nv2, err, sizeof err) < 0 ||
                rr_vars_encode(v2, nv2, &b2) < 0)
                abort();
            same_bytes(b2.p, b2.len, &b);
            dbuf_free(&b2);
            free(v2);
            free(v);
        }
        break;
    }
    case 5: {
        struct rr_vmopts o;
        if (rr_vmopts_parse(p, n, &o, err, sizeof err) == 0) {
            struct rr_vmopts o2;
            struct dbuf b2 = {0};
            if (rr_vmopts_encode(&o, &b) < 0 || rr_vmopts_parse(b.p, b.len, &o2, err, sizeof err) < 0 ||
                rr_vmopts_encode(&o2, &b2) < 0)
                abort();
            same_bytes(b2.p, b2.len, &b);
            dbuf_free(&b2);
            rr_vmopts_free(&o2);
            rr_vmopts_free(&o);
        }
        break;
    }
    }
    dbuf_free(&b);
    return 0;
}
