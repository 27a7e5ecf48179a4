/* Unit tests for the round records of a .jinxdump: vmm/dump/snapfile.c (SNAPSHOT) and
 * vmm/dump/roundrec.c (schedule, traces, score, shared variables, VM options). Round trips
 * (parse(encode(x)) == x, and re-encoding is byte-identical), every truncation refused,
 * hostile values refused, and dump_round_parse over a whole dump. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bytes.h"
#include "kvm/guestmem.h"
#include "dump/roundrec.h"
#include "dump/snapfile.h"

#define MEM (16ULL << 20)
#define NFRAMES (MEM / PAGE_SIZE)

/* A small but complete image: two threads, a three-level table chain mapping one page. */
struct sample {
    struct snap_image s;
    uint8_t pages[5][PAGE_SIZE];
    uint8_t xsave[600];
};

static void set_bit(uint64_t *bm, uint64_t f) { bm[f / 64] |= 1ULL << (f % 64); }

static void sample_image(struct sample *x)
{
    memset(x, 0, sizeof *x);
    struct snap_image *s = &x->s;
    s->mem = MEM;
    s->nvcpus = 2;
    s->v = calloc(2, sizeof *s->v);
    s->next_tid = 3;
    s->live = 2;
    s->blocked = 1;
    s->wait_counter = 7;
    s->vtime = 123456789;
    s->rng = 0xfeedface;
    s->sigact[6] = 1;
    s->nvmas = 2;
    s->vmas = calloc(2, sizeof *s->vmas);
    s->vmas[0] = (struct vma){.start = 0x400000, .end = 0x40c000};
    /* a lazy one (linux/mm.h: MAP_NORESERVE), read-write */
    s->vmas[1] = (struct vma){.start = 0x7effffe00000, .end = 0x7f0000000000, .lazy = 1, .prot = 3};
    s->brk_base = s->brk_cur = 0x40c000;
    s->frame_bitmap = calloc((NFRAMES + 63) / 64, 8);
    for (uint64_t f = 0; f < GPA_POOL / PAGE_SIZE; f++)
        set_bit(s->frame_bitmap, f);
    uint64_t data = GPA_POOL / PAGE_SIZE + 5, pt = NFRAMES - 3, pd = NFRAMES - 2,
             pdpt = NFRAMES - 1;
    set_bit(s->frame_bitmap, data);
    set_bit(s->frame_bitmap, pt);
    set_bit(s->frame_bitmap, pd);
    set_bit(s->frame_bitmap, pdpt);
    s->frames_used = GPA_POOL / PAGE_SIZE + 4;
    s->frames_next = data + 1;
    s->table_cursor = pt;
    s->ntables = 3;
    s->tables = calloc(3, sizeof *s->tables);
    s->tables[0] = (struct snapimg_table){pt, 1};
    s->tables[1] = (struct snapimg_table){pd, 2};
    s->tables[2] = (struct snapimg_table){pdpt, 3};
    s->pml4_user[0] = pdpt * PAGE_SIZE | PTE_P | PTE_W | PTE_U;
    uint64_t e;
    memset(x->pages, 0, sizeof x->pages);
    memset(x->pages[0], 0xAB, PAGE_SIZE); /* the data page */
    e = data * PAGE_SIZE | PTE_P | PTE_W | PTE_U;
    memcpy(x->pages[1] + 8 * 0x400 / 8, &e, 8); /* pt[0x80]... any slot */
    e = pt * PAGE_SIZE | PTE_P | PTE_W | PTE_U;
    memcpy(x->pages[2] + 16, &e, 8);
    e = pd * PAGE_SIZE | PTE_P | PTE_W | PTE_U;
    memcpy(x->pages[3], &e, 8);
    s->npages = 4;
    s->pages = calloc(4, sizeof *s->pages);
    s->pages[0] = (struct snapimg_page){data, x->pages[0]};
    s->pages[1] = (struct snapimg_page){pt, x->pages[1]};
    s->pages[2] = (struct snapimg_page){pd, x->pages[2]};
    s->pages[3] = (struct snapimg_page){pdpt, x->pages[3]};
    for (size_t i = 0; i < sizeof x->xsave; i++)
        x->xsave[i] = (uint8_t)(i * 7 + 1);
    struct snapimg_vcpu *v = &s->v[0];
    v->flags = SNAPF_EXISTS | SNAPF_HAS_KVM | SNAPF_RESULT_IN_RAX;
    v->tid = 1;
    v->state = SNAP_T_BLOCKED;
    v->wait_addr = 0x40b000;
    v->wait_deadline = UINT64_MAX;
    v->wait_result = -110;
    v->regs.rip = 0x401000;
    v->regs.rsp = 0x7efffffff000;
    v->sregs.cr3 = GPA_PML4;
    v->sregs.cs.selector = 0x23;
    v->xsave = x->xsave;
    v->xsave_len = sizeof x->xsave;
    v = &s->v[1];
    v->flags = SNAPF_EXISTS | SNAPF_START;
    v->tid = 2;
    v->state = SNAP_T_RUNNING;
    v->start_regs.rip = 0x401100;
    v->start_sregs.cr3 = GPA_PML4;
}

