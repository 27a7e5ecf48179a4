/* Round configuration: defaults, parsing, range checks, and the status as JSON. */
#include "rounds/round_config.h"
#include "lib/json.h"
#include "lib/util.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

void round_config_default(struct round_config *c)
{
    memset(c, 0, sizeof *c);
    c->rate = ROUND_DEFAULT_RATE;
    c->strategy = EX_STRAT_PORTFOLIO;
    ex_params_default(&c->params);
    c->fragment_ns = 1000000; /* 1 ms, the article's fragment */
    c->seed = 1;
    c->max_duty_pct = 50;
    c->fragment_wall_ns = 50000000;
    c->tail_ns = ROUND_DEFAULT_TAIL_NS;
    c->tail_wall_ns = 200000000; /* a serialized cue point costs 50-100 us on PVM */
    c->first_ns = 1000000;
    c->record_quantum = 16;
    c->workers = -1; /* worker_count's default */
}

/* Plain decimal "12", "0.5", "20.25": no sign, exponent, hex, inf or nan (strtod
 * would take those). */
static int parse_decimal(const char *s, size_t n, double *out)
{
    double v = 0, scale = 1;
    size_t i = 0, digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        v = v * 10 + (s[i++] - '0');
        digits++;
    }
    if (i < n && s[i] == '.') {
        i++;
        size_t frac = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            scale /= 10;
            v += (s[i++] - '0') * scale;
            frac++;
        }
        if (!frac)
            return -1;
        digits += frac;
    }
    if (i != n || !digits || digits > 15)
        return -1;
    *out = v;
    return 0;
}

int round_parse_rate(const char *s, double *rate)
{
    if (!s)
        return -1;
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    double v, per = 1;
    if (parse_decimal(s, n, &v) < 0)
        return -1;
    if (slash) {
        const char *u = slash + 1;
        if (!strcmp(u, "s") || !strcmp(u, "sec"))
            per = 1;
        else if (!strcmp(u, "min") || !strcmp(u, "m"))
            per = 60;
        else
            return -1;
    }
    v /= per;
    if (!(v > 0) || v > ROUND_MAX_RATE)
        return -1;
    *rate = v;
    return 0;
}

int round_config_check(const struct round_config *c, char *err, size_t errlen)
{
    if (!(c->rate > 0) || c->rate > ROUND_MAX_RATE || !isfinite(c->rate)) {
        snprintf(err, errlen, "rate: expected more than 0 and at most %g rounds per second",
                 ROUND_MAX_RATE);
        return -1;
    }
    if ((unsigned)c->strategy >= EX_NSTRATEGIES) {
        snprintf(err, errlen, "strategy: unknown strategy number %d", (int)c->strategy);
        return -1;
    }
    if (c->params.pct_depth < 1 || c->params.pct_depth > EX_PCT_MAX_DEPTH) {
        snprintf(err, errlen, "depth: expected an integer from 1 to %d", EX_PCT_MAX_DEPTH);
        return -1;
    }
    if (c->params.max_schedules < 1 || c->params.max_schedules > ROUND_MAX_SIMS) {
        snprintf(err, errlen, "sims: expected an integer from 1 to %d", ROUND_MAX_SIMS);
        return -1;
    }
    if (c->fragment_ns < ROUND_MIN_FRAGMENT_NS || c->fragment_ns > ROUND_MAX_FRAGMENT_NS) {
        snprintf(err, errlen, "fragment: expected from %llu us to %llu ms",
                 ROUND_MIN_FRAGMENT_NS / 1000, ROUND_MAX_FRAGMENT_NS / 1000000);
        return -1;
    }
    if (c->tail_ns > ROUND_MAX_TAIL_NS) {
        snprintf(err, errlen, "tail: expected at most %llu ms", ROUND_MAX_TAIL_NS / 1000000);
        return -1;
    }
    if (c->max_duty_pct < 1 || c->max_duty_pct > 100) {
        snprintf(err, errlen, "max_duty_pct: expected an integer from 1 to 100");
        return -1;
    }
    return 0;
}

