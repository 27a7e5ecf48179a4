/* The SNAPSHOT record of a .jinxdump (type 16): the whole machine state a retired
 * fragment started from, compact enough to keep with every crash dump, complete enough
 * for `jinx-vmm replay` to rebuild it in a fresh VM (snapshot_load_into, snapshot.h).
 *
 * What it holds: every vCPU (registers, system registers, XSAVE trimmed of its trailing
 * zeros, the VMM's view of the thread on it: tid, state, futex wait, start state), the
 * VMM state of struct snapshot (VMAs, brk, frame allocator, live/blocked counts, virtual
 * time, rng, signal actions), and guest memory as the frames in use (the allocator's
 * bitmap) plus the page-table frames, each stored only when it is not all zeros, plus
 * the user half of the PML4. The agent's low memory is not stored: a fresh VM sets it up.
 *
 * Payload layout (little-endian; docs/dumps.md is the reference):
 *   u64 guest memory size, u32 vCPUs, u32 0
 *   u32 next_tid, u32 live, u32 blocked, u32 0, u64 wait_counter, u64 vtime, u64 rng,
 *   65 x u64 sigact, u64 brk_base, u64 brk_cur, u32 VMAs, u32 0, VMAs x (u64 start, end)
 *   u64 frames_used, u64 frames_next, u64 bitmap words, words...
 *   u64 table_cursor, u32 tables, u32 0, tables x (u64 frame, u64 level)
 *   256 x u64: PML4 entries 0..255
 *   per vCPU: u32 flags (SNAPF_*), u32 tid, u32 state, u32 wait_bitset, u64 clear_child_tid,
 *     sigmask, wait_addr, wait_deadline, wait_seq, wait_result, 18 x u64 blocked_regs;
 *     if HAS_KVM: 18 x u64 regs, u32 sregs length + bytes, u32 xsave length + bytes;
 *     if START: 18 x u64 start_regs, u32 + start_sregs, u32 + start_xsave (length 0: none)
 *   u64 pages, pages x (u64 frame, 4096 bytes), frames strictly ascending
 *
 * The record is untrusted: snapfile_parse checks every count, range and enum, and then
 * snapimg_validate (kvm/snapimage.h) checks that the
 * VMAs are sorted and disjoint user ranges, that every stored page is a frame in use,
 * and walks the page tables (every present entry of a table points to a recorded table
 * of the next level, every leaf to a data frame in use), so that loading it can never
 * make the VMM write outside guest memory or treat a data frame as a table. Pure code,
 * no KVM: unit-tested and fuzzed. */
#ifndef JINX_SNAPFILE_H
#define JINX_SNAPFILE_H
#include "dump/dumpfile.h"
#include "kvm/snapimage.h"
#include <stdbool.h>
#include <stdint.h>

/* Appends the record payload. Returns 0, or -1 out of memory or on an invalid image. */
int snapfile_encode(const struct snap_image *s, struct dbuf *b);
/* Parses and validates a payload. Page data and XSAVE areas point into buf, which must
 * outlive s. 0, or -1 with a message. */
int snapfile_parse(const uint8_t *buf, size_t len, struct snap_image *s, char *err,
                   size_t errlen);

#endif
