/* Whole-run strategies: choosing the next thread online, at every cue point.
 *
 * `jinx test` snapshots the program at its first clone and runs many whole
 * schedules from that snapshot to the program's end. At every cue point (each
 * live thread is stopped before its next event: a shared-memory access or a
 * sync operation) the VMM describes the situation in a struct ex_view and asks
 * ex_online_next() which enabled thread performs the next event:
 *
 *   struct ex_history h;  ex_history_init(&h);         once per snapshot
 *   struct ex_online o;   ex_online_init(&o);
 *   for index = 0, 1, ...:
 *       restore the snapshot;
 *       ex_online_begin(&o, kind, &params, &h, seed, index);
 *       at each cue point: t = ex_online_next(&o, &view); run t to its next cue point;
 *       ex_online_schedule(&o, &sched);     -> the dump (replays with cursor.h)
 *       ex_history_add_run(&h, choices, n, &trace, outcome, NULL);
 *   ex_online_free(&o);  ex_history_free(&h);
 *
 * Reproducibility: everything random in schedule number `index` derives from
 * (seed, index) and the history passed to ex_online_begin, so the same
 * (seed, index) with the same history and the same views gives the same
 * choices. The choices themselves, as an ordinary schedule, replay the run
 * exactly with ex_cursor_next (no history needed).
 *
 * RACY STEPS. A choice is racy when at least two threads are enabled and the
 * thread about to run has a known pending access that either touches a
 * conflict variable of the history (history.h: any access to a DATA variable,
 * a write or RMW of a SYNC one; a variable is a start address) or races
 * (ex_pending_races) with another enabled thread's pending event, unless it is
 * a spin's re-read (the variable's last access was the thread's read, by the
 * same instruction when both rips are known, nobody wrote it since and the
 * thread has only read since); a thread's step right after its racy step at a DATA
 * variable is racy too (the window that race opens: publish, then fill;
 * check, then use), whatever it accesses. Only at a racy step can
 * running another thread order two conflicting accesses differently, so PCT,
 * the random walk and rf change their choices there only.
 *
 * The strategies (names for ex_online_from_name):
 *   "pct"    PCT (Burckhardt et al., ASPLOS 2010) over racy steps. Threads get
 *            distinct random priorities; a thread seen for the first time is
 *            inserted at a uniformly random rank among the threads not yet
 *            lowered. d-1 distinct change points are drawn uniformly from
 *            [1, k], k = ex_history_racy_estimate(h, params.default_steps).
 *            The highest-priority enabled thread always runs; at the c-th
 *            racy step (1-based) where c is a change point, the thread about
 *            to run first drops below every priority given so far (so below
 *            all initial ones; later drops go lower still) and the choice is
 *            made again: a preemption exactly there. Odd schedules (odd
 *            ordinal: the index alone, the place in the cycle / 4 in a
 *            portfolio) count racy steps at
 *            DATA variables only (no pending-race or SYNC ones), with
 *            k = ex_history_data_racy_estimate: most bugs are data races, and
 *            libc's internal locks would otherwise take most of k.
 *   "window" PCT whose change points fall at WINDOW steps only: a thread's
 *            step right after its racy step at a DATA variable (the second
 *            half of an atomicity violation: the store that ends a transient
 *            state, the store of a load-then-store, the fill after a publish),
 *            with at least two threads enabled. d-1 distinct change points
 *            uniform over [1, k], k = ex_history_window_estimate; racy steps
 *            count DATA variables only. At the c-th window step, c a change
 *            point, the thread about to close its window drops below every
 *            priority: it stays preempted inside the window until every other
 *            thread blocks or ends, which is what a transient state relayed to
 *            a thread created later needs.
 *   "pos"    partial order sampling (Yuan et al., CAV 2018). Every thread's next
 *            event has a random priority; the highest-priority enabled one runs.
 *            After thread t's event e runs, t's next event gets a fresh
 *            priority, and so does the pending event of every other thread
 *            that races with e (ex_pending_races).
 *   "random" a racy-step random walk: the thread chosen last goes on while its
 *            next step is not racy; at a racy step (or when it cannot go on) a
 *            uniformly random enabled thread, never a spinning one (its next
 *            event re-reads what it read last) while another can go. Half the
 *            schedules (a coin drawn from (seed, index)) count racy steps at
 *            DATA variables only, as PCT's odd ones.
 *   "rf"     reads-from feedback (greybox fuzzing). With an empty corpus in the
 *            history it is pos. Otherwise it picks a corpus entry (weighted by
 *            the new pairs it found), follows that parent's choices up to a
 *            step f, chooses at step f a uniformly random enabled thread other
 *            than the parent's (if the parent's is the only one enabled there,
 *            the flip moves to the next step that has an alternative), then
 *            continues, by a coin drawn at begin, either as pos ("replace": a
 *            new suffix) or by following the parent's choices from step f on,
 *            skipping those whose thread is not enabled, and as pos once they
 *            run out ("insert": one step of another thread pushed into the
 *            parent, which shifts one reads-from by one write and keeps the
 *            rest). f is the parent's r-th racy step, r uniform in [1, the
 *            parent's racy accesses] (its last step if the run has fewer; a
 *            uniformly random step when the parent had none). If a parent's
 *            choice is not enabled before the flip (the run went elsewhere),
 *            it continues as pos from there (counted in rf.diverged).
 *   "flip"   race reversal (flip.h). Every run records each step's performed
 *            event; after it, ex_history_learn_flips notes its races (the
 *            accesses to a conflict variable passing from thread T1's block to
 *            T2, one of them a write) as flips at the block's first and last
 *            access. A flip schedule takes the history's next untried flip
 *            (ex_flips_next), follows its parent run's choices up to T1's access
 *            e1, then holds T1: the others go in the parent's order (pos once
 *            it runs out) until one of them is chosen with a pending access that
 *            races with e1 (counted in flip.reversed), or until nobody but T1
 *            can go (or EX_FLIP_HOLD steps); T1 runs right after, then pos.
 *            Following is FAITHFUL for a flip learnt since run 1: the flip run
 *            meets cue points its parent did not have (pages pre-shared since),
 *            and a thread whose pending event is not the one it made at its
 *            next parent step (same kind, variable and code, or both no memory
 *            access) runs on through them, right after its last followed step
 *            (serial execution: that is what the parent did within one step),
 *            at most EX_FLIP_EXTRA in a row and never a spin's re-read; T1 is
 *            held exactly at e1 (flip.extras counts such steps). Run 0's flips
 *            follow the parent's thread ids by index, as they come (its run had
 *            no pre-shared pages; the same race met again later is learnt once
 *            more, faithfully: flip.h). After a flip run that reversed a race
 *            at a DATA variable, the variables its two threads reached with code
 *            no run executed are flip candidates too (flip.h), newest first:
 *            a relay of two or three preemptions is a chain of flips.
 *            With no untried flip (or its parent's choice not enabled before
 *            e1: flip.diverged) it is pos.
 *   "nest"   lock-order deadlocks (online_nest.c). PCT's random priorities,
 *            no change points: instead a thread about to make a NESTED LOCK
 *            STEP (an RMW of a SYNC variable other than those it holds, while
 *            it holds one; it holds a SYNC word from its RMW of it until its
 *            next RMW or store of it) is lowered below every priority, with at
 *            least two threads enabled: at every such step on even schedules,
 *            with probability 1/2 on odd ones (the ordinal, as PCT's; 0 in a
 *            portfolio's nest slots outside the cycle).
 *            The lowered thread keeps its first lock while the others take
 *            theirs: a cycle of n locks needs n-1 such preemptions.
 *   "sweep"  the window sweep (online_sweep.c): PCT's random priorities and one
 *            preemption, at a window chosen by the schedule's ordinal j (its
 *            count among the sweep's schedules since the first whose history
 *            knew a DATA variable: ex_online_sweep_first). The targets, in
 *            order: for each of the history's DATA variables, newest first (the
 *            run that first showed it racing, flip.h's born; then by address;
 *            at most EX_SWEEP_VARS), the first window opened by a read of it,
 *            then the first opened by a write or RMW of it; then the n-th
 *            window of the run, n = 1..K (K = ex_history_window_estimate, at
 *            most EX_SWEEP_MAX_K); then over again. A DATA variable in the same
 *            8-byte word as a SYNC or atomic one (a lock's or condition
 *            variable's field) comes after the others. The thread about to close
 *            the target window drops below every priority: it stays inside its
 *            window until every other thread blocked or ended. Until a read
 *            target fired, a thread about to write or RMW its variable drops
 *            below every priority too (with another thread enabled): the read
 *            comes before the write it races with. No target met: no
 *            preemption (the run is PCT with d = 1). Each variable has a third
 *            target after its read and write ones, the PAIR (two
 *            preemptions): its read target, then, once that fired, the first
 *            window opened by a write or RMW of the same variable by another
 *            thread (a lost increment that must also land before the other
 *            thread's decrement: a reference count freed early).
 *   "wake"   start orders and wakes (online_wake.c), for condition-variable
 *            bugs (a waiter that must wait before its waker runs, then at a
 *            wake either the woken thread is overtaken or the waker is
 *            preempted). No change points and nothing random but the last
 *            variant: the CREATOR (the lowest tid at the first cue point)
 *            ranks highest, so a test that creates its threads and then joins
 *            them creates them all before any runs; its children rank in
 *            creation order, except that when the creator first is not enabled
 *            the first d of its n children drop below every rank (they start
 *            last). A thread WOKEN at a cue point (seen before, not enabled at
 *            the last cue point, enabled now, with another enabled) drops below
 *            every rank (the woken rule), or instead the WAKER does (the thread
 *            chosen at the last cue point, if still enabled: the waker rule).
 *            Schedule j (its index; its ordinal among the wake slots in the
 *            portfolio) takes variant j mod 9: (d, rule) = (0, waker),
 *            (ceil(n/2), woken), (0, woken), (ceil(n/2), waker), (1, woken),
 *            (1, waker), (n-1, woken), (n-1, waker), then children at random
 *            ranks below the creator with a coin for the rule. Every strategy
 *            notes the woken threads (o->wake.woken) and counts the cue points
 *            where a thread other than the creator was woken; after a run that
 *            had one, h->woke is set (ex_history_learn_flips, with the lock
 *            chains) and h->woke_from is the next index (informational: mutex
 *            contention sets it too, so it gates nothing). CONDITION WAITS
 *            (condwait.h): ex_history_add_run sets h->cond_waits once a run's
 *            trace shows a blocking futex wait that is no lock wait and no
 *            join (the waiter waits on the value it stored itself, or reloads
 *            the word after the wait and grabs it by an RMW at once), and
 *            h->cond_from = the next index.
 *   "portfolio" one table of slot rules (online_portfolio.c): each row names
 *            the strategy, the indexes it takes, what the history must have
 *            learnt by then, and the ordinal it passes; an index runs the
 *            first row that takes it. SWEEP SLOTS: once the history knows a DATA variable
 *            (index >= ex_online_sweep_first), index 4 and every index % 8 == 6
 *            are sweeps; once a run showed a LOCK CHAIN (thread A took lock Y
 *            while holding X, another thread took Z while holding Y, both by
 *            the same instruction: the start of a lock-order cycle of one kind
 *            of lock), those slots and the first schedule after the chain was
 *            learnt (h->nest_chain_from) are nest instead (at every nested
 *            step). Every other index runs what the portfolio gives its
 *            VIRTUAL index v = index minus the fixed slots (sweep, nest, wake
 *            and early slots) before it: while
 *            the history holds an untried flip, v = 1-3 and 5-7, the odd ones
 *            from 8 to 15 and v % 8 == 1 after are flips. The others use, by
 *            their place in the cycle (v minus the flip schedules so far,
 *            mod 8): pct, random, pos, window, pct, random, pos, rf (the pct
 *            ones alternate all racy steps and data races only); with a lock
 *            chain, the first random slot and the second pos slot are nest.
 *            So a program without DATA variables or chains runs exactly the
 *            schedules it ran before the sweep. WAKE SLOTS:
 *            once a run showed a condition wait (h->cond_waits, index >=
 *            h->cond_from; never for lock waits alone), indexes 2 and 3 run
 *            "wake" with ordinals 0 and 1 (creation order with the waker rule;
 *            the older half last with the woken rule; 1 and 0 when by the
 *            first of them a run showed a condition wait whose waker was
 *            created before the waiter, h->cond_older: a producer before its
 *            consumers), or indexes 5 and 7 where a slot's early index came
 *            before the condition wait was known or after a SPLIT UPDATE was
 *            (see EARLY SLOT: a lost update beside the wait, which the early
 *            slot and the first flips find), and index 9 the sweep's pair
 *            of the second newest DATA variable (the newest's comes in the
 *            sweep's own cycle; "wake" ordinal 2 without DATA variables),
 *            unless that index is a sweep slot; they too are left out of the
 *            virtual index. Indexes 0 and 1 never change, and a program whose
 *            runs show no condition wait runs the layout without wake slots.
 *            EARLY SLOT: index 2, unless it is a sweep or
 *            wake slot, runs the sweep at a variable a run's trace named (it
 *            too is left out of the virtual index): once a trace showed a
 *            SPLIT UPDATE (splitrmw.h: two threads each read a DATA variable
 *            with a plain load, holding no lock, and make their very next
 *            access to a shared variable a plain store to it, a counter or
 *            reference count updated in two steps;
 *            h->split_updates, index >= h->split_from), the sweep's pair at it
 *            (h->split_var: its read window, then another thread's write
 *            window of it); else, once a trace showed a DOUBLE CHECK
 *            (dcheck.h: a thread reads a DATA variable unlocked, re-reads it
 *            under a lock by another instruction, then stores to it;
 *            h->dchecks, index >= h->dcheck_from) and no condition wait is
 *            known (a predicate loop around a condition wait looks the
 *            same), the sweep's write window at it (h->dcheck_var). Indexes
 *            0-1 never change, and a program whose runs show neither runs
 *            the layout without it.
 *   "lanes"  the portfolio with ADDITIVE slots (online_lanes.c; its rules are
 *            the second table of online_portfolio.c). Index i runs
 *            the lane its slot letter names (EX_LANES_PREFIX for the first
 *            indexes, then EX_LANES_PERIOD over and over; index 0 is the
 *            cycle's): F the FLIP LANE, S the SWEEP LANE, C the cycle. The flip
 *            lane has a history of its own (h->lane[0]: run 0 and its own runs,
 *            their pages included) and its k-th schedule is exactly "flip"
 *            alone's schedule number k (same seed, lane index k = its runs so
 *            far), whatever the other lanes ran; the sweep lane likewise
 *            (h->lane[1]: its own runs only, the first of them its own run 0, so
 *            its k-th schedule is "sweep" alone's index k-1). "flip" alone runs
 *            pct as its run 0 (the portfolio's run 0). A flip slot whose lane
 *            has no untried flip, and a sweep slot once the sweep lane went
 *            EX_LANES_SWEEP_PASSES times through its targets
 *            (ex_online_sweep_targets), run the cycle instead. Once a lock chain
 *            is known the sweep slots, and the first schedule after the chain
 *            was learnt, are nest. The cycle (C, and the slots given back)
 *            learns from every run (h itself) and runs, by its own count of
 *            runs c (h->lane_runs[0]), ex_online_resolve(portfolio, c), nest for
 *            c % 8 == 1 or 6 with a chain. Pages: ex_online_pages gives each
 *            schedule its lane's. Learning goes through ex_online_learn.
 *
 * Threads are the VMM's tids (1..EX_MAX_TID); a tid reused by a new thread
 * keeps the old thread's priority (the VMM cannot tell them apart here).
 * No global state; no function allocates in ex_online_next except to record
 * the choices (a failure there is reported by ex_online_choices, never a crash). */
