/* results/N.json: writing, and strict parsing of what may be anyone's file.
 *
 *   {"version":1,"task":3,"image":"images/bin/circle","sha256":"<64 hex>","seeds":"4-4",
 *    "status":"found","runs":1,"seed":4,"seconds":0.52,"outcome":"SIGABRT",
 *    "function":"raise+0x40","race":["a+0x1 write","b+0x2 read"],"cues":312,
 *    "replayable":true,"dump":"dumps/3/bug.jinxdump"}
 *
 * "status" is "found", "nothing" or "could_not_test" (then "reason"). */
#include "campaign/campaign.h"
#include "lib/json.h"
#include "lib/util.h"
#include <stdio.h>
#include <string.h>

#define RESULT_VERSION 1

const char *campaign_status_name(enum camp_status s)
{
    return s == CAMP_FOUND ? "found" : s == CAMP_NOTEST ? "could_not_test" : "nothing";
}

static void str_field(FILE *f, const char *key, const char *val)
{
    fprintf(f, ",\"%s\":", key);
    json_fput_str(f, val, true);
}

int campaign_result_write(FILE *f, const struct camp_result *r)
{
    fprintf(f, "{\"version\":%d,\"task\":%u", RESULT_VERSION, r->task);
    str_field(f, "image", r->image);
    str_field(f, "sha256", r->sha256);
    fprintf(f, ",\"seeds\":\"%llu-%llu\"", (unsigned long long)r->first_seed,
            (unsigned long long)r->last_seed);
    str_field(f, "status", campaign_status_name(r->status));
    fprintf(f, ",\"runs\":%llu,\"seed\":%llu,\"seconds\":%.3f", (unsigned long long)r->runs,
            (unsigned long long)r->seed, r->seconds);
    if (r->status == CAMP_FOUND) {
        str_field(f, "outcome", r->outcome);
        str_field(f, "function", r->function);
        fprintf(f, ",\"race\":");
        race_pair_fput_json(f, r->has_race, r->race[0], r->race[1]);
        fprintf(f, ",\"cues\":%llu,\"replayable\":%s", (unsigned long long)r->cues,
                r->replayable ? "true" : "false");
        if (r->dump[0])
            str_field(f, "dump", r->dump);
        else
            fprintf(f, ",\"dump\":null");
    } else if (r->status == CAMP_NOTEST) {
        str_field(f, "reason", r->reason);
    }
    fprintf(f, "}\n");
    return ferror(f) ? -1 : 0;
}

