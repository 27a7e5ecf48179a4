/* The HTML page of `jinxctl inspect --html` (inspect_html.h). */
#include "dump/inspect_html.h"
#include "dump/html_assets.h"
#include "dump/html_out.h"
#include "lib/sha256.h"
#include "explorer/explorer.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Geometry of the timeline, in CSS pixels: every row has the same height, so the SVG
 * arrows can be placed from row numbers alone. */
#define ROW_H  20
#define HEAD_H 26
#define SEQ_W  64
#define COL_W  210
#define CHUNK  256        /* rows per content-visibility block */

/* Source bytes of a string shown in a row: the bound behind the row byte budget. */
#define VAR_MAX  64
#define LINE_MAX 40
#define WIN      4        /* events before the first difference in the comparison */
#define WIN_AFTER 8

#define NONE UINT64_MAX

struct hp {
    const struct html_page *p;
    const struct ex_trace *t, *rec;   /* retired, recorded (t NULL: no round) */
    long diff;
    int col_of[EX_MAX_TID + 1];       /* -1: no column */
    uint32_t tid_of_col[EX_MAX_TID + 1];
    int ncols;
    struct ex_u64map owner;           /* location -> only thread so far, or NONE */
    struct ex_u64map vars;            /* address -> 1 + index in round->vars */
    struct ex_u64map codeix;          /* rip -> 1 + index in code */
    uint64_t *rips;
    struct html_code *code;
    size_t ncode;
    int32_t *row_of;                  /* event -> timeline row, -1 */
    size_t nrows, rowbytes;
    struct hout h;
    struct html_stats *st;
    bool oom;
};

/* ---- names ------------------------------------------------------------------------- */

static const char *kind_label(const struct ex_event *e)
{
    switch (e->kind) {
    case EX_READ: return ex_is_atomic(e) ? "R lock" : "R";
    case EX_WRITE: return ex_is_atomic(e) ? "W lock" : "W";
    case EX_RMW: return ex_is_atomic(e) ? "RMW lock" : "RMW";
    case EX_FUTEX_WAIT: return (e->flags & EX_F_NOBLOCK) ? "lock (no wait)" : "lock";
    case EX_FUTEX_WAKE: return "unlock";
    case EX_THREAD_CREATE: return "create";
    case EX_THREAD_EXIT: return "exit";
    case EX_THREAD_JOIN: return "join";
    default: return "sync";
    }
}

static const char *kind_class(const struct ex_event *e)
{
    return e->kind == EX_READ ? "kR" : e->kind == EX_WRITE ? "kW" : e->kind == EX_RMW ? "kRMW"
                                                                                    : "ks";
}

/* The variable an event is about: the dump's shared-variable name, else the image's
 * symbol, else the address. */
static void var_name(struct hp *x, const struct ex_event *e, char *buf, size_t len)
{
    buf[0] = '\0';
    if (e->kind == EX_THREAD_CREATE || e->kind == EX_THREAD_JOIN) {
        snprintf(buf, len, "T%u", e->arg);
        return;
    }
    if (e->kind == EX_SYNC_OTHER || (e->kind == EX_THREAD_EXIT && !e->addr))
        return;
    const uint64_t *v = ex_u64map_get(&x->vars, e->addr);
    if (v)
        snprintf(buf, len, "%s", x->p->round->vars[*v - 1].sym);
    if (!buf[0] && x->p->src.data_sym)
        x->p->src.data_sym(x->p->src.ctx, e->addr, buf, len);
    if (!buf[0] || buf[0] == '0')
        snprintf(buf, len, "0x%llx", (unsigned long long)e->addr);
}

static struct html_code *code_of(struct hp *x, uint64_t rip, long *ix)
{
    const uint64_t *v = ex_u64map_get(&x->codeix, rip);
    *ix = v ? (long)*v - 1 : -1;
    return v ? &x->code[*v - 1] : NULL;
}

/* "dir/file.c:42" -> "file.c:42": rows show the file name, the detail the path. */
static const char *base_name(const char *line)
{
    const char *s = strrchr(line, '/');
    return s ? s + 1 : line;
}

