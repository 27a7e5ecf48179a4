// dyn-files — the file layer seen from a dynamically linked glibc program: for each
// argument, one action and its result on stdout, so tests/integration/dynbin.sh can
// compare the errno the program got with the one Linux gives on a read-only mount.
//
//   read:PATH     open, read all, print "read PATH: <bytes> <first line>" or the errno name
//   write:PATH    open(O_WRONLY) / open(O_CREAT) / mkdir / unlink of PATH: errno names
//   stat:PATH     stat: "stat PATH: size N" or the errno name
//   list:DIR      getdents through opendir/readdir: entry names, sorted
//   mmap:PATH     mmap(PROT_READ, MAP_PRIVATE) of the whole file; print its first line
//   cwd           getcwd
//   loop:N:PATH   N times: open, read, close PATH (which the test swaps meanwhile), print
//                 "loop PATH: inside I secret S refused R": reads that got no "SECRET",
//                 reads that did, opens that failed
//   readlink:PATH readlink: "readlink PATH: TARGET" or the errno name
//
// usage: dyn-files ACTION...   (exit 0; the results are the output)
#include "common.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ename(int e)
{
    switch (e) {
    case 0: return "OK";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EROFS: return "EROFS";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case ELOOP: return "ELOOP";
    case EEXIST: return "EEXIST";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    default: return "EOTHER";
    }
}

static void first_line(const char *buf, size_t n, char *out, size_t outlen)
{
    size_t i = 0;
    while (i < n && i + 1 < outlen && buf[i] != '\n') {
        out[i] = buf[i];
        i++;
    }
    out[i] = 0;
}

static void do_read(const char *p)
{
    int fd = open(p, O_RDONLY);
    if (fd < 0) {
        printf("read %s: %s\n", p, ename(errno));
        return;
    }
    char buf[4096], line[128];
    ssize_t total = 0, n;
    char head[4096];
    size_t hn = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        if (hn == 0) {
            memcpy(head, buf, (size_t)n);
            hn = (size_t)n;
        }
        total += n;
    }
    off_t end = lseek(fd, 0, SEEK_END);
    close(fd);
    first_line(head, hn, line, sizeof line);
    printf("read %s: %zd bytes (lseek end %lld) %s\n", p, total, (long long)end, line);
}

static void do_write(const char *p)
{
    int fd = open(p, O_WRONLY);
    int e1 = fd < 0 ? errno : 0;
    int fd2 = open(p, O_WRONLY | O_CREAT, 0644);
    int e2 = fd2 < 0 ? errno : 0;
    int e3 = mkdir(p, 0755) < 0 ? errno : 0;
    int e4 = unlink(p) < 0 ? errno : 0;
    printf("write %s: open %s creat %s mkdir %s unlink %s\n", p, ename(e1), ename(e2),
           ename(e3), ename(e4));
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void do_list(const char *p)
{
    DIR *d = opendir(p);
    if (!d) {
        printf("list %s: %s\n", p, ename(errno));
        return;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp);
    printf("list %s:", p);
    for (int i = 0; i < n; i++) {
        printf(" %s", names[i]);
        free(names[i]);
    }
    printf("\n");
}

static void do_mmap(const char *p)
{
    int fd = open(p, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        printf("mmap %s: %s\n", p, ename(errno));
        return;
    }
    char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        printf("mmap %s: %s\n", p, ename(errno));
        return;
    }
    char line[128];
    first_line(m, (size_t)st.st_size, line, sizeof line);
    printf("mmap %s: %s\n", p, line);
    munmap(m, (size_t)st.st_size);
}

static void do_loop(const char *spec)
{
    char *end;
    long n = strtol(spec, &end, 10);
    if (*end != ':' || n < 1) {
        printf("loop %s: bad count\n", spec);
        return;
    }
    const char *p = end + 1;
    long inside = 0, secret = 0, refused = 0;
    for (long i = 0; i < n; i++) {
        int fd = open(p, O_RDONLY);
        if (fd < 0) {
            refused++;
            continue;
        }
        char buf[256];
        ssize_t got = read(fd, buf, sizeof buf - 1);
        close(fd);
        buf[got > 0 ? got : 0] = 0;
        if (strstr(buf, "SECRET"))
            secret++;
        else
            inside++;
    }
    printf("loop %s: inside %ld secret %ld refused %ld\n", p, inside, secret, refused);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        struct stat st;
        if (!strncmp(a, "read:", 5))
            do_read(a + 5);
        else if (!strncmp(a, "write:", 6))
            do_write(a + 6);
        else if (!strncmp(a, "stat:", 5)) {
            if (stat(a + 5, &st) < 0)
                printf("stat %s: %s\n", a + 5, ename(errno));
            else
                printf("stat %s: size %lld\n", a + 5, (long long)st.st_size);
        } else if (!strncmp(a, "list:", 5))
            do_list(a + 5);
        else if (!strncmp(a, "mmap:", 5))
            do_mmap(a + 5);
        else if (!strncmp(a, "loop:", 5))
            do_loop(a + 5);
        else if (!strncmp(a, "readlink:", 9)) {
            char t[4096];
            ssize_t n = readlink(a + 9, t, sizeof t - 1);
            if (n >= 0)
                t[n] = 0;
            printf("readlink %s: %s\n", a + 9, n >= 0 ? t : ename(errno));
        } else if (!strcmp(a, "cwd")) {
            char buf[4096];
            printf("cwd %s\n", getcwd(buf, sizeof buf) ? "OK" : ename(errno));
        } else {
            fprintf(stderr, "usage: dyn-files read:PATH|write:PATH|stat:PATH|list:DIR|mmap:PATH|loop:N:PATH|readlink:PATH|cwd...\n");
            return 2;
        }
    }
    return 0;
}
