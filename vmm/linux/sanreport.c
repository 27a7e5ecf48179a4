#include "linux/sanreport.h"
#include <string.h>

/* A line of the text: [p, p+n), without its newline. */
struct line {
    const char *p;
    size_t n;
};

static bool next_line(const char *text, size_t len, size_t *pos, struct line *l)
{
    if (*pos >= len)
        return false;
    const char *s = text + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t n = nl ? (size_t)(nl - s) : len - *pos;
    l->p = s;
    l->n = n;
    *pos += n + (nl ? 1 : 0);
    return true;
}

/* Where needle occurs in the line, or NULL. */
static const char *find(const struct line *l, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; k <= l->n && i + k <= l->n; i++)
        if (!memcmp(l->p + i, needle, k))
            return l->p + i;
    return NULL;
}

/* Copies a line as printable ASCII ('?' for anything else), cut to cap - 1 bytes. */
static void keep(char *dst, size_t cap, const char *p, size_t n)
{
    size_t k = n < cap - 1 ? n : cap - 1;
    for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)p[i];
        dst[i] = c == '\t' || (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    dst[k] = 0;
}

/* A kind from the words at p (up to end): lower case, '-' between words, at most
 * max_words words, stopping at the first word that is not letters and '-' (a number, an
 * address, "(pid=1)") or at ':' / ','. */
static void kind_from(char *kind, const char *p, const char *end, int max_words)
{
    size_t k = 0;
    int words = 0;
    kind[0] = 0;
    while (p < end && words < max_words) {
        while (p < end && *p == ' ')
            p++;
        const char *w = p;
        while (p < end && *p != ' ' && *p != ':' && *p != ',')
            p++;
        bool ok = p > w;
        for (const char *c = w; c < p && ok; c++)
            ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '-' || *c == '_';
        if (!ok)
            break;
        size_t wl = (size_t)(p - w);
        if (k + (k ? 1 : 0) + wl >= SANREPORT_KIND_LEN)
            break;
        if (k)
            kind[k++] = '-';
        for (const char *c = w; c < p; c++)
            kind[k++] = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c == '_' ? '-' : *c;
        kind[k] = 0;
        words++;
        if (p < end && (*p == ':' || *p == ','))
            break;
    }
}

/* Words a tool's header gives its kind: ASan "heap-use-after-free on address ..", TSan
 * "data race (pid=..)", LSan "detected memory leaks", UBSan "signed integer overflow: ..". */
static int kind_words(const char *tool)
{
    return !strcmp(tool, "ubsan") ? 4 : !strcmp(tool, "tsan") ? 2 : !strcmp(tool, "lsan") ? 3 : 1;
}

/* A report whose header the tail no longer holds (a long one): its SUMMARY line. */
static bool summary_only(const char *text, size_t len, struct san_report *r)
{
    static const struct { const char *mark, *tool; } marks[] = {
        {"SUMMARY: AddressSanitizer: ", "asan"}, {"SUMMARY: ThreadSanitizer: ", "tsan"},
        {"SUMMARY: UndefinedBehaviorSanitizer: ", "ubsan"},
        {"SUMMARY: MemorySanitizer: ", "msan"}};
    size_t pos = 0;
    struct line l;
    while (next_line(text, len, &pos, &l))
        for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
            const char *at = find(&l, marks[i].mark);
            if (!at)
                continue;
            strcpy(r->tool, marks[i].tool);
            kind_from(r->kind, at + strlen(marks[i].mark), l.p + l.n, kind_words(r->tool));
            keep(r->lines[r->nlines++], SANREPORT_LINE_LEN, l.p, l.n);
            return true;
        }
    return false;
}

/* The header of a report, if l is one: its tool, and where its kind's words start. */
static bool header(const struct line *l, char *tool, const char **kind_at)
{
    static const struct { const char *mark, *tool; } marks[] = {
        {"ERROR: AddressSanitizer: ", "asan"}, {"ERROR: LeakSanitizer: ", "lsan"},
        {"WARNING: ThreadSanitizer: ", "tsan"}, {"WARNING: MemorySanitizer: ", "msan"},
        {": runtime error: ", "ubsan"}};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        const char *at = find(l, marks[i].mark);
        if (at) {
            strcpy(tool, marks[i].tool);
            *kind_at = at + strlen(marks[i].mark);
            return true;
        }
    }
    return false;
}

bool sanreport_parse(const char *text, size_t len, struct san_report *r)
{
    memset(r, 0, sizeof *r);
    if (!text)
        return false;
    size_t pos = 0;
    struct line l;
    const char *kind_at;
    bool in = false;
    while (next_line(text, len, &pos, &l)) {
        if (!in) {
            if (!header(&l, r->tool, &kind_at))
                continue;
            in = true;
            const char *end = l.p + l.n;
            /* "attempting double-free on 0x..": the kind is the word after "attempting". */
            if ((size_t)(end - kind_at) > 11 && !memcmp(kind_at, "attempting ", 11))
                kind_at += 11;
            /* UBSan's kind is its message's first words: "signed integer overflow". */
            kind_from(r->kind, kind_at, end, kind_words(r->tool));
            keep(r->lines[r->nlines++], SANREPORT_LINE_LEN, l.p, l.n);
            continue;
        }
        /* ASan's SUMMARY names the kind as its docs do ("double-free"); it ends the
         * report's lines. */
        const char *sum = find(&l, "SUMMARY: AddressSanitizer: ");
        if (sum && !strcmp(r->tool, "asan")) {
            const char *end = l.p + l.n;
            char k[SANREPORT_KIND_LEN];
            kind_from(k, sum + 27, end, 1);
            if (k[0]) {
                memset(r->kind, 0, sizeof r->kind); /* no bytes of the header's kind stay */
                strcpy(r->kind, k);
            }
            break;
        }
        if (r->nlines < SANREPORT_LINES && l.n && !(l.n >= 4 && !memcmp(l.p, "====", 4)))
            keep(r->lines[r->nlines++], SANREPORT_LINE_LEN, l.p, l.n);
        else if (r->nlines >= SANREPORT_LINES && strcmp(r->tool, "asan"))
            break; /* no SUMMARY to wait for */
    }
    if (!in && !summary_only(text, len, r)) {
        memset(r, 0, sizeof *r);
        return false;
    }
    if (!r->kind[0])
        strcpy(r->kind, "unknown");
    return true;
}

bool sanreport_valid(const char *tool, const char *kind)
{
    static const char *const tools[] = {"asan", "lsan", "ubsan", "tsan", "msan"};
    bool t = false;
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        t |= !strcmp(tool, tools[i]);
    size_t n = strlen(kind);
    if (!t || !n || n >= SANREPORT_KIND_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((kind[i] >= 'a' && kind[i] <= 'z') || (kind[i] >= '0' && kind[i] <= '9') ||
              kind[i] == '-'))
            return false;
    return true;
}
