/* jinx hosts baseline (hosts_cmd.h). */
#include "cli/hosts_cmd.h"
#include "kvm/libvirtcpu.h"
#include "lib/json.h"
#include "lib/options.h"
#include "lib/util.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOSTS_EXIT_USAGE 2
#define HOST_XML_MAX (4u << 20)

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jinx hosts baseline [--uri URI] [--json] HOST.xml...\n"
        "\n"
        "Prints the richest libvirt CPU model that every host can present: run campaigns\n"
        "with --cpu-model NAME and their dumps replay on any of the hosts. Each HOST.xml is\n"
        "a host's CPU: `virsh capabilities` saved on that host, or its <cpu> element.\n"
        "\n"
        "  --uri URI   the libvirt connection that computes it (default " LIBVIRT_TEST_URI ":\n"
        "              in-process, no daemon)\n"
        "  --json      {\"model\":..., \"extra\":[...], \"disabled\":[...]} on stdout\n"
        "\n"
        "exit status: 0 a model found, 2 usage error or no common model.\n");
}

static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(HOST_XML_MAX + 1);
    size_t len = buf ? fread(buf, 1, HOST_XML_MAX + 1, f) : 0;
    fclose(f);
    if (!buf || len > HOST_XML_MAX || memchr(buf, 0, len)) {
        snprintf(err, errlen, "%s: %s", path, !buf ? "out of memory"
                 : len > HOST_XML_MAX ? "larger than 4 MiB: not a host CPU description"
                                      : "binary data: not a host CPU description");
        free(buf);
        return NULL;
    }
    buf[len] = 0;
    if (!strstr(buf, "<cpu")) {
        snprintf(err, errlen, "%s: no <cpu> element (save `virsh capabilities` on the host)",
                 path);
        free(buf);
        return NULL;
    }
    return buf;
}

static void print_list(FILE *f, char **names, size_t n, bool json)
{
    for (size_t i = 0; i < n; i++) {
        if (json) {
            fprintf(f, "%s", i ? "," : "");
            json_fput_str(f, names[i], true);
        } else {
            fprintf(f, " %s", names[i]);
        }
    }
}

static int baseline(const char *uri, bool json, char **files, int nfiles)
{
    char err[1024];
    char **xmls = calloc((size_t)nfiles, sizeof *xmls);
    int rc = HOSTS_EXIT_USAGE, got = 0;
    char *model = NULL, *cpu = NULL, **extra = NULL, **dis = NULL;
    size_t nextra = 0, ndis = 0;
    if (!xmls) {
        jx_err("out of memory");
        return rc;
    }
    for (; got < nfiles; got++)
        if (!(xmls[got] = read_file(files[got], err, sizeof err))) {
            jx_err("hosts baseline: %s", err);
            goto out;
        }
    if (libvirtcpu_baseline(uri, (const char *const *)xmls, (size_t)nfiles, &model, &cpu, err,
                            sizeof err) < 0 ||
        libvirtcpu_parse_features(cpu, "require", &extra, &nextra, err, sizeof err) < 0 ||
        libvirtcpu_parse_features(cpu, "disable", &dis, &ndis, err, sizeof err) < 0) {
        jx_err("hosts baseline: %s", err);
        goto out;
    }
    if (json) {
        fprintf(stdout, "{\"model\":");
        json_fput_str(stdout, model, true);
        fprintf(stdout, ",\"hosts\":%d,\"extra\":[", nfiles);
        print_list(stdout, extra, nextra, true);
        fprintf(stdout, "],\"disabled\":[");
        print_list(stdout, dis, ndis, true);
        fprintf(stdout, "]}\n");
    } else {
        printf("%s\n", model);
        fprintf(stderr, "jinx hosts: %s is the richest CPU model all %d hosts can present: "
                "run with --cpu-model %s\n", model, nfiles, model);
        if (nextra) {
            fprintf(stderr, "jinx hosts: every host also has (not used: jinx models have no "
                    "extra features):");
            print_list(stderr, extra, nextra, false);
            fprintf(stderr, "\n");
        }
    }
    if (ndis) {
        jx_err("hosts baseline: some host lacks features of %s (libvirt disables them), so "
               "--cpu-model %s would be refused there: choose an older model. Missing:",
               model, model);
        print_list(stderr, dis, ndis, false);
        fprintf(stderr, "\n");
        goto out;
    }
    rc = 0;
out:
    libvirtcpu_free_names(extra, nextra);
    libvirtcpu_free_names(dis, ndis);
    free(model);
    free(cpu);
    for (int i = 0; i < got; i++)
        free(xmls[i]);
    free(xmls);
    return rc;
}

int cmd_hosts(int argc, char **argv)
{
    static const struct option lo[] = {{"uri", required_argument, 0, 'u'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *uri = NULL;
    bool json = false;
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    cli_init(&cl, "hosts", argc, argv, posv);
    int c;
    while ((c = cli_next(&cl, "h", lo, NULL)) != CLI_END) {
        switch (c) {
        case CLI_ERROR:
            jx_err("%s (see jinx hosts --help)", cl.err);
            return HOSTS_EXIT_USAGE;
        case 'u': uri = optarg; break;
        case 'j': json = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return HOSTS_EXIT_USAGE;
        }
    }
    if (cl.npos < 1 || strcmp(cl.pos[0], "baseline")) {
        jx_err("hosts: expected `jinx hosts baseline HOST.xml...`");
        usage(stderr);
        return HOSTS_EXIT_USAGE;
    }
    if (cl.npos < 2) {
        jx_err("hosts baseline: no HOST.xml given (save `virsh capabilities` on each host)");
        return HOSTS_EXIT_USAGE;
    }
    return baseline(uri, json, cl.pos + 1, cl.npos - 1);
}
