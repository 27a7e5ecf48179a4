/* The host CPU's feature flags as /proc/cpuinfo lists them: the one reader that KVM setup
 * (cpu.c: PVM or VMX/SVM, CPUID faulting), the in-guest clock (vclock.c: constant_tsc,
 * nonstop_tsc) and the /dev/kvm diagnosis (kvmdiag.c: vmx, svm, hypervisor) share.
 *
 * A flag counts when it is a whole word of the FIRST line that starts with "flags" (every
 * CPU lists the same; later lines such as "vmx flags" or "bugs" never count). Any bytes
 * are safe: the text is bounded by its length, not by a NUL. */
#ifndef JINX_KVM_HOSTCPU_H
#define JINX_KVM_HOSTCPU_H
#include <stdbool.h>
#include <stddef.h>

/* How much of /proc/cpuinfo is read: the first CPU's block (1-3 KiB) is far inside. */
#define HOSTCPU_READ_MAX (64u << 10)

/* Whether flag is a word of the first "flags" line of text[0..n). */
bool hostcpu_flag_in(const char *text, size_t n, const char *flag);
/* The same for this machine's /proc/cpuinfo (false when it cannot be read). */
bool hostcpu_flag(const char *flag);

#endif
