/* Filling a private file mapping in bulk (files_int.h: files_fill_frames).
 *
 * Why not through the guest's virtual addresses: that needs the pages writable while
 * they are filled, and taking write (or the whole page, for PROT_NONE) away afterwards is
 * a downgrade of present PTEs, which costs a host mprotect pair per page to drop KVM's
 * cached translations (guestmem.h). Writing the frames through their host addresses lets
 * the mapping be made with its final protection at once, and neighbouring frames (the
 * allocator hands them out in order) are read by one preadv. */
#include "linux/files_int.h"
#include "kvm/vm.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#define FILL_IOV 64

/* preadv until the iovecs are full or the file ends (the rest stays zero). */
static int read_all(int fd, struct iovec *iov, int n, uint64_t off)
{
    /* Fresh frames have no host page yet: one populate call makes them all, where the
     * read would take a host page fault per page (each an exception into a nested
     * host's kernel). Best effort: an older kernel refuses it and the read faults. */
    for (int i = 0; i < n; i++)
        madvise(iov[i].iov_base, iov[i].iov_len, MADV_POPULATE_WRITE);
    while (n > 0) {
        ssize_t r = preadv(fd, iov, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return 0;
        off += (uint64_t)r;
        while (n > 0 && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
    return 0;
}

int64_t files_fill_frames(struct vm *vm, int hostfd, uint64_t va, uint64_t len, uint64_t off)
{
    struct guestmem *gm = &vm->gm;
    struct iovec iov[FILL_IOV];
    int n = 0, rc = 0;
    uint64_t batch_off = off; /* file offset of iov[0] */
    if (va + len < va || off + len < off)
        return -EINVAL;
    pthread_mutex_lock(&gm->lock);
    for (uint64_t a = va; a < va + len && rc == 0; a += PAGE_SIZE) {
        uint64_t next;
        uint64_t *pte = gm_pte_scan(gm, a, &next);
        uint64_t frame = pte ? gm_pte_frame(*pte) : 0;
        bool ok = frame >= PAGE_SIZE && frame <= gm->size - PAGE_SIZE;
        uint8_t *p = ok ? (uint8_t *)gm_ptr(gm, frame) : NULL;
        bool joins = n > 0 && ok && (uint8_t *)iov[n - 1].iov_base + iov[n - 1].iov_len == p &&
                     iov[n - 1].iov_len <= (size_t)INT_MAX - PAGE_SIZE;
        if (n > 0 && !joins && (!ok || n == FILL_IOV)) {
            rc = read_all(hostfd, iov, n, batch_off);
            n = 0;
        }
        if (!ok)
            continue; /* unmapped meanwhile by another thread: nothing to fill */
        gm_mark_dirty(gm, frame);
        if (joins) {
            iov[n - 1].iov_len += PAGE_SIZE;
            continue;
        }
        if (n == 0)
            batch_off = off + (a - va);
        iov[n++] = (struct iovec){p, PAGE_SIZE};
    }
    if (n > 0 && rc == 0)
        rc = read_all(hostfd, iov, n, batch_off);
    pthread_mutex_unlock(&gm->lock);
    return rc;
}

/* Compares in chunks of this many bytes (one buffer, reused: no fresh host pages). */
#define HOLD_CHUNK (64u << 10)

struct hold {
    int hostfd;
    uint64_t va, len, off;
    uint8_t *buf;
};

/* Whether every page of the range has a frame, not writable and not trapped, holding
 * exactly what a fresh fill would: the file's bytes, zeroes past its end. Runs under
 * gm->lock (mm_protect_if). Read-only frames change only through the VMM, so what is
 * compared here is what the guest would read after the protection change. */
static bool frames_hold(struct guestmem *gm, void *ctx)
{
    const struct hold *h = ctx;
    for (uint64_t done = 0; done < h->len; done += HOLD_CHUNK) {
        size_t chunk = h->len - done < HOLD_CHUNK ? (size_t)(h->len - done) : HOLD_CHUNK;
        ssize_t r = pread(h->hostfd, h->buf, chunk, (off_t)(h->off + done));
        if (r < 0)
            return false;
        memset(h->buf + r, 0, chunk - (size_t)r);
        for (size_t k = 0; k < chunk; k += PAGE_SIZE) {
            uint64_t next, *pte = gm_pte_scan(gm, h->va + done + k, &next);
            uint64_t e = pte ? *pte : 0, frame = gm_pte_frame(e);
            if (!frame || frame > gm->size - PAGE_SIZE || !(e & (PTE_P | PTE_SOFT)) ||
                (e & (PTE_W | PTE_TRAP | PTE_SAMPLE_RO)) ||
                memcmp(gm_ptr(gm, frame), h->buf + k, PAGE_SIZE))
                return false;
        }
    }
    return true;
}

int64_t files_map_over_same(struct vm *vm, int hostfd, uint64_t va, uint64_t len, int prot,
                            uint64_t off)
{
    struct hold h = {hostfd, va, len, off, malloc(HOLD_CHUNK)};
    if (!h.buf || (va | len) & (PAGE_SIZE - 1) || !len)
        return free(h.buf), -EAGAIN;
    int64_t r = mm_protect_if(&vm->mm, va, len, prot, frames_hold, &h);
    free(h.buf);
    return r == 0 ? 0 : -EAGAIN;
}
