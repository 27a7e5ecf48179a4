/* How a bug run's live replay compared with the run (rounds/explore.c): the same run, a
 * replay stopped from outside before its end (the --timeout, an interrupt: no difference
 * up to there), or a real difference (a bug in jinx: the same choices must give the same
 * run). Pure: traces and flags in, a verdict out; unit-tested. */
#ifndef JINX_EXPLORE_REPLAY_H
#define JINX_EXPLORE_REPLAY_H
#include "explorer/explorer.h"
#include <stdbool.h>

enum explore_replay {
    EXPLORE_REPLAY_SAME,    /* the live program ended as the run did, on the same trace */
    EXPLORE_REPLAY_STOPPED, /* stopped from outside (or never ended) on a prefix of the run */
    EXPLORE_REPLAY_DIFFERS, /* a different trace or outcome */
};

struct explore_replay_result {
    enum explore_replay verdict;
    long diff;      /* the first cue point where the traces differ (-1: none), as
                       ex_trace_first_difference; for STOPPED the live trace's length */
    size_t live_n;  /* cue points of the live replay ... */
    size_t run_n;   /* ... and of the run */
};

/* live: the replay's trace; run: the run's. ended: the live program came to an end (the
 * VM is stopping); stopped: what ended it came from outside the program (a timeout, an
 * interrupt); same_outcome: the live outcome is the run's (meaningful when ended and not
 * stopped). The live trace may lack the run's last cue point (a deadlock found at a futex
 * wait stops the VM before that wait is recorded). */
struct explore_replay_result explore_replay_judge(const struct ex_trace *live,
                                                  const struct ex_trace *run, bool ended,
                                                  bool stopped, bool same_outcome);

#endif
