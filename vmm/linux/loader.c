/* Puts the program into the guest: its PT_LOAD segments, the main stack with argv, envp
 * and the auxiliary vector laid out as Linux does, and thread 1's entry registers. */
#include "lib/splitmix.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "linux/cpuidload.h"
#include "linux/files.h"
#include "linux/libdeps.h"
#include "linux/loader.h"
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int load_segments(struct vm *vm, const struct elf_image *img, uint64_t bias, char *err,
                         size_t errlen)
{
    uint64_t npages = (img->hi - img->lo) / PAGE_SIZE;
    uint8_t *prot = calloc(npages ? npages : 1, 1);
    if (!prot) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* Pages shared by two segments get the union of their permissions. */
    for (int i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        for (uint64_t a = s->vaddr & PAGE_MASK; a < s->vaddr + s->memsz; a += PAGE_SIZE)
            prot[(a - img->lo) / PAGE_SIZE] |= (uint8_t)s->prot;
    }
    int rc = 0;
    for (uint64_t p = 0; p < npages && rc == 0; p++) {
        if (!prot[p])
            continue;
        uint64_t va = bias + img->lo + p * PAGE_SIZE;
        int64_t r = mm_map(&vm->mm, va, PAGE_SIZE, 3, true);
        if (r < 0) {
            snprintf(err, errlen, "the program does not fit in guest memory (%llu MiB): raise "
                     "--mem", (unsigned long long)(vm->gm.size >> 20));
            rc = -1;
        }
    }
    for (int i = 0; i < img->nseg && rc == 0; i++) {
        const struct elf_segment *s = &img->seg[i];
        if (s->filesz && !copy_to_user(&vm->gm, bias + s->vaddr, img->data + s->offset,
                                       s->filesz)) {
            snprintf(err, errlen, "internal: cannot copy segment %d", i);
            rc = -1;
        }
    }
    /* One call per run of pages with the same protection: each call's downgrade costs a
     * host round to drop translations, whatever the run's length (mm.c). */
    for (uint64_t p = 0, q; p < npages && rc == 0; p = q) {
        for (q = p + 1; q < npages && prot[q] == prot[p];)
            q++;
        if (prot[p])
            mm_protect(&vm->mm, bias + img->lo + p * PAGE_SIZE, (q - p) * PAGE_SIZE, prot[p]);
    }
    free(prot);
    return rc;
}

bool loader_stack_patch(const struct vm *vm, uint64_t *va, uint64_t *file_value,
                        uint64_t *written)
{
    const struct elf_image *img = &vm->img;
    if (!img->data || !img->stack_phdr_off || !img->phdr_vaddr ||
        img->stack_size >= vm->opt.thread_stack)
        return false;
    const Elf64_Ehdr *eh = (const void *)img->data;
    *va = vm->bias + img->phdr_vaddr + (img->stack_phdr_off - eh->e_phoff) +
          offsetof(Elf64_Phdr, p_memsz);
    *file_value = img->stack_size;
    *written = vm->opt.thread_stack;
    return true;
}

/* musl sizes new threads' stacks from PT_GNU_STACK's p_memsz (it reads the program
 * headers through AT_PHDR). Raising it in guest memory gives every thread a stack that
 * real programs do not overflow, without touching the file on disk. */
static void raise_thread_stack(struct vm *vm)
{
    uint64_t va, was, now;
    if (!loader_stack_patch(vm, &va, &was, &now))
        return;
    uint64_t *pte = gm_pte(&vm->gm, va, false);
    if (!pte || !(*pte & PTE_P))
        return;
    uint64_t *p = gm_ptr(&vm->gm, (*pte & PTE_ADDR) + (va & (PAGE_SIZE - 1)));
    if ((va & (PAGE_SIZE - 1)) + 8 <= PAGE_SIZE) {
        *p = now;
        gm_mark_dirty(&vm->gm, (*pte & PTE_ADDR));
    }
}

struct stack_builder {
    struct vm *vm;
    uint64_t sp;
    bool ok;
};

static uint64_t push_bytes(struct stack_builder *b, const void *data, size_t len)
{
    b->sp -= len;
    if (!copy_to_user(&b->vm->gm, b->sp, data, len))
        b->ok = false;
    return b->sp;
}

