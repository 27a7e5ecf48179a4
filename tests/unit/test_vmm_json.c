/* Unit tests for lib/json.c: the strict one-object reader (untrusted control-socket
 * input) and the bounded writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

static struct json_obj O;
static char E[256];

static int parse(const char *s, unsigned flags)
{
    return json_parse_object(s, strlen(s), flags, &O, E, sizeof E);
}

#define OK(s)                                                                              \
    do {                                                                                   \
        if (parse((s), 0) != 0)                                                            \
            fail_msg("rejected %s: %s", (s), E);                                           \
    } while (0)
/* Must be refused, with a message containing `why`. */
#define BAD(s, why)                                                                        \
    do {                                                                                   \
        if (parse((s), 0) == 0)                                                            \
            fail_msg("accepted %s", (s));                                                  \
        if (!strstr(E, (why)))                                                             \
            fail_msg("%s: message \"%s\" lacks \"%s\"", (s), E, (why));                    \
    } while (0)

static void test_types(void **state)
{
    (void)state;
    OK(" {\"a\":\"x\",\"b\":12,\"c\":true,\"d\":false,\"e\":null,\"f\":-1.5e3} \r\n");
    assert_int_equal(O.n, 6);
    const char *s;
    bool b;
    uint64_t u;
    double d;
    assert_int_equal(json_get_str(&O, "a", &s), 1);
    assert_string_equal(s, "x");
    assert_int_equal(json_get_u64(&O, "b", &u), 1);
    assert_int_equal(u, 12);
    assert_int_equal(json_get_bool(&O, "c", &b), 1);
    assert_true(b);
    assert_int_equal(json_get_bool(&O, "d", &b), 1);
    assert_false(b);
    assert_int_equal(json_get(&O, "e")->type, JSON_NULL);
    assert_int_equal(json_get_double(&O, "f", &d), 1);
    assert_true(d == -1500.0);
    /* wrong type, absent */
    assert_int_equal(json_get_str(&O, "b", &s), -1);
    assert_int_equal(json_get_bool(&O, "a", &b), -1);
    assert_int_equal(json_get_u64(&O, "a", &u), -1);
    assert_int_equal(json_get_u64(&O, "zz", &u), 0);
    OK("{}");
    assert_int_equal(O.n, 0);
}

static void test_integers(void **state)
{
    (void)state;
    uint64_t u = 7;
    OK("{\"a\":18446744073709551615,\"b\":18446744073709551616,\"c\":3.0,\"d\":-3,\"e\":3e0,"
       "\"f\":0}");
    assert_int_equal(json_get_u64(&O, "a", &u), 1);
    assert_true(u == UINT64_MAX);
    assert_int_equal(json_get_u64(&O, "b", &u), -1); /* overflow */
    assert_int_equal(json_get_u64(&O, "c", &u), -1); /* not written as an integer */
    assert_int_equal(json_get_u64(&O, "d", &u), -1);
    assert_int_equal(json_get_u64(&O, "e", &u), -1);
    assert_int_equal(json_get_u64(&O, "f", &u), 1);
    assert_int_equal(u, 0);
    double d;
    OK("{\"big\":1e400}");
    assert_int_equal(json_get_double(&O, "big", &d), -1); /* infinite */
}

static void test_strings(void **state)
{
    (void)state;
    const char *s;
    OK("{\"k\":\"a\\\"b\\\\c\\/d\\n\\t\\u00e9\\ud83d\\ude00\"}");
    assert_int_equal(json_get_str(&O, "k", &s), 1);
    assert_string_equal(s, "a\"b\\c/d\n\t\xc3\xa9\xf0\x9f\x98\x80");
    OK("{\"k\":\"caf\xc3\xa9\"}");
    BAD("{\"k\":\"a\\u0000b\"}", "\\u0000");
    BAD("{\"k\":\"a\x01\"}", "control character");
    BAD("{\"k\":\"\xc3\"}", "UTF-8");
    BAD("{\"k\":\"\xc0\xaf\"}", "UTF-8");              /* overlong '/' */
    BAD("{\"k\":\"\xed\xa0\x80\"}", "UTF-8");          /* encoded surrogate */
    BAD("{\"k\":\"\\ud83d\"}", "surrogate");
    BAD("{\"k\":\"\\ude00\"}", "surrogate");
    BAD("{\"k\":\"\\x41\"}", "unknown escape");
    BAD("{\"k\":\"\\u12\"}", "escape");
    BAD("{\"k\":\"abc", "unterminated");
    BAD("{\"k\":'abc'}", "expected a value");
}

