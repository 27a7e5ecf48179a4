/* /proc/cpuinfo and /sys/devices/system/cpu from the guest's machine (procsys.h). */
#include "linux/procsys.h"
#include "linux/procself.h"
#include "kvm/cpumodel.h"
#include "kvm/vm.h"
#include "linux/files_int.h"
#include "linux/schedres.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CPU_DIR "/sys/devices/system/cpu"

/* Linux's names for the CPUID feature bits programs look for in "flags" (a subset, in
 * Linux's order): leaf, register (0 eax .. 3 edx), bit. */
struct flagbit { const char *name; uint32_t leaf; uint8_t reg, bit; };
static const struct flagbit flagbits[] = {
    {"fpu", 1, 3, 0}, {"vme", 1, 3, 1}, {"de", 1, 3, 2}, {"pse", 1, 3, 3}, {"tsc", 1, 3, 4},
    {"msr", 1, 3, 5}, {"pae", 1, 3, 6}, {"mce", 1, 3, 7}, {"cx8", 1, 3, 8}, {"apic", 1, 3, 9},
    {"sep", 1, 3, 11}, {"mtrr", 1, 3, 12}, {"pge", 1, 3, 13}, {"mca", 1, 3, 14},
    {"cmov", 1, 3, 15}, {"pat", 1, 3, 16}, {"pse36", 1, 3, 17}, {"clflush", 1, 3, 19},
    {"mmx", 1, 3, 23}, {"fxsr", 1, 3, 24}, {"sse", 1, 3, 25}, {"sse2", 1, 3, 26},
    {"ht", 1, 3, 28}, {"syscall", 0x80000001, 3, 11}, {"nx", 0x80000001, 3, 20},
    {"pdpe1gb", 0x80000001, 3, 26}, {"rdtscp", 0x80000001, 3, 27}, {"lm", 0x80000001, 3, 29},
    {"pni", 1, 2, 0}, {"pclmulqdq", 1, 2, 1}, {"ssse3", 1, 2, 9}, {"fma", 1, 2, 12},
    {"cx16", 1, 2, 13}, {"pcid", 1, 2, 17}, {"sse4_1", 1, 2, 19}, {"sse4_2", 1, 2, 20},
    {"x2apic", 1, 2, 21}, {"movbe", 1, 2, 22}, {"popcnt", 1, 2, 23}, {"aes", 1, 2, 25},
    {"xsave", 1, 2, 26}, {"avx", 1, 2, 28}, {"f16c", 1, 2, 29}, {"rdrand", 1, 2, 30},
    {"hypervisor", 1, 2, 31}, {"lahf_lm", 0x80000001, 2, 0}, {"abm", 0x80000001, 2, 5},
    {"sse4a", 0x80000001, 2, 6}, {"3dnowprefetch", 0x80000001, 2, 8},
    {"fsgsbase", 7, 1, 0}, {"bmi1", 7, 1, 3}, {"hle", 7, 1, 4}, {"avx2", 7, 1, 5},
    {"smep", 7, 1, 7}, {"bmi2", 7, 1, 8}, {"erms", 7, 1, 9}, {"invpcid", 7, 1, 10},
    {"rtm", 7, 1, 11}, {"avx512f", 7, 1, 16}, {"avx512dq", 7, 1, 17}, {"rdseed", 7, 1, 18},
    {"adx", 7, 1, 19}, {"smap", 7, 1, 20}, {"avx512ifma", 7, 1, 21},
    {"clflushopt", 7, 1, 23}, {"clwb", 7, 1, 24}, {"avx512cd", 7, 1, 28},
    {"sha_ni", 7, 1, 29}, {"avx512bw", 7, 1, 30}, {"avx512vl", 7, 1, 31},
    {"avx512vbmi", 7, 2, 1}, {"umip", 7, 2, 2}, {"pku", 7, 2, 3}, {"avx512_vbmi2", 7, 2, 6},
    {"gfni", 7, 2, 8}, {"vaes", 7, 2, 9}, {"vpclmulqdq", 7, 2, 10}, {"avx512_vnni", 7, 2, 11},
    {"avx512_bitalg", 7, 2, 12}, {"avx512_vpopcntdq", 7, 2, 14}, {"rdpid", 7, 2, 22},
    {"movdiri", 7, 2, 27}, {"movdir64b", 7, 2, 28}, {"fsrm", 7, 3, 4},
    {"serialize", 7, 3, 14}, {"avx512_fp16", 7, 3, 23},
};

