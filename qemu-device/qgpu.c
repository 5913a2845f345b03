/*
 * qgpu: virtual PCI GPU -- PCI device, properties, BAR0 registers, IRQ, reset
 *
 * The contract is docs/hw-spec.md; all numbers come from qgpu_regs.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/memfd.h"
#include "qemu/host-utils.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qgpu.h"

/* Interrupts */

static void qgpu_update_irq(QGPUState *s)
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

void qgpu_raise_irq(QGPUState *s, uint32_t bits)
{
    s->int_status |= bits & QGPU_INT_ALL;
    qgpu_update_irq(s);
}

/*
 * Every fault is counted and raises INT_FAULT; its record goes to the tail
 * of the fault queue, or, when the queue is full, only FAULTQ_LOST counts it.
 */
void qgpu_record_fault(QGPUState *s, uint32_t reason, uint32_t engine,
                       uint32_t context, uint64_t addr, uint32_t offset)
{
    s->fault_count++;
    if (s->faultq_len < QGPU_FAULTQ_DEPTH) {
        QGPUFault *f = &s->faultq[(s->faultq_head + s->faultq_len) %
                                  QGPU_FAULTQ_DEPTH];

        f->reason = reason;
        f->engine = engine;
        f->context = context;
        f->addr = addr;
        f->offset = offset;
        s->faultq_len++;
    } else {
        s->faultq_lost++;
    }
    qgpu_raise_irq(s, QGPU_INT_FAULT);
}

/* The oldest queued record; all zero when the queue is empty. */
static QGPUFault qgpu_fault_oldest(QGPUState *s)
{
    QGPUFault none = { 0 };

    return s->faultq_len ? s->faultq[s->faultq_head] : none;
}

static void qgpu_fault_pop(QGPUState *s)
{
    if (s->faultq_len) {
        s->faultq_head = (s->faultq_head + 1) % QGPU_FAULTQ_DEPTH;
        s->faultq_len--;
    }
}

static uint32_t qgpu_ctx_status(QGPUState *s)
{
    if (s->ctx_sel >= s->max_contexts) {
        return 0;
    }
    return s->ctx_faulted[s->ctx_sel] ? QGPU_CTX_STATUS_FAULTED : 0;
}

static void qgpu_mmio_fault(QGPUState *s, uint32_t reason, uint64_t addr,
                            uint32_t offset)
{
    qgpu_record_fault(s, reason, QGPU_FAULT_ENGINE_MMIO, QGPU_NO_CONTEXT,
                      addr, offset);
}

/* Device reset (REG_RESET and DeviceClass reset) */

static void qgpu_device_reset(QGPUState *s)
{
    qgpu_engine_reset_all(s);
    qgpu_render_reset(s);
    qgpu_hap_reset(s);
    s->scratch = 0;
    s->int_status = 0;
    s->int_mask = 0;
    s->gart_base = 0;
    s->gart_ctrl = 0;
    memset(s->faultq, 0, sizeof(s->faultq));
    s->faultq_head = 0;
    s->faultq_len = 0;
    s->faultq_lost = 0;
    s->ctx_sel = 0;
    qgpu_update_irq(s);
}

static void qgpu_qdev_reset(DeviceState *dev)
{
    qgpu_device_reset(QGPU(dev));
}

/* BAR0 */

static uint32_t qgpu_caps(QGPUState *s)
{
    uint32_t caps = QGPU_CAP_FENCE | QGPU_CAP_PAGING | QGPU_CAP_RENDER |
                    QGPU_CAP_CTX_SAVE | QGPU_CAP_FAULT_QUEUE;

    if (s->gart_size) {
        caps |= QGPU_CAP_GART;
    }
    if (s->hap_size) {
        caps |= QGPU_CAP_HOST_APERTURE;
    }
    return caps;
}

