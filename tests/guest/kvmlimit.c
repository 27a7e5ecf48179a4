/* Makes KVM give up on an instruction: an SSE4.1 load (movntdqa) from jinx's syscall
 * page, which is MMIO and so must be emulated, and KVM's emulator has no such form.
 * jinx-vmm must report this as its own limit naming the instruction (status 125), never
 * as a crash of the program. */
#include <stdio.h>

int main(void)
{
    fprintf(stderr, "kvmlimit: reading the syscall page with movntdqa\n");
    __asm__ volatile("movabs $0x7FFFFFFFC000, %%rax\n\t"
                     "movntdqa (%%rax), %%xmm0" ::: "rax", "xmm0", "memory");
    printf("kvmlimit: not reached\n");
    return 0;
}
