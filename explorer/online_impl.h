/* Internal to the online strategies (online.c dispatches to these). */
#ifndef EXPLORER_ONLINE_IMPL_H
#define EXPLORER_ONLINE_IMPL_H
#include "online.h"

/* Pending events by tid (NULL = unknown), built once per cue point. */
typedef const struct ex_pending *ex_pending_table[EX_MAX_TID + 1];

void ex_online_pct_begin(struct ex_online *o, const struct ex_history *h);
/* fresh: the enabled threads seen for the first time at this cue point. */
uint32_t ex_online_pct_pick(struct ex_online *o, const struct ex_tidset *enabled,
                            const struct ex_tidset *fresh);

void ex_online_pos_fresh(struct ex_online *o, const struct ex_tidset *fresh);
uint32_t ex_online_pos_pick(struct ex_online *o, const struct ex_tidset *enabled);
/* After thread t was chosen to perform its pending event. */
void ex_online_pos_after(struct ex_online *o, const ex_pending_table pend, uint32_t t);

uint32_t ex_online_random_pick(struct ex_online *o, const struct ex_tidset *enabled);

/* Returns 0 or -1 (no memory: then it is pos). */
int ex_online_rf_begin(struct ex_online *o, const struct ex_history *h);
uint32_t ex_online_rf_pick(struct ex_online *o, const struct ex_tidset *enabled,
                           const struct ex_tidset *fresh, const ex_pending_table pend);

#endif
