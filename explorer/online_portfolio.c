/* The online portfolios' slots: which strategy runs schedule `index`, with which
 * ordinal (online.h, "portfolio" and "lanes"). The strategies only receive the
 * ordinal; none of them knows a slot.
 *
 * The layout is part of every seed's meaning (a dump's "seed=S index=I", the
 * corpus results): tests/unit/test_explorer_portfolio_golden.c pins it.
 *
 * Every strategy here runs traced (each strategy's header says what it needs);
 * the decisions-only PCT of sparse runs is sparse.h's. The rounds' portfolio, a
 * mix of proposals over a recorded fragment, is portfolio.c's. */
#include "online_impl.h"
#include <stdlib.h>

/* What the slot rules read of the history, as facts with the first index that
 * knew them: condition waits, split updates, double checks and the first DATA
 * variable keep their index once set, so the slots of the indexes already run
 * stay where they were. A lock chain, an untried flip and the lanes' state
 * count as they are now, at every index. */
enum {
    DATA = 1 << 0,       /* a DATA variable (ex_online_sweep_first) */
    COND = 1 << 1,       /* a condition wait (condwait.h; lock waits are none) */
    OLDER = 1 << 2,      /* one whose waker was created before its waiter */
    SPLIT = 1 << 3,      /* a split update of a DATA variable (splitrmw.h) */
    DCHECK = 1 << 4,     /* a double check of a DATA variable (dcheck.h) */
    CHAIN = 1 << 5,      /* a lock chain (online_nest.c) */
    FLIP = 1 << 6,       /* an untried flip (flip.h) */
    FLIP_LANE = 1 << 7,  /* lanes: the flip lane has an untried flip */
    SWEEP_LANE = 1 << 8, /* lanes: the sweep lane is not spent */
    NFACTS = 9
};

enum where {
    W_AT,       /* index `at` */
    W_ELSE_AT,  /* index `at`, where the row above is not eligible at its index */
    W_SWEEP,    /* index 4 and every index % 8 == 6 */
    W_CHAIN,    /* the first index after the lock chain was learnt (not 0) */
    W_FLIP,     /* virtual index 1-3, 5-7, the odd ones up to 15, then v % 8 == 1 */
    W_LANE,     /* the indexes whose lane letter (lanes[] below) is `at` */
    W_EVERY,
};

enum ordinal {
    O_NONE,
    O_VALUE,    /* `value` */
    O_COUNT,    /* the row's own slots before this one */
    O_WAKE,     /* `value`, or 1 - `value` when by the first wake slot a waiter's
                 * waker was older (the older half last comes first) */
    O_CYCLE,    /* the place in the cycle: v minus the flip runs so far; the
                 * ordinal is its count of pct (or nest) places before */
};

#define CYCLE EX_ONLINE_NKINDS /* a row that runs the cycle's strategy */
#define AT(n) W_AT, (n)
#define ELSE_AT(n) W_ELSE_AT, (n)
#define SWEEP_SLOTS W_SWEEP, 0
#define CHAIN_LEARNT W_CHAIN, 0
#define FLIP_SLOTS W_FLIP, 0
#define LANE(c) W_LANE, (c)
#define EVERY W_EVERY, 0
#define NO_ORDINAL O_NONE, 0
#define VALUE(x) O_VALUE, (x)
#define SLOTS_BEFORE O_COUNT, 0
#define WAKE_VARIANT(i) O_WAKE, (i)
#define CYCLE_PLACE O_CYCLE, 0

struct rule {
    uint8_t kind;           /* enum ex_online_kind, or CYCLE */
    uint8_t where;          /* enum where, with at */
    uint64_t at;
    uint32_t need, unless;  /* facts known / not known at that index */
    uint8_t ordinal;        /* enum ordinal, with value */
    uint64_t value;
};

/* "portfolio": an index runs the first row that takes it. The rows down to the
 * flips take fixed indexes; the last two read the VIRTUAL index v, the index
 * minus the fixed slots before it, so a program that learns none of their facts
 * runs the schedules it ran without them. Why each row is where it is: below. */
