/* Unit tests for the control protocol's request validation (vmm/control/control_req.c) and the
 * round configuration it shares with the command lines (vmm/rounds/round_config.c):
 * round_parse_rate, round_config_set/check, round_status_json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control_req.h"
#include "lib/json.h"
#include "rounds/round_config.h"

static struct control_req R;
static char E[512];

static int req(const char *s) { return control_parse_request(s, strlen(s), &R, E, sizeof E); }

#define OK(s)                                                                              \
    do {                                                                                   \
        if (req(s) != 0)                                                                   \
            fail_msg("rejected %s: %s", (s), E);                                           \
    } while (0)
#define BAD(s, why)                                                                        \
    do {                                                                                   \
        if (req(s) == 0)                                                                   \
            fail_msg("accepted %s", (s));                                                  \
        if (!strstr(E, (why)))                                                             \
            fail_msg("%s: message \"%s\" lacks \"%s\"", (s), E, (why));                    \
    } while (0)

static void test_simple_commands(void **state)
{
    (void)state;
    OK("{\"cmd\":\"ping\"}");
    assert_int_equal(R.cmd, CTL_PING);
    OK(" {\"cmd\" : \"status\"} ");
    assert_int_equal(R.cmd, CTL_STATUS);
    OK("{\"cmd\":\"detach\"}");
    assert_int_equal(R.cmd, CTL_DETACH);
    OK("{\"cmd\":\"follow\"}");
    assert_int_equal(R.cmd, CTL_FOLLOW);
    assert_true(R.follow);
    BAD("{\"cmd\":\"ping\",\"rate\":5}", "unknown field \"rate\" for ping");
    BAD("{\"cmd\":\"status\",\"x\":1}", "unknown field \"x\"");
}

static void test_attach_full(void **state)
{
    (void)state;
    OK("{\"cmd\":\"attach\",\"rate\":5,\"strategy\":\"pct\",\"depth\":3,\"sims\":8,"
       "\"fragment_us\":2000,\"tail_us\":0,\"seed\":42,\"follow\":true}");
    assert_int_equal(R.cmd, CTL_ATTACH);
    assert_true(R.cfg.rate == 5.0);
    assert_int_equal(R.cfg.strategy, EX_STRAT_PCT);
    assert_int_equal(R.cfg.params.pct_depth, 3);
    assert_int_equal(R.cfg.params.max_schedules, 8);
    assert_int_equal(R.cfg.fragment_ns, 2000000);
    assert_int_equal(R.cfg.tail_ns, 0);
    assert_int_equal(R.cfg.seed, 42);
    assert_true(R.follow);
    assert_int_equal(R.cfg.workers, -1); /* not given: the VMM's default */
    OK("{\"cmd\":\"attach\",\"rate\":0.5,\"seed\":18446744073709551615,\"max_duty_pct\":20,"
       "\"workers\":0,\"sim_kind\":\"sparse\"}");
    assert_int_equal(R.cfg.workers, 0);
    assert_int_equal(R.cfg.sim_kind, ROUND_SIMS_SPARSE);
    assert_true(R.cfg.rate == 0.5);
    assert_true(R.cfg.seed == UINT64_MAX);
    assert_int_equal(R.cfg.max_duty_pct, 20);
    assert_false(R.follow);
}

static void test_attach_defaults(void **state)
{
    (void)state;
    struct round_config d;
    round_config_default(&d);
    OK("{\"cmd\":\"attach\"}");
    assert_true(R.cfg.rate == d.rate);
    assert_int_equal(R.cfg.strategy, EX_STRAT_PORTFOLIO);
    assert_int_equal(R.cfg.params.max_schedules, d.params.max_schedules);
    assert_int_equal(R.cfg.fragment_ns, 1000000);
    assert_int_equal(R.cfg.tail_ns, ROUND_DEFAULT_TAIL_NS);
    assert_true(d.tail_wall_ns > 0);
    assert_int_equal(round_config_check(&d, E, sizeof E), 0);
    assert_true(d.rate == 5.0);
    assert_int_equal(d.params.max_schedules, 8);
    assert_int_equal(d.params.pct_depth, 3);
}

