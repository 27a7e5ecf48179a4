/* The list of non-executable file mappings that cpuidload.c remembers for a later
 * mprotect (vmm/linux/cpuidload.h): mappings are remembered, forgotten by munmap and by an
 * mprotect that makes them wholly executable, kept when only partly covered; and the
 * guest's threads may map at once (each on its own vCPU thread): no append is lost and
 * the list is allocated once (the race leaked one, found by LeakSanitizer in
 * guest-fuzz.sh's files checks). The file holds no CPUID instruction, so nothing here
 * touches guest memory. Also the patch table's kinds (cpuid, rdtsc, rdtscp per address). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/cpuidpatch.h"
#include "kvm/vm.h"
#include "linux/cpuidload.h"
#include "linux/elfparse.h" /* PROT_R/W/X */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PG 4096ULL
#define BASE 0x70000000ULL
#define THREADS 4
#define PER_THREAD 200 /* THREADS * PER_THREAD stays under cpuidload.c's MAX_REGIONS */

static struct vm *vm;
static int fd = -1;
static char path[64];

static int setup(void **state)
{
    (void)state;
    vm = calloc(1, sizeof *vm);
    snprintf(path, sizeof path, "/tmp/jinx-cpuidload-XXXXXX");
    fd = mkstemp(path);
    if (!vm || fd < 0)
        return -1;
    static const uint8_t zeroes[2 * 4096];
    if (write(fd, zeroes, sizeof zeroes) != (ssize_t)sizeof zeroes)
        return -1;
    vm->patches = cpuidpatch_new(); /* as where user CPUID is not trapped */
    vm->patch_kinds = PATCH_KIND_BIT(PATCH_CPUID);
    return vm->patches ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cpuidload_free(vm);
    cpuidpatch_unref(vm->patches);
    free(vm);
    close(fd);
    unlink(path);
    return 0;
}

static void map_ro(uint64_t at, uint64_t len)
{
    cpuidload_file_map(vm, path, fd, at, 0, len, PROT_R);
}

static void remembered_and_forgotten(void **state)
{
    (void)state;
    assert_int_equal(cpuidload_remembered(vm), 0);
    map_ro(BASE, 2 * PG);
    map_ro(BASE + 4 * PG, 2 * PG);
    map_ro(BASE + 8 * PG, 2 * PG);
    assert_int_equal(cpuidload_remembered(vm), 3);
    /* MAP_FIXED over a remembered mapping replaces it */
    map_ro(BASE, 2 * PG);
    assert_int_equal(cpuidload_remembered(vm), 3);
    /* munmap of a part forgets the whole mapping */
    cpuidload_unmapped(vm, BASE + PG, PG);
    assert_int_equal(cpuidload_remembered(vm), 2);
    /* mprotect without PROT_X: nothing to scan, nothing forgotten */
    cpuidload_mprotect(vm, BASE, 16 * PG, PROT_R | PROT_W);
    assert_int_equal(cpuidload_remembered(vm), 2);
    /* executable in part: kept for the rest; wholly: done, forgotten */
    cpuidload_mprotect(vm, BASE + 4 * PG, PG, PROT_R | PROT_X);
    assert_int_equal(cpuidload_remembered(vm), 2);
    cpuidload_mprotect(vm, BASE + 4 * PG, 2 * PG, PROT_R | PROT_X);
    assert_int_equal(cpuidload_remembered(vm), 1);
    cpuidload_mprotect(vm, BASE, 16 * PG, PROT_R | PROT_X);
    assert_int_equal(cpuidload_remembered(vm), 0);
    /* no patching VM: nothing remembered */
    struct cpuid_patches *p = vm->patches;
    vm->patches = NULL;
    map_ro(BASE, PG);
    assert_int_equal(cpuidload_remembered(vm), 0);
    vm->patches = p;
    /* a table given by a replay on a host that patches nothing: answered, never grown */
    vm->patch_kinds = 0;
    map_ro(BASE, PG);
    assert_int_equal(cpuidload_remembered(vm), 0);
}

/* The table's kinds (kvm/cpuidpatch.h): each address keeps the kind it was added with. */
static void table_kinds(void **state)
{
    (void)state;
    struct cpuid_patches *p = vm->patches;
    unsigned k = 99;
    assert_true(cpuidpatch_add_kind(p, 0x401010, PATCH_RDTSCP));
    assert_true(cpuidpatch_add(p, 0x401000));
    assert_true(cpuidpatch_add_kind(p, 0x401008, PATCH_RDTSC));
    assert_true(cpuidpatch_add_kind(p, 0x401008, PATCH_RDTSC)); /* again: a no-op */
    assert_false(cpuidpatch_add_kind(p, 0x401008, PATCH_CPUID)); /* another kind: refused */
    assert_false(cpuidpatch_add_kind(p, 0x401020, PATCH_NKINDS));
    assert_false(cpuidpatch_kind(p, 0x401020, &k));
    assert_true(cpuidpatch_kind(p, 0x401008, &k));
    assert_int_equal(k, PATCH_RDTSC);
    assert_true(cpuidpatch_has(p, 0x401010));
    uint64_t va[4];
    uint8_t kinds[4];
    assert_int_equal(cpuidpatch_sites_kinds(p, va, kinds, 4), 3);
    assert_int_equal(va[0], 0x401000);
    assert_int_equal(kinds[0], PATCH_CPUID);
    assert_int_equal(va[1], 0x401008);
    assert_int_equal(kinds[1], PATCH_RDTSC);
    assert_int_equal(va[2], 0x401010);
    assert_int_equal(kinds[2], PATCH_RDTSCP);
}

static pthread_barrier_t start;

static void *mapper(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg;
    pthread_barrier_wait(&start); /* all first mappings at once: the list's allocation */
    for (uint64_t i = 0; i < PER_THREAD; i++)
        map_ro(BASE + (t * PER_THREAD + i) * 2 * PG, PG);
    return NULL;
}

static void threads_map_at_once(void **state)
{
    (void)state;
    for (int round = 0; round < 50; round++) {
        pthread_t th[THREADS];
        assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
        for (uintptr_t t = 0; t < THREADS; t++)
            assert_int_equal(pthread_create(&th[t], NULL, mapper, (void *)t), 0);
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&start);
        if (cpuidload_remembered(vm) != THREADS * PER_THREAD)
            fail_msg("round %d: %zu mappings remembered, %d made", round,
                     cpuidload_remembered(vm), THREADS * PER_THREAD);
        cpuidload_free(vm); /* the next round allocates the list again */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(remembered_and_forgotten, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_map_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(table_kinds, setup, teardown),
    };
    return cmocka_run_group_tests_name("vmm/cpuidload", tests, NULL, NULL);
}