static const struct rule portfolio[] = {
    /* runs            at index         learnt by then  unless  ordinal */
    { EX_ONLINE_NEST,  CHAIN_LEARNT,    CHAIN,          0,      NO_ORDINAL },
    { EX_ONLINE_NEST,  SWEEP_SLOTS,     DATA | CHAIN,   0,      NO_ORDINAL },
    { EX_ONLINE_SWEEP, SWEEP_SLOTS,     DATA,           0,      SLOTS_BEFORE },
    { EX_ONLINE_WAKE,  AT(2),           COND,           SPLIT,  WAKE_VARIANT(0) },
    { EX_ONLINE_WAKE,  ELSE_AT(5),      COND,           0,      WAKE_VARIANT(0) },
    { EX_ONLINE_WAKE,  AT(3),           COND,           SPLIT,  WAKE_VARIANT(1) },
    { EX_ONLINE_WAKE,  ELSE_AT(7),      COND,           0,      WAKE_VARIANT(1) },
    { EX_ONLINE_SWEEP, AT(9),           COND | DATA,    0,      VALUE(EX_SWEEP_PAIR_OF | 1) },
    { EX_ONLINE_WAKE,  AT(9),           COND,           0,      VALUE(2) },
    { EX_ONLINE_SWEEP, AT(2),           SPLIT,          0,      VALUE(EX_SWEEP_SPLIT | 2) },
    { EX_ONLINE_SWEEP, AT(2),           DCHECK,         COND,   VALUE(EX_SWEEP_SPLIT | 1) },
    /* by the virtual index v */
    { EX_ONLINE_FLIP,  FLIP_SLOTS,      FLIP,           0,      CYCLE_PLACE },
    { CYCLE,           EVERY,           0,              0,      CYCLE_PLACE },
};

/* "lanes": the same, additive: no virtual index, a lane letter per index
 * (C cycle, F flip, S sweep: EX_LANES_PREFIX for the first indexes, then
 * EX_LANES_PERIOD over and over); flip and sweep take their ordinal from their
 * lane's own history (online_lanes.c). */
#define EX_LANES_PREFIX "CSSSFFFS"
#define EX_LANES_PERIOD "FSFC"
static const struct rule lanes[] = {
    { EX_ONLINE_NEST,  CHAIN_LEARNT,    CHAIN,          0,      NO_ORDINAL },
    { EX_ONLINE_NEST,  LANE('S'),       CHAIN,          0,      NO_ORDINAL },
    { EX_ONLINE_SWEEP, LANE('S'),       SWEEP_LANE,     0,      NO_ORDINAL },
    { EX_ONLINE_FLIP,  LANE('F'),       FLIP_LANE,      0,      NO_ORDINAL },
    { CYCLE,           EVERY,           0,              0,      CYCLE_PLACE },
};

/* The cycle, by place mod 8, and with a lock chain known (online.h). */
static const struct {
    uint8_t kind, chained;
} cycle[8] = {
    { EX_ONLINE_PCT, EX_ONLINE_PCT },       { EX_ONLINE_RANDOM, EX_ONLINE_NEST },
    { EX_ONLINE_POS, EX_ONLINE_POS },       { EX_ONLINE_WINDOW, EX_ONLINE_WINDOW },
    { EX_ONLINE_PCT, EX_ONLINE_PCT },       { EX_ONLINE_RANDOM, EX_ONLINE_RANDOM },
    { EX_ONLINE_POS, EX_ONLINE_NEST },      { EX_ONLINE_RF, EX_ONLINE_RF },
};

