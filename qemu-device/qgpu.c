/*
 * qgpu: virtual PCI GPU -- PCI device, properties, BAR0 registers, reset
 *
 * The top layer (the layers: qgpu-state.h). BAR0 accesses come here and go
 * to the layer that owns the register. The contract is docs/hw-spec.md;
 * all numbers come from qgpu_regs.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/memfd.h"
#include "qemu/host-utils.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "qemu/log.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qgpu-state.h"
#include "qgpu-irq.h"
#include "qgpu-faultq.h"
#include "qgpu-addr.h"
#include "qgpu-hap.h"
#include "qgpu-mmu.h"
#include "qgpu-context.h"
#include "qgpu-engine.h"
#include "qgpu-vram.h"
#include "qgpu-thread.h"
#include "trace.h"

/* Limits on device properties (see docs/hw-spec.md, "Device properties") */
#define QGPU_VRAM_MIN           (1 * MiB)
#define QGPU_VRAM_MAX           QGPU_GART_BASE          /* 1 TiB */
#define QGPU_GART_MAX           QGPU_GART_BASE          /* 1 TiB */
#define QGPU_HAP_MAX            (256 * MiB)
#define QGPU_SLOTS_MAX          4096
#define QGPU_CONTEXTS_MAX       4096
#define QGPU_SLOT_ENTRIES_MAX   (1u << 20)              /* slots x contexts */

static void qgpu_mmio_fault(QGPUState *s, uint32_t reason, uint64_t addr,
                            uint32_t offset)
{
    qgpu_faultq_record(s, reason, QGPU_FAULT_ENGINE_MMIO, QGPU_NO_CONTEXT,
                       addr, offset);
}

/* Device reset (REG_RESET and DeviceClass reset) */

static void qgpu_device_reset(QGPUState *s)
{
    trace_qgpu_reset();
    qgpu_engine_reset_all(s);
    qgpu_context_reset(s);
    qgpu_hap_reset(s);
    qgpu_faultq_reset(s);
    qgpu_addr_reset(s);
    qgpu_mmu_reset(s);
    s->scratch = 0;
    qgpu_irq_reset(s);
}

static void qgpu_qdev_reset(DeviceState *dev)
{
    qgpu_device_reset(QGPU(dev));
}

/* BAR0 */

static uint32_t qgpu_caps(QGPUState *s)
{
    uint32_t caps = QGPU_CAP_FENCE | QGPU_CAP_PAGING | QGPU_CAP_RENDER |
                    QGPU_CAP_CTX_SAVE | QGPU_CAP_FAULT_QUEUE | QGPU_CAP_MMU |
                    QGPU_CAP_TILING | QGPU_CAP_PING |
                    QGPU_CAP_VRAM_COMMITTED;

    if (s->gart_size) {
        caps |= QGPU_CAP_GART;
    }
    if (s->hap_size) {
        caps |= QGPU_CAP_HOST_APERTURE;
    }
    /*
     * I/O coherency is what the device advertises, not a change in how it
     * reaches guest RAM: QEMU's accesses always see guest memory as it is.
     * With the bit clear the driver and user space must write back and
     * invalidate CPU caches themselves (hw-spec section 16).
     */
    if (s->io_coherent) {
        caps |= QGPU_CAP_IO_COHERENT;
    }
    return caps;
}

/* Identity, sizes, SCRATCH and CYCLES: the registers this file owns */
static bool qgpu_reg_read_own(QGPUState *s, hwaddr addr, uint32_t *val)
{
    uint64_t cycles = s->work_cmds + s->work_bytes / 64;
    uint64_t committed;

    switch (addr) {
    case QGPU_REG_ID:
        *val = QGPU_ID_MAGIC;
        break;
    case QGPU_REG_VERSION:
        *val = (QGPU_VERSION_MAJOR << 16) | QGPU_VERSION_MINOR;
        break;
    case QGPU_REG_CAPS:
        *val = qgpu_caps(s);
        break;
    case QGPU_REG_VRAM_SIZE_LO:
    case QGPU_REG_VRAM_SIZE_HI:
        *val = addr == QGPU_REG_VRAM_SIZE_LO ? s->vram_size
                                             : s->vram_size >> 32;
        break;
    case QGPU_REG_VISIBLE_SIZE_LO:
    case QGPU_REG_VISIBLE_SIZE_HI:
        *val = addr == QGPU_REG_VISIBLE_SIZE_LO ? s->visible_size
                                                : s->visible_size >> 32;
        break;
    case QGPU_REG_GART_SIZE_LO:
    case QGPU_REG_GART_SIZE_HI:
        *val = addr == QGPU_REG_GART_SIZE_LO ? s->gart_size
                                             : s->gart_size >> 32;
        break;
    case QGPU_REG_HAP_SIZE_LO:
    case QGPU_REG_HAP_SIZE_HI:
        *val = addr == QGPU_REG_HAP_SIZE_LO ? s->hap_size : s->hap_size >> 32;
        break;
    case QGPU_REG_NUM_ENGINES:
        *val = QGPU_NUM_ENGINES;
        break;
    case QGPU_REG_MAX_SLOTS:
        *val = s->max_slots;
        break;
    case QGPU_REG_MAX_CONTEXTS:
        *val = s->max_contexts;
        break;
    case QGPU_REG_SCRATCH:
        *val = s->scratch;
        break;
    case QGPU_REG_CYCLES_LO:
    case QGPU_REG_CYCLES_HI:
        *val = addr == QGPU_REG_CYCLES_LO ? cycles : cycles >> 32;
        break;
    case QGPU_REG_VRAM_COMMITTED_LO:
    case QGPU_REG_VRAM_COMMITTED_HI:
        committed = qgpu_vram_committed(s);
        *val = addr == QGPU_REG_VRAM_COMMITTED_LO ? committed
                                                  : committed >> 32;
        break;
    default:
        return false;
    }
    return true;
}

