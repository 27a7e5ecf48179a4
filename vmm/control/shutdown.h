/* Clean shutdown on SIGINT, SIGTERM and SIGHUP. Without this the default action kills
 * jinx-vmm on the spot: no report, and the control socket is left behind.
 *
 * shutdown_start() blocks those signals in the calling thread -- call it before any
 * other thread exists, so that every thread inherits the mask -- and starts a thread
 * that waits for them. The first one stops the VM (outcome "interrupted by SIGTERM"),
 * so vm_run returns and the caller cleans up normally. A second one exits at once
 * (status 128+signal) after removing the file named by shutdown_cleanup_path(), for a
 * shutdown that hangs. */
#ifndef JINX_SHUTDOWN_H
#define JINX_SHUTDOWN_H
#include <stddef.h>

struct vm;

int shutdown_start(struct vm *vm, char *err, size_t errlen);
/* The file to remove on a forced exit (the control socket), or NULL. Copied. */
void shutdown_cleanup_path(const char *path);
/* Stops the waiting thread. Returns the signal that stopped the VM, or 0 if none did. */
int shutdown_end(void);

#endif