#ifndef EXPLORER_ONLINE_H
#define EXPLORER_ONLINE_H
#include "history.h"
#include "rng.h"
#include "schedule.h"
#include "strategy.h"
#include "trace.h"

/* What a thread will do at its next event. known = false when the VMM cannot
 * tell (then it races with nothing). */
struct ex_pending {
    uint32_t tid;
    uint8_t kind;       /* enum ex_kind */
    uint64_t addr;      /* accessed address / futex word / clear_child_tid word */
    uint16_t size;      /* bytes (memory events); 0 counts as 1 */
    bool known;
    uint64_t rip;       /* the instruction, 0 if unknown (spin detection) */
};

/* One cue point as the VMM sees it. next[] lists the pending events it knows
 * (any order; entries with a tid outside 1..EX_MAX_TID are ignored; for a tid
 * listed twice the last entry counts); a thread without an entry is unknown.
 * next may be NULL (then nnext is ignored). step is informational: the
 * strategies count their own choices. */
struct ex_view {
    const struct ex_tidset *enabled;
    const struct ex_pending *next;
    size_t nnext;
    uint64_t step;
};

enum ex_online_kind {
    EX_ONLINE_PCT = 0,
    EX_ONLINE_POS,
    EX_ONLINE_RANDOM,
    EX_ONLINE_RF,
    EX_ONLINE_WINDOW,
    EX_ONLINE_FLIP,
    EX_ONLINE_PORTFOLIO,
    EX_ONLINE_NEST,
    EX_ONLINE_SWEEP,
    EX_ONLINE_WAKE,
    EX_ONLINE_LANES,
    EX_ONLINE_NKINDS
};