/* A string field into out: printable ASCII only (it goes to terminals and XML). */
static int get_text(const struct json_obj *o, const char *key, char *out, size_t cap,
                    bool required, char *err, size_t errlen)
{
    const char *s;
    int rc = json_get_str(o, key, &s);
    if (rc == 0 && !required) {
        out[0] = '\0';
        return 0;
    }
    if (rc != 1)
        return jx_fail(err, errlen, "\"%s\": %s", key, rc ? "not a string" : "missing");
    if (strlen(s) >= cap)
        return jx_fail(err, errlen, "\"%s\": longer than %zu bytes", key, cap - 1);
    for (const char *c = s; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            return jx_fail(err, errlen, "\"%s\": a byte that is not printable ASCII", key);
    snprintf(out, cap, "%s", s);
    return 0;
}

static int get_u64(const struct json_obj *o, const char *key, uint64_t *v, char *err,
                   size_t errlen)
{
    int rc = json_get_u64(o, key, v);
    if (rc != 1)
        return jx_fail(err, errlen, "\"%s\": %s", key,
                       rc ? "not an unsigned integer" : "missing");
    return 0;
}

static int parse_race(const struct json_obj *o, struct camp_result *r, char *err,
                      size_t errlen)
{
    const struct json_field *fl = json_get(o, "race");
    if (!fl)
        return jx_fail(err, errlen, "\"race\": missing");
    if (fl->type == JSON_NULL)
        return 0;
    if (fl->type != JSON_ARRAY)
        return jx_fail(err, errlen, "\"race\": neither null nor an array");
    size_t pos = 0, elen;
    const char *el;
    int k = 0, rc;
    while ((rc = json_array_next(fl->raw, fl->rawlen, &pos, &el, &elen)) == 1) {
        if (k == 2 || json_decode_string(el, elen, r->race[k], RACE_SIDE_LEN) < 0)
            return jx_fail(err, errlen, "\"race\": not two strings of at most %d bytes",
                           RACE_SIDE_LEN - 1);
        for (const char *c = r->race[k]; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                return jx_fail(err, errlen, "\"race\": a byte that is not printable ASCII");
        k++;
    }
    if (rc < 0 || k != 2)
        return jx_fail(err, errlen, "\"race\": not an array of two strings");
    r->has_race = true;
    return 0;
}

static int parse_found(const struct json_obj *o, struct camp_result *r, char *err,
                       size_t errlen)
{
    if (get_text(o, "outcome", r->outcome, sizeof r->outcome, true, err, errlen) < 0 ||
        get_text(o, "function", r->function, sizeof r->function, true, err, errlen) < 0 ||
        parse_race(o, r, err, errlen) < 0 || get_u64(o, "cues", &r->cues, err, errlen) < 0)
        return -1;
    if (!r->outcome[0])
        return jx_fail(err, errlen, "\"outcome\": empty");
    if (json_get_bool(o, "replayable", &r->replayable) != 1)
        return jx_fail(err, errlen, "\"replayable\": missing or not a boolean");
    const struct json_field *d = json_get(o, "dump");
    if (!d)
        return jx_fail(err, errlen, "\"dump\": missing");
    if (d->type != JSON_NULL) {
        char want[sizeof r->dump];
        snprintf(want, sizeof want, "dumps/%u/bug.jinxdump", r->task);
        if (get_text(o, "dump", r->dump, sizeof r->dump, true, err, errlen) < 0)
            return -1;
        if (strcmp(r->dump, want))
            return jx_fail(err, errlen, "\"dump\": not %s, where run-task puts the task's dump",
                           want);
    }
    return 0;
}

int campaign_result_parse(const char *buf, size_t len, struct camp_result *r, char *err,
                          size_t errlen)
{
    static struct json_obj o; /* 8 KiB arena: not on the stack */
    memset(r, 0, sizeof *r);
    char why[200];
    if (len > JSON_MAX_TEXT)
        return jx_fail(err, errlen, "larger than %d bytes", JSON_MAX_TEXT);
    if (json_parse_object(buf, len, JSON_ALLOW_NESTED, &o, why, sizeof why) < 0)
        return jx_fail(err, errlen, "not a JSON object: %s", why);
    uint64_t v;
    if (get_u64(&o, "version", &v, err, errlen) < 0)
        return -1;
    if (v != RESULT_VERSION)
        return jx_fail(err, errlen, "\"version\": %llu, this jinx reads %d (rerun the task)",
                       (unsigned long long)v, RESULT_VERSION);
    if (get_u64(&o, "task", &v, err, errlen) < 0)
        return -1;
    if (v >= CAMP_MAX_TASKS)
        return jx_fail(err, errlen, "\"task\": %llu is out of range", (unsigned long long)v);
    r->task = (uint32_t)v;
    char seeds[48], status[24];
    if (get_text(&o, "image", r->image, sizeof r->image, true, err, errlen) < 0 ||
        get_text(&o, "sha256", r->sha256, sizeof r->sha256, true, err, errlen) < 0 ||
        get_text(&o, "seeds", seeds, sizeof seeds, true, err, errlen) < 0 ||
        get_text(&o, "status", status, sizeof status, true, err, errlen) < 0 ||
        get_u64(&o, "runs", &r->runs, err, errlen) < 0 ||
        get_u64(&o, "seed", &r->seed, err, errlen) < 0)
        return -1;
    if (campaign_parse_seeds(seeds, &r->first_seed, &r->last_seed) < 0)
        return jx_fail(err, errlen, "\"seeds\": not FIRST-LAST");
    if (json_get_double(&o, "seconds", &r->seconds) != 1 || !(r->seconds >= 0) ||
        r->seconds > 1e9)
        return jx_fail(err, errlen, "\"seconds\": missing or not a number from 0 to 1e9");
    if (!strcmp(status, "found")) {
        r->status = CAMP_FOUND;
        return parse_found(&o, r, err, errlen);
    }
    if (!strcmp(status, "could_not_test")) {
        r->status = CAMP_NOTEST;
        return get_text(&o, "reason", r->reason, sizeof r->reason, true, err, errlen);
    }
    if (strcmp(status, "nothing"))
        return jx_fail(err, errlen, "\"status\": '%s' is none of found, nothing, "
                       "could_not_test", status);
    r->status = CAMP_NONE;
    return 0;
}

/* "fn+0x1c W" -> "fn W": the pair by function, as the crash function is (the same
 * racing functions reached through another instruction are the same bug). */
static void side_fn(const char *side, char *out, size_t cap)
{
    size_t name = strcspn(side, "+ ");
    const char *kind = strchr(side, ' ');
    snprintf(out, cap, "%.*s%s", (int)name, side, kind ? kind : "");
}

void campaign_signature(const struct camp_result *r, char *out, size_t cap)
{
    const char *base = strrchr(r->image, '/');
    char fn[sizeof r->function];
    snprintf(fn, sizeof fn, "%.*s", (int)strcspn(r->function, "+"), r->function);
    if (!fn[0])
        snprintf(fn, sizeof fn, "-");
    char a[RACE_SIDE_LEN], b[RACE_SIDE_LEN];
    side_fn(r->race[0], a, sizeof a);
    side_fn(r->race[1], b, sizeof b);
    if (r->has_race && strcmp(a, b) > 0) {
        char t[RACE_SIDE_LEN];
        memcpy(t, a, sizeof t);
        memcpy(a, b, sizeof a);
        memcpy(b, t, sizeof b);
    }
    if (r->has_race)
        snprintf(out, cap, "%s: %s in %s, race %s / %s", base ? base + 1 : r->image,
                 r->outcome, fn, a, b);
    else
        snprintf(out, cap, "%s: %s in %s, no race", base ? base + 1 : r->image, r->outcome, fn);
}

/* Where an abort, an assertion or a kill of the thread itself is on its way to SIGABRT. */
static bool abort_path(const char *frame)
{
    static const char *const names[] = {"raise", "abort", "__assert_fail",
        "__assert_fail_base", "__assert_perror_fail", "__libc_message", "__libc_fatal",
        "__pthread_kill_implementation", "__pthread_kill_internal", "pthread_kill",
        "gsignal", "__GI_raise", "__GI_abort", "__GI___assert_fail"};
    size_t n = strcspn(frame, "+");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && !strncmp(frame, names[i], n))
            return true;
    return false;
}

void campaign_crash_function(const char *rip_fn, const char (*bt)[CAMP_BT_LEN], int nbt,
                             char *out, size_t cap)
{
    int last = -1;
    for (int i = 0; i < nbt; i++)
        if (abort_path(bt[i]))
            last = i;
    /* Frames between the abort path's are unreliable (code without frame pointers): the
     * one after its last frame is the caller that gave up. */
    const char *fn = last >= 0 && last + 1 < nbt ? bt[last + 1] : rip_fn;
    snprintf(out, cap, "%s", fn);
}
