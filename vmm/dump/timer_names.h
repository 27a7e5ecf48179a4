/* The timers a dump's schedule ended early, in words (explorer/timers.h: "thread 2's
 * nanosleep(50 ms) ended early while thread 1 was at uaf.c:41"), for `jinx test`'s report
 * and `jinxctl inspect`. Where the other thread was is its source line (srcline.h) when the
 * image has debug info, else its symbol+offset in the image, else the address. The
 * schedule is the dump's (untrusted, but checked by its parser: ex_schedule_add_timer). */
#ifndef JINX_TIMER_NAMES_H
#define JINX_TIMER_NAMES_H
#include "explorer/explorer.h"
#include <stdint.h>
#include <stdio.h>

#define TIMER_NAME_LEN 320
#define TIMER_WHERE_LEN 200

struct timer_name {
    char text[TIMER_NAME_LEN];   /* the sentence */
    char where[TIMER_WHERE_LEN]; /* "uaf.c:41", "reader+0x2f", "0x401a2f" or "" */
};

/* Names s's endings into out[0..n) (n = min(s->ntimers, max)); image may be NULL (no
 * source lines or symbols), bias is the image's load bias. Returns n. */
size_t timer_names(const char *image, uint64_t bias, const struct ex_schedule *s,
                   struct timer_name *out, size_t max);
/* The endings as a JSON array of {"step","thread","call","ns","by","at","text"}. */
void timer_names_fput_json(FILE *f, const struct ex_schedule *s, const struct timer_name *nm,
                           size_t n);
/* jinxctl inspect: "timers:  N ended early" and a line each (nothing without any). */
void timer_names_print(FILE *f, const char *image, uint64_t bias, const struct ex_schedule *s);
/* jinxctl inspect --json: ,"early_timers":[...] (always, [] without any). */
void timer_names_json_field(FILE *f, const char *image, uint64_t bias,
                            const struct ex_schedule *s);

#endif
