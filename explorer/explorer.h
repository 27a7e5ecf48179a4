/* Jinx explorer: the one header the VMM includes.
 *
 * A pure C11 library (no KVM): the trace model, happens-before, race and
 * atomicity-violation detection, schedules and their formats, the strategies
 * that propose schedules, and the scoring that picks the one to retire.
 * See docs/explorer.md. A round, from the VMM's side:
 *
 *   struct ex_analysis a;  ex_analyze(&recorded, &a, why, sizeof why);
 *   struct ex_rng rng;     ex_rng_seed(&rng, seed ^ round);
 *   struct ex_schedule_set ss;  ex_schedule_set_init(&ss);
 *   ex_generate(EX_STRAT_PORTFOLIO, &a, &params, &rng, &ss);
 *   for each ss.v[i]: restore snapshot, run it (ex_cursor_next at each cue
 *       point), record its trace sim[i] and outcome out[i];
 *   struct ex_baseline b;  ex_baseline_build(&b, &a, NULL);
 *   ex_score_simulation(&b, &sim[i], out[i], &coverage, &score[i]);
 *   best = ex_select_best(score, K, &rng);   -> replay ss.v[best] live
 *   ex_coverage_add_trace(&coverage, &recorded) and each sim[i];
 *   free everything (ex_*_free). */
#ifndef EXPLORER_H
#define EXPLORER_H
#include "analysis.h"
#include "avio.h"
#include "bounded.h"
#include "coverage.h"
#include "cursor.h"
#include "hb.h"
#include "history.h"
#include "jinx.h"
#include "model.h"
#include "online.h"
#include "pct.h"
#include "race.h"
#include "racefuzz.h"
#include "rng.h"
#include "schedule.h"
#include "score.h"
#include "sparse.h"
#include "spin.h"
#include "yielders.h"
#include "steer.h"
#include "strategy.h"
#include "syncdep.h"
#include "timers.h"
#include "trace.h"
#include "u64map.h"
#endif
