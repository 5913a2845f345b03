/*
 * qgpu: interrupts -- INT_STATUS, INT_MASK, INT_ACK; MSI or INTx; PING
 *
 * Interrupts are level: INT_STATUS & INT_MASK drives INTx. With MSI, a
 * message is sent when a bit becomes pending that was not pending before.
 * PING (1.4) is answered here, inside the register write: the device's
 * cheapest interrupt round trip, the floor a driver measures itself by.
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
    if (s->gone) {
        return;                 /* unplugged: MSI and INTx state are gone */
    }
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

/* INT_STATUS, INT_MASK or PING_ACK */
uint32_t qgpu_irq_reg_read(QGPUState *s, hwaddr addr)
{
    switch (addr) {
    case QGPU_REG_INT_STATUS:
        return s->int_status;
    case QGPU_REG_PING_ACK:
        return s->ping_ack;
    default:
        return s->int_mask;
    }
}

/*
 * PING: answered at once, with no engine work and no bottom half, so that
 * the round trip is only the register write, the interrupt and the
 * driver's handler (hw-spec section 18).
 */
void qgpu_irq_ping(QGPUState *s, uint32_t val)
{
    s->ping_ack = val;
    trace_qgpu_ping(val);
    qgpu_irq_raise(s, QGPU_INT_PING);
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

/*
 * The PCI configuration was written: MSI may have been turned on or off.
 * With MSI off, INTx follows what is pending at once (an event latched
 * while MSI was on asserts it now); with MSI on, INTx is deasserted and
 * only bits pending anew send a message.
 */
void qgpu_irq_config_written(QGPUState *s)
{
    qgpu_irq_update(s);
}

void qgpu_irq_reset(QGPUState *s)
{
    s->int_status = 0;
    s->int_mask = 0;
    s->ping_ack = 0;
    qgpu_irq_update(s);
}
