/* Demand paging of lazy mappings (linux/mm.h) for the exit loop and the syscall layer: a
 * first touch of a lazy page gets its frame, whoever touches it (the program, in any
 * execution mode, or a syscall's copy to or from its memory), and the mode hears of the
 * new page as of any mmap (vm_note_mapped: serialized execution watches it). A touch
 * that finds guest memory exhausted is jinx's limit (--mem), noted as mmap's is. */
#ifndef JINX_DEMAND_H
#define JINX_DEMAND_H
#include <stdbool.h>
#include <stdint.h>

struct vm;

/* Installs demand paging into vm's guest memory (gm_user_ptr's fault_in). */
void demand_install(struct vm *vm);
/* A not-present #PF of the program at user address va, error code err: 1 when the page
 * is there now (resume the thread: the access runs again), 0 when it is no lazy page (a
 * real fault, or one for the mode), -1 when guest memory is exhausted (the limit is
 * noted; Linux's OOM killer would end the program). */
int demand_fault(struct vm *vm, uint64_t va, uint64_t err);

#endif