static void test_attach_bad_values(void **state)
{
    (void)state;
    BAD("{\"cmd\":\"attach\",\"rate\":0}", "\"rate\" must be");
    BAD("{\"cmd\":\"attach\",\"rate\":-1}", "\"rate\" must be");
    BAD("{\"cmd\":\"attach\",\"rate\":1001}", "\"rate\" must be");
    BAD("{\"cmd\":\"attach\",\"rate\":1e999}", "\"rate\" must be");
    BAD("{\"cmd\":\"attach\",\"rate\":\"5/s\"}", "\"rate\" must be");
    BAD("{\"cmd\":\"attach\",\"strategy\":\"dfs\"}", "\"strategy\" must be one of");
    BAD("{\"cmd\":\"attach\",\"strategy\":3}", "\"strategy\" must be one of");
    BAD("{\"cmd\":\"attach\",\"depth\":0}", "\"depth\" must be an integer from 1 to 32");
    BAD("{\"cmd\":\"attach\",\"depth\":33}", "\"depth\" must be");
    BAD("{\"cmd\":\"attach\",\"depth\":2.5}", "\"depth\" must be");
    BAD("{\"cmd\":\"attach\",\"depth\":3.0}", "\"depth\" must be");
    BAD("{\"cmd\":\"attach\",\"depth\":\"3\"}", "\"depth\" must be");
    BAD("{\"cmd\":\"attach\",\"sims\":0}", "\"sims\" must be an integer from 1 to 64");
    BAD("{\"cmd\":\"attach\",\"sims\":65}", "\"sims\"");
    BAD("{\"cmd\":\"attach\",\"fragment_us\":9}", "\"fragment_us\" must be an integer from 10 to 100000");
    BAD("{\"cmd\":\"attach\",\"fragment_us\":100001}", "\"fragment_us\"");
    BAD("{\"cmd\":\"attach\",\"tail_us\":100001}", "\"tail_us\" must be an integer from 0 to 100000");
    BAD("{\"cmd\":\"attach\",\"tail_us\":-1}", "\"tail_us\"");
    BAD("{\"cmd\":\"attach\",\"seed\":-1}", "\"seed\"");
    BAD("{\"cmd\":\"attach\",\"seed\":18446744073709551616}", "\"seed\"");
    BAD("{\"cmd\":\"attach\",\"follow\":1}", "\"follow\" must be true or false");
    BAD("{\"cmd\":\"attach\",\"follow\":\"yes\"}", "\"follow\"");
    BAD("{\"cmd\":\"attach\",\"max_duty_pct\":0}", "\"max_duty_pct\"");
    BAD("{\"cmd\":\"attach\",\"workers\":9}", "\"workers\" must be an integer from 0 to 8");
    BAD("{\"cmd\":\"attach\",\"sim_kind\":\"dense\"}", "\"sim_kind\" must be one of");
    BAD("{\"cmd\":\"attach\",\"sim_kind\":3}", "\"sim_kind\" must be one of");
    BAD("{\"cmd\":\"attach\",\"workers\":-1}", "\"workers\"");
    BAD("{\"cmd\":\"attach\",\"rates\":5}", "unknown field \"rates\" for attach");
}

static void test_bad_requests(void **state)
{
    (void)state;
    BAD("", "malformed request");
    BAD("ping", "malformed request");
    BAD("{\"cmd\":\"ping\"", "malformed request");
    BAD("{\"cmd\":\"ping\"}{\"cmd\":\"ping\"}", "malformed request");
    BAD("{\"cmd\":\"ping\",\"cmd\":\"status\"}", "duplicate field");
    BAD("{}", "missing \"cmd\"");
    BAD("{\"command\":\"ping\"}", "missing \"cmd\"");
    BAD("{\"cmd\":1}", "\"cmd\" must be a string");
    BAD("{\"cmd\":\"reboot\"}", "unknown command \"reboot\"");
    BAD("{\"cmd\":\"attach\",\"rate\":{\"x\":1}}", "nested objects are not allowed");
    /* a long unknown command is quoted, shortened */
    char big[300];
    snprintf(big, sizeof big, "{\"cmd\":\"%0200d\"}", 0);
    BAD(big, "unknown command");
    assert_true(strlen(E) < 200);
    /* longer than a line may be */
    static char huge[CONTROL_MAX_LINE + 100];
    memset(huge, ' ', sizeof huge);
    memcpy(huge, "{\"cmd\":\"ping\"}", 14);
    huge[sizeof huge - 1] = 0;
    BAD(huge, "longer than 4096");
}