static void test_syntax_errors(void **state)
{
    (void)state;
    BAD("", "expected '{'");
    BAD("[1,2]", "expected '{'");
    BAD("\"x\"", "expected '{'");
    BAD("{", "unexpected end");
    BAD("{\"a\":1", "unexpected end");
    BAD("{\"a\" 1}", "expected ':'");
    BAD("{\"a\":1,}", "expected a string");
    BAD("{a:1}", "expected a string");
    BAD("{\"a\":1}{}", "after the object");
    BAD("{\"a\":1} x", "after the object");
    BAD("{\"a\":01}", "leading zero");
    BAD("{\"a\":1.}", "digit after '.'");
    BAD("{\"a\":1e}", "exponent");
    BAD("{\"a\":-}", "bad number");
    BAD("{\"a\":+1}", "expected a value");
    BAD("{\"a\":tru}", "expected a value");
    BAD("{\"a\":nulls}", "expected ','");
    BAD("{\"a\":1,\"a\":2}", "duplicate field \"a\"");
    BAD("{\"a\":{\"b\":1}}", "nested objects are not allowed");
    BAD("{\"a\":[1]}", "nested arrays are not allowed");
    /* errors say where */
    BAD("{\"a\":1,  x}", "column 10");
}

static void test_limits(void **state)
{
    (void)state;
    char buf[JSON_MAX_TEXT + 64];
    /* key length */
    OK("{\"0123456789012345678901234567890\":1}");
    BAD("{\"01234567890123456789012345678901\":1}", "key too long");
    /* field count */
    size_t n = 0;
    n += (size_t)sprintf(buf + n, "{");
    for (int i = 0; i < JSON_MAX_FIELDS; i++)
        n += (size_t)sprintf(buf + n, "%s\"k%d\":%d", i ? "," : "", i, i);
    sprintf(buf + n, "}");
    OK(buf);
    assert_int_equal(O.n, JSON_MAX_FIELDS);
    sprintf(buf + n, ",\"one_more\":1}");
    BAD(buf, "more than");
    /* input length */
    memset(buf, ' ', sizeof buf);
    buf[0] = '{';
    buf[JSON_MAX_TEXT - 1] = '}';
    buf[JSON_MAX_TEXT] = 0;
    OK(buf);
    buf[JSON_MAX_TEXT - 1] = ' ';
    buf[JSON_MAX_TEXT] = '}';
    buf[JSON_MAX_TEXT + 1] = 0;
    BAD(buf, "longer than");
    /* one long string uses most of the arena */
    buf[0] = 0;
    strcat(buf, "{\"s\":\"");
    size_t l = strlen(buf);
    memset(buf + l, 'x', JSON_MAX_TEXT - 10);
    strcpy(buf + l + JSON_MAX_TEXT - 10, "\"}");
    OK(buf);
    assert_int_equal(json_get(&O, "s")->strlen, JSON_MAX_TEXT - 10);
}

