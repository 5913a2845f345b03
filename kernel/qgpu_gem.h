/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_GEM_H
#define QGPU_GEM_H

#include <linux/workqueue.h>

#include "qgpu_device.h"

/* Most runs of host-aperture pages one allocation is mapped with */
#define QGPU_HAP_RUNS	16

/**
 * struct qgpu_hap_run - host-aperture pages mapping part of an allocation
 * @node: aperture pages [start, start + size)
 * @first: the allocation's page mapped at @node's start
 */
struct qgpu_hap_run {
	struct drm_mm_node node;
	u32 first;
};

/**
 * struct qgpu_bo - an allocation
 * @base: GEM object (its shmem file is the system-memory backing store)
 * @id: the allocation's id in tracepoints: a per-device sequence number,
 *	never reused (&qgpu_device.bo_ids)
 * @segment_mask: supported segment set, bit per segment id
 * @flags: QGPU_GEM_* creation flags
 * @preferred: ordered preferred segment ids, 0-terminated
 * @pages: backing pages, acquired on first need and kept
 * @dma: DMA address of each backing page
 * @npages: number of pages
 * @seg: segment the allocation is resident in, QGPU_SEG_SYSTEM if none
 * @node: its range in that segment (offsets relative to the segment)
 * @lru: link in the segment's LRU list
 * @lru_tick: last use, for the victim policy
 * @uses: uses since it was last moved into its segment (the gdsf policy's
 *	frequency; under mm_lock)
 * @use_tick: the tick of its last use (a submission, counted once however
 *	many of its portions use it; a CPU access; GEM_RESIDE; MakeResident),
 *	for the reuse-interval policy (under mm_lock; qgpu_mm_note_use())
 * @use_gap: ticks between its last two uses (0: used once)
 * @future_stamp: the eviction scan that last found it in the known future
 *	(&qgpu_device.future_stamp; under mm_lock)
 * @future_pos: where in that future it is next used
 * @walk_id: the submission walk whose books @walk_last, @walk_seen and
 *	@walk_slot are (under mm_lock; qgpu_submit.c)
 * @walk_last: 1 + the last patch entry of that walk that uses it
 * @walk_seen: 1 + the last entry before the split point being looked at
 *	that uses it (0: none)
 * @walk_slot: the split point whose kept slots hold it
 * @priority: its priority (SetAllocationPriority; under mm_lock)
 * @owner: the video memory of the file that created it, whose usage it
 *	counts in while resident (a reference; NULL for imports)
 * @offer_priority: while offered, its QGPU_OFFER_PRIORITY_* (under mm_lock)
 * @offered: OfferAllocations: its content may be discarded (under mm_lock)
 * @discarded: its content was discarded since it was offered (under
 *	mm_lock)
 * @evicted: an eviction to make room for another allocation put it where
 *	it is, and it has not moved since: migrating back may return it to
 *	VRAM (under mm_lock; a plan's rollback restores it)
 * @lock_count: outstanding Lock2 calls
 * @nmappings: its GPU virtual mappings in every address space (under its
 *	reservation lock; at most %QGPU_BO_MAX_MAPPINGS)
 * @pin_count: pins by submissions being prepared (resource tables)
 * @hap_runs: host-aperture page runs while mapped through BAR4
 * @hap_nruns: number of runs in use (0: not mapped)
 * @hap_link: link in the device's list of allocations with aperture pages
 * @sgt: scatter list of an imported dma-buf (the exporter's pages)
 * @attachments: devices attached to its dma-buf; while there are any, the
 *	allocation stays in system memory or the aperture segment (the pages
 *	the attached devices were given)
 * @submit_write: during one submit (under mm_lock), an allocation-list entry
 *	for it carries QGPU_ALLOC_WRITE
 * @pristine: content is known to be all zero
 * @cpu_stale: the device wrote the system pages of this cached allocation
 *	on a device that is not I/O coherent: invalidate the CPU cache lines
 *	before the CPU maps them again
 * @cpu_stale_moves: times @cpu_stale was set (under mm_lock): a flush in
 *	pieces clears it only if no move set it again meanwhile
 * @dead: no reference left; waiting for its GPU work (deferred destruction)
 * @assume_client: the DRM client that destroyed it with
 *	%QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE (0: none): once dead, its
 *	destruction does not wait for that client's virtual DMA buffers (see
 *	qgpu_bo_skip_client()); cleared by any mapping made after that
 *	destroy began (qgpu_vm_insert())
 * @reap: frees the allocation once its GPU work is done
 */
