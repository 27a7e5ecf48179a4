/* The CPU files libcs and runtimes read to count and know the CPUs, answered from the
 * guest's own machine instead of refused (issue 28): /proc/cpuinfo (one "processor"
 * block per guest CPU, from the CPUID table the program sees: vendor, family, model,
 * stepping, model name, flags), /sys/devices/system/cpu/{online,possible,present}
 * ("0-N-1") and the directory /sys/devices/system/cpu itself (cpu0 .. cpuN-1, online,
 * possible, present, as readdir sees them; each cpuK an empty directory). N is
 * schedres_ncpus(), the count sched_getaffinity, sysconf and sysinfo already give, so
 * glibc's sysconf (which reads /sys), musl's (sched_getaffinity), nproc and a program
 * parsing /proc/cpuinfo all agree. Made at open, like procself.h's files, into an
 * anonymous host file (a directory: its entries in the gfile); never remembered as host
 * files for dumps. Everything else under /proc and /sys stays refused (files.c). */
#ifndef JINX_PROCSYS_H
#define JINX_PROCSYS_H
#include <stdbool.h>
#include <stddef.h>

struct vm;
struct gfile;

/* As procself_open: 1 when p is none of these paths, 0 with *out (one reference), or
 * -errno (EACCES for writing, ENOTDIR / EISDIR for the wrong kind). */
int procsys_open(struct vm *vm, const char *p, bool writes, bool dir, struct gfile **out);

/* For stat, statx and access of guest path given: an O_PATH host descriptor whose stat
 * stands for it (the host's file or directory of that name; / for a missing directory),
 * -ENOENT (a cpuK past the guest's CPUs), or -EEXIST when given is none of these. */
int procsys_path_fd(struct vm *vm, const char *given);

/* /proc/cpuinfo's text for vm (malloc'd, *len bytes), or NULL out of memory. For tests. */
char *procsys_cpuinfo(struct vm *vm, size_t *len);

#endif
