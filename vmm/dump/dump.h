/* Crash dumps: on a fatal outcome (fatal signal, deadlock) jinx-vmm writes two files in
 * the dump directory (docs/dumps.md):
 *   <image>-<YYYYmmdd-HHMMSS>.core      an ELF core file: `gdb IMAGE CORE` works
 *   <image>-<YYYYmmdd-HHMMSS>.jinxdump  Jinx's own record (dumpfile.h): the outcome, every
 *                                       thread's state and registers, the image's path and
 *                                       SHA-256, the core's name and SHA-256
 * (-2, -3, ... is appended when a name is taken). Each file appears complete or not at
 * all: it is written unnamed (O_TMPFILE, or a hidden temporary where the file system
 * lacks it), fsynced, then linked under its final name, which is never overwritten.
 *
 * Contract: the VM must be stopped (no host thread runs a vCPU): after vm_run returned,
 * or between vm_pause and vm_resume with the caller not holding vm->lock. The outcome's
 * own registers are used for the thread it names (they were captured at the crash);
 * every other thread's come from its vCPU, shown as the user program sees them (a
 * thread inside a syscall shows the instruction after its `syscall`). */
#ifndef JINX_DUMP_H
#define JINX_DUMP_H
#include "dump/dumpfile.h"
#include "kvm/vm.h"
#include <limits.h>
#include <stdbool.h>

struct dump_result {
    char jinxdump[PATH_MAX], core[PATH_MAX];
    uint64_t core_size;        /* apparent size */
    uint64_t core_disk;        /* bytes allocated on disk (zero pages are holes) */
    uint64_t jinxdump_size;
    uint64_t ns;               /* wall time to write both */
};

/* Outcomes that deserve a dump: fatal signal and deadlock. */
bool dump_wanted(const struct outcome *o);

/* Makes sure dir exists (creating one level) and is a writable directory, so that a bad
 * --dump-dir fails at start-up and not after the crash. 0, or -1 with a message. */
int dump_check_dir(const char *dir, char *err, size_t errlen);

/* Writes both files for outcome o of the stopped VM. extra: records a caller adds (the
 * round driver: snapshot, schedule, traces), may be NULL. 0, or -1 with a message;
 * on failure nothing is left in dir. A dump whose two files would together take more
 * than vm->opt.max_dump_size bytes on disk (the core's zero pages are holes and do not
 * count) is refused whole, never truncated: -1 with a message naming the sizes, decided
 * while the core is still unnamed. */
int dump_write(struct vm *vm, const struct outcome *o, const char *dir,
               const struct dump_record *extra, size_t nextra, struct dump_result *res,
               char *err, size_t errlen);

#endif
