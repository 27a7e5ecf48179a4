/* Patching CPUID instructions as code is mapped (cpuidload.h). */
#include "linux/cpuidload.h"
#include "kvm/cpuidpatch.h"
#include "kvm/vm.h"
#include "linux/cpuidscan.h"
#include "linux/scancache.h"
#include "lib/util.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define WINDOW 16          /* bytes before a site that must still be the file's */
#define MAX_REGIONS 1024   /* remembered non-executable file mappings */
#define MAX_SCAN (1ULL << 30)

struct region {
    uint64_t start, end, off;
    char *path;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct cpuid_regions {
    struct region r[MAX_REGIONS];
    size_t n;
};

/* Guards every VM's cpuid_regions, the pointer included: the guest's threads mmap,
 * munmap and mprotect at once on their own vCPU threads. Unlocked, two first mappings
 * both allocated the list (one leaked, seen by LeakSanitizer in guest-fuzz.sh) and
 * appends and drops raced. Held only for list updates, never across a file scan. */
static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;

/* The guest byte at va, writable by the VMM whatever the page's protection; NULL when
 * the page is not there. */
static uint8_t *guest_byte(struct vm *vm, uint64_t va)
{
    uint64_t *pte = gm_pte(&vm->gm, va, false);
    if (!pte || !gm_pte_usable(*pte) || !gm_pte_frame(*pte))
        return NULL;
    uint64_t gpa = gm_pte_frame(*pte) + (va & (PAGE_SIZE - 1));
    return gpa < vm->gm.size ? gm_ptr(&vm->gm, gpa) : NULL;
}

/* Guest memory at va holds file byte data[f], or the patch of a recorded site there (its
 * second byte, 0B where the file has the kind's). */
static bool holds(struct vm *vm, const uint8_t *data, uint64_t f, uint64_t lo, uint64_t va)
{
    uint8_t *b = guest_byte(vm, va);
    if (!b)
        return false;
    if (*b == data[f])
        return true;
    unsigned k;
    return *b == 0x0B && f > lo && data[f - 1] == 0x0F &&
           cpuidpatch_kind(vm->patches, va - 1, &k) && data[f] == patch_kind_bytes(k)[1];
}

/* Rewrites the site of kind k at va (0F A2, 0F 31 or 0F 01 F9) into 0F 0B (F9 left) when
 * guest memory still holds the file's bytes data[fo - WINDOW .. fo + its length) (clamped
 * at lo, the mapping's first file offset; sites already patched count as the file's).
 * True when the site is patched (now or before). */
static bool patch_site(struct vm *vm, const uint8_t *data, uint64_t fo, uint64_t lo,
                       uint64_t va, unsigned k) /* caller holds vm->gm.lock */
{
    uint64_t from = fo - lo < WINDOW ? lo : fo - WINDOW;
    for (uint64_t f = from; f < fo + patch_kind_len(k); f++)
        if (!holds(vm, data, f, lo, va - (fo - f)))
            return false;
    if (!cpuidpatch_add_kind(vm->patches, va, k))
        return false;
    uint8_t *op = guest_byte(vm, va + 1);
    *op = 0x0B;
    uint64_t *pte = gm_pte(&vm->gm, va + 1, false);
    gm_mark_dirty(&vm->gm, gm_pte_frame(*pte));
    return true;
}

/* The scan of file data[0..size) over [off, off + len): the whole file's from the scan
 * cache (st: the file's fstat) filtered to the range, or without st the range scanned. */
static int scan_range(struct vm *vm, const struct stat *st, const uint8_t *data, size_t size,
                      uint64_t off, uint64_t len, struct cpuidscan *r)
{
    if (!st)
        return cpuidscan_file_kinds(data, size, off, len, vm->patch_kinds, r);
    struct cpuidscan whole;
    int rc = scancache_scan(st, data, size, vm->patch_kinds, &whole);
    if (rc == 0)
        rc = cpuidscan_select(&whole, off, len, r);
    cpuidscan_free(&whole);
    return rc;
}

/* Scans file data[0..size) mapped at at from offset off over len bytes and patches. */
static void patch_mapping(struct vm *vm, const char *name, const struct stat *st,
                          const uint8_t *data, size_t size, uint64_t at, uint64_t off,
                          uint64_t len)
{
    struct cpuidscan r = {0};
    if (scan_range(vm, st, data, size, off, len, &r) < 0) {
        jx_err("warning: cannot scan %s for CPUID/RDTSC instructions (out of memory): "
               "they stay the host's", name);
        cpuidscan_free(&r);
        return;
    }
    unsigned done = 0, tsc = 0, left = r.unsure_kind[PATCH_CPUID];
    unsigned tsc_left = r.unsure - left;
    /* Under the page-table lock: another vCPU thread's munmap could otherwise free a
     * frame between the check of its bytes and the patch, and the patch would land in
     * whatever reuses the frame. The file scan above needs no lock. */
    pthread_mutex_lock(&vm->gm.lock);
    for (size_t i = 0; i < r.n; i++) {
        bool cpuid = r.kind[i] == PATCH_CPUID;
        if (patch_site(vm, data, r.sites[i], off, at + (r.sites[i] - off), r.kind[i]))
            cpuid ? done++ : tsc++;
        else
            cpuid ? left++ : tsc_left++;
    }
    pthread_mutex_unlock(&vm->gm.lock);
    if (done || tsc || left || tsc_left)
        cpuidpatch_note_file_tsc(vm->patches, name, at, done, tsc, left, tsc_left);
    cpuidscan_free(&r);
}

void cpuidload_image(struct vm *vm, const char *name, const struct elf_image *img,
                     uint64_t bias)
{
    if (!vm->patches || !vm->patch_kinds || !img->data)
        return;
    for (int i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        if ((s->prot & PROT_X) && s->filesz)
            patch_mapping(vm, name, img->have_file_st ? &img->file_st : NULL, img->data,
                          img->size, bias + s->vaddr, s->offset, s->filesz);
    }
}

/* Whether fd is a file the scan can take (regular, 1 byte to MAX_SCAN); fills *st. */
static bool scannable(int fd, struct stat *st)
{
    return fstat(fd, st) == 0 && S_ISREG(st->st_mode) && st->st_size > 0 &&
           (uint64_t)st->st_size <= MAX_SCAN;
}

/* The host file fd (size bytes) mapped read-only for scanning, or NULL. */
static const uint8_t *map_file(int fd, struct stat *st)
{
    if (!scannable(fd, st))
        return NULL;
    void *p = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void remember(struct vm *vm, const char *path, const struct stat *st, uint64_t at,
                     uint64_t off, uint64_t len)
{
    char *p = strdup(path);
    if (!p)
        return;
    pthread_mutex_lock(&regions_lock);
    if (!vm->cpuid_regions)
        vm->cpuid_regions = calloc(1, sizeof *vm->cpuid_regions);
    struct cpuid_regions *rs = vm->cpuid_regions;
    if (rs && rs->n < MAX_REGIONS) {
        rs->r[rs->n++] = (struct region){.start = at, .end = at + len, .off = off, .path = p,
                                         .dev = st->st_dev, .ino = st->st_ino,
                                         .size = st->st_size, .mtime = st->st_mtim};
        p = NULL;
    }
    pthread_mutex_unlock(&regions_lock);
    free(p);
}

void cpuidload_file_map(struct vm *vm, const char *path, int hostfd, uint64_t at,
                        uint64_t off, uint64_t len, int prot)
{
    if (!vm->patches || !vm->patch_kinds)
        return;
    cpuidload_unmapped(vm, at, len); /* MAP_FIXED replaced whatever was there */
    struct stat st;
    if (!(prot & PROT_X)) { /* only remembered: an mprotect to executable scans it */
        if (scannable(hostfd, &st))
            remember(vm, path, &st, at, off, len);
        return;
    }
    const uint8_t *data = map_file(hostfd, &st);
    if (!data)
        return;
    patch_mapping(vm, path, &st, data, (size_t)st.st_size, at, off, len);
    munmap((void *)data, (size_t)st.st_size);
}

static void drop(struct cpuid_regions *rs, size_t i)
{
    free(rs->r[i].path);
    rs->r[i] = rs->r[--rs->n];
}

void cpuidload_unmapped(struct vm *vm, uint64_t addr, uint64_t len)
{
    pthread_mutex_lock(&regions_lock);
    struct cpuid_regions *rs = vm->cpuid_regions;
    for (size_t i = 0; rs && i < rs->n;)
        if (rs->r[i].start < addr + len && addr < rs->r[i].end)
            drop(rs, i);
        else
            i++;
    pthread_mutex_unlock(&regions_lock);
}

size_t cpuidload_remembered(struct vm *vm)
{
    pthread_mutex_lock(&regions_lock);
    size_t n = vm->cpuid_regions ? vm->cpuid_regions->n : 0;
    pthread_mutex_unlock(&regions_lock);
    return n;
}

/* The remembered mappings [addr, addr+len) overlaps, cut to the overlap, in a new array
 * (*n entries, each with its own path; NULL when none or out of memory). Wholly covered
 * ones leave the list (executable now: done); partly covered ones stay for the rest. */
static struct region *take_overlapping(struct vm *vm, uint64_t addr, uint64_t len, size_t *n)
{
    *n = 0;
    pthread_mutex_lock(&regions_lock);
    struct cpuid_regions *rs = vm->cpuid_regions;
    size_t cnt = 0;
    for (size_t i = 0; rs && i < rs->n; i++)
        cnt += rs->r[i].start < addr + len && addr < rs->r[i].end;
    struct region *out = cnt ? malloc(cnt * sizeof *out) : NULL;
    for (size_t i = 0; out && i < rs->n;) {
        struct region g = rs->r[i];
        if (!(g.start < addr + len && addr < g.end)) {
            i++;
            continue;
        }
        uint64_t lo = g.start > addr ? g.start : addr;
        uint64_t hi = g.end < addr + len ? g.end : addr + len;
        bool whole = lo == g.start && hi == g.end;
        char *path = whole ? g.path : strdup(g.path);
        if (path) {
            out[*n] = g;
            out[*n].path = path;
            out[*n].off = g.off + (lo - g.start);
            out[*n].start = lo;
            out[*n].end = hi;
            (*n)++;
        }
        if (whole)
            rs->r[i] = rs->r[--rs->n]; /* its path went to out */
        else
            i++;
    }
    pthread_mutex_unlock(&regions_lock);
    return out;
}

void cpuidload_mprotect(struct vm *vm, uint64_t addr, uint64_t len, int prot)
{
    if (!vm->patches || !vm->patch_kinds || !(prot & PROT_X))
        return;
    size_t n;
    struct region *todo = take_overlapping(vm, addr, len, &n);
    /* Scanned outside the lock: a file can be large. */
    for (size_t i = 0; i < n; i++) {
        const struct region *g = &todo[i];
        int fd = open(g->path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        const uint8_t *data = fd >= 0 ? map_file(fd, &st) : NULL;
        /* Only the very file that was mapped (the guest's memory is checked too). */
        if (data && st.st_dev == g->dev && st.st_ino == g->ino && st.st_size == g->size &&
            st.st_mtim.tv_sec == g->mtime.tv_sec && st.st_mtim.tv_nsec == g->mtime.tv_nsec)
            patch_mapping(vm, g->path, &st, data, (size_t)st.st_size, g->start, g->off,
                          g->end - g->start);
        if (data)
            munmap((void *)data, (size_t)st.st_size);
        if (fd >= 0)
            close(fd);
        free(g->path);
    }
    free(todo);
}

void cpuidload_free(struct vm *vm)
{
    pthread_mutex_lock(&regions_lock);
    struct cpuid_regions *rs = vm->cpuid_regions;
    vm->cpuid_regions = NULL;
    pthread_mutex_unlock(&regions_lock);
    for (size_t i = 0; rs && i < rs->n; i++)
        free(rs->r[i].path);
    free(rs);
}
