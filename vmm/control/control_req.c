/* Control requests: strict JSON in, a validated struct control_req out. */
#include "control/control_req.h"
#include "lib/json.h"
#include "rounds/round_config.h"
#include <stdio.h>
#include <string.h>

static const char *const cmd_names[] = {
    [CTL_PING] = "ping", [CTL_STATUS] = "status", [CTL_ATTACH] = "attach",
    [CTL_DETACH] = "detach", [CTL_FOLLOW] = "follow"};

const char *control_cmd_name(enum control_cmd c)
{
    return (unsigned)c < sizeof cmd_names / sizeof cmd_names[0] ? cmd_names[c] : "?";
}

static const char *const attach_fields[] = {"cmd",         "rate", "strategy", "depth",
                                            "sims",        "fragment_us", "tail_us", "seed", "follow",
                                            "workers",     "sim_kind",
                                            "max_duty_pct", NULL};

static bool known(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (!strcmp(*list, key))
            return true;
    return false;
}

/* An unsigned integer field in [lo, hi]: 1 set, 0 absent, -1 error (message written). */
static int uint_field(const struct json_obj *o, const char *key, uint64_t lo, uint64_t hi,
                      uint64_t *out, char *err, size_t errlen)
{
    int r = json_get_u64(o, key, out);
    if (r == 1 && *out >= lo && *out <= hi)
        return 1;
    if (r == 0)
        return 0;
    snprintf(err, errlen, "\"%s\" must be an integer from %llu to %llu", key,
             (unsigned long long)lo, (unsigned long long)hi);
    return -1;
}

static int parse_attach(const struct json_obj *o, struct control_req *req, char *err,
                        size_t errlen)
{
    struct round_config *c = &req->cfg;
    uint64_t n;
    int r;
    const struct json_field *f;
    if ((f = json_get(o, "rate"))) {
        double rate;
        if (json_field_double(f, &rate) != 1 || !(rate > 0) || rate > ROUND_MAX_RATE) {
            snprintf(err, errlen, "\"rate\" must be a number of rounds per second, more than 0 "
                     "and at most %g", ROUND_MAX_RATE);
            return -1;
        }
        c->rate = rate;
    }
    const char *s;
    if ((r = json_get_str(o, "strategy", &s)) != 0) {
        if (r < 0 || ex_strategy_from_name(s, &c->strategy) < 0) {
            snprintf(err, errlen, "\"strategy\" must be one of \"portfolio\", \"jinx\", \"pct\", "
                     "\"pctvb\", \"race\", \"random\", \"bounded\"");
            return -1;
        }
    }
    if ((r = uint_field(o, "depth", 1, EX_PCT_MAX_DEPTH, &n, err, errlen)) < 0)
        return -1;
    if (r)
        c->params.pct_depth = (uint32_t)n;
    if ((r = uint_field(o, "sims", 1, ROUND_MAX_SIMS, &n, err, errlen)) < 0)
        return -1;
    if (r)
        c->params.max_schedules = (uint32_t)n;
    if ((r = uint_field(o, "fragment_us", ROUND_MIN_FRAGMENT_NS / 1000,
                        ROUND_MAX_FRAGMENT_NS / 1000, &n, err, errlen)) < 0)
        return -1;
    if (r)
        c->fragment_ns = n * 1000;
    if ((r = uint_field(o, "tail_us", 0, ROUND_MAX_TAIL_NS / 1000, &n, err, errlen)) < 0)
        return -1;
    if (r)
        c->tail_ns = n * 1000;
    if ((r = uint_field(o, "workers", 0, ROUND_MAX_WORKERS, &n, err, errlen)) < 0)
        return -1;
    if (r)
        c->workers = (int)n;
    if ((r = json_get_str(o, "sim_kind", &s)) != 0) {
        if (r < 0 || round_sim_kind_from_name(s, &c->sim_kind) < 0) {
            snprintf(err, errlen, "\"sim_kind\" must be one of \"auto\", \"traced\", \"sparse\"");
            return -1;
        }
    }
    if ((r = uint_field(o, "seed", 0, UINT64_MAX, &n, err, errlen)) < 0)
        return -1;
    if (r)
        c->seed = n;
    if ((r = uint_field(o, "max_duty_pct", 1, 100, &n, err, errlen)) < 0)
        return -1;
    if (r)
        c->max_duty_pct = (int)n;
    if ((r = json_get_bool(o, "follow", &req->follow)) < 0) {
        snprintf(err, errlen, "\"follow\" must be true or false");
        return -1;
    }
    return round_config_check(c, err, errlen);
}

int control_parse_request(const char *line, size_t len, struct control_req *req, char *err,
                          size_t errlen)
{
    struct json_obj local; /* ~12 KiB: fine on a thread stack */
    struct json_obj *o = &local;
    char jerr[200];
    memset(req, 0, sizeof *req);
    round_config_default(&req->cfg);
    if (len > CONTROL_MAX_LINE) {
        snprintf(err, errlen, "request longer than %d bytes", CONTROL_MAX_LINE);
        return -1;
    }
    if (json_parse_object(line, len, 0, o, jerr, sizeof jerr) < 0) {
        snprintf(err, errlen, "malformed request (one JSON object per line expected): %s", jerr);
        return -1;
    }
    const char *cmd;
    int r = json_get_str(o, "cmd", &cmd);
    if (r == 0) {
        snprintf(err, errlen, "missing \"cmd\" (attach, detach, status, ping or follow)");
        return -1;
    }
    if (r < 0) {
        snprintf(err, errlen, "\"cmd\" must be a string");
        return -1;
    }
    bool found = false;
    for (size_t i = 0; i < sizeof cmd_names / sizeof cmd_names[0]; i++)
        if (!strcmp(cmd, cmd_names[i])) {
            req->cmd = (enum control_cmd)i;
            found = true;
        }
    if (!found) {
        char shown[48];
        snprintf(shown, sizeof shown, "%s", cmd);
        snprintf(err, errlen, "unknown command \"%s\" (expected attach, detach, status, ping or "
                 "follow)", shown);
        return -1;
    }
    static const char *const only_cmd[] = {"cmd", NULL};
    const char *const *allowed = req->cmd == CTL_ATTACH ? attach_fields : only_cmd;
    for (int i = 0; i < o->n; i++)
        if (!known(allowed, o->f[i].key)) {
            snprintf(err, errlen, "unknown field \"%s\" for %s%s", o->f[i].key, cmd,
                     req->cmd == CTL_ATTACH ? " (expected rate, strategy, depth, sims, "
                                              "fragment_us, tail_us, seed, max_duty_pct, workers, sim_kind, follow)"
                                            : " (it takes no arguments)");
            return -1;
        }
    if (req->cmd == CTL_ATTACH)
        return parse_attach(o, req, err, errlen);
    if (req->cmd == CTL_FOLLOW)
        req->follow = true;
    return 0;
}