static void strategy_names(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < EX_NSTRATEGIES && n < len; i++) {
        int k = snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
                         ex_strategy_name((enum ex_strategy)i));
        if (k < 0)
            return;
        n += (size_t)k;
    }
}

int round_config_set(struct round_config *c, const char *key, const char *val, char *err,
                     size_t errlen)
{
    struct round_config t = *c;
    uint64_t n;
    if (!strcmp(key, "rate")) {
        if (round_parse_rate(val, &t.rate) < 0) {
            snprintf(err, errlen, "rate %s: expected rounds per second such as 5/s, 0.5/s or "
                     "20 (more than 0, at most %g/s)", val, ROUND_MAX_RATE);
            return -1;
        }
    } else if (!strcmp(key, "strategy")) {
        if (ex_strategy_from_name(val, &t.strategy) < 0) {
            char names[160];
            strategy_names(names, sizeof names);
            snprintf(err, errlen, "strategy %s: expected one of %s", val, names);
            return -1;
        }
    } else if (!strcmp(key, "depth")) {
        if (!parse_u64(val, &n) || n < 1 || n > EX_PCT_MAX_DEPTH) {
            snprintf(err, errlen, "depth %s: expected an integer from 1 to %d", val,
                     EX_PCT_MAX_DEPTH);
            return -1;
        }
        t.params.pct_depth = (uint32_t)n;
    } else if (!strcmp(key, "sims")) {
        if (!parse_u64(val, &n) || n < 1 || n > ROUND_MAX_SIMS) {
            snprintf(err, errlen, "sims %s: expected an integer from 1 to %d", val,
                     ROUND_MAX_SIMS);
            return -1;
        }
        t.params.max_schedules = (uint32_t)n;
    } else if (!strcmp(key, "fragment")) {
        if (!parse_duration(val, &n) || n < ROUND_MIN_FRAGMENT_NS || n > ROUND_MAX_FRAGMENT_NS) {
            snprintf(err, errlen, "fragment %s: expected a duration from %lluus to %llums, "
                     "such as 1ms or 500us", val, ROUND_MIN_FRAGMENT_NS / 1000,
                     ROUND_MAX_FRAGMENT_NS / 1000000);
            return -1;
        }
        t.fragment_ns = n;
    } else if (!strcmp(key, "fragment-wall")) {
        if (!parse_duration(val, &n) || n < ROUND_MIN_FRAGMENT_WALL_NS ||
            n > ROUND_MAX_FRAGMENT_WALL_NS) {
            snprintf(err, errlen, "fragment-wall %s: expected a duration from %llums to %llus, "
                     "such as 50ms (a fragment then ends at its next cue point)", val,
                     ROUND_MIN_FRAGMENT_WALL_NS / 1000000, ROUND_MAX_FRAGMENT_WALL_NS / 1000000000);
            return -1;
        }
        t.fragment_wall_ns = n;
    } else if (!strcmp(key, "max-duty")) {
        const char *v = val;
        size_t vl = strlen(v);
        char num[24];
        if (vl && v[vl - 1] == '%' && vl < sizeof num) {
            memcpy(num, v, vl - 1); /* "5%" as well as "5" */
            num[vl - 1] = '\0';
            v = num;
        }
        if (!parse_u64(v, &n) || n < 1 || n > 100) {
            snprintf(err, errlen, "max-duty %s: expected a percentage of the wall time from 1 "
                     "to 100, such as 5 or 5%%", val);
            return -1;
        }
        t.max_duty_pct = (int)n;
    } else if (!strcmp(key, "tail")) {
        if (!(parse_duration(val, &n) || (parse_u64(val, &n) && n == 0)) || n > ROUND_MAX_TAIL_NS) {
            snprintf(err, errlen, "tail %s: expected a duration from 0 to %llums, such as 4ms "
                     "(0: back to free execution right after a retirement)", val,
                     ROUND_MAX_TAIL_NS / 1000000);
            return -1;
        }
        t.tail_ns = n;
    } else if (!strcmp(key, "workers")) {
        if (!parse_u64(val, &n) || n > ROUND_MAX_WORKERS) {
            snprintf(err, errlen, "workers %s: expected an integer from 0 to %d (0: simulations "
                     "one after the other in the program's VM)", val, ROUND_MAX_WORKERS);
            return -1;
        }
        t.workers = (int)n;
    } else if (!strcmp(key, "sim-kind")) {
        if (round_sim_kind_from_name(val, &t.sim_kind) < 0) {
            snprintf(err, errlen, "sim-kind %s: expected auto, traced or sparse", val);
            return -1;
        }
    } else if (!strcmp(key, "seed")) {
        if (!parse_u64(val, &n)) {
            snprintf(err, errlen, "seed %s: expected an unsigned integer", val);
            return -1;
        }
        t.seed = n;
    } else {
        snprintf(err, errlen, "unknown round setting '%s'", key);
        return -1;
    }
    *c = t;
    return 0;
}

