/* Round record codecs (roundrec.h). */
#include "dump/roundrec.h"
#include "lib/util.h"
#include "lib/bytes.h"
#include "explorer/explorer.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>


/* ---- traces ---------------------------------------------------------------------- */

#define EVENT_MIN_BYTES (4 * 8 + 4 + 4 + 2 + 1 + 1 + 1 + 1)

static void put_short_str(struct dbuf *b, const char *s, size_t cap)
{
    size_t n = strnlen(s, cap - 1);
    bput_u8(b, (uint8_t)n);
    bput(b, s, n);
}

static bool get_short_str(struct bcur *c, char *dst, size_t cap)
{
    uint8_t n = bget_u8(c);
    dst[0] = '\0';
    if (c->bad || n >= cap || n > c->left || memchr(c->p, 0, n)) {
        c->bad = true;
        return false;
    }
    bget(c, dst, n);
    dst[n] = '\0';
    return true;
}

int rr_trace_encode(const struct ex_trace *t, struct dbuf *b)
{
    if (t->n > RR_MAX_EVENTS || t->nthreads > EX_MAX_TID)
        return -1;
    bput_u32(b, t->nthreads);
    bput_u32(b, 0);
    bput_u64(b, t->n);
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        bput_u64(b, e->addr);
        bput_u64(b, e->page);
        bput_u64(b, e->rip);
        bput_u64(b, e->waker);
        bput_u32(b, e->tid);
        bput_u32(b, e->arg);
        bput_u16(b, e->size);
        bput_u8(b, e->kind);
        bput_u8(b, e->flags);
        put_short_str(b, e->sym, EX_SYM_LEN);
        put_short_str(b, e->insn, EX_INSN_LEN);
    }
    return b->oom ? -1 : 0;
}

