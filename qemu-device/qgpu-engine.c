/*
 * qgpu: engines -- ring registers, command fetch and parse, scheduling,
 * NOP and FENCE, fault handling.
 *
 * Nothing executes inside an MMIO write: the doorbell (RING_TAIL) schedules a
 * bottom half, which runs the paging engine (0) and then the render engine
 * (1), each with a work budget, and reschedules itself while work remains.
 * A large command keeps its progress in QGPUEngine.job and resumes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/host-utils.h"
#include "qgpu.h"

#define QGPU_MAX_FIXED_DW   8   /* longest fixed command length */

void qgpu_account(QGPUState *s, QGPUEngine *e, uint64_t bytes)
{
    e->bytes += bytes;
    s->work_bytes += bytes;
}

static void qgpu_count_cmd(QGPUState *s, QGPUEngine *e)
{
    e->cmds++;
    s->work_cmds++;
}

static bool qgpu_engine_has_work(QGPUEngine *e)
{
    if (!e->enabled || e->halted) {
        return false;
    }
    if (e->job.kind != QGPU_JOB_NONE) {
        return true;
    }
    if (e->exec.active) {
        return !e->exec.waiting;
    }
    return e->head != e->tail;
}

static bool qgpu_engine_busy(QGPUEngine *e)
{
    return e->enabled && !e->halted &&
           (e->head != e->tail || e->job.kind != QGPU_JOB_NONE ||
            e->exec.active);
}

/* Drop any command in progress (HEAD stays where it is). */
static void qgpu_engine_abandon(QGPUEngine *e)
{
    memset(&e->job, 0, sizeof(e->job));
    memset(&e->exec, 0, sizeof(e->exec));
    e->cmd_bytes = 0;
}

static void qgpu_engine_reset(QGPUState *s, QGPUEngine *e)
{
    qgpu_engine_abandon(e);
    e->head = 0;
    e->tail = 0;
    e->halted = false;
}

void qgpu_engine_reset_all(QGPUState *s)
{
    unsigned n;

    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        QGPUEngine *e = &s->eng[n];

        qgpu_engine_reset(s, e);
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

        if (pci_dma_read(PCI_DEVICE(s), e->ring_base + o, &v, 4) !=
            MEMTX_OK) {
            *fault_addr = e->ring_base + o;
            return QGPU_FAULT_DMA_ERROR;
        }
        dw[i] = le32_to_cpu(v);
    }
    return QGPU_FAULT_NONE;
}

