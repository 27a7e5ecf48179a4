/* libvirt, loaded only when a command needs it (dlopen of libvirt.so.0). Linking it
 * would load libvirt and its ~50 libraries (glib, gnutls, curl, krb5, ...) at every
 * start of jinx-vmm, jinx and jinxctl: 11-24 ms of process start on the reference host,
 * paid even when the CPU model comes from the cache (cpucache.h) or a dump. */
#ifndef JINX_LIBVIRTDL_H
#define JINX_LIBVIRTDL_H
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stddef.h>

#define LIBVIRT_SONAME "libvirt.so.0"

/* The part of libvirt's API jinx uses, with libvirt's own types. */
struct libvirt_api {
    void (*set_error_func)(void *userData, virErrorFunc handler);
    virConnectPtr (*connect_open)(const char *name);
    int (*connect_close)(virConnectPtr conn);
    const char *(*last_error_message)(void);
    int (*cpu_model_names)(virConnectPtr conn, const char *arch, char ***models,
                           unsigned int flags);
    char *(*baseline_cpu)(virConnectPtr conn, const char **xmlCPUs, unsigned int ncpus,
                          unsigned int flags);
    char path[4096];   /* the library file it was loaded from (realpath), or "" */
};

/* libvirt loaded (once per process; thread-safe), or NULL with a message naming what is
 * missing and what to install. */
const struct libvirt_api *libvirt_api(char *err, size_t errlen);

#endif
