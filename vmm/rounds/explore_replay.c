/* A bug run's live replay against the run (explore_replay.h). */
#include "rounds/explore_replay.h"

struct explore_replay_result explore_replay_judge(const struct ex_trace *live,
                                                  const struct ex_trace *run, bool ended,
                                                  bool stopped, bool same_outcome)
{
    struct explore_replay_result r = {.verdict = EXPLORE_REPLAY_DIFFERS,
                                      .live_n = live->n, .run_n = run->n};
    r.diff = ex_trace_first_difference(live, run);
    size_t common = live->n < run->n ? live->n : run->n;
    bool prefix = r.diff < 0 || (size_t)r.diff >= common; /* one is a prefix of the other */
    if (!prefix)
        return r;
    if (ended && !stopped && live->n + 1 >= run->n && same_outcome)
        r.verdict = EXPLORE_REPLAY_SAME;
    else if ((stopped || !ended) && live->n < run->n)
        r.verdict = EXPLORE_REPLAY_STOPPED; /* it had not got as far as the run's end */
    return r;
}
