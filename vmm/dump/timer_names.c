/* The timers a dump's schedule ended early, in words (timer_names.h). */
#include "dump/timer_names.h"
#include "dump/srcline.h"
#include "lib/json.h"
#include "linux/elfparse.h"
#include <string.h>

size_t timer_names(const char *image, uint64_t bias, const struct ex_schedule *s,
                   struct timer_name *out, size_t max)
{
    size_t n = s->ntimers < max ? s->ntimers : max;
    if (n > SRCLINE_MAX)
        n = SRCLINE_MAX;
    uint64_t addrs[SRCLINE_MAX];
    static char lines[SRCLINE_MAX][SRCLINE_LEN]; /* one caller at a time (CLI tools) */
    for (size_t i = 0; i < n; i++) {
        uint64_t rip = s->timer[i].rip;
        addrs[i] = rip >= bias ? rip - bias : 0; /* the instruction itself, not a return */
        lines[i][0] = 0;
    }
    char err[256];
    struct elf_image img;
    bool have_img = image && elf_open(image, &img, err, sizeof err) == 0;
    if (have_img && n)
        srcline_resolve(image, addrs, n, lines, err, sizeof err); /* none: symbols below */
    for (size_t i = 0; i < n; i++) {
        const struct ex_timer_end *t = &s->timer[i];
        char *w = out[i].where;
        w[0] = 0;
        if (t->rip && lines[i][0]) {
            const char *base = strrchr(lines[i], '/'); /* "uaf.c:41": the file's name */
            snprintf(w, TIMER_WHERE_LEN, "%.*s", (int)(SRCLINE_LEN - 1),
                     base ? base + 1 : lines[i]);
        } else if (t->sym[0]) {
            snprintf(w, TIMER_WHERE_LEN, "%.*s", (int)(EX_TIMER_SYM_LEN - 1), t->sym);
        } else if (t->rip && have_img) {
            elf_format_addr(&img, bias, t->rip, false, w, TIMER_WHERE_LEN);
        } else if (t->rip) {
            snprintf(w, TIMER_WHERE_LEN, "0x%llx", (unsigned long long)t->rip);
        }
        ex_timer_end_describe(t, w, out[i].text, sizeof out[i].text);
    }
    if (have_img)
        elf_free(&img);
    return n;
}

void timer_names_fput_json(FILE *f, const struct ex_schedule *s, const struct timer_name *nm,
                           size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n && i < s->ntimers; i++) {
        const struct ex_timer_end *t = &s->timer[i];
        fprintf(f, "%s{\"step\":%llu,\"thread\":%u,\"call\":", i ? "," : "",
                (unsigned long long)t->step, t->thread);
        json_fput_str(f, t->call, true);
        fprintf(f, ",\"ns\":%llu,\"by\":%u,\"at\":", (unsigned long long)t->ns, t->by);
        json_fput_str(f, nm[i].where, true);
        fprintf(f, ",\"text\":");
        json_fput_str(f, nm[i].text, true);
        fputc('}', f);
    }
    fputc(']', f);
}

void timer_names_print(FILE *f, const char *image, uint64_t bias, const struct ex_schedule *s)
{
    static struct timer_name nm[EX_MAX_TIMERS];
    size_t n = timer_names(image, bias, s, nm, EX_MAX_TIMERS);
    if (n)
        fprintf(f, "timers:  %zu ended early (a sleep or timed wait ended before its deadline, "
                "as on a busy machine; --timers strict never does):\n", n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "           %s (choice %llu)\n", nm[i].text,
                (unsigned long long)s->timer[i].step);
}

void timer_names_json_field(FILE *f, const char *image, uint64_t bias,
                            const struct ex_schedule *s)
{
    static struct timer_name nm[EX_MAX_TIMERS];
    size_t n = timer_names(image, bias, s, nm, EX_MAX_TIMERS);
    fprintf(f, ",\"early_timers\":");
    timer_names_fput_json(f, s, nm, n);
}
