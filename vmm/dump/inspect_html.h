/* `jinxctl inspect --html OUT DUMP`: the retired simulation of a crash dump drawn as one
 * self-contained HTML page (inline CSS, SVG and a little JavaScript; no network, no
 * external asset; a Content-Security-Policy allows only the page's own script, by hash).
 *
 * The page: a summary (dump, image, command, outcome, round, score); the first cue point
 * where the retired interleaving differs from the recording, with both orders side by
 * side around it; the timeline — one column per thread, the retired cue points in order
 * down the page, each labelled with its access kind, the shared variable (symbol+offset)
 * and the source line, the first differing one highlighted (id "first-diff") with the
 * recording's event at the same cue point beside every row from there on; futex
 * wake -> wait (unlock -> lock), create -> first event and exit -> join drawn as SVG
 * arrows between columns; accesses to locations only one thread touched (private
 * stretches) collapsed into one row each; the crash as the last row in its thread's
 * column. Then the crash itself: outcome, backtrace with source lines, disassembly.
 * Clicking a cue point shows its instruction, symbol and source line.
 *
 * Bounds (the page stays usable and small whatever the dump holds): at most
 * HTML_MAX_ROWS timeline rows and HTML_MAX_ROW_BYTES of them; when the first difference
 * lies beyond half of either, the events between are collapsed into one row so that it
 * is still drawn; what does not fit ends in one "N more events collapsed" row. Strings
 * are cut at fixed lengths before escaping, the code table (instruction, symbol, line per
 * distinct rip) holds at most HTML_MAX_CODE entries and HTML_MAX_CODE_BYTES, arrows are
 * at most HTML_MAX_ARROWS. The whole file stays under HTML_MAX_BYTES (tested).
 *
 * Every string of the dump is untrusted: escaped for HTML (html_out.h) in markup, and as
 * JSON with '<' '>' '&' as \uXXXX in the <script type="application/json"> data block;
 * the script only ever sets textContent. */
#ifndef JINX_INSPECT_HTML_H
#define JINX_INSPECT_HTML_H
#include "dump/roundrec.h"
#include "dump/srcline.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HTML_MAX_ROWS       25000
#define HTML_MAX_ROW_BYTES  (3u << 20)
#define HTML_MAX_CODE       2048
#define HTML_MAX_CODE_BYTES (1u << 20)
#define HTML_MAX_ARROWS     4000
#define HTML_MAX_BYTES      (5u << 20)
#define HTML_MAX_FRAMES     32
#define HTML_MAX_DIS        48

/* What the page knows about one code address (any field may be ""). */
struct html_code {
    char sym[128];      /* symbol+offset */
    char insn[64];      /* the instruction, as capstone prints it */
    char line[SRCLINE_LEN]; /* file:line */
};

struct html_frame {
    uint64_t pc;
    char sym[256];
    char line[SRCLINE_LEN];
};

struct html_dis {
    uint64_t addr;
    bool current;       /* the crashing instruction */
    char sym[256];
    char text[64];
};

/* How the page resolves addresses (inspect.c: the image's symbols, capstone over the
 * core, addr2line). Either callback may be NULL. */
struct html_source {
    void *ctx;
    /* A data address as "symbol+0xoff", or "" when no symbol covers it. */
    void (*data_sym)(void *ctx, uint64_t addr, char *buf, size_t len);
    /* out[i] for rips[i], n <= HTML_MAX_CODE; fields left "" are shown as unknown. */
    void (*code)(void *ctx, const uint64_t *rips, size_t n, struct html_code *out);
};

struct html_page {
    const char *dump_path, *image_path, *cmdline;  /* NULL: not shown */
    const char *outcome;     /* one line, e.g. "killed by SIGABRT in thread 3 at ..." */
    const char *detail;      /* NULL or "" when none */
    const char *report;      /* the sanitizer's report, one line (dump/sanrec.h); NULL or "" */
    uint32_t crash_tid;      /* 0: no crashing thread (deadlock) */
    const struct html_frame *frames;   /* the crashing (or first) thread's backtrace */
    size_t nframes;
    const struct html_dis *dis;
    size_t ndis;
    const struct dump_round *round;    /* NULL or !present: a crash met in free execution */
    struct html_source src;
};

struct html_stats {
    size_t bytes;            /* the page's size */
    size_t rows;             /* timeline rows drawn (events and collapsed stretches) */
    size_t columns;          /* thread columns */
    size_t collapsed;        /* private events folded into collapsed rows */
    size_t cut;              /* events left out by the bounds ("N more events collapsed") */
    size_t arrows;
    long first_diff;         /* cue point, or -1 */
};

/* Writes the page to f. 0, or -1 with a message (out of memory, write error). */
int inspect_html_write(FILE *f, const struct html_page *p, struct html_stats *st, char *err,
                       size_t errlen);

/* Writes the page to path atomically (a temporary file in the same directory, renamed
 * over path only when complete). 0, or -1 with a message naming path and the reason. */
int inspect_html_save(const char *path, const struct html_page *p, struct html_stats *st,
                      char *err, size_t errlen);

#endif
