/*
 * guestfuzz's "files" mode (included by guestfuzz.c only): the read-only file layer under
 * attack (docs/hardening.md, issue 15 "Security").
 *
 *   guestfuzz files SEED ITERS THREADS DIR
 *
 * DIR is a directory the run grants with --ro-dir. THREADS threads issue ITERS file
 * syscalls in total with wild paths (inside DIR, "..", symlinks out, absolute host paths,
 * /proc/self/..., /dev/..., empty, unterminated at a guard page, longer than PATH_MAX,
 * non-user pointers), huge lengths (read, pread64, readv, readlink, getdents64, getcwd),
 * flag soup (O_CREAT|O_WRONLY|O_TRUNC|O_TMPFILE|..., random fcntl commands, AT_* flags),
 * creating and changing calls (mkdirat, unlinkat, renameat, symlinkat, linkat, fchmodat,
 * truncate, write), and descriptors of the other threads: every opened descriptor goes to
 * a shared table that all threads read, seek, map, dup and close at random. Mapped files
 * are mapped past their end and with huge offsets. Whatever is read (read, pread, mmap) is
 * searched for "OUTSIDE-SECRET", the content the test puts outside DIR.
 *
 * Then, in one thread, the checks with an expected answer, on a data file written fresh
 * (the workers may have changed DIR's: the guest writes privately): mapped over 3 pages
 * (the bytes past its end must read as zero; Linux would raise SIGBUS on the whole pages
 * past it, jinx gives zeros: docs/contract.md), a private writable mapping of it written to
 * (must stay private), a shared writable one refused. Prints
 * "guestfuzz: mode=files seed=S syscalls=N secret_reads=K checks=ok|FAILED:what" on
 * stderr; exits 0 when the checks pass (secret_reads is the test's to judge), 1 if not.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#define FSLOTS 32
static const char *files_dir;
static atomic_int fslot[FSLOTS];
static atomic_ulong secret_reads;

static void fslots_init(void)
{
    for (int i = 0; i < FSLOTS; i++)
        atomic_store(&fslot[i], -1);
}

/* The needle, stored XORed so that this program's own file (granted, and readable via
 * /proc/self/exe) does not contain it. */
static char secret[15];
static void secret_init(void)
{
    static const uint8_t x[] = {0x1a, 0x00, 0x01, 0x06, 0x1c, 0x11, 0x10, 0x78, 0x06, 0x10,
                                0x16, 0x07, 0x10, 0x01};
    for (size_t i = 0; i < sizeof x; i++)
        secret[i] = (char)(x[i] ^ 0x55);
}

static void look_for_secret(const uint8_t *p, long n)
{
    const long len = (long)strlen(secret);
    for (long i = 0; i + len <= n; i++)
        if (p[i] == 'O' && !memcmp(p + i, secret, (size_t)len)) {
            atomic_fetch_add(&secret_reads, 1);
            return;
        }
}

/* A path, in f->arena (or a non-user pointer). */
static uint64_t wild_path(struct fuzzer *f)
{
    static const char *const fixed[] = {
        "data", "sub", "sub/../data", "out", "abs", "up", "up/secret", "loop", "../secret",
        "../../../../../../etc/passwd", "sub/../../secret", "./././data", "data/", "sub/.",
        "/etc/passwd", "/etc/shadow", "/proc/self/mem", "/proc/self/maps", "/proc/self/exe",
        "/proc/self/fd/0", "/proc/self/root/etc/passwd", "/proc/self/cwd/../secret",
        "/proc/1/environ", "/dev/mem", "/dev/kvm", "/dev/null", "/sys/kernel/notes", "/",
        "", ".", "..", "/tmp", "newfile", "sub/newdir",
    };
    uint64_t r = next(&f->rng);
    char *p = (char *)f->arena;
    switch (r % 8) {
    case 0: case 1: case 2: /* relative to DIR or to the cwd */
        snprintf(p, 4096, "%s/%s", files_dir, fixed[(r >> 8) % (sizeof fixed / sizeof *fixed)]);
        return (uint64_t)p;
    case 3:
        return (uint64_t)fixed[(r >> 8) % (sizeof fixed / sizeof *fixed)];
    case 4: { /* unterminated: runs into the guard page */
        char *e = (char *)f->arena + ARENA_SIZE - 1 - (r >> 8) % 64;
        memset(e - 8192, 'a', 8192 + (size_t)((char *)f->arena + ARENA_SIZE - e));
        return (uint64_t)(e - 8192 + (r >> 20) % 8192);
    }
    case 5: { /* longer than PATH_MAX, or deep "../" chains */
        size_t n = 4000 + (r >> 8) % 5000, unit = (r & 0x100) ? 3 : 2;
        for (size_t i = 0; i < n; i++)
            p[i] = unit == 3 ? "../"[i % 3] : "a/"[i % 2];
        p[n] = 0;
        return (uint64_t)p;
    }
    case 6: /* random bytes */
        for (int i = 0; i < 64; i++)
            p[i] = (char)(next(&f->rng) & 0xFF);
        p[(r >> 8) % 64] = 0;
        return (uint64_t)p;
    default:
        return foreign(f);
    }
}