static void label(struct hp *x, const struct ex_event *e, bool with_line)
{
    char var[160];
    var_name(x, e, var, sizeof var);
    ho_puts(&x->h, "<em>");
    ho_puts(&x->h, kind_label(e));
    ho_puts(&x->h, "</em> ");
    ho_text(&x->h, var, VAR_MAX);
    if (e->kind == EX_FUTEX_WAKE || (e->kind == EX_THREAD_EXIT && e->arg))
        ho_printf(&x->h, " woke %u", e->arg);
    long ix;
    const struct html_code *c = with_line ? code_of(x, e->rip, &ix) : NULL;
    if (c && c->line[0]) {
        ho_puts(&x->h, "<i>");
        ho_text(&x->h, base_name(c->line), LINE_MAX);
        ho_puts(&x->h, "</i>");
    }
}

/* ---- planning ---------------------------------------------------------------------- */

static bool is_shown(struct hp *x, size_t i)
{
    const struct ex_event *e = &x->t->ev[i];
    if ((long)i == x->diff || !ex_is_access(e))
        return true;
    const uint64_t *o = ex_u64map_get(&x->owner, ex_loc_of(e));
    return o && *o == NONE;
}

static void add_col(struct hp *x, uint32_t tid)
{
    if (tid == 0 || tid > EX_MAX_TID || x->col_of[tid] >= 0)
        return;
    x->col_of[tid] = 0; /* numbered below, in tid order */
}

static void add_rip(struct hp *x, uint64_t rip)
{
    if (x->ncode >= HTML_MAX_CODE)
        return;
    bool added = false;
    uint64_t *v = ex_u64map_put(&x->codeix, rip, x->ncode + 1, &added);
    if (!v) {
        x->oom = true;
        return;
    }
    if (added)
        x->rips[x->ncode++] = rip;
}

static void add_window_rips(struct hp *x, const struct ex_trace *t)
{
    size_t from = x->diff > WIN ? (size_t)x->diff - WIN : 0;
    for (size_t i = from; i < t->n && i <= (size_t)x->diff + WIN_AFTER; i++)
        add_rip(x, t->ev[i].rip);
}

static int plan(struct hp *x)
{
    const struct dump_round *r = x->p->round;
    x->t = &r->retired;
    x->rec = &r->recorded;
    x->diff = ex_trace_first_difference(x->t, x->rec);
    if (x->diff >= 0 && (size_t)x->diff >= x->t->n)
        x->diff = -1;
    for (size_t i = 0; i < r->nvars; i++)
        if (!ex_u64map_put(&x->vars, r->vars[i].addr, i + 1, NULL))
            return -1;
    for (size_t i = 0; i < x->t->n; i++) {
        const struct ex_event *e = &x->t->ev[i];
        add_col(x, e->tid);
        if (!ex_is_access(e))
            continue;
        uint64_t *o = ex_u64map_put(&x->owner, ex_loc_of(e), e->tid, NULL);
        if (!o)
            return -1;
        if (*o != e->tid)
            *o = NONE;
    }
    add_col(x, x->p->crash_tid);
    for (uint32_t tid = 1; tid <= EX_MAX_TID; tid++)
        if (x->col_of[tid] >= 0) {
            x->tid_of_col[x->ncols] = tid;
            x->col_of[tid] = x->ncols++;
        }
    x->rips = calloc(HTML_MAX_CODE, sizeof *x->rips);
    x->row_of = malloc((x->t->n ? x->t->n : 1) * sizeof *x->row_of);
    if (!x->rips || !x->row_of)
        return -1;
    for (size_t i = 0; i < x->t->n; i++)
        x->row_of[i] = -1;
    /* The code table: the first difference and its neighbourhood first, then the rows
     * in order, as far as the table reaches. */
    if (x->diff >= 0) {
        add_window_rips(x, x->t);
        add_window_rips(x, x->rec);
    }
    for (size_t i = 0; i < x->t->n && x->ncode < HTML_MAX_CODE && !x->oom; i++)
        if (is_shown(x, i))
            add_rip(x, x->t->ev[i].rip);
    x->code = calloc(x->ncode ? x->ncode : 1, sizeof *x->code);
    if (!x->code || x->oom)
        return -1;
    if (x->ncode && x->p->src.code)
        x->p->src.code(x->p->src.ctx, x->rips, x->ncode, x->code);
    /* Code the core could not decode: the instruction the trace recorded. */
    for (size_t i = 0; i < x->t->n; i++) {
        long ix;
        struct html_code *c = code_of(x, x->t->ev[i].rip, &ix);
        if (c && !c->insn[0] && x->t->ev[i].insn[0])
            snprintf(c->insn, sizeof c->insn, "%.47s", x->t->ev[i].insn);
    }
    return 0;
}

