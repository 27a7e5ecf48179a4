/* The .jinxdump file: Jinx's own record of a crash, next to the ELF core file.
 *
 * Layout (all integers little-endian; docs/dumps.md is the reference):
 *   header  16 bytes: magic "JINXDUMP", u16 major, u16 minor, u32 header length (16)
 *   records  each: u32 type, u32 flags, u64 payload length, payload, zero padding to 8
 *   END      the last record: SHA-256 of every byte before it; nothing may follow
 *
 * A reader skips records of types it does not know unless they carry DREC_F_REQUIRED,
 * and ignores bytes at the end of a known record's payload beyond the fields it knows,
 * so later versions can add record types (the round's snapshot, schedule and traces have
 * reserved numbers) and fields without breaking older readers. A different major
 * version is refused.
 *
 * The file is untrusted input: dumpfile_parse checks every length, count, string and
 * enum before use and rejects anything malformed with a message naming what is wrong;
 * it never reads outside the buffer it is given. Pure code, no KVM: unit-tested and
 * fuzzed (tests/fuzz). */
#ifndef JINX_DUMPFILE_H
#define JINX_DUMPFILE_H
#include "lib/bytes.h"
#include "lib/sha256.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DUMP_MAGIC         "JINXDUMP"
#define DUMP_VERSION_MAJOR 1
#define DUMP_VERSION_MINOR 4
#define DUMP_HEADER_LEN    16
#define DUMP_REC_HDR_LEN   16

/* Limits a valid dump never reaches; anything beyond is refused as malformed. */
#define DUMP_MAX_FILE      (1ULL << 30)
#define DUMP_MAX_STR       4096
#define DUMP_MAX_THREADS   1024
#define DUMP_MAX_EXTRA     256
#define DUMP_MAX_FILES     1024
#define DUMP_MAX_RO_DIRS   64

/* Record types. Numbers are forever: never reuse one. */
enum dump_rec_type {
    DREC_OUTCOME = 1,          /* how the run ended */
    DREC_IMAGE = 2,            /* the program: path, SHA-256, load bias */
    DREC_RUN = 3,              /* when and how it ran: time, seed, memory, vCPUs, argv */
    DREC_THREAD = 4,           /* one per guest thread: state, registers, FPU */
    DREC_CORE = 5,             /* the matching ELF core file: name, size, SHA-256 */
    DREC_FILES = 6,            /* the files the program opened (path, size, SHA-256), --ro-dir */
    /* 7: CPUID (dump/cpuidrec.h: the CPU model and table the guest saw)
     * 8: CPUID_PATCHES (dump/patchrec.h: where cpuid was rewritten into ud2)
     * 9..15: reserved for more machine state (memory map, futex table, ...) */
    DREC_SNAPSHOT = 16,        /* reserved: the snapshot the retired fragment started from */
    DREC_SCHEDULE = 17,        /* reserved: the retired schedule */
    DREC_TRACE_RECORDED = 18,  /* reserved: the recorded cue-point trace */
    DREC_TRACE_RETIRED = 19,   /* reserved: the retired (crashing) cue-point trace */
    DREC_SCORE = 20,           /* reserved: the winner's score and why it won */
    DREC_SHARED_VARS = 21,     /* reserved: shared variables involved */
    /* 22..31: reserved for rounds and replay; 0x1000..0x1FFF: experiments */
    DREC_END = 0xFFFF,         /* SHA-256 of everything before it; must be last */
};
#define DREC_F_REQUIRED 1u     /* a reader that does not know the type must refuse */

/* Outcome kinds as stored (stable numbers, independent of outcome.h). */
enum dump_out_kind { DOUT_EXIT = 1, DOUT_SIGNAL = 2, DOUT_DEADLOCK = 3, DOUT_TIMEOUT = 4,
                     DOUT_ERROR = 5 };

/* Thread states as stored. */
enum dump_tstate {
    DT_RUNNING = 1,    /* in user code */
    DT_IN_SYSCALL = 2, /* inside a syscall that had not returned (registers: user view) */
    DT_BLOCKED = 3,    /* futex wait (wait_addr) */
    DT_SLEEPING = 4,   /* nanosleep and friends */
    DT_NEW = 5,        /* created by clone, not started yet */
};
#define DT_F_CRASHED 1u /* the thread the outcome names */

/* Registers in Linux's user_regs_struct order (what NT_PRSTATUS holds). */
enum { DR_R15, DR_R14, DR_R13, DR_R12, DR_RBP, DR_RBX, DR_R11, DR_R10, DR_R9, DR_R8,
       DR_RAX, DR_RCX, DR_RDX, DR_RSI, DR_RDI, DR_ORIG_RAX, DR_RIP, DR_CS, DR_EFLAGS,
       DR_RSP, DR_SS, DR_FS_BASE, DR_GS_BASE, DR_DS, DR_ES, DR_FS, DR_GS, DUMP_NREGS };