static void test_nested(void **state)
{
    (void)state;
    const char *s = "{\"ok\":true,\"status\":{\"a\":1,\"ph\":{\"x\":[1,{\"y\":null}]}},\"l\":[]}";
    assert_int_equal(parse(s, JSON_ALLOW_NESTED), 0);
    const struct json_field *f = json_get(&O, "status");
    assert_non_null(f);
    assert_int_equal(f->type, JSON_OBJECT);
    char inner[128];
    snprintf(inner, sizeof inner, "%.*s", (int)f->rawlen, f->raw);
    assert_string_equal(inner, "{\"a\":1,\"ph\":{\"x\":[1,{\"y\":null}]}}");
    assert_int_equal(json_get(&O, "l")->type, JSON_ARRAY);
    /* the raw text is itself parseable */
    static struct json_obj in;
    assert_int_equal(json_parse_object(f->raw, f->rawlen, JSON_ALLOW_NESTED, &in, E, sizeof E), 0);
    assert_int_equal(in.n, 2);
    /* depth limit, and malformed nesting */
    char deep[200] = "{\"a\":";
    for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
        strcat(deep, "[");
    for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
        strcat(deep, "]");
    strcat(deep, "}");
    assert_int_equal(parse(deep, JSON_ALLOW_NESTED), -1);
    assert_non_null(strstr(E, "nested more than"));
    assert_int_equal(parse("{\"a\":[1,]}", JSON_ALLOW_NESTED), -1);
    assert_int_equal(parse("{\"a\":{\"b\"}}", JSON_ALLOW_NESTED), -1);
    assert_int_equal(parse("{\"a\":[1}", JSON_ALLOW_NESTED), -1);
}

/* Random mutations of valid messages: the reader must never crash or read out of bounds
 * (run under ASan by `make asan`), and whatever it accepts must look like an object. */
static void test_mutations(void **state)
{
    (void)state;
    static const char *seeds[] = {
        "{\"cmd\":\"attach\",\"rate\":5,\"strategy\":\"pct\",\"depth\":3,\"follow\":true}",
        "{\"a\":\"\\u00e9\\ud83d\\ude00\",\"b\":[1,{\"c\":null}],\"d\":-0.5e-3}",
    };
    uint64_t rng = 12345;
    char buf[256];
    for (int it = 0; it < 20000; it++) {
        const char *seed = seeds[it % 2];
        size_t n = strlen(seed);
        memcpy(buf, seed, n);
        int edits = 1 + (int)(rng % 4);
        for (int e = 0; e < edits; e++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)(rng >> 33) % n;
            switch ((rng >> 20) % 3) {
            case 0: buf[pos] = (char)(rng >> 40); break;           /* replace */
            case 1: n = pos; break;                                /* truncate */
            case 2: if (n < sizeof buf - 1) { memmove(buf + pos + 1, buf + pos, n - pos); buf[pos] = "{}[]\",:\\"[(rng >> 45) % 8]; n++; } break;
            }
            if (!n)
                break;
        }
        /* not NUL-terminated on purpose: the reader must respect len */
        char *copy = malloc(n ? n : 1);
        memcpy(copy, buf, n);
        int r = json_parse_object(copy, n, (unsigned)(it & 1), &O, E, sizeof E);
        if (r == 0)
            assert_true(n >= 2);
        else
            assert_true(E[0] != 0);
        free(copy);
    }
}

static void test_writer(void **state)
{
    (void)state;
    char buf[64];
    struct jbuf b;
    jb_init(&b, buf, sizeof buf);
    jb_raw(&b, "{\"s\":");
    jb_str(&b, "a\"b\\c\n\x01\xff\xc3\xa9");
    jb_printf(&b, ",\"n\":%d}", 42);
    assert_int_equal(jb_ok(&b), 0);
    assert_string_equal(buf, "{\"s\":\"a\\\"b\\\\c\\u000a\\u0001\\ufffd\xc3\xa9\",\"n\":42}");
    /* what we write, we read back */
    assert_int_equal(parse(buf, 0), 0);
    const char *s;
    assert_int_equal(json_get_str(&O, "s", &s), 1);
    assert_string_equal(s, "a\"b\\c\n\x01\xef\xbf\xbd\xc3\xa9");
    /* overflow is sticky and leaves a terminated prefix */
    char small[8];
    jb_init(&b, small, sizeof small);
    jb_raw(&b, "1234");
    jb_raw(&b, "5678");
    jb_raw(&b, "9");
    assert_int_equal(jb_ok(&b), -1);
    assert_string_equal(small, "1234");
    jb_init(&b, small, sizeof small);
    jb_printf(&b, "%s", "too long for it");
    assert_int_equal(jb_ok(&b), -1);
}

