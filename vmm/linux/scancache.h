/* A cache of whole-file code scans (linux/cpuidscan.h), so that a boot does not decode the
 * same libraries again. Scanning for RDTSC as well as CPUID (PVM, docs/cpu-models.md)
 * decodes much of libstdc++ and libc: ~22 ms of jinx-vmm's CPU per boot of a dynamic C++
 * program, for an answer that changes only when the file does. `jinx test` re-boots for
 * every fresh snapshot and paid it each time.
 *
 * Where: the cache directory (lib/cachedir.h), one text file per scanned file version,
 * scan-KEY.txt. The key (SHA-256) covers the file's identity and every change the kernel
 * records (device, inode, size, mtime and ctime to the nanosecond: ctime cannot be set
 * back by a user), the kinds scanned, and the scanner's engine (logic version, capstone
 * version). Unwritable or no directory: every file is scanned, nothing fails.
 *
 * The file is input, never trusted. It is ignored (and rewritten from a fresh scan) when
 * its magic, key, line syntax, counts or checksum (SHA-256 of everything before it) is
 * wrong, when an offset lies outside the file, a kind is not one scanned, or the file's
 * bytes at a site or unsure pattern are not that kind's instruction bytes. So a forged but
 * consistent file can at most name byte patterns that are really in the file as
 * instruction starts; cpuidload still patches a site only while guest memory holds the
 * file's bytes there. */
#ifndef JINX_SCANCACHE_H
#define JINX_SCANCACHE_H
#include "linux/cpuidscan.h"
#include <stddef.h>
#include <sys/stat.h>

#define SCANCACHE_MAX_BYTES (16u << 20)

/* The scan of the whole file data[0..size) (st: its fstat, taken on the descriptor the
 * bytes were read from) for the kinds in mask kinds, as cpuidscan_file_kinds(data, size, 0,
 * size, kinds, r) gives it: from the cache when it holds a valid entry, else scanned and
 * then cached. r zeroed first; free with cpuidscan_free. 0, or -1 when out of memory or
 * capstone is unusable. */
int scancache_scan(const struct stat *st, const uint8_t *data, size_t size, unsigned kinds,
                   struct cpuidscan *r);

/* Lookups since the process began: served from the cache, scanned (whatever then
 * happened to the write). For --stats. */
void scancache_counts(unsigned *hits, unsigned *misses);

/* The pure parts, unit-tested and fuzzed. scancache_key: the key (64 hex digits) of a file
 * with stat st scanned for kinds by engine. scancache_format: the file's text for key and
 * scan r (malloc'd, *len). scancache_parse: checks text as above against key and the
 * file's bytes and fills r (zeroed first; left empty when refused). 0, or -1 with why. */
void scancache_key(const struct stat *st, unsigned kinds, uint32_t engine, char out[65]);
char *scancache_format(const char *key, const struct cpuidscan *r, size_t *len);
int scancache_parse(const char *text, size_t len, const char *key, const uint8_t *data,
                    size_t size, unsigned kinds, struct cpuidscan *r, char *why, size_t whylen);

#endif