static void encode_ok(const struct snap_image *s, struct dbuf *b)
{
    memset(b, 0, sizeof *b);
    assert_int_equal(snapfile_encode(s, b), 0);
}

static void test_snapshot_round_trip(void **state)
{
    (void)state;
    static struct sample x;
    sample_image(&x);
    struct dbuf b;
    encode_ok(&x.s, &b);
    struct snap_image p;
    char err[256];
    assert_int_equal(snapfile_parse(b.p, b.len, &p, err, sizeof err), 0);
    assert_int_equal(p.nvcpus, 2);
    assert_int_equal(p.npages, 4);
    assert_memory_equal(p.pages[0].data, x.pages[0], PAGE_SIZE);
    assert_int_equal(p.v[0].wait_result, -110);
    assert_int_equal(p.v[0].regs.rip, 0x401000);
    assert_int_equal(p.v[0].xsave_len, sizeof x.xsave); /* no trailing zeros to trim */
    assert_memory_equal(p.v[0].xsave, x.xsave, sizeof x.xsave);
    assert_null(p.v[1].start_xsave);
    assert_int_equal(p.vtime, 123456789);
    assert_int_equal(p.vmas[0].lazy, 0);
    assert_int_equal(p.vmas[1].lazy, 1); /* the VMA format 1 keeps lazy mappings */
    assert_int_equal(p.vmas[1].prot, 3);
    struct dbuf b2;
    encode_ok(&p, &b2);
    assert_int_equal(b2.len, b.len);
    assert_memory_equal(b2.p, b.p, b.len);
    /* Every truncation is refused. */
    for (size_t n = 0; n < b.len; n += (n < 3000 ? 1 : 97)) {
        struct snap_image q;
        assert_int_equal(snapfile_parse(b.p, n, &q, err, sizeof err), -1);
    }
    snapimg_free(&p);
    dbuf_free(&b);
    dbuf_free(&b2);
    snapimg_free(&x.s);
}

static void test_snapshot_hostile(void **state)
{
    (void)state;
    static struct sample x;
    char err[256];
    /* Each change must make validation fail (and the parser too). */
    for (int k = 0; k < 11; k++) {
        sample_image(&x);
        struct snap_image *s = &x.s;
        uint64_t e;
        switch (k) {
        case 0: s->v[1].tid = 1; break;                           /* duplicate tid */
        case 1: s->vmas[1].start = 0x400000; break;               /* overlapping VMAs */
        case 2: s->v[0].sregs.cr3 = 0x5000; break;                /* foreign CR3 */
        case 3: s->pml4_user[1] = (NFRAMES - 3) * PAGE_SIZE | PTE_P; break; /* PML4 -> PT */
        case 4: /* a leaf mapping a page-table frame */
            e = (NFRAMES - 1) * PAGE_SIZE | PTE_P;
            memcpy(x.pages[1], &e, 8);
            break;
        case 5: s->pages[1].frame = 5; break;                     /* page below the pool */
        case 6: s->live = 3; break;                               /* counts disagree */
        case 7: s->v[0].state = 9; break;                         /* unknown state */
        case 8: e = 0x7FF000000000ULL | PTE_P; memcpy(x.pages[0], &e, 8); /* data: fine */
            s->pml4_user[2] = 0xFFFFF000ULL | PTE_P; break;       /* beyond memory */
        case 9: s->vmas[0].prot = 3; break;                       /* prot without lazy */
        case 10: s->vmas[1].lazy = 2; break;                      /* lazy out of range */
        }
        assert_int_equal(snapimg_validate(s, err, sizeof err), -1);
        struct dbuf b = {0};
        assert_int_equal(snapfile_encode(s, &b), -1);
        dbuf_free(&b);
        snapimg_free(s);
    }
}