static int any_fd(struct fuzzer *f)
{
    uint64_t r = next(&f->rng);
    switch (r % 4) {
    case 0: return 3 + (int)((r >> 8) % 40);
    case 1: return (int)(r >> 8);
    default: return atomic_load(&fslot[(r >> 8) % FSLOTS]);
    }
}

static uint64_t huge_len(struct fuzzer *f)
{
    uint64_t r = next(&f->rng);
    switch (r % 4) {
    case 0: return (r >> 8) % 8192;
    case 1: return 1ULL << ((r >> 8) % 64);
    case 2: return ~0ULL - (r >> 8) % 16;
    default: return ARENA_SIZE;
    }
}

/* A buffer: the arena (reads there are searched for the secret), or foreign memory. */
static uint64_t rbuf(struct fuzzer *f, bool *in_arena)
{
    *in_arena = next(&f->rng) % 4 != 0;
    return *in_arena ? (uint64_t)f->arena + 8192 : foreign(f);
}

static void keep_fd(struct fuzzer *f, long fd)
{
    if (fd >= 3)
        atomic_store(&fslot[next(&f->rng) % FSLOTS], (int)fd);
}

static void file_mmap(struct fuzzer *f)
{
    uint64_t r = next(&f->rng);
    uint64_t len = (r & 1) ? 4096 * (1 + (r >> 8) % 4) : huge_len(f);
    uint64_t off = (r & 2) ? 0 : ((r & 4) ? (1ULL << 40) : 4096 * ((r >> 16) % 8));
    int prot = (int)((r >> 24) & 7), flags = (r & 8) ? MAP_SHARED : MAP_PRIVATE;
    long p = raw6(SYS_mmap, 0, (long)len, prot, flags, any_fd(f), (long)off);
    if (p < 0 && p > -4096)
        return;
    if ((prot & PROT_READ) && len <= 4 * 4096)
        look_for_secret((const uint8_t *)p, (long)len);
    raw6(SYS_munmap, p, (long)len, 0, 0, 0, 0);
}

