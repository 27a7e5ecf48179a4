/* Little-endian byte encoding for the dump's record payloads: appending to a growable
 * buffer (struct dbuf) and reading through a bounds-checked cursor.
 *
 * The cursor treats its input as hostile: a read past the end returns zeros and sets
 * `bad`, so a parser reads a whole structure and checks `bad` once. Strings are u32
 * length + bytes, refused when they hold a NUL or do not fit the destination. */
#ifndef JINX_BYTES_H
#define JINX_BYTES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A growable byte buffer for the encoders; oom sticks once an append failed. */
struct dbuf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
};
void dbuf_free(struct dbuf *b);

void bput(struct dbuf *b, const void *p, size_t n);
void bput_u8(struct dbuf *b, uint8_t v);
void bput_u16(struct dbuf *b, uint16_t v);
void bput_u32(struct dbuf *b, uint32_t v);
void bput_u64(struct dbuf *b, uint64_t v);
/* u32 length + bytes; at most max bytes of s are written. */
void bput_str(struct dbuf *b, const char *s, size_t max);

struct bcur {
    const uint8_t *p;
    size_t left;
    bool bad;
};

static inline struct bcur bcur_make(const uint8_t *p, size_t len)
{
    struct bcur c = {.p = p, .left = len, .bad = false};
    return c;
}
/* Copies n bytes to dst (may be NULL: skip); false (and bad) when fewer remain. */
bool bget(struct bcur *c, void *dst, size_t n);
/* A pointer to the next n bytes (borrowed from the input), or NULL (and bad). */
const uint8_t *bget_ptr(struct bcur *c, size_t n);
uint8_t bget_u8(struct bcur *c);
uint16_t bget_u16(struct bcur *c);
uint32_t bget_u32(struct bcur *c);
uint64_t bget_u64(struct bcur *c);
/* A string into dst[cap] (NUL-terminated); false (and bad) when too long, cut short or
 * holding a NUL. */
bool bget_str(struct bcur *c, char *dst, size_t cap);

#endif
