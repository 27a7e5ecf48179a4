/*
 * atom-check-null - single-variable atomicity violation (check then act): the reader
 * tests the shared pointer, then loads it again to use it; the closer clears it between.
 *
 * Like a log file handle that a shutdown path sets to NULL while a logger uses it. When
 * the reader is preempted between its check and its use and the closer runs, the reader
 * dereferences NULL: SIGSEGV in the reader. Three threads (main + 2), one preemption.
 *
 *   reader: if (log_buf != NULL)  [preempted]  log_buf->len += 1
 *   closer:                 log_buf = NULL
 *
 * Twin (atom-check-null-ok): the check and the use hold the mutex the closer takes.
 */
#include "corpus.h"

struct buf {
    long len;
    char data[56];
};

static struct buf the_buf;
static struct buf *log_buf = &the_buf;
static long written;

static void *reader(void *arg)
{
    (void)arg;
    FIX_LOCK();
    if (LOAD(log_buf) != NULL) {
        WIDEN(1000000);
        LOAD(log_buf)->len += 1;               /* the second load may see NULL */
        written++;
    }
    FIX_UNLOCK();
    return NULL;
}

static void *closer(void *arg)
{
    (void)arg;
    FIX_LOCK();
    STORE(log_buf, (struct buf *)NULL);
    FIX_UNLOCK();
    return NULL;
}

int main(void)
{
    pthread_t r, c;
    start_thread(&r, reader, NULL);
    start_thread(&c, closer, NULL);
    join_thread(r);
    join_thread(c);
    CHECK(the_buf.len == written, "len %ld, written %ld", the_buf.len, written);
    PASS("atom-check-null");
    return 0;
}