static void sample_trace(struct ex_trace *t)
{
    ex_trace_init(t);
    struct ex_event *e = ex_trace_access(t, 1, EX_WRITE, 0x40b020, 8, 0, 0x401010);
    snprintf(e->sym, sizeof e->sym, "writer+0x10");
    snprintf(e->insn, sizeof e->insn, "mov qword ptr [rip + 0x9ff0], rax");
    ex_trace_sync(t, 1, EX_THREAD_CREATE, 0, 2);
    e = ex_trace_access(t, 2, EX_READ, 0x40b020, 8, 0, 0x401200);
    snprintf(e->sym, sizeof e->sym, "reader+0x20");
    ex_trace_access(t, 2, EX_RMW, 0x40b040, 4, EX_F_ATOMIC, 0x401300);
    ex_trace_access(t, 1, EX_READ, 0x40b040, 4, 0, 0x401020);
}

static void test_trace_round_trip(void **state)
{
    (void)state;
    struct ex_trace t, p;
    sample_trace(&t);
    struct dbuf b = {0};
    assert_int_equal(rr_trace_encode(&t, &b), 0);
    char err[256];
    assert_int_equal(rr_trace_parse(b.p, b.len, &p, err, sizeof err), 0);
    assert_int_equal(ex_trace_first_difference(&t, &p), -1);
    assert_string_equal(p.ev[0].insn, t.ev[0].insn);
    assert_string_equal(p.ev[2].sym, "reader+0x20");
    assert_int_equal(p.nthreads, t.nthreads);
    struct dbuf b2 = {0};
    assert_int_equal(rr_trace_encode(&p, &b2), 0);
    assert_int_equal(b.len, b2.len);
    assert_memory_equal(b.p, b2.p, b.len);
    for (size_t n = 0; n < b.len; n++) {
        struct ex_trace q;
        assert_int_equal(rr_trace_parse(b.p, n, &q, err, sizeof err), -1);
    }
    /* A thread id of 0, and a NUL inside a symbol, are refused. */
    uint8_t *c = malloc(b.len);
    memcpy(c, b.p, b.len);
    memset(c + 16 + 32, 0, 4); /* first event's tid */
    struct ex_trace q;
    assert_int_equal(rr_trace_parse(c, b.len, &q, err, sizeof err), -1);
    memcpy(c, b.p, b.len);
    c[16 + 44 + 1 + 2] = 0; /* inside the first symbol */
    assert_int_equal(rr_trace_parse(c, b.len, &q, err, sizeof err), -1);
    free(c);
    ex_trace_free(&t);
    ex_trace_free(&p);
    dbuf_free(&b);
    dbuf_free(&b2);
}