/* ---- the summary and the comparison ------------------------------------------------ */

static void sum_row(struct hp *x, const char *th, const char *val, size_t max)
{
    if (!val || !val[0])
        return;
    ho_printf(&x->h, "<tr><th>%s</th><td>", th);
    ho_text(&x->h, val, max);
    ho_puts(&x->h, "</td></tr>\n");
}

static void event_text(struct hp *x, const struct ex_event *e)
{
    ho_printf(&x->h, "thread %u ", e->tid);
    label(x, e, true);
}

static void summary(struct hp *x)
{
    const struct html_page *p = x->p;
    ho_puts(&x->h, "<header><h1>jinx: the interleaving that crashed ");
    ho_puts(&x->h, "<code>");
    const char *img = p->image_path ? strrchr(p->image_path, '/') : NULL;
    ho_text(&x->h, img ? img + 1 : p->image_path, 256);
    ho_puts(&x->h, "</code></h1>\n<table class=\"sum\">\n");
    sum_row(x, "dump", p->dump_path, DUMP_MAX_STR);
    sum_row(x, "image", p->image_path, DUMP_MAX_STR);
    sum_row(x, "command", p->cmdline, DUMP_MAX_STR);
    sum_row(x, "outcome", p->outcome, 1024);
    sum_row(x, "detail", p->detail, DUMP_MAX_STR);
    sum_row(x, "report", p->report, 2048);
    if (x->t) {
        const struct rr_score *sc = &x->p->round->score;
        char buf[512];
        if (sc->round == 0) /* whole-run exploration (explore.h) */
            snprintf(buf, sizeof buf, "whole run %u of %u from the first thread creation "
                     "(strategy %.63s): %.255s", sc->sim, sc->nsim, sc->strategy, sc->why);
        else
            snprintf(buf, sizeof buf, "round %llu: %s %u of %u (strategy %.63s) retired: "
                     "%.255s", (unsigned long long)sc->round, sc->sim ? "simulation"
                     : "the recording", sc->sim, sc->nsim, sc->strategy, sc->why);
        sum_row(x, sc->round ? "round" : "run", buf, sizeof buf);
        for (uint32_t i = 0; i < x->p->round->sched.ntimers; i++) { /* docs/timers.md */
            const struct ex_timer_end *e = &x->p->round->sched.timer[i];
            char name[400];
            ex_timer_end_describe(e, e->sym, name, sizeof name);
            sum_row(x, "timer", name, sizeof name);
        }
        snprintf(buf, sizeof buf, "%llu cue points retired, %zu recorded, %zu shared variables",
                 (unsigned long long)x->t->n, x->rec->n, x->p->round->nvars);
        sum_row(x, "trace", buf, sizeof buf);
        ho_puts(&x->h, "<tr><th>differs</th><td>");
        if (x->diff >= 0) {
            ho_printf(&x->h, "<a href=\"#first-diff\">at cue point %ld</a> (<a href=\"#diff\">"
                      "both orders</a>): ", x->diff);
            event_text(x, &x->t->ev[x->diff]);
            if ((size_t)x->diff < x->rec->n) {
                ho_puts(&x->h, "; the recording had ");
                event_text(x, &x->rec->ev[x->diff]);
            } else {
                ho_puts(&x->h, "; the recording ended there");
            }
        } else {
            ho_puts(&x->h, "nowhere: the retired interleaving is the recording's");
        }
        ho_puts(&x->h, "</td></tr>\n");
    }
    ho_puts(&x->h, "</table></header>\n");
}