static const char *const sim_kinds[] = {[ROUND_SIMS_AUTO] = "auto",
                                         [ROUND_SIMS_TRACED] = "traced",
                                         [ROUND_SIMS_SPARSE] = "sparse"};

const char *round_sim_kind_name(enum round_sim_kind k)
{
    return (unsigned)k < sizeof sim_kinds / sizeof sim_kinds[0] ? sim_kinds[k] : "?";
}

int round_sim_kind_from_name(const char *s, enum round_sim_kind *out)
{
    for (unsigned i = 0; s && i < sizeof sim_kinds / sizeof sim_kinds[0]; i++)
        if (!strcmp(s, sim_kinds[i])) {
            *out = (enum round_sim_kind)i;
            return 0;
        }
    return -1;
}

void round_config_describe(const struct round_config *c, char *buf, size_t len)
{
    char strat[64];
    if (c->strategy == EX_STRAT_PCT || c->strategy == EX_STRAT_PCTVB)
        snprintf(strat, sizeof strat, "%s (depth %u)", ex_strategy_name(c->strategy),
                 c->params.pct_depth);
    else
        snprintf(strat, sizeof strat, "%s", ex_strategy_name(c->strategy));
    snprintf(buf, len, "%g/s, strategy %s, %u simulations/round, fragment %g ms, tail %g ms, "
             "seed %llu, simulations %s", c->rate, strat, c->params.max_schedules,
             c->fragment_ns / 1e6, c->tail_ns / 1e6, (unsigned long long)c->seed,
             round_sim_kind_name(c->sim_kind));
}

static void phases(struct jbuf *b, const char *name, const uint64_t v[9])
{
    static const char *const ph[9] = {"stop",     "snapshot", "record", "explore", "simulate",
                                      "score",    "retire",   "resume", "round"};
    jb_printf(b, ",\"%s\":{", name);
    for (int i = 0; i < 9; i++)
        jb_printf(b, "%s\"%s\":%llu", i ? "," : "", ph[i], (unsigned long long)v[i]);
    jb_raw(b, "}");
}

