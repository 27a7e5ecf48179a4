/* A small strict JSON reader for one object per line, and a bounded JSON writer.
 *
 * Reader: json_parse_object() parses exactly one JSON object (RFC 8259 syntax, UTF-8
 * checked, surrounding whitespace allowed, nothing else) whose values are strings,
 * numbers, booleans or null. Nested objects and arrays are refused unless
 * JSON_ALLOW_NESTED is given; then they are validated (depth at most JSON_MAX_DEPTH)
 * and kept as raw text that json_parse_object() can read in turn. Duplicate keys,
 * NUL characters (also as \u0000) and more than JSON_MAX_FIELDS fields are refused.
 * It never allocates: everything lives in struct json_obj. Written for untrusted
 * input (the control socket): every byte is checked, no recursion beyond the depth limit.
 *
 * Writer: struct jbuf appends to a caller's fixed buffer and remembers overflow, so
 * a sequence of appends needs one check at the end. */
#ifndef JINX_JSON_H
#define JINX_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define JSON_MAX_TEXT 8192   /* longest input json_parse_object() accepts */
#define JSON_MAX_FIELDS 48
#define JSON_MAX_KEY 32      /* key length, including the terminating NUL */
#define JSON_MAX_DEPTH 16

#define JSON_ALLOW_NESTED 1u

enum json_type { JSON_STRING, JSON_NUMBER, JSON_BOOL, JSON_NULL, JSON_OBJECT, JSON_ARRAY };

struct json_field {
    char key[JSON_MAX_KEY];
    enum json_type type;
    const char *raw;        /* the value's text in the input (numbers, objects, arrays) */
    size_t rawlen;
    const char *str;        /* JSON_STRING: the decoded value, NUL-terminated */
    size_t strlen;
    bool b;                 /* JSON_BOOL */
};

struct json_obj {
    int n;
    struct json_field f[JSON_MAX_FIELDS];
    char arena[JSON_MAX_TEXT]; /* decoded strings (never longer than their encoding) */
    size_t used;
};

/* Parses s[0..len). Returns 0, or -1 with a message naming what is wrong and where
 * ("column 12: expected ':' after a key"). The fields point into s and into o. */
int json_parse_object(const char *s, size_t len, unsigned flags, struct json_obj *o, char *err,
                      size_t errlen);

const char *json_type_name(enum json_type t);
const struct json_field *json_get(const struct json_obj *o, const char *key);
/* Typed lookups: 1 found with the right type, 0 absent, -1 present with another type
 * or (numbers) out of range for the C type. */
int json_get_str(const struct json_obj *o, const char *key, const char **out);
int json_get_bool(const struct json_obj *o, const char *key, bool *out);
/* Integers must be written as integers: "3", not "3.0" or "3e0"; no minus sign. */
int json_get_u64(const struct json_obj *o, const char *key, uint64_t *out);
int json_get_double(const struct json_obj *o, const char *key, double *out);
/* Same as json_get_u64 / json_get_double for one field. */
int json_field_u64(const struct json_field *f, uint64_t *out);
int json_field_double(const struct json_field *f, double *out);

/* For a document larger than JSON_MAX_TEXT, such as a jinx-vmm --report file: validates
 * the whole object s[0..len) (any size, nesting as json_parse_object) and points raw at
 * the text of the value of the top-level key. 1 found, 0 absent, -1 malformed (err). */
int json_find(const char *s, size_t len, const char *key, const char **raw, size_t *rawlen,
              char *err, size_t errlen);
/* Walks the elements of an array's text (as json_find returns it): *pos starts at 0;
 * 1 with the next element's text, 0 after the last, -1 when it is not a valid array. */
int json_array_next(const char *raw, size_t len, size_t *pos, const char **elem, size_t *elen);
/* Decodes a string literal's text into out (NUL-terminated). 0, or -1 if it is not one
 * or does not fit in cap bytes. */
int json_decode_string(const char *raw, size_t len, char *out, size_t cap);

/* ---- the lexer under the reader, for streaming parsers of larger documents ----
 * (explorer/schedule_json.c builds a schedule as it reads). Positions: pos is a byte
 * offset; line/line_start follow the newlines the white space skipped. The first error
 * wins: its message (without position) is in msg, where it happened in fail_line and
 * fail_col (1-based), and every later call fails at once. */
struct json_lex {
    const char *s;
    size_t len, pos;
    int line;               /* newlines skipped so far (0 on the first line) */
    size_t line_start;      /* offset of the current line's first byte */
    int max_depth;          /* nesting json_lex_skip_value allows (0: JSON_MAX_DEPTH) */
    bool truncate;          /* strings too long for their buffer keep a whole-character
                             * prefix instead of failing */
    bool failed;
    int fail_line, fail_col;
    char msg[160];
    /* the flat-object reader's own state */
    unsigned flags;
    struct json_obj *o;
    char *err;
    size_t errlen;
};

void json_lex_init(struct json_lex *l, const char *s, size_t len);
/* Records an error at the current position (if none yet); returns -1. */
int json_lex_fail(struct json_lex *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Skips white space. */
void json_lex_ws(struct json_lex *l);
/* After white space, is the next byte c? */
bool json_lex_at(struct json_lex *l, char c);
/* After white space, consumes c or fails with "expected <what>". 0 or -1. */
int json_lex_expect(struct json_lex *l, char c, const char *what);
/* After white space, a string literal decoded into out[0..cap) (NUL-terminated; out NULL:
 * only validated). 0 or -1. */
int json_lex_string(struct json_lex *l, char *out, size_t cap, const char *what);
/* Validates any value at the cursor; depth counts the enclosing levels. 0 or -1. */
int json_lex_skip_value(struct json_lex *l, int depth);
/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid (overlong forms,
 * surrogates and code points above U+10FFFF are invalid). */
size_t json_utf8_len(const unsigned char *s, size_t n);

/* ---- writer ---- */
struct jbuf {
    char *p;
    size_t cap, n;
    bool overflow;          /* something did not fit: the text is truncated */
};

void jb_init(struct jbuf *b, char *buf, size_t cap);
void jb_raw(struct jbuf *b, const char *s);
void jb_printf(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal, quotes included. Control characters and
 * invalid UTF-8 are escaped (invalid bytes become U+FFFD), so the output is always
 * valid JSON on one line. */
void jb_str(struct jbuf *b, const char *s);
/* 0 if everything fit, else -1. */
int jb_ok(const struct jbuf *b);
/* Writes s to f as a JSON string literal, quotes included: '"' and '\\' escaped,
 * control characters as \u00XX, and with ascii_only also every byte >= 0x7f (for text
 * that may not be UTF-8, such as bytes read from a dump). */
void json_fput_str(FILE *f, const char *s, bool ascii_only);

#endif
