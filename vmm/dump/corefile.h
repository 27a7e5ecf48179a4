/* ELF core files of guest programs, both ways.
 *
 * The writer lays out what gdb expects of a Linux x86-64 core: one PT_NOTE segment
 * (per thread NT_PRSTATUS then NT_FPREGSET; after the first thread NT_PRPSINFO,
 * NT_SIGINFO and NT_AUXV) and one PT_LOAD per run of guest user memory. The first thread
 * is the one gdb selects, so callers put the crashed thread first. Pages that read as
 * zero (or have no frame) are left as holes, so the file is sparse on disk.
 *
 * The reader is for `jinxctl inspect`: it takes an untrusted buffer, validates the ELF
 * header, program headers and notes against the buffer's size and returns the threads
 * and a memory view; anything malformed is refused with a message. Pure code, fuzzed. */
#ifndef JINX_COREFILE_H
#define JINX_COREFILE_H
#include "dump/dumpfile.h"
#include "lib/sha256.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORE_MAX_LOADS   65000
#define CORE_MAX_THREADS DUMP_MAX_THREADS
#define CORE_MAX_NOTES   (16u << 20)
#define CORE_PF_X 1u
#define CORE_PF_W 2u
#define CORE_PF_R 4u

struct core_thread {
    uint32_t tid;
    int cursig;                  /* the signal that killed the process (all threads) */
    uint64_t regs[DUMP_NREGS];   /* user_regs_struct order */
    const uint8_t *fpregs;       /* DUMP_FPREGS_LEN bytes, or NULL */
};

struct core_seg {
    uint64_t vaddr, size;        /* page-aligned */
    uint32_t flags;              /* CORE_PF_* */
};

/* Reads len bytes of guest memory at va into dst; false when there is no memory there
 * (the bytes are written as zeros). */
typedef bool (*core_read_fn)(void *ctx, uint64_t va, void *dst, size_t len);

/* Bytes the core shows at va instead of guest memory's: what the VMM itself changed in
 * the program's loaded file (the raised PT_GNU_STACK p_memsz), so that the core's program
 * headers equal the file's, which gdb requires to relocate a PIE and load its libraries.
 * Applied only where the memory is in the core. */
struct core_patch {
    uint64_t va;
    uint8_t bytes[8];
    uint32_t len;                /* 1..8; anything else is ignored */
};

struct core_desc {
    const struct core_thread *threads;
    size_t nthreads;
    const struct core_seg *segs; /* sorted by address, not overlapping */
    size_t nsegs;
    const uint64_t *auxv;        /* key/value words, AT_NULL pair included; may be NULL */
    size_t nauxv;                /* words */
    const char *fname, *psargs;  /* program name, command line (truncated to 16 / 80) */
    int pid;
    int signo, si_code;          /* NT_SIGINFO for the first thread; signo 0: none */
    uint64_t fault_addr;
    core_read_fn read;
    void *ctx;
    const struct core_patch *patches; /* may be NULL */
    size_t npatches;
};

/* Writes the core to fd (an empty file, written from offset 0 on); stores the file's
 * SHA-256 and size. Returns 0, or -1 with a message. */
int core_write(int fd, const struct core_desc *d, uint8_t sha[SHA256_LEN], uint64_t *size,
               char *err, size_t errlen);

struct core_load {
    uint64_t vaddr, memsz, offset, filesz;
    uint32_t flags;
};

struct core_note_thread {
    uint32_t tid;
    int cursig;
    uint64_t regs[DUMP_NREGS];
    bool has_fpregs;
};

struct corefile {
    const uint8_t *data;         /* not owned */
    size_t size;
    struct core_load *loads;     /* owned, sorted by vaddr */
    size_t nloads;
    struct core_note_thread *threads; /* owned, in file order */
    size_t nthreads;
    uint64_t auxv[128];
    size_t nauxv;
    char fname[17], psargs[81];
    int signo;                   /* from NT_SIGINFO, 0 if absent */
};

int core_parse(const uint8_t *data, size_t size, struct corefile *c, char *err, size_t errlen);
void core_free(struct corefile *c);
/* Copies guest memory [va, va+len) out of the core; false if any byte is not in it. */
bool core_read(const struct corefile *c, uint64_t va, void *dst, size_t len);

#endif
