/* The few /proc files runtimes read about their own process, answered from the guest's
 * state instead of the host's: /proc/self/maps (the VMAs with their protection, the way
 * the sanitizers and glibc's pthread_getattr_np read it: ranges, "rwxp", [stack] and
 * [heap]), /proc/self/cmdline and /proc/self/environ (the program's arguments and
 * environment as jinx-vmm gave them: ASan and UBSan read their *_OPTIONS there before
 * libc is up). The text is made at open, as Linux's is read at once by these readers,
 * into an anonymous host file that the descriptor reads like any other (read, pread,
 * lseek); it is never remembered as a host file for dumps. Everything else under /proc
 * stays refused (files.c). */
#ifndef JINX_PROCSELF_H
#define JINX_PROCSELF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;
struct gfile;

/* The guest's path p (already read from guest memory), opened for writing (writes) or as
 * a directory (dir, O_DIRECTORY): 1 when it is none of these files (the ordinary lookup
 * goes on); 0 with *out (one reference) when it is; -errno when it is but cannot be
 * opened (EACCES for writing, as Linux). */
int procself_open(struct vm *vm, const char *p, bool writes, bool dir, struct gfile **out);
/* A gfile for path p that reads text (len bytes, an anonymous host file): 0 with *out (one
 * reference), or -errno. Takes text (malloc'd; NULL: -ENOMEM) and frees it. For the
 * /proc and /sys files whose text jinx makes (procsys.h too). */
int procself_text_file(const char *p, char *text, size_t len, struct gfile **out);

/* /proc/self/maps' text for vm into a malloc'd buffer (*len bytes); NULL when out of
 * memory. Exposed for tests. */
char *procself_maps(struct vm *vm, size_t *len);

#endif