static void cmp_table(struct hp *x, const struct ex_trace *t, const char *caption)
{
    ho_printf(&x->h, "<table class=\"cmp\"><caption>%s</caption>\n", caption);
    size_t from = x->diff > WIN ? (size_t)x->diff - WIN : 0;
    for (size_t i = from; i < t->n && i <= (size_t)x->diff + WIN_AFTER; i++) {
        ho_printf(&x->h, "<tr%s><td>%zu</td><td>T%u</td><td>", (long)i == x->diff
                  ? " class=\"d\"" : "", i, t->ev[i].tid);
        label(x, &t->ev[i], true);
        ho_puts(&x->h, "</td></tr>\n");
    }
    if (t->n <= (size_t)x->diff)
        ho_puts(&x->h, "<tr class=\"d\"><td colspan=\"3\">(ends here)</td></tr>\n");
    ho_puts(&x->h, "</table>\n");
}

static void comparison(struct hp *x)
{
    if (x->diff < 0)
        return;
    ho_puts(&x->h, "<section id=\"diff\"><h2>Where the orders part</h2>\n<p class=\"note\">"
            "Every cue point (private ones too) around the first one where the retired "
            "schedule differs from the recording it was chosen from.</p>\n");
    cmp_table(x, x->t, "retired (crashed)");
    cmp_table(x, x->rec, "recorded");
    ho_puts(&x->h, "</section>\n");
}

/* ---- the timeline ------------------------------------------------------------------ */

static void row_open(struct hp *x, const char *cls, const char *attrs)
{
    if (x->nrows % CHUNK == 0)
        ho_printf(&x->h, "%s<div class=\"k\">\n", x->nrows ? "</div>" : "");
    ho_printf(&x->h, "<div class=\"r%s%s\"%s>", cls[0] ? " " : "", cls, attrs);
    x->nrows++;
}

static void event_row(struct hp *x, size_t i)
{
    size_t before = x->h.bytes;
    const struct ex_event *e = &x->t->ev[i];
    bool d = (long)i == x->diff;
    long ix;
    code_of(x, e->rip, &ix);
    char attrs[96];
    snprintf(attrs, sizeof attrs, " data-i=\"%zu\" data-c=\"%ld\"%s", i, ix,
             d ? " id=\"first-diff\"" : "");
    x->row_of[i] = (int32_t)x->nrows;
    row_open(x, d ? "d" : "", attrs);
    ho_printf(&x->h, "<s>%zu</s><b class=\"c%d %s\">", i, x->col_of[e->tid], kind_class(e));
    label(x, e, true);
    ho_puts(&x->h, "</b>");
    if (x->diff >= 0 && (long)i >= x->diff) {
        ho_puts(&x->h, "<u>");
        if (i < x->rec->n) {
            ho_printf(&x->h, "%sT%u ", d ? "recorded: " : "", x->rec->ev[i].tid);
            label(x, &x->rec->ev[i], false);
        } else {
            ho_puts(&x->h, "(recording ended)");
        }
        ho_puts(&x->h, "</u>");
    }
    ho_puts(&x->h, "</div>\n");
    x->rowbytes += x->h.bytes - before;
}

/* A collapsed stretch: n events, per-thread counts in cnt. */
static void marker_row(struct hp *x, const char *cls, size_t n, const char *what,
                       const uint32_t *cnt)
{
    size_t before = x->h.bytes;
    row_open(x, cls, "");
    ho_printf(&x->h, "<b class=\"c0\">&#8942; %zu %s", n, what);
    if (cnt) {
        int shown = 0;
        for (int c = 0; c < x->ncols; c++)
            if (cnt[c] && shown++ < 8)
                ho_printf(&x->h, "%sT%u &#215;%u", shown > 1 ? ", " : " (", x->tid_of_col[c],
                          cnt[c]);
        ho_puts(&x->h, shown > 8 ? ", ...)" : shown ? ")" : "");
    }
    ho_puts(&x->h, "</b></div>\n");
    x->rowbytes += x->h.bytes - before;
}

