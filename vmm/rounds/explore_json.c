/* Whole-run exploration's statistics as JSON (explore.h). */
#include "rounds/explore.h"
#include "lib/json.h"
#include <stdio.h>

int explore_stats_json(const struct explore_stats *st, char *buf, size_t len)
{
    double secs = st->ns_explore / 1e9;
    int n = snprintf(buf, len,
                     "{\"snapshot\":%s,\"snapshot_cue\":%llu,\"schedules\":%llu,\"cut\":%llu,"
                     "\"schedules_to_bug\":%llu,\"schedules_per_second\":%.1f,"
                     "\"cues_mean\":%llu,\"cues_max\":%llu,\"seconds\":%.3f,"
                     "\"reproduced\":%s,\"gave_up\":%s,\"limited\":%s,"
                     "\"sparse_schedules\":%llu,\"sparse_cut\":%llu,\"sparse_cues_mean\":%.1f,"
                     "\"sparse_fired_mean\":%.2f,\"sparse_hits_mean\":%.1f,"
                     "\"sampled_runs\":%llu,\"sampled_accesses\":%llu,"
                     "\"stress_runs\":%llu,\"stress_cut\":%llu,\"stress_seconds\":%.3f,"
                     "\"timed_runs\":%llu,\"timed_cut\":%llu,\"timed_seconds\":%.3f,"
                     "\"timed_decisions_mean\":%.2f,"
                     "\"timers_early\":%llu,\"timers_early_bug\":%llu,\"strategy\":",
                     st->snapshot_taken ? "true" : "false",
                     (unsigned long long)st->snapshot_cue, (unsigned long long)st->schedules,
                     (unsigned long long)st->cut, (unsigned long long)st->bug_at,
                     secs > 0 ? st->schedules / secs : 0.0,
                     (unsigned long long)(st->schedules ? st->cues_total / st->schedules : 0),
                     (unsigned long long)st->cues_max, secs, st->reproduced ? "true" : "false",
                     st->gave_up ? "true" : "false", st->limited ? "true" : "false",
                     (unsigned long long)st->sparse, (unsigned long long)st->sparse_cut,
                     st->sparse ? (double)st->sparse_cues / st->sparse : 0.0,
                     st->sparse ? (double)st->sparse_fired / st->sparse : 0.0,
                     st->sparse ? (double)st->sparse_hits / st->sparse : 0.0,
                     (unsigned long long)st->sampled, (unsigned long long)st->sampled_accesses,
                     (unsigned long long)st->stress, (unsigned long long)st->stress_cut,
                     st->stress_ns / 1e9, (unsigned long long)st->timed,
                     (unsigned long long)st->timed_cut, st->timed_ns / 1e9,
                     st->timed ? (double)st->timed_decisions / st->timed : 0.0,
                     (unsigned long long)st->timers_early,
                     (unsigned long long)st->timers_bug);
    if (n < 0 || (size_t)n >= len)
        return -1;
    struct jbuf j;
    jb_init(&j, buf + n, len - (size_t)n);
    jb_str(&j, st->strategy);
    jb_raw(&j, ",\"note\":");
    jb_str(&j, st->note);
    jb_raw(&j, ",\"bug_outcome\":");
    jb_str(&j, st->bug_at ? ex_outcome_name((enum ex_outcome)st->bug_outcome) : "");
    jb_raw(&j, ",\"replay\":");
    jb_str(&j, st->replay);
    jb_raw(&j, "}");
    return jb_ok(&j) == 0 ? 0 : -1;
}
