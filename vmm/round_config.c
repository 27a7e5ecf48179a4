/* Round configuration and status formatting: pure functions, shared by jinx-vmm (the
 * round driver, the control socket) and jinxctl. */
#include "round.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void round_config_default(struct round_config *c)
{
    memset(c, 0, sizeof *c);
    c->rate = 5;
    c->strategy = EX_STRAT_PORTFOLIO;
    ex_params_default(&c->params);
    c->fragment_ns = 1000000;
    c->fragment_wall_ns = 50000000;
    c->first_ns = 1000000;
    c->seed = 1;
    c->max_duty_pct = 50;
    c->record_quantum = 16;
}

int round_parse_rate(const char *s, double *rate)
{
    if (!s || !*s)
        return -1;
    char *end;
    double r = strtod(s, &end);
    if (end == s || !(r > 0) || r > 1000 || isnan(r))
        return -1;
    if (*end && strcmp(end, "/s") != 0)
        return -1;
    *rate = r;
    return 0;
}

int round_status_json(const struct round_stats *st, char *buf, size_t len)
{
    const struct round_config *c = &st->cfg;
    double n = st->rounds ? (double)st->rounds : 1.0;
    int w = snprintf(buf, len,
        "{\"attached\":%s,\"rate\":%.3f,\"strategy\":\"%s\",\"sims\":%u,\"fragment_us\":%llu,"
        "\"seed\":%llu,\"depth\":%u,\"rounds\":%llu,\"simulations\":%llu,\"cue_points\":%llu,"
        "\"cue_points_per_round\":%.1f,\"sims_per_round\":%.2f,\"sim_bugs\":%llu,"
        "\"retired\":%llu,\"divergences\":%llu,\"best_rank\":%llu,\"last_bug_round\":%llu,"
        "\"attached_s\":%.3f,\"free_s\":%.3f,"
        "\"last_round_ms\":{\"stop\":%.3f,\"snapshot\":%.3f,\"record\":%.3f,\"explore\":%.3f,"
        "\"simulate\":%.3f,\"score\":%.3f,\"retire\":%.3f,\"resume\":%.3f,\"total\":%.3f},"
        "\"mean_round_ms\":{\"stop\":%.3f,\"snapshot\":%.3f,\"record\":%.3f,\"explore\":%.3f,"
        "\"simulate\":%.3f,\"score\":%.3f,\"retire\":%.3f,\"resume\":%.3f,\"total\":%.3f}}",
        st->attached ? "true" : "false", c->rate, ex_strategy_name(c->strategy),
        c->params.max_schedules, (unsigned long long)(c->fragment_ns / 1000),
        (unsigned long long)c->seed, c->params.pct_depth, (unsigned long long)st->rounds,
        (unsigned long long)st->simulations, (unsigned long long)st->cues_total,
        (double)st->cues_total / n, (double)st->simulations / n,
        (unsigned long long)st->sim_bugs, (unsigned long long)st->retired,
        (unsigned long long)st->divergences, (unsigned long long)st->best_rank,
        (unsigned long long)st->last_bug_round, st->attached_ns / 1e9, st->free_ns / 1e9,
        st->ns_stop / 1e6, st->ns_snapshot / 1e6, st->ns_record / 1e6, st->ns_explore / 1e6,
        st->ns_simulate / 1e6, st->ns_score / 1e6, st->ns_retire / 1e6, st->ns_resume / 1e6,
        st->ns_round / 1e6, st->sum_stop / n / 1e6, st->sum_snapshot / n / 1e6,
        st->sum_record / n / 1e6, st->sum_explore / n / 1e6, st->sum_simulate / n / 1e6,
        st->sum_score / n / 1e6, st->sum_retire / n / 1e6, st->sum_resume / n / 1e6,
        st->sum_round / n / 1e6);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}
