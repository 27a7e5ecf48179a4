/* Shared libraries in the live VM's backtraces (vmlibs.h). */
#include "linux/vmlibs.h"
#include "kvm/vm.h"
#include "linux/backtrace.h"
#include "linux/files.h"
#include "linux/libsyms.h"
#include "linux/pathconf.h"
#include "linux/santext.h"
#include <string.h>

static struct libsyms *cache(struct vm *vm)
{
    struct libsyms *ls = __atomic_load_n(&vm->libsyms, __ATOMIC_ACQUIRE);
    if (ls)
        return ls;
    struct libsyms *made = libsyms_new();
    if (!made)
        return NULL;
    if (__atomic_compare_exchange_n(&vm->libsyms, &ls, made, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return made;
    libsyms_free(made); /* another thread's came first */
    return ls;
}

static bool read_live(void *ctx, uint64_t va, void *dst, size_t len)
{
    return copy_from_user(&((struct vm *)ctx)->gm, dst, va, len);
}

/* Only what the guest itself could open, by the same resolution (cwd "/": ld.so's
 * names are absolute). */
static bool resolve_granted(void *ctx, const char *path, char *out)
{
    struct vm *vm = ctx;
    return vm->files && path_resolve(&vm->files->grants, "/", path, true, out) == 0;
}

static void map_libs(struct vm *vm, struct libmap *map)
{
    uint64_t dyn = libsyms_dynamic(&vm->img);
    const struct libsyms_mem m = {.read = read_live, .resolve = resolve_granted, .ctx = vm,
                                  .dynamic = dyn ? vm->bias + dyn : 0};
    map->n = 0;
    if (dyn)
        libsyms_map(cache(vm), &m, map);
}

struct live {
    struct vm *vm;
    struct libmap map;
};

static bool read_bt(void *ctx, uint64_t va, void *dst, size_t len)
{
    return read_live(((struct live *)ctx)->vm, va, dst, len);
}

static bool is_text(void *ctx, uint64_t va)
{
    struct live *x = ctx;
    struct vm *vm = x->vm;
    for (int i = 0; i < vm->img.nseg; i++) {
        const struct elf_segment *sg = &vm->img.seg[i];
        if ((sg->prot & PROT_X) && va >= vm->bias + sg->vaddr &&
            va < vm->bias + sg->vaddr + sg->memsz)
            return true;
    }
    struct lib_hit h;
    return libmap_find(&x->map, va, &h) && h.text;
}

int vmlibs_backtrace(struct vm *vm, uint64_t rip, uint64_t rsp, uint64_t rbp, uint64_t *out,
                     int max)
{
    struct live x = {.vm = vm};
    map_libs(vm, &x.map); /* once: is_text is asked for every word of the stack scan */
    const struct bt_mem m = {.read = read_bt, .is_text = is_text, .ctx = &x};
    return bt_walk(&m, rip, rsp, rbp, out, max);
}

bool vmlibs_format(struct vm *vm, uint64_t addr, bool is_return, char *buf, size_t len)
{
    struct libmap map;
    map_libs(vm, &map);
    return libmap_format(&map, addr, is_return, buf, len);
}

static bool sanitizer_runtime(const char *name)
{
    static const char *const libs[] = {"libasan.so", "libubsan.so", "libtsan.so", "liblsan.so",
                                       "libmsan.so", "libhwasan.so",
                                       "libclang_rt.asan", "libclang_rt.ubsan", "libclang_rt.tsan"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (!strncmp(name, libs[i], strlen(libs[i])))
            return true;
    return false;
}

size_t vmlibs_sanitizer_text(struct vm *vm, uint64_t (*ranges)[2], size_t max)
{
    struct libmap map;
    map_libs(vm, &map);
    return libmap_text_of(&map, sanitizer_runtime, ranges, max);
}

size_t vmlibs_program_sanitizer_text(struct vm *vm, uint64_t (*ranges)[2], size_t max)
{
    uint64_t text[ELF_MAX_SEGMENTS][2];
    size_t nt = 0;
    for (int i = 0; i < vm->img.nseg; i++)
        if (vm->img.seg[i].prot & PROT_X) {
            text[nt][0] = vm->img.seg[i].vaddr;
            text[nt][1] = vm->img.seg[i].vaddr + vm->img.seg[i].memsz;
            nt++;
        }
    size_t k = santext_ranges(vm->img.syms, vm->img.nsyms, (const uint64_t(*)[2])text, nt,
                              ranges, max);
    for (size_t i = 0; i < k; i++) {
        ranges[i][0] += vm->bias;
        ranges[i][1] += vm->bias;
    }
    return k;
}

static bool c_library(const char *name)
{
    static const char *const libs[] = {"libc.so", "ld-linux", "libpthread.so"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (!strncmp(name, libs[i], strlen(libs[i])))
            return true;
    return false;
}

size_t vmlibs_c_library_text(struct vm *vm, uint64_t (*ranges)[2], size_t max)
{
    struct libmap map;
    map_libs(vm, &map);
    return libmap_text_of(&map, c_library, ranges, max);
}

void vmlibs_free(struct vm *vm)
{
    libsyms_free(vm->libsyms);
    vm->libsyms = NULL;
}
