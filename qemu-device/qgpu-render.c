/*
 * qgpu: render-engine decode (engine 1) -- EXEC of DMA buffers in a
 * context, CTX_CLEAR, CTX_UNBIND, CTX_SET_VM, and one handler per
 * DMA-buffer command. A context bound to an address space (1.2) runs the
 * virtual DMA-buffer commands, which name VAs translated through the
 * render engine's TLB; a physical context runs the slot commands.
 *
 * A fault inside a DMA buffer is recorded, abandons the rest of that buffer
 * and the ring continues with its next command. Any fault of an EXEC also
 * invalidates its context (qgpu-context.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "qgpu-state.h"
#include "qgpu-addr.h"
#include "qgpu-mmu.h"
#include "qgpu-exec.h"
#include "qgpu-context.h"
#include "qgpu-faultq.h"
#include "qgpu-render.h"
#include "trace.h"

#define QGPU_EXEC_MAX           (1 * MiB)       /* longest DMA buffer */

/* Ring commands */

static int qgpu_render_exec(QGPUState *s, uint32_t ctx, const uint32_t *dw,
                            uint64_t *fault_addr, uint32_t *fault_ctx)
{
    QGPUDmaBuffer *x = &s->eng[QGPU_ENGINE_RENDER].dma;
    uint64_t buf = qgpu_cmd_u64(dw, 2);
    uint32_t start = dw[4], end = dw[5];

    if (qgpu_context_faulted(s, ctx)) {
        /* skipped whole: nothing runs, nothing is checked or recorded */
        trace_qgpu_exec_skipped(ctx);
        return QGPU_FAULT_NONE;
    }
    trace_qgpu_exec(ctx, buf, start, end);
    *fault_ctx = ctx;
    *fault_addr = buf;
    if ((start | end) & 3) {
        return QGPU_FAULT_BAD_ALIGN;
    }
    if (start > end || end - start > QGPU_EXEC_MAX) {
        return QGPU_FAULT_BAD_LENGTH;
    }
    if (start != end &&
        (start > UINT64_MAX - buf ||
         qgpu_addr_check(s, buf + start, end - start))) {
        return QGPU_FAULT_BAD_ADDRESS;
    }
    *fault_ctx = QGPU_NO_CONTEXT;
    *fault_addr = 0;
    if (start == end) {
        return QGPU_FAULT_NONE;
    }
    memset(x, 0, sizeof(*x));
    x->active = true;
    x->ctx = ctx;
    x->as = qgpu_context_space(s, ctx);
    x->buf = buf;
    x->cur = start;
    x->end = end;
    return QGPU_FAULT_NONE;
}

/*
 * Start render ring command @op (EXEC, CTX_CLEAR, CTX_UNBIND or CTX_SET_VM;
 * its length already checked). On a fault, *fault_ctx is the context it
 * belongs to.
 */
int qgpu_render_ring_cmd(QGPUState *s, uint32_t op, const uint32_t *dw,
                         uint64_t *fault_addr, uint32_t *fault_ctx)
{
    uint32_t ctx = dw[1];
    int fault;

    if (ctx >= s->max_contexts) {
        *fault_ctx = ctx;
        *fault_addr = ctx;
        return QGPU_FAULT_BAD_CONTEXT;
    }
    switch (op) {
    case QGPU_CMD_CTX_CLEAR:
        qgpu_context_clear(s, ctx);
        return QGPU_FAULT_NONE;
    case QGPU_CMD_CTX_UNBIND:
        fault = qgpu_context_unbind(s, ctx, dw[2], dw[3], fault_addr);
        if (fault) {
            *fault_ctx = ctx;
        }
        return fault;
    case QGPU_CMD_CTX_SET_VM:
        qgpu_context_set_vm(s, ctx, qgpu_cmd_u64(dw, 2));
        return QGPU_FAULT_NONE;
    case QGPU_CMD_EXEC:
        return qgpu_render_exec(s, ctx, dw, fault_addr, fault_ctx);
    default:
        *fault_addr = op;
        return QGPU_FAULT_BAD_OPCODE;
    }
}

/* DMA-buffer commands: one handler each, @dw its fixed dwords */

typedef int QGPUDmaHandler(QGPUState *s, QGPUDmaBuffer *x,
                           const uint32_t *dw, uint64_t *fault_addr);

