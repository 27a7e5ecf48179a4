/* Patched CPUID sites: where user-mode CPUID cannot be trapped (PVM without CPUID
 * faulting), jinx rewrites each `cpuid` (0F A2) of the code it maps for the program into
 * `ud2` (0F 0B) (linux/cpuidload.c finds them) and records the address here. A #UD at a
 * recorded address whose bytes are still 0F 0B is answered from the CPU model's table
 * (EAX/EBX/ECX/EDX for the guest's EAX/ECX) and the thread goes on after it; a #UD
 * anywhere else stays the program's SIGILL. docs/cpu-models.md "Patching CPUID".
 *
 * The table is VMM state, never guest memory. It only grows (a restore can bring back
 * code an unmap removed), and it is shared by reference between a VM and its worker VMs
 * (same snapshots, same patched memory); replay seeds it from the dump's record. The
 * guest can overwrite a patched site: its own bytes are then what runs (a different
 * instruction, or a ud2 that is no longer 0F 0B at that address is SIGILL).
 *
 * The same table holds the program's rdtsc (0F 31 -> 0F 0B) and rdtscp (0F 01 F9 ->
 * 0F 0B F9) where user-mode RDTSC cannot be trapped (PVM ignores CR4.TSD), each with its
 * kind (linux/cpuidscan.h): a #UD there is answered as a trapped rdtsc would be, with the
 * virtual TSC (kvm/vtsc.h), and the thread resumes after the site's 2 or 3 bytes (an
 * rdtscp's third byte must still be F9). docs/cpu-models.md "Patching RDTSC". */
#ifndef JINX_CPUIDPATCH_H
#define JINX_CPUIDPATCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "linux/cpuidscan.h"

struct vm;
struct vcpu;

#define CPUIDPATCH_MAX_SITES 65536   /* more are left native (counted as unsure) */
#define CPUIDPATCH_MAX_FILES 64      /* per-file counts kept for --report */

struct cpuidpatch_file {
    char name[128];     /* the file's host path (tail when longer) */
    uint64_t base;      /* where the mapping that was scanned starts */
    unsigned sites;     /* cpuid instructions rewritten */
    unsigned unsure;    /* 0F A2 pairs left alone (cpuidscan.h) */
    unsigned tsc;       /* rdtsc and rdtscp instructions rewritten */
    unsigned tsc_unsure; /* their bytes left alone */
};

struct cpuid_patches;

/* A new empty table with one reference, or NULL when out of memory. */
struct cpuid_patches *cpuidpatch_new(void);
struct cpuid_patches *cpuidpatch_ref(struct cpuid_patches *p);
void cpuidpatch_unref(struct cpuid_patches *p);

/* Records va as a CPUID site; false when the table is full. Adding a recorded address
 * again is a no-op. */
bool cpuidpatch_add(struct cpuid_patches *p, uint64_t va);
/* Records va as a site of kind (enum patch_kind); false when the table is full, kind is
 * not one, or va is recorded already with another kind. */
bool cpuidpatch_add_kind(struct cpuid_patches *p, uint64_t va, unsigned kind);
bool cpuidpatch_has(struct cpuid_patches *p, uint64_t va);
/* Whether va is recorded, and then its kind in *kind. */
bool cpuidpatch_kind(struct cpuid_patches *p, uint64_t va, unsigned *kind);
/* Per-file counts of the mapping of file name at base (a worker VM loading the same file
 * at the same place again changes nothing). */
void cpuidpatch_note_file(struct cpuid_patches *p, const char *name, uint64_t base,
                          unsigned sites, unsigned unsure);
/* The same with the file's rdtsc/rdtscp sites (tsc) and their bytes left alone
 * (tsc_unsure) counted apart from its cpuid ones. */
void cpuidpatch_note_file_tsc(struct cpuid_patches *p, const char *name, uint64_t base,
                              unsigned sites, unsigned tsc, unsigned unsure,
                              unsigned tsc_unsure);
/* Copies up to max recorded addresses (ascending) into out; returns how many there are. */
size_t cpuidpatch_sites(struct cpuid_patches *p, uint64_t *out, size_t max);
/* The same with each site's kind in kinds[i] (kinds may be NULL). */
size_t cpuidpatch_sites_kinds(struct cpuid_patches *p, uint64_t *out, uint8_t *kinds,
                              size_t max);
/* Copies up to max per-file entries into out; returns how many there are. */
size_t cpuidpatch_files(struct cpuid_patches *p, struct cpuidpatch_file *out, size_t max);

/* ,"cpuid_patches":{"sites":N,"cpuid":C,"rdtsc":T,"rdtscp":P,"files":[{"file":..,
 * "sites":..,"cpuid":..,"tsc":..,"unsure":..,"tsc_unsure":..},..]} for --report: "sites"
 * counts every kind, "unsure" cpuid's (nothing when p is NULL: neither CPUID nor RDTSC is patched here). */
void cpuidpatch_write_json(struct cpuid_patches *p, FILE *f);

/* The exit loop's #UD: answers a patched CPUID, rdtsc or rdtscp of v's thread at *rip
 * (advanced past it). False when *rip is no patched site (the program's own #UD). */
bool cpuidpatch_emulate(struct vm *vm, struct vcpu *v, uint64_t *rip);

#endif
