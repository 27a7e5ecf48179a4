#include "kvm/guestmem.h"
#include "kvm/layout.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int gm_init(struct guestmem *gm, uint64_t size, char *err, size_t errlen)
{
    memset(gm, 0, sizeof *gm);
    if (size < (16ULL << 20) || size > MAX_GUEST_MEM || size % (2ULL << 20)) {
        snprintf(err, errlen, "guest memory must be a multiple of 2M between 16M and 4G");
        return -1;
    }
    /* NORESERVE: the host commits only the frames the guest touches. */
    gm->host = mmap(NULL, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (gm->host == MAP_FAILED) {
        snprintf(err, errlen, "cannot reserve %llu MiB of host memory for the guest: %s",
                 (unsigned long long)(size >> 20), strerror(errno));
        gm->host = NULL;
        return -1;
    }
    madvise(gm->host, size, MADV_NOHUGEPAGE);
    gm->size = size;
    gm->nframes = size / PAGE_SIZE;
    gm->bitmap = calloc(gm_bitmap_words(gm), 8);
    if (!gm->bitmap) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    /* Frames below the pool belong to the agent and its tables. */
    for (uint64_t f = 0; f < GPA_POOL / PAGE_SIZE; f++)
        gm->bitmap[f / 64] |= 1ULL << (f % 64);
    gm->next = GPA_POOL / PAGE_SIZE;
    gm->used = GPA_POOL / PAGE_SIZE;
    gm->table_level = calloc(gm->nframes, 1);
    gm->table_bitmap = calloc(gm_bitmap_words(gm), 8);
    gm->table_cursor = gm->nframes;
    if (!gm->table_level || !gm->table_bitmap) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    pthread_mutex_init(&gm->lock, NULL);

    /* Kernel half: PML4[256] -> direct map of guest physical memory with 2 MiB pages. */
    uint64_t *pml4 = gm_ptr(gm, GPA_PML4);
    uint64_t *pdpt = gm_ptr(gm, GPA_KPDPT);
    pml4[256] = GPA_KPDPT | PTE_P | PTE_W | PTE_A;
    for (uint64_t gb = 0; gb < 4; gb++) {
        uint64_t *pd = gm_ptr(gm, GPA_KPD + gb * PAGE_SIZE);
        pdpt[gb] = (GPA_KPD + gb * PAGE_SIZE) | PTE_P | PTE_W | PTE_A;
        for (uint64_t i = 0; i < 512; i++) {
            uint64_t pa = (gb << 30) + (i << 21);
            pd[i] = pa < size ? (pa | PTE_P | PTE_W | PTE_PS | PTE_A | PTE_D) : 0;
        }
    }
    return 0;
}

void gm_destroy(struct guestmem *gm)
{
    free(gm->vmm_dirty);
    free(gm->vmm_dirty_sum);
    gm->vmm_dirty_sum = NULL;
    free(gm->remapped);
    free(gm->table_level);
    free(gm->table_bitmap);
    gm->table_bitmap = NULL;
    gm->table_level = NULL;
    gm->vmm_dirty = gm->remapped = NULL;
    if (gm->host)
        munmap(gm->host, gm->size);
    free(gm->bitmap);
    gm->host = NULL;
    gm->bitmap = NULL;
}

uint64_t gm_alloc_frame(struct guestmem *gm)
{
    for (uint64_t n = 0; n < gm->nframes; n++) {
        uint64_t f = gm->next++;
        if (gm->next >= gm->nframes)
            gm->next = GPA_POOL / PAGE_SIZE;
        if (f < GPA_POOL / PAGE_SIZE || f >= gm->nframes)
            continue;
        uint64_t bit = 1ULL << (f % 64);
        if (gm->bitmap[f / 64] & bit)
            continue;
        gm->bitmap[f / 64] |= bit;
        gm->used++;
        gm_mark_dirty(gm, f * PAGE_SIZE); /* a restore finds the changed bitmap word */
        return f * PAGE_SIZE; /* zero: never touched, or zapped when freed */
    }
    atomic_fetch_add(&gm->exhausted, 1);
    return 0;
}

static void note_remap(struct guestmem *gm, uint64_t val)
{
    if (!gm->track || !(val & (PTE_P | PTE_SOFT)))
        return;
    if (gm->nremapped == gm->capremapped) {
        size_t cap = gm->capremapped ? gm->capremapped * 2 : 256;
        uint64_t *n = cap <= (1u << 20) ? realloc(gm->remapped, cap * 8) : NULL;
        if (!n) {
            gm->remap_overflow = true;
            return;
        }
        gm->remapped = n;
        gm->capremapped = cap;
    }
    gm->remapped[gm->nremapped++] = val & PTE_ADDR;
}

void gm_set_pte(struct guestmem *gm, uint64_t *pte, uint64_t val)
{
    gm_mark_dirty(gm, (uint64_t)((uint8_t *)pte - gm->host));
    note_remap(gm, val);
    __atomic_store_n(pte, val, __ATOMIC_RELEASE);
}

uint64_t gm_xchg_pte(struct guestmem *gm, uint64_t *pte, uint64_t val)
{
    gm_mark_dirty(gm, (uint64_t)((uint8_t *)pte - gm->host));
    note_remap(gm, val);
    return __atomic_exchange_n(pte, val, __ATOMIC_ACQ_REL);
}

/* A page-table page of the given level, from the top of RAM down. */
static uint64_t alloc_table(struct guestmem *gm, int level)
{
    while (gm->table_cursor > GPA_POOL / PAGE_SIZE) {
        uint64_t f = --gm->table_cursor;
        uint64_t bit = 1ULL << (f % 64);
        if (gm->bitmap[f / 64] & bit)
            continue;
        gm->bitmap[f / 64] |= bit;
        gm->used++;
        gm->table_level[f] = (uint8_t)level;
        gm->table_bitmap[f / 64] |= bit;
        return f * PAGE_SIZE;
    }
    atomic_fetch_add(&gm->exhausted, 1);
    return 0;
}

void gm_free_frame(struct guestmem *gm, uint64_t gpa)
{
    uint64_t f = gpa / PAGE_SIZE;
    if (gpa < GPA_POOL || f >= gm->nframes || gm->table_level[f])
        return;
    uint64_t bit = 1ULL << (f % 64);
    if (!(gm->bitmap[f / 64] & bit))
        return;
    gm->bitmap[f / 64] &= ~bit;
    gm->used--;
    gm_mark_dirty(gm, gpa);
    /* Zero it and give the host memory back in one step. */
    madvise(gm->host + gpa, PAGE_SIZE, MADV_DONTNEED);
}

static int cmp_u64(const void *a, const void *b);

void gm_free_frames(struct guestmem *gm, uint64_t *gpas, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t gpa = gpas[i], f = gpa / PAGE_SIZE, bit = 1ULL << (f % 64);
        if (gpa < GPA_POOL || f >= gm->nframes || gm->table_level[f] ||
            !(gm->bitmap[f / 64] & bit))
            continue;
        gm->bitmap[f / 64] &= ~bit;
        gm->used--;
        gm_mark_dirty(gm, gpa);
        gpas[k++] = gpa & ~(uint64_t)(PAGE_SIZE - 1);
    }
    qsort(gpas, k, sizeof *gpas, cmp_u64);
    for (size_t i = 0; i < k;) {
        size_t j = i + 1;
        while (j < k && gpas[j] == gpas[j - 1] + PAGE_SIZE)
            j++;
        madvise(gm->host + gpas[i], gpas[j - 1] + PAGE_SIZE - gpas[i], MADV_DONTNEED);
        i = j;
    }
}

