/* The schedule type and its text format (the JSON format is in schedule_json.c). */
#include "schedule.h"
#include "u64map.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ex_schedule_init(struct ex_schedule *s)
{
    memset(s, 0, sizeof *s);
    s->policy = EX_DEFAULT_CONTINUE;
    s->quantum = 1;
}

void ex_schedule_free(struct ex_schedule *s)
{
    free(s->seg);
    free(s->shared);
    ex_schedule_init(s);
}

void ex_schedule_reset(struct ex_schedule *s)
{
    s->nseg = 0;
    s->policy = EX_DEFAULT_CONTINUE;
    s->quantum = 1;
    s->note[0] = 0;
    s->nshared = 0;
    s->sparse = false;
    s->npreempt = 0;
    s->nyield = 0;
    s->ntimers = 0;
}

int ex_schedule_copy(struct ex_schedule *dst, const struct ex_schedule *src)
{
    ex_schedule_init(dst);
    if (src->nseg) {
        dst->seg = malloc(src->nseg * sizeof *dst->seg);
        if (!dst->seg)
            return -1;
        memcpy(dst->seg, src->seg, src->nseg * sizeof *dst->seg);
    }
    dst->nseg = dst->cap = src->nseg;
    dst->policy = src->policy;
    dst->quantum = src->quantum;
    memcpy(dst->note, src->note, sizeof dst->note);
    dst->sparse = src->sparse;
    dst->npreempt = src->npreempt;
    memcpy(dst->preempt, src->preempt, sizeof dst->preempt);
    dst->nyield = src->nyield;
    memcpy(dst->yield, src->yield, sizeof dst->yield);
    dst->ntimers = src->ntimers;
    memcpy(dst->timer, src->timer, sizeof dst->timer);
    if (src->nshared && ex_schedule_set_shared(dst, src->shared, src->nshared) != 0) {
        ex_schedule_free(dst);
        return -1;
    }
    return 0;
}

int ex_schedule_set_shared(struct ex_schedule *s, const uint64_t *pages, size_t n)
{
    uint64_t *v = NULL;
    size_t m = 0;
    if (n) {
        v = n <= SIZE_MAX / sizeof *v ? malloc(n * sizeof *v) : NULL;
        if (!v)
            return -1;
        for (size_t i = 0; i < n; i++)
            v[i] = pages[i] & ~(uint64_t)(EX_SCHED_PAGE - 1);
        qsort(v, n, sizeof *v, ex_u64_cmp);
        for (size_t i = 0; i < n; i++)
            if (m == 0 || v[m - 1] != v[i])
                v[m++] = v[i];
        if (m > EX_MAX_SHARED_PAGES) {
            free(v);
            return -1;
        }
    }
    free(s->shared);
    s->shared = v;
    s->nshared = m;
    return 0;
}

int ex_schedule_push(struct ex_schedule *s, uint32_t thread, uint32_t steps)
{
    if (thread == 0 || thread > EX_SCHED_MAX_TID || steps == 0 || steps > EX_MAX_STEPS)
        return -1;
    if (s->nseg && s->seg[s->nseg - 1].thread == thread &&
        s->seg[s->nseg - 1].steps <= EX_MAX_STEPS - steps) {
        s->seg[s->nseg - 1].steps += steps;
        return 0;
    }
    if (s->nseg >= EX_MAX_SEGMENTS)
        return -1;
    if (s->nseg == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 16;
        struct ex_segment *nv = realloc(s->seg, ncap * sizeof *nv);
        if (!nv)
            return -1;
        s->seg = nv;
        s->cap = ncap;
    }
    s->seg[s->nseg++] = (struct ex_segment){ thread, steps };
    return 0;
}

int ex_schedule_add_preempt(struct ex_schedule *s, uint32_t thread, uint64_t rip, uint32_t count)
{
    if (thread > EX_SCHED_MAX_TID || count == 0 || count > EX_MAX_STEPS ||
        rip == 0 || rip > EX_MAX_PREEMPT_RIP || s->npreempt >= EX_MAX_PREEMPTS)
        return -1;
    for (uint32_t i = 0; i < s->npreempt; i++)
        if (s->preempt[i].thread == thread && s->preempt[i].rip == rip)
            return -1;
    s->preempt[s->npreempt++] = (struct ex_preempt){.thread = thread, .count = count, .rip = rip};
    return 0;
}