static unsigned long files_calls(struct fuzzer *f, long n)
{
    unsigned long calls = 0;
    for (long i = 0; i < n; i++, calls++) {
        uint64_t r = next(&f->rng);
        int flags = (int)(next(&f->rng) & 0xFFFFFFFF);
        bool arena;
        long ret, at = (r & 0x100) ? AT_FDCWD : any_fd(f);
        switch (r % 20) {
        case 0: keep_fd(f, raw6(SYS_openat, at, (long)wild_path(f), (r & 0x200) ? O_RDONLY : flags, 0644, 0, 0)); break;
        case 1: keep_fd(f, raw6(SYS_open, (long)wild_path(f), (r & 0x200) ? O_RDONLY | O_DIRECTORY : flags, 0600, 0, 0, 0)); break;
        case 2: case 3: {
            uint64_t b = rbuf(f, &arena), len = huge_len(f);
            ret = (r & 1) ? raw6(SYS_pread64, any_fd(f), (long)b, (long)len, (long)huge_len(f), 0, 0)
                          : raw6(SYS_read, any_fd(f), (long)b, (long)len, 0, 0, 0);
            if (arena && ret > 0)
                look_for_secret((const uint8_t *)b, ret);
            break;
        }
        case 4: {
            struct iovec *iov = (struct iovec *)f->arena;
            for (int k = 0; k < 8; k++)
                iov[k] = (struct iovec){(void *)(f->arena + 8192 + 512 * k), (size_t)((k & 1) ? 512 : huge_len(f))};
            raw6(SYS_readv, any_fd(f), (r & 0x200) ? (long)iov : (long)foreign(f), (long)(huge_len(f) % 2000), 0, 0, 0);
            break;
        }
        case 5: raw6(SYS_lseek, any_fd(f), (long)huge_len(f) * ((r & 0x200) ? -1 : 1), (long)((r >> 12) % 6), 0, 0, 0); break;
        case 6: raw6(SYS_fstat, any_fd(f), (long)rbuf(f, &arena), 0, 0, 0, 0); break;
        case 7: raw6(SYS_newfstatat, at, (long)wild_path(f), (long)rbuf(f, &arena), flags & 0x1F00, 0, 0); break;
        case 8: raw6(SYS_statx, at, (long)wild_path(f), flags, (long)(r >> 20), (long)rbuf(f, &arena), 0); break;
        case 9: if (!(r & 0x600)) { int fd = any_fd(f); if (fd >= 3) raw6(SYS_close, fd, 0, 0, 0, 0, 0); } break;
        case 10: file_mmap(f); break;
        case 11: raw6(SYS_faccessat, at, (long)wild_path(f), (long)(r >> 20) % 8, 0, 0, 0); break;
        case 12: raw6(SYS_readlinkat, at, (long)wild_path(f), (long)rbuf(f, &arena), (long)huge_len(f), 0, 0); break;
        case 13: raw6(SYS_getdents64, any_fd(f), (long)rbuf(f, &arena), (long)huge_len(f), 0, 0, 0); break;
        case 14: raw6(SYS_getcwd, (long)rbuf(f, &arena), (long)huge_len(f), 0, 0, 0, 0); break;
        case 15: { /* fcntl: random commands; F_DUPFD's results join the table */
            long cmd = (r & 0x200) ? (long)((r >> 12) % 1100) : (long)((r >> 12) % 5);
            ret = raw6(SYS_fcntl, any_fd(f), cmd, (long)huge_len(f), 0, 0, 0);
            if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
                keep_fd(f, ret);
            break;
        }
        case 16: keep_fd(f, raw6(SYS_dup3, any_fd(f), 3 + (long)((r >> 12) % 60), flags & O_CLOEXEC, 0, 0, 0)); break;
        case 17: { /* creating and changing: all must fail, none may reach the host */
            static const int nrs[] = {SYS_mkdirat, SYS_unlinkat, SYS_renameat, SYS_symlinkat,
                                      SYS_linkat, SYS_fchmodat, SYS_truncate, SYS_mknodat, SYS_utimensat};
            long nr = nrs[(r >> 12) % (sizeof nrs / sizeof *nrs)];
            long p1 = (long)wild_path(f);
            char *second = (char *)f->arena + (1 << 20);
            snprintf(second, 4096, "%s/%s", files_dir, (r & 0x200) ? "newfile" : "data");
            if (nr == SYS_symlinkat)
                raw6(nr, (long)second, at, p1, 0, 0, 0);
            else if (nr == SYS_truncate)
                raw6(nr, p1, 0, 0, 0, 0, 0);
            else
                raw6(nr, at, p1, (r & 0x400) ? (long)second : 0755, AT_FDCWD, (long)second, 0);
            break;
        }
        case 18: { /* writes to descriptors of files (never stdout/stderr) */
            int fd = any_fd(f);
            if (fd >= 3)
                raw6((r & 0x200) ? SYS_pwrite64 : SYS_write, fd, (long)f->arena, 64, 0, 0, 0);
            break;
        }
        default: raw6(SYS_chdir, (long)wild_path(f), 0, 0, 0, 0, 0); break;
        }
    }
    return calls;
}

static void *files_worker(void *p)
{
    struct fuzzer f;
    fuzzer_init(&f, (uint64_t)p);
    atomic_fetch_add(&total_calls, files_calls(&f, iters / nthreads));
    atomic_fetch_add(&done_threads, 1);
    return NULL;
}