/* Why the rows are where they are (docs/explore.md has the measurements).
 *
 * The cycle: the racy-step random walk most often, PCT (all racy steps, then
 * data races only) and pos often, the window PCT for the bugs that need a thread
 * held inside a window, rf's mutations rarely. With a lock chain (thread A took
 * Y holding X, another Z holding Y, by the same instruction) a lock-order cycle
 * may be near: its first random and second pos places run nest, and so do the
 * sweep slots and the first schedule after the chain was learnt (at every nested
 * step: ordinal 0, no coin; the sweep's windows are no lock steps).
 *
 * Sweep slots: index 4, after the first three flips, untouched (a schedule
 * inserted before them changes their history: the flips that found atom-pair at
 * 3 and token-ring at 4 then took 13-23 and 11); index 2 found lw-flag,
 * atom-counter and atom-lazy-init at 3 instead of 5. Every 8th from 6: every
 * 16th left bb-if, bb-shared-cond and aba-stack slower, not faster.
 *
 * Wake slots (only once a run showed a CONDITION wait: a program whose runs only
 * contend for locks runs the layout without them): wake's first two variants
 * EARLY, at 2 and 3, when by then a run showed a condition wait and no split
 * update, else LATE, at 5 and 7. A condition-variable program whose bug is a lost
 * update beside the wait (thr4-barrier: a barrier whose arrival count is bumped
 * outside the lock) is found by the early slot's pair and the flip at 3, which
 * earlier wake slots pushed from 4 to 8 schedules; the programs whose bug is the
 * wait itself (bb-if, bb-shared-cond, lw-wrong-waiter) show no split update and
 * are met 3 schedules sooner. Index 9: the second newest variable's pair (the
 * newest's is the sweep's third schedule, index 14): libc's variables race as
 * late as the program's own (musl's need_locks, set at the first pthread_create).
 *
 * Early slot, index 2: the sweep at a variable a run's trace named. A SPLIT
 * UPDATE: the pair at it (h->split_var), the lost update that must also land
 * before the other thread's next update (a reference count freed early). Else a
 * DOUBLE CHECK in a program with no condition wait known: the write window at it
 * (h->dcheck_var: the creator stopped right after it published the variable,
 * before it filled what it points to); a predicate loop around a condition wait
 * shows the same shape (the wait gives the mutex back and retakes it inside
 * libc), and those programs' index 2 is a wake slot. Index 3 found the
 * split-update programs one schedule later; index 1 comes before the run that
 * shows most of them (run 0 records a thread's second access to a page it owns
 * only once the page is pre-shared: rc-uaf, atom-counter, dcl-singleton).
 *
 * Flip slots, while untried flips remain: three in four of the first 8, every
 * other one up to 16, one in 8 after. Index 1's flip is one of run 0's races,
 * libc's own, but its run is the parent of the flips that found pre3-chain's
 * chain (a random walk there instead: seed 1 not found in 60 s, after 7
 * schedules before). A bug one race reversal away is met by the first few
 * flips; bugs that need two or three preemptions, or a start order, need the
 * cycle's random schedules in numbers, which flips must not dilute. The cycle
 * goes on where the last non-flip schedule left it.
 *
 * Lanes: the letters were chosen with scripts/bench/lanes-predict.py over the
 * per-strategy columns; index 0 is the cycle's (pct), run 0, which every lane
 * learns. */

#define NEVER UINT64_MAX

struct facts {
    uint64_t from[NFACTS]; /* the first index that knew each fact (NEVER: none) */
    uint64_t chain_from;   /* h->nest_chain_from */
    uint64_t flipruns;     /* runs that made a flip */
    uint64_t cycle_runs;   /* lanes: the cycle's runs */
};

static int bit(uint32_t fact)
{
    return __builtin_ctz(fact);
}

static void know(struct facts *f, uint32_t fact, bool learnt, uint64_t from)
{
    f->from[bit(fact)] = learnt ? from : NEVER;
}

/* A lane of sweeps is spent once it went EX_LANES_SWEEP_PASSES times through
 * its targets (every DATA variable twice and the n-th windows), or its first run
 * showed no DATA variable: no window to preempt at (dl-abba: three sweeps "not
 * reached" before the flips that led to the deadlock). */
#define EX_LANES_SWEEP_PASSES 2u

static bool sweep_spent(const struct ex_history *lane)
{
    uint64_t first = ex_online_sweep_first(lane);
    if (first == UINT64_MAX)
        return lane->runs >= 1;
    return lane->runs > first &&
           lane->runs - first >= EX_LANES_SWEEP_PASSES * ex_online_sweep_targets(lane);
}

