/* Programs whose fate follows what jinx's read-only file layer refuses (issue 28):
 *   write   writes output.txt in its cwd as a PARSEC-style program does; it cannot, says
 *           "error opening output.txt" and exits 1 (a failure that is jinx's, not its own)
 *   assert  the same with assert(fout != NULL): SIGABRT
 *   probe   asks for what it may not have (a write in its cwd, a path outside the grants,
 *           mkdir, unlink, rename, access(W_OK)), copes with every refusal and ends well;
 *           also checks the answers Linux gives (EEXIST before EROFS, ...)
 *   threads two threads count under a lock (so rounds and whole-run schedules explore
 *           it), then the write of output.txt fails: exit 1, jinx's failure again
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

static int probe(const char *outside)
{
    FILE *f = fopen("output.txt", "w");
    CHECK(f == NULL && (errno == EROFS || errno == EACCES));
    /* O_CREAT|O_EXCL and mkdir of a name that exists: EEXIST, as Linux answers first. */
    CHECK(open(".", O_WRONLY | O_CREAT | O_EXCL, 0644) == -1 && errno == EEXIST);
    CHECK(mkdir(".", 0755) == -1 && errno == EEXIST);
    CHECK(mkdir("newdir", 0755) == -1 && (errno == EROFS || errno == EACCES));
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
    FILE *fout = fopen("output.txt", "w");
    if (!fout) {
        fprintf(stderr, "error opening output.txt\n");
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
        FILE *fout = fopen("output.txt", "w");
        assert(fout != NULL);
        fclose(fout);
        return 0;
    }
    if (!strcmp(mode, "probe"))
        return probe(argc > 2 ? argv[2] : NULL);
    if (!strcmp(mode, "sysprobe"))
        sysprobe();
    fprintf(stderr, "usage: fileout write|assert|threads|probe [PATH]|sysprobe\n");
    return 2;
}