static void flush_private(struct hp *x, size_t *npriv, uint32_t *cnt)
{
    if (!*npriv)
        return;
    marker_row(x, "p", *npriv, *npriv == 1 ? "private cue point collapsed"
                                           : "private cue points collapsed", cnt);
    x->st->collapsed += *npriv;
    *npriv = 0;
    memset(cnt, 0, sizeof(uint32_t) * (EX_MAX_TID + 1));
}

static void rows(struct hp *x)
{
    size_t n = x->t->n, npriv = 0;
    uint32_t cnt[EX_MAX_TID + 1] = {0};
    bool half = x->diff >= 0; /* before the difference: half of the budget */
    for (size_t i = 0; i < n; i++) {
        size_t lim_rows = half ? HTML_MAX_ROWS / 2 : HTML_MAX_ROWS;
        size_t lim_bytes = half ? HTML_MAX_ROW_BYTES / 2 : HTML_MAX_ROW_BYTES;
        if (x->nrows + 2 >= lim_rows || x->rowbytes >= lim_bytes) {
            flush_private(x, &npriv, cnt);
            if (half && (long)i < x->diff) {
                marker_row(x, "m", (size_t)x->diff - i, "events collapsed to keep the page "
                           "small; the first difference follows", NULL);
                x->st->cut += (size_t)x->diff - i;
                i = (size_t)x->diff - 1;
                half = false;
                continue;
            }
            marker_row(x, "m", n - i, "more events collapsed to keep the page small "
                       "(jinxctl inspect --json DUMP lists the shared ones)", NULL);
            x->st->cut += n - i;
            break;
        }
        if ((long)i == x->diff)
            half = false;
        if (!is_shown(x, i)) {
            npriv++;
            cnt[x->col_of[x->t->ev[i].tid]]++;
            continue;
        }
        flush_private(x, &npriv, cnt);
        event_row(x, i);
    }
    flush_private(x, &npriv, cnt);
}

static void crash_row(struct hp *x)
{
    int col = x->p->crash_tid && x->p->crash_tid <= EX_MAX_TID ? x->col_of[x->p->crash_tid] : 0;
    row_open(x, "x", " id=\"crash-row\"");
    ho_printf(&x->h, "<b class=\"c%d\">&#10006; ", col < 0 ? 0 : col);
    ho_text(&x->h, x->p->outcome ? x->p->outcome : "the crash", 120);
    ho_puts(&x->h, "</b></div>\n");
}

static int col_x(struct hp *x, uint32_t tid)
{
    return SEQ_W + x->col_of[tid] * COL_W + 1;
}

static void arrow(struct hp *x, size_t from, size_t to, const char *cls)
{
    if (x->st->arrows >= HTML_MAX_ARROWS || x->row_of[from] < 0 || x->row_of[to] < 0)
        return;
    const struct ex_event *a = &x->t->ev[from], *b = &x->t->ev[to];
    if (a->tid == b->tid)
        return;
    int y1 = HEAD_H + x->row_of[from] * ROW_H + ROW_H / 2;
    int y2 = HEAD_H + x->row_of[to] * ROW_H + ROW_H / 2;
    ho_printf(&x->h, "<line class=\"%s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
              "marker-end=\"url(#m%s)\"/>\n", cls, col_x(x, a->tid), y1, col_x(x, b->tid),
              y2, cls);
    x->st->arrows++;
}

/* The threads a futex wake (or an exit's clear_child_tid wake) at addr woke: the n
 * earliest waiters on addr, as the futex queue is FIFO; each gets from = the waker. */
