/* The basics: the seeded generator, thread sets, the trace container and its
 * validation and printing, the hash map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdlib.h>
#include <string.h>

static void test_rng(void **st)
{
    (void)st;
    struct ex_rng a, b, c;
    ex_rng_seed(&a, 42);
    ex_rng_seed(&b, 42);
    ex_rng_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = ex_rng_next(&a);
        assert_int_equal(x, ex_rng_next(&b));
        differ += x != ex_rng_next(&c);
    }
    assert_int_equal(differ, 100);
    /* splitmix64's published first output for seed 0. */
    ex_rng_seed(&a, 0);
    assert_int_equal(ex_rng_next(&a), 0xe220a8397b1dcdafULL);
    /* below(): range and rough uniformity. */
    int hist[7] = { 0 };
    for (int i = 0; i < 70000; i++) {
        uint64_t v = ex_rng_below(&a, 7);
        assert_true(v < 7);
        hist[v]++;
    }
    for (int i = 0; i < 7; i++)
        assert_true(hist[i] > 9400 && hist[i] < 10600);
    assert_int_equal(ex_rng_below(&a, 0), 0);
    assert_int_equal(ex_rng_below(&a, 1), 0);
    assert_true(ex_rng_below(&a, UINT64_MAX) < UINT64_MAX);
    /* split: an independent, reproducible stream. */
    ex_rng_seed(&a, 5);
    ex_rng_seed(&b, 5);
    struct ex_rng s1 = ex_rng_split(&a), s2 = ex_rng_split(&b);
    assert_int_equal(ex_rng_next(&s1), ex_rng_next(&s2));
    assert_true(ex_rng_next(&s1) != ex_rng_next(&a));
    /* shuffle and sample. */
    uint32_t v[50], out[10];
    for (uint32_t i = 0; i < 50; i++)
        v[i] = i;
    ex_rng_shuffle_u32(&a, v, 50);
    uint64_t seen = 0;
    for (int i = 0; i < 50; i++)
        seen |= 1ULL << v[i];
    assert_int_equal(seen, (1ULL << 50) - 1);
    assert_int_equal(ex_rng_sample_u32(&a, v, 50, 10, out), 10);
    qsort(out, 10, sizeof *out, ex_cmp_u32);
    for (int i = 1; i < 10; i++)
        assert_true(out[i - 1] < out[i]);
    assert_int_equal(ex_rng_sample_u32(&a, v, 3, 10, out), 3);
}

static void test_tidset(void **st)
{
    (void)st;
    struct ex_tidset s;
    ex_tidset_clear(&s);
    assert_true(ex_tidset_empty(&s));
    assert_int_equal(ex_tidset_next_cyclic(&s, 0), 0);
    ex_tidset_add(&s, 3);
    ex_tidset_add(&s, 64);
    ex_tidset_add(&s, 255);
    ex_tidset_add(&s, 256); /* out of range: ignored */
    assert_int_equal(ex_tidset_count(&s), 3);
    assert_true(ex_tidset_has(&s, 64));
    assert_false(ex_tidset_has(&s, 63));
    assert_false(ex_tidset_has(&s, 1000));
    assert_int_equal(ex_tidset_next_cyclic(&s, 0), 3);
    assert_int_equal(ex_tidset_next_cyclic(&s, 3), 64);
    assert_int_equal(ex_tidset_next_cyclic(&s, 64), 255);
    assert_int_equal(ex_tidset_next_cyclic(&s, 255), 3);
    ex_tidset_del(&s, 3);
    assert_int_equal(ex_tidset_next_cyclic(&s, 255), 64);
    ex_tidset_clear(&s);
    ex_tidset_add(&s, 7);
    assert_int_equal(ex_tidset_next_cyclic(&s, 7), 7);
}

