/* The racing pair closest to the bug (race_pair.h). */
#include "dump/race_pair.h"
#include "explorer/explorer.h"
#include "lib/json.h"
#include <stdio.h>
#include <string.h>

static void side(const struct ex_event *e, char *out, size_t cap)
{
    char where[EX_SYM_LEN + 24];
    /* The symbol is the VMM's text, still from a file: keep printable ASCII only. */
    size_t k = 0;
    for (size_t i = 0; i < sizeof e->sym && e->sym[i] && k + 1 < sizeof where; i++) {
        unsigned char c = (unsigned char)e->sym[i];
        where[k++] = c > 0x20 && c < 0x7f ? (char)c : '?';
    }
    where[k] = '\0';
    if (!k)
        snprintf(where, sizeof where, "0x%llx", (unsigned long long)e->rip);
    snprintf(out, cap, "%s %s", where, ex_kind_name((enum ex_kind)e->kind));
}

/* The thread library's own lock words: its locks and condition variables read them
 * plainly on purpose (a fast path, checked again under an atomic), so their races are
 * benign and differ from run to run. */
static bool sync_internal(const struct ex_event *e)
{
    static const char *const prefixes[] = {"pthread_", "__pthread_", "___pthread_",
        "__private_cond", "__lock", "__unlock", "__wait", "__wake", "__timedwait", "__futex",
        "__syscall", "__lll_", "__GI___pthread", "__GI___lll", "sem_", "__sem_", "cnd_",
        "mtx_", "__condvar", "__cxa_guard", "call_once", "__once"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(e->sym, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

int race_pair_of_trace(const struct ex_trace *t, size_t from, char *a, char *b, size_t cap)
{
    a[0] = b[0] = '\0';
    struct ex_analysis an;
    if (ex_analyze(t, &an, NULL, 0) != EX_OK)
        return -1;
    /* Plain accesses of the program only (race_pair.h says why). */
    const struct ex_race *best = NULL;
    for (size_t i = 0; i < an.nraces; i++) {
        const struct ex_race *r = &an.races[i];
        const struct ex_event *x = &t->ev[r->a], *y = &t->ev[r->b];
        if (r->b < from || ex_is_atomic(x) || ex_is_atomic(y) || sync_internal(x) ||
            sync_internal(y))
            continue;
        if (!best || r->b < best->b || (r->b == best->b && r->a < best->a))
            best = r;
    }
    if (!best) {
        ex_analysis_free(&an);
        return 0;
    }
    char x[RACE_SIDE_LEN], y[RACE_SIDE_LEN];
    side(&t->ev[best->a], x, sizeof x);
    side(&t->ev[best->b], y, sizeof y);
    bool swap = strcmp(x, y) > 0;
    snprintf(a, cap, "%s", swap ? y : x);
    snprintf(b, cap, "%s", swap ? x : y);
    ex_analysis_free(&an);
    return 1;
}

int race_pair_of_round(const struct ex_trace *retired, const struct ex_trace *recorded,
                       char *a, char *b, size_t cap)
{
    long diff = ex_trace_first_difference(retired, recorded);
    return race_pair_of_trace(retired, diff < 0 ? retired->n : (size_t)diff, a, b, cap);
}

void race_pair_fput_json(FILE *f, bool has, const char *a, const char *b)
{
    if (!has) {
        fputs("null", f);
        return;
    }
    fputc('[', f);
    json_fput_str(f, a, true);
    fputc(',', f);
    json_fput_str(f, b, true);
    fputc(']', f);
}
