/* Small helpers shared by the VMM and the explorer: error messages, number parsing,
 * clocks.
 *
 * Messages: every diagnostic on stderr starts with the program's name ("jinx-vmm: ",
 * "jinxctl: ", "jinx: ", jx_set_progname), through jx_err/jx_verr; a parser or writer
 * formats its error into the caller's buffer with jx_fail. (The simulation rounds' event
 * lines, "jinx: round N: ...", are events, not errors: jinxctl shows them the same way.) */
#ifndef JINX_UTIL_H
#define JINX_UTIL_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A macro's value as a string literal: JX_STR(MAX_VCPUS) is "254". */
#define JX_STR_(x) #x
#define JX_STR(x) JX_STR_(x)

/* Prints "jinx-vmm: <message>" on stderr. */
void jx_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with what before the message when not NULL: "jinx-vmm: <what>: <message>". */
void jx_verr(const char *what, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Formats a message into err (the parsers' and writers' error reports); returns -1. */
int jx_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void jx_set_progname(const char *name);

/* "512M", "1G", "4096", "64K" -> bytes. False on garbage or overflow. */
bool parse_size(const char *s, uint64_t *out);
/* "10s", "500ms", "2m", "100us", "3" (seconds) -> nanoseconds. */
bool parse_duration(const char *s, uint64_t *out_ns);
/* Decimal or 0x-hex unsigned integer, whole string. */
bool parse_u64(const char *s, uint64_t *out);

uint64_t mono_ns(void);
/* The process's CPU time, every thread's (a vCPU thread's guest time included); 0 if
 * the clock cannot be read. */
uint64_t process_cpu_ns(void);


#endif
