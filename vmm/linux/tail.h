/* The last bytes the guest wrote to its stderr (fd 2), kept in a bounded ring so that a
 * bug report can show the program's last words (an assertion's text) without keeping
 * all of its output. Only real execution is kept: a sandboxed simulation's output is
 * dropped before it gets here (syscall.c). Thread-safe; pure host code, unit-tested. */
#ifndef JINX_TAIL_H
#define JINX_TAIL_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define TAIL_BYTES 16384      /* bytes kept: a sanitizer's whole report (sanreport.h) */
#define TAIL_LINES 10         /* lines a report shows */

struct tail {
    pthread_mutex_t lock;
    char buf[TAIL_BYTES];
    size_t head;              /* where the next byte goes */
    size_t len;               /* bytes held (<= TAIL_BYTES) */
    uint64_t total;           /* bytes ever written */
};

/* What the ring holds at one moment, to be put back later (a stress run that ended well
 * leaves no lines: rounds/explore_stress.c). */
struct tail_mark {
    char buf[TAIL_BYTES];
    size_t head, len;
    uint64_t total;
};

void tail_init(struct tail *t);
void tail_mark(struct tail *t, struct tail_mark *m);
void tail_rewind(struct tail *t, const struct tail_mark *m);
void tail_destroy(struct tail *t);
void tail_add(struct tail *t, const void *p, size_t n);
/* The last max_lines lines held (a final line without its newline counts), as text safe
 * for a terminal and for JSON: every byte other than printable ASCII, '\n' and '\t'
 * becomes '?'; no trailing newline. When the ring dropped the start of the first line,
 * it begins with "...". Returns the length written to out (NUL-terminated, cut to cap). */
size_t tail_lines(struct tail *t, int max_lines, char *out, size_t cap);

#endif
