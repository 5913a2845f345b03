/*
 * qgpu: render engine (engine 1) -- EXEC of DMA buffers with per-context
 * slot tables (context save), CTX_CLEAR, CTX_UNBIND, and the DMA-buffer
 * commands.
 *
 * A fault inside a DMA buffer is recorded, abandons the rest of that buffer
 * and the ring continues with its next command. Any fault of an EXEC also
 * invalidates its context: the slot table is cleared and the context is
 * marked faulted, and every later EXEC of it is skipped until CTX_CLEAR.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/timer.h"
#include "qgpu.h"

#define QGPU_DMA_MAX_FIXED_DW   8

static inline uint64_t qgpu_dw64(const uint32_t *dw, unsigned i)
{
    return deposit64(dw[i], 32, 32, dw[i + 1]);
}

static QGPUSlot *qgpu_slot(QGPUState *s, uint32_t ctx, uint32_t slot)
{
    return &s->slots[(size_t)ctx * s->max_slots + slot];
}

static void qgpu_ctx_unbind(QGPUState *s, uint32_t ctx, uint32_t first,
                            uint32_t count)
{
    memset(qgpu_slot(s, ctx, first), 0, sizeof(QGPUSlot) * count);
}

void qgpu_render_reset(QGPUState *s)
{
    if (s->slots) {
        memset(s->slots, 0,
               sizeof(QGPUSlot) * s->max_slots * (size_t)s->max_contexts);
    }
    if (s->ctx_faulted) {
        memset(s->ctx_faulted, 0, sizeof(bool) * s->max_contexts);
    }
}

/*
 * A fault was recorded for an EXEC of @ctx: the driver's idea of the slot
 * table is now wrong, so no later EXEC of the context may use any binding.
 */
void qgpu_render_ctx_fault(QGPUState *s, uint32_t ctx)
{
    if (ctx < s->max_contexts) {
        qgpu_ctx_unbind(s, ctx, 0, s->max_slots);
        s->ctx_faulted[ctx] = true;
    }
}

/* GPU address of [off, off + len) inside a bound slot of the context */
static int qgpu_slot_addr(QGPUState *s, uint32_t ctx, uint32_t slot,
                          uint64_t off, uint64_t len, uint64_t *addr,
                          uint64_t *fault_addr)
{
    QGPUSlot *sl;

    if (slot >= s->max_slots) {
        *fault_addr = slot;
        return QGPU_FAULT_BAD_SLOT;
    }
    sl = qgpu_slot(s, ctx, slot);
    if (!sl->size) {
        *fault_addr = slot;
        return QGPU_FAULT_BAD_SLOT;
    }
    if (off > sl->size || len > sl->size - off) {
        *fault_addr = off;
        return QGPU_FAULT_SLOT_BOUNDS;
    }
    *addr = sl->addr + off;
    return QGPU_FAULT_NONE;
}

int qgpu_render_ring_cmd(QGPUState *s, QGPUEngine *e, uint32_t op,
                         const uint32_t *dw, uint64_t *fault_addr,
                         uint32_t *fault_ctx)
{
    uint32_t ctx = dw[1];
    uint64_t buf;
    uint32_t start, end;

    if (ctx >= s->max_contexts) {
        *fault_ctx = ctx;
        *fault_addr = ctx;
        return QGPU_FAULT_BAD_CONTEXT;
    }
    if (op == QGPU_CMD_CTX_CLEAR) {
        qgpu_ctx_unbind(s, ctx, 0, s->max_slots);
        s->ctx_faulted[ctx] = false;
        return QGPU_FAULT_NONE;
    }
    if (op == QGPU_CMD_CTX_UNBIND) {
        uint32_t first = dw[2], count = dw[3];

        if ((uint64_t)first + count > s->max_slots) {
            *fault_ctx = ctx;
            *fault_addr = first;
            return QGPU_FAULT_BAD_SLOT;
        }
        if (count) {
            qgpu_ctx_unbind(s, ctx, first, count);
        }
        return QGPU_FAULT_NONE;
    }
    if (s->ctx_faulted[ctx]) {
        /* skipped whole: nothing runs, nothing is checked or recorded */
        return QGPU_FAULT_NONE;
    }

    buf = qgpu_dw64(dw, 2);
    start = dw[4];
    end = dw[5];
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
         qgpu_check_range(s, buf + start, end - start))) {
        return QGPU_FAULT_BAD_ADDRESS;
    }
    *fault_ctx = QGPU_NO_CONTEXT;
    *fault_addr = 0;
    if (start == end) {
        return QGPU_FAULT_NONE;
    }
    e->exec.active = true;
    e->exec.waiting = false;
    e->exec.ctx = ctx;
    e->exec.buf = buf;
    e->exec.cur = start;
    e->exec.end = end;
    e->exec.cmd_bytes = 0;
    return QGPU_FAULT_NONE;
}