static uint32_t qgpu_reg_read(QGPUState *s, hwaddr addr)
{
    QGPUFault f = qgpu_fault_oldest(s);
    uint64_t cycles;
    bool ok;

    if (addr >= QGPU_ENGINE_BASE(0) &&
        addr < QGPU_ENGINE_BASE(QGPU_NUM_ENGINES)) {
        unsigned n = (addr - QGPU_ENGINE_BASE(0)) / 0x100;
        uint32_t v = qgpu_engine_read(s, n, addr & 0xff, &ok);
        return ok ? v : 0;
    }

    switch (addr) {
    case QGPU_REG_ID:
        return QGPU_ID_MAGIC;
    case QGPU_REG_VERSION:
        return (QGPU_VERSION_MAJOR << 16) | QGPU_VERSION_MINOR;
    case QGPU_REG_CAPS:
        return qgpu_caps(s);
    case QGPU_REG_VRAM_SIZE_LO:
        return s->vram_size;
    case QGPU_REG_VRAM_SIZE_HI:
        return s->vram_size >> 32;
    case QGPU_REG_VISIBLE_SIZE_LO:
        return s->visible_size;
    case QGPU_REG_VISIBLE_SIZE_HI:
        return s->visible_size >> 32;
    case QGPU_REG_GART_SIZE_LO:
        return s->gart_size;
    case QGPU_REG_GART_SIZE_HI:
        return s->gart_size >> 32;
    case QGPU_REG_HAP_SIZE_LO:
        return s->hap_size;
    case QGPU_REG_HAP_SIZE_HI:
        return s->hap_size >> 32;
    case QGPU_REG_NUM_ENGINES:
        return QGPU_NUM_ENGINES;
    case QGPU_REG_MAX_SLOTS:
        return s->max_slots;
    case QGPU_REG_MAX_CONTEXTS:
        return s->max_contexts;
    case QGPU_REG_SCRATCH:
        return s->scratch;
    case QGPU_REG_INT_STATUS:
        return s->int_status;
    case QGPU_REG_INT_MASK:
        return s->int_mask;
    case QGPU_REG_FAULT_COUNT:
        return s->fault_count;
    case QGPU_REG_FAULT_REASON:
        return f.reason;
    case QGPU_REG_FAULT_ENGINE:
        return f.engine;
    case QGPU_REG_FAULT_CONTEXT:
        return f.context;
    case QGPU_REG_FAULT_ADDR_LO:
        return f.addr;
    case QGPU_REG_FAULT_ADDR_HI:
        return f.addr >> 32;
    case QGPU_REG_FAULT_OFFSET:
        return f.offset;
    case QGPU_REG_HAP_FAULT_COUNT:
        return s->hap_fault_count;
    case QGPU_REG_FAULTQ_COUNT:
        return s->faultq_len;
    case QGPU_REG_FAULTQ_LOST:
        return s->faultq_lost;
    case QGPU_REG_GART_BASE_LO:
        return s->gart_base;
    case QGPU_REG_GART_BASE_HI:
        return s->gart_base >> 32;
    case QGPU_REG_GART_CTRL:
        return s->gart_ctrl;
    case QGPU_REG_HAP_INDEX:
        return s->hap_index;
    case QGPU_REG_HAP_COUNT:
        return s->hap_count;
    case QGPU_REG_HAP_VRAM_PAGE_LO:
        return s->hap_vram_page;
    case QGPU_REG_HAP_VRAM_PAGE_HI:
        return s->hap_vram_page >> 32;
    case QGPU_REG_HAP_MAPPED:
        return s->hap_mapped;
    case QGPU_REG_CTX_SEL:
        return s->ctx_sel;
    case QGPU_REG_CTX_STATUS:
        return qgpu_ctx_status(s);
    case QGPU_REG_CYCLES_LO:
    case QGPU_REG_CYCLES_HI:
        cycles = s->work_cmds + s->work_bytes / 64;
        return addr == QGPU_REG_CYCLES_LO ? cycles : cycles >> 32;
    default:
        return 0;               /* unknown and write-only registers */
    }
}

