/* The online portfolios' slot layout, frozen (explorer/online.h, "portfolio" and
 * "lanes").
 *
 * The same seed must run the same schedules: the corpus results and every
 * dump's "seed=S index=I" depend on which strategy, ordinal and cycle place
 * each index gets. This test pins that layout for synthetic histories made of
 * the facts the slot rules read (DATA variables and when they were born, a lock
 * chain, condition waits and an older waker, split updates, double checks,
 * untried flips and the flip runs so far; for "lanes", the flip and sweep
 * lanes' own histories and the cycle's run count), index 0..NIDX-1 of each.
 *
 * What each index gets is observed through ex_online_begin only (the kind, the
 * cycle, and what the ordinal chose: the sweep's target, wake's variant, PCT's
 * racy steps and nest's coin), so the expectations below were recorded from the
 * code as it was before the portfolio became one table (main at 4475ab0, this
 * file compiled against its explorer/), and they hold whatever the code looks
 * like.
 *
 * To record them again (only for a layout change meant to move slots, which
 * moves every seed's schedules: say so in the commit):
 *     JINX_GOLDEN_PRINT=1 build/tests/test_explorer_portfolio_golden
 * prints the tables in this file's syntax; JINX_GOLDEN_VERBOSE=1 prints the kind
 * letters of every combination (diff two builds' output to see which slot moved). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NIDX 300u   /* indexes checked per history */
#define NSHOW 64u   /* of which the readable tables spell out the first */
#define NONE (-1)

/* DATA variables: none; one born in run 0; two, born in runs 0 and 4; one born
 * in run 9 (so sweep_first = 10: index 4 and the pair slot 9 come before it). */
enum { DATA_NONE, DATA_ONE, DATA_TWO, DATA_LATE, NDATA };
#define VAR0 0x10000u
#define VAR1 0x10040u
#define SPLIT_VAR 0x20000u
#define DCHECK_VAR 0x30000u

struct facts {
    int data;       /* DATA_* */
    int nest;       /* h->nest_chain_from, NONE: no chain */
    int cond;       /* h->cond_from, NONE: no condition wait */
    int older;      /* h->cond_older_from, NONE: no older waker */
    int split;      /* h->split_from */
    int dcheck;     /* h->dcheck_from */
    int flips;      /* an untried flip (1) or none (0) */
    int flipruns;   /* h->flips.flipruns */
};

static void add_data(struct ex_history *h, uint64_t addr, uint64_t born)
{
    assert_non_null(ex_u64map_put(&h->conflict, addr, EX_CONFLICT_DATA, NULL));
    assert_non_null(ex_u64map_put(&h->flips.born, addr, born, NULL));
}

static void add_flip(struct ex_flips *f, bool tried)
{
    /* No parent choices: a flip schedule begun from it is pos, its slot is a flip's. */
    f->v = calloc(1, sizeof *f->v);
    assert_non_null(f->v);
    f->v[0].tried = tried;
    f->n = f->cap = 1;
}

static void build(struct ex_history *h, const struct facts *f)
{
    ex_history_init(h);
    /* Window estimate 64 (EX_SWEEP_MAX_K): a sweep's target tells its ordinal
     * apart from every other below 3n + 64. */
    h->traced = 1;
    h->total_windows = 64;
    if (f->data == DATA_ONE || f->data == DATA_TWO)
        add_data(h, VAR0, 0);
    if (f->data == DATA_TWO)
        add_data(h, VAR1, 4);
    if (f->data == DATA_LATE)
        add_data(h, VAR0, 9);
    if (f->nest != NONE)
        h->nest_chain = true, h->nest_chain_from = (uint64_t)f->nest;
    if (f->cond != NONE)
        h->cond_waits = true, h->cond_from = (uint64_t)f->cond;
    if (f->older != NONE)
        h->cond_older = true, h->cond_older_from = (uint64_t)f->older;
    if (f->split != NONE)
        h->split_updates = true, h->split_from = (uint64_t)f->split, h->split_var = SPLIT_VAR;
    if (f->dcheck != NONE)
        h->dchecks = true, h->dcheck_from = (uint64_t)f->dcheck, h->dcheck_var = DCHECK_VAR;
    if (f->flips)
        add_flip(&h->flips, false);
    h->flips.flipruns = (uint64_t)f->flipruns;
}

