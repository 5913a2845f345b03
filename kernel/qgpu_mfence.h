/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_MFENCE_H
#define QGPU_MFENCE_H

#include <linux/kref.h>
#include <linux/math.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <asm/page.h>
#include <uapi/drm/qgpu_drm.h>

struct dma_fence;
struct drm_file;
struct drm_device;
struct vm_area_struct;
struct qgpu_device;
struct qgpu_file;
struct qgpu_mfence_page;

/* Values per page, and pages per file: QGPU_MFENCE_MAX in all. */
#define QGPU_MFENCE_PER_PAGE	(PAGE_SIZE / sizeof(u64))
#define QGPU_MFENCE_PAGES	DIV_ROUND_UP(QGPU_MFENCE_MAX, QGPU_MFENCE_PER_PAGE)
/* mmap() page offset of a file's first fence page (below GEM's offsets) */
#define QGPU_MFENCE_MMAP_PGOFF	0x10000ul

/**
 * struct qgpu_mfence - a monitored fence: a 64-bit value the GPU writes
 * @ref: the file's handle, every job that writes it, waiters, exported fences
 * @page: the page that holds the value (a reference)
 * @cpu: the value, as the kernel reads it
 * @dev_addr: the value's device address (QGPU_SYS_BIT | bus address)
 * @queued: the highest value a queued submission will write
 * @done: the highest value of a submission that is done (written by the
 *	device, or by the kernel for a submission that did not run)
 * @fence_context: dma_fence context of its "value reached" fences
 * @pending: its "value reached" fences that wait, by value (under the
 *	device's mfence_lock)
 * @active: on the device's mfence_active while @pending is not empty
 * @free_work: releases it from any context (its last reference may be
 *	dropped where sleeping is not allowed)
 */
struct qgpu_mfence {
	struct kref ref;
	struct qgpu_mfence_page *page;
	u64 *cpu;
	u64 dev_addr;
	atomic64_t queued;
	atomic64_t done;
	u64 fence_context;
	struct rb_root_cached pending;
	struct list_head active;
	struct work_struct free_work;
};

/**
 * struct qgpu_mfence_file - a file's monitored fences
 * @lock: protects @pages
 * @handles: handle -> &struct qgpu_mfence (a reference each)
 * @pages: the file's fence pages, allocated as needed
 */
struct qgpu_mfence_file {
	struct mutex lock;	/* protects pages */
	struct xarray handles;
	struct qgpu_mfence_page *pages[QGPU_MFENCE_PAGES];
};

/**
 * struct qgpu_mfence_sigs - monitored fence values a job writes when done
 * @n: entries used
 * @max: entries allocated
 * @s: the fences (a reference each) and their values
 */
struct qgpu_mfence_sigs {
	u32 n;
	u32 max;
	struct {
		struct qgpu_mfence *mf;
		u64 value;
	} s[];
};

void qgpu_mfence_file_init(struct qgpu_mfence_file *mff);
void qgpu_mfence_file_fini(struct qgpu_mfence_file *mff);
int qgpu_mfence_new(struct qgpu_device *qdev, struct qgpu_file *qf,
		    u64 initial, u32 *handle, struct qgpu_mfence **out);
struct qgpu_mfence *qgpu_mfence_lookup(struct qgpu_file *qf, u32 handle);
void qgpu_mfence_where(struct qgpu_file *qf, struct qgpu_mfence *mf,
		       u64 *mmap_offset, u32 *offset);
void qgpu_mfence_close(struct qgpu_file *qf, u32 handle,
		       struct qgpu_mfence *mf);
struct qgpu_mfence *qgpu_mfence_get(struct qgpu_mfence *mf);
void qgpu_mfence_put(struct qgpu_mfence *mf);
struct dma_fence *qgpu_mfence_fence(struct qgpu_device *qdev,
				    struct qgpu_mfence *mf, u64 value);
void qgpu_mfence_irq(struct qgpu_device *qdev);
void qgpu_mfence_sigs_written(struct qgpu_device *qdev,
			      const struct qgpu_mfence_sigs *sigs);
void qgpu_mfence_device_fini(struct qgpu_device *qdev);
int qgpu_mfence_mmap(struct drm_file *file, struct vm_area_struct *vma);

struct qgpu_mfence_sigs *qgpu_mfence_sigs_alloc(u32 n);
void qgpu_mfence_sigs_add(struct qgpu_mfence_sigs *sigs,
			  struct qgpu_mfence *mf, u64 value);
void qgpu_mfence_sigs_free(struct qgpu_mfence_sigs *sigs);
u32 qgpu_mfence_sigs_emit(const struct qgpu_mfence_sigs *sigs, u32 *cmds);
void qgpu_mfence_sigs_queued(const struct qgpu_mfence_sigs *sigs);
void qgpu_mfence_sigs_reach(struct qgpu_device *qdev,
			    const struct qgpu_mfence_sigs *sigs);
void qgpu_mfence_sigs_done(struct qgpu_device *qdev,
			   struct qgpu_mfence_sigs *sigs);

int qgpu_mfence_create_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);
int qgpu_mfence_destroy_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file);
int qgpu_mfence_wait_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);
int qgpu_mfence_export_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);

#endif /* QGPU_MFENCE_H */
