/* Files of a campaign directory written whole or not at all (campaign.h): tasks.tsv,
 * results/N.json, report.json, junit.xml. A reader (merge, another node over a shared
 * file system, a rerun of the same task) sees the old file or the new one, never a part. */
#include "campaign/campaign.h"
#include "lib/util.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

FILE *campaign_atomic_open(const char *dir, const char *name, struct camp_atomic *a)
{
    if ((size_t)snprintf(a->path, sizeof a->path, "%s/%s", dir, name) >= sizeof a->path ||
        (size_t)snprintf(a->tmp, sizeof a->tmp, "%s/.%s.tmp.%d", dir, name, (int)getpid()) >=
            sizeof a->tmp) {
        jx_err("%s/%s: path too long", dir, name);
        return NULL;
    }
    FILE *f = fopen(a->tmp, "w");
    if (!f)
        jx_err("cannot write %s: %s", a->tmp, strerror(errno));
    return f;
}

int campaign_atomic_close(FILE *f, const struct camp_atomic *a, bool keep)
{
    int rc = keep ? 0 : -1;
    if (keep && (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)) {
        jx_err("cannot write %s: %s", a->tmp, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && rename(a->tmp, a->path) < 0) {
        jx_err("cannot rename %s to %s: %s", a->tmp, a->path, strerror(errno));
        rc = -1;
    }
    if (rc < 0)
        unlink(a->tmp);
    return rc;
}
