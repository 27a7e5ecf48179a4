/* Private file mappings filled through their frames (vmm/linux/files_map.c): the bytes
 * land at the right file offsets whatever the frames' order, zeroes past the end of the
 * file, pages without a frame skipped; and a MAP_FIXED mapping over read-only frames that
 * already hold its bytes keeps them (only the protection changes), while anything else
 * (other bytes, writable or missing pages) is left untouched for the ordinary path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/vm.h"
#include "linux/files_int.h"
#include "kvm/layout.h"
#include "linux/elfparse.h" /* PROT_R/W/X */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1ULL << 20)
#define PG PAGE_SIZE

#define A 0x70000000ULL
#define FILE_BYTES (3 * PG + 100) /* ends inside its fourth page */

static struct vm vm;
static int fd = -1;
static uint8_t want[4 * PG]; /* the file, then zeroes */

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof vm);
    char err[256];
    if (gm_init(&vm.gm, 16 * MiB, err, sizeof err) < 0)
        return -1;
    mm_init(&vm.mm, &vm.gm);
    char path[] = "/tmp/jinx-filemap-XXXXXX";
    fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    memset(want, 0, sizeof want);
    for (size_t i = 0; i < FILE_BYTES; i++)
        want[i] = (uint8_t)(i * 7 + i / PG);
    return write(fd, want, FILE_BYTES) == FILE_BYTES ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    close(fd);
    mm_destroy(&vm.mm);
    gm_destroy(&vm.gm);
    return 0;
}

static uint64_t frame_of(uint64_t va)
{
    uint64_t *pte = gm_pte(&vm.gm, va, false);
    return pte ? gm_pte_frame(*pte) : 0;
}

static uint64_t pte_of(uint64_t va)
{
    uint64_t *pte = gm_pte(&vm.gm, va, false);
    return pte ? *pte : 0;
}

/* Page i of [va...) holds the file's page `page` (its bytes, zeroes past the end). */
static void holds(uint64_t va, size_t page)
{
    uint64_t f = frame_of(va);
    assert_true(f != 0);
    assert_memory_equal(gm_ptr(&vm.gm, f), want + page * PG, PG);
}

static void fill_in_order(void **state)
{
    (void)state;
    assert_int_equal(mm_map(&vm.mm, A, 4 * PG, PROT_R, true), A);
    assert_int_equal(files_fill_frames(&vm, fd, A, 4 * PG, 0), 0);
    for (size_t i = 0; i < 4; i++)
        holds(A + i * PG, i);
    /* read-only to the guest all along: the fill went through the frames */
    assert_false(pte_of(A) & PTE_W);
    /* from an offset: page i holds the file's page i + 1, the last one all zeroes */
    assert_int_equal(mm_map(&vm.mm, A + 8 * PG, 4 * PG, PROT_R, true), A + 8 * PG);
    assert_int_equal(files_fill_frames(&vm, fd, A + 8 * PG, 4 * PG, PG), 0);
    for (size_t i = 0; i < 3; i++)
        holds(A + (8 + i) * PG, i + 1);
    static const uint8_t zero[PG];
    assert_memory_equal(gm_ptr(&vm.gm, frame_of(A + 11 * PG)), zero, PG);
}

/* Frames out of order and a page without a frame: each page still gets its own offset. */
static void fill_scattered(void **state)
{
    (void)state;
    uint64_t b = A + 64 * PG;
    /* interleave allocations so that neighbouring pages get frames far apart */
    assert_int_equal(mm_map(&vm.mm, b + 3 * PG, PG, PROT_R, true), b + 3 * PG);
    assert_int_equal(mm_map(&vm.mm, A + 32 * PG, PG, PROT_R, true), A + 32 * PG);
    assert_int_equal(mm_map(&vm.mm, b, PG, PROT_R, true), b);
    assert_int_equal(mm_map(&vm.mm, b + 2 * PG, PG, PROT_R, true), b + 2 * PG);
    assert_true(frame_of(b + 3 * PG) + PG != frame_of(b)); /* not in order */
    /* b + PG has no frame (never mapped) */
    assert_int_equal(files_fill_frames(&vm, fd, b, 4 * PG, 0), 0);
    holds(b, 0);
    assert_int_equal(frame_of(b + PG), 0);
    holds(b + 2 * PG, 2);
    holds(b + 3 * PG, 3);
}

