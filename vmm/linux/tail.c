#include "linux/tail.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void tail_init(struct tail *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
}

void tail_mark(struct tail *t, struct tail_mark *m)
{
    pthread_mutex_lock(&t->lock);
    memcpy(m->buf, t->buf, sizeof m->buf);
    m->head = t->head;
    m->len = t->len;
    m->total = t->total;
    pthread_mutex_unlock(&t->lock);
}

void tail_rewind(struct tail *t, const struct tail_mark *m)
{
    pthread_mutex_lock(&t->lock);
    memcpy(t->buf, m->buf, sizeof t->buf);
    t->head = m->head;
    t->len = m->len;
    t->total = m->total;
    pthread_mutex_unlock(&t->lock);
}

void tail_destroy(struct tail *t)
{
    pthread_mutex_destroy(&t->lock);
}

void tail_add(struct tail *t, const void *p, size_t n)
{
    const char *s = p;
    pthread_mutex_lock(&t->lock);
    t->total += n;
    if (n > TAIL_BYTES) {
        s += n - TAIL_BYTES;
        n = TAIL_BYTES;
    }
    for (size_t i = 0; i < n; i++) {
        t->buf[t->head] = s[i];
        t->head = (t->head + 1) % TAIL_BYTES;
    }
    t->len = t->len + n > TAIL_BYTES ? TAIL_BYTES : t->len + n;
    pthread_mutex_unlock(&t->lock);
}

size_t tail_lines(struct tail *t, int max_lines, char *out, size_t cap)
{
    if (!cap)
        return 0;
    out[0] = 0;
    /* On the heap: a vCPU thread's static TLS comes out of its 256K stack. */
    char *lin = malloc(TAIL_BYTES);
    if (!lin)
        return 0;
    pthread_mutex_lock(&t->lock);
    size_t n = t->len, first = (t->head + TAIL_BYTES - n) % TAIL_BYTES;
    for (size_t i = 0; i < n; i++)
        lin[i] = t->buf[(first + i) % TAIL_BYTES];
    bool cut = t->total > n;
    pthread_mutex_unlock(&t->lock);
    /* Drop trailing newlines, then walk back over max_lines lines. */
    while (n && lin[n - 1] == '\n')
        n--;
    size_t start = n;
    int lines = 0;
    while (start > 0 && max_lines > 0) {
        if (lin[start - 1] == '\n') {
            if (++lines == max_lines)
                break;
        }
        start--;
    }
    if (start > 0)
        cut = false; /* starts at a line boundary inside what is held */
    size_t k = 0;
    if (cut && cap > 4) {
        memcpy(out, "...", 3);
        k = 3;
    }
    for (size_t i = start; i < n && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)lin[i];
        out[k++] = (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) ? (char)c : '?';
    }
    out[k] = 0;
    free(lin);
    return k;
}
