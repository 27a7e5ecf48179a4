#include "kvm/dirtylog.h"
#include "kvm/pagecopy.h"
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

int dirtyset_init(struct dirtyset *d, struct vm *vm)
{
    struct guestmem *gm = &vm->gm;
    uint64_t words = gm_bitmap_words(gm);
    memset(d, 0, sizeof *d);
    d->bits = calloc(words, 8);
    d->words = calloc(words, sizeof *d->words);
    if (!gm->vmm_dirty)
        gm->vmm_dirty = calloc(words, 8);
    if (!gm->vmm_dirty_sum)
        gm->vmm_dirty_sum = calloc((words + 63) / 64, 8);
    return d->bits && d->words && gm->vmm_dirty && gm->vmm_dirty_sum ? 0 : -1;
}

void dirtyset_free(struct dirtyset *d)
{
    free(d->bits);
    free(d->words);
    memset(d, 0, sizeof *d);
}

int dirtylog_enable(struct vm *vm)
{
    struct kvm_userspace_memory_region region = {
        .slot = 0, .flags = KVM_MEM_LOG_DIRTY_PAGES, .guest_phys_addr = 0,
        .memory_size = vm->gm.size, .userspace_addr = (uint64_t)(uintptr_t)vm->gm.host,
    };
    return ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region);
}

int dirtylog_collect(struct vm *vm, struct dirtyset *d)
{
    struct guestmem *gm = &vm->gm;
    uint64_t words = gm_bitmap_words(gm), *out = d->bits;
    /* KVM writes the whole bitmap: nothing to clear first. */
    struct kvm_dirty_log log = {.slot = 0, .dirty_bitmap = out};
    d->nwords = 0;
    d->nguest = d->nvmm = 0;
    if (ioctl(vm->vm_fd, KVM_GET_DIRTY_LOG, &log) < 0)
        return -1;
    for (uint64_t w = 0; w < words; w++)
        if (out[w]) {
            d->nguest += (uint64_t)__builtin_popcountll(out[w]);
            d->words[d->nwords++] = (uint32_t)w;
        }
    /* The VMM's log, only where its summary has bits. Summary first (acquire): a frame
     * bit marked before its summary bit was set is seen below (gm_mark_dirty). */
    for (uint64_t sw = 0; sw < (words + 63) / 64; sw++) {
        if (!__atomic_load_n(&gm->vmm_dirty_sum[sw], __ATOMIC_RELAXED))
            continue;
        for (uint64_t b = __atomic_exchange_n(&gm->vmm_dirty_sum[sw], 0, __ATOMIC_ACQUIRE); b;
             b &= b - 1) {
            uint64_t w = sw * 64 + (uint64_t)__builtin_ctzll(b);
            uint64_t mine = __atomic_exchange_n(&gm->vmm_dirty[w], 0, __ATOMIC_RELAXED);
            if (!mine)
                continue;
            d->nvmm += (uint64_t)__builtin_popcountll(mine & ~out[w]);
            if (!out[w])
                d->words[d->nwords++] = (uint32_t)w;
            out[w] |= mine;
        }
    }
    return 0;
}

uint64_t dirtyset_copy(const struct guestmem *gm, const struct dirtyset *d, uint8_t *dst,
                       const uint8_t *src, bool tables_kept)
{
    uint64_t n = 0;
    for (long i = 0; i < d->nwords; i++) {
        uint64_t w = d->words[i];
        for (uint64_t b = d->bits[w]; b; b &= b - 1) {
            uint64_t f = w * 64 + (uint64_t)__builtin_ctzll(b);
            if (tables_kept && (gm->table_level[f] >= 2 || f * PAGE_SIZE == GPA_PML4))
                continue;
            pagecopy_stream(dst + f * PAGE_SIZE, src + f * PAGE_SIZE);
            n++;
        }
    }
    pagecopy_fence(); /* before any vCPU may read them */
    return n;
}
