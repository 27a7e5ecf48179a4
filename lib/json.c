/* Strict JSON reader and bounded writer (json.h): the one JSON lexer of the tree. The
 * flat-object reader is meant for one-line messages; the lexer underneath (struct
 * json_lex) also serves streaming parsers such as explorer/schedule_json.c's. */
#include "lib/json.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct json_lex *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct json_lex *p, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    p->fail_line = p->line + 1;
    p->fail_col = (int)(p->pos - p->line_start) + 1;
    if (p->err && p->errlen)
        snprintf(p->err, p->errlen, "column %zu: %s", p->pos + 1, p->msg);
    return -1;
}

static void ws(struct json_lex *p)
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

static int peek(struct json_lex *p)
{
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int expect(struct json_lex *p, char c, const char *what)
{
    ws(p);
    if (peek(p) != (unsigned char)c) {
        if (p->pos >= p->len)
            return fail(p, "unexpected end of input, expected %s", what);
        return fail(p, "expected %s", what);
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

static int read_hex4(struct json_lex *p, unsigned *out)
{
    if (p->len - p->pos < 4)
        return fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->s[p->pos + (size_t)i]);
        if (h < 0)
            return fail(p, "bad hex digit in \\u escape");
        v = v * 16 + (unsigned)h;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid (overlong forms,
 * surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0], min, v;
    size_t k;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        k = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        k = 4, min = 0x10000;
    else
        return 0;
    if (n < k)
        return 0;
    v = c & (0x7fu >> k);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return k;
}

static size_t utf8_put(char *b, unsigned cp)
{
    if (cp < 0x80) {
        b[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (char)(0xc0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (char)(0xe0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    b[0] = (char)(0xf0 | (cp >> 18));
    b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    b[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Parses a string literal at the cursor. With out, decodes it into out[0..cap)
 * (NUL-terminated; too long is an error naming `what`, or with p->truncate the longest
 * prefix of whole characters that fits); without, only validates. */
static int string(struct json_lex *p, char *out, size_t cap, size_t *outlen, const char *what)
{
    size_t n = 0;
    bool full = false;
    if (peek(p) < 0)
        return fail(p, "unexpected end of input, expected a string (%s)", what);
    if (peek(p) != '"')
        return fail(p, "expected a string (%s)", what);
    p->pos++;
    for (;;) {
        if (p->pos >= p->len)
            return fail(p, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->pos];
        char buf[4];
        size_t k;
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20)
            return fail(p, "control character 0x%02x in a string (escape it)", c);
        if (c == '\\') {
            if (p->pos + 1 >= p->len)
                return fail(p, "unterminated escape");
            char e = p->s[p->pos + 1];
            p->pos += 2;
            switch (e) {
            case '"': buf[0] = '"'; k = 1; break;
            case '\\': buf[0] = '\\'; k = 1; break;
            case '/': buf[0] = '/'; k = 1; break;
            case 'b': buf[0] = '\b'; k = 1; break;
            case 'f': buf[0] = '\f'; k = 1; break;
            case 'n': buf[0] = '\n'; k = 1; break;
            case 'r': buf[0] = '\r'; k = 1; break;
            case 't': buf[0] = '\t'; k = 1; break;
            case 'u': {
                unsigned cp, lo;
                if (read_hex4(p, &cp) < 0)
                    return -1;
                if (cp >= 0xdc00 && cp <= 0xdfff)
                    return fail(p, "lone low surrogate in \\u escape");
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                        return fail(p, "high surrogate not followed by a low one");
                    p->pos += 2;
                    if (read_hex4(p, &lo) < 0)
                        return -1;
                    if (lo < 0xdc00 || lo > 0xdfff)
                        return fail(p, "high surrogate not followed by a low one");
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                if (cp == 0)
                    return fail(p, "\\u0000 is not allowed in a string");
                k = utf8_put(buf, cp);
                break;
            }
            default:
                p->pos--;
                return fail(p, "unknown escape '\\%c'", e >= 0x20 && e < 0x7f ? e : '?');
            }
        } else {
            k = utf8_len((const unsigned char *)p->s + p->pos, p->len - p->pos);
            if (!k)
                return fail(p, "invalid UTF-8 in a string");
            memcpy(buf, p->s + p->pos, k);
            p->pos += k;
        }
        if (!out) {
            n += k;
        } else if (full) {
            continue;
        } else if (n + k < cap) {
            memcpy(out + n, buf, k);
            n += k;
        } else if (p->truncate) {
            full = true; /* everything after is dropped too: a clean prefix */
        } else {
            return fail(p, "%s too long (at most %zu bytes)", what, cap - 1);
        }
    }
    if (out)
        out[n] = 0;
    if (outlen)
        *outlen = n;
    return 0;
}

static bool digit(int c) { return c >= '0' && c <= '9'; }

/* The JSON number grammar, exactly: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int number(struct json_lex *p)
{
    if (peek(p) == '-')
        p->pos++;
    if (peek(p) == '0') {
        p->pos++;
        if (digit(peek(p)))
            return fail(p, "leading zero in a number");
    } else if (digit(peek(p))) {
        while (digit(peek(p)))
            p->pos++;
    } else {
        return fail(p, "bad number");
    }
    if (peek(p) == '.') {
        p->pos++;
        if (!digit(peek(p)))
            return fail(p, "expected a digit after '.'");
        while (digit(peek(p)))
            p->pos++;
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        p->pos++;
        if (peek(p) == '+' || peek(p) == '-')
            p->pos++;
        if (!digit(peek(p)))
            return fail(p, "expected a digit in the exponent");
        while (digit(peek(p)))
            p->pos++;
    }
    return 0;
}

static int literal(struct json_lex *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return fail(p, "expected a value (string, number, true, false or null)");
    p->pos += n;
    return 0;
}

/* Validates any value (for nested objects and arrays), at most JSON_MAX_DEPTH deep. */
static int skip_value(struct json_lex *p, int depth)
{
    ws(p);
    int c = peek(p);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        int max = p->max_depth ? p->max_depth : JSON_MAX_DEPTH;
        if (depth >= max)
            return fail(p, "nested more than %d levels deep", max);
        p->pos++;
        ws(p);
        if (peek(p) == close) {
            p->pos++;
            return 0;
        }
        for (;;) {
            ws(p);
            if (c == '{') {
                if (string(p, NULL, 0, NULL, "a key") < 0 || expect(p, ':', "':' after a key") < 0)
                    return -1;
            }
            if (skip_value(p, depth + 1) < 0)
                return -1;
            ws(p);
            if (peek(p) == ',') {
                p->pos++;
                continue;
            }
            if (peek(p) == close) {
                p->pos++;
                return 0;
            }
            return fail(p, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (c == '"')
        return string(p, NULL, 0, NULL, "a string");
    if (c == '-' || digit(c))
        return number(p);
    if (c == 't')
        return literal(p, "true");
    if (c == 'f')
        return literal(p, "false");
    if (c == 'n')
        return literal(p, "null");
    if (c < 0)
        return fail(p, "unexpected end of input, expected a value");
    return fail(p, "expected a value (string, number, true, false or null)");
}

static int value(struct json_lex *p, struct json_field *f)
{
    ws(p);
    int c = peek(p);
    size_t start = p->pos;
    if (c == '"') {
        struct json_obj *o = p->o;
        f->type = JSON_STRING;
        f->str = o->arena + o->used;
        if (string(p, o->arena + o->used, sizeof o->arena - o->used, &f->strlen, "string") < 0)
            return -1;
        o->used += f->strlen + 1;
    } else if (c == '-' || digit(c)) {
        f->type = JSON_NUMBER;
        if (number(p) < 0)
            return -1;
    } else if (c == 't' || c == 'f') {
        f->type = JSON_BOOL;
        f->b = c == 't';
        if (literal(p, c == 't' ? "true" : "false") < 0)
            return -1;
    } else if (c == 'n') {
        f->type = JSON_NULL;
        if (literal(p, "null") < 0)
            return -1;
    } else if (c == '{' || c == '[') {
        if (!(p->flags & JSON_ALLOW_NESTED))
            return fail(p, "field \"%s\": nested %s are not allowed here", f->key,
                        c == '{' ? "objects" : "arrays");
        f->type = c == '{' ? JSON_OBJECT : JSON_ARRAY;
        if (skip_value(p, 1) < 0)
            return -1;
    } else if (c < 0) {
        return fail(p, "unexpected end of input, expected a value");
    } else {
        return fail(p, "expected a value (string, number, true, false or null)");
    }
    f->raw = p->s + start;
    f->rawlen = p->pos - start;
    return 0;
}

/* After an object member: 1 if a ',' says another follows, 0 at the closing '}', -1 on
 * anything else. */
static int next_member(struct json_lex *p)
{
    ws(p);
    if (peek(p) == ',') {
        p->pos++;
        return 1;
    }
    return expect(p, '}', "',' or '}'") < 0 ? -1 : 0;
}

/* Nothing but white space may follow the top-level object. */
static int end_of_text(struct json_lex *p)
{
    ws(p);
    return p->pos != p->len ? fail(p, "unexpected text after the object") : 0;
}

int json_parse_object(const char *s, size_t len, unsigned flags, struct json_obj *o, char *err,
                      size_t errlen)
{
    struct json_lex p = {.s = s, .len = len, .flags = flags, .o = o, .err = err,
                         .errlen = errlen};
    o->n = 0;
    o->used = 0;
    if (err && errlen)
        err[0] = 0;
    if (len > JSON_MAX_TEXT)
        return fail(&p, "message longer than %d bytes", JSON_MAX_TEXT);
    if (expect(&p, '{', "'{' (a JSON object)") < 0)
        return -1;
    ws(&p);
    if (peek(&p) == '}') {
        p.pos++;
    } else {
        for (;;) {
            ws(&p);
            if (o->n == JSON_MAX_FIELDS)
                return fail(&p, "more than %d fields", JSON_MAX_FIELDS);
            struct json_field *f = &o->f[o->n];
            memset(f, 0, sizeof *f);
            size_t kstart = p.pos;
            if (string(&p, f->key, sizeof f->key, NULL, "a key") < 0)
                return -1;
            if (json_get(o, f->key)) {
                p.pos = kstart;
                return fail(&p, "duplicate field \"%s\"", f->key);
            }
            if (expect(&p, ':', "':' after a key") < 0 || value(&p, f) < 0)
                return -1;
            o->n++;
            int more = next_member(&p);
            if (more < 0)
                return -1;
            if (!more)
                break;
        }
    }
    if (end_of_text(&p) < 0)
        return -1;
    return 0;
}

int json_find(const char *s, size_t len, const char *key, const char **raw, size_t *rawlen,
              char *err, size_t errlen)
{
    struct json_lex p = {.s = s, .len = len, .err = err, .errlen = errlen};
    if (err && errlen)
        err[0] = 0;
    int found = 0;
    if (expect(&p, '{', "'{' (a JSON object)") < 0)
        return -1;
    ws(&p);
    if (peek(&p) == '}') {
        p.pos++;
    } else {
        for (;;) {
            ws(&p);
            char k[JSON_MAX_KEY];
            if (string(&p, k, sizeof k, NULL, "a key") < 0 ||
                expect(&p, ':', "':' after a key") < 0)
                return -1;
            ws(&p);
            size_t start = p.pos;
            if (skip_value(&p, 1) < 0)
                return -1;
            if (!found && !strcmp(k, key)) {
                found = 1;
                *raw = s + start;
                *rawlen = p.pos - start;
            }
            int more = next_member(&p);
            if (more < 0)
                return -1;
            if (!more)
                break;
        }
    }
    if (end_of_text(&p) < 0)
        return -1;
    return found;
}

int json_array_next(const char *raw, size_t len, size_t *pos, const char **elem, size_t *elen)
{
    struct json_lex p = {.s = raw, .len = len, .pos = *pos};
    if (p.pos == 0) {
        ws(&p);
        if (peek(&p) != '[')
            return -1;
        p.pos++;
        ws(&p);
        if (peek(&p) == ']') {
            *pos = len;
            return 0;
        }
    } else {
        ws(&p);
        if (p.pos >= len || peek(&p) == ']') {
            *pos = len;
            return 0;
        }
        if (peek(&p) != ',')
            return -1;
        p.pos++;
    }
    ws(&p);
    size_t start = p.pos;
    if (skip_value(&p, 1) < 0)
        return -1;
    *elem = raw + start;
    *elen = p.pos - start;
    *pos = p.pos;
    return 1;
}

int json_decode_string(const char *raw, size_t len, char *out, size_t cap)
{
    struct json_lex p = {.s = raw, .len = len};
    size_t n;
    ws(&p);
    if (!cap || string(&p, out, cap, &n, "string") < 0)
        return -1;
    ws(&p);
    return p.pos == len ? 0 : -1;
}

/* ---- the lexer for streaming parsers (json.h) ---- */

void json_lex_init(struct json_lex *l, const char *s, size_t len)
{
    memset(l, 0, sizeof *l);
    l->s = s;
    l->len = len;
}

int json_lex_fail(struct json_lex *l, const char *fmt, ...)
{
    if (l->failed)
        return -1;
    char m[sizeof l->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return fail(l, "%s", m);
}

void json_lex_ws(struct json_lex *l) { ws(l); }

size_t json_utf8_len(const unsigned char *s, size_t n) { return utf8_len(s, n); }

bool json_lex_at(struct json_lex *l, char c)
{
    ws(l);
    return peek(l) == (unsigned char)c;
}

int json_lex_expect(struct json_lex *l, char c, const char *what)
{
    return expect(l, c, what);
}

int json_lex_string(struct json_lex *l, char *out, size_t cap, const char *what)
{
    ws(l);
    return string(l, out, cap, NULL, what);
}

int json_lex_skip_value(struct json_lex *l, int depth)
{
    return skip_value(l, depth);
}

const char *json_type_name(enum json_type t)
{
    switch (t) {
    case JSON_STRING: return "a string";
    case JSON_NUMBER: return "a number";
    case JSON_BOOL: return "a boolean";
    case JSON_NULL: return "null";
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    }
    return "?";
}

const struct json_field *json_get(const struct json_obj *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->f[i].key, key))
            return &o->f[i];
    return NULL;
}

int json_get_str(const struct json_obj *o, const char *key, const char **out)
{
    const struct json_field *f = json_get(o, key);
    if (!f)
        return 0;
    if (f->type != JSON_STRING)
        return -1;
    *out = f->str;
    return 1;
}

int json_get_bool(const struct json_obj *o, const char *key, bool *out)
{
    const struct json_field *f = json_get(o, key);
    if (!f)
        return 0;
    if (f->type != JSON_BOOL)
        return -1;
    *out = f->b;
    return 1;
}

int json_field_u64(const struct json_field *f, uint64_t *out)
{
    if (f->type != JSON_NUMBER || f->rawlen == 0 || f->rawlen > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < f->rawlen; i++) {
        char c = f->raw[i];
        if (!digit((unsigned char)c))
            return -1; /* a sign, fraction or exponent: not an integer as written */
        unsigned d = (unsigned)(c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int json_field_double(const struct json_field *f, double *out)
{
    char buf[64];
    if (f->type != JSON_NUMBER || f->rawlen >= sizeof buf)
        return -1;
    memcpy(buf, f->raw, f->rawlen);
    buf[f->rawlen] = 0;
    errno = 0;
    char *end;
    double v = strtod(buf, &end); /* the grammar was checked: strtod sees plain decimal */
    if (*end || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 1;
}

int json_get_u64(const struct json_obj *o, const char *key, uint64_t *out)
{
    const struct json_field *f = json_get(o, key);
    return f ? json_field_u64(f, out) : 0;
}

int json_get_double(const struct json_obj *o, const char *key, double *out)
{
    const struct json_field *f = json_get(o, key);
    return f ? json_field_double(f, out) : 0;
}

/* ---- writer ---- */

void jb_init(struct jbuf *b, char *buf, size_t cap)
{
    b->p = buf;
    b->cap = cap;
    b->n = 0;
    b->overflow = cap == 0;
    if (cap)
        buf[0] = 0;
}

static void jb_put(struct jbuf *b, const char *s, size_t k)
{
    if (b->overflow)
        return;
    if (b->n + k >= b->cap) {
        b->overflow = true;
        return;
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
    b->p[b->n] = 0;
}

void jb_raw(struct jbuf *b, const char *s) { jb_put(b, s, strlen(s)); }

void jb_printf(struct jbuf *b, const char *fmt, ...)
{
    if (b->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= b->cap - b->n) {
        b->overflow = true;
        b->p[b->n] = 0;
        return;
    }
    b->n += (size_t)k;
}

void jb_str(struct jbuf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    jb_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        char e[8];
        if (c == '"' || c == '\\') {
            e[0] = '\\';
            e[1] = (char)c;
            jb_put(b, e, 2);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(e, sizeof e, "\\u%04x", c);
            jb_put(b, e, 6);
            i++;
        } else {
            size_t k = utf8_len(u + i, n - i);
            if (k) {
                jb_put(b, s + i, k);
                i += k;
            } else {
                jb_put(b, "\\ufffd", 6);
                i++;
            }
        }
    }
    jb_put(b, "\"", 1);
}

int jb_ok(const struct jbuf *b) { return b->overflow ? -1 : 0; }

void json_fput_str(FILE *f, const char *s, bool ascii_only)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || (ascii_only && c >= 0x7f))
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
