/* Programs whose fate follows what jinx's file layer refuses (issue 28): it writes only
 * below the program's cwd, /tmp and the grants (in the VM), so OUT (default output.txt,
 * which works) outside them (/etc/output.txt) is refused:
 *   write [OUT]   writes OUT as a PARSEC-style program does; refused, it says "error
 *           opening OUT" and exits 1 (a failure that is jinx's, not its own)
 *   assert [OUT]  the same with assert(fout != NULL): SIGABRT
 *   probe DIR [FILE]  asks for what it may not have (a write and a mkdir in DIR, outside
 *           the writable area; FILE: a path outside the grants), copes with every refusal
 *           and ends well; also checks the answers Linux gives (EEXIST before EROFS, ...)
 *   threads [OUT] two threads count under a lock (so rounds and whole-run schedules
 *           explore it), then the write of OUT: refused, exit 1, jinx's failure again
 *   sysprobe  reads /proc and /sys as libc does, then aborts: a bug of its own (libc's
 *           probes are no jinx limit)
 * Nothing here may ever reach the host's disk: tests/integration/fileverdict.sh checks. */
#define _GNU_SOURCE
#include "check.h"
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *out = "output.txt";

static int probe(const char *dir, const char *outside)
{
    char p[512];
    snprintf(p, sizeof p, "%s/output.txt", dir);
    FILE *f = fopen(p, "w");
    CHECK(f == NULL && (errno == EROFS || errno == EACCES));
    /* O_CREAT|O_EXCL and mkdir of a name that exists: EEXIST, as Linux answers first. */
    CHECK(open(".", O_WRONLY | O_CREAT | O_EXCL, 0644) == -1 && errno == EEXIST);
    CHECK(mkdir(".", 0755) == -1 && errno == EEXIST);
    snprintf(p, sizeof p, "%s/newdir", dir);
    CHECK(mkdir(p, 0755) == -1 && (errno == EROFS || errno == EACCES));
    CHECK(unlink("output.txt") == -1 && errno == ENOENT);
    CHECK(rename("fileout-nothing", "b") == -1 && errno == ENOENT);
    CHECK(syscall(SYS_open, (void *)0x10, O_RDONLY) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_mkdir, (void *)0x10, 0755) == -1 && errno == EFAULT);
    if (outside) /* an existing path outside the grants: EACCES */
        CHECK(open(outside, O_RDONLY) == -1 && errno == EACCES);
    printf("probe coped\n");
    return 0;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *counting(void *arg)
{
    (void)arg;
    for (int i = 0; i < 25; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
        if (i % 10 == 0)
            usleep(1000);
    }
    return NULL;
}

static int write_output(void)
{
    FILE *fout = fopen(out, "w");
    if (!fout) {
        fprintf(stderr, "error opening %s\n", out);
        return 1;
    }
    fprintf(fout, "clusters %ld\n", counter);
    fclose(fout);
    return 0;
}

static void sysprobe(void)
{
    /* What libc reads for sysconf, pthread_getattr_np and malloc: refused, no limit. */
    CHECK(open("/proc/self/maps", O_RDONLY) == -1);
    CHECK(open("/sys/devices/system/cpu/online", O_RDONLY) == -1);
    CHECK(open("/proc/sys/vm/overcommit_memory", O_RDONLY) == -1);
    CHECK(sysconf(_SC_NPROCESSORS_ONLN) >= 1);
    fprintf(stderr, "sysprobe: a bug of its own\n");
    abort();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "write";
    if (argc > 2 && strcmp(mode, "probe"))
        out = argv[2];
    if (!strcmp(mode, "write"))
        return write_output();
    if (!strcmp(mode, "threads")) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            CHECK(pthread_create(&t[i], NULL, counting, NULL) == 0);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        CHECK(counter == 50);
        return write_output();
    }
    if (!strcmp(mode, "assert")) {
        FILE *fout = fopen(out, "w");
        assert(fout != NULL);
        fclose(fout);
        return 0;
    }
    if (!strcmp(mode, "probe"))
        return probe(argc > 2 ? argv[2] : "/etc", argc > 3 ? argv[3] : NULL);
    if (!strcmp(mode, "sysprobe"))
        sysprobe();
    fprintf(stderr, "usage: fileout write|assert|threads [OUT] | probe DIR [FILE] | sysprobe\n");
    return 2;
}