int round_status_json(const struct round_stats *st, char *buf, size_t len)
{
    struct jbuf b;
    jb_init(&b, buf, len);
    const struct round_config *c = &st->cfg;
    jb_printf(&b, "{\"attached\":%s,\"rate\":%.6g,\"strategy\":", st->attached ? "true" : "false",
              isfinite(c->rate) ? c->rate : 0.0);
    jb_str(&b, (unsigned)c->strategy < EX_NSTRATEGIES ? ex_strategy_name(c->strategy) : "?");
    jb_printf(&b,
              ",\"depth\":%u,\"sims\":%u,\"fragment_us\":%llu,\"tail_us\":%llu,\"seed\":%llu"
              ",\"max_duty_pct\":%d"
              ",\"rounds\":%llu,\"simulations\":%llu,\"cues_total\":%llu,\"sim_bugs\":%llu"
              ",\"retired\":%llu,\"divergences\":%llu,\"tail_cues\":%llu,\"tail_crashes\":%llu,\"best_rank\":%llu,\"best_bug\":%s"
              ",\"best_suspicion\":%llu,\"last_cues\":%llu,\"last_sims\":%llu,\"free_ns\":%llu",
              c->params.pct_depth, c->params.max_schedules,
              (unsigned long long)(c->fragment_ns / 1000), (unsigned long long)(c->tail_ns / 1000),
              (unsigned long long)c->seed,
              c->max_duty_pct, (unsigned long long)st->rounds,
              (unsigned long long)st->simulations, (unsigned long long)st->cues_total,
              (unsigned long long)st->sim_bugs, (unsigned long long)st->retired,
              (unsigned long long)st->divergences, (unsigned long long)st->tail_cues,
              (unsigned long long)st->tail_crashes, (unsigned long long)st->best_rank,
              st->best_rank >= EX_SCORE_BUG ? "true" : "false",
              (unsigned long long)(st->best_rank & (EX_SCORE_BUG - 1)),
              (unsigned long long)st->last_cues, (unsigned long long)st->last_sims,
              (unsigned long long)st->free_ns);
    jb_printf(&b, ",\"attached_ns\":%llu,\"last_bug_round\":%llu",
              (unsigned long long)st->attached_ns, (unsigned long long)st->last_bug_round);
    char pj[1024];
    size_t pused = 0;
    if (round_progress_json(&st->prog, pj, sizeof pj, &pused))
        jb_raw(&b, pj);
    jb_printf(&b, ",\"workers\":%d,\"worker_sims\":%llu,\"worker_checked\":%llu"
              ",\"worker_mismatches\":%llu,\"worker_builds\":%llu,\"worker_syncs\":%llu"
              ",\"worker_pages\":%llu,\"worker_sync_ns\":{\"last\":%llu,\"sum\":%llu}",
              st->workers, (unsigned long long)st->worker_sims,
              (unsigned long long)st->worker_checked, (unsigned long long)st->worker_mismatches,
              (unsigned long long)st->worker_builds, (unsigned long long)st->worker_syncs,
              (unsigned long long)st->worker_pages, (unsigned long long)st->ns_worker_sync,
              (unsigned long long)st->sum_worker_sync);
    /* Per simulation (traced and sparse): cue points, and for sparse ones the change
     * points that fired (their decisions besides the syscalls); simulations per second of
     * the simulate phase. */
    jb_raw(&b, ",\"sim_kind\":");
    jb_str(&b, round_sim_kind_name(c->sim_kind));
    jb_printf(&b, ",\"sparse_simulations\":%llu,\"cues_per_simulation\":%.1f"
              ",\"decisions_per_sparse_simulation\":%.2f,\"simulations_per_second\":%.1f",
              (unsigned long long)st->sparse_sims,
              st->simulations ? (double)st->sim_cues / (double)st->simulations : 0.0,
              st->sparse_sims ? (double)st->sparse_fired / (double)st->sparse_sims : 0.0,
              st->sum_simulate ? (double)st->simulations * 1e9 / (double)st->sum_simulate : 0.0);
    jb_raw(&b, ",\"last_event\":");
    jb_str(&b, st->last_event);
    const uint64_t last[9] = {st->ns_stop,     st->ns_snapshot, st->ns_record,
                              st->ns_explore,  st->ns_simulate, st->ns_score,
                              st->ns_retire,   st->ns_resume,   st->ns_round};
    const uint64_t sum[9] = {st->sum_stop,     st->sum_snapshot, st->sum_record,
                             st->sum_explore,  st->sum_simulate, st->sum_score,
                             st->sum_retire,   st->sum_resume,   st->sum_round};
    phases(&b, "last_ns", last);
    phases(&b, "sum_ns", sum);
    jb_raw(&b, "}");
    return jb_ok(&b);
}
