#include "linux/procself.h"
#include "kvm/vm.h"
#include "linux/files_int.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The protection of a page as maps shows it (r, w, x; "---" for none), from its PTE; a
 * page trapped by serialized execution keeps its bits but for P. */
static int pte_prot(uint64_t e)
{
    if (!gm_pte_frame(e) || !gm_pte_usable(e))
        return 0;
    return PROT_R | (gm_pte_writable(e) ? PROT_W : 0) | ((e & PTE_NX) ? 0 : PROT_X);
}

struct maps_out {
    FILE *f;
    uint64_t start, end;
    int prot;
    struct vm *vm;
};

static void line(struct maps_out *o)
{
    if (o->start >= o->end)
        return;
    const char *name = "";
    if (o->start < STACK_TOP && STACK_TOP <= o->end)
        name = "[stack]";
    else if (o->vm->mm.brk_base < o->vm->mm.brk_cur && o->start >= (o->vm->mm.brk_base & PAGE_MASK) &&
             o->end <= ((o->vm->mm.brk_cur + PAGE_SIZE - 1) & PAGE_MASK))
        name = "[heap]";
    fprintf(o->f, "%08llx-%08llx %c%c%cp 00000000 00:00 0%s%s\n", (unsigned long long)o->start,
            (unsigned long long)o->end, (o->prot & PROT_R) ? 'r' : '-',
            (o->prot & PROT_W) ? 'w' : '-', (o->prot & PROT_X) ? 'x' : '-',
            *name ? "                          " : "", name);
}

/* Adds [s,e) with prot, merging with the run being built. */
static void run(struct maps_out *o, uint64_t s, uint64_t e, int prot)
{
    if (o->end == s && o->prot == prot) {
        o->end = e;
        return;
    }
    line(o);
    o->start = s;
    o->end = e;
    o->prot = prot;
}

char *procself_maps(struct vm *vm, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    struct maps_out o = {.f = f, .vm = vm};
    struct mm *mm = &vm->mm;
    pthread_mutex_lock(&mm->gm->lock);
    for (size_t i = 0; i < mm->n; i++) {
        const struct vma *v = &mm->v[i];
        if (v->lazy) { /* the VMA has the protection: frames or not */
            run(&o, v->start, v->end, (int)v->prot);
            continue;
        }
        /* An eager VMA's protection is in its PTEs, page by page; pages without a frame
         * (an untouched PROT_NONE reservation) skip whole missing tables. */
        for (uint64_t va = v->start, next; va < v->end; va = next) {
            uint64_t *pte = gm_pte_scan(mm->gm, va, &next);
            if (next > v->end)
                next = v->end;
            run(&o, va, next, pte ? pte_prot(__atomic_load_n(pte, __ATOMIC_ACQUIRE)) : 0);
        }
    }
    pthread_mutex_unlock(&mm->gm->lock);
    line(&o);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* NUL-separated strings, as Linux's cmdline and environ are. */
static char *strings(char **v, int n, size_t *len)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += strlen(v[i]) + 1;
    char *buf = malloc(total ? total : 1);
    if (!buf)
        return NULL;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(v[i]) + 1;
        memcpy(buf + at, v[i], l);
        at += l;
    }
    *len = total;
    return buf;
}

int procself_text_file(const char *p, char *text, size_t len, struct gfile **out)
{
    if (!text)
        return -ENOMEM;
    int fd = memfd_create("jinx-proc", MFD_CLOEXEC);
    int r = fd < 0 ? -errno : 0;
    for (size_t done = 0; !r && done < len;) {
        ssize_t w = write(fd, text + done, len - done);
        if (w <= 0)
            r = w < 0 ? -errno : -EIO;
        else
            done += (size_t)w;
    }
    free(text);
    struct gfile *f = r ? NULL : calloc(1, sizeof *f);
    if (!r && !f)
        r = -ENOMEM;
    if (r) {
        if (fd >= 0)
            close(fd);
        return r;
    }
    f->hostfd = fd;
    atomic_init(&f->refs, 1);
    f->path = strdup(p);
    if (!f->path) {
        gfile_put(f);
        return -ENOMEM;
    }
    *out = f;
    return 0;
}

int procself_open(struct vm *vm, const char *p, bool writes, bool dir, struct gfile **out)
{
    static const char *const names[] = {"/proc/self/maps", "/proc/self/cmdline",
                                        "/proc/self/environ", "/proc/thread-self/maps"};
    int which = -1;
    for (int i = 0; i < 4 && which < 0; i++)
        if (!strcmp(p, names[i]))
            which = i;
    if (which < 0)
        return 1;
    if (writes)
        return -EACCES;
    if (dir)
        return -ENOTDIR;
    size_t len = 0;
    char *text = which == 1 ? strings(vm->argv, vm->argc, &len)
                 : which == 2 ? strings(vm->envp, vm->envc, &len) : procself_maps(vm, &len);
    return procself_text_file(p, text, len, out);
}
