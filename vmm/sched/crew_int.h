/* What crew.c shares with crew_sample.c (page watching's internals; crew.h is the
 * contract). */
#ifndef JINX_CREW_INT_H
#define JINX_CREW_INT_H
#include "sched/crew.h"
#include <stdbool.h>
#include <stdint.h>

struct vm;
struct kvm_regs;
struct kvm_sregs;
struct crew_access;
struct insn_info;

#define PF_PRESENT 0x1ULL
#define PF_WRITE 0x2ULL
#define PF_FETCH 0x10ULL

/* The live slot of the page at va (page-aligned), or -1. Caller holds gm->lock. */
static inline int crew_slot_of(const struct crew *c, uint64_t va)
{
    const uint64_t *known = ex_u64map_get(&c->slot_of_va, va);
    return known && *known < c->npage ? (int)*known : -1;
}

/* The PTE of a slot's page if it still maps that slot's frame with its flags: present
 * (*trapped false; also read-only while a sampled read holds it, crew_page.sample_ro) or
 * trapped (*trapped true); NULL once the page was unmapped, remapped or reprotected (the
 * slot is dead). Caller holds gm->lock. */
uint64_t *crew_slot_pte(struct vm *vm, int slot, bool *trapped);
/* EX_F_STACK for an access in the thread's own stack, from the red zone below its stack
 * pointer to the frames above it ([rsp - CREW_STACK_RED_ZONE, rsp + CREW_STACK_FRAMES)):
 * sparse learning does not guess that another thread shares such a variable
 * (explorer/sparse.h). Else 0. */
static inline unsigned crew_stack_flag(uint64_t addr, uint64_t size, uint64_t rsp)
{
    uint64_t lo = rsp > CREW_STACK_RED_ZONE ? rsp - CREW_STACK_RED_ZONE : 0;
    return addr + size > lo && addr < rsp + CREW_STACK_FRAMES ? EX_F_STACK : 0;
}
/* What the faulting instruction at rip does at cr2: address, size, direction, atomicity,
 * whether on its own stack (into *a; *info: the decoded instruction). */
void crew_describe(struct vm *vm, uint64_t cr2, uint64_t errcode, uint64_t rip, uint64_t rsp,
                   const struct kvm_regs *r, const struct kvm_sregs *s, struct crew_access *a,
                   struct insn_info *info);

#endif
