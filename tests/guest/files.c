/* The private writable file layer (issue 28): what a program writes in its cwd and /tmp
 * lives in the VM, and behaves as on Linux. Every line it prints is the same natively
 * (run it in a scratch directory): tests/integration/files.sh compares them.
 *   basic   create, write, read back, pwrite, writev, lseek, O_APPEND, O_EXCL, stat and
 *           fstat sizes, readdir, rename over a file, unlink (open file still readable),
 *           ftruncate, truncate, mkstemp, tmpfile, mkdir/rmdir, private mmap of a
 *           written file
 *   log [N] four threads append N lines each (default 200) to one log file (O_APPEND),
 *           a write each, no lock; then the log is read back and every line checked
 *   crash   writes files before and after making threads, prints their digest, then
 *           dereferences NULL (a bug: jinx test dumps it, the dump replays with the
 *           same files)
 *   counters N  two threads each keep a count in a file of its own (read, add one, write
 *           back) and append to a shared log under a lock, N times: the counts and the log
 *           must come out exact (under --attach, simulations that wrote must leave nothing)
 *   host    over host files (run in a granted cwd holding a.txt "host a\n", b.txt, c.txt
 *           and sub/d.txt): appends to a.txt (copied in first), renames b.txt, unlinks
 *           c.txt and sub/d.txt, removes sub, reads and lists what it sees
 *   big N   writes N MiB to a file (the --file-mem limit) */
#define _GNU_SOURCE
#include "check.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static void put(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
    CHECK(close(fd) == 0);
}

static char *get(const char *path)
{
    static char buf[4096];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    CHECK(n >= 0);
    buf[n] = 0;
    close(fd);
    return buf;
}

