// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the device's registers (BAR0, docs/hw-spec.md), apart from the
 * engines' (qgpu_engine.c): identity, reset, the interrupt mask, the GART
 * table base and the CPU host aperture's page mapping. The rest of the
 * driver programs the device only through these functions and through
 * ring commands.
 */
#include <linux/pci.h>
#include <drm/drm_drv.h>

#include "qgpu_hw.h"
#include "qgpu_mmio.h"

#define QGPU_REQUIRED_CAPS	(QGPU_CAP_FENCE | QGPU_CAP_GART | \
				 QGPU_CAP_PAGING | QGPU_CAP_RENDER | \
				 QGPU_CAP_CTX_SAVE | QGPU_CAP_FAULT_QUEUE)

/**
 * qgpu_hw_identify - check the device is a qgpu the driver supports
 * @qdev: the device, BAR0 mapped
 *
 * Reads the identity, version, capabilities and sizes into @qdev.
 *
 * Return: 0, or -ENODEV for a device the driver cannot drive.
 */
int qgpu_hw_identify(struct qgpu_device *qdev)
{
	struct pci_dev *pdev = qdev->pdev;

	if (qgpu_rd(qdev, QGPU_REG_ID) != QGPU_ID_MAGIC) {
		dev_err(&pdev->dev, "qgpu: bad ID register\n");
		return -ENODEV;
	}
	qdev->version = qgpu_rd(qdev, QGPU_REG_VERSION);
	if ((qdev->version >> 16) != QGPU_VERSION_MAJOR) {
		dev_err(&pdev->dev, "qgpu: unsupported device version %#x\n",
			qdev->version);
		return -ENODEV;
	}
	qdev->caps = qgpu_rd(qdev, QGPU_REG_CAPS);
	/*
	 * What the driver relies on: fences, the paging engine and the GART
	 * (residency), the render engine with per-context slot tables saved
	 * (split portions of contexts interleave), and a fault queue (no
	 * fault may be lost, or a faulting context would keep running).
	 */
	if ((qdev->caps & QGPU_REQUIRED_CAPS) != QGPU_REQUIRED_CAPS) {
		dev_err(&pdev->dev, "qgpu: device lacks capabilities %#x\n",
			QGPU_REQUIRED_CAPS & ~qdev->caps);
		return -ENODEV;
	}
	qdev->max_slots = qgpu_rd(qdev, QGPU_REG_MAX_SLOTS);
	qdev->max_contexts = qgpu_rd(qdev, QGPU_REG_MAX_CONTEXTS);
	qdev->vram_size = qgpu_rd64(qdev, QGPU_REG_VRAM_SIZE_LO);
	qdev->visible_size = qgpu_rd64(qdev, QGPU_REG_VISIBLE_SIZE_LO);
	qdev->gart_size = qgpu_rd64(qdev, QGPU_REG_GART_SIZE_LO);
	qdev->hap_size = qgpu_rd64(qdev, QGPU_REG_HAP_SIZE_LO);
	if (!(qdev->caps & QGPU_CAP_HOST_APERTURE))
		qdev->hap_size = 0;
	if (qdev->visible_size > qdev->vram_size ||
	    qdev->visible_size > pci_resource_len(pdev, QGPU_BAR_VRAM) ||
	    qdev->hap_size > pci_resource_len(pdev, QGPU_BAR_HAP) ||
	    qgpu_rd(qdev, QGPU_REG_NUM_ENGINES) < QGPU_NUM_ENGINES) {
		dev_err(&pdev->dev, "qgpu: inconsistent device configuration\n");
		return -ENODEV;
	}
	qdev->vram_bar = pci_resource_start(pdev, QGPU_BAR_VRAM);
	qdev->hap_bar = pci_resource_start(pdev, QGPU_BAR_HAP);
	return 0;
}

/* Device reset: engines stopped and emptied, interrupts masked. */
void qgpu_hw_reset(struct qgpu_device *qdev)
{
	qgpu_wr(qdev, QGPU_REG_INT_MASK, 0);
	qgpu_wr(qdev, QGPU_REG_RESET, 1);
}

/*
 * Every event the driver handles: the engines' fences, faults and (1.4)
 * PING answers (a device without CAP_PING reads the bit as 0).
 */
void qgpu_hw_irq_enable(struct qgpu_device *qdev, bool on)
{
	qgpu_wr(qdev, QGPU_REG_INT_MASK, on ? QGPU_INT_ALL : 0);
}

