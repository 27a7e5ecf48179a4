#include "kvm/pagecopy.h"
#include "kvm/layout.h"
#include <emmintrin.h>

void pagecopy_stream(void *dst, const void *src)
{
    const __m128i *s = src;
    __m128i *d = dst;
    /* Four lines' worth of loads in flight before their stores. */
    for (unsigned i = 0; i < PAGE_SIZE / 16; i += 16) {
        __m128i r[16];
        for (unsigned k = 0; k < 16; k++)
            r[k] = _mm_load_si128(s + i + k);
        for (unsigned k = 0; k < 16; k++)
            _mm_stream_si128(d + i + k, r[k]);
    }
}

void pagecopy_fence(void) { _mm_sfence(); }