static void wake_waiters(const struct ex_event *e, size_t i, uint64_t *waddr, int64_t *wseq,
                         int64_t *from, const char **how, const char *cls)
{
    for (uint32_t k = 0; k < e->arg; k++) {
        int best = -1;
        for (int t = 1; t <= EX_MAX_TID; t++)
            if (wseq[t] >= 0 && waddr[t] == e->addr && (best < 0 || wseq[t] < wseq[best]))
                best = t;
        if (best < 0)
            return;
        wseq[best] = -1;
        from[best] = (int64_t)i;
        how[best] = cls;
    }
}

/* Synchronization between threads: the recorded waker when the trace has one, else
 * the inferred one: futex wake -> the earliest waiters on its address, create -> the
 * child, exit -> the join of that thread. The arrow ends at the woken thread's next
 * drawn row (its first events may be private, collapsed). */
static void arrows(struct hp *x, int width)
{
    int height = HEAD_H + (int)x->nrows * ROW_H;
    ho_printf(&x->h, "<svg class=\"ar\" width=\"%d\" height=\"%d\"><defs>", width, height);
    static const char *const cls[] = {"aw", "ac", "aj", "ao"};
    for (int i = 0; i < 4; i++)
        ho_printf(&x->h, "<marker id=\"m%s\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" "
                  "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path class=\"%s\" "
                  "d=\"M0,0L8,4L0,8z\"/></marker>", cls[i], cls[i]);
    ho_puts(&x->h, "</defs>\n");
    int64_t from[EX_MAX_TID + 1], exited[EX_MAX_TID + 1], wseq[EX_MAX_TID + 1];
    uint64_t waddr[EX_MAX_TID + 1];
    const char *how[EX_MAX_TID + 1];
    for (int i = 0; i <= EX_MAX_TID; i++)
        from[i] = exited[i] = wseq[i] = -1;
    for (size_t i = 0; i < x->t->n; i++) {
        const struct ex_event *e = &x->t->ev[i];
        if (e->waker && e->waker - 1 < i) {
            uint8_t k = x->t->ev[e->waker - 1].kind;
            from[e->tid] = (int64_t)e->waker - 1;
            how[e->tid] = k == EX_FUTEX_WAKE ? "aw" : k == EX_THREAD_CREATE ? "ac"
                          : k == EX_THREAD_EXIT ? "aj" : "ao";
        } else if (e->kind == EX_THREAD_JOIN && e->arg <= EX_MAX_TID && exited[e->arg] >= 0) {
            from[e->tid] = exited[e->arg];
            how[e->tid] = "aj";
        }
        if (from[e->tid] >= 0 && x->row_of[i] >= 0) {
            arrow(x, (size_t)from[e->tid], i, how[e->tid]);
            from[e->tid] = -1;
        }
        if (e->kind == EX_THREAD_CREATE && e->arg && e->arg <= EX_MAX_TID) {
            from[e->arg] = (int64_t)i;
            how[e->arg] = "ac";
        }
        if (e->kind == EX_THREAD_EXIT)
            exited[e->tid] = (int64_t)i;
        if (e->kind == EX_FUTEX_WAIT && !(e->flags & EX_F_NOBLOCK)) {
            waddr[e->tid] = e->addr;
            wseq[e->tid] = (int64_t)i;
        }
        if (e->kind == EX_FUTEX_WAKE || (e->kind == EX_THREAD_EXIT && e->addr))
            wake_waiters(e, i, waddr, wseq, from, how,
                         e->kind == EX_FUTEX_WAKE ? "aw" : "aj");
    }
    ho_puts(&x->h, "</svg>\n");
}

