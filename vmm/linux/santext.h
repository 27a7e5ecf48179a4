/* A sanitizer runtime linked into the program itself, found by its symbols: clang links
 * its runtimes (libclang_rt.asan, .tsan, .msan, .ubsan_standalone) into the program, gcc
 * does with -static-libasan, -static-libtsan, -static-libubsan and a -static UBSan
 * build. Their code then lies in the program's own text, next to the program's functions,
 * where no library name tells it apart (linux/vmlibs.h finds the shared runtimes by
 * name). Pure: no VM, unit-tested (tests/unit/test_vmm_santext.c). */
#ifndef JINX_SANTEXT_H
#define JINX_SANTEXT_H
#include "linux/elfparse.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A gap of at most this many other function addresses, spanning at most
 * SANTEXT_GAP_BYTES, between two runtime functions is the runtime's too (its static
 * helpers without a namespace, libbacktrace and the demangler in gcc's, the C-named
 * entry points): the runtime's object files are linked one after the other, the
 * program's own before or after them. */
#define SANTEXT_GAP_SYMS 8u
#define SANTEXT_GAP_BYTES 16384u

/* Whether a function name is a sanitizer runtime's: a name or C++ mangled name with
 * __sanitizer, __interceptor, __interception, __asan, __tsan, __msan, __lsan, __ubsan,
 * __hwasan or __sancov in it, or TSan's Annotate* / WTFAnnotate* entry points. */
bool santext_is_runtime_name(const char *name);

/* The runtime's code among syms (sorted by address, link-time; elf_load_symbols) within
 * the executable ranges text[0..ntext) (link-time [lo, hi)): maximal runs of runtime
 * functions, bridging gaps as above, never across `main` or `_start` nor out of a text
 * range. At most max ranges into out (the largest, in address order); the count. */
size_t santext_ranges(const struct elf_symbol *syms, size_t n, const uint64_t (*text)[2],
                      size_t ntext, uint64_t (*out)[2], size_t max);

#endif
