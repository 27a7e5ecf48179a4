#include "linux/backtrace.h"
#include "kvm/layout.h"

int bt_walk(const struct bt_mem *m, uint64_t rip, uint64_t rsp, uint64_t rbp, uint64_t *out,
            int max)
{
    int n = 0;
    if (max <= 0)
        return 0;
    out[n++] = rip;
    /* A leaf function (or one stopped before its prologue) has no frame of its own: its
     * return address is on top of the stack. Take it when it follows a call rel32. */
    uint64_t top;
    uint8_t call[5];
    if (n < max && m->read(m->ctx, rsp, &top, 8) && m->is_text(m->ctx, top) && top >= 5 &&
        m->read(m->ctx, top - 5, call, 5) && call[0] == 0xE8) {
        uint64_t frame_ret;
        if (!(rbp && rbp + 8 > rbp && m->read(m->ctx, rbp + 8, &frame_ret, 8) &&
              frame_ret == top))
            out[n++] = top;
    }
    int before = n;
    for (int depth = 0; n < max && depth < 64; depth++) {
        uint64_t frame[2];
        if (rbp == 0 || (rbp & 7) || rbp > USER_TOP || !m->read(m->ctx, rbp, frame, sizeof frame))
            break;
        if (frame[1] < PAGE_SIZE || frame[1] >= USER_TOP)
            break;
        out[n++] = frame[1];
        if (frame[0] <= rbp)
            break;
        rbp = frame[0];
    }
    if (n - before >= 2)
        return n;
    /* libc is built without frame pointers: scan the stack for return addresses. */
    n = before;
    for (uint64_t a = rsp; n < max && a < rsp + 4096 && a >= rsp; a += 8) {
        uint64_t w;
        uint8_t ins[6];
        if (!m->read(m->ctx, a, &w, 8))
            break;
        if (w < 6 || !m->is_text(m->ctx, w) || !m->read(m->ctx, w - 6, ins, 6))
            continue;
        bool is_call = ins[1] == 0xE8 ||                              /* call rel32 */
                       (ins[4] == 0xFF && (ins[5] & 0xF8) == 0xD0) || /* call *%reg */
                       (ins[0] == 0xFF && ins[1] == 0x15);            /* call *rel(%rip) */
        if (is_call && w != out[n - 1])
            out[n++] = w;
    }
    return n;
}
