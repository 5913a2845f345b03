/*
 * qgpu: engines -- ring registers, command fetch, scheduling, NOP and
 * FENCE, and what a fault does to a ring or a DMA buffer.
 *
 * The doorbell (RING_TAIL) kicks the device thread (qgpu-thread.c), whose
 * rounds run the paging engine (0) and then the render engine (1), each
 * with a work budget, while work remains; on an idle engine it first runs
 * a small budget itself (qgpu_engine_doorbell()), so that a small
 * submission needs no wake-up of the thread.
 * A large command keeps its progress in QGPUEngine.job and resumes. A
 * round holds the BQL except around bulk copies; whatever abandons a
 * command bumps QGPUEngine.gen, so that a copy that ran without the BQL
 * meanwhile records no progress.
 * Decoding is the paging engine's (qgpu-paging.c) or the render engine's
 * (qgpu-render.c); the work itself is the executors' (qgpu-exec.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/host-utils.h"
#include "qgpu-state.h"
#include "qgpu-faultq.h"
#include "qgpu-addr.h"
#include "qgpu-mmu.h"
#include "qgpu-exec.h"
#include "qgpu-context.h"
#include "qgpu-paging.h"
#include "qgpu-render.h"
#include "qgpu-thread.h"
#include "qgpu-engine.h"
#include "trace.h"

/*
 * Work budget of one engine in one round. Every command costs
 * QGPU_CMD_COST budget units and every byte moved costs one unit, so one
 * round moves at most ~4 MiB or executes at most 256 commands per engine.
 */
#define QGPU_BH_BUDGET          (4 * MiB)
#define QGPU_CMD_COST           (16 * KiB)
#define QGPU_WAIT_POLL_NS       (1000 * 1000)           /* 1 ms */

static void qgpu_engine_count_cmd(QGPUState *s, QGPUEngine *e)
{
    e->cmds++;
    s->work_cmds++;
}

static bool qgpu_engine_has_work(QGPUEngine *e)
{
    if (!e->enabled || e->halted || e->stalled) {
        return false;
    }
    if (e->job.kind != QGPU_JOB_NONE) {
        return true;
    }
    if (e->dma.active) {
        return !e->dma.waiting;
    }
    return e->head != e->tail;
}

static bool qgpu_engine_busy(QGPUEngine *e)
{
    return e->enabled && !e->halted &&
           (e->head != e->tail || e->job.kind != QGPU_JOB_NONE ||
            e->dma.active);
}

/* No virtual-access fault is pending (QGPUEngine.fault_info/fault_vm) */
static void qgpu_engine_clear_fault_vm(QGPUEngine *e)
{
    e->fault_info = 0;
    e->fault_vm = 0;
}

/*
 * Drop any command in progress (HEAD stays where it is). A copy running
 * without the BQL sees the new generation and records nothing.
 */
static void qgpu_engine_abandon(QGPUState *s, QGPUEngine *e)
{
    qgpu_thread_quiesce(s);
    e->gen++;
    memset(&e->job, 0, sizeof(e->job));
    memset(&e->dma, 0, sizeof(e->dma));
    e->cmd_bytes = 0;
    qgpu_engine_clear_fault_vm(e);
}

/*
 * Record a fault of engine @n; a virtual access that faulted left
 * FAULT_INFO and FAULT_VM in the engine (qgpu-mmu.c).
 */
static void qgpu_engine_record(QGPUState *s, unsigned n, int fault,
                               uint32_t ctx, uint64_t addr, uint32_t offset)
{
    QGPUEngine *e = &s->eng[n];

    qgpu_faultq_record_vm(s, fault, n, ctx, addr, offset, e->fault_info,
                          e->fault_vm);
    qgpu_engine_clear_fault_vm(e);
}

static void qgpu_engine_reset_ring(QGPUState *s, unsigned n)
{
    QGPUEngine *e = &s->eng[n];

    trace_qgpu_engine_reset(n);
    qgpu_engine_abandon(s, e);
    e->head = 0;
    e->tail = 0;
    e->halted = false;
    e->stalled = false;
}

void qgpu_engine_reset_all(QGPUState *s)
{
    unsigned n;

    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        QGPUEngine *e = &s->eng[n];

        qgpu_engine_reset_ring(s, n);
        e->enabled = false;
        e->ring_base = 0;
        e->ring_size = 0;
    }
    if (s->wait_timer) {
        timer_del(s->wait_timer);
    }
}