static off_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* The names in dir, sorted, as one line. */
static void list(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    char names[64][64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            snprintf(names[n++], 64, "%.60s%s", e->d_name, e->d_type == DT_DIR ? "/" : "");
    closedir(d);
    qsort(names, (size_t)n, 64, (int (*)(const void *, const void *))strcmp);
    printf("ls %s:", dir);
    for (int i = 0; i < n; i++)
        printf(" %s", names[i]);
    printf("\n");
}

static int basic(void)
{
    put("a.txt", "hello\n");
    printf("read a.txt: %s", get("a.txt"));
    printf("size a.txt: %lld\n", (long long)size_of("a.txt"));
    /* pwrite past the end (a hole of zeroes), then lseek and read. */
    int fd = open("a.txt", O_RDWR);
    CHECK(fd >= 0);
    CHECK(pwrite(fd, "XY", 2, 10) == 2);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    printf("fstat after pwrite: %lld regular %d\n", (long long)st.st_size, S_ISREG(st.st_mode));
    char b[16] = {0};
    CHECK(lseek(fd, 0, SEEK_END) == 12);
    CHECK(pread(fd, b, sizeof b, 0) == 12);
    printf("bytes:");
    for (int i = 0; i < 12; i++)
        printf(" %02x", (unsigned char)b[i]);
    printf("\n");
    struct iovec iov[2] = {{"ab", 2}, {"cd\n", 3}};
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    CHECK(writev(fd, iov, 2) == 5);
    CHECK(ftruncate(fd, 7) == 0);
    CHECK(close(fd) == 0);
    printf("after writev+ftruncate: %s", get("a.txt"));
    /* O_APPEND, O_EXCL */
    fd = open("a.txt", O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && write(fd, "tail\n", 5) == 5 && close(fd) == 0);
    printf("appended: %s", get("a.txt"));
    CHECK(open("a.txt", O_WRONLY | O_CREAT | O_EXCL, 0644) == -1 && errno == EEXIST);
    CHECK(open("nothing", O_RDONLY) == -1 && errno == ENOENT);
    CHECK(open("a.txt/x", O_RDONLY) == -1 && errno == ENOTDIR);
    /* read of a write-only descriptor, write of a read-only one */
    fd = open("a.txt", O_WRONLY);
    CHECK(fd >= 0 && read(fd, b, 1) == -1 && errno == EBADF && close(fd) == 0);
    fd = open("a.txt", O_RDONLY);
    CHECK(fd >= 0 && write(fd, b, 1) == -1 && errno == EBADF && close(fd) == 0);
    /* fopen/fprintf, as most programs write */
    FILE *f = fopen("output.txt", "w");
    CHECK(f != NULL);
    for (int i = 0; i < 1000; i++)
        fprintf(f, "line %d\n", i);
    CHECK(fclose(f) == 0);
    printf("size output.txt: %lld\n", (long long)size_of("output.txt"));
    /* directories */
    CHECK(mkdir("sub", 0755) == 0);
    CHECK(mkdir("sub", 0755) == -1 && errno == EEXIST);
    put("sub/in.txt", "inside\n");
    list(".");
    list("sub");
    CHECK(rmdir("sub") == -1 && errno == ENOTEMPTY);
    /* rename over an existing file; unlink while open */
    put("b.txt", "bee\n");
    CHECK(rename("a.txt", "b.txt") == 0);
    CHECK(get("a.txt") == NULL);
    printf("renamed: %s", get("b.txt"));
    CHECK(rename("sub/in.txt", "moved.txt") == 0);
    CHECK(rmdir("sub") == 0);
    fd = open("moved.txt", O_RDONLY);
    CHECK(fd >= 0 && unlink("moved.txt") == 0);
    CHECK(read(fd, b, 7) == 7 && !memcmp(b, "inside\n", 7) && close(fd) == 0);
    CHECK(stat("moved.txt", &st) == -1 && errno == ENOENT);
    list(".");
    /* truncate by path, fsync */
    CHECK(truncate("b.txt", 3) == 0);
    printf("truncated: '%s'\n", get("b.txt"));
    fd = open("b.txt", O_WRONLY);
    CHECK(fd >= 0 && fsync(fd) == 0 && fdatasync(fd) == 0 && close(fd) == 0);
    /* mkstemp in /tmp */
    char tmpl[] = "/tmp/jinx-files-XXXXXX";
    fd = mkstemp(tmpl);
    CHECK(fd >= 0);
    CHECK(write(fd, "temp", 4) == 4);
    CHECK(fstat(fd, &st) == 0 && st.st_size == 4);
    CHECK(close(fd) == 0 && unlink(tmpl) == 0);
    printf("mkstemp ok\n");
    /* tmpfile: musl's is mkstemp and unlink, glibc's O_TMPFILE */
    FILE *t = tmpfile();
    CHECK(t != NULL);
    CHECK(fputs("scratch\n", t) >= 0);
    rewind(t);
    char line[16];
    CHECK(fgets(line, sizeof line, t) != NULL);
    printf("tmpfile: %s", line);
    CHECK(fclose(t) == 0);
    /* a private mapping of a written file sees its bytes */
    fd = open("output.txt", O_RDONLY);
    CHECK(fd >= 0);
    char *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(m != MAP_FAILED);
    printf("mmap: %.7s", m);
    printf("\n");
    CHECK(munmap(m, 4096) == 0 && close(fd) == 0);
    CHECK(access("b.txt", W_OK) == 0);
    CHECK(unlink("b.txt") == 0 && unlink("output.txt") == 0);
    list(".");
    printf("files basic ok\n");
    return 0;
}

#define THREADS 4
static int LINES = 200;
static int logfd;

static void *logger(void *arg)
{
    long id = (long)arg;
    char line[64];
    for (int i = 0; i < LINES; i++) {
        int n = snprintf(line, sizeof line, "thread %ld line %03d\n", id, i);
        CHECK(write(logfd, line, (size_t)n) == n);
        if (i % 50 == 0)
            sched_yield();
    }
    return NULL;
}

static int logtest(void)
{
    logfd = open("log.txt", O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
    CHECK(logfd >= 0);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, logger, (void *)i) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(close(logfd) == 0);
    FILE *f = fopen("log.txt", "r");
    CHECK(f != NULL);
    char line[64];
    int count[THREADS] = {0}, next[THREADS] = {0}, total = 0;
    while (fgets(line, sizeof line, f)) {
        long id;
        int n;
        CHECK(sscanf(line, "thread %ld line %d", &id, &n) == 2 && id >= 0 && id < THREADS);
        CHECK(n == next[id]); /* each thread's lines in its order, none torn */
        next[id]++;
        count[id]++;
        total++;
    }
    fclose(f);
    printf("log: %d lines, %d %d %d %d per thread, size %lld\n", total, count[0], count[1],
           count[2], count[3], (long long)size_of("log.txt"));
    CHECK(unlink("log.txt") == 0);
    printf("files log ok\n");
    return 0;
}

static uint32_t digest(const char *path)
{
    char *s = get(path);
    uint32_t h = 2166136261u;
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void *crash_writer(void *arg)
{
    char name[32], text[64];
    snprintf(name, sizeof name, "/tmp/jinx-files-part%ld.txt", (long)arg);
    snprintf(text, sizeof text, "part %ld written by its thread\n", (long)arg);
    put(name, text);
    return NULL;
}

static int crash(void)
{
    put("before.txt", "written before the threads\n");
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, crash_writer, (void *)i) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    put("after.txt", "written after the threads\n");
    printf("digest %08x %08x %08x %08x\n", digest("before.txt"), digest("/tmp/jinx-files-part0.txt"),
           digest("/tmp/jinx-files-part1.txt"), digest("after.txt"));
    fflush(stdout);
    volatile int *p = NULL;
    return *p;
}

static pthread_mutex_t loglock = PTHREAD_MUTEX_INITIALIZER;
static long rounds_n;

static void *counter(void *arg)
{
    char name[32], buf[32];
    snprintf(name, sizeof name, "/tmp/jinx-files-count%ld", (long)arg);
    for (long i = 0; i < rounds_n; i++) {
        int fd = open(name, O_RDWR | O_CREAT, 0644);
        CHECK(fd >= 0);
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        CHECK(n >= 0);
        buf[n] = 0;
        long v = n ? atol(buf) : 0;
        CHECK(v == i);
        int len = snprintf(buf, sizeof buf, "%ld\n", v + 1);
        CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)len, 0) == len && close(fd) == 0);
        pthread_mutex_lock(&loglock);
        FILE *f = fopen("shared.log", "a");
        CHECK(f != NULL);
        fprintf(f, "%ld %ld\n", (long)arg, i);
        CHECK(fclose(f) == 0);
        pthread_mutex_unlock(&loglock);
        if (i % 64 == 0)
            usleep(500);
    }
    return NULL;
}