static char kind_letter(uint8_t k)
{
    static const char letters[EX_ONLINE_NKINDS] = {
        [EX_ONLINE_PCT] = 'p',   [EX_ONLINE_POS] = 'o',   [EX_ONLINE_RANDOM] = 'r',
        [EX_ONLINE_RF] = 'f',    [EX_ONLINE_WINDOW] = 'w', [EX_ONLINE_FLIP] = 'F',
        [EX_ONLINE_PORTFOLIO] = '?', [EX_ONLINE_NEST] = 'n', [EX_ONLINE_SWEEP] = 'S',
        [EX_ONLINE_WAKE] = 'W',  [EX_ONLINE_LANES] = '?',
    };
    return k < EX_ONLINE_NKINDS ? letters[k] : '?';
}

static uint8_t var_id(uint64_t addr)
{
    return addr == VAR0 ? 1 : addr == VAR1 ? 2 : addr == SPLIT_VAR ? 3 : addr == DCHECK_VAR ? 4
                                                                                            : 9;
}

static void mix(uint64_t *hash, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        *hash = (*hash ^ (v & 0xff)) * 0x100000001b3ull; /* FNV-1a */
}

/* What schedule o got, into *hash: its kind and cycle, and what its ordinal chose
 * (the sweep's target, wake's variant); for "lanes", its lane and lane index. */
static void observe(const struct ex_online *o, uint64_t *hash)
{
    mix(hash, o->kind);
    mix(hash, o->cycle);
    mix(hash, o->lane);
    mix(hash, o->lane_index);
    if (o->kind == EX_ONLINE_SWEEP) {
        mix(hash, o->sweep.any);
        mix(hash, o->sweep.any ? o->pct.change[0] : var_id(o->sweep.var));
        mix(hash, (uint64_t)o->sweep.write << 1 | o->sweep.pair);
        mix(hash, o->pct.nchange);
    }
    if (o->kind == EX_ONLINE_WAKE)
        mix(hash, (uint64_t)o->wake.variant << 8 | o->wake.defer << 1 | o->wake.waker);
    /* PCT's and nest's ordinal: data races only on odd ones, nest's coin. */
    if (o->kind == EX_ONLINE_PCT || o->kind == EX_ONLINE_WINDOW || o->kind == EX_ONLINE_NEST)
        mix(hash, (uint64_t)o->pct.data_only << 1 | o->pct.nest_coin);
}

/* Indexes 0..NIDX-1 of `kind` with history h (NULL: none): the hash of what each
 * got, and the kind letters of the first NSHOW into show (NULL: not wanted). */
static uint64_t run_layout(struct ex_online *o, enum ex_online_kind kind,
                           const struct ex_history *h, char *show)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < NIDX; i++) {
        assert_int_equal(ex_online_begin(o, kind, NULL, h, 1, i), 0);
        observe(o, &hash);
        if (show && i < NSHOW)
            show[i] = kind_letter(o->kind);
    }
    if (show)
        show[NSHOW] = '\0';
    return hash;
}

static bool printing(void)
{
    return getenv("JINX_GOLDEN_PRINT") != NULL;
}

/* ---- "portfolio": named histories, spelled out --------------------------- */

struct named {
    const char *name;
    struct facts f;
    bool no_history;    /* h = NULL */
    const char *kinds;  /* indexes 0..NSHOW-1 */
    uint64_t hash;      /* indexes 0..NIDX-1 */
};