static void test_trace_container(void **st)
{
    (void)st;
    struct ex_trace t, c;
    ex_trace_init(&t);
    for (uint32_t i = 0; i < 1000; i++) {
        struct ex_event *e = ex_trace_access(&t, 1 + i % 3, EX_WRITE, 0x7000 + i, 4, 0, i);
        assert_non_null(e);
        assert_int_equal(e->seq, i);
        assert_int_equal(e->page, 0x7000);
    }
    struct ex_event e;
    memset(&e, 0, sizeof e);
    e.tid = 1;
    e.kind = EX_THREAD_CREATE;
    e.arg = 9;
    memset(e.sym, 'x', sizeof e.sym); /* unterminated: append terminates it */
    assert_non_null(ex_trace_append(&t, &e));
    assert_int_equal(t.nthreads, 9);
    assert_int_equal(strlen(t.ev[1000].sym), EX_SYM_LEN - 1);
    char why[100];
    assert_true(ex_trace_validate(&t, why, sizeof why));
    assert_int_equal(ex_trace_copy(&c, &t), 0);
    assert_int_equal(c.n, t.n);
    assert_memory_equal(c.ev, t.ev, t.n * sizeof *t.ev);
    c.ev[5].flags = 0x80;
    assert_false(ex_trace_validate(&c, why, sizeof why));
    assert_non_null(strstr(why, "event 5"));
    c.ev[5].flags = 0;
    c.ev[5].size = 5000;
    assert_false(ex_trace_validate(&c, why, sizeof why));
    c.ev[5].size = 4;
    c.ev[1000].arg = 1; /* creating itself */
    assert_false(ex_trace_validate(&c, why, sizeof why));
    ex_trace_free(&c);

    /* Divergence check. */
    assert_int_equal(ex_trace_copy(&c, &t), 0);
    assert_int_equal(ex_trace_first_difference(&t, &c), -1);
    strcpy(c.ev[3].sym, "other"); /* names do not count */
    assert_int_equal(ex_trace_first_difference(&t, &c), -1);
    c.ev[700].rip++;
    c.ev[900].tid = 2; /* was 1 */
    assert_int_equal(ex_trace_first_difference(&t, &c), 700);
    c.ev[700].rip--;
    assert_int_equal(ex_trace_first_difference(&t, &c), 900);
    c.n = 800;
    assert_int_equal(ex_trace_first_difference(&t, &c), 800);
    ex_trace_free(&c);
    ex_trace_free(&t);

    /* Overlap at the edges of the address space. */
    struct ex_event a = { .addr = UINT64_MAX - 3, .size = 4 }, b = { .addr = UINT64_MAX, .size = 8 };
    assert_true(ex_overlap(&a, &b));
    b.addr = 0;
    assert_false(ex_overlap(&a, &b));
    a.addr = 10, a.size = 0, b.addr = 10, b.size = 0;
    assert_true(ex_overlap(&a, &b));
}

static void test_printing(void **st)
{
    (void)st;
    struct ex_trace t;
    char *buf = NULL;
    size_t len = 0;
    ex_trace_init(&t);
    struct ex_event *e = ex_trace_access(&t, 1, EX_RMW, 0x1000, 4, EX_F_ATOMIC, 0x401234);
    strcpy(e->sym, "pthread_mutex_lock+20");
    strcpy(e->insn, "lock cmpxchg [rdi], esi");
    ex_trace_access(&t, 2, EX_READ, 0x1000, 4, 0, 0x401300);
    ex_trace_access(&t, 2, EX_READ, 0x9000, 4, 0, 0x401310); /* private: not in timeline */
    ex_trace_access(&t, 2, EX_WRITE, 0x7ff0, 8, EX_F_STACK, 0x401320); /* its own frame */
    ex_trace_sync(&t, 2, EX_FUTEX_WAKE, 0x1000, 1);
    FILE *f = open_memstream(&buf, &len);
    ex_trace_print(f, &t);
    fclose(f);
    assert_non_null(strstr(buf, "RMW(lock) 0x1000/4"));
    assert_non_null(strstr(buf, "W 0x7ff0/8 stack "));
    assert_null(strstr(buf, "0x1000/4 stack"));
    assert_non_null(strstr(buf, "pthread_mutex_lock+20"));
    assert_non_null(strstr(buf, "lock cmpxchg"));
    assert_non_null(strstr(buf, "futex_wake 0x1000 woke 1"));
    free(buf);
    f = open_memstream(&buf, &len);
    ex_trace_print_timeline(f, &t);
    fclose(f);
    assert_non_null(strstr(buf, "T1"));
    assert_non_null(strstr(buf, "R 0x1000/4"));
    assert_null(strstr(buf, "0x9000"));
    free(buf);
    ex_trace_free(&t);
}

static void test_u64map(void **st)
{
    (void)st;
    struct ex_u64map m;
    bool added;
    ex_u64map_init(&m);
    assert_null(ex_u64map_get(&m, 1));
    for (uint64_t k = 0; k < 20000; k++) {
        uint64_t *v = ex_u64map_put(&m, k * 4096, k, &added);
        assert_true(added);
        assert_int_equal(*v, k);
    }
    assert_int_equal(m.n, 20000);
    for (uint64_t k = 0; k < 20000; k++)
        assert_int_equal(*ex_u64map_get(&m, k * 4096), k);
    assert_null(ex_u64map_get(&m, 1));
    *ex_u64map_put(&m, 0, 99, &added) += 1;
    assert_false(added);
    assert_int_equal(*ex_u64map_get(&m, 0), 1);
    ex_u64map_clear(&m);
    assert_int_equal(m.n, 0);
    assert_null(ex_u64map_get(&m, 4096));
    ex_u64map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng),
        cmocka_unit_test(test_tidset),
        cmocka_unit_test(test_trace_container),
        cmocka_unit_test(test_printing),
        cmocka_unit_test(test_u64map),
    };
    return cmocka_run_group_tests_name("explorer: trace, rng, containers", tests, NULL, NULL);
}
