/* The JSON schedule format: a strict little parser for exactly what we need
 * (untrusted input: bounded nesting, no recursion on user-controlled depth
 * beyond JSON_MAX_DEPTH, every byte checked) and a printer. */
#include "schedule.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

struct jp {
    const char *s;
    size_t len, pos;
    int line;
    size_t line_start;
    struct ex_parse_error *err;
    bool failed;
};

static int jerr(struct jp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jerr(struct jp *p, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = true;
    if (p->err) {
        char m[120];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m, sizeof m, fmt, ap);
        va_end(ap);
        p->err->line = p->line;
        p->err->col = (int)(p->pos - p->line_start) + 1;
        snprintf(p->err->msg, sizeof p->err->msg, "line %d, column %d: %s", p->err->line,
                 p->err->col, m);
    }
    return -1;
}

static void ws(struct jp *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c == '\n') {
            p->line++;
            p->line_start = p->pos + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        p->pos++;
    }
}

static bool at(struct jp *p, char c)
{
    ws(p);
    return p->pos < p->len && p->s[p->pos] == c;
}

static int expect(struct jp *p, char c)
{
    if (!at(p, c)) {
        if (p->pos >= p->len)
            return jerr(p, "unexpected end of input, expected '%c'", c);
        return jerr(p, "expected '%c'", c);
    }
    p->pos++;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int read_u16(struct jp *p, unsigned *out)
{
    if (p->len - p->pos < 4)
        return jerr(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->s[p->pos + (size_t)i]);
        if (h < 0)
            return jerr(p, "bad hex digit in \\u escape");
        v = v * 16 + (unsigned)h;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k;
    unsigned min;
    if (c < 0x80)
        return 1;
    else if (c >= 0xc2 && c <= 0xdf)
        k = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        k = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        k = 4, min = 0x10000;
    else
        return 0;
    if (n < k)
        return 0;
    unsigned v = c & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return k;
}

/* Appends bytes to out[0..cap) while they fit whole; once one does not, *n is
 * set to cap and everything after is dropped too, leaving a clean prefix. */
static void put(char *out, size_t cap, size_t *n, const char *b, size_t k)
{
    if (!out || *n >= cap)
        return;
    if (*n + k < cap) {
        memcpy(out + *n, b, k);
        *n += k;
        out[*n] = 0;
    } else {
        *n = cap;
    }
}

/* Parses a string; copies up to cap-1 bytes (NUL-terminated) into out if given. */
static int jstring(struct jp *p, char *out, size_t cap)
{
    size_t n = 0;
    if (out && cap)
        out[0] = 0;
    if (expect(p, '"') != 0)
        return -1;
    for (;;) {
        if (p->pos >= p->len)
            return jerr(p, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            return 0;
        }
        if (c < 0x20)
            return jerr(p, "control character in string");
        if (c == '\\') {
            p->pos++;
            if (p->pos >= p->len)
                return jerr(p, "unterminated string");
            char e = p->s[p->pos++];
            char b[4];
            size_t k = 1;
            switch (e) {
            case '"': b[0] = '"'; break;
            case '\\': b[0] = '\\'; break;
            case '/': b[0] = '/'; break;
            case 'b': b[0] = '\b'; break;
            case 'f': b[0] = '\f'; break;
            case 'n': b[0] = '\n'; break;
            case 'r': b[0] = '\r'; break;
            case 't': b[0] = '\t'; break;
            case 'u': {
                unsigned u, lo;
                if (read_u16(p, &u) != 0)
                    return -1;
                if (u >= 0xdc00 && u <= 0xdfff)
                    return jerr(p, "lone low surrogate in \\u escape");
                if (u >= 0xd800 && u <= 0xdbff) {
                    if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                        return jerr(p, "high surrogate not followed by a low one");
                    p->pos += 2;
                    if (read_u16(p, &lo) != 0)
                        return -1;
                    if (lo < 0xdc00 || lo > 0xdfff)
                        return jerr(p, "high surrogate not followed by a low one");
                    u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                }
                if (u == 0)
                    return jerr(p, "\\u0000 is not allowed");
                if (u < 0x80) {
                    b[0] = (char)u;
                } else if (u < 0x800) {
                    b[0] = (char)(0xc0 | (u >> 6));
                    b[1] = (char)(0x80 | (u & 0x3f));
                    k = 2;
                } else if (u < 0x10000) {
                    b[0] = (char)(0xe0 | (u >> 12));
                    b[1] = (char)(0x80 | ((u >> 6) & 0x3f));
                    b[2] = (char)(0x80 | (u & 0x3f));
                    k = 3;
                } else {
                    b[0] = (char)(0xf0 | (u >> 18));
                    b[1] = (char)(0x80 | ((u >> 12) & 0x3f));
                    b[2] = (char)(0x80 | ((u >> 6) & 0x3f));
                    b[3] = (char)(0x80 | (u & 0x3f));
                    k = 4;
                }
                break;
            }
            default:
                p->pos--;
                return jerr(p, "bad escape '\\%c'", e >= 0x20 && e < 0x7f ? e : '?');
            }
            put(out, cap, &n, b, k);
            continue;
        }
        size_t k = utf8_len((const unsigned char *)p->s + p->pos, p->len - p->pos);
        if (k == 0)
            return jerr(p, "invalid UTF-8 in string");
        put(out, cap, &n, p->s + p->pos, k);
        p->pos += k;
    }
}

/* A non-negative integer field in [min, max]. */
static int juint(struct jp *p, uint32_t min, uint32_t max, const char *what, uint32_t *out)
{
    ws(p);
    if (p->pos >= p->len)
        return jerr(p, "unexpected end of input, expected %s", what);
    if (p->s[p->pos] == '-')
        return jerr(p, "%s must not be negative", what);
    if (p->s[p->pos] < '0' || p->s[p->pos] > '9')
        return jerr(p, "%s must be a number", what);
    if (p->s[p->pos] == '0' && p->pos + 1 < p->len && p->s[p->pos + 1] >= '0' &&
        p->s[p->pos + 1] <= '9')
        return jerr(p, "leading zeros are not allowed");
    uint64_t v = 0;
    bool big = false;
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        v = v * 10 + (uint64_t)(p->s[p->pos] - '0');
        if (v > max)
            big = true, v = max + 1ULL;
        p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == '.' || p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
        return jerr(p, "%s must be an integer", what);
    if (big) {
        p->pos = start;
        return jerr(p, "%s too large (maximum %u)", what, max);
    }
    if (v < min) {
        p->pos = start;
        return jerr(p, "%s must be at least %u", what, min);
    }
    *out = (uint32_t)v;
    return 0;
}

static int skip_value(struct jp *p, int depth);

static int skip_number(struct jp *p)
{
    size_t st = p->pos;
    if (p->s[p->pos] == '-')
        p->pos++;
    size_t d = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
        p->pos++;
    if (p->pos == d)
        return jerr(p, "bad number");
    if (p->pos < p->len && p->s[p->pos] == '.') {
        p->pos++;
        d = p->pos;
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (p->pos == d)
            return jerr(p, "bad number");
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        d = p->pos;
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (p->pos == d)
            return jerr(p, "bad number");
    }
    (void)st;
    return 0;
}

static int skip_word(struct jp *p, const char *w)
{
    size_t k = strlen(w);
    if (p->len - p->pos < k || memcmp(p->s + p->pos, w, k) != 0)
        return jerr(p, "unexpected character");
    p->pos += k;
    return 0;
}

static int skip_value(struct jp *p, int depth)
{
    if (depth > JSON_MAX_DEPTH)
        return jerr(p, "nesting deeper than %d", JSON_MAX_DEPTH);
    ws(p);
    if (p->pos >= p->len)
        return jerr(p, "unexpected end of input, expected a value");
    char c = p->s[p->pos];
    if (c == '"')
        return jstring(p, NULL, 0);
    if (c == '-' || (c >= '0' && c <= '9'))
        return skip_number(p);
    if (c == 't')
        return skip_word(p, "true");
    if (c == 'f')
        return skip_word(p, "false");
    if (c == 'n')
        return skip_word(p, "null");
    if (c == '[') {
        p->pos++;
        if (at(p, ']')) {
            p->pos++;
            return 0;
        }
        for (;;) {
            if (skip_value(p, depth + 1) != 0)
                return -1;
            if (at(p, ',')) {
                p->pos++;
                continue;
            }
            return expect(p, ']');
        }
    }
    if (c == '{') {
        p->pos++;
        if (at(p, '}')) {
            p->pos++;
            return 0;
        }
        for (;;) {
            if (jstring(p, NULL, 0) != 0 || expect(p, ':') != 0 || skip_value(p, depth + 1) != 0)
                return -1;
            if (at(p, ',')) {
                p->pos++;
                continue;
            }
            return expect(p, '}');
        }
    }
    return jerr(p, "unexpected character");
}

/* Iterates the members of an object: calls member(p, key, ctx) positioned at
 * the value. Keys longer than 31 bytes cannot be ours and are skipped. */
typedef int (*member_fn)(struct jp *p, const char *key, void *ctx, int depth);

static int jobject(struct jp *p, member_fn member, void *ctx, int depth)
{
    if (depth > JSON_MAX_DEPTH)
        return jerr(p, "nesting deeper than %d", JSON_MAX_DEPTH);
    if (expect(p, '{') != 0)
        return -1;
    if (at(p, '}')) {
        p->pos++;
        return 0;
    }
    for (;;) {
        char key[32];
        ws(p);
        if (jstring(p, key, sizeof key) != 0 || expect(p, ':') != 0)
            return -1;
        if (member(p, key, ctx, depth) != 0)
            return -1;
        if (at(p, ',')) {
            p->pos++;
            continue;
        }
        return expect(p, '}');
    }
}

struct seg_ctx {
    uint32_t thread, steps;
    bool have_thread, have_steps;
};

static int seg_member(struct jp *p, const char *key, void *vctx, int depth)
{
    struct seg_ctx *c = vctx;
    if (strcmp(key, "thread") == 0) {
        if (c->have_thread)
            return jerr(p, "duplicate key \"thread\"");
        c->have_thread = true;
        return juint(p, 1, EX_SCHED_MAX_TID, "thread", &c->thread);
    }
    if (strcmp(key, "steps") == 0) {
        if (c->have_steps)
            return jerr(p, "duplicate key \"steps\"");
        c->have_steps = true;
        return juint(p, 1, EX_MAX_STEPS, "steps", &c->steps);
    }
    return skip_value(p, depth + 1);
}

struct top_ctx {
    struct ex_schedule *s;
    bool have_version, have_segments, have_default, have_quantum, have_note;
};

static int top_member(struct jp *p, const char *key, void *vctx, int depth)
{
    struct top_ctx *c = vctx;
    struct ex_schedule *s = c->s;
    if (strcmp(key, "version") == 0) {
        uint32_t v;
        if (c->have_version)
            return jerr(p, "duplicate key \"version\"");
        c->have_version = true;
        ws(p);
        size_t at_v = p->pos;
        if (juint(p, 0, 1000000, "version", &v) != 0)
            return -1;
        if (v != 1) {
            p->pos = at_v;
            return jerr(p, "unsupported version %u (this reader knows version 1)", v);
        }
        return 0;
    }
    if (strcmp(key, "default") == 0) {
        char pol[16];
        if (c->have_default)
            return jerr(p, "duplicate key \"default\"");
        c->have_default = true;
        ws(p);
        size_t at_v = p->pos;
        if (jstring(p, pol, sizeof pol) != 0)
            return -1;
        if (strcmp(pol, "continue") == 0)
            s->policy = EX_DEFAULT_CONTINUE;
        else if (strcmp(pol, "roundrobin") == 0)
            s->policy = EX_DEFAULT_ROUNDROBIN;
        else {
            p->pos = at_v;
            return jerr(p, "unknown default policy (expected \"continue\" or \"roundrobin\")");
        }
        return 0;
    }
    if (strcmp(key, "quantum") == 0) {
        if (c->have_quantum)
            return jerr(p, "duplicate key \"quantum\"");
        c->have_quantum = true;
        return juint(p, 1, EX_MAX_STEPS, "quantum", &s->quantum);
    }
    if (strcmp(key, "note") == 0) {
        if (c->have_note)
            return jerr(p, "duplicate key \"note\"");
        c->have_note = true;
        return jstring(p, s->note, sizeof s->note);
    }
    if (strcmp(key, "segments") == 0) {
        if (c->have_segments)
            return jerr(p, "duplicate key \"segments\"");
        c->have_segments = true;
        if (expect(p, '[') != 0)
            return -1;
        if (at(p, ']')) {
            p->pos++;
            return 0;
        }
        for (;;) {
            struct seg_ctx sc = { 0 };
            ws(p);
            size_t at_obj = p->pos;
            int line = p->line;
            size_t ls = p->line_start;
            if (jobject(p, seg_member, &sc, depth + 1) != 0)
                return -1;
            if (!sc.have_thread || !sc.have_steps) {
                p->pos = at_obj, p->line = line, p->line_start = ls;
                return jerr(p, "segment needs \"thread\" and \"steps\"");
            }
            if (ex_schedule_push(s, sc.thread, sc.steps) != 0) {
                p->pos = at_obj, p->line = line, p->line_start = ls;
                return jerr(p, "too many segments (maximum %u) or out of memory",
                            EX_MAX_SEGMENTS);
            }
            if (at(p, ',')) {
                p->pos++;
                continue;
            }
            return expect(p, ']');
        }
    }
    return skip_value(p, depth + 1);
}

int ex_schedule_parse_json(const char *buf, size_t len, struct ex_schedule *s,
                           struct ex_parse_error *err)
{
    struct jp p = { .s = buf, .len = len, .line = 1, .err = err };
    struct top_ctx c = { .s = s };
    ex_schedule_init(s);
    if (len > EX_MAX_INPUT) {
        jerr(&p, "input larger than %u bytes", EX_MAX_INPUT);
        return -1;
    }
    if (jobject(&p, top_member, &c, 0) != 0)
        goto fail;
    ws(&p);
    if (p.pos != p.len) {
        jerr(&p, "unexpected text after the schedule object");
        goto fail;
    }
    if (!c.have_version) {
        jerr(&p, "missing \"version\"");
        goto fail;
    }
    if (!c.have_segments) {
        jerr(&p, "missing \"segments\"");
        goto fail;
    }
    return 0;
fail:
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
        size_t l = utf8_len((const unsigned char *)clean + k, strlen(clean + k));
        if (l == 0)
            clean[k++] = '?';
        else
            k += l;
    }
    json_escape(note, clean);
    size_t cap = 160 + strlen(note) + s->nseg * 48;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t n = (size_t)snprintf(out, cap,
                                "{\"version\":1,\"default\":\"%s\",\"quantum\":%u,\"note\":\"%s\",\n"
                                " \"segments\":[",
                                s->policy == EX_DEFAULT_ROUNDROBIN ? "roundrobin" : "continue",
                                s->quantum, note);
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