static void over_same_keeps_frames(void **state)
{
    (void)state;
    assert_int_equal(mm_map(&vm.mm, A, 4 * PG, PROT_R, true), A);
    assert_int_equal(files_fill_frames(&vm, fd, A, 4 * PG, 0), 0);
    uint64_t f1 = frame_of(A + PG), f2 = frame_of(A + 2 * PG), used = vm.gm.used;
    /* ld.so's second mapping: the same offsets at the same places, now executable */
    assert_int_equal(files_map_over_same(&vm, fd, A + PG, 2 * PG, PROT_R | PROT_X, PG), 0);
    assert_int_equal(frame_of(A + PG), f1);
    assert_int_equal(frame_of(A + 2 * PG), f2);
    assert_int_equal(vm.gm.used, used);
    assert_false(pte_of(A + PG) & PTE_NX);
    assert_true(pte_of(A) & PTE_NX); /* outside the range: unchanged */
    holds(A + PG, 1);
    /* PROT_NONE over the same bytes: frames kept, not present */
    assert_int_equal(files_map_over_same(&vm, fd, A + 3 * PG, PG, 0, 3 * PG), 0);
    assert_false(pte_of(A + 3 * PG) & PTE_P);
    assert_int_equal(gm_pte_frame(pte_of(A + 3 * PG)), frame_of(A + 3 * PG));
}

static void over_other_left_alone(void **state)
{
    (void)state;
    assert_int_equal(mm_map(&vm.mm, A, 4 * PG, PROT_R, true), A);
    assert_int_equal(files_fill_frames(&vm, fd, A, 4 * PG, 0), 0);
    uint64_t before = pte_of(A + PG);
    /* other offsets: other bytes */
    assert_int_equal(files_map_over_same(&vm, fd, A + PG, PG, PROT_R | PROT_X, 0), -EAGAIN);
    assert_int_equal(pte_of(A + PG), before);
    /* one byte changed by the VMM (as a guest write to a once-writable page would) */
    ((uint8_t *)gm_ptr(&vm.gm, frame_of(A + 2 * PG)))[17] ^= 1;
    assert_int_equal(files_map_over_same(&vm, fd, A + PG, 2 * PG, PROT_R | PROT_X, PG),
                     -EAGAIN);
    assert_int_equal(pte_of(A + PG), before);
    /* writable pages: the guest could change them meanwhile */
    uint64_t w = A + 16 * PG;
    assert_int_equal(mm_map(&vm.mm, w, 2 * PG, PROT_R | PROT_W, true), w);
    assert_int_equal(files_fill_frames(&vm, fd, w, 2 * PG, 0), 0);
    assert_int_equal(files_map_over_same(&vm, fd, w, 2 * PG, PROT_R, 0), -EAGAIN);
    assert_true(pte_of(w) & PTE_W);
    /* partly unmapped, and unaligned */
    assert_int_equal(files_map_over_same(&vm, fd, A + 3 * PG, 2 * PG, PROT_R, 3 * PG), -EAGAIN);
    assert_int_equal(files_map_over_same(&vm, fd, A + 1, PG, PROT_R, 0), -EAGAIN);
    assert_int_equal(files_map_over_same(&vm, fd, A, 0, PROT_R, 0), -EAGAIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fill_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(fill_scattered, setup, teardown),
        cmocka_unit_test_setup_teardown(over_same_keeps_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(over_other_left_alone, setup, teardown),
    };
    return cmocka_run_group_tests_name("vmm/files_map", tests, NULL, NULL);
}
