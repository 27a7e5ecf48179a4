/* What vm_load (loader.c) changed in the program's own bytes in guest memory, for the
 * readers that must show the program as its file has it (the core file: gdb compares the
 * program headers it reads at AT_PHDR with the file's, and without an exact match it
 * finds no PIE displacement and no shared libraries). */
#ifndef JINX_LOADER_H
#define JINX_LOADER_H
#include "kvm/vm.h"
#include <stdbool.h>
#include <stdint.h>

/* The PT_GNU_STACK p_memsz vm_load raises to --thread-stack in the loaded program
 * headers (musl sizes its threads' stacks from it): true with the field's guest address,
 * the file's value and the value written; false when vm_load leaves it alone (no
 * PT_GNU_STACK, headers not loaded, or the file's value already large enough). Depends
 * only on the loaded image and the options, so it holds after a snapshot restore. */
bool loader_stack_patch(const struct vm *vm, uint64_t *va, uint64_t *file_value,
                        uint64_t *written);

#endif