/* Ring access: read ndw dwords at ring byte offset off, with wraparound. */
static int qgpu_ring_read(QGPUState *s, QGPUEngine *e, uint32_t off,
                          uint32_t *dw, uint32_t ndw, uint64_t *fault_addr)
{
    uint32_t i;

    for (i = 0; i < ndw; i++) {
        uint32_t o = (off + i * 4) & (e->ring_size - 1);
        uint32_t v;

        if (qgpu_dma(s, e->ring_base + o, &v, 4, false) != MEMTX_OK) {
            *fault_addr = e->ring_base + o;
            return QGPU_FAULT_DMA_ERROR;
        }
        dw[i] = le32_to_cpu(v);
    }
    return QGPU_FAULT_NONE;
}

/* A ring command faulted: record it and halt with HEAD at the command. */
static void qgpu_ring_fault(QGPUState *s, unsigned n, int fault,
                            uint32_t ctx, uint64_t addr)
{
    QGPUEngine *e = &s->eng[n];

    qgpu_engine_record(s, n, fault, ctx, addr, e->head);
    /* the fault's own MSI may have reset the device */
    if (qgpu_cmd_abandoned(s)) {
        return;
    }
    qgpu_engine_abandon(s, e);
    e->halted = true;
}

/* The ring command at HEAD completed: advance HEAD. */
static void qgpu_ring_advance(QGPUState *s, QGPUEngine *e)
{
    e->head = (e->head + e->cmd_bytes) & (e->ring_size - 1);
    e->cmd_bytes = 0;
    qgpu_engine_count_cmd(s, e);
}

/* The DMA-buffer command in progress completed. */
static void qgpu_engine_dma_advance(QGPUState *s, QGPUEngine *e)
{
    e->dma.cur += e->dma.cmd_bytes;
    e->dma.cmd_bytes = 0;
    qgpu_engine_count_cmd(s, e);
}

/*
 * A DMA-buffer command faulted: record, invalidate the context, abandon the
 * buffer, go on.
 */
static void qgpu_engine_dma_fault(QGPUState *s, unsigned n, int fault,
                                  uint64_t addr)
{
    QGPUEngine *e = &s->eng[n];

    qgpu_context_fault(s, e->dma.ctx);
    qgpu_engine_record(s, n, fault, e->dma.ctx, addr, e->dma.cur);
    /* the fault's own MSI may have reset the device */
    if (qgpu_cmd_abandoned(s)) {
        return;
    }
    memset(&e->job, 0, sizeof(e->job));
    memset(&e->dma, 0, sizeof(e->dma));
    qgpu_ring_advance(s, e);
}

static void qgpu_engine_cmd_fault(QGPUState *s, unsigned n, int fault,
                                  uint64_t addr)
{
    if (s->eng[n].dma.active) {
        qgpu_engine_dma_fault(s, n, fault, addr);
    } else {
        qgpu_ring_fault(s, n, fault, QGPU_NO_CONTEXT, addr);
    }
}

static void qgpu_engine_cmd_done(QGPUState *s, QGPUEngine *e)
{
    if (e->dma.active) {
        qgpu_engine_dma_advance(s, e);
    } else {
        qgpu_ring_advance(s, e);
    }
}

/*
 * Read the ring command at HEAD: its fixed dwords into @dw. Checks that
 * engine @n runs the opcode and the length in its header.
 */
static int qgpu_ring_fetch(QGPUState *s, unsigned n, uint32_t *dw,
                           uint64_t *fault_addr)
{
    QGPUEngine *e = &s->eng[n];
    uint32_t avail, op, len, fixed;
    int fault;

    fault = qgpu_ring_read(s, e, e->head, dw, 1, fault_addr);
    if (fault) {
        return fault;
    }
    op = QGPU_CMD_OPCODE(dw[0]);
    len = QGPU_CMD_LEN(dw[0]);
    fixed = qgpu_ring_cmd_len(n, op);
    trace_qgpu_ring_cmd(n, op, e->head);
    *fault_addr = dw[0];
    if (!fixed) {
        return QGPU_FAULT_BAD_OPCODE;
    }
    avail = (e->tail - e->head) & (e->ring_size - 1);
    if (len == 0 || len < fixed || (uint64_t)len * 4 > avail) {
        return QGPU_FAULT_BAD_LENGTH;
    }
    /*
     * The rest of the fixed dwords only: the header checked above stays
     * what runs, whatever the guest wrote to the ring meanwhile.
     */
    fault = qgpu_ring_read(s, e, e->head + 4, dw + 1, fixed - 1, fault_addr);
    if (fault) {
        return fault;
    }
    e->cmd_bytes = len * 4;
    *fault_addr = 0;
    return QGPU_FAULT_NONE;
}