/* json_find / json_array_next / json_decode_string: a jinx-vmm --report file, which may
 * be longer than JSON_MAX_TEXT. */
static void test_find_large(void **state)
{
    (void)state;
    size_t cap = 3 * JSON_MAX_TEXT;
    char *doc = malloc(cap);
    assert_non_null(doc);
    int k = snprintf(doc, cap, "{\"outcome\":\"signal\",\"backtrace\":[");
    for (int i = 0; i < 400; i++)
        k += snprintf(doc + k, cap - (size_t)k, "%s{\"pc\":\"0x%x\",\"symbol\":\"f%d\"}",
                      i ? "," : "", i, i);
    k += snprintf(doc + k, cap - (size_t)k, "],\"limits\":[{\"kind\":\"threads\",\"what\":"
                  "\"a\\u0041\",\"option\":\"\",\"count\":2},{\"kind\":\"memory\"}],"
                  "\"stderr_tail\":\"line 1\\nline \\\"2\\\"\"}\n");
    assert_true((size_t)k > JSON_MAX_TEXT && (size_t)k < cap);
    const char *raw;
    size_t len;
    assert_int_equal(json_find(doc, (size_t)k, "limits", &raw, &len, E, sizeof E), 1);
    size_t pos = 0;
    const char *el;
    size_t elen;
    assert_int_equal(json_array_next(raw, len, &pos, &el, &elen), 1);
    assert_int_equal(json_parse_object(el, elen, 0, &O, E, sizeof E), 0);
    const char *what;
    assert_int_equal(json_get_str(&O, "what", &what), 1);
    assert_string_equal(what, "aA");
    assert_int_equal(json_array_next(raw, len, &pos, &el, &elen), 1);
    assert_int_equal(json_array_next(raw, len, &pos, &el, &elen), 0);
    assert_int_equal(json_find(doc, (size_t)k, "stderr_tail", &raw, &len, E, sizeof E), 1);
    char tail[64];
    assert_int_equal(json_decode_string(raw, len, tail, sizeof tail), 0);
    assert_string_equal(tail, "line 1\nline \"2\"");
    assert_int_equal(json_decode_string(raw, len, tail, 5), -1); /* does not fit */
    assert_int_equal(json_find(doc, (size_t)k, "nope", &raw, &len, E, sizeof E), 0);
    /* Anything malformed anywhere is refused, also after the key looked for. */
    doc[k - 3] = ',';
    assert_int_equal(json_find(doc, (size_t)k, "limits", &raw, &len, E, sizeof E), -1);
    free(doc);
    assert_int_equal(json_find("[1]", 3, "a", &raw, &len, E, sizeof E), -1);
    assert_int_equal(json_find("{\"a\":1} x", 9, "a", &raw, &len, E, sizeof E), -1);
    /* Arrays: empty, nested, malformed. */
    pos = 0;
    assert_int_equal(json_array_next(" [ ] ", 5, &pos, &el, &elen), 0);
    pos = 0;
    assert_int_equal(json_array_next("[[1,2],{}]", 10, &pos, &el, &elen), 1);
    assert_int_equal(elen, 5);
    assert_int_equal(json_array_next("[[1,2],{}]", 10, &pos, &el, &elen), 1);
    assert_int_equal(elen, 2);
    assert_int_equal(json_array_next("[[1,2],{}]", 10, &pos, &el, &elen), 0);
    pos = 0;
    assert_int_equal(json_array_next("[1 2]", 5, &pos, &el, &elen), 1);
    assert_int_equal(json_array_next("[1 2]", 5, &pos, &el, &elen), -1);
    pos = 0;
    assert_int_equal(json_array_next("{}", 2, &pos, &el, &elen), -1);
    assert_int_equal(json_decode_string("12", 2, tail, sizeof tail), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),       cmocka_unit_test(test_integers),
        cmocka_unit_test(test_strings),     cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_limits),      cmocka_unit_test(test_nested),
        cmocka_unit_test(test_mutations),   cmocka_unit_test(test_writer),
        cmocka_unit_test(test_find_large),
    };
    const char *filter = getenv("JINX_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("vmm/json", tests, NULL, NULL);
}