#define F(d, n, c, o, s, dc, fl, fr) { d, n, c, o, s, dc, fl, fr }

/* p pct, o pos, r random, f rf, w window, F flip, n nest, S sweep, W wake */
static const struct named named[] = {
    { "no history",
      F(DATA_NONE, NONE, NONE, NONE, NONE, NONE, 0, 0), true,
      "prowprofprowprofprowprofprowprofprowprofprowprofprowprofprowprof", 0x1043deaaab7a29abull },
    { "empty history",
      F(DATA_NONE, NONE, NONE, NONE, NONE, NONE, 0, 0), false,
      "prowprofprowprofprowprofprowprofprowprofprowprofprowprofprowprof", 0x1043deaaab7a29abull },
    { "DATA variable",
      F(DATA_ONE, NONE, NONE, NONE, NONE, NONE, 0, 0), false,
      "prowSpSrofprowSprofproSwprofprSowprofpSrowprofSprowproSfprowprSo", 0x8197579ddd6db8e5ull },
    { "flips",
      F(DATA_NONE, NONE, NONE, NONE, NONE, NONE, 1, 0), false,
      "pFFFpFFFpFoFpFoFpFowprofpFowprofpFowprofpFowprofpFowprofpFowprof", 0xd75925d72ecec59bull },
    { "DATA variable, flips",
      F(DATA_ONE, NONE, NONE, NONE, NONE, NONE, 1, 0), false,
      "pFFFSpSFFFpFoFSpFoFpFoSwprofpFSowprofpSFowprofSpFowproSfpFowprSo", 0x95d3246f173095e2ull },
    { "two DATA variables, flips, 5 flip runs",
      F(DATA_TWO, NONE, NONE, NONE, NONE, NONE, 1, 5), false,
      "pFFFSpSFFFwFrFSfFrFwFrSofprowFSrofprowSFrofproSwFrofprSowFrofpSr", 0x00747d882ef1e6a1ull },
    { "late DATA variable, no flip left, 5 flip runs",
      F(DATA_LATE, NONE, NONE, NONE, NONE, NONE, 0, 5), false,
      "prowpprowprofpSrowprofSprowproSfprowprSofprowpSrofprowSprofproSw", 0x5dec0f44ac7692bcull },
    { "lock chain from 9, DATA variable, flips",
      F(DATA_ONE, 9, NONE, NONE, NONE, NONE, 1, 0), false,
      "pFFFnpnFFnFpFonFpFnFpFnowprnfpnFowprnfnpFowprnnfpFowprnnfpFowpnr", 0x415b061df3f5d0a2ull },
    { "lock chain from 2, no DATA",
      F(DATA_NONE, 2, NONE, NONE, NONE, NONE, 0, 0), false,
      "pnnowprnfpnowprnfpnowprnfpnowprnfpnowprnfpnowprnfpnowprnfpnowprn", 0xf6086d59766a19cdull },
    { "condition wait, late DATA variable, flips",
      F(DATA_LATE, NONE, 0, NONE, NONE, NONE, 1, 0), false,
      "pFWWFFpFFWFpFoSFpFoFpFSowprofpSFowprofSpFowproSfpFowprSofpFowpSr", 0x266ab8dd30974314ull },
    { "condition wait, older waker, DATA variable, flips",
      F(DATA_ONE, NONE, 0, 0, NONE, NONE, 1, 0), false,
      "pFWWSFSFpSFFFpSFoFpFoFSpFowproSfpFowprSofpFowpSrofpFowSprofpFoSw", 0xc4ad5027f997dcffull },
    { "condition wait from 3, split update from 3, DATA, flips",
      F(DATA_ONE, NONE, 3, NONE, 3, NONE, 1, 0), false,
      "pFFFSWSWpSFFFpSFoFpFoFSpFowproSfpFowprSofpFowpSrofpFowSprofpFoSw", 0xe0ed3495058efc87ull },
    { "condition wait from 6, no DATA",
      F(DATA_NONE, NONE, 6, NONE, NONE, NONE, 0, 0), false,
      "prowproWfWprowprofprowprofprowprofprowprofprowprofprowprofprowpr", 0x9f3ce1c83ac1d94aull },
    { "split update, DATA variable, flips",
      F(DATA_ONE, NONE, NONE, NONE, 0, NONE, 1, 0), false,
      "pFSFSFSpFFFpFoSFpFoFpFSowprofpSFowprofSpFowproSfpFowprSofpFowpSr", 0x924d97388b6a49aaull },
    { "double check, DATA variable, flips",
      F(DATA_ONE, NONE, NONE, NONE, NONE, 0, 1, 0), false,
      "pFSFSFSpFFFpFoSFpFoFpFSowprofpSFowprofSpFowproSfpFowprSofpFowpSr", 0x0b4f124705512dadull },
    { "double check and condition wait, DATA variable",
      F(DATA_ONE, NONE, 0, NONE, NONE, 0, 0, 0), false,
      "prWWSoSwpSrofpSrowprofSprowproSfprowprSofprowpSrofprowSprofproSw", 0x362ac9dd6c25f298ull },
    { "lock chain from 2, split update, condition wait, flips",
      F(DATA_TWO, 2, 0, NONE, 0, NONE, 1, 0), false,
      "pFnFnWnWFSpFFFnpFoFpFnnFpFowprnnfpFowpnrnfpFownprnfpFonwprnfpFno", 0x7ba7c45ee04c0a97ull },
    { "everything from 0, 5 flip runs",
      F(DATA_TWO, 0, 0, 0, 0, 0, 1, 5), false,
      "pFSFnWnWFSpFFFnwFrFfFnnFwFrnfpnnowFrnfnpnowFrnnfpnowFrnnfpnowFnr", 0x5e16e438d25308e2ull },
};