/* The file layer and what it grants: --ro-dir, the program, and for a dynamically linked
 * one its interpreter, its libraries and the loader's cache. */
static int set_up_files(struct vm *vm, const char *path, int envc, char **envp, char *err,
                        size_t errlen)
{
    vm->files = calloc(1, sizeof *vm->files);
    if (!vm->files)
        return jx_fail(err, errlen, "out of memory");
    if (files_init(vm->files, path, vm->opt.file_mem, err, errlen) < 0)
        return -1;
    vm->files->vm = vm;
    struct grants *g = &vm->files->grants;
    char gerr[PATHCONF_MAX + 128];
    for (int i = 0; i < vm->opt.n_ro_dirs; i++)
        if (grants_add(g, vm->opt.ro_dirs[i], true, gerr, sizeof gerr) < 0)
            return jx_fail(err, errlen, "--ro-dir %s", gerr);
    if (grants_add(g, path, false, gerr, sizeof gerr) < 0)
        return jx_fail(err, errlen, "%s", gerr);
    if (!vm->img.interp[0])
        return files_seed(vm->files, err, errlen);
    if (grants_add(g, vm->img.interp, false, gerr, sizeof gerr) < 0)
        return jx_fail(err, errlen, "the program's interpreter (PT_INTERP) %s", gerr);
    if (access("/etc/ld.so.cache", R_OK) == 0 &&
        grants_add(g, "/etc/ld.so.cache", false, gerr, sizeof gerr) < 0)
        return jx_fail(err, errlen, "%s", gerr);
    const char *llp = NULL;
    for (int i = 0; i < envc; i++)
        if (!strncmp(envp[i], "LD_LIBRARY_PATH=", 16))
            llp = envp[i] + 16;
    if (libdeps_grant(g, path, llp, gerr, sizeof gerr) < 0)
        return jx_fail(err, errlen, "finding the program's libraries: %s", gerr);
    return files_seed(vm->files, err, errlen); /* after every grant: /tmp and the cwd */
}

/* The interpreter (ld-linux) goes where an mmap would put it, as the kernel does. */
static int load_interp(struct vm *vm, char *err, size_t errlen)
{
    char ierr[256];
    if (elf_open(vm->img.interp, &vm->interp, ierr, sizeof ierr) < 0)
        return jx_fail(err, errlen, "the program's interpreter %s: %s", vm->img.interp, ierr);
    if (!vm->interp.pie || vm->interp.interp[0])
        return jx_fail(err, errlen, "the program's interpreter %s is not a self-contained "
                       "position-independent loader (ET_DYN without PT_INTERP)", vm->img.interp);
    uint64_t span = vm->interp.hi - vm->interp.lo;
    int64_t base = mm_map(&vm->mm, 0, span, 0, false);
    if (base < 0 || mm_unmap(&vm->mm, (uint64_t)base, span) < 0)
        return jx_fail(err, errlen, "no room for the interpreter: raise --mem");
    vm->interp_bias = (uint64_t)base;
    if (load_segments(vm, &vm->interp, vm->interp_bias, err, errlen) < 0)
        return -1;
    cpuidload_image(vm, vm->img.interp, &vm->interp, vm->interp_bias);
    return 0;
}