struct qgpu_bo {
	struct drm_gem_object base;
	u64 id;
	u32 segment_mask;
	u32 flags;
	u8 preferred[4];
	struct page **pages;
	dma_addr_t *dma;
	u32 npages;
	u32 seg;
	struct drm_mm_node node;
	struct list_head lru;
	u64 lru_tick;
	u64 uses;
	u64 use_tick;
	u64 use_gap;
	u64 future_stamp;
	u32 future_pos;
	u64 walk_id;
	u32 walk_last;
	u32 walk_seen;
	u64 walk_slot;
	u32 priority;
	struct qgpu_vidmem *owner;
	u8 offer_priority;
	bool offered;
	bool discarded;
	bool evicted;
	u32 lock_count;
	u32 nmappings;
	u32 pin_count;
	struct qgpu_hap_run *hap_runs;
	u32 hap_nruns;
	struct list_head hap_link;
	struct sg_table *sgt;
	u32 attachments;
	bool submit_write;
	bool pristine;
	bool cpu_stale;
	u32 cpu_stale_moves;
	bool dead;
	u64 assume_client;
	struct work_struct reap;
};

/*
 * Whose work the memory manager need not wait for before it moves or
 * releases @bo (0: it waits for all of qgpu's DMA buffers in its
 * reservation object). Once @bo is dead after a destroy with AssumeNotInUse
 * ("Allocation Usage Tracking"): the virtual DMA buffers (bookkeeping
 * usage) of the client that destroyed it. They reached it only through
 * that client's mappings, which the destroy unmapped (invalid entries, TLB
 * flushed) by a paging job whose kernel fence is still waited for, so a
 * late access faults the liar's own context. A mapping made after the
 * destroy began (the allocation imported again through its dma-buf, a
 * VM_MAP racing the destroy) clears @assume_client: closing the file
 * removes such a mapping without rewriting its entries, and the client's
 * buffers reach the memory through it. Everyone else's work, and the
 * liar's physical DMA buffers (read and write usage), are waited for.
 */
static inline u64 qgpu_bo_skip_client(struct qgpu_bo *bo)
{
	return READ_ONCE(bo->dead) ? READ_ONCE(bo->assume_client) : 0;
}

static inline struct qgpu_bo *to_qbo(struct drm_gem_object *obj)
{
	return container_of(obj, struct qgpu_bo, base);
}

/* qgpu_gem.c */
struct qgpu_bo *qgpu_bo_lookup(struct drm_file *file, u32 handle);
struct qgpu_bo *qgpu_bo_create(struct qgpu_device *qdev, u64 size,
			       u32 mask, u32 flags, u32 preferred,
			       bool shmem);
u64 qgpu_max_alloc(struct qgpu_device *qdev);

/* qgpu_segment.c */
bool qgpu_bo_lock_outside_vram(struct qgpu_bo *bo);

/* qgpu_priority.c */
int qgpu_gem_set_priority_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);
int qgpu_gem_offer_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file);
int qgpu_gem_reclaim_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);

/* qgpu_cpu_map.c */
int qgpu_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma);
u32 qgpu_bo_cpu_caching(struct qgpu_bo *bo, u32 path);
int qgpu_invalidate_cache_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);

/* qgpu_prime.c */
struct dma_buf *qgpu_gem_prime_export(struct drm_gem_object *obj,
				      int flags);
struct sg_table *qgpu_gem_get_sg_table(struct drm_gem_object *obj);
struct drm_gem_object *qgpu_gem_prime_import(struct drm_device *drm,
					     struct dma_buf *dma_buf);
struct drm_gem_object *
qgpu_gem_prime_import_sg_table(struct drm_device *drm,
			       struct dma_buf_attachment *attach,
			       struct sg_table *sgt);
int qgpu_gem_dumb_create(struct drm_file *file, struct drm_device *drm,
			 struct drm_mode_create_dumb *args);
/* qgpu_destroy.c */
int qgpu_gem_destroy_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);
int qgpu_gem_create_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file);
void qgpu_gem_close(struct drm_gem_object *obj, struct drm_file *file);
void qgpu_gem_file_locks_fini(struct qgpu_file *qf);
int qgpu_gem_lock_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int qgpu_gem_unlock_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file);
int qgpu_gem_reside_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file);
int qgpu_gem_info_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);

#endif /* QGPU_GEM_H */
