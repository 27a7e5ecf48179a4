#include "lib/util.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *progname = "jinx-vmm";

void jx_set_progname(const char *name) { progname = name; }

void jx_verr(const char *what, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fprintf(stderr, "%s: %s%s%s\n", progname, what ? what : "", what ? ": " : "", buf);
}

void jx_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    jx_verr(NULL, fmt, ap);
    va_end(ap);
}

bool parse_u64(const char *s, uint64_t *out)
{
    /* Decimal, or hex with 0x: no octal surprises, no signs, no spaces. */
    int base = 10;
    if (s && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!s || !isxdigit((unsigned char)*s) || (base == 10 && !isdigit((unsigned char)*s)))
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static bool split_number(const char *s, uint64_t *num, const char **suffix)
{
    if (!s || !isdigit((unsigned char)*s))
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return false;
    *num = v;
    *suffix = end;
    return true;
}

bool parse_size(const char *s, uint64_t *out)
{
    uint64_t v, mul = 1;
    const char *suf;
    if (!split_number(s, &v, &suf))
        return false;
    if (!strcmp(suf, "") || !strcasecmp(suf, "b"))
        mul = 1;
    else if (!strcasecmp(suf, "k") || !strcasecmp(suf, "kib") || !strcasecmp(suf, "kb"))
        mul = 1ULL << 10;
    else if (!strcasecmp(suf, "m") || !strcasecmp(suf, "mib") || !strcasecmp(suf, "mb"))
        mul = 1ULL << 20;
    else if (!strcasecmp(suf, "g") || !strcasecmp(suf, "gib") || !strcasecmp(suf, "gb"))
        mul = 1ULL << 30;
    else
        return false;
    if (v > UINT64_MAX / mul)
        return false;
    *out = v * mul;
    return true;
}

bool parse_duration(const char *s, uint64_t *out_ns)
{
    uint64_t v, mul;
    const char *suf;
    if (!split_number(s, &v, &suf))
        return false;
    if (!strcmp(suf, "") || !strcmp(suf, "s"))
        mul = 1000000000ULL;
    else if (!strcmp(suf, "ms"))
        mul = 1000000ULL;
    else if (!strcmp(suf, "us"))
        mul = 1000ULL;
    else if (!strcmp(suf, "ns"))
        mul = 1;
    else if (!strcmp(suf, "m") || !strcmp(suf, "min"))
        mul = 60000000000ULL;
    else
        return false;
    if (v > UINT64_MAX / mul)
        return false;
    *out_ns = v * mul;
    return true;
}

uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int jx_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}
