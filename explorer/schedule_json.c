/* The JSON schedule format: a reader for exactly what we need, on the tree's one JSON
 * lexer (lib/json.h: untrusted input, bounded nesting, every byte checked), and a
 * printer. */
#include "schedule.h"
#include "lib/json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEDULE_MAX_DEPTH 64 /* nesting of the values a schedule reader skips */


/* Consumes c after white space, or fails with "expected 'c'". */
static int expect(struct json_lex *p, char c)
{
    char what[4] = {'\'', c, '\'', 0};
    return json_lex_expect(p, c, what);
}

/* Where an array element starts (after white space): a bad element's error points there. */
struct elem_at {
    size_t pos, line_start;
    int line;
};

static struct elem_at elem_start(struct json_lex *p)
{
    json_lex_ws(p);
    return (struct elem_at){.pos = p->pos, .line_start = p->line_start, .line = p->line};
}

static void back_to(struct json_lex *p, const struct elem_at *m)
{
    p->pos = m->pos, p->line = m->line, p->line_start = m->line_start;
}

/* "[" elem ("," elem)* "]" or "[]": elem(p, ctx, depth) reads one element; 0 or -1. */
static int jarray(struct json_lex *p, int (*elem)(struct json_lex *, void *, int), void *ctx,
                  int depth)
{
    if (expect(p, '[') != 0)
        return -1;
    if (json_lex_at(p, ']')) {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (elem(p, ctx, depth) != 0)
            return -1;
        if (!json_lex_at(p, ','))
            return expect(p, ']');
        p->pos++;
    }
}

/* A non-negative integer field in [min, max]. */
static int ju64(struct json_lex *p, uint64_t min, uint64_t max, const char *what, uint64_t *out)
{
    json_lex_ws(p);
    if (p->pos >= p->len)
        return json_lex_fail(p, "unexpected end of input, expected %s", what);
    if (p->s[p->pos] == '-')
        return json_lex_fail(p, "%s must not be negative", what);
    if (p->s[p->pos] < '0' || p->s[p->pos] > '9')
        return json_lex_fail(p, "%s must be a number", what);
    if (p->s[p->pos] == '0' && p->pos + 1 < p->len && p->s[p->pos + 1] >= '0' &&
        p->s[p->pos + 1] <= '9')
        return json_lex_fail(p, "leading zeros are not allowed");
    uint64_t v = 0;
    bool big = false;
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        uint64_t d = (uint64_t)(p->s[p->pos] - '0');
        if (big || v > (max - d) / 10)
            big = true; /* past max: no overflow, whatever the digits */
        else
            v = v * 10 + d;
        p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == '.' || p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
        return json_lex_fail(p, "%s must be an integer", what);
    if (big) {
        p->pos = start;
        return json_lex_fail(p, "%s too large (maximum %llu)", what, (unsigned long long)max);
    }
    if (v < min) {
        p->pos = start;
        return json_lex_fail(p, "%s must be at least %llu", what, (unsigned long long)min);
    }
    *out = v;
    return 0;
}

