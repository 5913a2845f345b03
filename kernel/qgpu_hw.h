/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_HW_H
#define QGPU_HW_H

#include "qgpu_device.h"

/* qgpu_hw.c: what the rest of the driver asks of the device's registers */
int qgpu_hw_identify(struct qgpu_device *qdev);
void qgpu_hw_reset(struct qgpu_device *qdev);
void qgpu_hw_irq_enable(struct qgpu_device *qdev, bool on);
void qgpu_hw_gart_enable(struct qgpu_device *qdev, dma_addr_t table);
void qgpu_hw_hap_map(struct qgpu_device *qdev, u64 first, u64 count,
		     u64 vram_page);
void qgpu_hw_hap_unmap(struct qgpu_device *qdev, u64 first, u64 count);
u32 qgpu_hw_fault_count(struct qgpu_device *qdev);
u64 qgpu_hw_vram_committed(struct qgpu_device *qdev);
u32 qgpu_hw_hap_fault_count(struct qgpu_device *qdev);
bool qgpu_hw_has_mmu(struct qgpu_device *qdev);
bool qgpu_hw_io_coherent(struct qgpu_device *qdev);
void qgpu_hw_mmu_paging_root(struct qgpu_device *qdev, u64 root);
void qgpu_hw_tlb_counters(struct qgpu_device *qdev, u64 *hits, u64 *misses,
			  u64 *flushes);

#endif /* QGPU_HW_H */
