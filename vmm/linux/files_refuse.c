/* File operations the file layer refused where Linux would have done them, noted as jinx
 * limits (limitlog.h, kind "files"): a program that fails after one failed perhaps
 * because of jinx (it could not write its output.txt), so `jinx test` says "could not
 * test" rather than BUG FOUND (issue 28). A run that meets one and ends well is only
 * noted. */
#include "linux/files.h"
#include "linux/files_int.h"
#include "linux/syscall.h"
#include "kvm/vm.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#define SHOWN_PATH 64 /* bytes of the guest's path a limit's text shows */

/* What libc and runtimes read on their own and cope without (system information, time
 * zones, locales, debug info): an open of it refused is no limit, as clone3 and rseq are none. */
static bool libc_probe(const char *p)
{
    static const char *const prefixes[] = {"/proc/", "/sys/", "/usr/share/zoneinfo/",
                                           "/usr/lib/locale/", "/usr/share/locale/",
                                           /* separate debug info, which the sanitizers'
                                            * symbolizers look for (--ro-dir grants it) */
                                           "/usr/lib/debug/"};
    static const char *const exact[] = {"/proc", "/sys", "/etc/localtime",
                                        "/etc/ld.so.preload"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(p, prefixes[i], strlen(prefixes[i])))
            return true;
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (!strcmp(p, exact[i]))
            return true;
    return false;
}

/* A scratch file a sanitizer runtime makes and copes without: TSan's read-only zero
 * page (tsan.rodata.PID, in /dev/shm or /tmp), which it maps only when the create works. */
static bool runtime_scratch(const char *p)
{
    static const char *const prefixes[] = {"/dev/shm/tsan.rodata.", "/tmp/tsan.rodata."};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(p, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

/* open's flags as the program would have written them: "O_WRONLY|O_CREAT|O_TRUNC". */
static void open_flags_text(int flags, char *out, size_t cap)
{
    static const struct { int bit; const char *name; } bits[] = {
        {0100, "O_CREAT"}, {0200, "O_EXCL"}, {01000, "O_TRUNC"}, {02000, "O_APPEND"},
        {0200000, "O_DIRECTORY"}, {020000000, "O_TMPFILE"}};
    int acc = flags & 3;
    size_t n = (size_t)snprintf(out, cap, "%s", acc == 0 ? "O_RDONLY" : acc == 1 ? "O_WRONLY"
                                                : acc == 2 ? "O_RDWR" : "O_ACCMODE");
    for (size_t i = 0; i < sizeof bits / sizeof bits[0] && n < cap; i++)
        if ((flags & bits[i].bit) == bits[i].bit)
            n += (size_t)snprintf(out + n, cap - n, "|%s", bits[i].name);
}

void files_note_refused(struct vm *vm, uint64_t nr, uint64_t uptr, int64_t fd, int flags,
                        enum files_refusal why, int64_t err)
{
    if (err != -EROFS && err != -EACCES)
        return;
    char path[PATHCONF_MAX], shown[SHOWN_PATH + 4], args[SHOWN_PATH + 64];
    if (uptr) {
        int r = strncpy_from_user(&vm->gm, path, uptr, sizeof path);
        if (r == -1)
            return;
        if (r == -2)
            path[sizeof path - 1] = 0;
        char abs[PATHCONF_MAX];
        if (path_normalize(vm->files->cwd, path, abs, sizeof abs) == 0 &&
            ((why == REFUSED_OUTSIDE && libc_probe(abs)) || runtime_scratch(abs)))
            return;
        /* The path as the program gave it: printable ASCII, cut to SHOWN_PATH bytes. */
        size_t n = 0;
        for (const char *c = path; *c && n < SHOWN_PATH; c++)
            shown[n++] = (*c >= 0x20 && *c < 0x7f && *c != '"') ? *c : '?';
        shown[n] = 0;
        if (strlen(path) > SHOWN_PATH)
            strcat(shown, "...");
        if (flags >= 0) {
            char ft[96];
            open_flags_text(flags, ft, sizeof ft);
            snprintf(args, sizeof args, "\"%s\", %s", shown, ft);
        } else {
            snprintf(args, sizeof args, "\"%s\"", shown);
        }
    } else {
        snprintf(args, sizeof args, "fd %lld", (long long)fd);
    }
    const char *because, *option = NULL;
    switch (why) {
    case REFUSED_WRITE:
        if (nr == SYS_link || nr == SYS_linkat || nr == SYS_symlink || nr == SYS_symlinkat ||
            nr == SYS_mknod || nr == SYS_mknodat) {
            because = "jinx makes no links, FIFOs or device files";
        } else {
            because = "jinx lets the program write only below its cwd, /tmp and the --ro-dir "
                      "directories";
            option = "grant its directory with --ro-dir DIR";
        }
        break;
    case REFUSED_OUTSIDE:
        because = "the path lies outside what jinx lets the guest read";
        option = "grant its directory with --ro-dir DIR";
        break;
    case REFUSED_SHARED_MAP:
        because = "jinx maps files privately only (a shared writable mapping is not kept "
                  "in step with the file)";
        break;
    default:
        because = "jinx opens only regular files and directories";
        break;
    }
    struct limits *ls = vm->sandbox ? &vm->sandbox_lims : &vm->limits;
    limits_note(ls, LIMIT_FILES, (long)(nr * 4 + (uint64_t)why), option,
                "the program's %s(%s) was refused (%s): %s", syscall_name((unsigned)nr), args,
                err == -EROFS ? "EROFS" : "EACCES", because);
    /* A simulation's refusal counts when a round retires it (limitlog.h). */
    if (vm->sandbox)
        atomic_fetch_add(&vm->sandbox_limits, 1);
}