static void print_from(int v, const char *sep)
{
    if (v == NONE)
        printf("NONE%s", sep);
    else
        printf("%d%s", v, sep);
}

/* One entry of named[], as this file spells it. */
static void print_named(const struct named *n, const char *show, uint64_t hash)
{
    static const char *const data[NDATA] = { "DATA_NONE", "DATA_ONE", "DATA_TWO", "DATA_LATE" };
    const struct facts *f = &n->f;
    printf("    { \"%s\",\n      F(%s, ", n->name, data[f->data]);
    print_from(f->nest, ", ");
    print_from(f->cond, ", ");
    print_from(f->older, ", ");
    print_from(f->split, ", ");
    print_from(f->dcheck, ", ");
    printf("%d, %d), %s,\n      \"%s\", 0x%016" PRIx64 "ull },\n", f->flips, f->flipruns,
           n->no_history ? "true" : "false", show, hash);
}

static void test_named(void **state)
{
    (void)state;
    struct ex_online o;
    ex_online_init(&o);
    bool bad = false;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        struct ex_history h;
        char show[NSHOW + 1];
        build(&h, &named[i].f);
        uint64_t hash = run_layout(&o, EX_ONLINE_PORTFOLIO, named[i].no_history ? NULL : &h, show);
        ex_history_free(&h);
        if (printing()) {
            print_named(&named[i], show, hash);
            continue;
        }
        if (strcmp(show, named[i].kinds) != 0 || hash != named[i].hash) {
            printf("portfolio, %s:\n  want %s 0x%016" PRIx64 "\n  got  %s 0x%016" PRIx64 "\n",
                   named[i].name, named[i].kinds, named[i].hash, show, hash);
            bad = true;
        }
    }
    ex_online_free(&o);
    assert_false(bad);
}

