/*
 * atom-vec-len - multi-variable atomicity violation: a vector whose length is bumped
 * before the new element is written.
 *
 * The appender stores len = 1 and then items[0]; the reader takes the length and reads
 * the last element, which must be nonzero (every item is). A reader between the two
 * stores gets 0: SIGABRT in the reader. Three threads (main + appender + reader), one
 * preemption.
 *
 *   appender: len = 1;  [preempted]                       items[0] = 7
 *   reader:             n = len; if (n) check(items[n-1] != 0)
 *
 * No twin.
 */
#include "corpus.h"

static int items[8];
static int len;

static void *appender(void *arg)
{
    (void)arg;
    int n = LOAD(len);
    STORE(len, n + 1);
    WIDEN(1000000);
    STORE(items[n], 7);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    int n = LOAD(len);
    if (n > 0) {
        int v = LOAD(items[n - 1]);
        CHECK(v != 0, "items[%d] is 0 while len is %d (length published first)", n - 1, n);
    }
    return NULL;
}

int main(void)
{
    pthread_t a, r;
    start_thread(&a, appender, NULL);
    start_thread(&r, reader, NULL);
    join_thread(a);
    join_thread(r);
    CHECK(len == 1 && items[0] == 7, "len %d items[0] %d", len, items[0]);
    PASS("atom-vec-len");
    return 0;
}