static int counters(long n)
{
    rounds_n = n;
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, counter, (void *)i) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("counts: %s", get("/tmp/jinx-files-count0"));
    printf("counts: %s", get("/tmp/jinx-files-count1"));
    FILE *f = fopen("shared.log", "r");
    CHECK(f != NULL);
    long lines = 0, a, b;
    while (fscanf(f, "%ld %ld", &a, &b) == 2)
        lines++;
    fclose(f);
    printf("shared.log: %ld lines, %lld bytes\n", lines, (long long)size_of("shared.log"));
    CHECK(unlink("shared.log") == 0 && unlink("/tmp/jinx-files-count0") == 0 && unlink("/tmp/jinx-files-count1") == 0);
    printf("files counters ok\n");
    return 0;
}

static int host(void)
{
    printf("a.txt: %s", get("a.txt"));
    int fd = open("a.txt", O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && write(fd, "appended\n", 9) == 9 && close(fd) == 0);
    printf("a.txt now: %s", get("a.txt"));
    printf("size a.txt: %lld\n", (long long)size_of("a.txt"));
    CHECK(rename("b.txt", "b2.txt") == 0);
    CHECK(get("b.txt") == NULL && errno == ENOENT);
    printf("b2.txt: %s", get("b2.txt"));
    CHECK(unlink("c.txt") == 0 && size_of("c.txt") == -1 && errno == ENOENT);
    CHECK(unlink("c.txt") == -1 && errno == ENOENT);
    CHECK(rmdir("sub") == -1 && errno == ENOTEMPTY);
    CHECK(unlink("sub/d.txt") == 0 && rmdir("sub") == 0);
    CHECK(mkdir("sub", 0755) == 0); /* a new one, empty: the host's is not below it */
    list("sub");
    put("c.txt", "new c\n");
    list(".");
    printf("c.txt: %s", get("c.txt"));
    printf("files host ok\n");
    return 0;
}

static int big(long mib)
{
    char *buf = calloc(1, 1 << 20);
    CHECK(buf != NULL);
    FILE *f = fopen("big.bin", "w");
    if (!f) {
        perror("big.bin");
        return 1;
    }
    for (long i = 0; i < mib; i++)
        if (fwrite(buf, 1, 1 << 20, f) != 1 << 20) {
            perror("writing big.bin");
            return 1;
        }
    if (fclose(f) != 0) {
        perror("closing big.bin");
        return 1;
    }
    printf("big: %ld MiB written\n", mib);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "basic";
    if (!strcmp(mode, "basic"))
        return basic();
    if (!strcmp(mode, "log")) {
        if (argc > 2)
            LINES = atoi(argv[2]);
        return logtest();
    }
    if (!strcmp(mode, "crash"))
        return crash();
    if (!strcmp(mode, "counters"))
        return counters(argc > 2 ? atol(argv[2]) : 2000);
    if (!strcmp(mode, "host"))
        return host();
    if (!strcmp(mode, "big"))
        return big(argc > 2 ? atol(argv[2]) : 1);
    fprintf(stderr, "usage: files basic|log [N]|crash|counters N|host|big N\n");
    return 2;
}