/* Point the device at the GART table (@table: its DMA address) and enable it. */
void qgpu_hw_gart_enable(struct qgpu_device *qdev, dma_addr_t table)
{
	qgpu_wr(qdev, QGPU_REG_GART_BASE_LO, lower_32_bits(table));
	qgpu_wr(qdev, QGPU_REG_GART_BASE_HI, upper_32_bits(table));
	qgpu_wr(qdev, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
}

/*
 * Map @count host-aperture pages from page @first onto VRAM pages from
 * @vram_page (a synchronous register command: in effect when it returns).
 */
void qgpu_hw_hap_map(struct qgpu_device *qdev, u64 first, u64 count,
		     u64 vram_page)
{
	qgpu_wr(qdev, QGPU_REG_HAP_INDEX, first);
	qgpu_wr(qdev, QGPU_REG_HAP_COUNT, count);
	qgpu_wr(qdev, QGPU_REG_HAP_VRAM_PAGE_LO, lower_32_bits(vram_page));
	qgpu_wr(qdev, QGPU_REG_HAP_VRAM_PAGE_HI, upper_32_bits(vram_page));
	qgpu_wr(qdev, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
}

void qgpu_hw_hap_unmap(struct qgpu_device *qdev, u64 first, u64 count)
{
	qgpu_wr(qdev, QGPU_REG_HAP_INDEX, first);
	qgpu_wr(qdev, QGPU_REG_HAP_COUNT, count);
	qgpu_wr(qdev, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_UNMAP);
}

/* Faults the device has recorded since reset (queued or not). */
u32 qgpu_hw_fault_count(struct qgpu_device *qdev)
{
	return qgpu_rd(qdev, QGPU_REG_FAULT_COUNT);
}

/*
 * Bytes of VRAM the device holds in host memory (1.4, VRAM_COMMITTED); 0
 * without the capability or once the device is gone.
 */
u64 qgpu_hw_vram_committed(struct qgpu_device *qdev)
{
	u64 v = 0;
	int idx;

	if (!(qdev->caps & QGPU_CAP_VRAM_COMMITTED) ||
	    !drm_dev_enter(&qdev->drm, &idx))
		return 0;
	v = qgpu_rd64(qdev, QGPU_REG_VRAM_COMMITTED_LO);
	drm_dev_exit(idx);
	return v;
}

/* CPU accesses to unmapped host-aperture pages since reset. */
u32 qgpu_hw_hap_fault_count(struct qgpu_device *qdev)
{
	return qgpu_rd(qdev, QGPU_REG_HAP_FAULT_COUNT);
}

/* The GPU MMU, if the device has one (QGPU_CAP_MMU, version 1.2) */
bool qgpu_hw_has_mmu(struct qgpu_device *qdev)
{
	return qdev->caps & QGPU_CAP_MMU &&
	       qgpu_rd(qdev, QGPU_REG_MMU_VA_BITS) == QGPU_MMU_VA_BITS &&
	       qgpu_rd(qdev, QGPU_REG_MMU_LEVELS) == QGPU_MMU_LEVELS &&
	       qgpu_rd(qdev, QGPU_REG_MMU_PTE_SIZE) == QGPU_MMU_PTE_SIZE;
}

/*
 * Whether the device snoops the CPU caches when it reaches system memory
 * (QGPU_CAP_IO_COHERENT, version 1.3; docs/hw-spec.md section 16). A
 * device without the bit, an older one included, is taken as not
 * coherent: cache maintenance on a coherent device only costs time,
 * missing it on one that is not loses data.
 */
bool qgpu_hw_io_coherent(struct qgpu_device *qdev)
{
	return qdev->caps & QGPU_CAP_IO_COHERENT;
}

/* Address space 0, the paging process's: its root descriptor */
void qgpu_hw_mmu_paging_root(struct qgpu_device *qdev, u64 root)
{
	qgpu_wr(qdev, QGPU_REG_MMU_PAGING_ROOT_LO, lower_32_bits(root));
	qgpu_wr(qdev, QGPU_REG_MMU_PAGING_ROOT_HI, upper_32_bits(root));
}

/* The device's TLB counters: hits, misses (walks), flushes */
void qgpu_hw_tlb_counters(struct qgpu_device *qdev, u64 *hits, u64 *misses,
			  u64 *flushes)
{
	*hits = qgpu_rd64(qdev, QGPU_REG_TLB_HITS_LO);
	*misses = qgpu_rd64(qdev, QGPU_REG_TLB_MISSES_LO);
	*flushes = qgpu_rd64(qdev, QGPU_REG_TLB_FLUSHES_LO);
}