/* Returns false if the register is not writable (BAD_REGISTER). */
static bool qgpu_reg_write(QGPUState *s, hwaddr addr, uint32_t val)
{
    if (addr >= QGPU_ENGINE_BASE(0) &&
        addr < QGPU_ENGINE_BASE(QGPU_NUM_ENGINES)) {
        unsigned n = (addr - QGPU_ENGINE_BASE(0)) / 0x100;
        return qgpu_engine_write(s, n, addr & 0xff, val);
    }

    switch (addr) {
    case QGPU_REG_SCRATCH:
        s->scratch = val;
        return true;
    case QGPU_REG_INT_MASK:
        s->int_mask = val & QGPU_INT_ALL;
        qgpu_update_irq(s);
        return true;
    case QGPU_REG_INT_ACK:
        s->int_status &= ~val;
        qgpu_update_irq(s);
        return true;
    case QGPU_REG_RESET:
        if (val & 1) {
            qgpu_device_reset(s);
        }
        return true;
    case QGPU_REG_GART_BASE_LO:
        s->gart_base = deposit64(s->gart_base, 0, 32, val);
        return true;
    case QGPU_REG_GART_BASE_HI:
        s->gart_base = deposit64(s->gart_base, 32, 32, val);
        return true;
    case QGPU_REG_GART_CTRL:
        s->gart_ctrl = val & QGPU_GART_CTRL_ENABLE;
        return true;
    case QGPU_REG_HAP_INDEX:
        s->hap_index = val;
        return true;
    case QGPU_REG_HAP_COUNT:
        s->hap_count = val;
        return true;
    case QGPU_REG_HAP_VRAM_PAGE_LO:
        s->hap_vram_page = deposit64(s->hap_vram_page, 0, 32, val);
        return true;
    case QGPU_REG_HAP_VRAM_PAGE_HI:
        s->hap_vram_page = deposit64(s->hap_vram_page, 32, 32, val);
        return true;
    case QGPU_REG_HAP_CMD:
        if (val != QGPU_HAP_CMD_MAP && val != QGPU_HAP_CMD_UNMAP) {
            return false;
        }
        qgpu_hap_cmd(s, val);
        return true;
    case QGPU_REG_FAULTQ_POP:
        if (val != 1) {
            return false;
        }
        qgpu_fault_pop(s);
        return true;
    case QGPU_REG_CTX_SEL:
        s->ctx_sel = val;
        return true;
    default:
        return false;           /* unknown or read-only */
    }
}

static MemTxResult qgpu_mmio_read(void *opaque, hwaddr addr, uint64_t *data,
                                  unsigned size, MemTxAttrs attrs)
{
    QGPUState *s = opaque;

    *data = 0;
    if (s->in_engine) {
        /* DMA from an engine into its own registers: refused */
        return MEMTX_ERROR;
    }
    if (size != 4 || (addr & 3)) {
        qgpu_mmio_fault(s, QGPU_FAULT_BAD_REGISTER, addr, size);
        return MEMTX_OK;
    }
    *data = qgpu_reg_read(s, addr);
    return MEMTX_OK;
}

static MemTxResult qgpu_mmio_write(void *opaque, hwaddr addr, uint64_t data,
                                   unsigned size, MemTxAttrs attrs)
{
    QGPUState *s = opaque;

    if (s->in_engine) {
        return MEMTX_ERROR;
    }
    if (size != 4 || (addr & 3)) {
        qgpu_mmio_fault(s, QGPU_FAULT_BAD_REGISTER, addr, size);
        return MEMTX_OK;
    }
    if (!qgpu_reg_write(s, addr, data)) {
        qgpu_mmio_fault(s, QGPU_FAULT_BAD_REGISTER, addr, size);
    }
    return MEMTX_OK;
}