int qgpu_fence(QGPUState *s, unsigned n, uint64_t addr, uint64_t value,
               bool irq, uint64_t *fault_addr)
{
    uint64_t le = cpu_to_le64(value);
    int fault;

    if (addr & 7) {
        *fault_addr = addr;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_gpu_access(s, addr, &le, 8, true, fault_addr);
    if (fault) {
        return fault;
    }
    if (irq) {
        qgpu_raise_irq(s, QGPU_INT_ENGINE(n));
    }
    return QGPU_FAULT_NONE;
}

static uint32_t qgpu_fixed_len(unsigned n, uint32_t op)
{
    switch (op) {
    case QGPU_CMD_NOP:
        return 1;
    case QGPU_CMD_FENCE:
        return QGPU_CMD_FENCE_LEN;
    }
    if (n == QGPU_ENGINE_PAGING) {
        switch (op) {
        case QGPU_CMD_TRANSFER:
            return QGPU_CMD_TRANSFER_LEN;
        case QGPU_CMD_FILL:
            return QGPU_CMD_FILL_LEN;
        case QGPU_CMD_DISCARD:
            return QGPU_CMD_DISCARD_LEN;
        case QGPU_CMD_MAP_APERTURE:
            return QGPU_CMD_MAP_APERTURE_LEN;
        case QGPU_CMD_UNMAP_APERTURE:
            return QGPU_CMD_UNMAP_APERTURE_LEN;
        }
    } else {
        switch (op) {
        case QGPU_CMD_EXEC:
            return QGPU_CMD_EXEC_LEN;
        case QGPU_CMD_CTX_CLEAR:
            return QGPU_CMD_CTX_CLEAR_LEN;
        case QGPU_CMD_CTX_UNBIND:
            return QGPU_CMD_CTX_UNBIND_LEN;
        }
    }
    return 0;
}

/* A ring command faulted: record it and halt with HEAD at the command. */
static void qgpu_ring_fault(QGPUState *s, unsigned n, int fault,
                            uint32_t ctx, uint64_t addr)
{
    QGPUEngine *e = &s->eng[n];

    qgpu_engine_abandon(e);
    e->halted = true;
    qgpu_record_fault(s, fault, n, ctx, addr, e->head);
}

/* The ring command at HEAD completed: advance HEAD. */
static void qgpu_ring_advance(QGPUState *s, QGPUEngine *e)
{
    e->head = (e->head + e->cmd_bytes) & (e->ring_size - 1);
    e->cmd_bytes = 0;
    qgpu_count_cmd(s, e);
}

/* The DMA-buffer command in progress completed. */
static void qgpu_exec_advance(QGPUState *s, QGPUEngine *e)
{
    e->exec.cur += e->exec.cmd_bytes;
    e->exec.cmd_bytes = 0;
    qgpu_count_cmd(s, e);
}

/*
 * A DMA-buffer command faulted: record, invalidate the context, abandon the
 * buffer, go on.
 */
static void qgpu_exec_fault(QGPUState *s, unsigned n, int fault,
                            uint64_t addr)
{
    QGPUEngine *e = &s->eng[n];

    qgpu_render_ctx_fault(s, e->exec.ctx);
    qgpu_record_fault(s, fault, n, e->exec.ctx, addr, e->exec.cur);
    memset(&e->job, 0, sizeof(e->job));
    memset(&e->exec, 0, sizeof(e->exec));
    qgpu_ring_advance(s, e);
}

static void qgpu_cmd_fault(QGPUState *s, unsigned n, int fault, uint64_t addr)
{
    if (s->eng[n].exec.active) {
        qgpu_exec_fault(s, n, fault, addr);
    } else {
        qgpu_ring_fault(s, n, fault, QGPU_NO_CONTEXT, addr);
    }
}

static void qgpu_cmd_done(QGPUState *s, QGPUEngine *e)
{
    if (e->exec.active) {
        qgpu_exec_advance(s, e);
    } else {
        qgpu_ring_advance(s, e);
    }
}

int qgpu_job_run(QGPUState *s, QGPUEngine *e, int64_t *budget,
                 uint64_t *fault_addr)
{
    QGPUJob *job = &e->job;

    switch (job->kind) {
    case QGPU_JOB_COPY:
        return qgpu_copy_run(s, job, e, budget, fault_addr);
    case QGPU_JOB_FILL:
        return qgpu_fill_run(s, job, e, budget, fault_addr);
    case QGPU_JOB_GART_MAP:
    case QGPU_JOB_GART_UNMAP:
        return qgpu_gart_job_run(s, job, budget, fault_addr);
    case QGPU_JOB_ADD:
    case QGPU_JOB_XOR:
    case QGPU_JOB_CSUM:
        return qgpu_alu_run(s, job, e, budget, fault_addr);
    default:
        job->done = job->size;
        return QGPU_FAULT_NONE;
    }
}

/* Fetch, check and start the ring command at HEAD. */
static void qgpu_ring_fetch(QGPUState *s, unsigned n)
{
    QGPUEngine *e = &s->eng[n];
    uint32_t dw[QGPU_MAX_FIXED_DW];
    uint32_t avail, op, len, fixed;
    uint64_t fault_addr = 0;
    uint32_t fault_ctx = QGPU_NO_CONTEXT;
    int fault;

    fault = qgpu_ring_read(s, e, e->head, dw, 1, &fault_addr);
    if (fault) {
        qgpu_ring_fault(s, n, fault, QGPU_NO_CONTEXT, fault_addr);
        return;
    }
    op = QGPU_CMD_OPCODE(dw[0]);
    len = QGPU_CMD_LEN(dw[0]);
    fixed = qgpu_fixed_len(n, op);
    if (!fixed) {
        qgpu_ring_fault(s, n, QGPU_FAULT_BAD_OPCODE, QGPU_NO_CONTEXT, dw[0]);
        return;
    }
    avail = (e->tail - e->head) & (e->ring_size - 1);
    if (len == 0 || len < fixed || (uint64_t)len * 4 > avail) {
        qgpu_ring_fault(s, n, QGPU_FAULT_BAD_LENGTH, QGPU_NO_CONTEXT, dw[0]);
        return;
    }
    fault = qgpu_ring_read(s, e, e->head, dw, fixed, &fault_addr);
    if (fault) {
        qgpu_ring_fault(s, n, fault, QGPU_NO_CONTEXT, fault_addr);
        return;
    }
    e->cmd_bytes = len * 4;

    switch (op) {
    case QGPU_CMD_NOP:
        fault = QGPU_FAULT_NONE;
        break;
    case QGPU_CMD_FENCE:
        fault = qgpu_fence(s, n, deposit64(dw[1], 32, 32, dw[2]),
                           deposit64(dw[3], 32, 32, dw[4]),
                           QGPU_CMD_FLAGS(dw[0]) & QGPU_FENCE_FLAG_IRQ,
                           &fault_addr);
        break;
    case QGPU_CMD_EXEC:
    case QGPU_CMD_CTX_CLEAR:
    case QGPU_CMD_CTX_UNBIND:
        fault = qgpu_render_ring_cmd(s, e, op, dw, &fault_addr, &fault_ctx);
        break;
    default:
        fault = qgpu_paging_cmd(s, e, op, QGPU_CMD_FLAGS(dw[0]), dw,
                                &fault_addr);
        break;
    }
    if (fault) {
        if (op == QGPU_CMD_EXEC) {
            /* a bad EXEC invalidates its context too (if there is one) */
            qgpu_render_ctx_fault(s, fault_ctx);
        }
        qgpu_ring_fault(s, n, fault, fault_ctx, fault_addr);
        return;
    }
    if (e->job.kind == QGPU_JOB_NONE && !e->exec.active) {
        qgpu_ring_advance(s, e);
    }
}

/* Run engine n until idle or out of budget; true if work remains. */
static bool qgpu_engine_run(QGPUState *s, unsigned n)
{
    QGPUEngine *e = &s->eng[n];
    int64_t budget = QGPU_BH_BUDGET;
    uint64_t fault_addr;
    int fault;

    while (budget > 0 && qgpu_engine_has_work(e)) {
        fault_addr = 0;
        if (e->job.kind != QGPU_JOB_NONE) {
            fault = qgpu_job_run(s, e, &budget, &fault_addr);
            if (fault) {
                qgpu_cmd_fault(s, n, fault, fault_addr);
            } else if (e->job.done >= e->job.size) {
                memset(&e->job, 0, sizeof(e->job));
                qgpu_cmd_done(s, e);
            }
            continue;
        }
        budget -= QGPU_CMD_COST;
        if (e->exec.active) {
            if (e->exec.cur >= e->exec.end) {
                memset(&e->exec, 0, sizeof(e->exec));
                qgpu_ring_advance(s, e);
                continue;
            }
            fault = qgpu_render_step(s, e, &budget, &fault_addr);
            if (fault) {
                qgpu_exec_fault(s, n, fault, fault_addr);
            } else if (e->job.kind == QGPU_JOB_NONE && !e->exec.waiting) {
                qgpu_exec_advance(s, e);
            }
            continue;
        }
        qgpu_ring_fetch(s, n);
    }
    return qgpu_engine_has_work(e);
}

/* Re-check a blocked DMA WAIT; arm the poll timer if still not satisfied. */
static void qgpu_engine_poll_wait(QGPUState *s)
{
    unsigned n;

    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        QGPUEngine *e = &s->eng[n];
        uint64_t fault_addr = 0;
        int fault = QGPU_FAULT_NONE;

        if (!e->enabled || e->halted || !e->exec.active ||
            !e->exec.waiting) {
            continue;
        }
        if (qgpu_render_wait_check(s, e, &fault, &fault_addr)) {
            e->exec.waiting = false;
            qgpu_exec_advance(s, e);
        } else if (fault) {
            qgpu_exec_fault(s, n, fault, fault_addr);
        } else if (!timer_pending(s->wait_timer)) {
            timer_mod(s->wait_timer,
                      qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      QGPU_WAIT_POLL_NS);
        }
    }
}

