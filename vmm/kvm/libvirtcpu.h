/* libvirt's CPU model database, through its in-process test driver (no daemon; any
 * libvirt URI may be given for baselines). Used by cpu.c (a model's features) and
 * `jinx hosts baseline`. libvirt prints nothing: its errors come back in err. */
#ifndef JINX_LIBVIRTCPU_H
#define JINX_LIBVIRTCPU_H
#include <stddef.h>

#define LIBVIRT_TEST_URI "test:///default"

/* The features libvirt's model `model` has (virConnectBaselineCPU with
 * VIR_CONNECT_BASELINE_CPU_EXPAND_FEATURES over the model's XML): *names is an owned
 * array of *n owned strings (libvirtcpu_free_names). 0, or -1 with a message (an
 * unknown model names the models to choose from). */
int libvirtcpu_model_features(const char *uri, const char *model, char ***names, size_t *n,
                              char *err, size_t errlen);
void libvirtcpu_free_names(char **names, size_t n);

/* The richest model every host CPU in xmls can present (virConnectBaselineCPU; each
 * string a host <cpu> element or a whole `virsh capabilities` document). *model and
 * *cpu_xml (the baseline <cpu>: the model, plus features all hosts add to it, minus
 * features of the model some host lacks, policy 'disable') are owned (free). */
int libvirtcpu_baseline(const char *uri, const char *const *xmls, size_t n, char **model,
                        char **cpu_xml, char *err, size_t errlen);

/* The feature names in libvirt's <cpu> XML text with policy `want` (NULL: the ones the
 * CPU has: require, force or no policy), as above. */
int libvirtcpu_parse_features(const char *xml, const char *want, char ***names, size_t *n,
                              char *err, size_t errlen);

#endif