static void test_other_records(void **state)
{
    (void)state;
    char err[256];
    /* schedule */
    struct ex_schedule s, ps;
    ex_schedule_init(&s);
    ex_schedule_push(&s, 1, 3);
    ex_schedule_push(&s, 2, 5);
    s.policy = EX_DEFAULT_ROUNDROBIN;
    s.quantum = 4;
    ex_schedule_set_note(&s, "pct d=3");
    struct dbuf b = {0};
    assert_int_equal(rr_schedule_encode(&s, &b), 0);
    assert_int_equal(rr_schedule_parse(b.p, b.len, &ps, err, sizeof err), 0);
    assert_true(ex_schedule_equal(&s, &ps));
    for (size_t n = 0; n + 1 < b.len; n++) {
        struct ex_schedule q;
        assert_int_equal(rr_schedule_parse(b.p, n, &q, err, sizeof err), -1);
    }
    ex_schedule_free(&s);
    ex_schedule_free(&ps);
    dbuf_free(&b);
    /* score */
    struct rr_score sc = {.round = 4, .sim = 3, .nsim = 8, .outcome = 3, .bug = 1,
                          .races_adjacent = 1, .avio_new = 2, .new_writers = 3, .novel_pairs = 4,
                          .suspicion = 99, .rank = (1ULL << 62) + 99, .cue_limit = 1000,
                          .cues_sim = 400, .cues_live = 400};
    snprintf(sc.strategy, sizeof sc.strategy, "portfolio");
    snprintf(sc.why, sizeof sc.why, "a bug");
    struct rr_score psc;
    assert_int_equal(rr_score_encode(&sc, &b), 0);
    assert_int_equal(rr_score_parse(b.p, b.len, &psc, err, sizeof err), 0);
    assert_memory_equal(&sc, &psc, sizeof sc);
    for (size_t n = 0; n < b.len; n++)
        assert_int_equal(rr_score_parse(b.p, n, &psc, err, sizeof err), -1);
    dbuf_free(&b);
    /* shared variables, from a trace */
    struct ex_trace t;
    sample_trace(&t);
    struct rr_var *v, *pv;
    size_t nv, npv;
    assert_int_equal(rr_shared_vars(&t, &v, &nv), 0);
    assert_int_equal(nv, 2); /* 0x40b020 and 0x40b040, both threads */
    assert_int_equal(v[0].addr, 0x40b020);
    assert_int_equal(v[0].writes, 1);
    snprintf(v[0].sym, sizeof v[0].sym, "radius");
    assert_int_equal(rr_vars_encode(v, nv, &b), 0);
    assert_int_equal(rr_vars_parse(b.p, b.len, &pv, &npv, err, sizeof err), 0);
    assert_int_equal(npv, 2);
    assert_memory_equal(v, pv, 2 * sizeof *v);
    free(pv);
    for (size_t n = 0; n < b.len; n++)
        assert_int_equal(rr_vars_parse(b.p, n, &pv, &npv, err, sizeof err), -1);
    free(v);
    ex_trace_free(&t);
    dbuf_free(&b);
    /* VM options */
    char *argv[] = {"images/bin/circle", "200", NULL}, *envp[] = {"A=1", NULL};
    struct rr_vmopts o = {.mem = 512ULL << 20, .seed = 7, .thread_stack = 1 << 20,
                          .max_vcpus = 16, .argc = 2, .argv = argv, .envc = 1, .envp = envp};
    struct rr_vmopts po;
    assert_int_equal(rr_vmopts_encode(&o, &b), 0);
    assert_int_equal(rr_vmopts_parse(b.p, b.len, &po, err, sizeof err), 0);
    assert_int_equal(po.argc, 2);
    assert_string_equal(po.argv[1], "200");
    assert_string_equal(po.envp[0], "A=1");
    assert_null(po.argv[2]);
    assert_int_equal(po.seed, 7);
    rr_vmopts_free(&po);
    for (size_t n = 0; n < b.len; n++)
        assert_int_equal(rr_vmopts_parse(b.p, n, &po, err, sizeof err), -1);
    dbuf_free(&b);
}

/* The file layer's descriptors and cwd ride at the end of the SNAPSHOT record: they round
 * trip, a record without them (format 1.0) reads with none, and bad ones are refused. */
