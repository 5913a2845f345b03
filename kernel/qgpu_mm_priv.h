/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_MM_PRIV_H
#define QGPU_MM_PRIV_H

/*
 * Between the memory manager's files, in layers, each using only those
 * above it: segment, backing, migrate, destroy, evict, residency; qgpu_mm.c
 * (set-up) on top.
 * Everything here runs under qdev->mm_lock.
 */
#include "qgpu_device.h"
#include "qgpu_gem.h"

struct qgpu_paging;
struct qgpu_victim;

/* qgpu_segment.c */
void qgpu_seg_setup(struct qgpu_device *qdev, u32 id, u64 base, u64 size,
		    u32 flags, u64 bar_offset);
struct qgpu_segment *qgpu_seg(struct qgpu_device *qdev, u32 id);
void qgpu_seg_account(struct qgpu_device *qdev, struct qgpu_bo *bo,
		      bool add);
int qgpu_mm_allowed(struct qgpu_bo *bo, u32 id);

/* qgpu_migrate.c */
void qgpu_mm_zap(struct qgpu_bo *bo);
void qgpu_mm_book_move(struct qgpu_bo *bo, u32 dst,
		       struct drm_mm_node *dst_node);
int qgpu_mm_paging_begin(struct qgpu_bo *bo, struct qgpu_paging *pb);
void qgpu_mm_paging_end(struct qgpu_bo *bo, struct qgpu_paging *pb,
			int err);
int qgpu_mm_move(struct qgpu_bo *bo, u32 dst, struct drm_mm_node *dst_node,
		 u32 why);
int qgpu_mm_move_into(struct qgpu_bo *bo, u32 dst, struct drm_mm_node *node,
		      u32 why);

/* qgpu_destroy.c */
int qgpu_mm_drop(struct qgpu_bo *bo);

/* qgpu_budget.c */
u32 qgpu_seg_group(u32 seg);
void qgpu_budget_account(struct qgpu_device *qdev, struct qgpu_bo *bo,
			 bool add);
void qgpu_budget_trim(struct qgpu_device *qdev, struct qgpu_bo *bo);
void qgpu_budget_pt(struct qgpu_device *qdev, struct qgpu_vidmem *owner,
		    u32 seg, bool add);
void qgpu_budget_flag(struct qgpu_device *qdev, u32 seg,
		      struct qgpu_victim *v, u32 n);

/* qgpu_evict.c */
int qgpu_mm_find_space(struct qgpu_device *qdev, struct qgpu_segment *seg,
		       u64 size, struct drm_mm_node *node,
		       struct qgpu_bo *self);
int qgpu_mm_victim_segment(struct qgpu_bo *bo, const u32 *order,
			   unsigned int n, unsigned int *out);
int qgpu_mm_find_room(struct qgpu_device *qdev, struct qgpu_segment *seg,
		      u64 size, struct drm_mm_node *node);
int qgpu_mm_evict_one(struct qgpu_bo *bo, bool to_system, u32 why);

#endif /* QGPU_MM_PRIV_H */
