/* SHA-256 (FIPS 180-4), small and dependency-free: dumps record the image's and the core
 * file's digests so that `jinxctl inspect` can refuse a dump read against the wrong build
 * or a corrupted core. Streaming: init, update any number of times, final. */
#ifndef JINX_SHA256_H
#define JINX_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

struct sha256 {
    uint32_t h[8];
    uint64_t bytes;         /* message length so far */
    uint8_t buf[64];
    size_t nbuf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);
/* One shot. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);
/* Digest of a whole file; -1 with errno set when it cannot be read. */
int sha256_file(const char *path, uint8_t out[SHA256_LEN]);
/* 64 lowercase hex digits and a NUL. */
void sha256_hex(const uint8_t d[SHA256_LEN], char out[2 * SHA256_LEN + 1]);

#endif
