/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_MM_H
#define QGPU_MM_H

#include "qgpu_device.h"
#include "qgpu_gem.h"

/**
 * struct qgpu_future - the known future of a submission's walk: the rest
 *	of its patch-location list (the future-use victim policy)
 * @bos: the allocation of each allocation-list entry (NULL: none)
 * @pe: the patch-location list
 * @n: its entries
 * @pos: the walk's position: entries from here on are still to come
 */
struct qgpu_future {
	struct qgpu_bo *const *bos;
	const struct drm_qgpu_patch_entry *pe;
	u32 n;
	u32 pos;
};

int qgpu_policy_parse(const char *buf, unsigned int *policy);
unsigned int qgpu_mm_default_policy(void);
u32 qgpu_mm_default_budget(void);

/* qgpu_budget.c: per-process budgets (QueryVideoMemoryInfo) */
struct dentry;
struct qgpu_vidmem *qgpu_vidmem_new(void);
struct qgpu_vidmem *qgpu_vidmem_get(struct qgpu_vidmem *vm);
void qgpu_vidmem_put(struct qgpu_vidmem *vm);
u32 qgpu_vidmem_query(struct qgpu_file *qf, struct drm_qgpu_vidmem_info *out);
void qgpu_budget_debugfs_init(struct qgpu_device *qdev, struct dentry *root);
int qgpu_mm_init(struct qgpu_device *qdev);
void qgpu_mm_fini(struct qgpu_device *qdev);
bool qgpu_mm_seg_present(struct qgpu_device *qdev, u32 id);
int qgpu_bo_backing(struct qgpu_bo *bo);
void qgpu_bo_release_backing(struct qgpu_bo *bo);
u64 qgpu_bo_gpu_addr(struct qgpu_bo *bo);
int qgpu_mm_make_resident(struct qgpu_bo *bo, u32 seg);
int qgpu_mm_evict(struct qgpu_bo *bo, bool to_system);
void qgpu_mm_bo_gone(struct qgpu_bo *bo);
int qgpu_mm_bo_reap(struct qgpu_bo *bo);
void qgpu_mm_touch(struct qgpu_bo *bo);
int qgpu_mm_cpu_prepare(struct qgpu_bo *bo, u32 *path, bool *moving);
void qgpu_mm_segment_stats(struct qgpu_device *qdev,
			   struct drm_qgpu_segment_stats *st, u32 *n);

/* qgpu_hap.c: the CPU host aperture page allocator */
void qgpu_hap_init(struct qgpu_device *qdev);
void qgpu_hap_fini(struct qgpu_device *qdev);
int qgpu_hap_map(struct qgpu_bo *bo);
void qgpu_hap_unmap(struct qgpu_bo *bo);
u64 qgpu_hap_page(struct qgpu_bo *bo, u32 pg);

#endif /* QGPU_MM_H */
