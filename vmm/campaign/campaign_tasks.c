/* tasks.tsv: formatting and strict parsing (format in campaign.h). */
#include "campaign/campaign.h"
#include "lib/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NFIELDS 7

int campaign_parse_seeds(const char *s, uint64_t *first, uint64_t *last)
{
    const char *dash = strchr(s, '-');
    char a[24];
    if (!dash || dash == s || (size_t)(dash - s) >= sizeof a)
        return -1;
    memcpy(a, s, (size_t)(dash - s));
    a[dash - s] = '\0';
    for (const char *c = s; *c; c++)
        if (c != dash && (*c < '0' || *c > '9'))
            return -1; /* decimal only: no "0x", no sign, no blanks */
    uint64_t x, y;
    if (!parse_u64(a, &x) || !parse_u64(dash + 1, &y) || x < 1 || y < x)
        return -1;
    *first = x;
    *last = y;
    return 0;
}

static int put(char *out, size_t cap, size_t *k, char c)
{
    if (*k + 1 >= cap)
        return -1;
    out[(*k)++] = c;
    out[*k] = '\0';
    return 0;
}

static int format_args(const struct camp_task *t, char *out, size_t cap, size_t *k)
{
    if (!t->nargs)
        return put(out, cap, k, '-');
    for (int i = 0; i < t->nargs; i++) {
        const char *a = t->args[i];
        if (i && put(out, cap, k, ' ') < 0)
            return -1;
        if (!strcmp(a, "-")) {
            if (put(out, cap, k, '\\') < 0 || put(out, cap, k, '-') < 0)
                return -1;
            continue;
        }
        for (; *a; a++) {
            char esc = *a == ' ' ? 's' : *a == '\t' ? 't' : *a == '\n' ? 'n'
                     : *a == '\\' ? '\\' : 0;
            if (esc ? put(out, cap, k, '\\') < 0 || put(out, cap, k, esc) < 0
                    : put(out, cap, k, *a) < 0)
                return -1;
        }
    }
    return 0;
}

int campaign_task_format(const struct camp_task *t, char *out, size_t cap)
{
    if (strpbrk(t->image, "\t\n\r") || !t->image[0] || strpbrk(t->strategy, "\t\n\r ") ||
        strpbrk(t->budget, "\t\n\r "))
        return -1;
    int n = snprintf(out, cap, "%u\t%s\t%s\t%llu-%llu\t%s\t%s\t", t->index, t->image,
                     t->sha256, (unsigned long long)t->first_seed,
                     (unsigned long long)t->last_seed, t->budget, t->strategy);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    size_t k = (size_t)n;
    return format_args(t, out, cap, &k);
}

static int parse_args(const char *s, struct camp_task *t, char *err, size_t errlen)
{
    t->nargs = 0;
    if (!strcmp(s, "-"))
        return 0;
    size_t k = 0;
    bool dash = false;     /* the argument is "\-", a whole "-" */
    int toks = 0;          /* characters and escapes in the current argument */
    for (const char *p = s;; p++) {
        if (*p == ' ' || !*p) {
            if (!toks)
                return jx_fail(err, errlen, "ARGS: an empty argument (ARGS empty, two "
                               "spaces, or a space at an end; - alone means none)");
            if (dash && toks != 1)
                return jx_fail(err, errlen, "ARGS: \\- stands for a whole argument \"-\"");
            if (t->nargs == CAMP_MAX_ARGS)
                return jx_fail(err, errlen, "ARGS: more than %d arguments", CAMP_MAX_ARGS);
            t->args[t->nargs][k] = '\0';
            t->nargs++;
            if (!*p)
                return 0;
            k = 0;
            toks = 0;
            dash = false;
            continue;
        }
        char c = *p;
        if ((unsigned char)c < 0x20 || c == 0x7f)
            return jx_fail(err, errlen, "ARGS: a control character (write \\t or \\n)");
        if (c == '\\') {
            char e = *++p;
            c = e == 's' ? ' ' : e == 't' ? '\t' : e == 'n' ? '\n' : e == '\\' ? '\\'
              : e == '-' ? '-' : 0;
            if (!c)
                return jx_fail(err, errlen, "ARGS: unknown escape '\\%c' (\\s \\t \\n \\\\ "
                               "\\- are known)", e >= 0x21 && e < 0x7f ? e : '?');
            dash |= e == '-';
        }
        if (t->nargs == CAMP_MAX_ARGS)
            return jx_fail(err, errlen, "ARGS: more than %d arguments", CAMP_MAX_ARGS);
        if (k + 1 >= CAMP_ARG_LEN)
            return jx_fail(err, errlen, "ARGS: an argument longer than %d bytes",
                           CAMP_ARG_LEN - 1);
        t->args[t->nargs][k++] = c;
        toks++;
    }
}

static bool is_hex64(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return false;
    return n == 2 * SHA256_LEN;
}