/* Reads 0 (docs/hw-spec.md): not a fault, but logged as ignored. */
static void qgpu_reg_unknown(hwaddr addr)
{
    qemu_log_mask(LOG_GUEST_ERROR, "qgpu: read of unknown or write-only "
                  "register 0x%" HWADDR_PRIx " reads 0\n", addr);
}

/* Each register block is read by the layer that owns it. */
static uint32_t qgpu_reg_read(QGPUState *s, hwaddr addr)
{
    uint32_t val = 0;
    bool ok = true;

    switch (addr) {
    case QGPU_ENGINE_BASE(0) ... QGPU_ENGINE_BASE(QGPU_NUM_ENGINES) - 1:
        val = qgpu_engine_read(s, (addr - QGPU_ENGINE_BASE(0)) / 0x100,
                               addr & 0xff, &ok);
        break;
    case QGPU_REG_INT_STATUS:
    case QGPU_REG_INT_MASK:
    case QGPU_REG_PING_ACK:
        return qgpu_irq_reg_read(s, addr);
    case QGPU_REG_FAULT_COUNT ... QGPU_REG_FAULT_OFFSET:
    case QGPU_REG_FAULTQ_COUNT:
    case QGPU_REG_FAULTQ_LOST:
    case QGPU_REG_FAULT_INFO ... QGPU_REG_FAULT_VM_HI:
        return qgpu_faultq_reg_read(s, addr);
    case QGPU_REG_MMU_VA_BITS ... QGPU_REG_MMU_PAGING_ROOT_HI:
    case QGPU_REG_TLB_HITS_LO ... QGPU_REG_TLB_FLUSHES_HI:
        val = qgpu_mmu_reg_read(s, addr, &ok);
        break;
    case QGPU_REG_GART_BASE_LO:
    case QGPU_REG_GART_BASE_HI:
    case QGPU_REG_GART_CTRL:
        return qgpu_addr_reg_read(s, addr);
    case QGPU_REG_HAP_FAULT_COUNT:
    case QGPU_REG_HAP_INDEX ... QGPU_REG_HAP_VRAM_PAGE_HI:
    case QGPU_REG_HAP_MAPPED:
        return qgpu_hap_reg_read(s, addr);
    case QGPU_REG_CTX_SEL:
    case QGPU_REG_CTX_STATUS:
        return qgpu_context_reg_read(s, addr);
    default:
        ok = qgpu_reg_read_own(s, addr, &val);
        break;
    }
    if (!ok) {
        qgpu_reg_unknown(addr);         /* unknown and write-only: 0 */
    }
    return ok ? val : 0;
}

/* Returns false if the register is not writable (BAD_REGISTER). */
static bool qgpu_reg_write(QGPUState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case QGPU_ENGINE_BASE(0) ... QGPU_ENGINE_BASE(QGPU_NUM_ENGINES) - 1:
        return qgpu_engine_write(s, (addr - QGPU_ENGINE_BASE(0)) / 0x100,
                                 addr & 0xff, val);
    case QGPU_REG_SCRATCH:
        s->scratch = val;
        return true;
    case QGPU_REG_INT_MASK:
    case QGPU_REG_INT_ACK:
        qgpu_irq_reg_write(s, addr, val);
        return true;
    case QGPU_REG_PING:
        qgpu_irq_ping(s, val);
        return true;
    case QGPU_REG_RESET:
        if (val & 1) {
            qgpu_device_reset(s);
        }
        return true;
    case QGPU_REG_GART_BASE_LO:
    case QGPU_REG_GART_BASE_HI:
    case QGPU_REG_GART_CTRL:
        qgpu_addr_reg_write(s, addr, val);
        return true;
    case QGPU_REG_HAP_INDEX ... QGPU_REG_HAP_CMD:
        return qgpu_hap_reg_write(s, addr, val);
    case QGPU_REG_FAULTQ_POP:
        return qgpu_faultq_reg_write(s, addr, val);
    case QGPU_REG_CTX_SEL:
        qgpu_context_reg_write(s, addr, val);
        return true;
    case QGPU_REG_MMU_PAGING_ROOT_LO:
    case QGPU_REG_MMU_PAGING_ROOT_HI:
        return qgpu_mmu_reg_write(s, addr, val);
    default:
        return false;           /* unknown or read-only */
    }
}