/* ---- "portfolio": every combination of the facts, hashed --------------------
 *
 * Values that put a fact before, between and after the slots that read it:
 * the early slot 2 and wake slots 2-3 (or 5 and 7), the pair slot 9, sweep slot
 * 4 and 14. One row per (DATA variables, lock chain); a row's hash covers every
 * combination of the others, indexes 0..NIDX-1 each. */
static const int nest_v[] = { NONE, 0, 2, 9, 13 };
static const struct { int cond, older; } cond_v[] = {
    { NONE, NONE }, { 0, NONE }, { 0, 0 }, { 0, 4 }, { 3, NONE }, { 3, 4 },
    { 6, NONE }, { 6, 0 }, { 8, NONE },
};
static const int split_v[] = { NONE, 0, 3 };
static const int dcheck_v[] = { NONE, 0 };
static const struct { int flips, flipruns; } flip_v[] = { { 0, 0 }, { 1, 0 }, { 1, 5 }, { 0, 5 } };
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NNEST N(nest_v)

/* By nest_v, per DATA_*. */
static const uint64_t rows[NDATA][NNEST] = {
    [DATA_NONE] = { 0x29beef3bc85064dfull, 0x72e0911fb0d59513ull, 0x38fb2d400d9f906dull,
                  0xc18f8396d4235608ull, 0xe553e98f7f4f60beull },
    [DATA_ONE] = { 0xe138cc301b50011dull, 0x865c90b42c739419ull, 0x81b7c0b10336655dull,
                  0xc154ce74c26e23e3ull, 0xde235e66113dc178ull },
    [DATA_TWO] = { 0x76a5201d0ece9c59ull, 0x865c90b42c739419ull, 0x81b7c0b10336655dull,
                  0xc154ce74c26e23e3ull, 0xde235e66113dc178ull },
    [DATA_LATE] = { 0x149a72ba96dc14d7ull, 0xbc7ed3aece67e9ffull, 0xb6ad9f16e74a3861ull,
                  0x14c1767131de0083ull, 0xde83743d2b51b781ull },
};

static void test_combinations(void **state)
{
    (void)state;
    struct ex_online o;
    ex_online_init(&o);
    bool bad = false;
    bool verbose = getenv("JINX_GOLDEN_VERBOSE") != NULL;
    for (int d = 0; d < NDATA; d++) {
        static const char *const data[NDATA] = { "DATA_NONE", "DATA_ONE", "DATA_TWO",
                                                 "DATA_LATE" };
        if (printing())
            printf("    [%s] = {", data[d]);
        for (size_t n = 0; n < NNEST; n++) {
            uint64_t row = 0xcbf29ce484222325ull;
            for (size_t c = 0; c < N(cond_v); c++)
                for (size_t s = 0; s < N(split_v); s++)
                    for (size_t dc = 0; dc < N(dcheck_v); dc++)
                        for (size_t fl = 0; fl < N(flip_v); fl++) {
                            struct facts f = F(d, nest_v[n], cond_v[c].cond, cond_v[c].older,
                                               split_v[s], dcheck_v[dc], flip_v[fl].flips,
                                               flip_v[fl].flipruns);
                            struct ex_history h;
                            char show[NSHOW + 1];
                            build(&h, &f);
                            mix(&row, run_layout(&o, EX_ONLINE_PORTFOLIO, &h, show));
                            ex_history_free(&h);
                            if (verbose)
                                printf("data=%d nest=%d cond=%d older=%d split=%d dcheck=%d "
                                       "flips=%d flipruns=%d %s\n",
                                       f.data, f.nest, f.cond, f.older, f.split, f.dcheck,
                                       f.flips, f.flipruns, show);
                        }
            if (printing())
                printf("%s0x%016" PRIx64 "ull%s", n == 3 ? "\n                  " : " ", row,
                       n + 1 < NNEST ? "," : "");
            else if (row != rows[d][n]) {
                printf("portfolio: the combinations with data=%d nest=%d moved "
                       "(JINX_GOLDEN_VERBOSE=1 lists them)\n", d, nest_v[n]);
                bad = true;
            }
        }
        if (printing())
            printf(" },\n");
    }
    ex_online_free(&o);
    assert_false(bad);
}