static void test_parse_rate(void **state)
{
    (void)state;
    double r = -1;
    static const struct { const char *s; double v; } ok[] = {
        {"5/s", 5}, {"5", 5}, {"0.5/s", 0.5}, {"20/s", 20}, {"1000/s", 1000}, {"30/min", 0.5},
        {"6/m", 0.1}, {"2.25", 2.25}, {"5/sec", 5}, {".5/s", 0.5}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (round_parse_rate(ok[i].s, &r) != 0)
            fail_msg("round_parse_rate(\"%s\") rejected", ok[i].s);
        if (r < ok[i].v - 1e-12 || r > ok[i].v + 1e-12)
            fail_msg("round_parse_rate(\"%s\") = %g", ok[i].s, r);
    }
    static const char *bad[] = {"",      "0",    "0/s",  "1001/s", "-5/s", "+5", "5/h",
                                "5/",    "/s",   "5.",   ".",      "1e3",  "inf", "nan",
                                "0x10",  " 5",   "5 ",   "5//s",   "5/s/s", "99999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = -1;
        if (round_parse_rate(bad[i], &r) == 0)
            fail_msg("round_parse_rate(\"%s\") accepted: %g", bad[i], r);
    }
    assert_int_equal(round_parse_rate(NULL, &r), -1);
}

static void test_config_set(void **state)
{
    (void)state;
    struct round_config c;
    round_config_default(&c);
    assert_int_equal(round_config_set(&c, "rate", "20/s", E, sizeof E), 0);
    assert_int_equal(round_config_set(&c, "strategy", "bounded", E, sizeof E), 0);
    assert_int_equal(round_config_set(&c, "depth", "5", E, sizeof E), 0);
    assert_int_equal(round_config_set(&c, "sims", "64", E, sizeof E), 0);
    assert_int_equal(round_config_set(&c, "fragment", "2ms", E, sizeof E), 0);
    assert_int_equal(round_config_set(&c, "seed", "0x10", E, sizeof E), 0);
    assert_int_equal(round_config_set(&c, "max-duty", "5%", E, sizeof E), 0);
    assert_int_equal(c.max_duty_pct, 5);
    assert_int_equal(round_config_set(&c, "max-duty", "100", E, sizeof E), 0);
    assert_int_equal(c.max_duty_pct, 100);
    assert_int_equal(round_config_set(&c, "tail", "0", E, sizeof E), 0);
    assert_int_equal(c.tail_ns, 0);
    assert_int_equal(round_config_set(&c, "tail", "10ms", E, sizeof E), 0);
    assert_int_equal(c.tail_ns, 10000000);
    assert_int_equal(c.workers, -1);
    assert_int_equal(round_config_set(&c, "workers", "2", E, sizeof E), 0);
    assert_int_equal(c.workers, 2);
    assert_int_equal(c.fragment_wall_ns, 50000000);
    assert_int_equal(round_config_set(&c, "fragment-wall", "500ms", E, sizeof E), 0);
    assert_int_equal(c.fragment_wall_ns, 500000000);
    assert_true(c.rate == 20);
    assert_int_equal(c.strategy, EX_STRAT_BOUNDED);
    assert_int_equal(c.params.pct_depth, 5);
    assert_int_equal(c.params.max_schedules, 64);
    assert_int_equal(c.fragment_ns, 2000000);
    assert_int_equal(c.seed, 16);
    struct round_config before = c;
    static const char *const bad[][2] = {
        {"rate", "0"},        {"strategy", "best"}, {"depth", "0"},      {"depth", "x"},
        {"sims", "65"},       {"fragment", "5us"},  {"fragment", "1s"},  {"fragment", "2"},
        {"seed", "-1"},       {"workers", "9"},     {"workers", "-1"},   {"speed", "1"},
        {"tail", "101ms"},    {"tail", "7"},        {"tail", "-1ms"},    {"max-duty", "0"},
        {"max-duty", "101"},  {"max-duty", "5%%"},  {"max-duty", "%"},   {"max-duty", ""},
        {"fragment-wall", "500us"}, {"fragment-wall", "3s"}, {"fragment-wall", "0"},
        {"sim-kind", "dense"}, {"sim-kind", ""}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        E[0] = 0;
        if (round_config_set(&c, bad[i][0], bad[i][1], E, sizeof E) == 0)
            fail_msg("round_config_set(%s, %s) accepted", bad[i][0], bad[i][1]);
        if (!E[0] || (strcmp(bad[i][0], "speed") && !strstr(E, bad[i][0])))
            fail_msg("round_config_set(%s, %s): message \"%s\"", bad[i][0], bad[i][1], E);
        assert_memory_equal(&c, &before, sizeof c); /* untouched on error */
    }
    assert_non_null(strstr((round_config_set(&c, "strategy", "x", E, sizeof E), E), "portfolio"));
    char d[200];
    round_config_describe(&c, d, sizeof d);
    assert_string_equal(d, "20/s, strategy bounded, 64 simulations/round, fragment 2 ms, tail 10 ms, "
                           "seed 16, simulations auto");
    assert_int_equal(round_config_set(&c, "sim-kind", "sparse", E, sizeof E), 0);
    assert_int_equal(c.sim_kind, ROUND_SIMS_SPARSE);
    assert_int_equal(round_config_set(&c, "sim-kind", "traced", E, sizeof E), 0);
    assert_int_equal(c.sim_kind, ROUND_SIMS_TRACED);
}

