/* Round records for a crash dump (dumpround.h). */
#include "rounds/dumpround.h"
#include "dump/roundrec.h"
#include "dump/snapfile.h"
#include "kvm/snapshot.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dumpround_free(struct dump_record *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++)
        free(r[i].data);
    free(r);
}

/* Moves the buffer into the next record. */
static int take(struct dump_record *r, size_t *n, uint32_t type, struct dbuf *b)
{
    if (b->oom || !b->p) {
        dbuf_free(b);
        return -1;
    }
    r[*n] = (struct dump_record){.type = type, .flags = 0, .data = b->p, .len = b->len};
    (*n)++;
    memset(b, 0, sizeof *b);
    return 0;
}

int dumpround_build(struct vm *vm, const struct round_retired *rr, struct dump_record **out,
                    size_t *nout, char *err, size_t errlen)
{
    *out = NULL;
    *nout = 0;
    struct dump_record *r = calloc(8, sizeof *r);
    size_t n = 0;
    struct dbuf b = {0};
    struct snap_image img;
    struct rr_var *vars = NULL;
    size_t nvars = 0;
    const char *what = "out of memory";
    if (!r)
        goto fail;
    what = err;
    if (snapshot_export(rr->snap, &img, err, errlen) < 0)
        goto fail;
    int rc = snapfile_encode(&img, &b);
    snapimg_free(&img);
    what = "encoding the snapshot";
    if (rc < 0 || take(r, &n, DREC_SNAPSHOT, &b) < 0)
        goto fail;
    what = "encoding the schedule";
    if (rr_schedule_encode(&rr->sched, &b) < 0 || take(r, &n, DREC_SCHEDULE, &b) < 0)
        goto fail;
    what = "encoding the traces";
    if (rr_trace_encode(&rr->recorded, &b) < 0 || take(r, &n, DREC_TRACE_RECORDED, &b) < 0 ||
        rr_trace_encode(&rr->retired, &b) < 0 || take(r, &n, DREC_TRACE_RETIRED, &b) < 0)
        goto fail;
    struct rr_score sc = {
        .round = rr->round, .sim = (uint32_t)rr->sim, .nsim = (uint32_t)rr->nsim,
        .outcome = rr->score.outcome, .bug = rr->score.bug,
        .races_adjacent = rr->score.races_adjacent, .avio_new = rr->score.avio_new,
        .new_writers = rr->score.new_writers, .novel_pairs = rr->score.novel_pairs,
        .suspicion = rr->score.suspicion, .rank = rr->score.rank, .cue_limit = rr->cue_limit,
        .cues_sim = rr->cues_sim, .cues_live = rr->cues_live};
    snprintf(sc.strategy, sizeof sc.strategy, "%s", rr->strategy);
    snprintf(sc.why, sizeof sc.why, "%s", rr->why);
    what = "encoding the score";
    if (rr_score_encode(&sc, &b) < 0 || take(r, &n, DREC_SCORE, &b) < 0)
        goto fail;
    what = "finding the shared variables";
    if (rr_shared_vars(&rr->retired, &vars, &nvars) < 0)
        goto fail;
    for (size_t i = 0; i < nvars; i++)
        vm_symbolize(vm, vars[i].addr, vars[i].sym, sizeof vars[i].sym);
    if (rr_vars_encode(vars, nvars, &b) < 0 || take(r, &n, DREC_SHARED_VARS, &b) < 0)
        goto fail;
    struct rr_vmopts o = {.mem = vm->opt.mem, .seed = vm->opt.seed,
                          .thread_stack = vm->opt.thread_stack,
                          .max_vcpus = (uint32_t)vm->opt.max_vcpus, .argc = vm->argc,
                          .envc = vm->envc, .argv = vm->argv, .envp = vm->envp};
    what = "encoding the VM options (argument too long?)";
    if (rr_vmopts_encode(&o, &b) < 0 || take(r, &n, DREC_VMOPTS, &b) < 0)
        goto fail;
    free(vars);
    *out = r;
    *nout = n;
    return 0;
fail:
    if (what != err)
        snprintf(err, errlen, "round records: %s", what);
    dbuf_free(&b);
    free(vars);
    dumpround_free(r, n);
    return -1;
}
