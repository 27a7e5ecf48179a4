/* libFuzzer harness for the control socket's request path (vmm/control/control_req.c over
 * lib/json.c): the input is one client line, as control.c hands it to
 * control_parse_request() once the newline is cut. Checked beyond "no crash, no leak":
 *  - a rejected line gets a non-empty, terminated error message (it becomes the reply);
 *  - an accepted request names a known command and its configuration passes
 *    round_config_check(), the validation round.c trusts;
 *  - the same line through the nested-object reader jinxctl uses on replies
 *    (JSON_ALLOW_NESTED), each nested object read again in turn, and every decoded string
 *    written back with the reply writer jb_str() parses to the same string. */
#include "control/control_req.h"
#include "lib/json.h"
#include "rounds/round_config.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(const char *err, size_t cap)
{
    if (!memchr(err, 0, cap) || !err[0])
        abort();
}

/* jb_str(s) read back as a JSON string must give s again. */
static void check_string_round_trip(const char *s, size_t len)
{
    static char text[6 * JSON_MAX_TEXT + 16];
    static struct json_obj back;
    struct jbuf b;
    jb_init(&b, text, sizeof text);
    jb_raw(&b, "{\"k\":");
    jb_str(&b, s);
    jb_raw(&b, "}");
    if (jb_ok(&b) < 0)
        abort(); /* six output bytes per input byte at most, and the input fit */
    if (b.n > JSON_MAX_TEXT)
        return; /* escapes made it longer than the reader takes: nothing to compare */
    char err[200];
    const char *got;
    if (json_parse_object(text, b.n, 0, &back, err, sizeof err) < 0 ||
        json_get_str(&back, "k", &got) != 1 || strlen(got) != len || memcmp(got, s, len))
        abort();
}

static void walk(const char *s, size_t len, int depth)
{
    struct json_obj *o = malloc(sizeof *o);
    if (!o)
        return;
    char err[200];
    if (json_parse_object(s, len, JSON_ALLOW_NESTED, o, err, sizeof err) < 0) {
        /* A nested object passed the outer syntax check, but the reader's own limits
         * (key length, field count, duplicate keys) apply only when it is read. */
        check_err(err, sizeof err);
        free(o);
        return;
    }
    if (depth > JSON_MAX_DEPTH)
        abort();
    for (int i = 0; i < o->n; i++) {
        const struct json_field *f = &o->f[i];
        if (json_get(o, f->key) != f)
            abort(); /* keys are unique */
        uint64_t u;
        double d;
        bool bv;
        const char *str;
        (void)json_field_u64(f, &u);
        (void)json_field_double(f, &d);
        (void)json_get_bool(o, f->key, &bv);
        if (json_get_str(o, f->key, &str) == 1) {
            if (strlen(str) != f->strlen)
                abort(); /* no NUL inside a decoded string */
            check_string_round_trip(str, f->strlen);
        }
        if (f->type == JSON_OBJECT)
            walk(f->raw, f->rawlen, depth + 1);
    }
    free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *line = (const char *)data;
    struct control_req req;
    char err[300];
    if (control_parse_request(line, size, &req, err, sizeof err) < 0) {
        check_err(err, sizeof err);
    } else {
        if (!strcmp(control_cmd_name(req.cmd), "?"))
            abort();
        char cerr[300];
        if (round_config_check(&req.cfg, cerr, sizeof cerr) < 0)
            abort();
    }
    if (size <= JSON_MAX_TEXT)
        walk(line, size, 0);
    return 0;
}