static void test_status_json(void **state)
{
    (void)state;
    struct round_stats st;
    memset(&st, 0, sizeof st);
    round_config_default(&st.cfg);
    st.attached = true;
    st.cfg.rate = 0.5;
    st.cfg.strategy = EX_STRAT_RACE;
    st.cfg.seed = UINT64_MAX;
    st.rounds = 812;
    st.cues_total = 812 * 150;
    st.best_rank = EX_SCORE_BUG + 140;
    st.ns_record = 1234567;
    st.sum_round = 99;
    char buf[4096];
    assert_int_equal(round_status_json(&st, buf, sizeof buf), 0);
    /* it is one valid object that our own reader takes */
    static struct json_obj o, ph;
    assert_int_equal(json_parse_object(buf, strlen(buf), JSON_ALLOW_NESTED, &o, E, sizeof E), 0);
    uint64_t u;
    bool b;
    double d;
    const char *s;
    assert_int_equal(json_get_bool(&o, "attached", &b), 1);
    assert_true(b);
    assert_int_equal(json_get_double(&o, "rate", &d), 1);
    assert_true(d == 0.5);
    assert_int_equal(json_get_str(&o, "strategy", &s), 1);
    assert_string_equal(s, "race");
    assert_int_equal(json_get_u64(&o, "seed", &u), 1);
    assert_true(u == UINT64_MAX);
    assert_int_equal(json_get_u64(&o, "rounds", &u), 1);
    assert_int_equal(u, 812);
    assert_int_equal(json_get_bool(&o, "best_bug", &b), 1);
    assert_true(b);
    assert_int_equal(json_get_u64(&o, "best_suspicion", &u), 1);
    assert_int_equal(u, 140);
    assert_int_equal(json_get_u64(&o, "fragment_us", &u), 1);
    assert_int_equal(u, 1000);
    assert_int_equal(json_get_u64(&o, "tail_us", &u), 1);
    assert_int_equal(u, ROUND_DEFAULT_TAIL_NS / 1000);
    assert_int_equal(json_get_u64(&o, "tail_crashes", &u), 1);
    const struct json_field *f = json_get(&o, "last_ns");
    assert_non_null(f);
    assert_int_equal(json_parse_object(f->raw, f->rawlen, 0, &ph, E, sizeof E), 0);
    assert_int_equal(ph.n, 9);
    assert_int_equal(json_get_u64(&ph, "record", &u), 1);
    assert_int_equal(u, 1234567);
    f = json_get(&o, "sum_ns");
    assert_int_equal(json_parse_object(f->raw, f->rawlen, 0, &ph, E, sizeof E), 0);
    assert_int_equal(json_get_u64(&ph, "round", &u), 1);
    assert_int_equal(u, 99);
    /* a short buffer is reported, not overrun */
    char small[100];
    assert_int_equal(round_status_json(&st, small, sizeof small), -1);
    /* the whole status fits in a protocol line with room for the reply around it */
    assert_true(strlen(buf) < 3072);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_commands), cmocka_unit_test(test_attach_full),
        cmocka_unit_test(test_attach_defaults), cmocka_unit_test(test_attach_bad_values),
        cmocka_unit_test(test_bad_requests),    cmocka_unit_test(test_parse_rate),
        cmocka_unit_test(test_config_set),      cmocka_unit_test(test_status_json),
    };
    const char *filter = getenv("JINX_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("vmm/control_req", tests, NULL, NULL);
}