static struct facts learnt(const struct ex_history *h, bool lanes)
{
    struct facts f;
    for (int i = 0; i < NFACTS; i++)
        f.from[i] = NEVER;
    f.chain_from = NEVER;
    f.flipruns = f.cycle_runs = 0;
    if (!h)
        return f;
    know(&f, DATA, true, ex_online_sweep_first(h));
    know(&f, COND, h->cond_waits, h->cond_from);
    know(&f, OLDER, h->cond_older, h->cond_older_from);
    know(&f, SPLIT, h->split_updates, h->split_from);
    know(&f, DCHECK, h->dchecks, h->dcheck_from);
    know(&f, CHAIN, h->nest_chain, 0);
    f.chain_from = h->nest_chain ? h->nest_chain_from : NEVER;
    f.flipruns = h->flips.flipruns;
    f.cycle_runs = h->lane_runs[LANE_CYCLE];
    if (lanes) {
        const struct ex_history *fl = h->lane[LANE_FLIP - 1], *sw = h->lane[LANE_SWEEP - 1];
        know(&f, FLIP_LANE, fl && ex_flips_next(&fl->flips) >= 0, 0);
        know(&f, SWEEP_LANE, sw && !sweep_spent(sw), 0);
    } else {
        know(&f, FLIP, ex_flips_next(&h->flips) >= 0, 0);
    }
    return f;
}

static bool known_at(const struct facts *f, uint32_t facts, uint64_t index)
{
    for (uint32_t rest = facts; rest; rest &= rest - 1)
        if (index < f->from[bit(rest & -rest)])
            return false;
    return true;
}

static bool flip_slot(uint64_t v)
{
    return v < 8 ? v % 4 != 0 : v < 16 ? (v & 1) != 0 : v % 8 == 1;
}

static char lane_letter(uint64_t index)
{
    const uint64_t np = sizeof EX_LANES_PREFIX - 1, nq = sizeof EX_LANES_PERIOD - 1;
    return index < np ? EX_LANES_PREFIX[index] : EX_LANES_PERIOD[(index - np) % nq];
}

/* Whether row r takes index (v: the virtual index, for the rows that read it). */
static bool takes(const struct rule *r, const struct facts *f, uint64_t index, uint64_t v)
{
    bool at;
    switch (r->where) {
    case W_AT:
    case W_ELSE_AT:
        at = index == r->at;
        break;
    case W_SWEEP:
        at = index == 4 || index % 8 == 6;
        break;
    case W_CHAIN:
        at = index == f->chain_from && index > 0;
        break;
    case W_FLIP:
        at = flip_slot(v);
        break;
    case W_LANE:
        at = lane_letter(index) == (char)r->at;
        break;
    default:
        at = true;
        break;
    }
    if (!at || !known_at(f, r->need, index) || (r->unless && known_at(f, r->unless, index)))
        return false;
    return r->where != W_ELSE_AT || !takes(r - 1, f, r[-1].at, v);
}

static bool fixed(const struct rule *r)
{
    return r->where != W_FLIP && r->where != W_EVERY;
}

/* The first wake row's index: its early one if it is eligible there. */
static uint64_t first_wake(const struct rule *rules, size_t n, const struct facts *f)
{
    for (size_t i = 0; i < n; i++)
        if (rules[i].ordinal == O_WAKE)
            return takes(&rules[i], f, rules[i].at, 0) || i + 1 == n ? rules[i].at
                                                                     : rules[i + 1].at;
    return NEVER;
}