int ex_schedule_add_match(struct ex_schedule *s, uint32_t thread, uint64_t rip, uint64_t match,
                          uint64_t after)
{
    if (thread == 0 || match == 0 || ex_schedule_add_preempt(s, thread, rip, EX_MAX_STEPS) < 0)
        return -1;
    s->preempt[s->npreempt - 1].match = match;
    s->preempt[s->npreempt - 1].match_after = after;
    return 0;
}

int ex_schedule_chain_preempt(struct ex_schedule *s, uint32_t i, uint32_t k)
{
    if (i >= s->npreempt || k == 0 || k > i || s->preempt[i].match || s->preempt[k - 1].match)
        return -1;
    s->preempt[i].chain = k;
    return 0;
}

int ex_schedule_add_yield(struct ex_schedule *s, uint64_t rip)
{
    if (rip == 0 || rip > EX_MAX_PREEMPT_RIP || s->nyield >= EX_MAX_YIELDS)
        return -1;
    uint32_t at = 0;
    while (at < s->nyield && s->yield[at] < rip)
        at++;
    if (at < s->nyield && s->yield[at] == rip)
        return -1;
    memmove(&s->yield[at + 1], &s->yield[at], (s->nyield - at) * sizeof s->yield[0]);
    s->yield[at] = rip;
    s->nyield++;
    return 0;
}

static bool timer_call_ok(const char *c)
{
    size_t n = strnlen(c, EX_TIMER_CALL_LEN);
    if (n == EX_TIMER_CALL_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((c[i] >= 'a' && c[i] <= 'z') || (c[i] >= '0' && c[i] <= '9') || c[i] == '_'))
            return false;
    return true;
}

static bool timer_sym_ok(const char *c)
{
    size_t n = strnlen(c, EX_TIMER_SYM_LEN);
    if (n == EX_TIMER_SYM_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (c[i] < 0x20 || c[i] > 0x7e || c[i] == '"' || c[i] == '\\')
            return false;
    return true;
}

int ex_schedule_add_timer(struct ex_schedule *s, const struct ex_timer_end *t)
{
    if (t->thread == 0 || t->thread > EX_SCHED_MAX_TID || t->by > EX_SCHED_MAX_TID ||
        t->ns > EX_MAX_TIMER_NS || t->rip > EX_MAX_PREEMPT_RIP || t->step > EX_MAX_TIMER_NS ||
        !timer_call_ok(t->call) || !timer_sym_ok(t->sym) || s->ntimers >= EX_MAX_TIMERS ||
        (s->ntimers && t->step <= s->timer[s->ntimers - 1].step))
        return -1;
    s->timer[s->ntimers++] = *t;
    return 0;
}

uint32_t ex_schedule_timer_from(const struct ex_schedule *s, uint64_t step)
{
    uint32_t i = 0;
    while (i < s->ntimers && s->timer[i].step < step)
        i++;
    return i;
}

int ex_schedule_from_choices(struct ex_schedule *s, const uint32_t *tids, size_t n)
{
    ex_schedule_reset(s);
    for (size_t i = 0; i < n; i++)
        if (ex_schedule_push(s, tids[i], 1) != 0)
            return -1;
    return 0;
}

uint64_t ex_schedule_length(const struct ex_schedule *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->nseg; i++)
        n += s->seg[i].steps;
    return n;
}

uint32_t ex_schedule_thread_at(const struct ex_schedule *s, uint64_t i)
{
    for (size_t k = 0; k < s->nseg; k++) {
        if (i < s->seg[k].steps)
            return s->seg[k].thread;
        i -= s->seg[k].steps;
    }
    return 0;
}

bool ex_schedule_equal(const struct ex_schedule *a, const struct ex_schedule *b)
{
    if (a->nseg != b->nseg || a->policy != b->policy)
        return false;
    if (a->policy == EX_DEFAULT_ROUNDROBIN && a->quantum != b->quantum)
        return false;
    if (a->sparse != b->sparse || a->npreempt != b->npreempt ||
        (a->npreempt && memcmp(a->preempt, b->preempt, a->npreempt * sizeof *a->preempt) != 0))
        return false;
    if (a->nyield != b->nyield ||
        (a->nyield && memcmp(a->yield, b->yield, a->nyield * sizeof *a->yield) != 0))
        return false;
    if (a->ntimers != b->ntimers)
        return false;
    for (uint32_t i = 0; i < a->ntimers; i++)
        if (a->timer[i].step != b->timer[i].step || a->timer[i].thread != b->timer[i].thread)
            return false;
    return a->nseg == 0 || memcmp(a->seg, b->seg, a->nseg * sizeof *a->seg) == 0;
}

