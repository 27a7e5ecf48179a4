/* libvirt loaded on demand (libvirtdl.h). */
#include "kvm/libvirtdl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct libvirt_api api;
static char load_err[512];
static int loaded;

/* dlsym into a function pointer of any type (the cast ISO C leaves to POSIX). */
#define SYM(field, name)                                                                   \
    do {                                                                                   \
        void *s_ = dlsym(h, name);                                                         \
        if (!s_) {                                                                         \
            snprintf(load_err, sizeof load_err, "%s lacks %s: %s (install libvirt0 >= "    \
                     "1.2.9)", LIBVIRT_SONAME, name, dlerror());                           \
            return;                                                                        \
        }                                                                                  \
        memcpy(&api.field, &s_, sizeof s_);                                                \
    } while (0)

static void load(void)
{
    void *h = dlopen(LIBVIRT_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_err, sizeof load_err, "cannot load libvirt for the CPU model database: "
                 "%s (install libvirt0: apt-get install libvirt0; or run with --cpu-model "
                 "host)", dlerror());
        return;
    }
    SYM(set_error_func, "virSetErrorFunc");
    SYM(connect_open, "virConnectOpen");
    SYM(connect_close, "virConnectClose");
    SYM(last_error_message, "virGetLastErrorMessage");
    SYM(cpu_model_names, "virConnectGetCPUModelNames");
    SYM(baseline_cpu, "virConnectBaselineCPU");
    Dl_info info;
    void *any;
    memcpy(&any, &api.connect_open, sizeof any);
    char *real = dladdr(any, &info) && info.dli_fname ? realpath(info.dli_fname, NULL) : NULL;
    if (real && strlen(real) < sizeof api.path)
        strcpy(api.path, real);
    free(real);
    loaded = 1; /* the handle stays open for the process's life */
}

const struct libvirt_api *libvirt_api(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (!loaded) {
        snprintf(err, errlen, "%s", load_err);
        return NULL;
    }
    return &api;
}