void gm_invalidate_range(struct guestmem *gm, uint64_t gpa, uint64_t len)
{
    if (gpa < GPA_POOL || gpa > gm->size || len > gm->size - gpa || !len)
        return;
    mprotect(gm->host + gpa, len, PROT_READ);
    mprotect(gm->host + gpa, len, PROT_READ | PROT_WRITE);
    gm->invalidations += len / PAGE_SIZE;
    gm->invalidation_calls++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void gm_invalidate_frames(struct guestmem *gm, uint64_t *frames, size_t n)
{
    if (!n)
        return;
    qsort(frames, n, sizeof *frames, cmp_u64);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && frames[j] <= frames[j - 1] + PAGE_SIZE)
            j++;
        gm_invalidate_range(gm, frames[i], frames[j - 1] + PAGE_SIZE - frames[i]);
        i = j;
    }
}

void gm_invalidate_frame(struct guestmem *gm, uint64_t gpa)
{
    gm_invalidate_range(gm, gpa, PAGE_SIZE);
}

static uint64_t *table_at(struct guestmem *gm, uint64_t entry)
{
    uint64_t pa = entry & PTE_ADDR;
    if (pa >= gm->size || pa < PAGE_SIZE)
        return NULL;
    return gm_ptr(gm, pa);
}

static uint64_t *pte_slot(struct guestmem *gm, uint64_t va, bool create)
{
    uint64_t *table = gm_ptr(gm, GPA_PML4);
    for (int level = 3; level > 0; level--) {
        uint64_t *slot = &table[(va >> (12 + 9 * level)) & 511];
        uint64_t e = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (!(e & PTE_P)) {
            if (!create)
                return NULL;
            uint64_t pa = alloc_table(gm, level);
            if (!pa)
                return NULL;
            e = pa | PTE_P | PTE_W | PTE_U | PTE_A;
            gm_set_pte(gm, slot, e);
        }
        table = table_at(gm, e);
        if (!table)
            return NULL;
    }
    return &table[(va >> 12) & 511];
}