static void timeline(struct hp *x)
{
    int recx = SEQ_W + x->ncols * COL_W + 12, width = recx + 320;
    ho_puts(&x->h, "<section id=\"timeline\"><h2>The retired interleaving</h2>\n<p class="
            "\"note\">One column per thread, cue points in the order they were performed, "
            "time going down: shared accesses (R, W, RMW) with their variable and source "
            "line, <b>lock</b> (a futex wait) and <b>unlock</b> (a futex wake), thread "
            "create, exit and join. Arrows: "
            "<span style=\"color:#2f6fd0\">wake &#8594; wait</span>, <span style=\"color:"
            "#2f9e5b\">create &#8594; new thread</span>, <span style=\"color:#8a4fc4\">exit "
            "&#8594; join</span>. Accesses to memory only one thread touched are collapsed. "
            "Click a cue point for its instruction and source line.</p>\n<style>");
    for (int c = 0; c < x->ncols; c++)
        ho_printf(&x->h, ".c%d{left:%dpx}", c, SEQ_W + c * COL_W);
    ho_printf(&x->h, ".r u,.hd .rh{left:%dpx}</style>\n", recx);
    ho_printf(&x->h, "<div id=\"tl\" style=\"width:%dpx\" data-threads=\"%d\">\n<div class="
              "\"hd\"><span style=\"left:4px\">cue</span>", width, x->ncols);
    for (int c = 0; c < x->ncols; c++)
        ho_printf(&x->h, "<span class=\"th c%d\" data-tid=\"%u\">thread %u%s</span>", c,
                  x->tid_of_col[c], x->tid_of_col[c],
                  x->tid_of_col[c] == x->p->crash_tid ? " (crashed)" : "");
    if (x->diff >= 0)
        ho_puts(&x->h, "<span class=\"rh\">the recording, from the first difference</span>");
    ho_puts(&x->h, "</div>\n");
    rows(x);
    crash_row(x);
    ho_puts(&x->h, "</div>\n");
    arrows(x, width);
    ho_puts(&x->h, "</div>\n");
    ho_printf(&x->h, "<p class=\"note\" id=\"tl-stats\">%zu rows drawn for %zu cue points: "
              "%zu private ones collapsed, %zu left out by the page's bounds (%u rows, %u "
              "KiB); %zu arrows.</p></section>\n", x->nrows, x->t->n, x->st->collapsed,
              x->st->cut, HTML_MAX_ROWS, HTML_MAX_ROW_BYTES >> 10, x->st->arrows);
}

/* ---- the crash, the detail panel, the data ----------------------------------------- */

static void crash(struct hp *x)
{
    const struct html_page *p = x->p;
    ho_puts(&x->h, "<section id=\"crash\"><h2>The crash</h2>\n<p class=\"oc\">");
    ho_text(&x->h, p->outcome, 1024);
    ho_puts(&x->h, "</p>\n");
    if (p->nframes) {
        ho_printf(&x->h, "<h3>Backtrace of thread %u</h3>\n<ol class=\"bt\" start=\"0\">\n",
                  p->crash_tid);
        for (size_t i = 0; i < p->nframes && i < HTML_MAX_FRAMES; i++) {
            ho_printf(&x->h, "<li class=\"frame\"><code>0x%012llx</code> ",
                      (unsigned long long)p->frames[i].pc);
            ho_text(&x->h, p->frames[i].sym, 128);
            if (p->frames[i].line[0]) {
                ho_puts(&x->h, " <i>");
                ho_text(&x->h, p->frames[i].line, SRCLINE_LEN);
                ho_puts(&x->h, "</i>");
            }
            ho_puts(&x->h, "</li>\n");
        }
        ho_puts(&x->h, "</ol>\n");
    }
    if (p->ndis) {
        ho_puts(&x->h, "<h3>Code</h3>\n<pre class=\"dis\">");
        for (size_t i = 0; i < p->ndis && i < HTML_MAX_DIS; i++) {
            ho_printf(&x->h, "%s0x%012llx  ", p->dis[i].current ? "=&gt; " : "   ",
                      (unsigned long long)p->dis[i].addr);
            ho_text(&x->h, p->dis[i].sym, 128);
            ho_puts(&x->h, "  ");
            ho_text(&x->h, p->dis[i].text, sizeof p->dis[i].text);
            ho_puts(&x->h, "\n");
        }
        ho_puts(&x->h, "</pre>\n");
    }
    ho_puts(&x->h, "</section>\n");
}

