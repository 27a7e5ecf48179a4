#include "linux/altstack.h"
#include "kvm/vm.h"
#include <errno.h>

#define SS_ONSTACK 1
#define SS_DISABLE 2
#define SS_AUTODISARM (1U << 31)
#define MINSIGSTKSZ 2048

/* Linux's stack_t on x86-64. */
struct g_stack {
    uint64_t sp;
    int32_t flags;
    int32_t pad;
    uint64_t size;
};

static struct agent_altstack *block(struct vm *vm, struct vcpu *v)
{
    uint64_t gpa = GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE + AGENT_ALTSTACK_OFF;
    return gm_ptr(&vm->gm, gpa);
}

static void written(struct vm *vm, struct vcpu *v)
{
    gm_mark_dirty(&vm->gm, (GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE + AGENT_ALTSTACK_OFF) &
                               PAGE_MASK);
}

void altstack_reset(struct vm *vm, struct vcpu *v)
{
    struct agent_altstack *a = block(vm, v);
    a->on = a->sp = a->size = 0;
    written(vm, v);
}

int64_t altstack_syscall(struct vm *vm, struct vcpu *v, uint64_t ss, uint64_t old_ss)
{
    struct agent_altstack *a = block(vm, v);
    struct g_stack old = {.flags = SS_DISABLE};
    if (a->on == AGENT_ALTSTACK_ON)
        old = (struct g_stack){.sp = a->sp, .flags = 0, .size = a->size};
    struct g_stack n;
    if (ss) {
        if (!copy_from_user(&vm->gm, &n, ss, sizeof n))
            return -EFAULT;
        uint32_t mode = (uint32_t)n.flags & ~SS_AUTODISARM;
        if (mode != 0 && mode != SS_DISABLE && mode != SS_ONSTACK)
            return -EINVAL;
        if (mode != SS_DISABLE && n.size < MINSIGSTKSZ)
            return -ENOMEM;
    }
    /* Linux checks the new stack, then writes the old one, then sets the new. */
    if (old_ss && !copy_to_user(&vm->gm, old_ss, &old, sizeof old))
        return -EFAULT;
    if (ss) {
        if (((uint32_t)n.flags & ~SS_AUTODISARM) == SS_DISABLE)
            a->on = a->sp = a->size = 0;
        else {
            a->on = AGENT_ALTSTACK_ON;
            a->sp = n.sp;
            a->size = n.size;
        }
        written(vm, v);
    }
    return 0;
}