static const MemoryRegionOps qgpu_mmio_ops = {
    .read_with_attrs = qgpu_mmio_read,
    .write_with_attrs = qgpu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

/* Realize */

static bool qgpu_check_props(QGPUState *s, Error **errp)
{
    if (s->vram_size < QGPU_VRAM_MIN || s->vram_size > QGPU_VRAM_MAX ||
        (s->vram_size & (QGPU_PAGE_SIZE - 1)) ||
        s->vram_size > SIZE_MAX / 2) {
        error_setg(errp, "qgpu: vram-size must be a multiple of 4 KiB "
                   "between 1 MiB and 1 TiB");
        return false;
    }
    if (!s->visible_size) {
        s->visible_size = pow2floor(s->vram_size);
    }
    if (!is_power_of_2(s->visible_size) || s->visible_size < QGPU_PAGE_SIZE ||
        s->visible_size > s->vram_size) {
        error_setg(errp, "qgpu: visible-vram-size must be a power of two "
                   "between 4 KiB and vram-size");
        return false;
    }
    if (s->hap_size && (!is_power_of_2(s->hap_size) ||
                        s->hap_size < QGPU_PAGE_SIZE ||
                        s->hap_size > QGPU_HAP_MAX)) {
        error_setg(errp, "qgpu: host-aperture-size must be 0 or a power of "
                   "two between 4 KiB and 256 MiB");
        return false;
    }
    if (s->gart_size > QGPU_GART_MAX || (s->gart_size & (QGPU_PAGE_SIZE - 1))) {
        error_setg(errp, "qgpu: gart-size must be a multiple of 4 KiB "
                   "and at most 1 TiB");
        return false;
    }
    if (s->max_slots < 1 || s->max_slots > QGPU_SLOTS_MAX ||
        s->max_contexts < 1 || s->max_contexts > QGPU_CONTEXTS_MAX ||
        (uint64_t)s->max_slots * s->max_contexts > QGPU_SLOT_ENTRIES_MAX) {
        error_setg(errp, "qgpu: max-slots and max-contexts must be between "
                   "1 and 4096 and their product at most 1048576");
        return false;
    }
    return true;
}

static void qgpu_realize(PCIDevice *pdev, Error **errp)
{
    QGPUState *s = QGPU(pdev);
    Error *err = NULL;
    void *ptr;
    int ret;

    if (!qgpu_check_props(s, errp)) {
        return;
    }

    s->vram_fd = qemu_memfd_create("qgpu-vram", s->vram_size, false, 0, 0,
                                   errp);
    if (s->vram_fd < 0) {
        return;
    }
    ptr = mmap(NULL, s->vram_size, PROT_READ | PROT_WRITE, MAP_SHARED,
               s->vram_fd, 0);
    if (ptr == MAP_FAILED) {
        error_setg_errno(errp, errno, "qgpu: cannot map VRAM");
        close(s->vram_fd);
        s->vram_fd = -1;
        return;
    }
    s->vram = ptr;

    pdev->config[PCI_INTERRUPT_PIN] = 1;
    ret = msi_init(pdev, 0, 1, true, false, &err);
    if (ret == -ENOTSUP) {
        error_free(err);        /* INTx only */
    } else if (ret) {
        error_propagate(errp, err);
        return;
    }

    memory_region_init_io(&s->mmio, OBJECT(s), &qgpu_mmio_ops, s,
                          "qgpu-mmio", QGPU_MMIO_SIZE);
    pci_register_bar(pdev, QGPU_BAR_MMIO, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);

    memory_region_init_ram_ptr(&s->vram_bar, OBJECT(s), "qgpu-vram-bar",
                               s->visible_size, s->vram);
    pci_register_bar(pdev, QGPU_BAR_VRAM,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->vram_bar);

    memory_region_init_ram_ptr(&s->vram_all, OBJECT(s), "qgpu-vram",
                               s->vram_size, s->vram);
    qgpu_hap_init(s);
    if (s->hap_size) {
        pci_register_bar(pdev, QGPU_BAR_HAP,
                         PCI_BASE_ADDRESS_SPACE_MEMORY |
                         PCI_BASE_ADDRESS_MEM_TYPE_64 |
                         PCI_BASE_ADDRESS_MEM_PREFETCH, &s->hap);
    }

    s->slots = g_new0(QGPUSlot, (size_t)s->max_slots * s->max_contexts);
    s->ctx_faulted = g_new0(bool, s->max_contexts);
    qgpu_engine_init(s);
    qgpu_device_reset(s);
}

static void qgpu_exit(PCIDevice *pdev)
{
    QGPUState *s = QGPU(pdev);

    qgpu_engine_fini(s);
    qgpu_hap_fini(s);
    msi_uninit(pdev);
}

static void qgpu_instance_init(Object *obj)
{
    QGPUState *s = QGPU(obj);

    s->vram_fd = -1;
}

typedef struct QGPUVramFree {
    struct rcu_head rcu;
    void *ptr;
    uint64_t size;
    int fd;
} QGPUVramFree;

static void qgpu_vram_free(QGPUVramFree *f)
{
    if (f->ptr) {
        munmap(f->ptr, f->size);
    }
    if (f->fd >= 0) {
        close(f->fd);
    }
    g_free(f);
}

static void qgpu_instance_finalize(Object *obj)
{
    QGPUState *s = QGPU(obj);
    QGPUVramFree *f = g_new0(QGPUVramFree, 1);

    /*
     * The RAM blocks over VRAM are reclaimed after an RCU grace period;
     * unmap only after them.
     */
    f->ptr = s->vram;
    f->size = s->vram_size;
    f->fd = s->vram_fd;
    call_rcu(f, qgpu_vram_free, rcu);
    s->vram = NULL;
    s->vram_fd = -1;
    g_free(s->slots);
    s->slots = NULL;
    g_free(s->ctx_faulted);
    s->ctx_faulted = NULL;
}

static Property qgpu_properties[] = {
    DEFINE_PROP_SIZE("vram-size", QGPUState, vram_size, 64 * MiB),
    DEFINE_PROP_SIZE("visible-vram-size", QGPUState, visible_size, 0),
    DEFINE_PROP_SIZE("host-aperture-size", QGPUState, hap_size, 16 * MiB),
    DEFINE_PROP_SIZE("gart-size", QGPUState, gart_size, 256 * MiB),
    DEFINE_PROP_UINT32("max-slots", QGPUState, max_slots, 64),
    DEFINE_PROP_UINT32("max-contexts", QGPUState, max_contexts, 64),
    DEFINE_PROP_END_OF_LIST(),
};

static const VMStateDescription vmstate_qgpu = {
    .name = "qgpu",
    .unmigratable = 1,
};

static void qgpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = qgpu_realize;
    k->exit = qgpu_exit;
    k->vendor_id = QGPU_PCI_VENDOR_ID;
    k->device_id = QGPU_PCI_DEVICE_ID;
    k->revision = QGPU_PCI_REVISION;
    k->class_id = QGPU_PCI_CLASS;
    dc->desc = "qgpu virtual GPU";
    dc->reset = qgpu_qdev_reset;
    dc->vmsd = &vmstate_qgpu;
    device_class_set_props(dc, qgpu_properties);
    object_class_property_set_description(klass, "vram-size",
        "VRAM bytes: multiple of 4 KiB, 1 MiB..1 TiB");
    object_class_property_set_description(klass, "visible-vram-size",
        "BAR2 bytes: power of two <= vram-size (0: largest possible)");
    object_class_property_set_description(klass, "host-aperture-size",
        "BAR4 bytes: 0 (none) or power of two, 4 KiB..256 MiB");
    object_class_property_set_description(klass, "gart-size",
        "GART range bytes: multiple of 4 KiB, 0..1 TiB");
    object_class_property_set_description(klass, "max-slots",
        "slots per context: 1..4096");
    object_class_property_set_description(klass, "max-contexts",
        "render contexts: 1..4096 (slots x contexts <= 1048576)");
    set_bit(DEVICE_CATEGORY_DISPLAY, dc->categories);
}

static const TypeInfo qgpu_info = {
    .name = TYPE_QGPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(QGPUState),
    .instance_init = qgpu_instance_init,
    .instance_finalize = qgpu_instance_finalize,
    .class_init = qgpu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void qgpu_register_types(void)
{
    type_register_static(&qgpu_info);
}

type_init(qgpu_register_types)
