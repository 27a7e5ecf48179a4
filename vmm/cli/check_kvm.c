#include "cli/check_kvm.h"
#include "kvm/kvmdiag.h"
#include "lib/json.h"
#include "lib/options.h"
#include "lib/util.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: jinx-vmm check-kvm [--json] [--root DIR]\n"
               "  Says whether this machine can run Jinx's guests (/dev/kvm opens and makes a\n"
               "  VM) and, if not, why and what to do. Exit 0 usable, 1 not, 2 bad usage.\n"
               "  --json      one JSON object: usable, diagnosis, message\n"
               "  --root DIR  diagnose the files below DIR (a container's root) instead of\n"
               "              this machine; no device is opened\n"
               "  Environment: JINX_KVM_DEVICE=PATH opens PATH instead of /dev/kvm, here and\n"
               "  in every jinx-vmm run (a test switch: /dev/null makes KVM unusable)\n");
}

/* The real thing: open, API version, a VM made and closed. 0, or -1 with msg set. */
static int probe(char *msg, size_t len, int *api)
{
    const char *dev = kvm_device_path();
    const char *env = kvm_device_overridden() ? " (JINX_KVM_DEVICE)" : "";
    int fd = open(dev, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        if (!*env)
            return -1; /* the diagnosis of the host's files says why */
        snprintf(msg, len, "%s%s: %s", dev, env, strerror(errno));
        return -2;
    }
    *api = ioctl(fd, KVM_GET_API_VERSION, 0);
    if (*api < 0) {
        snprintf(msg, len, "%s%s is not a KVM device (KVM_GET_API_VERSION: %s)", dev, env,
                 strerror(errno));
        close(fd);
        return -2;
    }
    if (*api != KVM_API_VERSION) {
        snprintf(msg, len, "%s: KVM API version %d, Jinx needs %d", dev, *api, KVM_API_VERSION);
        close(fd);
        return -2;
    }
    int vm = ioctl(fd, KVM_CREATE_VM, 0);
    if (vm < 0) {
        snprintf(msg, len, "%s opens but KVM_CREATE_VM fails (%s): too many VMs, or a "
                 "kernel that cannot host one here", dev, strerror(errno));
        close(fd);
        return -2;
    }
    close(vm);
    close(fd);
    snprintf(msg, len, "%s: usable (KVM API %d)", dev, *api);
    return 0;
}

static const struct option lo[] = {
    {"json", no_argument, 0, 'j'}, {"root", required_argument, 0, 'r'},
    {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};

int cmd_check_kvm(int argc, char **argv)
{
    bool json = false;
    const char *root = NULL;
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    cli_init(&cl, "check-kvm", argc, argv, posv);
    int c;
    while ((c = cli_next(&cl, "h", lo, NULL)) != CLI_END) {
        switch (c) {
        case CLI_ERROR:
            jx_err("%s (see jinx-vmm check-kvm --help)", cl.err);
            return CHECK_KVM_EXIT_USAGE;
        case 'j': json = true; break;
        case 'r': root = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return CHECK_KVM_EXIT_USAGE;
        }
    }
    if (cl.npos) {
        jx_err("check-kvm: takes no arguments, got '%s' (see jinx-vmm check-kvm --help)",
               cl.pos[0]);
        return CHECK_KVM_EXIT_USAGE;
    }
    char msg[512];
    enum kvm_diag d;
    int api = 0, rc = root ? -1 : probe(msg, sizeof msg, &api);
    if (rc == 0)
        d = KVM_DIAG_OK;
    else if (rc == -2)
        d = KVM_DIAG_OPEN_FAILED;
    else {
        d = kvm_diagnose(root, msg, sizeof msg);
        if (d == KVM_DIAG_OK && !root) /* it opens now: a race with a module load */
            d = probe(msg, sizeof msg, &api) == 0 ? KVM_DIAG_OK : KVM_DIAG_OPEN_FAILED;
    }
    if (json) {
        char buf[1024];
        struct jbuf b;
        jb_init(&b, buf, sizeof buf);
        jb_printf(&b, "{\"usable\":%s,\"diagnosis\":", d == KVM_DIAG_OK ? "true" : "false");
        jb_str(&b, kvm_diag_name(d));
        jb_raw(&b, ",\"message\":");
        jb_str(&b, msg);
        jb_raw(&b, "}");
        printf("%s\n", buf);
    } else {
        printf("%s\n", msg);
    }
    fflush(stdout);
    return d == KVM_DIAG_OK ? 0 : CHECK_KVM_EXIT_UNUSABLE;
}