int vm_load(struct vm *vm, const char *path, int argc, char **argv, int envc, char **envp,
            char *err, size_t errlen)
{
    if (elf_open(path, &vm->img, err, errlen) < 0)
        return -1;
    if (set_up_files(vm, path, envc, envp, err, errlen) < 0)
        return -1;
    vm->image_path = path;
    vm->argc = argc;
    vm->argv = argv;
    vm->envc = envc;
    vm->envp = envp;
    vm->bias = vm->img.pie ? PIE_BASE : 0;
    if (load_segments(vm, &vm->img, vm->bias, err, errlen) < 0)
        return -1;
    cpuidload_image(vm, path, &vm->img, vm->bias);
    raise_thread_stack(vm);
    vm->mm.brk_base = vm->mm.brk_cur = vm->bias + vm->img.hi;
    if (vm->img.interp[0] && load_interp(vm, err, errlen) < 0)
        return -1;

    if (mm_map(&vm->mm, STACK_TOP - STACK_SIZE, STACK_SIZE, 3, true) < 0) {
        snprintf(err, errlen, "no room for the main stack: raise --mem");
        return -1;
    }
    /* Argument and environment sizes are the user's; keep them sane like execve does. */
    size_t strbytes = 0;
    for (int i = 0; i < argc; i++)
        strbytes += strlen(argv[i]) + 1;
    for (int i = 0; i < envc; i++)
        strbytes += strlen(envp[i]) + 1;
    if (strbytes > (1 << 20) || argc > 65536 || envc > 65536) {
        snprintf(err, errlen, "arguments and environment too large (max 1 MiB)");
        return -1;
    }
    struct stack_builder b = {vm, STACK_TOP, true};
    uint64_t *argv_va = calloc((size_t)argc + 1, 8), *envp_va = calloc((size_t)envc + 1, 8);
    if (!argv_va || !envp_va) {
        free(argv_va);
        free(envp_va);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t execfn = push_bytes(&b, path, strlen(path) + 1);
    for (int i = envc; i-- > 0;)
        envp_va[i] = push_bytes(&b, envp[i], strlen(envp[i]) + 1);
    for (int i = argc; i-- > 0;)
        argv_va[i] = push_bytes(&b, argv[i], strlen(argv[i]) + 1);
    uint64_t platform = push_bytes(&b, "x86_64", 7);
    uint8_t rnd[16];
    for (int i = 0; i < 16; i += 8) {
        uint64_t r = splitmix64(&vm->rng);
        memcpy(rnd + i, &r, 8);
    }
    uint64_t random = push_bytes(&b, rnd, 16);
    uint64_t auxv[][2] = {
        {AT_PHDR, vm->bias + vm->img.phdr_vaddr}, {AT_PHENT, vm->img.phentsize},
        {AT_PHNUM, vm->img.phnum}, {AT_PAGESZ, PAGE_SIZE}, {AT_BASE, vm->interp.data ? vm->interp_bias : 0}, {AT_FLAGS, 0},
        {AT_ENTRY, vm->bias + vm->img.entry}, {AT_UID, 0}, {AT_EUID, 0}, {AT_GID, 0},
        {AT_EGID, 0}, {AT_PLATFORM, platform}, {AT_HWCAP, vm->hwcap}, {AT_CLKTCK, 100},
        {AT_SECURE, 0}, {AT_RANDOM, random}, {AT_HWCAP2, 0}, {AT_EXECFN, execfn},
        {AT_NULL, 0},
    };
    size_t nwords = 1 + (size_t)argc + 1 + (size_t)envc + 1 + 2 * (sizeof auxv / 16);
    b.sp = (b.sp - nwords * 8) & ~15ULL; /* rsp 16-aligned at argc, as the ABI wants */
    uint64_t sp = b.sp, w = sp;
    uint64_t argc64 = (uint64_t)argc;
    b.ok &= copy_to_user(&vm->gm, w, &argc64, 8);
    w += 8;
    b.ok &= copy_to_user(&vm->gm, w, argv_va, ((size_t)argc + 1) * 8);
    w += ((uint64_t)argc + 1) * 8;
    b.ok &= copy_to_user(&vm->gm, w, envp_va, ((size_t)envc + 1) * 8);
    w += ((uint64_t)envc + 1) * 8;
    b.ok &= copy_to_user(&vm->gm, w, auxv, sizeof auxv);
    free(argv_va);
    free(envp_va);
    if (!b.ok) {
        snprintf(err, errlen, "internal: cannot build the initial stack");
        return -1;
    }
    memset(&vm->entry_regs, 0, sizeof vm->entry_regs);
    /* A dynamic program starts in its interpreter, which finds it through AT_PHDR/AT_ENTRY. */
    vm->entry_regs.rip = vm->interp.data ? vm->interp_bias + vm->interp.entry
                                         : vm->bias + vm->img.entry;
    vm->entry_regs.rsp = sp;
    vm->entry_regs.rflags = 0x202;
    return 0;
}
