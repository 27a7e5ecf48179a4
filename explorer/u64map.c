#include "u64map.h"
#include <stdlib.h>

void ex_u64map_init(struct ex_u64map *m)
{
    m->keys = m->vals = NULL;
    m->used = NULL;
    m->cap = m->n = 0;
}

void ex_u64map_free(struct ex_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    ex_u64map_init(m);
}

void ex_u64map_clear(struct ex_u64map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        m->used[i] = 0;
    m->n = 0;
}

static size_t slot_of(const struct ex_u64map *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)ex_hash_mix(key) & mask;
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

uint64_t *ex_u64map_get(const struct ex_u64map *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    size_t i = slot_of(m, key);
    return m->used[i] ? &m->vals[i] : NULL;
}

static int grow(struct ex_u64map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    struct ex_u64map g;
    g.keys = malloc(ncap * sizeof *g.keys);
    g.vals = malloc(ncap * sizeof *g.vals);
    g.used = calloc(ncap, 1);
    g.cap = ncap;
    g.n = m->n;
    if (!g.keys || !g.vals || !g.used) {
        free(g.keys);
        free(g.vals);
        free(g.used);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = slot_of(&g, m->keys[i]);
        g.used[j] = 1;
        g.keys[j] = m->keys[i];
        g.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = g;
    return 0;
}

uint64_t *ex_u64map_put(struct ex_u64map *m, uint64_t key, uint64_t init, bool *added)
{
    /* Keep the load factor under 1/2 so probe sequences stay short. */
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return NULL;
    size_t i = slot_of(m, key);
    if (added)
        *added = !m->used[i];
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->vals[i] = init;
        m->n++;
    }
    return &m->vals[i];
}

int ex_u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

int ex_u32_append(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 256;
        uint32_t *nv = ncap < SIZE_MAX / sizeof *nv ? realloc(*v, ncap * sizeof *nv) : NULL;
        if (!nv)
            return -1;
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = x;
    return 0;
}