static int qgpu_dma_nop(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                        uint64_t *fault_addr)
{
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_bind(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                         uint64_t *fault_addr)
{
    return qgpu_context_bind(s, x->ctx, dw[1], qgpu_cmd_u64(dw, 2),
                             qgpu_cmd_u64(dw, 4), fault_addr);
}

static int qgpu_dma_copy(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                         uint64_t *fault_addr)
{
    uint64_t size = dw[5], src, dst;
    int fault;

    fault = qgpu_context_slot_addr(s, x->ctx, dw[1], dw[2], size, &dst,
                                   fault_addr);
    if (!fault) {
        fault = qgpu_context_slot_addr(s, x->ctx, dw[3], dw[4], size, &src,
                                       fault_addr);
    }
    if (fault) {
        return fault;
    }
    qgpu_exec_start_copy(s, QGPU_ENGINE_RENDER, qgpu_space_phys(), src, dst,
                         size, 0);
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_fill(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                         uint64_t *fault_addr)
{
    uint64_t size = dw[3], dst;
    int fault;

    if (size & 3) {
        *fault_addr = size;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_context_slot_addr(s, x->ctx, dw[1], dw[2], size, &dst,
                                   fault_addr);
    if (fault) {
        return fault;
    }
    qgpu_exec_start_fill(s, QGPU_ENGINE_RENDER, qgpu_space_phys(), dst, size,
                         dw[4], 0);
    return QGPU_FAULT_NONE;
}

/* ADD and XOR: dslot,doff = aslot,aoff op bslot,boff over n words */
static int qgpu_dma_alu(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                        uint64_t *fault_addr)
{
    uint64_t size = (uint64_t)dw[7] * 4, dst, a, b;
    int fault;

    fault = qgpu_context_slot_addr(s, x->ctx, dw[1], dw[2], size, &dst,
                                   fault_addr);
    if (!fault) {
        fault = qgpu_context_slot_addr(s, x->ctx, dw[3], dw[4], size, &a,
                                       fault_addr);
    }
    if (!fault) {
        fault = qgpu_context_slot_addr(s, x->ctx, dw[5], dw[6], size, &b,
                                       fault_addr);
    }
    if (fault) {
        return fault;
    }
    qgpu_exec_start_alu(s, QGPU_ENGINE_RENDER, qgpu_space_phys(),
                        QGPU_CMD_OPCODE(dw[0]) == QGPU_DMA_ADD ? QGPU_JOB_ADD
                                                               : QGPU_JOB_XOR,
                        dst, a, b, size);
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_checksum(QGPUState *s, QGPUDmaBuffer *x,
                             const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t size = dw[3], src, dst;
    int fault;

    if (size & 3) {
        *fault_addr = size;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_context_slot_addr(s, x->ctx, dw[1], dw[2], size, &src,
                                   fault_addr);
    if (!fault) {
        fault = qgpu_context_slot_addr(s, x->ctx, dw[4], dw[5], 4, &dst,
                                       fault_addr);
    }
    if (fault) {
        return fault;
    }
    return qgpu_exec_start_csum(s, QGPU_ENGINE_RENDER, qgpu_space_phys(),
                                src, dst, size, fault_addr);
}

/* The 8-byte aligned slot address of FENCE, WAIT and TIMESTAMP */
static int qgpu_dma_addr64(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                           uint64_t *addr, uint64_t *fault_addr)
{
    int fault = qgpu_context_slot_addr(s, x->ctx, dw[1], dw[2], 8, addr,
                                       fault_addr);

    if (fault) {
        return fault;
    }
    if (*addr & 7) {
        *fault_addr = *addr;
        return QGPU_FAULT_BAD_ALIGN;
    }
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_fence(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                          uint64_t *fault_addr)
{
    uint64_t addr;
    int fault = qgpu_dma_addr64(s, x, dw, &addr, fault_addr);

    if (fault) {
        return fault;
    }
    return qgpu_exec_fence(s, QGPU_ENGINE_RENDER, qgpu_space_phys(), addr,
                           qgpu_cmd_u64(dw, 3),
                           QGPU_CMD_FLAGS(dw[0]) & QGPU_FENCE_FLAG_IRQ,
                           fault_addr);
}

static int qgpu_dma_wait(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                         uint64_t *fault_addr)
{
    int fault = qgpu_dma_addr64(s, x, dw, &x->wait_addr, fault_addr);

    if (fault) {
        return fault;
    }
    x->wait_value = qgpu_cmd_u64(dw, 3);
    if (qgpu_render_wait_check(s, &fault, fault_addr) || fault) {
        return fault;
    }
    trace_qgpu_dma_wait(x->ctx, x->wait_addr, x->wait_value);
    x->waiting = true;
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_timestamp(QGPUState *s, QGPUDmaBuffer *x,
                              const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t addr, v;
    int fault = qgpu_dma_addr64(s, x, dw, &addr, fault_addr);

    if (fault) {
        return fault;
    }
    v = cpu_to_le64(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    return qgpu_addr_access(s, addr, &v, 8, true, fault_addr);
}

/*
 * TILE (1.3): the geometry (qgpu_tile_check()), then the destination and
 * the source slot access; the tiled side spans qgpu_tiled_size() bytes,
 * the linear side qgpu_linear_span(). An empty surface moves nothing.
 */
static void qgpu_tile_spans(const uint32_t *dw, bool untile,
                            uint64_t *dlen, uint64_t *slen)
{
    uint64_t tiled = qgpu_tiled_size(dw[5], dw[6]);
    uint64_t linear = qgpu_linear_span(dw[5], dw[6], dw[7]);

    *dlen = untile ? linear : tiled;
    *slen = untile ? tiled : linear;
}

static int qgpu_tile_geometry(const uint32_t *dw, uint64_t *fault_addr)
{
    uint32_t bad = 0;
    int fault = qgpu_tile_check(dw[5], dw[6], dw[7], &bad);

    if (fault) {
        *fault_addr = bad;
    }
    return fault;
}

static int qgpu_dma_tile(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                         uint64_t *fault_addr)
{
    bool untile = QGPU_CMD_FLAGS(dw[0]) & QGPU_TILE_UNTILE;
    uint64_t dlen, slen, src, dst;
    int fault = qgpu_tile_geometry(dw, fault_addr);

    if (fault) {
        return fault;
    }
    qgpu_tile_spans(dw, untile, &dlen, &slen);
    fault = qgpu_context_slot_addr(s, x->ctx, dw[1], dw[2], dlen, &dst,
                                   fault_addr);
    if (!fault) {
        fault = qgpu_context_slot_addr(s, x->ctx, dw[3], dw[4], slen, &src,
                                       fault_addr);
    }
    if (fault) {
        return fault;
    }
    qgpu_exec_start_tile(s, QGPU_ENGINE_RENDER, qgpu_space_phys(), untile,
                         src, dst, dw[5], dw[6], dw[7]);
    return QGPU_FAULT_NONE;
}

/*
 * Virtual DMA-buffer commands (1.2): as their slot counterparts, with VA
 * ranges of the context's address space in place of slot accesses
 */

static int qgpu_dma_vrange(QGPUState *s, QGPUDmaBuffer *x, uint64_t va,
                           uint64_t len, bool is_write, uint64_t *fault_addr)
{
    return qgpu_mmu_check(s, QGPU_ENGINE_RENDER, x->as, va, len, is_write,
                          fault_addr);
}

static int qgpu_dma_vcopy(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                          uint64_t *fault_addr)
{
    uint64_t dst = qgpu_cmd_u64(dw, 1), src = qgpu_cmd_u64(dw, 3);
    uint64_t size = dw[5];
    int fault = qgpu_dma_vrange(s, x, dst, size, true, fault_addr);

    if (!fault) {
        fault = qgpu_dma_vrange(s, x, src, size, false, fault_addr);
    }
    if (fault) {
        return fault;
    }
    qgpu_exec_start_copy(s, QGPU_ENGINE_RENDER, x->as, src, dst, size, 0);
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_vfill(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                          uint64_t *fault_addr)
{
    uint64_t dst = qgpu_cmd_u64(dw, 1), size = dw[3];
    int fault;

    if (size & 3) {
        *fault_addr = size;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_dma_vrange(s, x, dst, size, true, fault_addr);
    if (fault) {
        return fault;
    }
    qgpu_exec_start_fill(s, QGPU_ENGINE_RENDER, x->as, dst, size, dw[4], 0);
    return QGPU_FAULT_NONE;
}

/* VADD and VXOR: d = a op b over n words */
static int qgpu_dma_valu(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                         uint64_t *fault_addr)
{
    uint64_t d = qgpu_cmd_u64(dw, 1), a = qgpu_cmd_u64(dw, 3);
    uint64_t b = qgpu_cmd_u64(dw, 5), size = (uint64_t)dw[7] * 4;
    int fault = qgpu_dma_vrange(s, x, d, size, true, fault_addr);

    if (!fault) {
        fault = qgpu_dma_vrange(s, x, a, size, false, fault_addr);
    }
    if (!fault) {
        fault = qgpu_dma_vrange(s, x, b, size, false, fault_addr);
    }
    if (fault) {
        return fault;
    }
    qgpu_exec_start_alu(s, QGPU_ENGINE_RENDER, x->as,
                        QGPU_CMD_OPCODE(dw[0]) == QGPU_DMA_VADD ? QGPU_JOB_ADD
                                                                : QGPU_JOB_XOR,
                        d, a, b, size);
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_vchecksum(QGPUState *s, QGPUDmaBuffer *x,
                              const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t src = qgpu_cmd_u64(dw, 1), size = dw[3];
    uint64_t dst = qgpu_cmd_u64(dw, 4);
    int fault;

    if (size & 3) {
        *fault_addr = size;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_dma_vrange(s, x, src, size, false, fault_addr);
    if (!fault) {
        fault = qgpu_dma_vrange(s, x, dst, 4, true, fault_addr);
    }
    if (fault) {
        return fault;
    }
    return qgpu_exec_start_csum(s, QGPU_ENGINE_RENDER, x->as, src, dst, size,
                                fault_addr);
}

/* The 8-byte aligned VA of VFENCE, VWAIT and VTIMESTAMP */
static int qgpu_dma_vaddr64(QGPUState *s, QGPUDmaBuffer *x,
                            const uint32_t *dw, bool is_write, uint64_t *addr,
                            uint64_t *fault_addr)
{
    int fault;

    *addr = qgpu_cmd_u64(dw, 1);
    fault = qgpu_dma_vrange(s, x, *addr, 8, is_write, fault_addr);
    if (fault) {
        return fault;
    }
    if (*addr & 7) {
        *fault_addr = *addr;
        return QGPU_FAULT_BAD_ALIGN;
    }
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_vfence(QGPUState *s, QGPUDmaBuffer *x,
                           const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t addr;
    int fault = qgpu_dma_vaddr64(s, x, dw, true, &addr, fault_addr);

    if (fault) {
        return fault;
    }
    return qgpu_exec_fence(s, QGPU_ENGINE_RENDER, x->as, addr,
                           qgpu_cmd_u64(dw, 3),
                           QGPU_CMD_FLAGS(dw[0]) & QGPU_FENCE_FLAG_IRQ,
                           fault_addr);
}

static int qgpu_dma_vwait(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                          uint64_t *fault_addr)
{
    int fault = qgpu_dma_vaddr64(s, x, dw, false, &x->wait_addr, fault_addr);

    if (fault) {
        return fault;
    }
    x->wait_value = qgpu_cmd_u64(dw, 3);
    if (qgpu_render_wait_check(s, &fault, fault_addr) || fault) {
        return fault;
    }
    trace_qgpu_dma_wait(x->ctx, x->wait_addr, x->wait_value);
    x->waiting = true;
    return QGPU_FAULT_NONE;
}

static int qgpu_dma_vtimestamp(QGPUState *s, QGPUDmaBuffer *x,
                               const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t addr, v;
    int fault = qgpu_dma_vaddr64(s, x, dw, true, &addr, fault_addr);

    if (fault) {
        return fault;
    }
    v = cpu_to_le64(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    return qgpu_mmu_access(s, QGPU_ENGINE_RENDER, x->as, addr, &v, 8, true,
                           fault_addr);
}

/* VTILE (1.3): as TILE, with VA ranges (dst written, src read) */
static int qgpu_dma_vtile(QGPUState *s, QGPUDmaBuffer *x, const uint32_t *dw,
                          uint64_t *fault_addr)
{
    bool untile = QGPU_CMD_FLAGS(dw[0]) & QGPU_TILE_UNTILE;
    uint64_t dst = qgpu_cmd_u64(dw, 1), src = qgpu_cmd_u64(dw, 3);
    uint64_t dlen, slen;
    int fault = qgpu_tile_geometry(dw, fault_addr);

    if (fault) {
        return fault;
    }
    qgpu_tile_spans(dw, untile, &dlen, &slen);
    fault = qgpu_dma_vrange(s, x, dst, dlen, true, fault_addr);
    if (!fault) {
        fault = qgpu_dma_vrange(s, x, src, slen, false, fault_addr);
    }
    if (fault) {
        return fault;
    }
    qgpu_exec_start_tile(s, QGPU_ENGINE_RENDER, x->as, untile, src, dst,
                         dw[5], dw[6], dw[7]);
    return QGPU_FAULT_NONE;
}

static QGPUDmaHandler *const qgpu_dma_handlers[] = {
    [QGPU_DMA_NOP] = qgpu_dma_nop,
    [QGPU_DMA_BIND] = qgpu_dma_bind,
    [QGPU_DMA_COPY] = qgpu_dma_copy,
    [QGPU_DMA_FILL] = qgpu_dma_fill,
    [QGPU_DMA_ADD] = qgpu_dma_alu,
    [QGPU_DMA_XOR] = qgpu_dma_alu,
    [QGPU_DMA_CHECKSUM] = qgpu_dma_checksum,
    [QGPU_DMA_FENCE] = qgpu_dma_fence,
    [QGPU_DMA_WAIT] = qgpu_dma_wait,
    [QGPU_DMA_TIMESTAMP] = qgpu_dma_timestamp,
    [QGPU_DMA_TILE] = qgpu_dma_tile,
    [QGPU_DMA_VCOPY] = qgpu_dma_vcopy,
    [QGPU_DMA_VFILL] = qgpu_dma_vfill,
    [QGPU_DMA_VADD] = qgpu_dma_valu,
    [QGPU_DMA_VXOR] = qgpu_dma_valu,
    [QGPU_DMA_VCHECKSUM] = qgpu_dma_vchecksum,
    [QGPU_DMA_VFENCE] = qgpu_dma_vfence,
    [QGPU_DMA_VWAIT] = qgpu_dma_vwait,
    [QGPU_DMA_VTIMESTAMP] = qgpu_dma_vtimestamp,
    [QGPU_DMA_VTILE] = qgpu_dma_vtile,
};

/*
 * Read the DMA-buffer command at x->cur: its fixed dwords into @dw, its
 * opcode into *op. Checks the opcode (one the context's mode runs: slot
 * commands in a physical context, virtual ones in a bound one) and the
 * length in its header.
 */
static int qgpu_dma_fetch(QGPUState *s, QGPUDmaBuffer *x, uint32_t *dw,
                          uint32_t *op, uint64_t *fault_addr)
{
    uint32_t len, fixed, i;
    int fault;

    fault = qgpu_addr_access(s, x->buf + x->cur, dw, 4, false, fault_addr);
    if (fault) {
        return fault;
    }
    dw[0] = le32_to_cpu(dw[0]);
    *op = QGPU_CMD_OPCODE(dw[0]);
    len = QGPU_CMD_LEN(dw[0]);
    fixed = qgpu_dma_cmd_len(*op);
    trace_qgpu_dma_cmd(x->ctx, *op, x->cur);
    *fault_addr = dw[0];
    if (!fixed || !qgpu_dma_cmd_in_mode(*op, x->as.virt) ||
        *op >= ARRAY_SIZE(qgpu_dma_handlers) || !qgpu_dma_handlers[*op]) {
        return QGPU_FAULT_BAD_OPCODE;
    }
    if (len == 0 || len < fixed || (uint64_t)len * 4 > x->end - x->cur) {
        return QGPU_FAULT_BAD_LENGTH;
    }
    /* the rest: the header checked above is the one that runs */
    if (fixed > 1) {
        fault = qgpu_addr_access(s, x->buf + x->cur + 4, dw + 1,
                                 (fixed - 1) * 4, false, fault_addr);
        if (fault) {
            return fault;
        }
    }
    for (i = 1; i < fixed; i++) {
        dw[i] = le32_to_cpu(dw[i]);
    }
    x->cmd_bytes = len * 4;
    *fault_addr = 0;
    return QGPU_FAULT_NONE;
}

/*
 * Decode and start the DMA-buffer command at x->cur. Either it completes
 * here, or it leaves a job (COPY, FILL, ALU, CHECKSUM, TILE) or a WAIT
 * behind.
 */
int qgpu_render_step(QGPUState *s, uint64_t *fault_addr)
{
    QGPUDmaBuffer *x = &s->eng[QGPU_ENGINE_RENDER].dma;
    uint32_t dw[QGPU_CMD_MAX_FIXED_LEN];
    uint32_t op;
    int fault = qgpu_dma_fetch(s, x, dw, &op, fault_addr);

    if (fault) {
        return fault;
    }
    return qgpu_dma_handlers[op](s, x, dw, fault_addr);
}

/* true if the blocked WAIT is satisfied; *fault set on an access fault */
bool qgpu_render_wait_check(QGPUState *s, int *fault, uint64_t *fault_addr)
{
    QGPUDmaBuffer *x = &s->eng[QGPU_ENGINE_RENDER].dma;
    uint64_t v;

    *fault = qgpu_mmu_access(s, QGPU_ENGINE_RENDER, x->as, x->wait_addr, &v,
                             8, false, fault_addr);
    if (*fault) {
        return false;
    }
    return le64_to_cpu(v) >= x->wait_value;
}
