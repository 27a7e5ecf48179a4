/* `jinx campaign plan` (images x seed chunks -> tasks.tsv) and the `jinx campaign`
 * dispatcher. */
#include "campaign/campaign.h"
#include "lib/options.h"
#include "linux/elfparse.h"
#include "explorer/explorer.h"
#include "lib/util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void campaign_usage(FILE *f)
{
    fprintf(f,
        "usage: jinx campaign plan --budget DUR --seeds N [--chunk K] [--first-seed S]\n"
        "                          [--strategy NAME] [--force] -o DIR IMAGE... [-- ARGS...]\n"
        "       jinx campaign run-task DIR [--index N] [--json]   (N: $SLURM_ARRAY_TASK_ID)\n"
        "       jinx campaign merge DIR [--quiet | --json]\n"
        "\n"
        "Many images x many seeds as independent tasks for Slurm job arrays or GNU parallel\n"
        "(docs/campaigns.md; scripts/slurm/jinx-campaign.sbatch).\n"
        "\n"
        "plan: seeds FIRST..FIRST+N-1 of every IMAGE, split into chunks of K seeds (default\n"
        "1); one task per image x chunk, ordered chunk by chunk so that a partly run\n"
        "campaign has covered every image. Each task is `jinx test IMAGE --seeds A-B\n"
        "--budget DUR --strategy NAME -- ARGS`. Directories among the IMAGEs are skipped.\n"
        "  --budget DUR    wall-time budget of each task (default 60s)\n"
        "  --seeds N       seeds per image (default 10)\n"
        "  --chunk K       seeds per task (default 1)\n"
        "  --first-seed S  the first seed (default 1)\n"
        "  --strategy S    jinx test's whole-run strategy (default portfolio)\n"
        "  -o, --out DIR   the campaign directory (created; holds tasks.tsv, results/, dumps/)\n"
        "  --force         replace an existing DIR/tasks.tsv (old results become stale)\n"
        "\n"
        "run-task exit status: 0 nothing found, 1 a bug was found, 2 usage or campaign error\n"
        "(no result written: rerun it), 3 could not test (result written, with the reason).\n");
}

/* Splits the seeds of each image into tasks (chunk-major order). */
static int plan_tasks(char **images, int nimg, uint64_t first, uint64_t nseeds,
                      uint64_t chunk, const char *budget, const char *strategy, int nargs,
                      char **args, FILE *out, size_t *ntasks)
{
    static struct camp_task t;
    char line[CAMP_MAX_LINE];
    uint64_t nchunks = (nseeds + chunk - 1) / chunk;
    if (nchunks * (uint64_t)nimg > CAMP_MAX_TASKS) {
        jx_err("campaign plan: %llu tasks; at most %d (raise --chunk)",
               (unsigned long long)(nchunks * (uint64_t)nimg), CAMP_MAX_TASKS);
        return -1;
    }
    *ntasks = 0;
    for (uint64_t c = 0; c < nchunks; c++) {
        for (int i = 0; i < nimg; i++) {
            memset(&t, 0, sizeof t);
            t.index = (uint32_t)(*ntasks);
            snprintf(t.image, sizeof t.image, "%s", images[2 * i]);
            snprintf(t.sha256, sizeof t.sha256, "%s", images[2 * i + 1]);
            t.first_seed = first + c * chunk;
            t.last_seed = t.first_seed + chunk - 1;
            if (t.last_seed > first + nseeds - 1)
                t.last_seed = first + nseeds - 1;
            snprintf(t.budget, sizeof t.budget, "%s", budget);
            snprintf(t.strategy, sizeof t.strategy, "%s", strategy);
            t.nargs = nargs;
            for (int a = 0; a < nargs; a++)
                snprintf(t.args[a], sizeof t.args[a], "%s", args[a]);
            if (campaign_task_format(&t, line, sizeof line) < 0) {
                jx_err("campaign plan: task %zu does not fit in a line of tasks.tsv (a tab "
                       "or newline in %s?)", *ntasks, t.image);
                return -1;
            }
            fprintf(out, "%s\n", line);
            (*ntasks)++;
        }
    }
    return 0;
}