static void test_snapshot_fds(void **state)
{
    (void)state;
    static struct sample x;
    sample_image(&x);
    struct dbuf old, b;
    char err[256];
    encode_ok(&x.s, &old);
    x.s.cwd = strdup("/home/u/proj");
    x.s.fds = calloc(2, sizeof *x.s.fds);
    x.s.fds[0] = (struct snapimg_fd){.fd = 3, .off = 17, .path = strdup("/data/in.txt")};
    x.s.fds[1] = (struct snapimg_fd){.fd = 9, .flags = SNAP_FD_CLOEXEC, .off = 1ULL << 33,
                                     .path = strdup("/data")};
    x.s.nfds = 2;
    encode_ok(&x.s, &b);
    struct snap_image p;
    assert_int_equal(snapfile_parse(b.p, b.len, &p, err, sizeof err), 0);
    assert_string_equal(p.cwd, "/home/u/proj");
    assert_int_equal(p.nfds, 2);
    assert_int_equal(p.fds[0].fd, 3);
    assert_int_equal(p.fds[0].off, 17);
    assert_string_equal(p.fds[0].path, "/data/in.txt");
    assert_int_equal(p.fds[1].flags, SNAP_FD_CLOEXEC);
    assert_int_equal(p.fds[1].off, 1ULL << 33);
    snapimg_free(&p);
    for (size_t n = old.len + 1; n < b.len; n++) /* a cut descriptor section */
        if (n != b.len - 8) /* there it is a format 1.1 record: no pipe section */
            assert_int_equal(snapfile_parse(b.p, n, &p, err, sizeof err), -1);
    assert_int_equal(snapfile_parse(old.p, old.len, &p, err, sizeof err), 0);
    assert_int_equal(p.nfds, 0);
    assert_null(p.cwd);
    snapimg_free(&p);
    dbuf_free(&b);
    /* Hostile descriptors: stdio, unsorted, beyond the table, unknown flags, relative. */
    uint32_t fd1[] = {2, 3, 1024, 4, 4};
    uint32_t fd2[] = {4, 3, 5, 5, 5};
    uint32_t flags[] = {0, 0, 0, 2, 0};
    for (int k = 0; k < 5; k++) {
        x.s.fds[0].fd = fd1[k];
        x.s.fds[1].fd = fd2[k];
        x.s.fds[1].flags = flags[k];
        x.s.fds[1].path[0] = k == 4 ? 'd' : '/';
        assert_int_equal(snapimg_validate(&x.s, err, sizeof err), -1);
        struct dbuf bad = {0};
        assert_int_equal(snapfile_encode(&x.s, &bad), -1);
        dbuf_free(&bad);
    }
    dbuf_free(&old);
    snapimg_free(&x.s);
}

/* Pipes and eventfds (format 1.2) follow the descriptors that name them: they round trip
 * with their bytes and counters, a cut anywhere is refused, and hostile ones too. */