uint64_t *gm_pte(struct guestmem *gm, uint64_t va, bool create)
{
    if (va >= USER_TOP)
        return NULL;
    return pte_slot(gm, va, create);
}

uint64_t *gm_pte_scan(struct guestmem *gm, uint64_t va, uint64_t *next)
{
    uint64_t *table = gm_ptr(gm, GPA_PML4);
    for (int level = 3; level > 0; level--) {
        uint64_t e = __atomic_load_n(&table[(va >> (12 + 9 * level)) & 511], __ATOMIC_ACQUIRE);
        if (!(e & PTE_P) || !(table = table_at(gm, e))) {
            uint64_t span = 1ULL << (12 + 9 * level);
            *next = (va & ~(span - 1)) + span;
            return NULL;
        }
    }
    *next = (va & PAGE_MASK) + PAGE_SIZE;
    return &table[(va >> 12) & 511];
}

int gm_map_agent_pages(struct guestmem *gm)
{
    pthread_mutex_lock(&gm->lock);
    uint64_t *text = pte_slot(gm, UVA_AGENT, true), *mmio = pte_slot(gm, UVA_MMIO, true);
    if (text)
        gm_set_pte(gm, text, GPA_AGENT | PTE_P | PTE_U | PTE_A); /* read + execute */
    if (mmio)
        gm_set_pte(gm, mmio, GPA_MMIO_SYSCALL | PTE_P | PTE_U | PTE_A | PTE_NX); /* read only */
    pthread_mutex_unlock(&gm->lock);
    return text && mmio ? 0 : -1;
}

uint64_t gm_prot_flags(int prot)
{
    if (!prot)
        return PTE_SOFT; /* frame kept, not present */
    uint64_t f = PTE_P | PTE_U | PTE_A | PTE_D;
    if (prot & 2)
        f |= PTE_W;
    if (!(prot & 4))
        f |= PTE_NX;
    return f;
}

void *gm_user_ptr(struct guestmem *gm, uint64_t va, bool write)
{
    uint64_t *pte = gm_pte(gm, va, false);
    uint64_t e = pte ? __atomic_load_n(pte, __ATOMIC_ACQUIRE) : 0;
    if (!gm_pte_frame(e) && gm->fault_in && va < USER_TOP &&
        gm->fault_in(gm->fault_ctx, va, write)) {
        pte = gm_pte(gm, va, false);
        e = pte ? __atomic_load_n(pte, __ATOMIC_ACQUIRE) : 0;
    }
    if (!pte)
        return NULL;
    if (!gm_pte_usable(e) || !(e & PTE_U) || (write && !gm_pte_writable(e)))
        return NULL;
    uint64_t pa = gm_pte_frame(e);
    if (pa < GPA_POOL || pa + PAGE_SIZE > gm->size)
        return NULL;
    return gm->host + pa + (va & (PAGE_SIZE - 1));
}

static bool copy_user(struct guestmem *gm, uint64_t va, void *buf, size_t len, bool to_guest)
{
    uint8_t *b = buf;
    if (va + len < va)
        return false;
    while (len) {
        size_t chunk = PAGE_SIZE - (va & (PAGE_SIZE - 1));
        if (chunk > len)
            chunk = len;
        uint8_t *p = gm_user_ptr(gm, va, to_guest);
        if (!p)
            return false;
        if (to_guest) {
            memcpy(p, b, chunk);
            gm_mark_dirty(gm, (uint64_t)(p - gm->host));
        }
        else
            memcpy(b, p, chunk);
        b += chunk;
        va += chunk;
        len -= chunk;
    }
    return true;
}

bool copy_from_user(struct guestmem *gm, void *dst, uint64_t va, size_t len)
{
    return copy_user(gm, va, dst, len, false);
}

bool copy_to_user(struct guestmem *gm, uint64_t va, const void *src, size_t len)
{
    return copy_user(gm, va, (void *)src, len, true);
}

int strncpy_from_user(struct guestmem *gm, char *dst, uint64_t va, size_t max)
{
    for (size_t i = 0; i < max; i++) {
        const char *p = gm_user_ptr(gm, va + i, false);
        if (!p)
            return -1;
        dst[i] = *p;
        if (!*p)
            return 0;
    }
    return -2;
}

uint8_t *gm_code_byte(struct guestmem *gm, uint64_t va)
{
    uint64_t *pte = gm_pte(gm, va, false);
    uint64_t e = pte ? __atomic_load_n(pte, __ATOMIC_ACQUIRE) : 0;
    uint64_t frame = e & PTE_ADDR;
    if (!(e & PTE_P) || !(e & PTE_U) || (e & PTE_W) || (e & PTE_NX) || frame < GPA_POOL ||
        frame + PAGE_SIZE > gm->size)
        return NULL;
    return gm->host + frame + (va & (PAGE_SIZE - 1));
}