static uint32_t reg_of(const struct kvm_cpuid_entry2 *e, int r)
{
    return !e ? 0 : r == 0 ? e->eax : r == 1 ? e->ebx : r == 2 ? e->ecx : e->edx;
}

static const struct kvm_cpuid_entry2 *leaf(struct vm *vm, uint32_t l)
{
    return vm->cpuid ? cpumodel_entry(vm->cpuid, l, 0) : NULL;
}

/* The brand string (leaves 0x80000002-4), trimmed; "" when the model has none. */
static void brand(struct vm *vm, char out[49])
{
    memset(out, 0, 49);
    for (uint32_t i = 0; i < 3; i++) {
        const struct kvm_cpuid_entry2 *e = leaf(vm, 0x80000002 + i);
        for (int r = 0; r < 4; r++) {
            uint32_t v = reg_of(e, r);
            memcpy(out + i * 16 + r * 4, &v, 4);
        }
    }
    for (int i = 0; i < 48; i++)
        if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
            out[i] = out[i] ? '?' : 0;
    char *s = out;
    while (*s == ' ')
        s++;
    memmove(out, s, strlen(s) + 1);
}

char *procsys_cpuinfo(struct vm *vm, size_t *len)
{
    const struct kvm_cpuid_entry2 *l0 = leaf(vm, 0), *l1 = leaf(vm, 1);
    char vendor[13] = {0};
    uint32_t v3[3] = {reg_of(l0, 1), reg_of(l0, 3), reg_of(l0, 2)};
    memcpy(vendor, v3, 12);
    for (int i = 0; i < 12; i++)
        if ((unsigned char)vendor[i] < 0x20 || (unsigned char)vendor[i] > 0x7e)
            vendor[i] = '?';
    uint32_t a = reg_of(l1, 0), fam = (a >> 8) & 0xF, model = (a >> 4) & 0xF;
    if (fam == 0xF)
        fam += (a >> 20) & 0xFF;
    if (fam == 6 || fam >= 0xF)
        model |= ((a >> 16) & 0xF) << 4;
    char name[49];
    brand(vm, name);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    int ncpu = schedres_ncpus(vm);
    for (int c = 0; c < ncpu; c++) {
        fprintf(f, "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\n"
                   "model name\t: %s\nstepping\t: %u\ncpu MHz\t\t: 1000.000\n"
                   "physical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\n"
                   "apicid\t\t: %d\ninitial apicid\t: %d\nfpu\t\t: yes\nfpu_exception\t: yes\n"
                   "cpuid level\t: %u\nwp\t\t: yes\nflags\t\t:",
                c, vendor, fam, model, name[0] ? name : "unknown", a & 0xF, ncpu, c, ncpu,
                c, c, reg_of(l0, 0));
        for (size_t i = 0; i < sizeof flagbits / sizeof flagbits[0]; i++) {
            const struct flagbit *fb = &flagbits[i];
            if (reg_of(leaf(vm, fb->leaf), fb->reg) >> fb->bit & 1)
                fprintf(f, " %s", fb->name);
        }
        fprintf(f, "\nbogomips\t: 2000.00\nclflush size\t: 64\ncache_alignment\t: 64\n"
                   "address sizes\t: 46 bits physical, 48 bits virtual\npower management:\n\n");
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Appends a getdents64 record (d_off: the next record's position, as load_dents makes). */
static size_t dent(uint8_t *buf, size_t at, uint64_t ino, const char *name, uint8_t type)
{
    size_t nl = strlen(name), reclen = (19 + nl + 1 + 7) & ~(size_t)7;
    memset(buf + at, 0, reclen);
    int64_t next = (int64_t)(at + reclen);
    uint16_t rl = (uint16_t)reclen;
    memcpy(buf + at, &ino, 8);
    memcpy(buf + at + 8, &next, 8);
    memcpy(buf + at + 16, &rl, 2);
    buf[at + 18] = type;
    memcpy(buf + at + 19, name, nl);
    return at + reclen;
}

/* A directory: /sys/devices/system/cpu (cpu >= ncpu) or its cpuK (empty). Its stat is
 * the host's directory of that name when it has one (else /'s): a directory. */
static int dir_file(const char *p, int cpu, int ncpu, struct gfile **out)
{
    size_t cap = 256 + (size_t)ncpu * 32, at = 0;
    uint8_t *d = malloc(cap);
    struct gfile *f = calloc(1, sizeof *f);
    char *path = strdup(p);
    if (!d || !f || !path) {
        free(d);
        free(f);
        free(path);
        return -ENOMEM;
    }
    at = dent(d, at, 1, ".", 4 /* DT_DIR */);
    at = dent(d, at, 2, "..", 4);
    if (cpu >= ncpu) {
        for (int c = 0; c < ncpu; c++) {
            char nm[16];
            snprintf(nm, sizeof nm, "cpu%d", c);
            at = dent(d, at, 16 + (uint64_t)c, nm, 4);
        }
        at = dent(d, at, 3, "online", 8 /* DT_REG */);
        at = dent(d, at, 4, "possible", 8);
        at = dent(d, at, 5, "present", 8);
    }
    int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    f->hostfd = fd;
    f->dir = true;
    f->dents = d;
    f->dents_len = at;
    f->path = path;
    atomic_init(&f->refs, 1);
    *out = f;
    return 0;
}

enum kind { K_NONE, K_CPUINFO, K_DIR, K_LIST, K_CPU };

/* Which of these files given names (p: it without trailing slashes), or -ENOENT (a cpuK
 * past the guest's CPUs); *cpu: K for K_CPU. */
static int classify(int ncpu, const char *given, char p[64], int *cpu)
{
    size_t l = strlen(given);
    if (l >= 64)
        return K_NONE;
    memcpy(p, given, l + 1);
    for (;;) { /* opendir("/sys/devices/system/cpu/"), lstat("/sys/devices/system/cpu/.") */
        if (l > 1 && p[l - 1] == '/')
            p[--l] = 0;
        else if (l > 2 && p[l - 1] == '.' && p[l - 2] == '/')
            p[l -= 2] = 0;
        else
            break;
    }
    const char *rest = !strncmp(p, CPU_DIR, strlen(CPU_DIR)) ? p + strlen(CPU_DIR) : NULL;
    if (!strcmp(p, "/proc/cpuinfo"))
        return K_CPUINFO;
    if (rest && !*rest)
        return K_DIR;
    if (rest && (!strcmp(rest, "/online") || !strcmp(rest, "/possible") ||
                 !strcmp(rest, "/present")))
        return K_LIST;
    if (rest && !strncmp(rest, "/cpu", 4) && rest[4] >= '0' && rest[4] <= '9') {
        char *end;
        long c = strtol(rest + 4, &end, 10);
        if (*end || (rest[4] == '0' && rest[5]))
            return K_NONE;
        if (c >= ncpu)
            return -ENOENT;
        *cpu = (int)c;
        return K_CPU;
    }
    return K_NONE;
}

int procsys_path_fd(struct vm *vm, const char *given)
{
    char p[64];
    int cpu = -1, k = classify(schedres_ncpus(vm), given, p, &cpu);
    if (k <= 0)
        return k < 0 ? k : -EEXIST;
    int fd = open(p, O_PATH | O_CLOEXEC);
    if (fd < 0 && (k == K_DIR || k == K_CPU))
        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -ENOENT : fd;
}

int procsys_open(struct vm *vm, const char *given, bool writes, bool dir, struct gfile **out)
{
    char p[64];
    int ncpu = schedres_ncpus(vm), cpu = -1, k = classify(ncpu, given, p, &cpu);
    if (k < 0)
        return k;
    if (k == K_NONE)
        return 1;
    bool is_dir = k == K_DIR || k == K_CPU;
    if (writes)
        return is_dir ? -EISDIR : -EACCES;
    if (is_dir)
        return dir_file(p, k == K_DIR ? ncpu : cpu, ncpu, out);
    if (dir)
        return -ENOTDIR;
    char *text = NULL;
    size_t len = 0;
    if (k == K_CPUINFO) {
        text = procsys_cpuinfo(vm, &len);
    } else {
        int w = ncpu > 1 ? asprintf(&text, "0-%d\n", ncpu - 1) : asprintf(&text, "0\n");
        if (w < 0)
            return -ENOMEM;
        len = (size_t)w;
    }
    return procself_text_file(p, text, len, out);
}