static void test_snapshot_pipes(void **state)
{
    (void)state;
    static struct sample x;
    sample_image(&x);
    char err[256];
    x.s.fds = calloc(5, sizeof *x.s.fds);
    x.s.fds[0] = (struct snapimg_fd){.fd = 5, .flags = SNAP_FD_PIPE, .pipe = 0, .end = 0};
    x.s.fds[1] = (struct snapimg_fd){.fd = 6, .flags = SNAP_FD_PIPE | SNAP_FD_NONBLOCK,
                                     .pipe = 0, .end = 1};
    x.s.fds[2] = (struct snapimg_fd){.fd = 7, .flags = SNAP_FD_PIPE | SNAP_FD_CLOEXEC,
                                     .pipe = 1, .end = 2};
    x.s.fds[3] = (struct snapimg_fd){.fd = 8, .flags = SNAP_FD_PIPE, .pipe = 0, .tx = 2,
                                     .end = SNAP_END_SOCK};
    x.s.fds[4] = (struct snapimg_fd){.fd = 9, .flags = SNAP_FD_PIPE, .pipe = 3,
                                     .end = SNAP_END_EPOLL};
    x.s.nfds = 5;
    x.s.pipes = calloc(4, sizeof *x.s.pipes);
    x.s.pipes[0] = (struct snapimg_pipe){.id = 1, .len = 3, .bytes = (uint8_t *)strdup("abc")};
    x.s.pipes[1] = (struct snapimg_pipe){.id = 2, .flags = SNAP_PIPE_EVENTFD | SNAP_PIPE_SEMAPHORE,
                                         .count = 9};
    x.s.pipes[2] = (struct snapimg_pipe){.id = 3};
    x.s.pipes[3] = (struct snapimg_pipe){.id = 4, .flags = SNAP_PIPE_EPOLL, .nitems = 1,
                                         .items = calloc(1, sizeof *x.s.pipes[3].items)};
    x.s.pipes[3].items[0] = (struct snapimg_epitem){.fd = 5, .events = 1, .data = 42};
    x.s.npipes = 4;
    x.s.next_pipe = 2;
    struct dbuf b;
    encode_ok(&x.s, &b);
    struct snap_image p;
    assert_int_equal(snapfile_parse(b.p, b.len, &p, err, sizeof err), 0);
    assert_int_equal(p.nfds, 5);
    assert_int_equal(p.npipes, 4);
    assert_int_equal(p.fds[3].end, SNAP_END_SOCK);
    assert_int_equal(p.fds[3].tx, 2);
    assert_int_equal(p.fds[4].pipe, 3);
    assert_int_equal(p.pipes[3].nitems, 1);
    assert_int_equal(p.pipes[3].items[0].fd, 5);
    assert_int_equal(p.pipes[3].items[0].data, 42);
    assert_int_equal(p.next_pipe, 2);
    assert_null(p.fds[1].path);
    assert_int_equal(p.fds[1].flags, SNAP_FD_PIPE | SNAP_FD_NONBLOCK);
    assert_int_equal(p.fds[1].end, 1);
    assert_int_equal(p.fds[2].pipe, 1);
    assert_int_equal(p.fds[2].end, 2);
    assert_int_equal(p.pipes[0].len, 3);
    assert_memory_equal(p.pipes[0].bytes, "abc", 3);
    assert_int_equal(p.pipes[1].count, 9);
    assert_int_equal(p.pipes[1].flags, SNAP_PIPE_EVENTFD | SNAP_PIPE_SEMAPHORE);
    snapimg_free(&p);
    for (size_t n = b.len - 200; n < b.len; n++) /* cut: the descriptors name no pipe */
        assert_int_equal(snapfile_parse(b.p, n, &p, err, sizeof err), -1);
    dbuf_free(&b);
    /* Hostile: no such pipe, a pipe's end 2, an eventfd's end 0, too many bytes, an id
     * twice, id 0, an eventfd holding bytes, a socket on one pipe, a socket's pipe an
     * eventfd, an epoll interest beyond the table, an epoll instance holding bytes. */
    for (int k = 0; k < 11; k++) {
        struct snap_image *s = &x.s;
        struct snapimg_fd f0 = s->fds[0], f2 = s->fds[2], f3 = s->fds[3];
        struct snapimg_pipe p0 = s->pipes[0], p1 = s->pipes[1], p3 = s->pipes[3];
        struct snapimg_epitem i0 = s->pipes[3].items[0];
        switch (k) {
        case 0: s->fds[0].pipe = 4; break;
        case 1: s->fds[0].end = 2; break;
        case 2: s->fds[2].end = 0; break;
        case 3: s->pipes[0].len = SNAP_PIPE_CAP + 1; break;
        case 4: s->pipes[1].id = 1; break;
        case 5: s->pipes[0].id = 0; break;
        case 6: s->pipes[1].len = 1; s->pipes[1].bytes = p0.bytes; break;
        case 7: s->fds[3].tx = 0; break;
        case 8: s->fds[3].tx = 1; break;
        case 9: s->pipes[3].items[0].fd = SNAP_MAX_FDS; break;
        case 10: s->pipes[3].len = 1; s->pipes[3].bytes = p0.bytes; break;
        }
        assert_int_equal(snapimg_validate(s, err, sizeof err), -1);
        s->fds[0] = f0;
        s->fds[2] = f2;
        s->fds[3] = f3;
        s->pipes[0] = p0;
        s->pipes[1] = p1;
        s->pipes[3] = p3;
        s->pipes[3].items[0] = i0;
    }
    assert_int_equal(snapimg_validate(&x.s, err, sizeof err), 0);
    snapimg_free(&x.s);
}

/* The files the program wrote (format 1.3) follow the pipes: they round trip with their
 * bytes, names and whiteouts, a descriptor names its inode, a cut anywhere inside is
 * refused, and hostile ones too. */
