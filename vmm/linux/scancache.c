/* The code-scan cache (scancache.h). */
#include "linux/scancache.h"
#include "lib/cachedir.h"
#include "lib/sha256.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "jinx-scan-cache 1"
#define SUM_LINE 72 /* "sha256 " + 64 hex digits + "\n" */

static atomic_uint hits, misses;

void scancache_counts(unsigned *h, unsigned *m)
{
    *h = atomic_load(&hits);
    *m = atomic_load(&misses);
}

void scancache_key(const struct stat *st, unsigned kinds, uint32_t engine, char out[65])
{
    char line[512];
    int w = snprintf(line, sizeof line,
                     MAGIC "\nkinds %u engine %u\ndev %llu ino %llu size %lld mtime %lld.%09ld "
                           "ctime %lld.%09ld\n",
                     kinds, engine, (unsigned long long)st->st_dev,
                     (unsigned long long)st->st_ino, (long long)st->st_size,
                     (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
                     (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
    uint8_t d[SHA256_LEN];
    sha256(line, (size_t)w, d);
    sha256_hex(d, out);
}

struct buf {
    char *p;
    size_t n, cap;
    bool oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (b->oom || w < 0 || (size_t)w >= sizeof line) {
        b->oom = true;
        return;
    }
    if (b->n + (size_t)w + 1 > b->cap) {
        size_t nc = (b->cap ? b->cap * 2 : 4096) + (size_t)w;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, line, (size_t)w + 1);
    b->n += (size_t)w;
}

char *scancache_format(const char *key, const struct cpuidscan *r, size_t *len)
{
    struct buf b = {0};
    put(&b, MAGIC "\nkey %s\n", key);
    for (size_t i = 0; i < r->n; i++)
        put(&b, "s %llu %u\n", (unsigned long long)r->sites[i], (unsigned)r->kind[i]);
    for (size_t i = 0; i < r->nu; i++)
        put(&b, "u %llu %u\n", (unsigned long long)r->unsure_at[i],
            (unsigned)r->unsure_at_kind[i]);
    put(&b, "count %zu %zu\n", r->n, r->nu);
    uint8_t d[SHA256_LEN];
    char hex[65];
    if (!b.oom) {
        sha256(b.p, b.n, d);
        sha256_hex(d, hex);
        put(&b, "sha256 %s\n", hex);
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    *len = b.n;
    return b.p;
}

/* A decimal number of 1..19 digits, nothing else, into *v. */
static bool num(const char *s, size_t n, uint64_t *v)
{
    if (n == 0 || n > 19)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return true;
}

/* Line "TAG A B" (one space each) of n bytes: its two numbers. */
static bool two_numbers(const char *ln, size_t n, const char *tag, uint64_t *a, uint64_t *b)
{
    size_t t = strlen(tag);
    if (n < t + 4 || memcmp(ln, tag, t) || ln[t] != ' ')
        return false;
    const char *p = ln + t + 1, *end = ln + n, *sp = memchr(p, ' ', (size_t)(end - p));
    return sp && num(p, (size_t)(sp - p), a) && num(sp + 1, (size_t)(end - sp - 1), b);
}

static int refuse(struct cpuidscan *r, char *why, size_t whylen, const char *msg, size_t line)
{
    cpuidscan_free(r);
    if (line)
        snprintf(why, whylen, "line %zu: %s", line, msg);
    else
        snprintf(why, whylen, "%s", msg);
    return -1;
}

int scancache_parse(const char *text, size_t len, const char *key, const uint8_t *data,
                    size_t size, unsigned kinds, struct cpuidscan *r, char *why, size_t whylen)
{
    memset(r, 0, sizeof *r);
    if (len < SUM_LINE || len > SCANCACHE_MAX_BYTES)
        return refuse(r, why, whylen, "too short or too long", 0);
    size_t body = len - SUM_LINE;
    const char *sum = text + body;
    uint8_t d[SHA256_LEN];
    char hex[65];
    sha256(text, body, d);
    sha256_hex(d, hex);
    if (memcmp(sum, "sha256 ", 7) || memcmp(sum + 7, hex, 64) || sum[71] != '\n')
        return refuse(r, why, whylen, "checksum does not match", 0);
    const char *p = text, *end = text + body;
    size_t line = 0;
    bool counted = false;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return refuse(r, why, whylen, "unterminated line", line + 1);
        size_t n = (size_t)(nl - p);
        const char *ln = p;
        p = nl + 1;
        line++;
        uint64_t a, b;
        if (line == 1) {
            if (n != strlen(MAGIC) || memcmp(ln, MAGIC, n))
                return refuse(r, why, whylen, "not a jinx scan cache file (magic)", line);
        } else if (line == 2) {
            if (n != 4 + strlen(key) || memcmp(ln, "key ", 4) || memcmp(ln + 4, key, n - 4))
                return refuse(r, why, whylen, "for another file or engine (key)", line);
        } else if (counted) {
            return refuse(r, why, whylen, "text after the count", line);
        } else if (two_numbers(ln, n, "count", &a, &b)) {
            if (a != r->n || b != r->nu)
                return refuse(r, why, whylen, "count does not match the entries", line);
            counted = true;
        } else if (n && (ln[0] == 's' || ln[0] == 'u') &&
                   two_numbers(ln, n, ln[0] == 's' ? "s" : "u", &a, &b)) {
            unsigned k = (unsigned)b, kl = patch_kind_len(k);
            if (b >= PATCH_NKINDS || !(kinds & PATCH_KIND_BIT(k)))
                return refuse(r, why, whylen, "a kind not scanned", line);
            if (a > size || kl > size - a || memcmp(data + a, patch_kind_bytes(k), kl))
                return refuse(r, why, whylen, "the file has no such instruction there", line);
            if ((ln[0] == 's' ? cpuidscan_add_site(r, a, k) : cpuidscan_add_unsure(r, a, k)) < 0)
                return refuse(r, why, whylen, "out of memory", line);
        } else {
            return refuse(r, why, whylen, "malformed line", line);
        }
    }
    if (!counted)
        return refuse(r, why, whylen, "no count line", line);
    return 0;
}

int scancache_scan(const struct stat *st, const uint8_t *data, size_t size, unsigned kinds,
                   struct cpuidscan *r)
{
    memset(r, 0, sizeof *r);
    char dir[4096], path[4200], key[65];
    bool have = st && cachedir_path(dir, sizeof dir) == 0;
    if (have) {
        scancache_key(st, kinds, cpuidscan_engine(), key);
        have = snprintf(path, sizeof path, "%s/scan-%.32s.txt", dir, key) < (int)sizeof path;
    }
    if (have) {
        size_t len = 0;
        char *t = cachedir_read(path, SCANCACHE_MAX_BYTES, &len), why[128];
        bool ok = t && scancache_parse(t, len, key, data, size, kinds, r, why, sizeof why) == 0;
        free(t);
        if (ok) {
            atomic_fetch_add(&hits, 1);
            return 0;
        }
    }
    atomic_fetch_add(&misses, 1);
    if (cpuidscan_file_kinds(data, size, 0, size, kinds, r) < 0)
        return -1;
    size_t len;
    char *t = have ? scancache_format(key, r, &len) : NULL;
    if (t && len <= SCANCACHE_MAX_BYTES)
        cachedir_write(dir, path, "scan", t, len);
    free(t);
    return 0;
}
