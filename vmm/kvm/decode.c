#include "kvm/decode.h"
#include <capstone/capstone.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* One handle for the process: opening one costs far more than a decode, and cue points
 * are decoded one at a time anyway. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static csh handle;
static int opened; /* 0 not yet, 1 ok, -1 failed */

static int ensure_open(void)
{
    if (opened)
        return opened;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
        opened = -1;
        return opened;
    }
    cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
    opened = 1;
    return opened;
}

static bool is_string_op(unsigned id)
{
    switch (id) {
    case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
    case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
    case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
    case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
    case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
        return true;
    default:
        return false;
    }
}

/* A general register's value and width in bytes (0: not a general register). */
static int gpr_value(x86_reg r, const struct insn_regs *g, uint64_t *val)
{
    static const x86_reg r64[16] = {X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX,
                                    X86_REG_RSP, X86_REG_RBP, X86_REG_RSI, X86_REG_RDI,
                                    X86_REG_R8,  X86_REG_R9,  X86_REG_R10, X86_REG_R11,
                                    X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15};
    static const x86_reg r32[16] = {X86_REG_EAX, X86_REG_ECX, X86_REG_EDX, X86_REG_EBX,
                                    X86_REG_ESP, X86_REG_EBP, X86_REG_ESI, X86_REG_EDI,
                                    X86_REG_R8D, X86_REG_R9D, X86_REG_R10D, X86_REG_R11D,
                                    X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D};
    for (int i = 0; i < 16; i++) {
        if (r == r64[i]) {
            *val = g->gpr[i];
            return 8;
        }
        if (r == r32[i]) {
            *val = g->gpr[i] & 0xFFFFFFFFu;
            return 4;
        }
    }
    return 0;
}

/* base + index * scale + disp (+ fs/gs base); false when capstone's description holds a
 * register this cannot evaluate (a vector index, a 16-bit base). */
static bool effective_address(const cs_insn *insn, const x86_op_mem *m, uint64_t rip,
                              const struct insn_regs *g, uint64_t *ea)
{
    uint64_t a = (uint64_t)m->disp, v;
    bool addr32 = false;
    if (m->base == X86_REG_RIP) {
        a += rip + insn->size;
    } else if (m->base != X86_REG_INVALID) {
        int w = gpr_value(m->base, g, &v);
        if (!w)
            return false;
        addr32 |= w == 4;
        a += v;
    }
    if (m->index != X86_REG_INVALID) {
        int w = gpr_value(m->index, g, &v);
        if (!w)
            return false;
        addr32 |= w == 4;
        a += v * (uint64_t)m->scale;
    }
    if (addr32)
        a &= 0xFFFFFFFFu;
    if (m->segment == X86_REG_FS)
        a += g->fs_base;
    else if (m->segment == X86_REG_GS)
        a += g->gs_base;
    *ea = a;
    return true;
}

static bool is_stack_op(unsigned id)
{
    switch (id) {
    case X86_INS_PUSH: case X86_INS_POP: case X86_INS_PUSHF: case X86_INS_PUSHFQ:
    case X86_INS_PUSHFD: case X86_INS_POPF: case X86_INS_POPFQ: case X86_INS_POPFD:
    case X86_INS_CALL: case X86_INS_RET: case X86_INS_LEAVE: case X86_INS_ENTER:
        return true;
    default:
        return false;
    }
}

int decode_insn(const uint8_t *code, size_t len, uint64_t rip, struct insn_info *out)
{
    return decode_insn_regs(code, len, rip, NULL, out);
}