static void data_block(struct hp *x)
{
    ho_puts(&x->h, "<aside id=\"detail\" hidden><div id=\"d-what\"></div><div id=\"d-rip\">"
            "</div><div id=\"d-insn\"></div><div id=\"d-line\"></div></aside>\n"
            "<script type=\"application/json\" id=\"jinx-data\">{\"code\":[");
    size_t start = x->h.bytes;
    for (size_t i = 0; i < x->ncode; i++) {
        ho_puts(&x->h, i ? ",[" : "[");
        if (x->h.bytes - start < HTML_MAX_CODE_BYTES) {
            const struct html_code *c = &x->code[i];
            ho_json(&x->h, c->sym, sizeof c->sym);
            ho_puts(&x->h, ",");
            ho_json(&x->h, c->insn, sizeof c->insn);
            ho_puts(&x->h, ",");
            ho_json(&x->h, c->line, sizeof c->line);
            ho_printf(&x->h, ",\"0x%llx\"", (unsigned long long)x->rips[i]);
        }
        ho_puts(&x->h, "]");
    }
    ho_puts(&x->h, "]}</script>\n");
}

static void page(struct hp *x)
{
    uint8_t sha[SHA256_LEN];
    char b64[64];
    sha256(html_script, strlen(html_script), sha);
    ho_base64(sha, sizeof sha, b64);
    ho_printf(&x->h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
              "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
              "style-src 'unsafe-inline'; script-src 'sha256-%s'\">\n<title>jinx: ", b64);
    const char *dn = x->p->dump_path ? strrchr(x->p->dump_path, '/') : NULL;
    ho_text(&x->h, dn ? dn + 1 : x->p->dump_path, 256);
    ho_printf(&x->h, "</title>\n<style>%s</style></head>\n<body>\n", html_style);
    summary(x);
    if (x->t) {
        timeline(x);
        comparison(x);
    } else {
        ho_puts(&x->h, "<section id=\"timeline\"><h2>No interleaving</h2><p class=\"note\" "
                "id=\"no-round\">The dump has no round records: the crash was met in free "
                "execution, not retired by a simulation round (run with --attach), so there "
                "is no schedule to draw.</p></section>\n");
    }
    crash(x);
    data_block(x);
    ho_printf(&x->h, "<script>%s</script>\n</body></html>\n", html_script);
}

int inspect_html_write(FILE *f, const struct html_page *p, struct html_stats *st, char *err,
                       size_t errlen)
{
    struct html_stats dummy;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof *st);
    struct hp *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    x->p = p;
    x->st = st;
    x->diff = -1;
    for (int i = 0; i <= EX_MAX_TID; i++)
        x->col_of[i] = -1;
    ex_u64map_init(&x->owner);
    ex_u64map_init(&x->vars);
    ex_u64map_init(&x->codeix);
    ho_init(&x->h, f);
    int rc = 0;
    if (p->round && p->round->present && plan(x) < 0) {
        snprintf(err, errlen, "out of memory while laying out %zu cue points",
                 p->round->retired.n);
        rc = -1;
    }
    if (rc == 0) {
        page(x);
        st->bytes = x->h.bytes;
        st->rows = x->nrows;
        st->columns = (size_t)x->ncols;
        st->first_diff = x->diff;
        if (x->h.err || fflush(f) != 0) {
            snprintf(err, errlen, "write error: %s", strerror(errno));
            rc = -1;
        }
    }
    ex_u64map_free(&x->owner);
    ex_u64map_free(&x->vars);
    ex_u64map_free(&x->codeix);
    free(x->rips);
    free(x->code);
    free(x->row_of);
    free(x);
    return rc;
}

int inspect_html_save(const char *path, const struct html_page *p, struct html_stats *st,
                      char *err, size_t errlen)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "cannot write %s: the path is too long", path);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s (is its directory there and writable?)",
                 path, strerror(errno));
        return -1;
    }
    fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    char why[256];
    int rc = inspect_html_write(f, p, st, why, sizeof why);
    if (fclose(f) != 0 && rc == 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) < 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        rc = -1;
    }
    if (rc < 0) {
        unlink(tmp);
        snprintf(err, errlen, "cannot write %s: %s", path, why);
    }
    return rc;
}