extern const char *const dump_reg_names[DUMP_NREGS];
#define DUMP_FPREGS_LEN 512    /* the XSAVE legacy area (FXSAVE layout, NT_FPREGSET) */

struct dump_outcome {
    uint32_t kind;             /* enum dump_out_kind */
    int32_t signal, vector, exit_status;
    uint32_t thread;           /* tid, 0 when none */
    uint64_t rip, errcode, cr2;
    char detail[DUMP_MAX_STR];
};

struct dump_image {
    uint8_t sha256[SHA256_LEN];
    uint64_t bias, size;       /* load bias (static-pie), file size */
    char path[DUMP_MAX_STR];
};

struct dump_run {
    uint64_t created;          /* Unix time, seconds */
    uint64_t seed, mem;
    uint32_t max_vcpus, flags; /* flags: DRUN_F_SERIAL */
    char cmdline[DUMP_MAX_STR];
    char jinx_version[64];
};
#define DRUN_F_SERIAL 1u

struct dump_thread {
    uint32_t tid, state, vcpu, flags;
    uint64_t wait_addr;        /* futex address for DT_BLOCKED */
    uint64_t regs[DUMP_NREGS];
    bool has_fpregs;
    uint8_t fpregs[DUMP_FPREGS_LEN];
};

struct dump_core {
    uint8_t sha256[SHA256_LEN];
    uint64_t size;
    char name[256];            /* file name in the .jinxdump's own directory: no '/' */
};

/* A host file the program opened: replay refuses to run when it changed. */
struct dump_file {
    uint8_t sha256[SHA256_LEN];
    uint64_t size;
    char *path;                /* owned: canonical absolute host path */
};

/* A record kept as bytes: types this version does not interpret (from a newer writer),
 * or what a caller adds (the round driver's snapshot, schedule, traces). */
struct dump_record {
    uint32_t type, flags;
    uint8_t *data;             /* owned */
    uint64_t len;
};

struct dumpfile {
    uint16_t major, minor;
    struct dump_outcome outcome;
    struct dump_image image;
    bool has_run;
    struct dump_run run;
    struct dump_core core;
    struct dump_thread *threads;   /* owned; the crashed thread first */
    size_t nthreads;
    struct dump_record *extra;     /* owned */
    size_t nextra;
    bool has_files;                /* a FILES record (dumps from format 1.1) */
    struct dump_file *files;       /* owned */
    size_t nfiles;
    char **ro_dirs;                /* owned: the run's --ro-dir directories (canonical) */
    size_t nro_dirs;
    struct dump_file *written;     /* owned: the files the program wrote, as they were at
                                    * the dump (format 1.3; in VMM memory, never the host's) */
    size_t nwritten;
};


/* Encodes d (header, RUN if has_run, IMAGE, OUTCOME, THREADs, CORE, FILES if has_files,
 * extra, END) into b.
 * Returns 0, or -1 when out of memory or d holds an out-of-range value. */
int dumpfile_encode(const struct dumpfile *d, struct dbuf *b);

#define DUMPFILE_NO_CHECKSUM 1u    /* fuzzing only: skip the END digest check */
/* Parses buf into d (which it owns afterwards: dumpfile_free). 0, or -1 with a message. */
int dumpfile_parse(const uint8_t *buf, size_t len, unsigned flags, struct dumpfile *d,
                   char *err, size_t errlen);
/* Reads and parses a file. */
int dumpfile_read(const char *path, struct dumpfile *d, char *err, size_t errlen);
void dumpfile_free(struct dumpfile *d);

/* Adds a raw record to d->extra (copying data). 0, or -1 out of memory / bad type. */
int dumpfile_add_record(struct dumpfile *d, uint32_t type, uint32_t flags, const void *data,
                        uint64_t len);

/* Adds a file (path copied) or an --ro-dir to d's FILES record (sets has_files). 0, or -1
 * out of memory or past the limits. */
int dumpfile_add_file(struct dumpfile *d, const char *path, uint64_t size,
                      const uint8_t sha256[SHA256_LEN]);
int dumpfile_add_ro_dir(struct dumpfile *d, const char *dir);
int dumpfile_add_written(struct dumpfile *d, const char *path, uint64_t size,
                         const uint8_t sha256[SHA256_LEN]);

const char *dump_tstate_name(uint32_t state);
const char *dump_out_kind_name(uint32_t kind);

#endif