static int juint(struct json_lex *p, uint32_t min, uint32_t max, const char *what, uint32_t *out)
{
    uint64_t v;
    if (ju64(p, min, max, what, &v) != 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Iterates the members of an object: calls member(p, key, ctx) positioned at
 * the value. Keys longer than 31 bytes cannot be ours and are skipped. */
typedef int (*member_fn)(struct json_lex *p, const char *key, void *ctx, int depth);

static int jobject(struct json_lex *p, member_fn member, void *ctx, int depth)
{
    if (depth > SCHEDULE_MAX_DEPTH)
        return json_lex_fail(p, "nesting deeper than %d", SCHEDULE_MAX_DEPTH);
    if (expect(p, '{') != 0)
        return -1;
    if (json_lex_at(p, '}')) {
        p->pos++;
        return 0;
    }
    for (;;) {
        char key[32];
        json_lex_ws(p);
        if (json_lex_string(p, key, sizeof key, "a key") != 0 || expect(p, ':') != 0)
            return -1;
        if (member(p, key, ctx, depth) != 0)
            return -1;
        if (json_lex_at(p, ',')) {
            p->pos++;
            continue;
        }
        return expect(p, '}');
    }
}

/* A key met for the first time: marks it seen. A repeated one is refused (a schedule
 * file is read back exactly as written, so a repeat means an edited or forged file). */
static int first_time(struct json_lex *p, bool *seen, const char *key)
{
    if (*seen)
        return json_lex_fail(p, "duplicate key \"%s\"", key);
    *seen = true;
    return 0;
}

struct seg_ctx {
    uint32_t thread, steps;
    bool have_thread, have_steps;
};

static int seg_member(struct json_lex *p, const char *key, void *vctx, int depth)
{
    struct seg_ctx *c = vctx;
    if (strcmp(key, "thread") == 0) {
        if (first_time(p, &c->have_thread, "thread") != 0)
            return -1;
        return juint(p, 1, EX_SCHED_MAX_TID, "thread", &c->thread);
    }
    if (strcmp(key, "steps") == 0) {
        if (first_time(p, &c->have_steps, "steps") != 0)
            return -1;
        return juint(p, 1, EX_MAX_STEPS, "steps", &c->steps);
    }
    return json_lex_skip_value(p, depth + 1);
}

struct top_ctx {
    struct ex_schedule *s;
    bool have_version, have_segments, have_default, have_quantum, have_note, have_shared;
    bool have_sparse, have_preempt, have_yield, have_timers;
};

struct preempt_ctx {
    uint32_t thread, count, chain;
    uint64_t rip;
    bool have_thread, have_count, have_rip, have_chain;
};

static int preempt_member(struct json_lex *p, const char *key, void *vctx, int depth)
{
    struct preempt_ctx *c = vctx;
    if (strcmp(key, "thread") == 0) {
        if (first_time(p, &c->have_thread, "thread") != 0)
            return -1;
        return juint(p, 0, EX_SCHED_MAX_TID, "thread", &c->thread); /* 0: any thread */
    }
    if (strcmp(key, "count") == 0) {
        if (first_time(p, &c->have_count, "count") != 0)
            return -1;
        return juint(p, 1, EX_MAX_STEPS, "count", &c->count);
    }
    if (strcmp(key, "rip") == 0) {
        if (first_time(p, &c->have_rip, "rip") != 0)
            return -1;
        return ju64(p, 1, EX_MAX_PREEMPT_RIP, "rip", &c->rip);
    }
    if (strcmp(key, "after") == 0) {
        if (first_time(p, &c->have_chain, "after") != 0)
            return -1;
        return juint(p, 1, EX_MAX_PREEMPTS, "after", &c->chain);
    }
    return json_lex_skip_value(p, depth + 1);
}

/* "preempt": [{"thread":T,"rip":R,"count":N}, ...] */
static int preempt_elem(struct json_lex *p, void *vs, int depth)
{
    struct ex_schedule *s = vs;
    struct preempt_ctx pc = {0};
    struct elem_at at = elem_start(p);
    if (jobject(p, preempt_member, &pc, depth + 1) != 0)
        return -1;
    if (!pc.have_thread || !pc.have_count || !pc.have_rip) {
        back_to(p, &at);
        return json_lex_fail(p, "a preemption point needs \"thread\", \"rip\" and \"count\"");
    }
    if (ex_schedule_add_preempt(s, pc.thread, pc.rip, pc.count) != 0) {
        back_to(p, &at);
        return json_lex_fail(p, "more than %u preemption points, or two for one thread "
                             "and rip", EX_MAX_PREEMPTS);
    }
    if (pc.have_chain && ex_schedule_chain_preempt(s, s->npreempt - 1, pc.chain) != 0) {
        back_to(p, &at);
        return json_lex_fail(p, "\"after\":%u: a point is chained to an earlier one (%u "
                             "before it here)", pc.chain, s->npreempt - 1);
    }
    return 0;
}

/* "yield": [rip, ...], strictly ascending */
static int yield_elem(struct json_lex *p, void *vs, int depth)
{
    (void)depth;
    struct ex_schedule *s = vs;
    uint64_t rip;
    struct elem_at at = elem_start(p);
    if (ju64(p, 1, EX_MAX_PREEMPT_RIP, "a yield rip", &rip) != 0)
        return -1;
    if ((s->nyield && rip <= s->yield[s->nyield - 1]) || ex_schedule_add_yield(s, rip) != 0) {
        back_to(p, &at);
        return json_lex_fail(p, "yield rips must be strictly ascending, at most %u",
                             EX_MAX_YIELDS);
    }
    return 0;
}

struct timer_ctx {
    struct ex_timer_end t;
    bool have_step, have_thread, have_call, have_ns, have_by, have_rip, have_sym;
};

static int timer_member(struct json_lex *p, const char *key, void *vctx, int depth)
{
    struct timer_ctx *c = vctx;
    uint32_t v;
    if (strcmp(key, "step") == 0)
        return first_time(p, &c->have_step, "step") || ju64(p, 0, EX_MAX_TIMER_NS, "step", &c->t.step);
    if (strcmp(key, "thread") == 0) {
        if (first_time(p, &c->have_thread, "thread") || juint(p, 1, EX_SCHED_MAX_TID, "thread", &v))
            return -1;
        c->t.thread = v;
        return 0;
    }
    if (strcmp(key, "by") == 0) {
        if (first_time(p, &c->have_by, "by") || juint(p, 0, EX_SCHED_MAX_TID, "by", &v))
            return -1;
        c->t.by = v;
        return 0;
    }
    if (strcmp(key, "ns") == 0)
        return first_time(p, &c->have_ns, "ns") || ju64(p, 0, EX_MAX_TIMER_NS, "ns", &c->t.ns);
    if (strcmp(key, "rip") == 0)
        return first_time(p, &c->have_rip, "rip") || ju64(p, 0, EX_MAX_PREEMPT_RIP, "rip", &c->t.rip);
    if (strcmp(key, "call") == 0) {
        if (first_time(p, &c->have_call, "call"))
            return -1;
        json_lex_ws(p);
        return json_lex_string(p, c->t.call, sizeof c->t.call, "call");
    }
    if (strcmp(key, "sym") == 0) {
        if (first_time(p, &c->have_sym, "sym"))
            return -1;
        json_lex_ws(p);
        return json_lex_string(p, c->t.sym, sizeof c->t.sym, "sym");
    }
    return json_lex_skip_value(p, depth + 1);
}

/* "timers": [{"step":S,"thread":T,...}, ...], steps strictly ascending (schedule.h). */
static int timer_elem(struct json_lex *p, void *vs, int depth)
{
    struct ex_schedule *s = vs;
    struct timer_ctx tc;
    memset(&tc, 0, sizeof tc);
    struct elem_at at = elem_start(p);
    if (jobject(p, timer_member, &tc, depth + 1) != 0)
        return -1;
    if (!tc.have_step || !tc.have_thread) {
        back_to(p, &at);
        return json_lex_fail(p, "a timer ending needs \"step\" and \"thread\"");
    }
    if (ex_schedule_add_timer(s, &tc.t) != 0) {
        back_to(p, &at);
        return json_lex_fail(p, "more than %u timer endings, a step not after the last "
                             "one's, a \"call\" not a syscall name or a \"sym\" not "
                             "printable", EX_MAX_TIMERS);
    }
    return 0;
}

/* true or false */
static int jbool(struct json_lex *p, const char *what, bool *out)
{
    json_lex_ws(p);
    size_t rest = p->len - p->pos;
    if (rest >= 4 && memcmp(p->s + p->pos, "true", 4) == 0) {
        p->pos += 4;
        *out = true;
        return 0;
    }
    if (rest >= 5 && memcmp(p->s + p->pos, "false", 5) == 0) {
        p->pos += 5;
        *out = false;
        return 0;
    }
    return json_lex_fail(p, "%s must be true or false", what);
}

/* "shared_pages": [page, ...], page-aligned and strictly ascending (as printed). */
struct pages_ctx {
    uint64_t *v;
    size_t n, cap;
};

static int page_elem(struct json_lex *p, void *vc, int depth)
{
    (void)depth;
    struct pages_ctx *c = vc;
    uint64_t page;
    struct elem_at at = elem_start(p);
    if (ju64(p, 0, UINT64_MAX, "a shared page", &page) != 0)
        return -1;
    if (page % EX_SCHED_PAGE || (c->n && page <= c->v[c->n - 1])) {
        back_to(p, &at);
        return json_lex_fail(p, "shared pages must be page-aligned and strictly ascending");
    }
    if (c->n == EX_MAX_SHARED_PAGES) {
        back_to(p, &at);
        return json_lex_fail(p, "more than %u shared pages", EX_MAX_SHARED_PAGES);
    }
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 16;
        uint64_t *nv = realloc(c->v, ncap * sizeof *nv);
        if (!nv)
            return json_lex_fail(p, "out of memory reading shared pages");
        c->v = nv, c->cap = ncap;
    }
    c->v[c->n++] = page;
    return 0;
}

static int shared_pages(struct json_lex *p, struct ex_schedule *s)
{
    struct pages_ctx c = {0};
    if (jarray(p, page_elem, &c, 0) != 0) {
        free(c.v);
        return -1;
    }
    free(s->shared);
    s->shared = c.v;
    s->nshared = c.n;
    return 0;
}

/* "segments": [{"thread":T,"steps":N}, ...] */
static int segment_elem(struct json_lex *p, void *vs, int depth)
{
    struct ex_schedule *s = vs;
    struct seg_ctx sc = {0};
    struct elem_at at = elem_start(p);
    if (jobject(p, seg_member, &sc, depth + 1) != 0)
        return -1;
    if (!sc.have_thread || !sc.have_steps) {
        back_to(p, &at);
        return json_lex_fail(p, "segment needs \"thread\" and \"steps\"");
    }
    if (ex_schedule_push(s, sc.thread, sc.steps) != 0) {
        back_to(p, &at);
        return json_lex_fail(p, "too many segments (maximum %u) or out of memory",
                             EX_MAX_SEGMENTS);
    }
    return 0;
}

static int top_member(struct json_lex *p, const char *key, void *vctx, int depth)
{
    struct top_ctx *c = vctx;
    struct ex_schedule *s = c->s;
    if (strcmp(key, "version") == 0) {
        uint32_t v;
        if (first_time(p, &c->have_version, "version") != 0)
            return -1;
        json_lex_ws(p);
        size_t at_v = p->pos;
        if (juint(p, 0, 1000000, "version", &v) != 0)
            return -1;
        if (v != 1) {
            p->pos = at_v;
            return json_lex_fail(p, "unsupported version %u (this reader knows version 1)", v);
        }
        return 0;
    }
    if (strcmp(key, "default") == 0) {
        char pol[16];
        if (first_time(p, &c->have_default, "default") != 0)
            return -1;
        json_lex_ws(p);
        size_t at_v = p->pos;
        if (json_lex_string(p, pol, sizeof pol, "default") != 0)
            return -1;
        if (strcmp(pol, "continue") == 0)
            s->policy = EX_DEFAULT_CONTINUE;
        else if (strcmp(pol, "roundrobin") == 0)
            s->policy = EX_DEFAULT_ROUNDROBIN;
        else {
            p->pos = at_v;
            return json_lex_fail(p, "unknown default policy (expected \"continue\" or \"roundrobin\")");
        }
        return 0;
    }
    if (strcmp(key, "quantum") == 0) {
        if (first_time(p, &c->have_quantum, "quantum") != 0)
            return -1;
        return juint(p, 1, EX_MAX_STEPS, "quantum", &s->quantum);
    }
    if (strcmp(key, "note") == 0) {
        if (first_time(p, &c->have_note, "note") != 0)
            return -1;
        return json_lex_string(p, s->note, sizeof s->note, "note");
    }
    if (strcmp(key, "shared_pages") == 0) {
        if (first_time(p, &c->have_shared, "shared_pages") != 0)
            return -1;
        return shared_pages(p, s);
    }
    if (strcmp(key, "sparse") == 0) {
        if (first_time(p, &c->have_sparse, "sparse") != 0)
            return -1;
        return jbool(p, "sparse", &s->sparse);
    }
    if (strcmp(key, "preempt") == 0) {
        if (first_time(p, &c->have_preempt, "preempt") != 0)
            return -1;
        return jarray(p, preempt_elem, s, depth);
    }
    if (strcmp(key, "yield") == 0) {
        if (first_time(p, &c->have_yield, "yield") != 0)
            return -1;
        return jarray(p, yield_elem, s, depth);
    }
    if (strcmp(key, "timers") == 0) {
        if (first_time(p, &c->have_timers, "timers") != 0)
            return -1;
        return jarray(p, timer_elem, s, depth);
    }
    if (strcmp(key, "segments") == 0) {
        if (first_time(p, &c->have_segments, "segments") != 0)
            return -1;
        return jarray(p, segment_elem, s, depth);
    }
    return json_lex_skip_value(p, depth + 1);
}

/* The lexer's first error into err: "line L, column C: ...". */
static void report(const struct json_lex *p, struct ex_parse_error *err)
{
    if (p->failed)
        ex_parse_error_set(err, p->fail_line, p->fail_col, "%s", p->msg);
}

int ex_schedule_parse_json(const char *buf, size_t len, struct ex_schedule *s,
                           struct ex_parse_error *err)
{
    struct json_lex p;
    json_lex_init(&p, buf, len);
    p.truncate = true; /* a long note keeps its first characters; long keys are not ours */
    p.max_depth = SCHEDULE_MAX_DEPTH;
    struct top_ctx c = { .s = s };
    ex_schedule_init(s);
    if (len > EX_MAX_INPUT) {
        json_lex_fail(&p, "input larger than %u bytes", EX_MAX_INPUT);
        report(&p, err);
        return -1;
    }
    if (jobject(&p, top_member, &c, 0) != 0)
        goto fail;
    json_lex_ws(&p);
    if (p.pos != p.len) {
        json_lex_fail(&p, "unexpected text after the schedule object");
        goto fail;
    }
    if (!c.have_version) {
        json_lex_fail(&p, "missing \"version\"");
        goto fail;
    }
    if (!c.have_segments) {
        json_lex_fail(&p, "missing \"segments\"");
        goto fail;
    }
    if ((s->npreempt || s->nyield) && !s->sparse) {
        json_lex_fail(&p, "\"preempt\" and \"yield\" points need \"sparse\": true");
        goto fail;
    }
    return 0;
fail:
    report(&p, err);
    ex_schedule_free(s);
    return -1;
}

/* ---- output ---- */

static size_t json_escape(char *out, const char *in)
{
    size_t n = 0;
    for (; *in; in++) {
        unsigned char c = (unsigned char)*in;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)sprintf(out + n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = 0;
    return n;
}

char *ex_schedule_to_json(const struct ex_schedule *s)
{
    /* Every piece has a known maximum length, so size the buffer up front. */
    char note[EX_NOTE_LEN * 6 + 1], clean[EX_NOTE_LEN];
    size_t i;
    for (i = 0; i + 1 < sizeof clean && s->note[i]; i++)
        clean[i] = s->note[i];
    clean[i] = 0;
    /* A note set by printf may hold invalid UTF-8; keep the output valid JSON. */
    for (size_t k = 0; clean[k];) {
        size_t l = json_utf8_len((const unsigned char *)clean + k, strlen(clean + k));
        if (l == 0)
            clean[k++] = '?';
        else
            k += l;
    }
    json_escape(note, clean);
    size_t cap = 200 + strlen(note) + s->nseg * 48 + s->nshared * 22 + s->npreempt * 80 + s->nyield * 24 +
                 s->ntimers * (150 + EX_TIMER_CALL_LEN + EX_TIMER_SYM_LEN);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t n = (size_t)snprintf(out, cap,
                                "{\"version\":1,\"default\":\"%s\",\"quantum\":%u,\"note\":\"%s\",\n ",
                                s->policy == EX_DEFAULT_ROUNDROBIN ? "roundrobin" : "continue",
                                s->quantum, note);
    if (s->nshared) {
        n += (size_t)snprintf(out + n, cap - n, "\"shared_pages\":[");
        for (size_t k = 0; k < s->nshared; k++)
            n += (size_t)snprintf(out + n, cap - n, "%s%llu", k ? "," : "",
                                  (unsigned long long)s->shared[k]);
        n += (size_t)snprintf(out + n, cap - n, "],\n ");
    }
    if (s->sparse) {
        n += (size_t)snprintf(out + n, cap - n, "\"sparse\":true,\"preempt\":[");
        for (uint32_t k = 0; k < s->npreempt; k++) {
            n += (size_t)snprintf(out + n, cap - n, "%s{\"thread\":%u,\"rip\":%llu,\"count\":%u",
                                  k ? "," : "", s->preempt[k].thread,
                                  (unsigned long long)s->preempt[k].rip, s->preempt[k].count);
            if (s->preempt[k].chain)
                n += (size_t)snprintf(out + n, cap - n, ",\"after\":%u", s->preempt[k].chain);
            n += (size_t)snprintf(out + n, cap - n, "}");
        }
        n += (size_t)snprintf(out + n, cap - n, "],\"yield\":[");
        for (uint32_t k = 0; k < s->nyield; k++)
            n += (size_t)snprintf(out + n, cap - n, "%s%llu", k ? "," : "",
                                  (unsigned long long)s->yield[k]);
        n += (size_t)snprintf(out + n, cap - n, "],\n ");
    }
    if (s->ntimers) {
        n += (size_t)snprintf(out + n, cap - n, "\"timers\":[");
        for (uint32_t k = 0; k < s->ntimers; k++) {
            const struct ex_timer_end *t = &s->timer[k];
            /* call and sym have nothing to escape (ex_schedule_add_timer checked them) */
            n += (size_t)snprintf(out + n, cap - n, "%s{\"step\":%llu,\"thread\":%u,\"call\":"
                                  "\"%.*s\",\"ns\":%llu,\"by\":%u,\"rip\":%llu,\"sym\":\"%.*s\"}",
                                  k ? "," : "", (unsigned long long)t->step, t->thread,
                                  (int)strnlen(t->call, EX_TIMER_CALL_LEN - 1), t->call,
                                  (unsigned long long)t->ns, t->by, (unsigned long long)t->rip,
                                  (int)strnlen(t->sym, EX_TIMER_SYM_LEN - 1), t->sym);
        }
        n += (size_t)snprintf(out + n, cap - n, "],\n ");
    }
    n += (size_t)snprintf(out + n, cap - n, "\"segments\":[");
    for (size_t k = 0; k < s->nseg; k++)
        n += (size_t)snprintf(out + n, cap - n, "%s\n  {\"thread\":%u,\"steps\":%u}",
                              k ? "," : "", s->seg[k].thread, s->seg[k].steps);
    snprintf(out + n, cap - n, "%s]}\n", s->nseg ? "\n " : "");
    return out;
}

int ex_schedule_write_json(FILE *f, const struct ex_schedule *s)
{
    char *t = ex_schedule_to_json(s);
    if (!t)
        return -1;
    int rc = fputs(t, f) < 0 ? -1 : 0;
    free(t);
    return rc;
}
