/*
 * wordcount-dup - a shared word-count table (chained hash buckets, a mutex per bucket)
 * whose insert looks the word up and inserts it in two separate critical sections. Four
 * workers count the words of their quarter of a shared text (WORDS word ids drawn from
 * a skewed vocabulary by a fixed generator). A word not found is inserted after the
 * bucket lock was dropped and taken again, so two workers that meet the same new word
 * at once both insert it: main finds the duplicate entry, SIGABRT in main.
 * 5 threads (main + 4), the bug involves 2, one preemption (a worker between its
 * lookup and its insert).
 *
 *   w1: lock b; lookup w: none; unlock [preempted]                   lock b; insert w; unlock
 *   w2:                          lock b; lookup w: none; unlock; lock b; insert w; unlock
 *
 * Shared accesses: ~20 per word (the text, the bucket lock and unlock, a chain walk of
 * up to 16 entries, the count), 4 x 25000 words: ~2e6 a run.
 *
 * Twin (wordcount-dup-ok): lookup and insert in one critical section.
 */
#include "corpus.h"

#define WORKERS 4
#define WORDS 100000
#define VOCAB 4096
#define BUCKETS 256

struct entry {
    int word;
    int count;
    struct entry *next;
};

static int text[WORDS];
static struct entry pool[VOCAB * WORKERS];
static atomic_int pool_used;
static struct entry *bucket[BUCKETS];
static pthread_mutex_t blk[BUCKETS];

static struct entry *lookup(int b, int w)
{
    for (struct entry *e = LOAD(bucket[b]); e; e = LOAD(e->next))
        if (LOAD(e->word) == w)
            return e;
    return NULL;
}

static void count_word(int w)
{
    int b = (int)(((unsigned)w * 2654435761u) >> 24) % BUCKETS;
    pthread_mutex_lock(&blk[b]);
    struct entry *e = lookup(b, w);
    if (e) {
        STORE(e->count, LOAD(e->count) + 1);
        pthread_mutex_unlock(&blk[b]);
        return;
    }
#if !FIXED
    pthread_mutex_unlock(&blk[b]);
    if (w == 17)
        WIDEN(2000000);
    pthread_mutex_lock(&blk[b]);               /* the lookup's answer may be stale now */
#endif
    e = &pool[atomic_fetch_add(&pool_used, 1)];
    e->word = w;
    e->count = 1;
    e->next = LOAD(bucket[b]);
    STORE(bucket[b], e);
    pthread_mutex_unlock(&blk[b]);
}

static void *worker(void *arg)
{
    int id = ARG_ID(arg), per = WORDS / WORKERS;
    for (int i = id * per; i < (id + 1) * per; i++)
        count_word(LOAD(text[i]));
    return NULL;
}

int main(void)
{
    static int want[VOCAB];
    uint64_t s = 0x2545F4914F6CDD1DULL;
    for (int i = 0; i < WORDS; i++) {
        uint64_t r = rng_next(&s);
        int w = (int)((r % VOCAB) * ((r >> 20) % VOCAB) / VOCAB);   /* skewed to small ids */
        text[i] = w;
        want[w]++;
    }
    for (int b = 0; b < BUCKETS; b++)
        pthread_mutex_init(&blk[b], NULL);
    run_ids(WORKERS, worker);
    static int seen[VOCAB];
    for (int b = 0; b < BUCKETS; b++)
        for (struct entry *e = bucket[b]; e; e = e->next) {
            CHECK(seen[e->word]++ == 0, "word %d has two entries", e->word);
            CHECK(e->count <= want[e->word], "word %d counted %d times, it occurs %d times",
                  e->word, e->count, want[e->word]);
        }
    for (int w = 0; w < VOCAB; w++)
        CHECK((want[w] > 0) == (seen[w] > 0), "word %d: %d occurrences, %d entries", w,
              want[w], seen[w]);
    PASS("wordcount-dup");
    return 0;
}
