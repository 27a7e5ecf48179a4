/* A cache of libvirt's answer for a CPU model (its feature names), so that a run with a
 * named model (the default kvm64) loads libvirt only the first time: asking libvirt costs
 * ~6 ms on top of loading it (libvirtdl.h), every run, for an answer that changes only
 * when libvirt does.
 *
 * Where: $JINX_CACHE_DIR, else $XDG_CACHE_HOME/jinx, else $HOME/.cache/jinx (made 0700
 * when missing); one text file per model, cpu-model-NAME.txt. Unwritable or unset: libvirt
 * is asked every time, nothing fails.
 *
 * What the answer depends on, all in the file's key (SHA-256 over them): the model name;
 * libvirt's code (the library file it was loaded from: path, device, inode, size,
 * mtime) and how it would be found again (LD_LIBRARY_PATH); its CPU database (every file
 * in /usr/share/libvirt/cpu_map: name, size, inode, mtime); and this cache's format.
 *
 * The file is input, never trusted: a bad magic or version, another model, a key that
 * does not match this host now, a malformed name, too many names, a size over the cap, or
 * a checksum (SHA-256 of everything before it) that does not match, and the file is
 * ignored, libvirt is asked and the file rewritten (atomically: a temporary file renamed).
 * A consistent but forged file can only take features away: the names restrict KVM's own
 * table (cpumodel_apply), never add to it, and dumps record the table the guest got. */
#ifndef JINX_CPUCACHE_H
#define JINX_CPUCACHE_H
#include <stddef.h>

#define CPUCACHE_MAX_BYTES (64u << 10)

/* What the last cpucache_model_features did, for --stats: "hit", "miss" (asked libvirt
 * and wrote the file), "unwritable" (asked libvirt, could not write), "off" (no
 * directory), or "none" (not called). */
const char *cpucache_last(void);

/* The features of model (libvirtcpu_model_features's contract: *names owned, free with
 * libvirtcpu_free_names), from the cache when it holds a valid answer for this host,
 * else from libvirt (then cached). 0, or -1 with a message (libvirt's). */
int cpucache_model_features(const char *model, char ***names, size_t *n, char *err,
                            size_t errlen);

/* The cache directory as above in out (lib/cachedir.h), or -1 when no variable gives one. */
int cpucache_dir(char *out, size_t outlen);

/* The pure parts, unit-tested. key_hex: the key this host computes now (64 hex digits).
 * cpucache_format writes the file's text (malloc'd, *len) for model, the library path
 * the key was computed with, and the names; cpucache_parse checks text as above and
 * gives the names and the library path it records (lib, liblen). 0, or -1 with why. */
char *cpucache_format(const char *model, const char *key_hex, const char *lib,
                      char *const *names, size_t n, size_t *len);
int cpucache_parse(const char *text, size_t len, const char *model, char *lib, size_t liblen,
                   char *key_out, char ***names, size_t *n, char *why, size_t whylen);

/* The key (64 hex digits and a NUL) for model with libvirt at lib, over cpu_map_dir. 0,
 * or -1 when lib cannot be stat'ed (then nothing is cached). */
int cpucache_key(const char *model, const char *lib, const char *cpu_map_dir, char out[65]);

#endif
