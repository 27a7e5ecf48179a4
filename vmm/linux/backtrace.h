/* Frame-pointer backtraces over any view of guest memory (a live VM, or a core file).
 * Same walk as vm_backtrace in vm.c: the RIP, the return address on top of the stack for
 * a leaf function, then [saved rbp][return address] frames while they ascend; when that
 * gives fewer than two frames (libc without frame pointers), a scan of the stack for
 * words that point just past a call instruction in the program's text. The memory is
 * untrusted: every read may fail, and the walk is bounded. */
#ifndef JINX_BACKTRACE_H
#define JINX_BACKTRACE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_mem {
    bool (*read)(void *ctx, uint64_t va, void *dst, size_t len);
    bool (*is_text)(void *ctx, uint64_t va);   /* in the program's executable segments */
    void *ctx;
};

/* Fills out[0..max) and returns the number of frames; out[0] is rip. */
int bt_walk(const struct bt_mem *m, uint64_t rip, uint64_t rsp, uint64_t rbp, uint64_t *out,
            int max);

#endif