/* Start the ring command @dw of engine @n; *fault_ctx: see render */
static int qgpu_ring_start(QGPUState *s, unsigned n, const uint32_t *dw,
                           uint64_t *fault_addr, uint32_t *fault_ctx)
{
    uint32_t op = QGPU_CMD_OPCODE(dw[0]);

    switch (op) {
    case QGPU_CMD_NOP:
        return QGPU_FAULT_NONE;
    case QGPU_CMD_FENCE:
        return qgpu_exec_fence(s, n, qgpu_space_phys(), qgpu_cmd_u64(dw, 1),
                               qgpu_cmd_u64(dw, 3),
                               QGPU_CMD_FLAGS(dw[0]) & QGPU_FENCE_FLAG_IRQ,
                               fault_addr);
    }
    if (n == QGPU_ENGINE_PAGING) {
        return qgpu_paging_cmd(s, op, QGPU_CMD_FLAGS(dw[0]), dw, fault_addr);
    }
    return qgpu_render_ring_cmd(s, op, dw, fault_addr, fault_ctx);
}

/*
 * Fetch, check and start the ring command at HEAD. A command whose own
 * DMA or MSI reset the device is abandoned: nothing of it is recorded.
 */
static void qgpu_ring_next(QGPUState *s, unsigned n)
{
    QGPUEngine *e = &s->eng[n];
    uint32_t dw[QGPU_CMD_MAX_FIXED_LEN] = { 0 };
    uint64_t fault_addr = 0;
    uint32_t fault_ctx = QGPU_NO_CONTEXT;
    int fault;

    fault = qgpu_ring_fetch(s, n, dw, &fault_addr);
    if (qgpu_cmd_abandoned(s)) {
        return;
    }
    if (fault) {
        qgpu_ring_fault(s, n, fault, QGPU_NO_CONTEXT, fault_addr);
        return;
    }
    fault = qgpu_ring_start(s, n, dw, &fault_addr, &fault_ctx);
    if (qgpu_cmd_abandoned(s)) {
        return;
    }
    if (fault) {
        if (QGPU_CMD_OPCODE(dw[0]) == QGPU_CMD_EXEC) {
            /* a bad EXEC invalidates its context too (if there is one) */
            qgpu_context_fault(s, fault_ctx);
        }
        qgpu_ring_fault(s, n, fault, fault_ctx, fault_addr);
        return;
    }
    if (e->job.kind == QGPU_JOB_NONE && !e->dma.active) {
        qgpu_ring_advance(s, e);
    }
}

/*
 * One step of engine @n: a part of its job, a DMA-buffer command or a
 * ring command, and what it completes or faults. A reset that the step's
 * own DMA or MSI made (qgpu_cmd_abandoned()) abandoned the command: it is
 * gone already, and nothing of it is recorded.
 */
static void qgpu_engine_step(QGPUState *s, unsigned n, int64_t *budget)
{
    QGPUEngine *e = &s->eng[n];
    uint64_t fault_addr = 0;
    int fault;

    qgpu_engine_clear_fault_vm(e);
    if (e->job.kind != QGPU_JOB_NONE) {
        fault = qgpu_exec_run(s, n, budget, &fault_addr);
        if (fault == QGPU_EXEC_ABANDONED) {
            /* reset while the job ran: the job is gone already */
            return;
        } else if (fault) {
            qgpu_engine_cmd_fault(s, n, fault, fault_addr);
        } else if (e->job.done >= e->job.size) {
            memset(&e->job, 0, sizeof(e->job));
            qgpu_engine_cmd_done(s, e);
        }
        return;
    }
    *budget -= QGPU_CMD_COST;
    if (e->dma.active) {
        if (e->dma.cur >= e->dma.end) {
            memset(&e->dma, 0, sizeof(e->dma));
            qgpu_ring_advance(s, e);
            return;
        }
        fault = qgpu_render_step(s, &fault_addr);
        if (qgpu_cmd_abandoned(s)) {
            return;
        } else if (fault) {
            qgpu_engine_dma_fault(s, n, fault, fault_addr);
        } else if (e->job.kind == QGPU_JOB_NONE && !e->dma.waiting) {
            qgpu_engine_dma_advance(s, e);
        }
        return;
    }
    qgpu_ring_next(s, n);
}