int campaign_task_parse(const char *line, struct camp_task *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    char buf[CAMP_MAX_LINE];
    size_t len = strlen(line);
    if (len >= sizeof buf)
        return jx_fail(err, errlen, "line longer than %d bytes", CAMP_MAX_LINE - 1);
    memcpy(buf, line, len + 1);
    char *f[NFIELDS];
    int n = 0;
    for (char *p = buf;;) {
        if (n == NFIELDS)
            return jx_fail(err, errlen, "more than %d tab-separated fields", NFIELDS);
        f[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    if (n != NFIELDS)
        return jx_fail(err, errlen, "%d tab-separated fields, expected %d (INDEX IMAGE SHA256 "
                       "SEEDS BUDGET STRATEGY ARGS)", n, NFIELDS);
    uint64_t v, ns;
    for (const char *c = f[0]; *c; c++)
        if (*c < '0' || *c > '9')
            return jx_fail(err, errlen, "INDEX '%.40s' is not a number", f[0]);
    if (!parse_u64(f[0], &v) || v >= CAMP_MAX_TASKS)
        return jx_fail(err, errlen, "INDEX '%.40s' is not a number below %d", f[0],
                       CAMP_MAX_TASKS);
    t->index = (uint32_t)v;
    if (!f[1][0] || strlen(f[1]) >= sizeof t->image)
        return jx_fail(err, errlen, "IMAGE is empty or longer than %zu bytes",
                       sizeof t->image - 1);
    for (const char *c = f[1]; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return jx_fail(err, errlen, "IMAGE has a control character");
    snprintf(t->image, sizeof t->image, "%s", f[1]);
    if (!is_hex64(f[2]))
        return jx_fail(err, errlen, "SHA256 '%.70s' is not 64 lowercase hex digits", f[2]);
    snprintf(t->sha256, sizeof t->sha256, "%s", f[2]);
    if (campaign_parse_seeds(f[3], &t->first_seed, &t->last_seed) < 0)
        return jx_fail(err, errlen, "SEEDS '%.40s' is not FIRST-LAST with 1 <= FIRST <= LAST",
                       f[3]);
    if (strlen(f[4]) >= sizeof t->budget || !parse_duration(f[4], &ns) || !ns)
        return jx_fail(err, errlen, "BUDGET '%.40s' is not a duration such as 60s", f[4]);
    snprintf(t->budget, sizeof t->budget, "%s", f[4]);
    if (!f[5][0] || strlen(f[5]) >= sizeof t->strategy)
        return jx_fail(err, errlen, "STRATEGY is empty or too long");
    for (const char *c = f[5]; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
            return jx_fail(err, errlen, "STRATEGY '%.40s' is not a strategy name", f[5]);
    snprintf(t->strategy, sizeof t->strategy, "%s", f[5]);
    return parse_args(f[6], t, err, errlen);
}

int campaign_tasks_parse(const char *text, size_t len, struct camp_tasks *ts, char *err,
                         size_t errlen)
{
    ts->t = NULL;
    ts->n = 0;
    if (memchr(text, '\0', len))
        return jx_fail(err, errlen, "a NUL byte (not a text file)");
    size_t cap = 0;
    char line[CAMP_MAX_LINE];
    int lineno = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - (text + pos)) : len - pos;
        lineno++;
        if (l >= sizeof line) {
            campaign_tasks_free(ts);
            return jx_fail(err, errlen, "line %d: longer than %d bytes", lineno,
                           CAMP_MAX_LINE - 1);
        }
        memcpy(line, text + pos, l);
        pos += l + (nl ? 1 : 0);
        if (l && line[l - 1] == '\r') /* a file edited on Windows */
            l--;
        line[l] = '\0';
        if (!l || line[0] == '#')
            continue;
        if (ts->n == CAMP_MAX_TASKS) {
            campaign_tasks_free(ts);
            return jx_fail(err, errlen, "line %d: more than %d tasks", lineno, CAMP_MAX_TASKS);
        }
        if (ts->n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            struct camp_task *nt = realloc(ts->t, nc * sizeof *nt);
            if (!nt) {
                campaign_tasks_free(ts);
                return jx_fail(err, errlen, "out of memory");
            }
            ts->t = nt;
            cap = nc;
        }
        char why[300];
        if (campaign_task_parse(line, &ts->t[ts->n], why, sizeof why) < 0) {
            campaign_tasks_free(ts);
            return jx_fail(err, errlen, "line %d: %s", lineno, why);
        }
        if (ts->t[ts->n].index != ts->n) {
            uint32_t got = ts->t[ts->n].index;
            size_t want = ts->n;
            campaign_tasks_free(ts);
            return jx_fail(err, errlen, "line %d: INDEX %u, expected %zu (tasks are numbered "
                           "0, 1, 2, ... in order)", lineno, got, want);
        }
        ts->n++;
    }
    if (!ts->n)
        return jx_fail(err, errlen, "no tasks (only comments or blank lines)");
    return 0;
}

int campaign_tasks_load(const char *dir, struct camp_tasks *ts, char *err, size_t errlen)
{
    char path[PATH_MAX];
    ts->t = NULL;
    ts->n = 0;
    if ((size_t)snprintf(path, sizeof path, "%s/tasks.tsv", dir) >= sizeof path)
        return jx_fail(err, errlen, "%s: path too long", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* never hang on a FIFO */
    FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
    if (!f) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return jx_fail(err, errlen, "cannot read %s: %s (make it with jinx campaign plan)",
                       path, strerror(e));
    }
    struct stat st;
    size_t cap = CAMP_MAX_TSV, n = 0;
    if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size >= cap) {
        fclose(f);
        return jx_fail(err, errlen, "%s: not a regular file of less than %zu bytes", path, cap);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        fclose(f);
        return jx_fail(err, errlen, "out of memory");
    }
    n = fread(buf, 1, (size_t)st.st_size + 1, f);
    bool whole = feof(f) && !ferror(f);
    fclose(f);
    if (!whole) {
        free(buf);
        return jx_fail(err, errlen, "%s: unreadable, or it grew while read", path);
    }
    char why[400];
    int rc = campaign_tasks_parse(buf, n, ts, why, sizeof why);
    free(buf);
    if (rc < 0)
        return jx_fail(err, errlen, "%s: %s", path, why);
    return 0;
}

void campaign_tasks_free(struct camp_tasks *ts)
{
    free(ts->t);
    ts->t = NULL;
    ts->n = 0;
}