int decode_insn_regs(const uint8_t *code, size_t len, uint64_t rip, const struct insn_regs *regs,
                     struct insn_info *out)
{
    memset(out, 0, sizeof *out);
    if (!code || len == 0) {
        snprintf(out->text, sizeof out->text, "(no bytes)");
        return -1;
    }
    if (len > 15)
        len = 15; /* the longest x86 instruction */
    pthread_mutex_lock(&lock);
    if (ensure_open() < 0) {
        pthread_mutex_unlock(&lock);
        snprintf(out->text, sizeof out->text, "(capstone unavailable)");
        return -1;
    }
    cs_insn *insn = NULL;
    size_t n = cs_disasm(handle, code, len, rip, 1, &insn);
    if (n != 1) {
        pthread_mutex_unlock(&lock);
        snprintf(out->text, sizeof out->text, "(bad) %02x", code[0]);
        return -1;
    }
    out->len = insn->size;
    /* Long operand strings are cut to fit (the text is for people). */
    size_t m = strnlen(insn->mnemonic, sizeof insn->mnemonic);
    size_t o = strnlen(insn->op_str, sizeof insn->op_str);
    size_t pos = 0;
    for (size_t i = 0; i < m && pos + 1 < sizeof out->text; i++)
        out->text[pos++] = insn->mnemonic[i];
    if (o && pos + 1 < sizeof out->text)
        out->text[pos++] = ' ';
    for (size_t i = 0; i < o && pos + 1 < sizeof out->text; i++)
        out->text[pos++] = insn->op_str[i];
    out->text[pos] = '\0';
    const cs_x86 *x = &insn->detail->x86;
    out->string = is_string_op(insn->id);
    for (int i = 0; i < x->op_count; i++) {
        const cs_x86_op *op = &x->operands[i];
        if (op->type != X86_OP_MEM)
            continue;
        if (insn->id == X86_INS_LEA || insn->id == X86_INS_NOP)
            continue; /* an address computation, not an access */
        out->mem = true;
        if (op->size > out->mem_size)
            out->mem_size = op->size;
        /* Capstone 4 leaves access at 0 for some instructions: count them as reads. */
        bool rd = (op->access & CS_AC_READ) || !op->access, wr = (op->access & CS_AC_WRITE) != 0;
        out->reads |= rd;
        out->writes |= wr;
        if (out->nmem < INSN_MEM_MAX) {
            struct insn_mem *im = &out->op[out->nmem++];
            im->size = op->size;
            im->reads = rd;
            im->writes = wr;
            im->known = regs && effective_address(insn, &op->mem, rip, regs, &im->ea);
        }
    }
    out->rep = out->string && (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE);
    out->stack = is_stack_op(insn->id);
    out->pushf = insn->id == X86_INS_PUSHF || insn->id == X86_INS_PUSHFQ ||
                 insn->id == X86_INS_PUSHFD;
    if (out->string && !out->mem_size) {
        out->mem = true;
        out->mem_size = x->operands[0].size ? x->operands[0].size : 1;
    }
    out->atomic = out->mem && (x->prefix[0] == X86_PREFIX_LOCK || insn->id == X86_INS_XCHG);
    /* Capstone 4 gives the FPU/extended state saves and restores an 8-byte operand: the
     * area is 512 bytes (fxsave) or, for the xsave family, up to the size XCR0 selects
     * (at most 4 KiB here); a cue point clips it to the page that faulted. */
    int area = 0;
    switch (insn->id) {
    case X86_INS_FXSAVE: case X86_INS_FXSAVE64: case X86_INS_FXRSTOR: case X86_INS_FXRSTOR64:
        area = 512;
        break;
    case X86_INS_XSAVE: case X86_INS_XSAVE64: case X86_INS_XSAVEC: case X86_INS_XSAVEC64:
    case X86_INS_XSAVEOPT: case X86_INS_XSAVEOPT64: case X86_INS_XSAVES: case X86_INS_XSAVES64:
    case X86_INS_XRSTOR: case X86_INS_XRSTOR64: case X86_INS_XRSTORS: case X86_INS_XRSTORS64:
        area = 4096;
        break;
    default:
        break;
    }
    if (area && out->nmem == 1) {
        out->op[0].size = (uint32_t)area;
        out->mem_size = area;
    }
    /* Capstone 4's access flags miss the write of these read-modify-writes. */
    switch (insn->id) {
    case X86_INS_CMPXCHG: case X86_INS_CMPXCHG8B: case X86_INS_CMPXCHG16B:
    case X86_INS_XADD: case X86_INS_XCHG:
        if (out->mem)
            out->reads = out->writes = true;
        for (int i = 0; i < out->nmem; i++)
            out->op[i].reads = out->op[i].writes = true;
        break;
    default:
        break;
    }
    cs_free(insn, n);
    pthread_mutex_unlock(&lock);
    return 0;
}
