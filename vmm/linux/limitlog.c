#include "linux/limitlog.h"
#include "lib/json.h"
#include <stdarg.h>
#include <string.h>

void limits_init(struct limits *ls)
{
    memset(ls, 0, sizeof *ls);
    pthread_mutex_init(&ls->lock, NULL);
}

void limits_destroy(struct limits *ls)
{
    pthread_mutex_destroy(&ls->lock);
}

const char *limit_kind_name(enum limit_kind k)
{
    switch (k) {
    case LIMIT_THREADS: return "threads";
    case LIMIT_MEMORY: return "memory";
    case LIMIT_SYSCALL: return "syscall";
    case LIMIT_SIGNAL: return "signal-handler";
    case LIMIT_THREAD_IDS: return "thread-ids";
    case LIMIT_FILES: return "files";
    default: return "?";
    }
}

bool limits_note(struct limits *ls, enum limit_kind kind, long nr, const char *option,
                 const char *fmt, ...)
{
    pthread_mutex_lock(&ls->lock);
    for (int i = 0; i < ls->n; i++) {
        if (ls->l[i].kind == kind && ls->l[i].nr == nr) {
            ls->l[i].count++;
            pthread_mutex_unlock(&ls->lock);
            return false;
        }
    }
    if (ls->n == LIMITS_MAX) {
        ls->dropped++;
        pthread_mutex_unlock(&ls->lock);
        return false;
    }
    struct limit *l = &ls->l[ls->n++];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->nr = nr;
    l->count = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->what, sizeof l->what, fmt, ap);
    va_end(ap);
    snprintf(l->option, sizeof l->option, "%s", option ? option : "");
    pthread_mutex_unlock(&ls->lock);
    return true;
}

int limits_count(struct limits *ls)
{
    pthread_mutex_lock(&ls->lock);
    int n = ls->n;
    pthread_mutex_unlock(&ls->lock);
    return n;
}

int limits_merge(struct limits *dst, struct limits *src)
{
    struct limit copy[LIMITS_MAX];
    pthread_mutex_lock(&src->lock);
    int n = src->n;
    memcpy(copy, src->l, (size_t)n * sizeof copy[0]);
    pthread_mutex_unlock(&src->lock);
    int added = 0;
    for (int i = 0; i < n; i++)
        added += limits_note(dst, copy[i].kind, copy[i].nr,
                             copy[i].option[0] ? copy[i].option : NULL, "%s", copy[i].what);
    return added;
}

void limits_print(struct limits *ls, FILE *f, const char *prefix)
{
    pthread_mutex_lock(&ls->lock);
    for (int i = 0; i < ls->n; i++) {
        const struct limit *l = &ls->l[i];
        fprintf(f, "%sjinx limit: %s", prefix, l->what);
        if (l->count > 1)
            fprintf(f, " (%llu times)", (unsigned long long)l->count);
        fprintf(f, "; %s\n", l->option[0] ? l->option : "no option raises it");
    }
    if (ls->dropped)
        fprintf(f, "%sjinx limit: %llu more of other kinds\n", prefix,
                (unsigned long long)ls->dropped);
    pthread_mutex_unlock(&ls->lock);
}

void limits_json(struct limits *ls, FILE *f)
{
    pthread_mutex_lock(&ls->lock);
    fputc('[', f);
    for (int i = 0; i < ls->n; i++) {
        const struct limit *l = &ls->l[i];
        fprintf(f, "%s{\"kind\":\"%s\",\"what\":", i ? "," : "", limit_kind_name(l->kind));
        json_fput_str(f, l->what, true);
        fprintf(f, ",\"option\":");
        json_fput_str(f, l->option, true);
        fprintf(f, ",\"count\":%llu}", (unsigned long long)l->count);
    }
    fputc(']', f);
    pthread_mutex_unlock(&ls->lock);
}