/* The checks with an expected answer; NULL when all pass, else what failed. */
static const char *files_checks(void)
{
    char path[4096];
    /* The workers may have changed DIR/data (the guest writes privately, in jinx-vmm's
     * memory): the checks' own file, made fresh. */
    snprintf(path, sizeof path, "/tmp/guestfuzz-checks-%llu", (unsigned long long)seed);
    raw6(SYS_mkdir, (long)path, 0755, 0, 0, 0, 0);
    snprintf(path + strlen(path), sizeof path - strlen(path), "/data");
    int fd = (int)raw6(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CREAT | O_TRUNC, 0644, 0, 0);
    if (fd < 0 || raw6(SYS_write, fd, (long)"inside data\n", 12, 0, 0, 0) != 12)
        return "create the checks' data file";
    raw6(SYS_close, fd, 0, 0, 0, 0, 0);
    fd = (int)raw6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY, 0, 0, 0);
    if (fd < 0)
        return "open DIR/data";
    struct stat st;
    if (raw6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) != 0 || st.st_size <= 0 || st.st_size >= 4096)
        return "fstat DIR/data (it must be 1..4095 bytes)";
    long p = raw6(SYS_mmap, 0, 3 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p < 0 && p > -4096)
        return "mmap DIR/data over 3 pages";
    for (long i = st.st_size; i < 3 * 4096; i++)
        if (((volatile const uint8_t *)p)[i])
            return "a byte past the end of a mapped file is not zero";
    raw6(SYS_munmap, p, 3 * 4096, 0, 0, 0, 0);
    p = raw6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p < 0 && p > -4096)
        return "mmap DIR/data private writable";
    memset((void *)p, 'W', 4096);
    uint8_t b[16];
    if (raw6(SYS_pread64, fd, (long)b, 1, 0, 0, 0) != 1 || b[0] == 'W')
        return "a private mapping's write reached the file";
    raw6(SYS_munmap, p, 4096, 0, 0, 0, 0);
    p = raw6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p >= 0 || p <= -4096)
        return "a shared writable mapping of a file was allowed";
    p = raw6(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, fd, 1L << 40);
    if (!(p < 0 && p > -4096))
        for (int i = 0; i < 4096; i++)
            if (((volatile const uint8_t *)p)[i])
                return "a mapping at an offset far past the end is not zero";
    raw6(SYS_close, fd, 0, 0, 0, 0, 0);
    /* The ways out, each tried for certain (the workers try them at random): whatever
     * opens is read and mapped, and counted if it is the secret. */
    static const char *const out[] = {"out", "abs", "up/secret", "../secret", "sub/../../secret"};
    static uint8_t buf[4096];
    for (size_t i = 0; i < sizeof out / sizeof *out; i++) {
        snprintf(path, sizeof path, "%s/%s", files_dir, out[i]);
        fd = (int)raw6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY, 0, 0, 0);
        if (fd < 0)
            continue;
        long n = raw6(SYS_read, fd, (long)buf, sizeof buf, 0, 0, 0);
        if (n > 0)
            look_for_secret(buf, n);
        p = raw6(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        if (!(p < 0 && p > -4096)) {
            look_for_secret((const uint8_t *)p, 4096);
            raw6(SYS_munmap, p, 4096, 0, 0, 0, 0);
        }
        raw6(SYS_close, fd, 0, 0, 0, 0, 0);
    }
    return NULL;
}

static int mode_files(const char *dir)
{
    files_dir = dir;
    fslots_init();
    secret_init();
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (long i = 0; i < nthreads; i++) {
        pthread_t t;
        if (pthread_create(&t, &at, files_worker, (void *)(seed * 1000003ULL + (uint64_t)i))) {
            say("guestfuzz: pthread_create failed\n");
            return 3;
        }
    }
    while (atomic_load(&done_threads) < nthreads)
        sched_yield();
    const char *bad = files_checks();
    char extra[160];
    snprintf(extra, sizeof extra, " secret_reads=%lu checks=%s%s", atomic_load(&secret_reads),
             bad ? "FAILED:" : "ok", bad ? bad : "");
    report("files", extra);
    return bad ? 1 : 0;
}
