#include "linux/demand.h"
#include "kvm/vm.h"
#include "linux/mm.h"
#include <stdio.h>

/* The limit of a touch that found no free frame, in the list real execution reports or,
 * inside a sandboxed simulation, in the one a retired simulation merges (limitlog.h). */
static void note_exhausted(struct vm *vm, uint64_t va)
{
    char opt[LIMIT_OPTION_LEN];
    snprintf(opt, sizeof opt, "raise it with --mem SIZE (now %lluM, at most %lluM)",
             (unsigned long long)(vm->opt.mem >> 20), (unsigned long long)(MAX_GUEST_MEM >> 20));
    limits_note(vm->sandbox ? &vm->sandbox_lims : &vm->limits, LIMIT_MEMORY, 0, opt,
                "guest memory exhausted: the program's first touch of its lazy mapping at "
                "0x%llx needed more than the %lluM of guest RAM", (unsigned long long)va,
                (unsigned long long)(vm->opt.mem >> 20));
}

static int touch(struct vm *vm, uint64_t va, bool write, bool exec)
{
    int r = mm_fault(&vm->mm, va, write, exec);
    if (r == 2) /* a new page: serialized execution watches it like an mmap's */
        vm_note_mapped(vm, va & PAGE_MASK, (va & PAGE_MASK) + PAGE_SIZE);
    if (r < 0) {
        note_exhausted(vm, va);
        return -1;
    }
    return r > 0;
}

static bool fault_in(void *ctx, uint64_t va, bool write)
{
    return touch(ctx, va, write, false) > 0;
}

void demand_install(struct vm *vm)
{
    vm->gm.fault_ctx = vm;
    vm->gm.fault_in = fault_in;
}

int demand_fault(struct vm *vm, uint64_t va, uint64_t err)
{
    if (err & 1) /* a protection fault: the page is there */
        return 0;
    return touch(vm, va, (err & 2) != 0, (err & 16) != 0);
}
