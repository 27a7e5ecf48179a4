/* The sanitizer runtime options jinx-vmm sets for the guest. LeakSanitizer's check at exit
 * (on by default in ASan builds, the whole point of -fsanitize=leak builds) stops the world
 * from a task made by clone without CLONE_THREAD and ptrace: a fork, which a jinx guest
 * cannot do (one program per VM). It then fails ("LeakSanitizer has encountered a fatal
 * error", exit 1 or 23), a jinx limit that would make every such build "could not test".
 * So, for a program that links ASan or standalone LSan, jinx-vmm adds detect_leaks=0 to
 * the guest's ASAN_OPTIONS (LSAN_OPTIONS for standalone LSan) unless the user's --env
 * entry says detect_leaks itself, and says so: leaks are not checked under jinx
 * (docs/sanitizers.md). */
#ifndef JINX_SANENV_H
#define JINX_SANENV_H
#include "linux/elfparse.h"
#include <stdbool.h>
#include <stddef.h>

/* Whether img links AddressSanitizer: DT_NEEDED libasan.so*, or (static, -static-libasan
 * or clang's) defines __asan_init. */
bool sanenv_uses_asan(struct elf_image *img);
/* Whether img links standalone LeakSanitizer (-fsanitize=leak): DT_NEEDED liblsan.so*, or
 * (clang's, static) defines __lsan_init and not __asan_init. */
bool sanenv_uses_lsan(struct elf_image *img);
/* Whether img links any sanitizer runtime (ASan, UBSan, TSan, LSan, MSan, HWASan):
 * DT_NEEDED lib*san.so*, or (linked in: clang's, -static-lib*san) its init or handler. */
bool sanenv_uses_sanitizer(struct elf_image *img);
/* The option variable that turns img's LeakSanitizer off: "ASAN_OPTIONS" (ASan),
 * "LSAN_OPTIONS" (standalone LSan), NULL when img has no LeakSanitizer. */
const char *sanenv_leak_var(struct elf_image *img);
/* The guest's entry for var ("VAR=..." in out, cap bytes) given the user's entry (NULL:
 * none): the user's own when it names detect_leaks, else it with detect_leaks=0 added.
 * false when it does not fit. */
bool sanenv_leak_options(const char *var, const char *user_entry, char *out, size_t cap);
/* ASan's: sanenv_leak_options("ASAN_OPTIONS", ...). */
bool sanenv_asan_options(const char *user_entry, char *out, size_t cap);

#endif