uint64_t ex_schedule_hash(const struct ex_schedule *s)
{
    uint64_t h = ex_hash2(s->policy, s->policy == EX_DEFAULT_ROUNDROBIN ? s->quantum : 0);
    for (size_t i = 0; i < s->nseg; i++)
        h = ex_hash2(h, ((uint64_t)s->seg[i].thread << 32) | s->seg[i].steps);
    if (s->sparse) {
        h = ex_hash2(h, 0x5ea75e);
        for (uint32_t i = 0; i < s->npreempt; i++)
            h = ex_hash2(ex_hash2(h, s->preempt[i].rip ^ ((uint64_t)s->preempt[i].chain << 56)),
                         ((uint64_t)s->preempt[i].thread << 32) | s->preempt[i].count);
        for (uint32_t i = 0; i < s->nyield; i++)
            h = ex_hash2(h, s->yield[i] ^ 0x7969656c64ULL);
    }
    for (uint32_t i = 0; i < s->ntimers; i++) /* none: the hash of before */
        h = ex_hash2(ex_hash2(h, s->timer[i].step ^ 0x74696d6572ULL), s->timer[i].thread);
    return h;
}

void ex_schedule_set_note(struct ex_schedule *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->note, sizeof s->note, fmt, ap);
    va_end(ap);
}

/* ---- text output ---- */

struct strbuf {
    char *p;
    size_t n, cap;
    bool oom;
};

static void sb_add(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct strbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = true;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t ncap = b->cap ? b->cap * 2 : 256;
        while (ncap <= b->n + (size_t)k)
            ncap *= 2;
        char *np = realloc(b->p, ncap);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

static char *sb_finish(struct strbuf *b)
{
    if (b->oom || !b->p) {
        free(b->p);
        return NULL;
    }
    return b->p;
}

char *ex_schedule_to_text(const struct ex_schedule *s)
{
    struct strbuf b = { 0 };
    if (s->note[0]) {
        char note[EX_NOTE_LEN];
        size_t i;
        /* A note is a comment: keep it on one line whatever it contains. */
        for (i = 0; i + 1 < sizeof note && s->note[i]; i++)
            note[i] = (unsigned char)s->note[i] < 0x20 ? ' ' : s->note[i];
        note[i] = 0;
        sb_add(&b, "# %s\n", note);
    }
    if (s->sparse)
        sb_add(&b, "sparse\n");
    for (uint32_t i = 0; s->sparse && i < s->npreempt; i++) {
        sb_add(&b, "preempt T%u 0x%llx x%u", s->preempt[i].thread,
               (unsigned long long)s->preempt[i].rip, s->preempt[i].count);
        if (s->preempt[i].chain)
            sb_add(&b, " after %u", s->preempt[i].chain);
        sb_add(&b, "\n");
    }
    for (uint32_t i = 0; s->sparse && i < s->nyield; i++)
        sb_add(&b, "yield 0x%llx\n", (unsigned long long)s->yield[i]);
    for (uint32_t i = 0; i < s->ntimers; i++) {
        const struct ex_timer_end *t = &s->timer[i];
        sb_add(&b, "timer T%u at %llu", t->thread, (unsigned long long)t->step);
        if (t->call[0])
            sb_add(&b, "   # %s(%llu ns) ended early at T%u's cue point 0x%llx %s", t->call,
                   (unsigned long long)t->ns, t->by, (unsigned long long)t->rip, t->sym);
        sb_add(&b, "\n");
    }
    for (size_t i = 0; i < s->nseg; i++)
        sb_add(&b, "T%u x%u\n", s->seg[i].thread, s->seg[i].steps);
    if (s->policy == EX_DEFAULT_ROUNDROBIN)
        sb_add(&b, "default roundrobin %u\n", s->quantum);
    else
        sb_add(&b, "default continue\n");
    return sb_finish(&b);
}

int ex_schedule_write_text(FILE *f, const struct ex_schedule *s)
{
    char *t = ex_schedule_to_text(s);
    if (!t)
        return -1;
    int rc = fputs(t, f) < 0 ? -1 : 0;
    free(t);
    return rc;
}

/* ---- text parsing ---- */

int ex_parse_error_set(struct ex_parse_error *err, int line, int col, const char *fmt, ...)
{
    if (err) {
        char m[120];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m, sizeof m, fmt, ap);
        va_end(ap);
        err->line = line;
        err->col = col;
        snprintf(err->msg, sizeof err->msg, "line %d, column %d: %s", line, col, m);
    }
    return -1;
}

