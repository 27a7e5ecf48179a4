/* Unit tests for lazy mappings (vmm/linux/mm.c: MAP_NORESERVE and large anonymous
 * mappings backed at first touch, mm_fault) and the copies that back them
 * (gm_user_ptr's fault_in). Fixture in mm_fixture.h. No /dev/kvm needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/elfparse.h" /* PROT_R/W/X */
#include "kvm/guestmem.h"
#include "kvm/layout.h"
#include "linux/mm.h"

#include "mm_fixture.h"

#define TiB (1ULL << 40)

/* A reservation far beyond guest memory costs nothing until touched, then one frame per
 * page touched, with the VMA's protection; pages outside or untouched stay unbacked. */
static void test_lazy_reserve_and_touch(void **state)
{
    struct fx *f = *state;
    struct guestmem *gm = &f->gm;
    uint64_t used = gm->used;
    const uint64_t at = 0x100000000000ULL;
    assert_int_equal(mm_map_anon(&f->mm, at, 15 * TiB, RW, MM_FIXED, true), (int64_t)at);
    assert_int_equal(gm->used, used); /* no frame, no table */
    assert_true(mm_is_lazy(&f->mm, at, at + 15 * TiB));
    assert_int_equal(mm_fault(&f->mm, at + 5 * TiB + 123, true, false), 2);
    uint64_t e = pte_of(gm, at + 5 * TiB);
    assert_true(e & PTE_P);
    assert_true(e & PTE_W);
    assert_true(e & PTE_NX);
    assert_int_equal(f->mm.faulted, 1);
    /* Again: already there (another thread's fault) */
    assert_int_equal(mm_fault(&f->mm, at + 5 * TiB, false, false), 1);
    assert_int_equal(f->mm.faulted, 1);
    /* Not lazy, not mapped, or not allowed: a real fault */
    assert_int_equal(mm_fault(&f->mm, at - PG, false, false), 0);
    assert_int_equal(mm_fault(&f->mm, at + PG, false, true), 0); /* no PROT_X */
    assert_int_equal(pte_of(gm, at + PG), 0);
    assert_int_equal(mm_unmap(&f->mm, at, 15 * TiB), 0);
    assert_int_equal(mm_fault(&f->mm, at + 5 * TiB, true, false), 0);
    assert_no_leak(gm);
}

/* mprotect splits a lazy VMA and keeps it lazy: the protection of untouched pages is in
 * the VMA, that of touched ones in their PTEs too. */
static void test_lazy_mprotect(void **state)
{
    struct fx *f = *state;
    struct guestmem *gm = &f->gm;
    const uint64_t at = 0x600000000000ULL, len = 4 * TiB;
    assert_int_equal(mm_map_anon(&f->mm, at, len, 0, MM_FIXED, true), (int64_t)at);
    assert_int_equal(mm_fault(&f->mm, at, false, false), 0); /* PROT_NONE */
    assert_int_equal(mm_protect(&f->mm, at + 16 * PG, 4 * PG, RW), 0);
    assert_int_equal(f->mm.n, 3);
    assert_int_equal(mm_fault(&f->mm, at + 17 * PG, true, false), 2);
    assert_int_equal(mm_fault(&f->mm, at + 20 * PG, true, false), 0); /* past the RW part */
    /* Read-only now: the touched page loses W, a write is a real fault */
    assert_int_equal(mm_protect(&f->mm, at + 16 * PG, 4 * PG, PROT_R), 0);
    assert_false(pte_of(gm, at + 17 * PG) & PTE_W);
    assert_int_equal(mm_fault(&f->mm, at + 18 * PG, true, false), 0);
    assert_int_equal(mm_fault(&f->mm, at + 18 * PG, false, false), 2);
    /* Back to PROT_NONE: the VMAs merge again */
    assert_int_equal(mm_protect(&f->mm, at + 16 * PG, 4 * PG, 0), 0);
    assert_int_equal(f->mm.n, 1);
    assert_int_equal(mm_unmap(&f->mm, at, len), 0);
    assert_no_leak(gm);
}

/* A fixed eager mapping inside a lazy reservation (ASan's allocator regions) splits it;
 * the eager part is backed at once, the rest stays lazy. */
static void test_eager_inside_lazy(void **state)
{
    struct fx *f = *state;
    const uint64_t at = 0x600000000000ULL;
    assert_int_equal(mm_map_anon(&f->mm, at, TiB, 0, MM_FIXED, true), (int64_t)at);
    uint64_t used = f->gm.used;
    assert_int_equal(mm_map(&f->mm, at + 64 * PG, 2 * PG, RW, true), (int64_t)(at + 64 * PG));
    assert_true(f->gm.used >= used + 2);
    assert_true(pte_of(&f->gm, at + 64 * PG) & PTE_P);
    assert_int_equal(f->mm.n, 3);
    assert_false(mm_is_lazy(&f->mm, at + 64 * PG, at + 65 * PG));
    assert_true(mm_is_lazy(&f->mm, at + 66 * PG, at + 67 * PG));
    assert_int_equal(mm_unmap(&f->mm, at, TiB), 0);
    assert_no_leak(&f->gm);
}

/* Guest memory runs out at a touch, not at the mmap: -ENOMEM, counted as exhausted. */
static void test_lazy_exhausted(void **state)
{
    struct fx *f = *state;
    const uint64_t at = 0x200000000000ULL;
    assert_int_equal(mm_map_anon(&f->mm, at, 1ULL << 34, RW, MM_FIXED, true), (int64_t)at);
    uint64_t before = f->gm.exhausted;
    int r = 0;
    uint64_t va = at;
    for (; va < at + (64ULL << 20) && (r = mm_fault(&f->mm, va, true, false)) == 2; va += PG)
        ;
    assert_int_equal(r, -ENOMEM);
    assert_true(f->gm.exhausted > before);
    assert_int_equal(mm_unmap(&f->mm, at, 1ULL << 34), 0);
    assert_no_leak(&f->gm);
}

static bool fault_in(void *ctx, uint64_t va, bool write)
{
    return mm_fault(ctx, va, write, false) > 0;
}

/* The syscall layer's copies back untouched lazy pages (gm_user_ptr's fault_in). */
static void test_copy_into_lazy(void **state)
{
    struct fx *f = *state;
    const uint64_t at = 0x300000000000ULL;
    assert_int_equal(mm_map_anon(&f->mm, at, MM_LAZY_MIN, RW, MM_FIXED, true), (int64_t)at);
    char msg[] = "written by a syscall", back[sizeof msg];
    assert_false(copy_to_user(&f->gm, at + PG - 4, msg, sizeof msg)); /* no fault_in yet */
    f->gm.fault_in = fault_in;
    f->gm.fault_ctx = &f->mm;
    assert_true(copy_to_user(&f->gm, at + PG - 4, msg, sizeof msg)); /* two pages */
    assert_true(copy_from_user(&f->gm, back, at + PG - 4, sizeof back));
    assert_string_equal(back, msg);
    assert_int_equal(f->mm.faulted, 2);
    f->gm.fault_in = NULL;
    assert_int_equal(mm_unmap(&f->mm, at, MM_LAZY_MIN), 0);
    assert_no_leak(&f->gm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lazy_reserve_and_touch, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_lazy_mprotect, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_eager_inside_lazy, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_lazy_exhausted, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_copy_into_lazy, setup16, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
