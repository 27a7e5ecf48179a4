#include "lib/options.h"
#include "lib/util.h"
#include <stdio.h>
#include <string.h>

void cli_init(struct cli *c, const char *cmd, int argc, char **argv, char **pos)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->argc = argc;
    c->argv = argv;
    c->pos = pos;
    optind = 0; /* 0, not 1: glibc re-initialises its state (a new optstring mode) */
}

/* "--name" or "--name=value" of argument arg: which long options it could mean. */
static void explain_long(struct cli *c, const char *arg, const struct option *lo)
{
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    int exact = -1, nmatch = 0;
    char cands[160] = "";
    for (int i = 0; lo && lo[i].name; i++) {
        if (strncmp(lo[i].name, name, len) != 0)
            continue;
        if (strlen(lo[i].name) == len)
            exact = i;
        nmatch++;
        size_t k = strlen(cands);
        if (k + strlen(lo[i].name) + 8 < sizeof cands)
            snprintf(cands + k, sizeof cands - k, "%s--%s", k ? ", " : "", lo[i].name);
    }
    if (exact < 0 && nmatch == 1) {
        for (int i = 0; lo[i].name; i++)
            if (!strncmp(lo[i].name, name, len))
                exact = i;
    }
    if (exact >= 0 && eq && lo[exact].has_arg == no_argument)
        snprintf(c->err, sizeof c->err, "%s: option '--%s' takes no value (got '%s')", c->cmd,
                 lo[exact].name, arg);
    else if (exact < 0 && nmatch > 1)
        snprintf(c->err, sizeof c->err, "%s: ambiguous option '%.*s' (%s?)", c->cmd,
                 (int)(len + 2), arg, cands);
    else
        snprintf(c->err, sizeof c->err, "%s: unknown option '%.*s'", c->cmd, (int)(len + 2),
                 arg);
}

int cli_next(struct cli *c, const char *shortopts, const struct option *lo, int *longindex)
{
    char spec[64];
    if (snprintf(spec, sizeof spec, "-:%s", shortopts ? shortopts : "") >= (int)sizeof spec) {
        snprintf(c->err, sizeof c->err, "%s: internal: too many short options", c->cmd);
        return CLI_ERROR;
    }
    opterr = 0;
    for (;;) {
        int li = -1;
        int ch = getopt_long(c->argc, c->argv, spec, lo, &li);
        if (ch == 1) {
            c->pos[c->npos++] = optarg;
            continue;
        }
        if (ch == -1) {
            /* After "--": the rest is positional, whatever it looks like. */
            while (optind < c->argc)
                c->pos[c->npos++] = c->argv[optind++];
            return CLI_END;
        }
        const char *arg = optind > 0 && optind <= c->argc ? c->argv[optind - 1] : "?";
        if (ch == '?') {
            if (!strncmp(arg, "--", 2))
                explain_long(c, arg, lo);
            else
                snprintf(c->err, sizeof c->err, "%s: unknown option '-%c'", c->cmd,
                         optopt > 0x20 && optopt < 0x7f ? optopt : '?');
            return CLI_ERROR;
        }
        if (ch == ':') {
            if (!strncmp(arg, "--", 2))
                snprintf(c->err, sizeof c->err, "%s: option '%s' needs a value", c->cmd, arg);
            else
                snprintf(c->err, sizeof c->err, "%s: option '-%c' needs a value", c->cmd,
                         optopt > 0x20 && optopt < 0x7f ? optopt : '?');
            return CLI_ERROR;
        }
        if (longindex)
            *longindex = li;
        return ch;
    }
}

struct option *cli_value_longopts(const struct cli_value *v, size_t n,
                                  const struct option *extra, struct option *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k + 1 >= cap)
            return NULL;
        out[k++] = (struct option){v[i].name, v[i].kind == CLI_FLAG ? no_argument
                                                                   : required_argument,
                                   NULL, CLI_VALUE_ID};
    }
    for (size_t i = 0; extra && extra[i].name; i++) {
        if (k + 1 >= cap)
            return NULL;
        out[k++] = extra[i];
    }
    out[k] = (struct option){0, 0, 0, 0};
    return out;
}

const struct cli_value *cli_value_find(const struct cli_value *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

int cli_value_set(const struct cli_value *v, const char *arg, char *err, size_t errlen)
{
    uint64_t n = 0;
    bool ok = true;
    switch (v->kind) {
    case CLI_FLAG:
        *(bool *)v->dest = true;
        break;
    case CLI_STRING:
        *(const char **)v->dest = arg;
        break;
    case CLI_U64:
    case CLI_SIZE:
    case CLI_DURATION:
        ok = arg && (v->kind == CLI_U64    ? parse_u64(arg, &n)
                     : v->kind == CLI_SIZE ? parse_size(arg, &n)
                                           : parse_duration(arg, &n)) &&
             n >= v->min && n <= v->max && (!v->multiple || n % v->multiple == 0);
        if (!ok)
            return jx_fail(err, errlen, "--%s %s: expected %s", v->name, arg ? arg : "",
                           v->expected);
        if (v->size == 8)
            *(uint64_t *)v->dest = n;
        else
            *(uint32_t *)v->dest = (uint32_t)n;
        break;
    }
    if (v->given)
        *v->given = true;
    return 0;
}