static void qgpu_bh(void *opaque)
{
    QGPUState *s = opaque;
    bool more = false;
    unsigned n;

    s->in_engine = true;
    qgpu_engine_poll_wait(s);
    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        more |= qgpu_engine_run(s, n);
    }
    qgpu_engine_poll_wait(s);
    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        more |= qgpu_engine_has_work(&s->eng[n]);
    }
    s->in_engine = false;
    if (more) {
        qemu_bh_schedule(s->bh);
    }
}

static void qgpu_wait_timer(void *opaque)
{
    QGPUState *s = opaque;

    qemu_bh_schedule(s->bh);
}

static void qgpu_kick(QGPUState *s)
{
    qemu_bh_schedule(s->bh);
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
        return e->enabled ? QGPU_ENG_CTRL_ENABLE : 0;
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
    qgpu_record_fault(s, QGPU_FAULT_BAD_RING, n, QGPU_NO_CONTEXT, addr,
                      s->eng[n].head);
}

static void qgpu_engine_ctrl(QGPUState *s, unsigned n, uint32_t val)
{
    QGPUEngine *e = &s->eng[n];

    if (val & QGPU_ENG_CTRL_RESET) {
        /* ENABLE and the ring configuration are kept */
        qgpu_engine_reset(s, e);
        return;
    }
    if (!(val & QGPU_ENG_CTRL_ENABLE)) {
        if (e->enabled) {
            /* stop; a command in progress restarts from its beginning */
            qgpu_engine_abandon(e);
            e->enabled = false;
        }
        return;
    }
    if (e->enabled) {
        qgpu_kick(s);
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
    qgpu_engine_reset(s, e);
    e->enabled = true;
}

bool qgpu_engine_write(QGPUState *s, unsigned n, hwaddr reg, uint32_t val)
{
    QGPUEngine *e = &s->eng[n];

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
        e->tail = val;
        qgpu_kick(s);
        return true;
    case QGPU_ENG_CTRL:
        qgpu_engine_ctrl(s, n, val);
        return true;
    default:
        return false;
    }
}

void qgpu_engine_init(QGPUState *s)
{
    s->bh = qemu_bh_new(qgpu_bh, s);
    s->wait_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, qgpu_wait_timer, s);
}

void qgpu_engine_fini(QGPUState *s)
{
    if (s->bh) {
        qemu_bh_delete(s->bh);
        s->bh = NULL;
    }
    if (s->wait_timer) {
        timer_free(s->wait_timer);
        s->wait_timer = NULL;
    }
}
