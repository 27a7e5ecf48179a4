#include "lib/bytes.h"
#include <stdlib.h>

void dbuf_free(struct dbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void bput(struct dbuf *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (n > SIZE_MAX / 4 - b->len) {
        b->oom = true;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

void bput_u8(struct dbuf *b, uint8_t v) { bput(b, &v, 1); }

void bput_u16(struct dbuf *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    bput(b, x, 2);
}

void bput_u32(struct dbuf *b, uint32_t v)
{
    uint8_t x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    bput(b, x, 4);
}

void bput_u64(struct dbuf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    bput(b, x, 8);
}

void bput_str(struct dbuf *b, const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    bput_u32(b, (uint32_t)n);
    bput(b, s, n);
}

bool bget(struct bcur *c, void *dst, size_t n)
{
    if (c->bad || c->left < n) {
        c->bad = true;
        if (dst && n)
            memset(dst, 0, n);
        return false;
    }
    if (dst && n)
        memcpy(dst, c->p, n);
    c->p += n;
    c->left -= n;
    return true;
}

const uint8_t *bget_ptr(struct bcur *c, size_t n)
{
    const uint8_t *p = c->p;
    return bget(c, NULL, n) ? p : NULL;
}

uint8_t bget_u8(struct bcur *c)
{
    uint8_t x = 0;
    bget(c, &x, 1);
    return x;
}

uint16_t bget_u16(struct bcur *c)
{
    uint8_t x[2];
    bget(c, x, 2);
    return (uint16_t)(x[0] | x[1] << 8);
}

uint32_t bget_u32(struct bcur *c)
{
    uint8_t x[4];
    bget(c, x, 4);
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

uint64_t bget_u64(struct bcur *c)
{
    uint64_t lo = bget_u32(c);
    return lo | (uint64_t)bget_u32(c) << 32;
}

bool bget_str(struct bcur *c, char *dst, size_t cap)
{
    if (cap)
        dst[0] = '\0';
    uint32_t n = bget_u32(c);
    if (c->bad || cap == 0 || n >= cap || n > c->left || memchr(c->p, 0, n)) {
        c->bad = true;
        return false;
    }
    bget(c, dst, n);
    dst[n] = '\0';
    return true;
}
