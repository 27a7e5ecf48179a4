/* The live VM's backtraces and frame names with the program's shared libraries: the
 * walk of linux/backtrace.h taking the libraries' code for text too, and their frames
 * named from their ELF symbols (linux/libsyms.h). The guest names its libraries (its
 * link_map); jinx follows a name only where the file layer's confined resolution
 * (pathconf.h) finds a file the guest may read. The cache lives in vm->libsyms, made on
 * first use, freed by vm_destroy. */
#ifndef JINX_VMLIBS_H
#define JINX_VMLIBS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

/* vm_backtrace (kvm/vm.h). */
int vmlibs_backtrace(struct vm *vm, uint64_t rip, uint64_t rsp, uint64_t rbp, uint64_t *out,
                     int max);
/* libmap_format for addr in one of the program's libraries; false when it is in none. */
bool vmlibs_format(struct vm *vm, uint64_t addr, bool is_return, char *buf, size_t len);
/* The code of the sanitizer runtimes the program loaded (libasan, libubsan, libtsan,
 * liblsan, libmsan, libhwasan): their executable segments into ranges (at most max); the
 * count. */
size_t vmlibs_sanitizer_text(struct vm *vm, uint64_t (*ranges)[2], size_t max);
/* The code of a sanitizer runtime linked into the program itself (clang's runtimes,
 * gcc's -static-libasan, -static-libtsan, -static UBSan), found by its symbols
 * (linux/santext.h), as run-time ranges; the count. None for a stripped program. */
size_t vmlibs_program_sanitizer_text(struct vm *vm, uint64_t (*ranges)[2], size_t max);
/* The same for the C library the program loaded (libc.so, ld-linux, libpthread.so). */
size_t vmlibs_c_library_text(struct vm *vm, uint64_t (*ranges)[2], size_t max);
void vmlibs_free(struct vm *vm);

#endif
