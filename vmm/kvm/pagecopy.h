/* Whole-page copies for snapshots and restores (snapshot.c).
 *
 * A restore copies each dirty page from the snapshot back into guest memory. The guest
 * usually wrote only a line or two of such a page, from another CPU, so with ordinary
 * stores almost every destination line is first read from memory (or from the other
 * core) only to be overwritten: on this project's reference host that made a 100-page
 * restore copy ~36 us. Non-temporal stores write whole lines without reading them first
 * (~22 us, docs/benchmarks.md). They bypass the cache, so they are weakly ordered:
 * pagecopy_fence must run after a batch and before anyone else (a vCPU) may read it.
 *
 * Baseline x86-64 (SSE2) only, so no CPU check is needed. dst and src must be 16-byte
 * aligned (pages are 4096-byte aligned) and must not overlap. */
#ifndef JINX_PAGECOPY_H
#define JINX_PAGECOPY_H
#include <stdint.h>

/* Copies one 4 KiB page with streaming stores. */
void pagecopy_stream(void *dst, const void *src);
/* Orders every streaming store made so far before any later store (sfence). */
void pagecopy_fence(void);

#endif