static void test_snapshot_ovl(void **state)
{
    (void)state;
    static struct sample x;
    sample_image(&x);
    char err[256];
    x.s.fds = calloc(1, sizeof *x.s.fds);
    x.s.fds[0] = (struct snapimg_fd){.fd = 4, .flags = SNAP_FD_OVL | SNAP_FD_RDWR | SNAP_FD_APPEND,
                                     .off = 3, .path = strdup("/tmp/a"), .ino = 2};
    x.s.nfds = 1;
    x.s.has_ovl = true;
    x.s.next_ino = 3;
    x.s.ovl_limit = 1 << 20;
    x.s.inodes = calloc(2, sizeof *x.s.inodes);
    x.s.inodes[0] = (struct snapimg_inode){.ino = 1, .mode = 040755};
    x.s.inodes[1] = (struct snapimg_inode){.ino = 2, .mode = 0100644, .nlink = 1, .size = 5,
                                           .mtime = 77, .bytes = (uint8_t *)strdup("hello")};
    x.s.ninodes = 2;
    x.s.ents = calloc(3, sizeof *x.s.ents);
    x.s.ents[0] = (struct snapimg_ent){strdup("/data/gone"), 0, 0};
    x.s.ents[1] = (struct snapimg_ent){strdup("/tmp"), 1, 1};
    x.s.ents[2] = (struct snapimg_ent){strdup("/tmp/a"), 2, 0};
    x.s.nents = 3;
    x.s.sig_shared = 1u << 0;                 /* SIGHUP pending for the process */
    x.s.v[0].sigpending = 1u << 9 | 1u << 11; /* SIGUSR1 and SIGUSR2 for thread 0, */
    x.s.v[0].sigpend_tkill = 1u << 9 | 1u << 20; /* USR1 by tkill (bit 20: none pending) */
    struct dbuf b;
    encode_ok(&x.s, &b);
    struct snap_image p;
    assert_int_equal(snapfile_parse(b.p, b.len, &p, err, sizeof err), 0);
    assert_int_equal(p.sig_shared, 1u << 0); /* format 1.4: the pending signals */
    assert_int_equal(p.v[0].sigpending, 1u << 9 | 1u << 11);
    assert_int_equal(p.v[0].sigpend_tkill, 1u << 9);
    assert_true(p.has_ovl);
    assert_int_equal(p.ninodes, 2);
    assert_int_equal(p.nents, 3);
    assert_int_equal(p.next_ino, 3);
    assert_int_equal(p.inodes[1].size, 5);
    assert_int_equal(p.inodes[1].mtime, 77);
    assert_memory_equal(p.inodes[1].bytes, "hello", 5);
    assert_string_equal(p.ents[0].path, "/data/gone");
    assert_int_equal(p.ents[0].ino, 0);
    assert_int_equal(p.ents[1].opaque, 1);
    assert_int_equal(p.fds[0].ino, 2);
    assert_int_equal(p.fds[0].flags, SNAP_FD_OVL | SNAP_FD_RDWR | SNAP_FD_APPEND);
    assert_string_equal(p.fds[0].path, "/tmp/a");
    snapimg_free(&p);
    /* Cut inside the written files' section, or inside the signals' after it; cut right
     * between them, it is a format 1.3 record (no signals pending). */
    size_t sig = 16 + 16 * (size_t)x.s.nvcpus;
    for (size_t n = b.len - sig - 120; n < b.len; n++)
        if (n != b.len - sig)
            assert_int_equal(snapfile_parse(b.p, n, &p, err, sizeof err), -1);
    assert_int_equal(snapfile_parse(b.p, b.len - sig, &p, err, sizeof err), 0);
    assert_int_equal(p.sig_shared, 0);
    assert_int_equal(p.v[0].sigpending, 0);
    snapimg_free(&p);
    dbuf_free(&b);
    /* Hostile: unsorted names, a name of no inode, not canonical, a directory with bytes,
     * inode 0, inodes unsorted, a descriptor of no inode, a number past next_ino, two
     * access modes, a trailing slash. */
    for (int k = 0; k < 10; k++) {
        struct snap_image *s = &x.s;
        struct snapimg_ent e0 = s->ents[0], e1 = s->ents[1], e2 = s->ents[2];
        struct snapimg_inode i0 = s->inodes[0], i1 = s->inodes[1];
        struct snapimg_fd f0 = s->fds[0];
        char *bad = NULL;
        switch (k) {
        case 0: s->ents[0] = e2; s->ents[2] = e0; break;
        case 1: s->ents[2].ino = 9; break;
        case 2: s->ents[2].path = bad = strdup("/tmp/../a"); break;
        case 3: s->inodes[0].size = 1; s->inodes[0].bytes = i1.bytes; break;
        case 4: s->inodes[0].ino = 0; break;
        case 5: s->inodes[0] = i1; s->inodes[1] = i0; break;
        case 6: s->fds[0].ino = 7; break;
        case 7: s->next_ino = 2; break;
        case 8: s->fds[0].flags |= SNAP_FD_WRONLY; break;
        case 9: s->ents[2].path = bad = strdup("/tmp/a/"); break;
        }
        assert_int_equal(snapimg_validate(s, err, sizeof err), -1);
        free(bad);
        s->ents[0] = e0;
        s->ents[1] = e1;
        s->ents[2] = e2;
        s->inodes[0] = i0;
        s->inodes[1] = i1;
        s->fds[0] = f0;
        s->next_ino = 3;
    }
    assert_int_equal(snapimg_validate(&x.s, err, sizeof err), 0);
    snapimg_free(&x.s);
}