const char *ex_online_name(enum ex_online_kind k);
 /* "pct", "pos", "random", "rf", "window", "flip", "portfolio", "nest", "sweep", "wake",
  * "lanes".
 * Returns 0 or -1. */
int ex_online_from_name(const char *name, enum ex_online_kind *out);
/* The strategy portfolio gives schedule `index` (k itself for the others). */
enum ex_online_kind ex_online_resolve(enum ex_online_kind k, uint64_t index);

#define EX_ONLINE_DEFAULT_STEPS 100u
#define EX_ONLINE_MAX_STEPS_ESTIMATE 1000000000u

struct ex_online_params {
    uint32_t depth;          /* PCT d, 1..EX_PCT_MAX_DEPTH, default 3 */
    uint32_t default_steps;  /* PCT k with no history, 1..EX_ONLINE_MAX_STEPS_ESTIMATE, default 100 */
};
void ex_online_params_default(struct ex_online_params *p);
/* Clamps out-of-range values into the documented ranges. */
void ex_online_params_sanitize(struct ex_online_params *p);

/* a and b race: different threads, both known, byte ranges overlap, at least
 * one writes. Writes are EX_WRITE and EX_RMW; futex wait and wake count as a
 * 4-byte RMW of their word and a thread exit with a clear_child_tid word as a
 * 4-byte write of it (they order with the accesses to those words); create,
 * join and other sync events have no address and race with nothing. */
