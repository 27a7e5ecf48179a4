/* The round configuration as users write it: the shared validation behind
 * `jinx-vmm run --attach`, `jinxctl attach` and the control socket's attach request,
 * so all three accept exactly the same values and word their errors the same way.
 * Pure code (no VM): round_config_default, round_parse_rate and round_status_json of
 * round.h are implemented here too. */
#ifndef JINX_ROUND_CONFIG_H
#define JINX_ROUND_CONFIG_H
#include "rounds/round.h"
#include <stddef.h>

#define ROUND_MAX_RATE 1000.0                /* rounds per second */
#define ROUND_MIN_FRAGMENT_NS 10000ULL       /* 10 us: ~10 cue points at 1 us each */
#define ROUND_MAX_FRAGMENT_NS 100000000ULL   /* 100 ms: a round must stay short */
#define ROUND_DEFAULT_RATE 5.0
#define ROUND_MAX_TAIL_NS 100000000ULL       /* 100 ms */
#define ROUND_DEFAULT_TAIL_NS 4000000ULL     /* 4 ms: see docs/rounds.md, "The tail" */
#define ROUND_MIN_FRAGMENT_WALL_NS 1000000ULL    /* 1 ms */
#define ROUND_MAX_FRAGMENT_WALL_NS 2000000000ULL /* 2 s (a stuck fragment is cut at 5x) */
#define ROUND_MAX_WORKERS 8                   /* = WORKER_MAX (worker.h) */

/* 0 if every field is in range, else -1 with a message naming the field and range. */
int round_config_check(const struct round_config *c, char *err, size_t errlen);

/* Sets one field from command-line text: key is "rate" ("5/s"), "strategy" (a name
 * from ex_strategy_from_name), "depth", "sims", "fragment" ("2ms", "500us"),
 * "fragment-wall" (each fragment's wall-time budget, "50ms"), "tail" ("4ms", "0"), "max-duty" ("5", "5%"), "workers" (0..ROUND_MAX_WORKERS),
 * "sim-kind" (auto, traced, sparse) or "seed".
 * Checks the range. Returns 0, or -1 with a message. */
int round_config_set(struct round_config *c, const char *key, const char *val, char *err,
                     size_t errlen);

/* "auto", "traced", "sparse" and back; -1 for another name. */
const char *round_sim_kind_name(enum round_sim_kind k);
int round_sim_kind_from_name(const char *s, enum round_sim_kind *out);

/* One line for humans: "5/s, strategy pct (depth 3), 8 simulations/round, fragment 1 ms,
 * seed 42". */
void round_config_describe(const struct round_config *c, char *buf, size_t len);

#endif