int rr_trace_parse(const uint8_t *p, size_t len, struct ex_trace *t, char *err, size_t errlen)
{
    ex_trace_init(t);
    struct bcur c = bcur_make(p, len);
    uint32_t nthreads = bget_u32(&c);
    bget_u32(&c);
    uint64_t n = bget_u64(&c);
    if (c.bad)
        return jx_fail(err, errlen, "trace record too short");
    if (nthreads > EX_MAX_TID || n > RR_MAX_EVENTS || n > c.left / EVENT_MIN_BYTES)
        return jx_fail(err, errlen, "trace: %u threads, %llu events: out of range or more than "
                    "the record holds", nthreads, (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
        struct ex_event e;
        memset(&e, 0, sizeof e);
        e.addr = bget_u64(&c);
        e.page = bget_u64(&c);
        e.rip = bget_u64(&c);
        e.waker = bget_u64(&c);
        e.tid = bget_u32(&c);
        e.arg = bget_u32(&c);
        e.size = bget_u16(&c);
        e.kind = bget_u8(&c);
        e.flags = bget_u8(&c);
        get_short_str(&c, e.sym, sizeof e.sym);
        get_short_str(&c, e.insn, sizeof e.insn);
        if (c.bad) {
            ex_trace_free(t);
            return jx_fail(err, errlen, "trace: event %llu cut short or malformed",
                        (unsigned long long)i);
        }
        if (e.page != (e.addr & ~(uint64_t)0xfff) && e.page != 0) {
            ex_trace_free(t);
            return jx_fail(err, errlen, "trace: event %llu: page does not match its address",
                        (unsigned long long)i);
        }
        if (e.tid > EX_MAX_TID || e.tid == 0 || !ex_trace_append(t, &e)) {
            ex_trace_free(t);
            return jx_fail(err, errlen, "trace: event %llu: thread out of range (or no memory)",
                        (unsigned long long)i);
        }
    }
    if (nthreads < t->nthreads) {
        ex_trace_free(t);
        return jx_fail(err, errlen, "trace: an event names a thread above the trace's %u", nthreads);
    }
    t->nthreads = nthreads;
    char why[160];
    if (!ex_trace_validate(t, why, sizeof why)) {
        ex_trace_free(t);
        return jx_fail(err, errlen, "trace: %s", why);
    }
    return 0;
}

/* ---- schedule -------------------------------------------------------------------- */

int rr_schedule_encode(const struct ex_schedule *s, struct dbuf *b)
{
    char *js = ex_schedule_to_json(s);
    if (!js)
        return -1;
    size_t n = strlen(js);
    if (n > EX_MAX_INPUT) {
        free(js);
        return -1;
    }
    bput_u32(b, (uint32_t)n);
    bput(b, js, n);
    free(js);
    return b->oom ? -1 : 0;
}

int rr_schedule_parse(const uint8_t *p, size_t len, struct ex_schedule *s, char *err,
                      size_t errlen)
{
    ex_schedule_init(s);
    struct bcur c = bcur_make(p, len);
    uint32_t n = bget_u32(&c);
    const uint8_t *js = c.bad || n > EX_MAX_INPUT ? NULL : bget_ptr(&c, n);
    if (!js)
        return jx_fail(err, errlen, "schedule record malformed or cut short");
    struct ex_parse_error pe;
    memset(&pe, 0, sizeof pe);
    if (ex_schedule_parse_json((const char *)js, n, s, &pe) < 0)
        return jx_fail(err, errlen, "schedule: %s", pe.msg);
    return 0;
}

/* ---- score ----------------------------------------------------------------------- */

int rr_score_encode(const struct rr_score *s, struct dbuf *b)
{
    bput_u64(b, s->round);
    bput_u32(b, s->sim);
    bput_u32(b, s->nsim);
    bput_u32(b, s->outcome);
    bput_u32(b, s->bug);
    bput_u32(b, s->races_adjacent);
    bput_u32(b, s->avio_new);
    bput_u32(b, s->new_writers);
    bput_u32(b, s->novel_pairs);
    bput_u64(b, s->suspicion);
    bput_u64(b, s->rank);
    bput_u64(b, s->cue_limit);
    bput_u64(b, s->cues_sim);
    bput_u64(b, s->cues_live);
    bput_str(b, s->strategy, sizeof s->strategy - 1);
    bput_str(b, s->why, sizeof s->why - 1);
    return b->oom ? -1 : 0;
}

int rr_score_parse(const uint8_t *p, size_t len, struct rr_score *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    struct bcur c = bcur_make(p, len);
    s->round = bget_u64(&c);
    s->sim = bget_u32(&c);
    s->nsim = bget_u32(&c);
    s->outcome = bget_u32(&c);
    s->bug = bget_u32(&c);
    s->races_adjacent = bget_u32(&c);
    s->avio_new = bget_u32(&c);
    s->new_writers = bget_u32(&c);
    s->novel_pairs = bget_u32(&c);
    s->suspicion = bget_u64(&c);
    s->rank = bget_u64(&c);
    s->cue_limit = bget_u64(&c);
    s->cues_sim = bget_u64(&c);
    s->cues_live = bget_u64(&c);
    bget_str(&c, s->strategy, sizeof s->strategy);
    bget_str(&c, s->why, sizeof s->why);
    if (c.bad)
        return jx_fail(err, errlen, "SCORE record malformed or cut short");
    if (s->outcome > 4 || s->bug > 1 || s->sim > s->nsim || s->nsim > 4096 ||
        s->cue_limit > (1ULL << 40) || s->cues_live > (1ULL << 40) || s->cues_sim > (1ULL << 40))
        return jx_fail(err, errlen, "SCORE record has out-of-range values");
    return 0;
}

/* ---- shared variables ------------------------------------------------------------ */

int rr_vars_encode(const struct rr_var *v, size_t n, struct dbuf *b)
{
    if (n > RR_MAX_VARS)
        n = RR_MAX_VARS;
    bput_u32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        bput_u64(b, v[i].addr);
        bput_u32(b, v[i].threads);
        bput_u32(b, v[i].accesses);
        bput_u32(b, v[i].writes);
        bput_u32(b, 0);
        bput_str(b, v[i].sym, sizeof v[i].sym - 1);
    }
    return b->oom ? -1 : 0;
}

int rr_vars_parse(const uint8_t *p, size_t len, struct rr_var **out, size_t *nout, char *err,
                  size_t errlen)
{
    *out = NULL;
    *nout = 0;
    struct bcur c = bcur_make(p, len);
    uint32_t n = bget_u32(&c);
    if (c.bad || n > RR_MAX_VARS || n > c.left / 28)
        return jx_fail(err, errlen, "SHARED_VARS record malformed (count)");
    struct rr_var *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return jx_fail(err, errlen, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        v[i].addr = bget_u64(&c);
        v[i].threads = bget_u32(&c);
        v[i].accesses = bget_u32(&c);
        v[i].writes = bget_u32(&c);
        bget_u32(&c);
        bget_str(&c, v[i].sym, sizeof v[i].sym);
        if (!c.bad && (v[i].threads < 2 || v[i].threads > EX_MAX_TID ||
                       v[i].writes > v[i].accesses))
            c.bad = true;
    }
    if (c.bad) {
        free(v);
        return jx_fail(err, errlen, "SHARED_VARS record malformed or cut short");
    }
    *out = v;
    *nout = n;
    return 0;
}

