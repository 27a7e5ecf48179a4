/* Patching the program's CPUID instructions as its code is mapped, where user-mode CPUID
 * is not trapped, and its rdtsc/rdtscp where user-mode RDTSC is not (vm->patches
 * non-NULL, vm->patch_kinds says which; kvm/cpuidpatch.h says why and how a patched
 * site is answered). Covered: the program's and its interpreter's executable PT_LOAD
 * segments (vm_load), file mappings made with PROT_EXEC (mmap through the file layer),
 * and file mappings later made executable (mprotect with PROT_EXEC). Not covered: code
 * the program writes at run time (JIT, self-modifying code): its CPUID stays native.
 *
 * The sites come from the file on the host (linux/cpuidscan.h), never from guest
 * memory; a site is rewritten only while guest memory still holds the file's bytes
 * there. Files on the host are only read. Every function is a no-op when the VM does
 * not patch. Safe to call from the VM's vCPU threads at once (the mapping list has a
 * lock). */
#ifndef JINX_CPUIDLOAD_H
#define JINX_CPUIDLOAD_H
#include <stddef.h>
#include <stdint.h>

struct vm;
struct elf_image;

/* The executable segments of img, loaded at bias (name: its path, for --report). */
void cpuidload_image(struct vm *vm, const char *name, const struct elf_image *img,
                     uint64_t bias);
/* A file mapping [at, at+len) of host file hostfd (canonical path) from offset off with
 * protection prot: patched now when executable, else remembered for a later mprotect. */
void cpuidload_file_map(struct vm *vm, const char *path, int hostfd, uint64_t at,
                        uint64_t off, uint64_t len, int prot);
/* munmap: the remembered file mappings in the range are forgotten. */
void cpuidload_unmapped(struct vm *vm, uint64_t addr, uint64_t len);
/* mprotect(addr, len, prot): remembered file mappings the range makes executable are
 * patched. */
void cpuidload_mprotect(struct vm *vm, uint64_t addr, uint64_t len, int prot);
/* How many non-executable file mappings are remembered (tests). */
size_t cpuidload_remembered(struct vm *vm);
/* The remembered mappings go (vm_destroy). */
void cpuidload_free(struct vm *vm);

#endif
