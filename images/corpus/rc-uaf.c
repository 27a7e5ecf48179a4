/*
 * rc-uaf - reference-count race ending in use-after-free. get() and put() update the
 * count with a plain load and store. A get whose store lands after another thread's get
 * loses that increment; the count reaches 0 while main still holds its reference, put()
 * unmaps the object, and main's next use faults. SIGSEGV (in main). Three threads
 * (main + 2), two preemptions.
 *
 *   main holds 1 reference (refs = 1) and uses the object after joining the workers
 *   w0: get: r = refs (1) [p1]             refs = 2; use; put (refs 1)
 *   w1:               get (refs 2) [p2]                               use; put (0: unmap)
 *   main: use  -> SIGSEGV
 *
 * Twin (rc-uaf-ok): atomic increment and decrement.
 */
#include "corpus.h"
#include <sys/mman.h>

struct object {
    long refs;
    long uses;
};

static struct object *obj;

static void get(struct object *o, int widen)
{
#if FIXED
    (void)widen;
    __atomic_fetch_add(&o->refs, 1, __ATOMIC_RELAXED);
#else
    long r = LOAD(o->refs);
    if (widen)
        WIDEN(2000000);
    STORE(o->refs, r + 1);
#endif
}

static void put(struct object *o)
{
#if FIXED
    long r = __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL);
#else
    long r = LOAD(o->refs) - 1;
    STORE(o->refs, r);
#endif
    if (r == 0)
        munmap(o, 4096);     /* freed: any later access faults */
}

static void *worker(void *arg)
{
    int id = ARG_ID(arg);
    struct object *o = obj;
    if (id == 1)
        WIDEN(500000);
    get(o, id == 0);
    if (id == 1)
        WIDEN(4000000);
    __atomic_fetch_add(&o->uses, 1, __ATOMIC_RELAXED);
    put(o);
    return NULL;
}

int main(void)
{
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("rc-uaf: mmap");
        return 3;
    }
    obj = p;
    obj->refs = 1;
    run_ids(2, worker);
    long uses = LOAD(obj->uses);       /* faults if the object was freed under us */
    CHECK(uses == 2, "uses %ld", uses);
    put(obj);
    PASS("rc-uaf");
    return 0;
}
