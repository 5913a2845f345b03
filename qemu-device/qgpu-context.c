/*
 * qgpu: render contexts -- per-context slot tables (context save) and the
 * faulted state, and (1.2) the address space each context is bound to.
 *
 * Each of the max-contexts contexts has max-slots slots; DMA BIND sets a
 * slot to a range of VRAM or GART, and DMA-buffer commands address memory
 * as (slot, offset). A fault of an EXEC invalidates its context: the slot
 * table is cleared and the context is marked faulted, and every later EXEC
 * of it is skipped until CTX_CLEAR (CTX_STATUS shows the mark).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qgpu-state.h"
#include "qgpu-addr.h"
#include "qgpu-context.h"
#include "trace.h"

static QGPUSlot *qgpu_context_slot(QGPUState *s, uint32_t ctx, uint32_t slot)
{
    return &s->slots[(size_t)ctx * s->max_slots + slot];
}

static void qgpu_context_unbind_range(QGPUState *s, uint32_t ctx,
                                      uint32_t first, uint32_t count)
{
    memset(qgpu_context_slot(s, ctx, first), 0, sizeof(QGPUSlot) * count);
}

void qgpu_context_realize(QGPUState *s)
{
    s->slots = g_new0(QGPUSlot, (size_t)s->max_slots * s->max_contexts);
    s->ctx_faulted = g_new0(bool, s->max_contexts);
    s->ctx_vm = g_new0(uint64_t, s->max_contexts);
}

void qgpu_context_finalize(QGPUState *s)
{
    g_free(s->slots);
    s->slots = NULL;
    g_free(s->ctx_faulted);
    s->ctx_faulted = NULL;
    g_free(s->ctx_vm);
    s->ctx_vm = NULL;
}

void qgpu_context_reset(QGPUState *s)
{
    if (s->slots) {
        memset(s->slots, 0,
               sizeof(QGPUSlot) * s->max_slots * (size_t)s->max_contexts);
    }
    if (s->ctx_faulted) {
        memset(s->ctx_faulted, 0, sizeof(bool) * s->max_contexts);
    }
    if (s->ctx_vm) {
        memset(s->ctx_vm, 0, sizeof(uint64_t) * s->max_contexts);
    }
    s->ctx_sel = 0;
}

/* CTX_STATUS of @ctx (CTX_SEL): 0 for a context the device does not have */
static uint32_t qgpu_context_status(QGPUState *s, uint32_t ctx)
{
    if (ctx >= s->max_contexts) {
        qemu_log_mask(LOG_GUEST_ERROR, "qgpu: CTX_STATUS of context 0x%x, "
                      "beyond max-contexts: reads 0\n", ctx);
        return 0;
    }
    return s->ctx_faulted[ctx] ? QGPU_CTX_STATUS_FAULTED : 0;
}

/* CTX_SEL or CTX_STATUS */
uint32_t qgpu_context_reg_read(QGPUState *s, hwaddr addr)
{
    if (addr == QGPU_REG_CTX_SEL) {
        return s->ctx_sel;
    }
    return qgpu_context_status(s, s->ctx_sel);
}

/* CTX_SEL */
void qgpu_context_reg_write(QGPUState *s, hwaddr addr, uint32_t val)
{
    s->ctx_sel = val;
}

/* Is @ctx (< max_contexts) marked faulted: its EXECs skipped? */
bool qgpu_context_faulted(QGPUState *s, uint32_t ctx)
{
    return s->ctx_faulted[ctx];
}

/*
 * A fault was recorded for an EXEC of @ctx: the driver's idea of the slot
 * table is now wrong, so no later EXEC of the context may use any binding.
 */
void qgpu_context_fault(QGPUState *s, uint32_t ctx)
{
    if (ctx < s->max_contexts) {
        trace_qgpu_context_faulted(ctx);
        qgpu_context_unbind_range(s, ctx, 0, s->max_slots);
        s->ctx_faulted[ctx] = true;
    }
}

/* CTX_CLEAR of @ctx (< max_contexts) */
void qgpu_context_clear(QGPUState *s, uint32_t ctx)
{
    trace_qgpu_context_clear(ctx);
    qgpu_context_unbind_range(s, ctx, 0, s->max_slots);
    s->ctx_faulted[ctx] = false;
}

/* CTX_UNBIND of slots [first, first + count) of @ctx (< max_contexts) */
int qgpu_context_unbind(QGPUState *s, uint32_t ctx, uint32_t first,
                        uint32_t count, uint64_t *fault_addr)
{
    if ((uint64_t)first + count > s->max_slots) {
        *fault_addr = first;
        return QGPU_FAULT_BAD_SLOT;
    }
    trace_qgpu_context_unbind(ctx, first, count);
    if (count) {
        qgpu_context_unbind_range(s, ctx, first, count);
    }
    return QGPU_FAULT_NONE;
}

/* DMA BIND: @slot of @ctx to [addr, addr + size), or unbound if size is 0 */
int qgpu_context_bind(QGPUState *s, uint32_t ctx, uint32_t slot,
                      uint64_t addr, uint64_t size, uint64_t *fault_addr)
{
    QGPUSlot *sl;

    if (slot >= s->max_slots) {
        *fault_addr = slot;
        return QGPU_FAULT_BAD_SLOT;
    }
    if (size && !qgpu_addr_in_vram_or_gart(s, addr, size)) {
        *fault_addr = addr;
        return QGPU_FAULT_BAD_ADDRESS;
    }
    trace_qgpu_context_bind(ctx, slot, addr, size);
    sl = qgpu_context_slot(s, ctx, slot);
    sl->addr = size ? addr : 0;
    sl->size = size;
    return QGPU_FAULT_NONE;
}

/* GPU address of [off, off + len) inside a bound slot of the context */
int qgpu_context_slot_addr(QGPUState *s, uint32_t ctx, uint32_t slot,
                           uint64_t off, uint64_t len, uint64_t *addr,
                           uint64_t *fault_addr)
{
    QGPUSlot *sl;

    if (slot >= s->max_slots) {
        *fault_addr = slot;
        return QGPU_FAULT_BAD_SLOT;
    }
    sl = qgpu_context_slot(s, ctx, slot);
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

/*
 * CTX_SET_VM of @ctx (< max_contexts): bind it to the address space of
 * @root (VALID set), or back to physical mode (VALID clear). Neither
 * CTX_CLEAR nor a fault changes the binding; a device reset does.
 */
void qgpu_context_set_vm(QGPUState *s, uint32_t ctx, uint64_t root)
{
    trace_qgpu_context_set_vm(ctx, root);
    s->ctx_vm[ctx] = root & QGPU_PTE_VALID ? root : 0;
}

/* The address space of @ctx (< max_contexts) */
QGPUSpace qgpu_context_space(QGPUState *s, uint32_t ctx)
{
    QGPUSpace as = { .virt = s->ctx_vm[ctx] != 0, .root = s->ctx_vm[ctx] };

    return as;
}
