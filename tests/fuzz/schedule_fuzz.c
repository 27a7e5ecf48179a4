/* libFuzzer-compatible entry point for the schedule parsers.
 *
 * Wire it with, e.g.:
 *   int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
 *   { return explorer_fuzz_schedule(d, n); }
 * Besides "never crash, never leak", it checks the round trip: whatever a
 * parser accepts must print to text and JSON that parse back to the same
 * schedule, and printing must be canonical (print(parse(print(s))) ==
 * print(s)). A violation aborts, which the fuzzer reports. */
#include "explorer/explorer.h"
#include <stdlib.h>
#include <string.h>

static void check_round_trip(const struct ex_schedule *s)
{
    char *text = ex_schedule_to_text(s), *json = ex_schedule_to_json(s);
    struct ex_schedule a, b;
    struct ex_parse_error err;
    if (!text || !json)
        goto out; /* out of memory is not a bug */
    if (ex_schedule_parse_text(text, strlen(text), &a, &err) != 0 || !ex_schedule_equal(s, &a))
        abort();
    if (ex_schedule_parse_json(json, strlen(json), &b, &err) != 0 || !ex_schedule_equal(s, &b))
        abort();
    if (strcmp(b.note, s->note) != 0 && strlen(s->note) < EX_NOTE_LEN - 1)
        abort();
    /* A timer ending's names (call, ns, by, rip) are a comment in the text, like the note. */
    bool named = false;
    for (uint32_t i = 0; i < s->ntimers; i++)
        named |= s->timer[i].call[0] || s->timer[i].ns || s->timer[i].by || s->timer[i].rip;
    char *text2 = ex_schedule_to_text(&a);
    if (text2 && strcmp(text2, text) != 0 && !s->note[0] && !named)
        abort();
    free(text2);
    ex_schedule_free(&a);
    ex_schedule_free(&b);
out:
    free(text);
    free(json);
}

int explorer_fuzz_schedule(const uint8_t *data, size_t size)
{
    struct ex_schedule s;
    struct ex_parse_error err;
    const char *buf = (const char *)data;
    if (ex_schedule_parse_text(buf, size, &s, &err) == 0) {
        check_round_trip(&s);
        ex_schedule_free(&s);
    } else if (strnlen(err.msg, sizeof err.msg) == sizeof err.msg) {
        abort(); /* error messages are always terminated */
    }
    if (ex_schedule_parse_json(buf, size, &s, &err) == 0) {
        check_round_trip(&s);
        ex_schedule_free(&s);
    } else if (strnlen(err.msg, sizeof err.msg) == sizeof err.msg) {
        abort();
    }
    return 0;
}