/* Parses a decimal number in [min, max] from tok[0..len). */
static int parse_num(const char *tok, size_t len, uint32_t min, uint32_t max, const char *what,
                     uint32_t *out, struct ex_parse_error *err, int line, int col)
{
    if (len == 0)
        return ex_parse_error_set(err, line, col, "expected a number (%s)", what);
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9')
            return ex_parse_error_set(err, line, col + (int)i, "%s must be a decimal number", what);
        v = v * 10 + (uint64_t)(tok[i] - '0');
        if (v > max)
            return ex_parse_error_set(err, line, col, "%s too large (maximum %u)", what, max);
    }
    if (v < min)
        return ex_parse_error_set(err, line, col, "%s must be at least %u", what, min);
    *out = (uint32_t)v;
    return 0;
}

/* A user address "0x..." in [1, EX_MAX_PREEMPT_RIP] from tok[0..len). */
static int parse_rip(const char *tok, size_t len, uint64_t *out, struct ex_parse_error *err,
                     int line, int col)
{
    if (len < 3 || tok[0] != '0' || (tok[1] != 'x' && tok[1] != 'X'))
        return ex_parse_error_set(err, line, col, "expected a rip as 0x<hex>");
    uint64_t v = 0;
    for (size_t i = 2; i < len; i++) {
        char c = tok[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return ex_parse_error_set(err, line, col + (int)i, "rip must be hexadecimal");
        v = v * 16 + (uint64_t)d;
        if (v > EX_MAX_PREEMPT_RIP)
            return ex_parse_error_set(err, line, col, "rip too large (a user address)");
    }
    if (v == 0)
        return ex_parse_error_set(err, line, col, "rip must not be 0");
    *out = v;
    return 0;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool tok_is(const char *tok, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(tok, word, len) == 0;
}

/* A sparse schedule's line: 'sparse', 'preempt T<n> 0x<rip> x<count> [after <k>]' or
 * 'yield 0x<rip>'.
 * 0, or -1 with err set. */
static int parse_sparse_line(struct ex_schedule *s, const char *const *tok, const size_t *tlen,
                             const int *tcol, int ntok, struct ex_parse_error *err, int line)
{
    if (tok_is(tok[0], tlen[0], "sparse")) {
        if (s->sparse || ntok > 1)
            return ex_parse_error_set(err, line, tcol[ntok > 1 ? 1 : 0],
                                      ntok > 1 ? "unexpected text after 'sparse'"
                                               : "duplicate 'sparse' line");
        s->sparse = true;
        return 0;
    }
    bool yield = tok_is(tok[0], tlen[0], "yield");
    if (!s->sparse)
        return ex_parse_error_set(err, line, tcol[0], "'%s' needs a 'sparse' line before it",
                                  yield ? "yield" : "preempt");
    uint64_t rip = 0;
    if (yield) {
        if (ntok != 2)
            return ex_parse_error_set(err, line, tcol[0], "expected 'yield 0x<rip>'");
        if (parse_rip(tok[1], tlen[1], &rip, err, line, tcol[1]) != 0)
            return -1;
        if (ex_schedule_add_yield(s, rip) != 0)
            return ex_parse_error_set(err, line, tcol[0], "more than %u yield points, or a repeat",
                                      EX_MAX_YIELDS);
        return 0;
    }
    uint32_t thread = 0, count = 0, chain = 0;
    if ((ntok != 4 && (ntok != 6 || !tok_is(tok[4], tlen[4], "after"))) ||
        (tok[1][0] != 'T' && tok[1][0] != 't') || (tok[3][0] != 'x' && tok[3][0] != 'X'))
        return ex_parse_error_set(err, line, tcol[0],
                                  "expected 'preempt T<thread> 0x<rip> x<count> [after <point>]'");
    if (parse_num(tok[1] + 1, tlen[1] - 1, 0, EX_SCHED_MAX_TID, "thread id", &thread, err, line,
                  tcol[1] + 1) != 0 ||
        parse_rip(tok[2], tlen[2], &rip, err, line, tcol[2]) != 0 ||
        parse_num(tok[3] + 1, tlen[3] - 1, 1, EX_MAX_STEPS, "count", &count, err, line,
                  tcol[3] + 1) != 0)
        return -1;
    if (ntok == 6 && parse_num(tok[5], tlen[5], 1, EX_MAX_PREEMPTS, "point", &chain, err, line,
                               tcol[5]) != 0)
        return -1;
    if (ex_schedule_add_preempt(s, thread, rip, count) != 0)
        return ex_parse_error_set(err, line, tcol[0], "more than %u preemption points, or two for "
                                  "one thread and rip", EX_MAX_PREEMPTS);
    if (chain && ex_schedule_chain_preempt(s, s->npreempt - 1, chain) != 0)
        return ex_parse_error_set(err, line, tcol[4], "'after %u': a point is chained to an "
                                  "earlier one (%u before it here)", chain, s->npreempt - 1);
    return 0;
}

/* 'timer T<thread> at <step>': an early timer ending (schedule.h). 0, or -1 with err set. */
static int parse_timer_line(struct ex_schedule *s, const char *const *tok, const size_t *tlen,
                            const int *tcol, int ntok, struct ex_parse_error *err, int line)
{
    if (ntok != 4 || (tok[1][0] != 'T' && tok[1][0] != 't') || !tok_is(tok[2], tlen[2], "at"))
        return ex_parse_error_set(err, line, tcol[0], "expected 'timer T<thread> at <step>'");
    struct ex_timer_end t;
    memset(&t, 0, sizeof t);
    uint32_t hi = 0, lo = 0;
    if (parse_num(tok[1] + 1, tlen[1] - 1, 1, EX_SCHED_MAX_TID, "thread id", &t.thread, err,
                  line, tcol[1] + 1) != 0)
        return -1;
    /* A step may pass 32 bits: its digits beyond the last nine, then the last nine. */
    size_t cut = tlen[3] > 9 ? tlen[3] - 9 : 0;
    if (tlen[3] > 18)
        return ex_parse_error_set(err, line, tcol[3], "step too large");
    if ((cut && parse_num(tok[3], cut, 0, 999999999, "step", &hi, err, line, tcol[3]) != 0) ||
        parse_num(tok[3] + cut, tlen[3] - cut, 0, 999999999, "step", &lo, err, line,
                  tcol[3] + (int)cut) != 0)
        return -1;
    t.step = (uint64_t)hi * 1000000000ULL + lo;
    if (ex_schedule_add_timer(s, &t) != 0)
        return ex_parse_error_set(err, line, tcol[0], "more than %u timer lines, or a step not "
                                  "after the last one's", EX_MAX_TIMERS);
    return 0;
}

int ex_schedule_parse_text(const char *buf, size_t len, struct ex_schedule *s,
                           struct ex_parse_error *err)
{
    ex_schedule_init(s);
    if (len > EX_MAX_INPUT)
        return ex_parse_error_set(err, 1, 1, "input larger than %u bytes", EX_MAX_INPUT);
    bool have_default = false;
    int line = 0;
    size_t pos = 0;
    while (pos < len) {
        line++;
        size_t start = pos, end = pos;
        while (end < len && buf[end] != '\n')
            end++;
        pos = end < len ? end + 1 : end;
        if (end - start > EX_MAX_LINE) {
            ex_parse_error_set(err, line, EX_MAX_LINE + 1, "line longer than %d bytes", EX_MAX_LINE);
            goto fail;
        }
        const char *nul = memchr(buf + start, 0, end - start);
        if (nul) {
            ex_parse_error_set(err, line, (int)(nul - (buf + start)) + 1, "NUL byte in input");
            goto fail;
        }
        /* Split the line (up to a '#') into at most 7 whitespace-separated tokens. */
        const char *tok[7];
        size_t tlen[7];
        int tcol[7], ntok = 0;
        size_t i = start;
        for (;;) {
            while (i < end && is_blank(buf[i]))
                i++;
            if (i == end || buf[i] == '#')
                break;
            if (ntok == 7)
                break; /* no item has 7 words: the item check reports the extra ones */
            tok[ntok] = buf + i;
            tcol[ntok] = (int)(i - start) + 1;
            while (i < end && !is_blank(buf[i]) && buf[i] != '#')
                i++;
            tlen[ntok] = (size_t)(buf + i - tok[ntok]);
            ntok++;
        }
        if (ntok == 0)
            continue;
        if (tok_is(tok[0], tlen[0], "timer")) { /* before 'tN': it starts with a t */
            if (parse_timer_line(s, tok, tlen, tcol, ntok, err, line) != 0)
                goto fail;
        } else if (tok[0][0] == 'T' || tok[0][0] == 't') {
            uint32_t thread, steps = 1;
            if (parse_num(tok[0] + 1, tlen[0] - 1, 1, EX_SCHED_MAX_TID, "thread id", &thread, err, line,
                          tcol[0] + 1) != 0)
                goto fail;
            if (ntok >= 2) {
                if (tok[1][0] != 'x' && tok[1][0] != 'X') {
                    ex_parse_error_set(err, line, tcol[1], "expected 'xN' (steps) after the thread");
                    goto fail;
                }
                if (parse_num(tok[1] + 1, tlen[1] - 1, 1, EX_MAX_STEPS, "step count", &steps,
                              err, line, tcol[1] + 1) != 0)
                    goto fail;
            }
            if (ntok > 2) {
                ex_parse_error_set(err, line, tcol[2], "unexpected text after the segment");
                goto fail;
            }
            if (ex_schedule_push(s, thread, steps) != 0) {
                ex_parse_error_set(err, line, tcol[0], "too many segments (maximum %u) or out of memory",
                     EX_MAX_SEGMENTS);
                goto fail;
            }
        } else if (tok_is(tok[0], tlen[0], "sparse") || tok_is(tok[0], tlen[0], "preempt") ||
                   tok_is(tok[0], tlen[0], "yield")) {
            if (parse_sparse_line(s, tok, tlen, tcol, ntok, err, line) != 0)
                goto fail;
        } else if (tok_is(tok[0], tlen[0], "default")) {
            if (have_default) {
                ex_parse_error_set(err, line, tcol[0], "duplicate 'default' line");
                goto fail;
            }
            have_default = true;
            if (ntok < 2) {
                ex_parse_error_set(err, line, tcol[0] + (int)tlen[0], "expected 'continue' or 'roundrobin'");
                goto fail;
            }
            if (tok_is(tok[1], tlen[1], "continue")) {
                if (ntok > 2) {
                    ex_parse_error_set(err, line, tcol[2], "unexpected text after 'continue'");
                    goto fail;
                }
                s->policy = EX_DEFAULT_CONTINUE;
            } else if (tok_is(tok[1], tlen[1], "roundrobin")) {
                s->policy = EX_DEFAULT_ROUNDROBIN;
                if (ntok >= 3 && parse_num(tok[2], tlen[2], 1, EX_MAX_STEPS, "quantum",
                                           &s->quantum, err, line, tcol[2]) != 0)
                    goto fail;
                if (ntok > 3) {
                    ex_parse_error_set(err, line, tcol[3], "unexpected text after the quantum");
                    goto fail;
                }
            } else {
                ex_parse_error_set(err, line, tcol[1], "unknown default policy (expected 'continue' or "
                                         "'roundrobin')");
                goto fail;
            }
        } else {
            ex_parse_error_set(err, line, tcol[0], "expected 'T<thread> x<steps>', 'default ...', "
                               "'sparse', 'preempt ...', 'yield ...', 'timer ...' or '#'");
            goto fail;
        }
    }
    return 0;
fail:
    ex_schedule_free(s);
    return -1;
}

int ex_schedule_parse(const char *buf, size_t len, struct ex_schedule *s,
                      struct ex_parse_error *err)
{
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
        i++;
    if (i < len && buf[i] == '{')
        return ex_schedule_parse_json(buf, len, s, err);
    return ex_schedule_parse_text(buf, len, s, err);
}

/* ---- sets ---- */

void ex_schedule_set_init(struct ex_schedule_set *ss)
{
    memset(ss, 0, sizeof *ss);
}

void ex_schedule_set_free(struct ex_schedule_set *ss)
{
    for (size_t i = 0; i < ss->n; i++)
        ex_schedule_free(&ss->v[i]);
    free(ss->v);
    ex_schedule_set_init(ss);
}

int ex_schedule_set_take(struct ex_schedule_set *ss, struct ex_schedule *s)
{
    if (ss->n == ss->cap) {
        size_t ncap = ss->cap ? ss->cap * 2 : 8;
        struct ex_schedule *nv = realloc(ss->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        ss->v = nv;
        ss->cap = ncap;
    }
    ss->v[ss->n++] = *s;
    ex_schedule_init(s);
    return 0;
}

long ex_schedule_set_find(const struct ex_schedule_set *ss, const struct ex_schedule *s)
{
    for (size_t i = 0; i < ss->n; i++)
        if (ex_schedule_equal(&ss->v[i], s))
            return (long)i;
    return -1;
}
