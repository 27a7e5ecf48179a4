/* The sanitizer runtime options jinx-vmm sets for the guest. LeakSanitizer's check at exit
 * (on by default in ASan builds) stops the world from a task made by clone without
 * CLONE_THREAD and ptrace: a fork, which a jinx guest cannot do (one program per VM). It
 * then fails ("LeakSanitizer has encountered a fatal error", exit 1), a jinx limit that
 * would make every ASan build "could not test". So, for a program that links ASan,
 * jinx-vmm adds detect_leaks=0 to the guest's ASAN_OPTIONS unless the user's --env
 * ASAN_OPTIONS says detect_leaks itself (docs/sanitizers.md). */
#ifndef JINX_SANENV_H
#define JINX_SANENV_H
#include "linux/elfparse.h"
#include <stdbool.h>
#include <stddef.h>

/* Whether img links AddressSanitizer: DT_NEEDED libasan.so*, or (static, -static-libasan)
 * defines __asan_init. */
bool sanenv_uses_asan(struct elf_image *img);
/* The ASAN_OPTIONS entry for the guest ("ASAN_OPTIONS=..." in out, cap bytes) given the
 * user's entry (NULL: none): the user's own when it names detect_leaks, else it with
 * detect_leaks=0 added. false when it does not fit. */
bool sanenv_asan_options(const char *user_entry, char *out, size_t cap);

#endif
