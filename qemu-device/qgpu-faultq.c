/*
 * qgpu: the fault queue -- every fault the device records
 *
 * Every fault is counted (FAULT_COUNT) and raises INT_FAULT; its record
 * goes to the tail of a FIFO of QGPU_FAULTQ_DEPTH records, or, when the
 * FIFO is full, only FAULTQ_LOST counts it. FAULT_REASON..FAULT_OFFSET
 * (1.2: and FAULT_INFO, FAULT_VM) show the oldest record; FAULTQ_POP
 * removes it. A fault is always bad guest input, so each is also logged as
 * a guest error (-d guest_errors).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qgpu-state.h"
#include "qgpu-irq.h"
#include "qgpu-faultq.h"
#include "trace.h"

/*
 * Record a fault; @info and @vm are FAULT_INFO and FAULT_VM (1.2), both 0
 * for a fault that is not one of a virtual access.
 */
void qgpu_faultq_record_vm(QGPUState *s, uint32_t reason, uint32_t engine,
                           uint32_t context, uint64_t addr, uint32_t offset,
                           uint32_t info, uint64_t vm)
{
    trace_qgpu_fault(reason, engine, context, addr, offset);
    qemu_log_mask(LOG_GUEST_ERROR, "qgpu: fault %s: engine 0x%x context 0x%x "
                  "addr 0x%" PRIx64 " offset 0x%x\n",
                  qgpu_fault_reason_name(reason), engine, context, addr,
                  offset);
    if (info) {
        trace_qgpu_fault_vm(info, vm);
        qemu_log_mask(LOG_GUEST_ERROR, "qgpu: fault %s: virtual, %s, level "
                      "%u, root 0x%" PRIx64 "\n",
                      qgpu_fault_reason_name(reason),
                      info & QGPU_FAULT_INFO_WRITE ? "write" : "read",
                      QGPU_FAULT_INFO_LEVEL(info), vm);
    }
    s->fault_count++;
    if (s->faultq_len < QGPU_FAULTQ_DEPTH) {
        QGPUFault *f = &s->faultq[(s->faultq_head + s->faultq_len) %
                                  QGPU_FAULTQ_DEPTH];

        f->reason = reason;
        f->engine = engine;
        f->context = context;
        f->addr = addr;
        f->offset = offset;
        f->info = info;
        f->vm = vm;
        s->faultq_len++;
    } else {
        s->faultq_lost++;
    }
    qgpu_irq_raise(s, QGPU_INT_FAULT);
}

void qgpu_faultq_record(QGPUState *s, uint32_t reason, uint32_t engine,
                        uint32_t context, uint64_t addr, uint32_t offset)
{
    qgpu_faultq_record_vm(s, reason, engine, context, addr, offset, 0, 0);
}

/*
 * FAULT_COUNT, FAULT_REASON..FAULT_OFFSET and FAULT_INFO, FAULT_VM (the
 * oldest record, all 0 when the queue is empty), FAULTQ_COUNT, FAULTQ_LOST
 */
uint32_t qgpu_faultq_reg_read(QGPUState *s, hwaddr addr)
{
    QGPUFault none = { 0 };
    QGPUFault *f = s->faultq_len ? &s->faultq[s->faultq_head] : &none;

    switch (addr) {
    case QGPU_REG_FAULT_COUNT:
        return s->fault_count;
    case QGPU_REG_FAULT_REASON:
        return f->reason;
    case QGPU_REG_FAULT_ENGINE:
        return f->engine;
    case QGPU_REG_FAULT_CONTEXT:
        return f->context;
    case QGPU_REG_FAULT_ADDR_LO:
        return f->addr;
    case QGPU_REG_FAULT_ADDR_HI:
        return f->addr >> 32;
    case QGPU_REG_FAULT_OFFSET:
        return f->offset;
    case QGPU_REG_FAULT_INFO:
        return f->info;
    case QGPU_REG_FAULT_VM_LO:
        return f->vm;
    case QGPU_REG_FAULT_VM_HI:
        return f->vm >> 32;
    case QGPU_REG_FAULTQ_COUNT:
        return s->faultq_len;
    default:
        return s->faultq_lost;
    }
}

/* FAULTQ_POP: 1 removes the oldest record; false for any other value */
bool qgpu_faultq_reg_write(QGPUState *s, hwaddr addr, uint32_t val)
{
    if (val != 1) {
        return false;
    }
    if (s->faultq_len) {
        s->faultq_head = (s->faultq_head + 1) % QGPU_FAULTQ_DEPTH;
        s->faultq_len--;
    }
    return true;
}

/* FAULT_COUNT is kept: it counts every fault since power-on. */
void qgpu_faultq_reset(QGPUState *s)
{
    memset(s->faultq, 0, sizeof(s->faultq));
    s->faultq_head = 0;
    s->faultq_len = 0;
    s->faultq_lost = 0;
}
