/* Doctors a round-retired .jinxdump for tests/integration/html.sh (the .core next to it
 * stays valid: only .jinxdump records change, and the END digest is recomputed).
 *
 *   htmldump hostile IN OUT   every string the page shows from the dump becomes markup or
 *                             script: shared-variable symbols, the trace's symbols and
 *                             instructions, the command line, the outcome's detail
 *   htmldump big IN OUT N     the retired and recorded traces become N synthetic cue
 *                             points over 4 threads (shared and private accesses, futex
 *                             wait/wake every 97 events); they differ first at N/2
 *
 * Built by html.sh against build/libjinxvmm.a and build/libexplorer.a. */
#include "dump/dumpfile.h"
#include "dump/roundrec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOSTILE_SYM "<script>alert(1)</script>"

static void die(const char *what)
{
    fprintf(stderr, "htmldump: %s\n", what);
    exit(1);
}

static struct dump_record *rec(struct dumpfile *d, uint32_t type)
{
    for (size_t i = 0; i < d->nextra; i++)
        if (d->extra[i].type == type)
            return &d->extra[i];
    die("the dump has no round records (use a round-retired dump)");
    return NULL;
}

static void replace(struct dump_record *r, struct dbuf *b)
{
    if (b->oom)
        die("out of memory");
    free(r->data);
    r->data = b->p;
    r->len = b->len;
    memset(b, 0, sizeof *b);
}

static void put_trace(struct dumpfile *d, uint32_t type, const struct ex_trace *t)
{
    struct dbuf b = {0};
    if (rr_trace_encode(t, &b) < 0)
        die("cannot encode a trace");
    replace(rec(d, type), &b);
}

static void hostile(struct dumpfile *d, struct dump_round *r)
{
    for (size_t i = 0; i < r->nvars; i++)
        snprintf(r->vars[i].sym, sizeof r->vars[i].sym, "%s", HOSTILE_SYM);
    struct dbuf b = {0};
    if (rr_vars_encode(r->vars, r->nvars, &b) < 0)
        die("cannot encode the shared variables");
    replace(rec(d, DREC_SHARED_VARS), &b);
    for (size_t i = 0; i < r->retired.n; i++) {
        snprintf(r->retired.ev[i].sym, EX_SYM_LEN, "%s", HOSTILE_SYM);
        snprintf(r->retired.ev[i].insn, EX_INSN_LEN, "\"><img src=x onerror=alert(5)>");
    }
    put_trace(d, DREC_TRACE_RETIRED, &r->retired);
    snprintf(d->run.cmdline, sizeof d->run.cmdline,
             "images/bin/x '\"</script><script>alert(2)</script>");
    snprintf(d->outcome.detail, sizeof d->outcome.detail, "<img src=x onerror=alert(3)>");
}

static void big(struct dumpfile *d, struct dump_round *r, size_t n)
{
    struct ex_trace t;
    ex_trace_init(&t);
    uint64_t base = 0x40c000, fx = 0x40d000;
    for (size_t i = 0; i < n; i++) {
        uint32_t tid = 1 + (uint32_t)(i / 7 % 4);
        struct ex_event *e;
        if (i % 97 == 50)
            e = ex_trace_sync(&t, tid, EX_FUTEX_WAIT, fx, 0);
        else if (i % 97 == 70)
            e = ex_trace_sync(&t, 1 + tid % 4, EX_FUTEX_WAKE, fx, 1);
        else if (i % 3 == 0)   /* private: each thread its own page */
            e = ex_trace_access(&t, tid, EX_WRITE, 0x7f0000000000ULL + tid * 0x10000, 8, 0,
                                0x401000 + i % 64);
        else
            e = ex_trace_access(&t, tid, i % 2 ? EX_READ : EX_RMW, base + 8 * (i % 8), 8,
                                i % 2 ? 0 : EX_F_ATOMIC, 0x401100 + i % 32);
        if (!e)
            die("out of memory");
    }
    t.nthreads = 4;
    put_trace(d, DREC_TRACE_RETIRED, &t);
    t.ev[n / 2].tid = 1 + t.ev[n / 2].tid % 4;
    put_trace(d, DREC_TRACE_RECORDED, &t);
    ex_trace_free(&t);
    struct rr_var v[8];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 8; i++) {
        v[i].addr = base + 8 * (uint64_t)i;
        v[i].threads = 4;
        snprintf(v[i].sym, sizeof v[i].sym, "shared_%d", i);
    }
    struct dbuf b = {0};
    if (rr_vars_encode(v, 8, &b) < 0)
        die("cannot encode the shared variables");
    replace(rec(d, DREC_SHARED_VARS), &b);
    r->score.cues_live = r->score.cues_sim = n;
    if (r->score.cue_limit < n)
        r->score.cue_limit = n;
    if (rr_score_encode(&r->score, &b) < 0)
        die("cannot encode the score");
    replace(rec(d, DREC_SCORE), &b);
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "hostile") && strcmp(argv[1], "big")) ||
        (!strcmp(argv[1], "big") && argc != 5))
        die("usage: htmldump hostile IN OUT | htmldump big IN OUT N");
    struct dumpfile d;
    struct dump_round r;
    char err[1024];
    if (dumpfile_read(argv[2], &d, err, sizeof err) < 0 ||
        dump_round_parse(&d, &r, err, sizeof err) < 0)
        die(err);
    if (!r.present)
        die("the dump has no round records (use a round-retired dump)");
    if (!strcmp(argv[1], "hostile"))
        hostile(&d, &r);
    else
        big(&d, &r, strtoull(argv[4], NULL, 10));
    struct dbuf out = {0};
    if (dumpfile_encode(&d, &out) < 0)
        die("cannot encode the dump");
    FILE *f = fopen(argv[3], "wb");
    if (!f || fwrite(out.p, 1, out.len, f) != out.len || fclose(f) != 0)
        die("cannot write the output");
    dbuf_free(&out);
    dump_round_free(&r);
    dumpfile_free(&d);
    return 0;
}