/* A whole dump with every round record: dump_round_parse finds and checks them all. */
static void test_dump_round(void **state)
{
    (void)state;
    static struct sample x;
    sample_image(&x);
    struct dumpfile d;
    memset(&d, 0, sizeof d);
    struct dbuf b = {0};
    char err[256];
    struct ex_trace t;
    sample_trace(&t);
    struct ex_schedule s;
    ex_schedule_init(&s);
    ex_schedule_push(&s, 1, 2);
    assert_int_equal(snapfile_encode(&x.s, &b), 0);
    assert_int_equal(dumpfile_add_record(&d, DREC_SNAPSHOT, 0, b.p, b.len), 0);
    dbuf_free(&b);
    assert_int_equal(rr_schedule_encode(&s, &b), 0);
    assert_int_equal(dumpfile_add_record(&d, DREC_SCHEDULE, 0, b.p, b.len), 0);
    dbuf_free(&b);
    assert_int_equal(rr_trace_encode(&t, &b), 0);
    assert_int_equal(dumpfile_add_record(&d, DREC_TRACE_RECORDED, 0, b.p, b.len), 0);
    assert_int_equal(dumpfile_add_record(&d, DREC_TRACE_RETIRED, 0, b.p, b.len), 0);
    dbuf_free(&b);
    struct rr_score sc = {.round = 1, .cue_limit = 1000, .cues_live = t.n, .cues_sim = t.n};
    assert_int_equal(rr_score_encode(&sc, &b), 0);
    assert_int_equal(dumpfile_add_record(&d, DREC_SCORE, 0, b.p, b.len), 0);
    dbuf_free(&b);
    assert_int_equal(rr_vars_encode(NULL, 0, &b), 0);
    assert_int_equal(dumpfile_add_record(&d, DREC_SHARED_VARS, 0, b.p, b.len), 0);
    dbuf_free(&b);
    struct dump_round r;
    /* VMOPTS missing: incomplete. */
    assert_int_equal(dump_round_parse(&d, &r, err, sizeof err), -1);
    char *argv[] = {"circle", NULL};
    struct rr_vmopts o = {.mem = MEM, .seed = 1, .thread_stack = 1 << 20, .max_vcpus = 4,
                          .argc = 1, .argv = argv};
    assert_int_equal(rr_vmopts_encode(&o, &b), 0);
    assert_int_equal(dumpfile_add_record(&d, DREC_VMOPTS, 0, b.p, b.len), 0);
    dbuf_free(&b);
    assert_int_equal(dump_round_parse(&d, &r, err, sizeof err), 0);
    assert_true(r.present);
    assert_int_equal(r.retired.n, t.n);
    assert_int_equal(r.snap.npages, 4);
    dump_round_free(&r);
    /* No round records at all: fine, nothing present. */
    struct dumpfile empty;
    memset(&empty, 0, sizeof empty);
    assert_int_equal(dump_round_parse(&empty, &r, err, sizeof err), 0);
    assert_false(r.present);
    dumpfile_free(&d);
    ex_trace_free(&t);
    ex_schedule_free(&s);
    snapimg_free(&x.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_round_trip),
        cmocka_unit_test(test_snapshot_hostile),
        cmocka_unit_test(test_snapshot_fds),
        cmocka_unit_test(test_snapshot_pipes), cmocka_unit_test(test_snapshot_ovl),
        cmocka_unit_test(test_trace_round_trip),
        cmocka_unit_test(test_other_records),
        cmocka_unit_test(test_dump_round),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