static void qgpu_mmio_reentry(hwaddr addr)
{
    qemu_log_mask(LOG_GUEST_ERROR, "qgpu: device DMA or MSI into its own "
                  "registers at 0x%" HWADDR_PRIx " refused\n", addr);
}

static MemTxResult qgpu_mmio_read(void *opaque, hwaddr addr, uint64_t *data,
                                  unsigned size, MemTxAttrs attrs)
{
    QGPUState *s = opaque;

    *data = 0;
    if (s->in_engine) {
        /* DMA from an engine into its own registers: refused */
        qgpu_mmio_reentry(addr);
        return MEMTX_ERROR;
    }
    if (size != 4 || (addr & 3)) {
        qgpu_mmio_fault(s, QGPU_FAULT_BAD_REGISTER, addr, size);
        return MEMTX_OK;
    }
    *data = qgpu_reg_read(s, addr);
    trace_qgpu_reg_read(addr, *data);
    return MEMTX_OK;
}

static MemTxResult qgpu_mmio_write(void *opaque, hwaddr addr, uint64_t data,
                                   unsigned size, MemTxAttrs attrs)
{
    QGPUState *s = opaque;

    if (s->in_engine) {
        qgpu_mmio_reentry(addr);
        return MEMTX_ERROR;
    }
    if (size != 4 || (addr & 3)) {
        qgpu_mmio_fault(s, QGPU_FAULT_BAD_REGISTER, addr, size);
        return MEMTX_OK;
    }
    trace_qgpu_reg_write(addr, data);
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

/*
 * PCI configuration writes: one that turns bus mastering off or moves a
 * BAR takes effect when it completes, so a piece the device thread moves
 * without the BQL, translated before, lands first. One that turns MSI
 * off or on hands the pending interrupt to INTx or takes it away.
 */
static void qgpu_config_write(PCIDevice *pdev, uint32_t addr, uint32_t val,
                              int len)
{
    QGPUState *s = QGPU(pdev);

    qgpu_thread_quiesce(s);
    pci_default_write_config(pdev, addr, val, len);
    qgpu_irq_config_written(s);
}

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
    if (s->doorbell_cmds > 256) {
        error_setg(errp, "qgpu: doorbell-commands must be at most 256");
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
    qgpu_hap_realize(s);
    if (s->hap_size) {
        pci_register_bar(pdev, QGPU_BAR_HAP,
                         PCI_BASE_ADDRESS_SPACE_MEMORY |
                         PCI_BASE_ADDRESS_MEM_TYPE_64 |
                         PCI_BASE_ADDRESS_MEM_PREFETCH, &s->hap);
    }

    qgpu_context_realize(s);
    qgpu_engine_realize(s);
    qgpu_device_reset(s);
}

static void qgpu_exit(PCIDevice *pdev)
{
    QGPUState *s = QGPU(pdev);

    /*
     * Possibly inside the device's own DMA (a write that powered off its
     * PCIe slot): from here on the engines reach no PCI state.
     */
    s->gone = true;
    qgpu_engine_unrealize(s);
    qgpu_hap_unrealize(s);
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
    qgpu_context_finalize(s);
}

static Property qgpu_properties[] = {
    DEFINE_PROP_SIZE("vram-size", QGPUState, vram_size, 64 * MiB),
    DEFINE_PROP_SIZE("visible-vram-size", QGPUState, visible_size, 0),
    DEFINE_PROP_SIZE("host-aperture-size", QGPUState, hap_size, 16 * MiB),
    DEFINE_PROP_SIZE("gart-size", QGPUState, gart_size, 256 * MiB),
    DEFINE_PROP_UINT32("max-slots", QGPUState, max_slots, 64),
    DEFINE_PROP_UINT32("max-contexts", QGPUState, max_contexts, 64),
    DEFINE_PROP_BOOL("io-coherent", QGPUState, io_coherent, true),
    DEFINE_PROP_UINT32("doorbell-commands", QGPUState, doorbell_cmds, 16),
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
    k->config_write = qgpu_config_write;
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