/* true if the blocked WAIT is satisfied; *fault set on an access fault */
bool qgpu_render_wait_check(QGPUState *s, QGPUEngine *e, int *fault,
                            uint64_t *fault_addr)
{
    uint64_t v;

    *fault = qgpu_gpu_access(s, e->exec.wait_addr, &v, 8, false, fault_addr);
    if (*fault) {
        return false;
    }
    return le64_to_cpu(v) >= e->exec.wait_value;
}

/* 64-bit slot access used by FENCE, WAIT and TIMESTAMP: 8-byte aligned */
static int qgpu_slot_addr64(QGPUState *s, uint32_t ctx, const uint32_t *dw,
                            uint64_t *addr, uint64_t *fault_addr)
{
    int fault = qgpu_slot_addr(s, ctx, dw[1], dw[2], 8, addr, fault_addr);

    if (fault) {
        return fault;
    }
    if (*addr & 7) {
        *fault_addr = *addr;
        return QGPU_FAULT_BAD_ALIGN;
    }
    return QGPU_FAULT_NONE;
}

/*
 * Parse and start the DMA-buffer command at exec.cur. Either it completes
 * here, or it leaves a job (COPY, FILL, ALU, CHECKSUM) or a WAIT behind.
 */
int qgpu_render_step(QGPUState *s, QGPUEngine *e, int64_t *budget,
                     uint64_t *fault_addr)
{
    QGPUExec *x = &e->exec;
    QGPUJob *job = &e->job;
    uint32_t dw[QGPU_DMA_MAX_FIXED_DW];
    uint32_t op, len, fixed, i;
    uint64_t a, b, d, size, v;
    int fault;

    fault = qgpu_gpu_access(s, x->buf + x->cur, dw, 4, false, fault_addr);
    if (fault) {
        return fault;
    }
    dw[0] = le32_to_cpu(dw[0]);
    op = QGPU_CMD_OPCODE(dw[0]);
    len = QGPU_CMD_LEN(dw[0]);
    fixed = qgpu_dma_cmd_len(op);
    *fault_addr = dw[0];
    if (!fixed) {
        return QGPU_FAULT_BAD_OPCODE;
    }
    if (len == 0 || len < fixed || (uint64_t)len * 4 > x->end - x->cur) {
        return QGPU_FAULT_BAD_LENGTH;
    }
    fault = qgpu_gpu_access(s, x->buf + x->cur, dw, fixed * 4, false,
                            fault_addr);
    if (fault) {
        return fault;
    }
    for (i = 0; i < fixed; i++) {
        dw[i] = le32_to_cpu(dw[i]);
    }
    x->cmd_bytes = len * 4;
    memset(job, 0, sizeof(*job));
    *fault_addr = 0;

    switch (op) {
    case QGPU_DMA_NOP:
        return QGPU_FAULT_NONE;

    case QGPU_DMA_BIND: {
        QGPUSlot *sl;

        if (dw[1] >= s->max_slots) {
            *fault_addr = dw[1];
            return QGPU_FAULT_BAD_SLOT;
        }
        a = qgpu_dw64(dw, 2);
        size = qgpu_dw64(dw, 4);
        if (size && !qgpu_in_vram_or_gart(s, a, size)) {
            *fault_addr = a;
            return QGPU_FAULT_BAD_ADDRESS;
        }
        sl = qgpu_slot(s, x->ctx, dw[1]);
        sl->addr = size ? a : 0;
        sl->size = size;
        return QGPU_FAULT_NONE;
    }

    case QGPU_DMA_COPY:
        size = dw[5];
        fault = qgpu_slot_addr(s, x->ctx, dw[1], dw[2], size, &d, fault_addr);
        if (!fault) {
            fault = qgpu_slot_addr(s, x->ctx, dw[3], dw[4], size, &a,
                                   fault_addr);
        }
        if (fault) {
            return fault;
        }
        if (size) {
            job->kind = QGPU_JOB_COPY;
            job->src = a;
            job->dst = d;
            job->size = size;
        }
        return QGPU_FAULT_NONE;

    case QGPU_DMA_FILL:
        size = dw[3];
        if (size & 3) {
            *fault_addr = size;
            return QGPU_FAULT_BAD_ALIGN;
        }
        fault = qgpu_slot_addr(s, x->ctx, dw[1], dw[2], size, &d, fault_addr);
        if (fault) {
            return fault;
        }
        if (size) {
            job->kind = QGPU_JOB_FILL;
            job->dst = d;
            job->size = size;
            job->pattern = dw[4];
        }
        return QGPU_FAULT_NONE;

    case QGPU_DMA_ADD:
    case QGPU_DMA_XOR:
        size = (uint64_t)dw[7] * 4;
        fault = qgpu_slot_addr(s, x->ctx, dw[1], dw[2], size, &d, fault_addr);
        if (!fault) {
            fault = qgpu_slot_addr(s, x->ctx, dw[3], dw[4], size, &a,
                                   fault_addr);
        }
        if (!fault) {
            fault = qgpu_slot_addr(s, x->ctx, dw[5], dw[6], size, &b,
                                   fault_addr);
        }
        if (fault) {
            return fault;
        }
        if (size) {
            job->kind = op == QGPU_DMA_ADD ? QGPU_JOB_ADD : QGPU_JOB_XOR;
            job->dst = d;
            job->src = a;
            job->src2 = b;
            job->size = size;
        }
        return QGPU_FAULT_NONE;

    case QGPU_DMA_CHECKSUM:
        size = dw[3];
        if (size & 3) {
            *fault_addr = size;
            return QGPU_FAULT_BAD_ALIGN;
        }
        fault = qgpu_slot_addr(s, x->ctx, dw[1], dw[2], size, &a, fault_addr);
        if (!fault) {
            fault = qgpu_slot_addr(s, x->ctx, dw[4], dw[5], 4, &d,
                                   fault_addr);
        }
        if (fault) {
            return fault;
        }
        if (size == 0) {
            uint32_t h = cpu_to_le32(QGPU_CSUM_INIT);

            return qgpu_gpu_access(s, d, &h, 4, true, fault_addr);
        }
        job->kind = QGPU_JOB_CSUM;
        job->src = a;
        job->dst = d;
        job->size = size;
        job->csum = QGPU_CSUM_INIT;
        return QGPU_FAULT_NONE;

    case QGPU_DMA_FENCE:
        fault = qgpu_slot_addr64(s, x->ctx, dw, &d, fault_addr);
        if (fault) {
            return fault;
        }
        return qgpu_fence(s, QGPU_ENGINE_RENDER, d, qgpu_dw64(dw, 3),
                          QGPU_CMD_FLAGS(dw[0]) & QGPU_FENCE_FLAG_IRQ,
                          fault_addr);

    case QGPU_DMA_WAIT:
        fault = qgpu_slot_addr64(s, x->ctx, dw, &d, fault_addr);
        if (fault) {
            return fault;
        }
        x->wait_addr = d;
        x->wait_value = qgpu_dw64(dw, 3);
        if (qgpu_render_wait_check(s, e, &fault, fault_addr) || fault) {
            return fault;
        }
        x->waiting = true;
        return QGPU_FAULT_NONE;

    case QGPU_DMA_TIMESTAMP:
        fault = qgpu_slot_addr64(s, x->ctx, dw, &d, fault_addr);
        if (fault) {
            return fault;
        }
        v = cpu_to_le64(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
        return qgpu_gpu_access(s, d, &v, 8, true, fault_addr);
    }
    return QGPU_FAULT_BAD_OPCODE;
}

/* ADD, XOR and CHECKSUM, in bounded chunks */
int qgpu_alu_run(QGPUState *s, QGPUJob *job, QGPUEngine *e,
                 int64_t *budget, uint64_t *fault_addr)
{
    g_autofree uint32_t *ba = g_malloc(QGPU_BOUNCE_SIZE);
    g_autofree uint32_t *bb = NULL;
    int fault;

    while (job->done < job->size && *budget > 0) {
        uint64_t n = MIN(job->size - job->done, QGPU_BOUNCE_SIZE);
        uint64_t i;

        fault = qgpu_gpu_access(s, job->src + job->done, ba, n, false,
                                fault_addr);
        if (fault) {
            return fault;
        }
        if (job->kind == QGPU_JOB_CSUM) {
            uint32_t h = job->csum;

            for (i = 0; i < n / 4; i++) {
                h ^= le32_to_cpu(ba[i]);
                h *= QGPU_CSUM_PRIME;
            }
            job->csum = h;
        } else {
            if (!bb) {
                bb = g_malloc(QGPU_BOUNCE_SIZE);
            }
            fault = qgpu_gpu_access(s, job->src2 + job->done, bb, n, false,
                                    fault_addr);
            if (fault) {
                return fault;
            }
            for (i = 0; i < n / 4; i++) {
                uint32_t x = le32_to_cpu(ba[i]), y = le32_to_cpu(bb[i]);

                ba[i] = cpu_to_le32(job->kind == QGPU_JOB_ADD ? x + y
                                                              : x ^ y);
            }
            fault = qgpu_gpu_access(s, job->dst + job->done, ba, n, true,
                                    fault_addr);
            if (fault) {
                return fault;
            }
        }
        job->done += n;
        *budget -= n;
        qgpu_account(s, e, n);
        if (job->kind == QGPU_JOB_CSUM && job->done == job->size) {
            uint32_t h = cpu_to_le32(job->csum);

            return qgpu_gpu_access(s, job->dst, &h, 4, true, fault_addr);
        }
    }
    return QGPU_FAULT_NONE;
}