/*
 * Run engine n until idle or out of @budget; true if work remains. A
 * doorbell may run this while a step of the thread waits for the BQL
 * again: the thread's QGPUState.cmd_eng and cmd_gen are put back after.
 */
static bool qgpu_engine_run(QGPUState *s, unsigned n, int64_t budget)
{
    QGPUEngine *outer = s->cmd_eng;
    uint32_t outer_gen = s->cmd_gen;
    QGPUEngine *e;

    if (n >= QGPU_NUM_ENGINES) {
        return false;
    }
    e = &s->eng[n];

    while (budget > 0 && qgpu_engine_has_work(e) && !s->thread_quit) {
        s->cmd_eng = e;
        s->cmd_gen = e->gen;
        qgpu_engine_step(s, n, &budget);
    }
    s->cmd_eng = outer;
    s->cmd_gen = outer_gen;
    return qgpu_engine_has_work(e);
}

/* Re-check a blocked DMA WAIT; arm the poll timer if still not satisfied. */
static void qgpu_engine_poll_wait(QGPUState *s)
{
    QGPUEngine *outer = s->cmd_eng;
    uint32_t outer_gen = s->cmd_gen;
    unsigned n;

    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        QGPUEngine *e = &s->eng[n];
        uint64_t fault_addr = 0;
        int fault = QGPU_FAULT_NONE;
        bool done;

        if (!e->enabled || e->halted || e->stalled || !e->dma.active ||
            !e->dma.waiting) {
            continue;
        }
        qgpu_engine_clear_fault_vm(e);
        s->cmd_eng = e;
        s->cmd_gen = e->gen;
        done = qgpu_render_wait_check(s, &fault, &fault_addr);
        if (qgpu_cmd_abandoned(s)) {
            continue;
        } else if (done) {
            e->dma.waiting = false;
            qgpu_engine_dma_advance(s, e);
        } else if (fault) {
            qgpu_engine_dma_fault(s, n, fault, fault_addr);
        } else if (!timer_pending(s->wait_timer)) {
            timer_mod(s->wait_timer,
                      qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      QGPU_WAIT_POLL_NS);
        }
    }
    s->cmd_eng = outer;
    s->cmd_gen = outer_gen;
}

/* One round on the device thread, BQL held; true if work remains */
static bool qgpu_engine_round(QGPUState *s)
{
    bool more = false;
    unsigned n;

    qgpu_engine_poll_wait(s);
    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        more |= qgpu_engine_run(s, n, QGPU_BH_BUDGET);
    }
    if (s->thread_quit) {
        return false;
    }
    qgpu_engine_poll_wait(s);
    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        more |= qgpu_engine_has_work(&s->eng[n]);
    }
    return more;
}

static void qgpu_engine_wait_timer(void *opaque)
{
    QGPUState *s = opaque;

    qgpu_thread_kick(s);
}

static void qgpu_engine_kick(QGPUState *s)
{
    qgpu_thread_kick(s);
}

/*
 * A doorbell (RING_TAIL written, BQL held) on engine @n, which was idle
 * with HEAD at the old TAIL: run what it rang for at once, within a budget
 * of doorbell-commands commands (fewer with bytes to move), so that a
 * small submission (a NOP, a fence) needs no wake-up of the device thread;
 * what is left, or a WAIT, goes to the thread. Never re-entrantly (a DMA
 * of the engines into the registers), and only when the thread has no
 * piece of either engine in flight: a piece of the other engine was
 * translated before anything this doorbell runs, and must land first, as
 * it would if the thread ran both (a FLUSH_TLB or DISCARD here would
 * otherwise complete while a write through the old translation is still
 * to come).
 */
static void qgpu_engine_doorbell(QGPUState *s, unsigned n, bool was_idle)
{
    QGPUEngine *e = &s->eng[n];
    bool more;

    if (!was_idle || s->in_engine || !s->thread_started ||
        !s->doorbell_cmds || qgpu_thread_in_flight(s)) {
        qgpu_engine_kick(s);
        return;
    }
    s->in_engine = true;
    more = qgpu_engine_run(s, n, (int64_t)s->doorbell_cmds * QGPU_CMD_COST);
    s->in_engine = false;
    if (more || e->dma.waiting) {
        qgpu_engine_kick(s);
    }
}

/* Engine registers */