/* How many sweep slots lie in [a, b): index 4 and every index % 8 == 6. */
static uint64_t sweep_slots_in(uint64_t a, uint64_t b)
{
    uint64_t below_b = (b > 4) + (b > 6 ? (b + 1) / 8 : 0);
    uint64_t below_a = (a > 4) + (a > 6 ? (a + 1) / 8 : 0);
    return below_b - below_a;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The fixed rows' slots before index: each row's into before[], all returned
 * (index minus them is the virtual index). Only the sweep slots repeat, and which
 * row takes them changes only where a fact was learnt: so [0, index) is walked
 * in stretches cut there and around every single-index row, and a long stretch
 * is counted at once (a begin costs the same at index 10^6 as at 10). */
static uint64_t fixed_before(const struct rule *rules, size_t n, const struct facts *f,
                             uint64_t index, uint64_t *before)
{
    uint64_t cut[NFACTS + 2 * (sizeof portfolio / sizeof portfolio[0]) + 2];
    size_t nc = 0;
    uint64_t taken = 0;
    cut[nc++] = 0;
    cut[nc++] = index;
    for (int i = 0; i < NFACTS; i++)
        if (f->from[i] < index)
            cut[nc++] = f->from[i];
    for (size_t r = 0; r < n && fixed(&rules[r]); r++) {
        uint64_t p = rules[r].where == W_CHAIN ? f->chain_from
                     : rules[r].where == W_SWEEP ? NEVER
                                                 : rules[r].at;
        if (p < index)
            cut[nc++] = p, cut[nc++] = p + 1;
    }
    qsort(cut, nc, sizeof cut[0], cmp_u64);
    for (size_t c = 0; c + 1 < nc; c++) {
        uint64_t a = cut[c], b = cut[c + 1];
        if (a == b)
            continue;
        /* One index, or a stretch where only the sweep slots can be taken, each by
         * the same row as the first of them. */
        uint64_t at = b - a == 1 ? a : a <= 4 ? 4 : a + (14 - a % 8) % 8;
        uint64_t count = b - a == 1 ? 1 : sweep_slots_in(a, b);
        for (size_t r = 0; count && at < b && r < n && fixed(&rules[r]); r++)
            if (takes(&rules[r], f, at, 0)) {
                before[r] += count;
                taken += count;
                break;
            }
    }
    return taken;
}

static struct ex_online_slot interpret(const struct rule *rules, size_t n, const struct facts *f,
                                       uint64_t index, bool lanes)
{
    uint64_t before[sizeof portfolio / sizeof portfolio[0]] = { 0 };
    uint64_t taken = lanes ? 0 : fixed_before(rules, n, f, index, before);
    uint64_t v = index - taken;
    struct ex_online_slot s = { .kind = CYCLE };
    size_t r = 0;
    while (r < n && !takes(&rules[r], f, index, v))
        r++;
    const struct rule *row = &rules[r < n ? r : n - 1];
    s.kind = row->kind;
    switch (row->ordinal) {
    case O_VALUE:
        s.ordinal = row->value;
        break;
    case O_COUNT:
        s.ordinal = before[r];
        break;
    case O_WAKE:
        s.ordinal = known_at(f, OLDER, first_wake(rules, n, f)) ? 1 - row->value : row->value;
        break;
    case O_CYCLE:
        s.cycle = lanes ? f->cycle_runs : v >= f->flipruns ? v - f->flipruns : v;
        s.ordinal = s.cycle / 4; /* the cycle's pct (or nest) schedules before it */
        break;
    default:
        break;
    }
    s.lane = s.kind == EX_ONLINE_FLIP    ? LANE_FLIP
             : s.kind == EX_ONLINE_SWEEP ? LANE_SWEEP
             : s.kind == EX_ONLINE_NEST  ? LANE_NEST
                                         : LANE_CYCLE;
    if (s.kind == CYCLE) {
        bool chained = f->from[bit(CHAIN)] != NEVER;
        s.kind = chained ? cycle[s.cycle % 8].chained : cycle[s.cycle % 8].kind;
        s.lane = LANE_CYCLE;
    }
    return s;
}

struct ex_online_slot ex_online_portfolio_slot(const struct ex_history *h, uint64_t index)
{
    struct facts f = learnt(h, false);
    return interpret(portfolio, sizeof portfolio / sizeof portfolio[0], &f, index, false);
}

struct ex_online_slot ex_online_lanes_slot(const struct ex_history *h, uint64_t index)
{
    struct facts f = learnt(h, true);
    return interpret(lanes, sizeof lanes / sizeof lanes[0], &f, index, true);
}

enum ex_online_kind ex_online_resolve(enum ex_online_kind k, uint64_t index)
{
    return k == EX_ONLINE_PORTFOLIO ? (enum ex_online_kind)cycle[index % 8].kind : k;
}
