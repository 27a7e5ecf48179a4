/* libvirt's CPU model database (libvirtcpu.h). */
#include "kvm/libvirtcpu.h"
#include "kvm/cpumodel.h"
#include "kvm/libvirtdl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quiet(void *ud, virErrorPtr e) { (void)ud; (void)e; }

static virConnectPtr open_uri(const struct libvirt_api *v, const char *uri, char *err,
                              size_t errlen)
{
    v->set_error_func(NULL, quiet);
    virConnectPtr c = v->connect_open(uri ? uri : LIBVIRT_TEST_URI);
    if (!c)
        snprintf(err, errlen, "libvirt: cannot open %s: %s", uri ? uri : LIBVIRT_TEST_URI,
                 v->last_error_message());
    return c;
}

void libvirtcpu_free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* The value of attribute a in the tag starting at p (up to its '>'), or "". */
static void tag_attr(const char *p, const char *a, char *out, size_t outlen)
{
    out[0] = 0;
    const char *te = strchr(p, '>');
    size_t n = strlen(a);
    for (const char *q = p; te && (q = strstr(q, a)) && q < te; q += n) {
        if (q[-1] != ' ' || q[n] != '=' || (q[n + 1] != '\'' && q[n + 1] != '"'))
            continue;
        const char *v = q + n + 2, *ve = strchr(v, q[n + 1]);
        if (ve && ve < te && (size_t)(ve - v) < outlen) {
            memcpy(out, v, (size_t)(ve - v));
            out[ve - v] = 0;
        }
        return;
    }
}

int libvirtcpu_parse_features(const char *xml, const char *want, char ***names, size_t *n,
                              char *err, size_t errlen)
{
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    for (const char *p = xml; (p = strstr(p, "<feature ")); p++) {
        char name[CPUFEAT_NAME_MAX], policy[32];
        tag_attr(p, "name", name, sizeof name);
        tag_attr(p, "policy", policy, sizeof policy);
        if (!name[0]) {
            snprintf(err, errlen, "libvirt returned a <feature> without a name");
            goto fail;
        }
        if (want ? strcmp(policy, want)
                 : policy[0] && strcmp(policy, "require") && strcmp(policy, "force"))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(*names, cap * sizeof *nn);
            if (!nn)
                goto oom;
            *names = nn;
        }
        if (!((*names)[*n] = strdup(name)))
            goto oom;
        (*n)++;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    libvirtcpu_free_names(*names, *n);
    *names = NULL;
    *n = 0;
    return -1;
}

/* "qemu64, kvm64, ..." into out: the models libvirt knows, for an error message. */
static void model_list(const struct libvirt_api *v, virConnectPtr c, char *out, size_t outlen)
{
    char **models = NULL;
    int k = v->cpu_model_names(c, "x86_64", &models, 0);
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < k; i++) {
        int w = snprintf(out + used, outlen - used, "%s%s", i ? ", " : "", models[i]);
        if (w > 0 && (size_t)w < outlen - used)
            used += (size_t)w;
        free(models[i]);
    }
    free(models);
}

int libvirtcpu_model_features(const char *uri, const char *model, char ***names, size_t *n,
                              char *err, size_t errlen)
{
    if (!cpumodel_name_ok(model)) {
        snprintf(err, errlen, "--cpu-model '%s': not a CPU model name (letters, digits, '.', "
                 "'_', '-')", model);
        return -1;
    }
    const struct libvirt_api *v = libvirt_api(err, errlen);
    virConnectPtr c = v ? open_uri(v, uri, err, errlen) : NULL;
    if (!c)
        return -1;
    char xml[256];
    snprintf(xml, sizeof xml, "<cpu><arch>x86_64</arch><model>%s</model></cpu>", model);
    const char *xmls[2] = {xml, xml};
    char *r = v->baseline_cpu(c, xmls, 2, VIR_CONNECT_BASELINE_CPU_EXPAND_FEATURES);
    int rc = -1;
    if (!r) {
        char list[2048], why[256];
        snprintf(why, sizeof why, "%s", v->last_error_message());
        model_list(v, c, list, sizeof list);
        snprintf(err, errlen, "--cpu-model %s: libvirt does not know this model (%s)%s%s%s",
                 model, why, list[0] ? "; its x86 models: " : "", list,
                 list[0] ? ", or host" : "");
    } else {
        rc = libvirtcpu_parse_features(r, NULL, names, n, err, errlen);
        free(r);
    }
    v->connect_close(c);
    return rc;
}

/* The host <cpu> element of a capabilities document, or the text itself. */
static char *host_cpu(const char *xml)
{
    const char *h = strstr(xml, "<host>");
    const char *b = h ? strstr(h, "<cpu") : NULL;
    const char *e = b ? strstr(b, "</cpu>") : NULL;
    if (!e)
        return strdup(xml);
    return strndup(b, (size_t)(e + 6 - b));
}

int libvirtcpu_baseline(const char *uri, const char *const *xmls, size_t n, char **model,
                        char **cpu_xml, char *err, size_t errlen)
{
    *model = *cpu_xml = NULL;
    const char **cpus = calloc(n ? n : 1, sizeof *cpus);
    if (!cpus) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = -1;
    size_t got = 0;
    for (; got < n; got++)
        if (!(cpus[got] = host_cpu(xmls[got]))) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    const struct libvirt_api *v = libvirt_api(err, errlen);
    virConnectPtr c = v ? open_uri(v, uri, err, errlen) : NULL;
    if (!c)
        goto out;
    char *r = v->baseline_cpu(c, cpus, (unsigned)n, 0);
    if (!r) {
        snprintf(err, errlen, "libvirt could not compute a baseline: %s", v->last_error_message());
    } else {
        const char *m = strstr(r, "<model");
        const char *mb = m ? strchr(m, '>') : NULL;
        const char *me = mb ? strstr(mb, "</model>") : NULL;
        if (!me || !(*model = strndup(mb + 1, (size_t)(me - mb - 1)))) {
            snprintf(err, errlen, "libvirt's baseline names no model");
            free(r);
        } else {
            *cpu_xml = r;
            rc = 0;
        }
    }
    v->connect_close(c);
out:
    for (size_t i = 0; i < got; i++)
        free((char *)cpus[i]);
    free(cpus);
    return rc;
}
