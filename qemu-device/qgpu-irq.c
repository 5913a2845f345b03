/*
 * qgpu: interrupts -- INT_STATUS, INT_MASK, INT_ACK; MSI or INTx
 *
 * Interrupts are level: INT_STATUS & INT_MASK drives INTx. With MSI, a
 * message is sent when a bit becomes pending that was not pending before.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/msi.h"
#include "qgpu-state.h"
#include "qgpu-irq.h"
#include "trace.h"

static void qgpu_irq_update(QGPUState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t pending = s->int_status & s->int_mask;
    uint32_t fresh = pending & ~s->irq_pending;

    s->irq_pending = pending;
    if (msi_enabled(pdev)) {
        pci_set_irq(pdev, 0);
        if (fresh) {
            /*
             * The message is a DMA write to a guest-chosen address, which
             * may be our own registers: refuse such re-entrant accesses.
             */
            bool busy = s->in_engine;

            s->in_engine = true;
            msi_notify(pdev, 0);
            s->in_engine = busy;
        }
    } else {
        pci_set_irq(pdev, pending != 0);
    }
}

void qgpu_irq_raise(QGPUState *s, uint32_t bits)
{
    s->int_status |= bits & QGPU_INT_ALL;
    trace_qgpu_irq_raise(bits, s->int_status);
    qgpu_irq_update(s);
}

/* INT_STATUS or INT_MASK */
uint32_t qgpu_irq_reg_read(QGPUState *s, hwaddr addr)
{
    return addr == QGPU_REG_INT_STATUS ? s->int_status : s->int_mask;
}

/* INT_MASK, or INT_ACK (write 1 to clear) */
void qgpu_irq_reg_write(QGPUState *s, hwaddr addr, uint32_t val)
{
    if (addr == QGPU_REG_INT_MASK) {
        s->int_mask = val & QGPU_INT_ALL;
    } else {
        s->int_status &= ~val;
        trace_qgpu_irq_ack(val, s->int_status);
    }
    qgpu_irq_update(s);
}

void qgpu_irq_reset(QGPUState *s)
{
    s->int_status = 0;
    s->int_mask = 0;
    qgpu_irq_update(s);
}
