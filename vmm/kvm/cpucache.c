/* The CPU model cache (cpucache.h). */
#include "kvm/cpucache.h"
#include "kvm/cpumodel.h"
#include "kvm/libvirtcpu.h"
#include "kvm/libvirtdl.h"
#include "lib/cachedir.h"
#include "lib/sha256.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "jinx-cpu-model-cache 1"
#define CPU_MAP_DIR "/usr/share/libvirt/cpu_map"

static const char *last = "none";

const char *cpucache_last(void) { return last; }

int cpucache_dir(char *out, size_t outlen) { return cachedir_path(out, outlen); }

static bool name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= CPUFEAT_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

static bool hex64(const char *s, size_t n)
{
    if (n != 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

char *cpucache_format(const char *model, const char *key_hex, const char *lib,
                      char *const *names, size_t n, size_t *len)
{
    size_t cap = 256 + strlen(model) + strlen(lib);
    for (size_t i = 0; i < n; i++) {
        if (!name_ok(names[i], strlen(names[i])))
            return NULL; /* a name the parser would refuse: not cached */
        cap += strlen(names[i]) + 1;
    }
    if (n > CPUFEAT_MAX || lib[0] != '/' || strchr(lib, '\n'))
        return NULL;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    size_t w = (size_t)snprintf(t, cap, MAGIC "\nmodel %s\nkey %s\nlibvirt %s\nfeatures %zu\n",
                                model, key_hex, lib, n);
    for (size_t i = 0; i < n && w < cap; i++)
        w += (size_t)snprintf(t + w, cap - w, "%s\n", names[i]);
    uint8_t d[SHA256_LEN];
    char hex[2 * SHA256_LEN + 1];
    sha256(t, w, d);
    sha256_hex(d, hex);
    w += (size_t)snprintf(t + w, cap - w, "sha256 %s\n", hex);
    if (w >= cap) {
        free(t);
        return NULL;
    }
    *len = w;
    return t;
}

/* The next line of [*p, end) without its '\n' (*ln, *lnlen), or false at the end. */
static bool next_line(const char **p, const char *end, const char **ln, size_t *lnlen)
{
    if (*p >= end)
        return false;
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl)
        return false;
    *ln = *p;
    *lnlen = (size_t)(nl - *p);
    *p = nl + 1;
    return true;
}

/* Line "word VALUE": VALUE's start and length, or false. */
static bool field(const char *ln, size_t n, const char *word, const char **v, size_t *vn)
{
    size_t k = strlen(word);
    if (n <= k + 1 || memcmp(ln, word, k) || ln[k] != ' ')
        return false;
    *v = ln + k + 1;
    *vn = n - k - 1;
    return true;
}

#define FAIL(...)                                                                          \
    do {                                                                                   \
        snprintf(why, whylen, __VA_ARGS__);                                                \
        goto fail;                                                                         \
    } while (0)

int cpucache_parse(const char *text, size_t len, const char *model, char *lib, size_t liblen,
                   char *key_out, char ***names, size_t *n, char *why, size_t whylen)
{
    *names = NULL;
    *n = 0;
    const char *p = text, *end = text + len, *ln, *v;
    size_t lnlen, vn, want = 0;
    if (len > CPUCACHE_MAX_BYTES || len < 80 || memchr(text, 0, len) || text[len - 1] != '\n')
        FAIL("not a cache file (size, NUL bytes or last line)");
    /* The checksum line is the last 72 bytes: "sha256 " + 64 hex + "\n". */
    const char *sum = end - 72;
    if (memcmp(sum, "sha256 ", 7) || !hex64(sum + 7, 64) || (sum > text && sum[-1] != '\n'))
        FAIL("no checksum line");
    uint8_t d[SHA256_LEN];
    char hex[2 * SHA256_LEN + 1];
    sha256(text, (size_t)(sum - text), d);
    sha256_hex(d, hex);
    if (memcmp(hex, sum + 7, 64))
        FAIL("checksum mismatch");
    end = sum;
    if (!next_line(&p, end, &ln, &lnlen) || lnlen != strlen(MAGIC) || memcmp(ln, MAGIC, lnlen))
        FAIL("not a jinx CPU model cache of this version");
    if (!next_line(&p, end, &ln, &lnlen) || !field(ln, lnlen, "model", &v, &vn) ||
        vn != strlen(model) || memcmp(v, model, vn))
        FAIL("another model's file");
    if (!next_line(&p, end, &ln, &lnlen) || !field(ln, lnlen, "key", &v, &vn) || !hex64(v, vn))
        FAIL("no key");
    memcpy(key_out, v, 64);
    key_out[64] = 0;
    if (!next_line(&p, end, &ln, &lnlen) || !field(ln, lnlen, "libvirt", &v, &vn) ||
        vn >= liblen || v[0] != '/' || memchr(v, 0, vn))
        FAIL("no libvirt path");
    memcpy(lib, v, vn);
    lib[vn] = 0;
    if (!next_line(&p, end, &ln, &lnlen) || !field(ln, lnlen, "features", &v, &vn) || vn > 4)
        FAIL("no feature count");
    for (size_t i = 0; i < vn; i++) {
        if (v[i] < '0' || v[i] > '9')
            FAIL("bad feature count");
        want = want * 10 + (size_t)(v[i] - '0');
    }
    if (want > CPUFEAT_MAX)
        FAIL("too many features");
    if (!(*names = calloc(want ? want : 1, sizeof **names)))
        FAIL("out of memory");
    for (; *n < want; (*n)++) {
        if (!next_line(&p, end, &ln, &lnlen) || !name_ok(ln, lnlen))
            FAIL("feature %zu: missing or not a feature name", *n + 1);
        if (!((*names)[*n] = strndup(ln, lnlen)))
            FAIL("out of memory");
    }
    if (p != end)
        FAIL("bytes after the features");
    return 0;
fail:
    libvirtcpu_free_names(*names, *n);
    *names = NULL;
    *n = 0;
    return -1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static void add_stat(struct sha256 *s, const char *tag, const struct stat *st)
{
    char line[256];
    int w = snprintf(line, sizeof line, "%s %llu %llu %lld %lld.%09ld\n", tag,
                     (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
                     (long long)st->st_size, (long long)st->st_mtim.tv_sec,
                     st->st_mtim.tv_nsec);
    sha256_update(s, line, (size_t)w);
}

int cpucache_key(const char *model, const char *lib, const char *cpu_map_dir, char out[65])
{
    struct stat st;
    if (!lib[0] || stat(lib, &st) < 0)
        return -1;
    struct sha256 s;
    sha256_init(&s);
    const char *llp = getenv("LD_LIBRARY_PATH");
    sha256_update(&s, MAGIC "\n", strlen(MAGIC) + 1);
    sha256_update(&s, model, strlen(model) + 1);
    sha256_update(&s, lib, strlen(lib) + 1);
    add_stat(&s, "lib", &st);
    sha256_update(&s, llp ? llp : "", llp ? strlen(llp) + 1 : 1);
    struct dirent **ents = NULL;
    int k = scandir(cpu_map_dir, &ents, NULL, by_name);
    int dfd = open(cpu_map_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; i < k; i++) {
        if (dfd >= 0 && ents[i]->d_name[0] != '.' &&
            fstatat(dfd, ents[i]->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            sha256_update(&s, ents[i]->d_name, strlen(ents[i]->d_name) + 1);
            add_stat(&s, "f", &st);
        }
        free(ents[i]);
    }
    free(ents);
    if (dfd >= 0)
        close(dfd);
    char nfiles[32];
    sha256_update(&s, nfiles, (size_t)snprintf(nfiles, sizeof nfiles, "files %d\n", k));
    uint8_t d[SHA256_LEN];
    sha256_final(&s, d);
    sha256_hex(d, out);
    return 0;
}

/* The cached names for model if the file at path is valid for this host now. */
static int lookup(const char *path, const char *model, char ***names, size_t *n)
{
    size_t len = 0;
    char *t = cachedir_read(path, CPUCACHE_MAX_BYTES, &len);
    if (!t)
        return -1;
    char lib[4096], key[65], now[65], why[128];
    int r = cpucache_parse(t, len, model, lib, sizeof lib, key, names, n, why, sizeof why);
    free(t);
    if (r == 0 && (cpucache_key(model, lib, CPU_MAP_DIR, now) < 0 || strcmp(now, key))) {
        libvirtcpu_free_names(*names, *n);
        *names = NULL;
        *n = 0;
        r = -1;
    }
    return r;
}

int cpucache_model_features(const char *model, char ***names, size_t *n, char *err,
                            size_t errlen)
{
    char dir[4096], path[4200];
    bool have_dir = cpumodel_name_ok(model) && cpucache_dir(dir, sizeof dir) == 0 &&
                    snprintf(path, sizeof path, "%s/cpu-model-%s.txt", dir, model) <
                        (int)sizeof path;
    if (have_dir && lookup(path, model, names, n) == 0) {
        last = "hit";
        return 0;
    }
    last = have_dir ? "unwritable" : "off";
    if (libvirtcpu_model_features(NULL, model, names, n, err, errlen) < 0)
        return -1;
    const struct libvirt_api *v = have_dir ? libvirt_api(err, errlen) : NULL;
    char key[65];
    if (!v || cpucache_key(model, v->path, CPU_MAP_DIR, key) < 0)
        return 0;
    size_t len;
    char *t = cpucache_format(model, key, v->path, *names, *n, &len);
    if (t && cachedir_write(dir, path, "cpu-model", t, len) == 0)
        last = "miss";
    free(t);
    return 0;
}
