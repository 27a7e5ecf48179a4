/* Reading a fuzz input a byte at a time (the harnesses that take a program of operations:
 * fuzz_ovl.c, fuzz_mm.c); past its end every byte reads as 0. */
#ifndef JINX_FUZZ_INPUT_H
#define JINX_FUZZ_INPUT_H
#include <stddef.h>
#include <stdint.h>

struct cur {
    const uint8_t *p;
    size_t n;
};

static inline unsigned take(struct cur *c)
{
    if (!c->n)
        return 0;
    c->n--;
    return *c->p++;
}

#endif