int rr_shared_vars(const struct ex_trace *t, struct rr_var **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    /* Location -> index into v; v grows as new locations appear. */
    struct ex_u64map idx;
    ex_u64map_init(&idx);
    struct rr_var *v = NULL;
    struct ex_tidset *who = NULL;
    size_t n = 0, cap = 0;
    int rc = -1;
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        uint64_t *k = ex_u64map_get(&idx, e->addr);
        size_t at;
        if (k) {
            at = (size_t)*k;
        } else {
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 64;
                struct rr_var *nv = realloc(v, nc * sizeof *nv);
                struct ex_tidset *nw = nv ? realloc(who, nc * sizeof *nw) : NULL;
                if (nv)
                    v = nv;
                if (!nv || !nw)
                    goto out;
                who = nw;
                cap = nc;
            }
            at = n++;
            memset(&v[at], 0, sizeof v[at]);
            v[at].addr = e->addr;
            ex_tidset_clear(&who[at]);
            if (!ex_u64map_put(&idx, e->addr, at, NULL))
                goto out;
        }
        ex_tidset_add(&who[at], e->tid);
        v[at].accesses++;
        v[at].writes += ex_is_write(e);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        v[i].threads = ex_tidset_count(&who[i]);
        if (v[i].threads >= 2)
            v[k++] = v[i];
    }
    /* Address order (insertion sort: a fragment has few shared locations). */
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && v[j - 1].addr > v[j].addr; j--) {
            struct rr_var x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    *out = v;
    *nout = k;
    v = NULL;
    rc = 0;
out:
    free(v);
    free(who);
    ex_u64map_free(&idx);
    return rc;
}

/* ---- VM options ------------------------------------------------------------------ */

int rr_vmopts_encode(const struct rr_vmopts *o, struct dbuf *b)
{
    if (o->argc < 1 || o->argc > RR_MAX_ARGS || o->envc < 0 || o->envc > RR_MAX_ENV)
        return -1;
    bput_u64(b, o->mem);
    bput_u32(b, o->max_vcpus);
    bput_u32(b, 0);
    bput_u64(b, o->seed);
    bput_u64(b, o->thread_stack);
    bput_u32(b, (uint32_t)o->argc);
    for (int i = 0; i < o->argc; i++) {
        if (strlen(o->argv[i]) >= DUMP_MAX_STR)
            return -1;
        bput_str(b, o->argv[i], DUMP_MAX_STR - 1);
    }
    bput_u32(b, (uint32_t)o->envc);
    for (int i = 0; i < o->envc; i++) {
        if (strlen(o->envp[i]) >= DUMP_MAX_STR)
            return -1;
        bput_str(b, o->envp[i], DUMP_MAX_STR - 1);
    }
    return b->oom ? -1 : 0;
}

void rr_vmopts_free(struct rr_vmopts *o)
{
    for (int i = 0; o->argv && i < o->argc; i++)
        free(o->argv[i]);
    for (int i = 0; o->envp && i < o->envc; i++)
        free(o->envp[i]);
    free(o->argv);
    free(o->envp);
    memset(o, 0, sizeof *o);
}

static char **get_strs(struct bcur *c, int n)
{
    char **v = calloc((size_t)n + 1, sizeof *v);
    char *tmp = malloc(DUMP_MAX_STR);
    for (int i = 0; v && tmp && i < n; i++) {
        if (!bget_str(c, tmp, DUMP_MAX_STR) || !(v[i] = strdup(tmp))) {
            c->bad = true;
            break;
        }
    }
    free(tmp);
    if (!v || c->bad) {
        for (int i = 0; v && i < n; i++)
            free(v[i]);
        free(v);
        c->bad = true;
        return NULL;
    }
    return v;
}