uint32_t qgpu_engine_read(QGPUState *s, unsigned n, hwaddr reg, bool *ok)
{
    QGPUEngine *e = &s->eng[n];

    *ok = true;
    switch (reg) {
    case QGPU_ENG_RING_BASE_LO:
        return e->ring_base;
    case QGPU_ENG_RING_BASE_HI:
        return e->ring_base >> 32;
    case QGPU_ENG_RING_SIZE:
        return e->ring_size;
    case QGPU_ENG_RING_HEAD:
        return e->head;
    case QGPU_ENG_RING_TAIL:
        return e->tail;
    case QGPU_ENG_CTRL:
        return (e->enabled ? QGPU_ENG_CTRL_ENABLE : 0) |
               (e->stalled ? QGPU_ENG_CTRL_STALL : 0);
    case QGPU_ENG_STATUS:
        return (qgpu_engine_busy(e) ? QGPU_ENG_STATUS_BUSY : 0) |
               (e->halted ? QGPU_ENG_STATUS_HALTED : 0);
    case QGPU_ENG_CMDS_LO:
        return e->cmds;
    case QGPU_ENG_CMDS_HI:
        return e->cmds >> 32;
    case QGPU_ENG_BYTES_LO:
        return e->bytes;
    case QGPU_ENG_BYTES_HI:
        return e->bytes >> 32;
    default:
        *ok = false;
        return 0;
    }
}

static void qgpu_engine_bad_ring(QGPUState *s, unsigned n, uint64_t addr)
{
    qgpu_faultq_record(s, QGPU_FAULT_BAD_RING, n, QGPU_NO_CONTEXT, addr,
                       s->eng[n].head);
}

static void qgpu_engine_ctrl(QGPUState *s, unsigned n, uint32_t val)
{
    QGPUEngine *e = &s->eng[n];

    if (val & QGPU_ENG_CTRL_RESET) {
        /* ENABLE and the ring configuration are kept */
        qgpu_engine_reset_ring(s, n);
        return;
    }
    if (!(val & QGPU_ENG_CTRL_ENABLE)) {
        if (e->enabled) {
            /* stop; a command in progress restarts from its beginning */
            qgpu_engine_abandon(s, e);
            e->enabled = false;
            e->stalled = false;
        }
        return;
    }
    if (e->enabled) {
        e->stalled = val & QGPU_ENG_CTRL_STALL;
        qgpu_engine_kick(s);
        return;
    }
    if ((e->ring_base & (QGPU_PAGE_SIZE - 1)) ||
        !is_power_of_2(e->ring_size) ||
        e->ring_size < QGPU_RING_SIZE_MIN ||
        e->ring_size > QGPU_RING_SIZE_MAX ||
        e->ring_base > UINT64_MAX - e->ring_size) {
        qgpu_engine_bad_ring(s, n, e->ring_base);
        return;
    }
    qgpu_engine_reset_ring(s, n);
    e->enabled = true;
    e->stalled = val & QGPU_ENG_CTRL_STALL;
}

bool qgpu_engine_write(QGPUState *s, unsigned n, hwaddr reg, uint32_t val)
{
    QGPUEngine *e = &s->eng[n];
    bool idle;

    switch (reg) {
    case QGPU_ENG_RING_BASE_LO:
    case QGPU_ENG_RING_BASE_HI:
    case QGPU_ENG_RING_SIZE:
        if (e->enabled) {
            qgpu_engine_bad_ring(s, n, e->ring_base);
            return true;
        }
        if (reg == QGPU_ENG_RING_BASE_LO) {
            e->ring_base = deposit64(e->ring_base, 0, 32, val);
        } else if (reg == QGPU_ENG_RING_BASE_HI) {
            e->ring_base = deposit64(e->ring_base, 32, 32, val);
        } else {
            e->ring_size = val;
        }
        return true;
    case QGPU_ENG_RING_TAIL:
        if (!e->enabled || (val & 3) || val >= e->ring_size) {
            qgpu_engine_bad_ring(s, n, val);
            return true;
        }
        idle = !qgpu_engine_busy(e);
        e->tail = val;
        qgpu_engine_doorbell(s, n, idle);
        return true;
    case QGPU_ENG_CTRL:
        qgpu_engine_ctrl(s, n, val);
        return true;
    default:
        return false;
    }
}

void qgpu_engine_realize(QGPUState *s)
{
    s->wait_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, qgpu_engine_wait_timer, s);
    qgpu_thread_start(s, qgpu_engine_round);
}

void qgpu_engine_unrealize(QGPUState *s)
{
    /* first: the thread may be copying with the BQL dropped */
    qgpu_thread_stop(s);
    if (s->wait_timer) {
        timer_free(s->wait_timer);
        s->wait_timer = NULL;
    }
}
