/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_PAGING_H
#define QGPU_PAGING_H

#include "qgpu_device.h"

/* Paging buffer: PagingBufferSegmentId and PagingBufferSize */
#define QGPU_PBUF_SEGMENT	QGPU_SEG_APERTURE
#define QGPU_PBUF_SIZE		(512 * 1024)
/* Largest page list one paging command may reference */
#define QGPU_PBUF_MAX_LIST	(QGPU_PBUF_SIZE / 4)

/**
 * struct qgpu_paging - a paging buffer being built (DxgkDdiBuildPagingBuffer)
 * @qdev: device
 * @job: the paging job receiving the commands
 * @ndw: dwords used
 * @max_dw: capacity
 * @idx: drm_dev_enter()'s, held while @job is set: the paging engine's
 *	scheduler outlives every paging buffer being built
 * @chain: page-table updates and TLB flushes that find the buffer full
 *	queue it and go on in a new one (an unmap's rewrite); clear: a
 *	command that finds the buffer full goes on in a new one while the
 *	full ones are held (@held), all queued by qgpu_paging_submit() or
 *	all dropped by qgpu_paging_abort() (set by the caller after
 *	qgpu_paging_begin())
 * @held: full jobs of this paging buffer not yet queued, oldest first
 */
struct qgpu_paging {
	struct qgpu_device *qdev;
	struct qgpu_job *job;
	u32 ndw;
	u32 max_dw;
	int idx;
	bool chain;
	struct list_head held;
};

int qgpu_paging_init(struct qgpu_device *qdev);
void qgpu_paging_fini(struct qgpu_device *qdev);
int qgpu_paging_begin(struct qgpu_device *qdev, struct qgpu_paging *pb);
void qgpu_paging_abort(struct qgpu_paging *pb);
struct dma_fence *qgpu_paging_submit(struct qgpu_paging *pb);
int qgpu_paging_resv_deps(struct qgpu_paging *pb, struct dma_resv *resv,
			  u64 skip);
int qgpu_paging_list(struct qgpu_paging *pb, const dma_addr_t *pages,
		     u32 npages, bool gpu_addrs, u64 *gpu_addr);
int qgpu_paging_transfer(struct qgpu_paging *pb, u64 size, u64 src, u64 dst,
			 u32 flags);
int qgpu_paging_fill(struct qgpu_paging *pb, u64 size, u64 dst, u32 pattern);
int qgpu_paging_discard(struct qgpu_paging *pb, u64 size, u64 addr);
int qgpu_paging_map_aperture(struct qgpu_paging *pb, u32 first, u32 count,
			     u64 list);
int qgpu_paging_unmap_aperture(struct qgpu_paging *pb, u32 first, u32 count);
int qgpu_paging_nop(struct qgpu_paging *pb);
bool qgpu_paging_room(struct qgpu_paging *pb, u32 ndw);
int qgpu_paging_data(struct qgpu_paging *pb, const u64 *data, u32 n,
		     u64 *gpu_addr);
int qgpu_paging_update_pt(struct qgpu_paging *pb, u64 table, u64 dst,
			  const u64 *entries, u32 n, bool virt);
int qgpu_paging_flush_tlb(struct qgpu_paging *pb, u64 root);
int qgpu_paging_transfer_virtual(struct qgpu_paging *pb, u64 size, u64 src,
				 u64 dst);
int qgpu_paging_fill_virtual(struct qgpu_paging *pb, u64 size, u64 dst,
			     u32 pattern);

#endif /* QGPU_PAGING_H */