int rr_vmopts_parse(const uint8_t *p, size_t len, struct rr_vmopts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    struct bcur c = bcur_make(p, len);
    o->mem = bget_u64(&c);
    o->max_vcpus = bget_u32(&c);
    bget_u32(&c);
    o->seed = bget_u64(&c);
    o->thread_stack = bget_u64(&c);
    uint32_t argc = bget_u32(&c);
    if (c.bad || argc < 1 || argc > RR_MAX_ARGS || argc > c.left / 4)
        return jx_fail(err, errlen, "VMOPTS record malformed (argc)");
    o->argc = (int)argc;
    o->argv = get_strs(&c, o->argc);
    if (!o->argv) {
        o->argc = 0;
        return jx_fail(err, errlen, "VMOPTS record malformed (argv)");
    }
    uint32_t envc = bget_u32(&c);
    if (c.bad || envc > RR_MAX_ENV || envc > c.left / 4) {
        rr_vmopts_free(o);
        return jx_fail(err, errlen, "VMOPTS record malformed (envc)");
    }
    o->envc = (int)envc;
    o->envp = get_strs(&c, o->envc);
    if (!o->envp) {
        o->envc = 0;
        rr_vmopts_free(o);
        return jx_fail(err, errlen, "VMOPTS record malformed (environment)");
    }
    for (int i = 0; i < o->envc; i++)
        if (!strchr(o->envp[i], '=')) {
            rr_vmopts_free(o);
            return jx_fail(err, errlen, "VMOPTS: environment entry without '='");
        }
    if (o->mem < (16ULL << 20) || o->mem > MAX_GUEST_MEM || o->mem % (2ULL << 20) ||
        o->max_vcpus < 1 || o->max_vcpus > MAX_VCPUS || o->thread_stack < (16 << 10) ||
        o->thread_stack > (8 << 20)) {
        rr_vmopts_free(o);
        return jx_fail(err, errlen, "VMOPTS record has out-of-range values");
    }
    return 0;
}

/* ---- all of them ----------------------------------------------------------------- */

void dump_round_free(struct dump_round *r)
{
    snapimg_free(&r->snap);
    ex_schedule_free(&r->sched);
    ex_trace_free(&r->recorded);
    ex_trace_free(&r->retired);
    free(r->vars);
    rr_vmopts_free(&r->opts);
    memset(r, 0, sizeof *r);
}

int dump_round_parse(const struct dumpfile *d, struct dump_round *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    ex_schedule_init(&r->sched);
    ex_trace_init(&r->recorded);
    ex_trace_init(&r->retired);
    const struct dump_record *rec[DREC_VMOPTS + 1] = {0};
    int found = 0;
    for (size_t i = 0; i < d->nextra; i++) {
        uint32_t t = d->extra[i].type;
        if (t < DREC_SNAPSHOT || t > DREC_VMOPTS)
            continue;
        if (rec[t])
            return jx_fail(err, errlen, "two round records of type %u", t);
        rec[t] = &d->extra[i];
        found++;
    }
    if (!found)
        return 0;
    for (uint32_t t = DREC_SNAPSHOT; t <= DREC_VMOPTS; t++)
        if (!rec[t])
            return jx_fail(err, errlen, "incomplete round records: type %u is missing", t);
    char e[300];
    int rc = -1;
#define REC(t) rec[t]->data, (size_t)rec[t]->len
    if (snapfile_parse(REC(DREC_SNAPSHOT), &r->snap, e, sizeof e) < 0 ||
        rr_schedule_parse(REC(DREC_SCHEDULE), &r->sched, e, sizeof e) < 0 ||
        rr_trace_parse(REC(DREC_TRACE_RECORDED), &r->recorded, e, sizeof e) < 0 ||
        rr_trace_parse(REC(DREC_TRACE_RETIRED), &r->retired, e, sizeof e) < 0 ||
        rr_score_parse(REC(DREC_SCORE), &r->score, e, sizeof e) < 0 ||
        rr_vars_parse(REC(DREC_SHARED_VARS), &r->vars, &r->nvars, e, sizeof e) < 0 ||
        rr_vmopts_parse(REC(DREC_VMOPTS), &r->opts, e, sizeof e) < 0)
        jx_fail(err, errlen, "%s", e);
    else if (r->opts.mem != r->snap.mem)
        jx_fail(err, errlen, "VMOPTS memory size differs from the SNAPSHOT's");
    else if (r->snap.nvcpus > r->opts.max_vcpus)
        jx_fail(err, errlen, "SNAPSHOT has more vCPUs than VMOPTS allows");
    else if (r->retired.n > r->score.cues_live || r->score.cues_live > r->score.cue_limit + 1)
        jx_fail(err, errlen, "SCORE cue counts disagree with the retired trace");
    else
        rc = 0;
#undef REC
    if (rc < 0) {
        dump_round_free(r);
        return -1;
    }
    r->present = true;
    return 0;
}