bool ex_pending_races(const struct ex_pending *a, const struct ex_pending *b);

/* Lock words a thread is taken to hold, at most (the oldest is forgotten). */
#define EX_NEST_HELD 4
#define EX_NEST_EDGES 32
/* "wake": its start-order and wake-rule variants, walked in order (one more:
 * random ranks); children it can defer, at most. */
#define EX_WAKE_VARIANTS 8u
#define EX_WAKE_CHILDREN 64u
enum { EX_WAKE_DEFER_NONE, EX_WAKE_DEFER_HALF, EX_WAKE_DEFER_ONE, EX_WAKE_DEFER_ALL_BUT_ONE };

struct ex_online {
    uint8_t asked;              /* enum ex_online_kind given to begin */
    uint8_t kind;               /* what this schedule uses (portfolio resolved) */
    struct ex_online_params p;
    uint64_t seed, index;
    uint64_t cycle;             /* portfolio: the schedule's place in its cycle (online.h) */
    uint8_t lane;               /* lanes: the lane it runs in (0 cycle, 1 flip, 2 sweep, 3 nest) */
    uint64_t lane_index;        /* lanes, flip and sweep: the index it has in its lane */
    struct ex_rng rng;
    uint64_t steps;             /* choices made in this run */
    uint32_t *choices;          /* the recorded choices */
    size_t nchoices, cap;
    bool lost;                  /* recording failed for lack of memory */
    struct ex_tidset seen;      /* threads met so far */
    struct ex_u64map conflict;  /* the history's conflict variables, copied at begin */
    uint64_t racy;              /* racy steps chosen so far */
    uint64_t windows;           /* window steps chosen so far (ex_online_window) */
    uint64_t nested;            /* nested lock steps chosen so far (ex_online_nested) */
    struct {
        struct {
            uint64_t held, taken;   /* a nested lock step: the word held, the one taken */
            uint64_t rip;           /* its instruction (0: unknown) */
            uint32_t tid;
        } edge[EX_NEST_EDGES];      /* this run's distinct ones, the first EX_NEST_EDGES */
        uint32_t nedges;
        uint64_t held[EX_MAX_TID + 1][EX_NEST_HELD]; /* SYNC words each thread took */
        uint8_t nheld[EX_MAX_TID + 1];
    } nest;
    struct ex_tidset after;     /* threads whose last step was a racy DATA access */
    uint8_t racy_classes;       /* EX_CONFLICT_* that make a step racy */
    struct ex_u64map lastacc;   /* address -> tid | 1 << 32 if read: its last access */
    struct ex_u64map lastrip;   /* address -> rip of its last read (0: unknown) */
    uint32_t wrote[EX_MAX_TID + 1]; /* each thread's events other than reads, counted */
    struct {
        uint64_t k;             /* racy-step estimate */
        bool data_only;         /* racy steps: DATA variables only (odd PCT schedules) */
        bool windows;           /* change points count window steps ("window") */
        bool nest;              /* lowered at nested lock steps ("nest"), no change points */
        bool nest_coin;         /* nest: at each with probability 1/2 (else at every one) */
        uint32_t order[EX_MAX_TID + 1]; /* seen threads, highest priority first */
        uint32_t nthreads, nhigh;       /* order[0..nhigh) were never lowered */
        uint32_t nchange;
        uint64_t change[EX_PCT_MAX_DEPTH];      /* ascending, in [1, k] */
        uint32_t nfired;
        uint64_t fired_step[EX_PCT_MAX_DEPTH];  /* the choice number (1-based) */
        uint32_t fired_tid[EX_PCT_MAX_DEPTH];   /* the thread lowered there */
    } pct;
    struct {
        uint64_t prio[EX_MAX_TID + 1];  /* priority of each seen thread's next event */
        uint64_t redraws;               /* priorities re-drawn because of a race */
    } pos;
    struct {
        uint32_t last;          /* random: the thread chosen last */
        bool data_only;         /* racy steps: DATA variables only (a coin per schedule) */
    } walk;
    struct {
        uint64_t var;           /* the target: the first window opened by an access */
        bool write;             /* to var, a write or RMW (else a read) ... */
        bool any;               /* ... or no target: the n-th window of the run (pct.change[0]) */
        bool pair;              /* read target, then another thread's write window of var */
        uint64_t open_var[EX_MAX_TID + 1];  /* the racy DATA access that opened each */
        bool open_write[EX_MAX_TID + 1];    /* thread's window (valid while in o->after) */
    } sweep;
    struct {                    /* "wake" (online_wake.c) */
        uint32_t variant;       /* its place in the variant list (EX_WAKE_VARIANTS: random ranks) */
        uint8_t defer;          /* start order: which children start last (online_wake.c) */
        bool deferred;          /* done (when the creator first blocked) */
        uint32_t child[EX_WAKE_CHILDREN]; /* the first children, in creation order */
        bool waker;             /* at a wake, lower the waker (else the woken threads) */
        uint32_t creator;       /* the first thread seen (0: none yet), every strategy */
        uint32_t children;      /* threads seen after it */
        struct ex_tidset prev;  /* the threads enabled at the last cue point, every strategy */
        struct ex_tidset woken; /* woken at this cue point (ex_online_wake_note) */
        uint64_t child_wakes;   /* cue points where a thread other than the creator was woken */
        uint64_t wakes, lowered; /* wake: cue points with a wake; threads lowered at them */
    } wake;
    struct ex_step *rec;        /* the chosen thread's pending event per step (flip.h) */
    size_t nrec, caprec;
    bool reclost;               /* recording them failed for lack of memory */
    struct {
        long cand;              /* the history's flip this run makes (-1: none, it is pos) */
        uint32_t *prefix;       /* a copy of the parent's choices */
        struct ex_step *psteps; /* and of the events they made (NULL: follow tids only) */
        size_t nprefix;
        uint64_t *pnext;        /* per parent step: its thread's next step (nprefix: none) */
        uint64_t pj;            /* follow: the parent's step to make next */
        uint32_t cur;           /* the thread of the parent's step made last (0: none) */
        uint64_t curj;          /* that step */
        uint64_t extra;         /* extra steps in a row (run_extra) */
        uint64_t extras;        /* such steps in all: cue points the parent did not have */
        uint64_t at;            /* the parent's step where t1 is held */
        uint32_t t1;
        struct ex_pending e1;   /* t1's access held there */
        uint8_t phase;          /* 0 follow the parent, 1 hold t1, 2 release it, 3 pos */
        uint64_t cursor;        /* hold: the parent's next choice to follow */
        uint64_t held, limit;   /* steps held so far; at most */
        bool reversed;          /* another thread made a racing access while t1 was held */
        bool diverged;          /* the parent's choice was not enabled before `at` */
    } flip;
    struct {
        bool mutating;          /* false: the corpus was empty, this is pos */
        size_t parent;          /* corpus index of the parent */
        uint64_t parent_run;    /* its run number */
        uint32_t *prefix;       /* a copy of the parent's choices */
        size_t nprefix;
        uint64_t flip;          /* the step where the choice differs (moves on if forced) */
        uint64_t flip_racy;     /* > 0: flip at the parent's flip_racy-th racy step instead */
        uint64_t racy_seen;     /* racy steps of the parent's prefix so far */
        bool flipped;           /* the flip happened (at step `flip`) */
        bool diverged;          /* the parent's choice was not enabled before the flip */
        bool insert;            /* after the flip: the parent's suffix (else pos) */
        uint64_t resume;        /* insert: next parent choice to follow */
    } rf;
};