/* The images as (absolute path, sha256) pairs in out[2i], out[2i+1] (owned strings). */
static int collect_images(char **pos, int npos, char **out, int *nimg)
{
    *nimg = 0;
    for (int i = 0; i < npos; i++) {
        struct stat st;
        if (stat(pos[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            fprintf(stderr, "jinx: campaign plan: skipping directory %s\n", pos[i]);
            continue;
        }
        struct elf_image probe;
        char err[512];
        if (elf_open(pos[i], &probe, err, sizeof err) < 0) {
            jx_err("campaign plan: %s", err);
            return -1;
        }
        elf_free(&probe);
        char *abs = realpath(pos[i], NULL);
        uint8_t d[SHA256_LEN];
        char hex[2 * SHA256_LEN + 1];
        if (!abs || strlen(abs) >= CAMP_PATH_LEN || sha256_file(abs, d) < 0) {
            jx_err("campaign plan: %s: cannot resolve or read it: %s", pos[i],
                   !abs || strlen(abs) < CAMP_PATH_LEN ? strerror(errno) : "path too long");
            free(abs);
            return -1;
        }
        sha256_hex(d, hex);
        char *h = strdup(hex);
        if (!h) {
            free(abs);
            return -1;
        }
        out[2 * *nimg] = abs;
        out[2 * *nimg + 1] = h;
        (*nimg)++;
    }
    if (!*nimg) {
        jx_err("campaign plan: no IMAGE given (only directories?)");
        return -1;
    }
    return 0;
}

static int mkdir_p1(const char *dir, const char *sub)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s%s%s", dir, sub ? "/" : "", sub ? sub : "");
    if (mkdir(p, 0755) < 0 && errno != EEXIST) {
        jx_err("campaign plan: cannot create %s: %s", p, strerror(errno));
        return -1;
    }
    return 0;
}

static int write_plan(const char *dir, char **img, int nimg, uint64_t first, uint64_t nseeds,
                      uint64_t chunk, const char *budget, const char *strategy, int nargs,
                      char **args, size_t *ntasks)
{
    struct camp_atomic a;
    FILE *f = campaign_atomic_open(dir, "tasks.tsv", &a);
    if (!f)
        return -1;
    fprintf(f, "# jinx campaign tasks, version 1 (docs/campaigns.md)\n"
            "# %d images x seeds %llu-%llu in chunks of %llu; budget %s per task; strategy %s\n"
            "# INDEX\tIMAGE\tSHA256\tSEEDS\tBUDGET\tSTRATEGY\tARGS\n", nimg,
            (unsigned long long)first, (unsigned long long)(first + nseeds - 1),
            (unsigned long long)chunk, budget, strategy);
    int rc = plan_tasks(img, nimg, first, nseeds, chunk, budget, strategy, nargs, args, f,
                        ntasks);
    return campaign_atomic_close(f, &a, rc == 0);
}

int campaign_plan_cmd(int argc, char **argv)
{
    static const struct option lo[] = {
        {"budget", required_argument, 0, 'b'}, {"seeds", required_argument, 0, 's'},
        {"chunk", required_argument, 0, 'k'}, {"first-seed", required_argument, 0, 'f'},
        {"strategy", required_argument, 0, 'S'}, {"out", required_argument, 0, 'o'},
        {"force", no_argument, 0, 'F'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *budget = "60s", *strategy = "portfolio", *dir = NULL;
    uint64_t nseeds = 10, chunk = 1, first = 1, ns;
    bool force = false;
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    cli_init(&cl, "campaign plan", argc, argv, posv);
    int c;
    while ((c = cli_next(&cl, "ho:", lo, NULL)) != CLI_END) {
        switch (c) {
        case 'b':
            if (!parse_duration(optarg, &ns) || !ns || strlen(optarg) >= 32 ||
                strpbrk(optarg, " \t\n")) {
                jx_err("--budget %s: expected a duration such as 60s or 5m", optarg);
                return CAMP_EXIT_USAGE;
            }
            budget = optarg;
            break;
        case 's': case 'k': case 'f': {
            uint64_t v;
            if (!parse_u64(optarg, &v) || v < 1 || v > 1000000000ULL) {
                jx_err("--%s %s: expected a number from 1 to 1000000000",
                       c == 's' ? "seeds" : c == 'k' ? "chunk" : "first-seed", optarg);
                return CAMP_EXIT_USAGE;
            }
            *(c == 's' ? &nseeds : c == 'k' ? &chunk : &first) = v;
            break;
        }
        case 'S': {
            enum ex_online_kind k;
            if (strlen(optarg) >= CAMP_STRATEGY_LEN || ex_online_from_name(optarg, &k) < 0) {
                jx_err("--strategy %s: expected portfolio (the default), pct, pos, random or "
                       "rf (jinx test --strategy)", optarg);
                return CAMP_EXIT_USAGE;
            }
            strategy = optarg;
            break;
        }
        case 'o': dir = optarg; break;
        case 'F': force = true; break;
        case 'h': campaign_usage(stdout); return 0;
        default:
            jx_err("%s (see jinx campaign --help)", c == CLI_ERROR ? cl.err : "bad option");
            return CAMP_EXIT_USAGE;
        }
    }
    if (!dir) {
        jx_err("campaign plan: no -o DIR given (the campaign directory)");
        return CAMP_EXIT_USAGE;
    }
    /* The IMAGEs come before "--", the program's arguments after it. */
    int nimgs = cl.npos, nargs = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            nargs = argc - i - 1;
            nimgs = cl.npos - nargs;
            break;
        }
    if (nargs > CAMP_MAX_ARGS) {
        jx_err("campaign plan: more than %d program arguments", CAMP_MAX_ARGS);
        return CAMP_EXIT_USAGE;
    }
    for (int i = 0; i < nargs; i++)
        if (!cl.pos[nimgs + i][0] || strlen(cl.pos[nimgs + i]) >= CAMP_ARG_LEN) {
            jx_err("campaign plan: program argument %d is empty or longer than %d bytes",
                   i + 1, CAMP_ARG_LEN - 1);
            return CAMP_EXIT_USAGE;
        }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tasks.tsv", dir);
    if (!force && access(path, F_OK) == 0) {
        jx_err("campaign plan: %s exists (a planned campaign): use another directory, or "
               "--force to replace it", path);
        return CAMP_EXIT_USAGE;
    }
    char **img = calloc(2 * (size_t)(nimgs > 0 ? nimgs : 1), sizeof *img);
    int nimg = 0, ret = CAMP_EXIT_USAGE;
    size_t ntasks = 0;
    if (!img)
        return CAMP_EXIT_USAGE;
    if (collect_images(cl.pos, nimgs, img, &nimg) == 0 && mkdir_p1(dir, NULL) == 0 &&
        mkdir_p1(dir, "results") == 0 && mkdir_p1(dir, "dumps") == 0 &&
        write_plan(dir, img, nimg, first, nseeds, chunk, budget, strategy, nargs,
                   cl.pos + nimgs, &ntasks) == 0) {
        printf("jinx campaign: %zu tasks (%d images x %llu chunks of %llu seeds) in %s\n",
               ntasks, nimg, (unsigned long long)((nseeds + chunk - 1) / chunk),
               (unsigned long long)chunk, path);
        printf("run them: sbatch --array=0-%zu%%8 scripts/slurm/jinx-campaign.sbatch %s\n"
               "      or: seq 0 %zu | parallel -j 2 jinx campaign run-task %s --index {}\n"
               "then:     jinx campaign merge %s\n", ntasks - 1, dir, ntasks - 1, dir, dir);
        ret = 0;
    }
    for (int i = 0; i < 2 * nimg; i++)
        free(img[i]);
    free(img);
    return ret;
}

int campaign_main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        campaign_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CAMP_EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "plan"))
        return campaign_plan_cmd(argc - 1, argv + 1);
    if (!strcmp(argv[1], "run-task"))
        return campaign_run_task_cmd(argc - 1, argv + 1);
    if (!strcmp(argv[1], "merge"))
        return campaign_merge_cmd(argc - 1, argv + 1);
    jx_err("unknown campaign command '%s' (plan, run-task, merge; see jinx campaign --help)",
           argv[1]);
    return CAMP_EXIT_USAGE;
}