/* ---- "lanes": every combination of its facts, hashed ----------------------- */

/* The flip lane: none yet, no untried flip, one untried. */
enum { FLANE_NULL, FLANE_TRIED, FLANE_UNTRIED, NFLANE };
/* The sweep lane: none yet; no DATA variable after 0 runs, after 1 (spent); a
 * DATA variable (first 1, 3 targets: 2 each + k 1) after 3 runs, after 7 (spent). */
enum { SLANE_NULL, SLANE_EMPTY0, SLANE_EMPTY1, SLANE_DATA3, SLANE_DATA7, NSLANE };
static const int lane_nest_v[] = { NONE, 0, 4, 11 };
static const uint64_t lane_cycle_v[] = { 0, 5 };

static struct ex_history *new_lane(void)
{
    struct ex_history *l = malloc(sizeof *l);
    assert_non_null(l);
    ex_history_init(l);
    return l;
}

static void build_lanes(struct ex_history *h, int nest, int flane, int slane, uint64_t cycle)
{
    ex_history_init(h);
    add_data(h, VAR0, 0);
    if (nest != NONE)
        h->nest_chain = true, h->nest_chain_from = (uint64_t)nest;
    h->lane_runs[0] = cycle;
    if (flane != FLANE_NULL) {
        h->lane[0] = new_lane();
        h->lane[0]->runs = 2;
        add_flip(&h->lane[0]->flips, flane == FLANE_TRIED);
    }
    if (slane != SLANE_NULL) {
        struct ex_history *l = h->lane[1] = new_lane();
        l->runs = slane == SLANE_EMPTY0 ? 0 : slane == SLANE_EMPTY1 ? 1
                  : slane == SLANE_DATA3 ? 3 : 7;
        if (slane == SLANE_DATA3 || slane == SLANE_DATA7)
            add_data(l, VAR1, 0);
    }
}

static const uint64_t lane_rows[N(lane_nest_v)] = {
    0xd01d28d866a1e303ull, 0x788fdd120d708ff8ull, 0x41deaf4ae7cd27f2ull, 0x0995384ab8dde47cull,
};

static void test_lanes(void **state)
{
    (void)state;
    struct ex_online o;
    ex_online_init(&o);
    bool bad = false;
    bool verbose = getenv("JINX_GOLDEN_VERBOSE") != NULL;
    if (printing())
        printf("   ");
    for (size_t n = 0; n < N(lane_nest_v); n++) {
        uint64_t row = 0xcbf29ce484222325ull;
        for (int fl = 0; fl < NFLANE; fl++)
            for (int sl = 0; sl < NSLANE; sl++)
                for (size_t c = 0; c < N(lane_cycle_v); c++) {
                    struct ex_history h;
                    char show[NSHOW + 1];
                    build_lanes(&h, lane_nest_v[n], fl, sl, lane_cycle_v[c]);
                    mix(&row, run_layout(&o, EX_ONLINE_LANES, &h, show));
                    ex_history_free(&h);
                    if (verbose)
                        printf("lanes nest=%d flane=%d slane=%d cycle=%" PRIu64 " %s\n",
                               lane_nest_v[n], fl, sl, lane_cycle_v[c], show);
                }
        if (printing())
            printf(" 0x%016" PRIx64 "ull,", row);
        else if (row != lane_rows[n]) {
            printf("lanes: the combinations with nest=%d moved (JINX_GOLDEN_VERBOSE=1 lists "
                   "them)\n", lane_nest_v[n]);
            bad = true;
        }
    }
    if (printing())
        printf("\n");
    ex_online_free(&o);
    assert_false(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named),
        cmocka_unit_test(test_combinations),
        cmocka_unit_test(test_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