void ex_online_init(struct ex_online *o);
void ex_online_free(struct ex_online *o);

/* Prepares schedule number `index` of strategy kind (params NULL: defaults,
 * else sanitized; h NULL: no history). The history is read here only, so it
 * may change (ex_history_add_run) while the run goes on. Returns 0, or -1 for
 * an unknown kind or no memory (then ex_online_next still answers, as pos). */
int ex_online_begin(struct ex_online *o, enum ex_online_kind kind,
                    const struct ex_online_params *params, const struct ex_history *h,
                    uint64_t seed, uint64_t index);

/* The first schedule index whose history knew a DATA variable (UINT64_MAX:
 * none yet): the run after the one that first showed one racing. The sweep
 * counts its schedules from there. */
uint64_t ex_online_sweep_first(const struct ex_history *h);

/* After ex_history_add_run: the run's flips (flip.h) join h's, and the flip
 * this run made (if it was a "flip" schedule) counts as tried. Returns the
 * number of new flips, or -1 on no memory (h stays usable). */
long ex_history_learn_flips(struct ex_history *h, const struct ex_online *o);

/* After a run (instead of ex_history_add_run and ex_history_learn_flips): learns
 * it into h and, for "lanes", into the history of the lane it ran in (run 0
 * into every lane: it creates them); pages (NULL: none) are the pages the run
 * shared, noted as ex_history_add_page does (at most EX_MAX_SHARED_PAGES).
 * Returns 0, or -1 on no memory (h stays usable; that lane, if it could not be
 * created, gives its slots to the cycle). */
int ex_online_learn(struct ex_history *h, const struct ex_online *o, const struct ex_trace *trace,
                    enum ex_outcome outcome, const struct ex_u64map *pages);

/* The pages schedule o (begun with h) pre-shares, ascending, at most max into
 * out: those of the history it learns from (its lane's for "lanes"). Returns how
 * many; h->pages.n is enough room. */
size_t ex_online_pages(const struct ex_online *o, const struct ex_history *h, uint64_t *out,
                       size_t max);

/* The thread that performs the next event: a member of *v->enabled, or 0 if it
 * is empty (or v or v->enabled is NULL). Records the choice. */
uint32_t ex_online_next(struct ex_online *o, const struct ex_view *v);

/* The thread a flip or rf schedule wants next while it follows its parent run's choices
 * (flip: up to the held access; rf: up to its flip), 0 otherwise. When that thread is
 * blocked on a timer here, the parent's timer ended early there (timers.h): the VMM ends
 * it again, so the child follows its parent instead of diverging. */
uint32_t ex_online_following(const struct ex_online *o);

/* The choices made since begin, one thread id per cue point; NULL (and *n =
 * 0) if recording them failed for lack of memory: the run is then not
 * replayable. */
const uint32_t *ex_online_choices(const struct ex_online *o, size_t *n);

/* The run as an ordinary schedule (ex_schedule_from_choices, default
 * "continue", note = ex_online_describe). Returns 0, or -1 when the choices
 * were lost or the schedule has too many segments (EX_MAX_SEGMENTS) / no memory. */
int ex_online_schedule(const struct ex_online *o, struct ex_schedule *s);

/* A one-line note, e.g. "pct d=3 k=100 seed=7 index=4 change-points=12,40"
 * (portfolio prefixes "portfolio/"); truncated to len. Returns buf. */
char *ex_online_describe(const struct ex_online *o, char *buf, size_t len);

#endif
