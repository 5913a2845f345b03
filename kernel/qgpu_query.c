// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the query ioctl (device identity, segments, statistics, context
 * status), following the two-call pattern of DXGKQAITYPE_QUERYSEGMENT.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "qgpu_device.h"
#include "qgpu_ctx.h"
#include "qgpu_hw.h"
#include "qgpu_mm.h"
#include "qgpu_paging.h"
#include "qgpu_query.h"
#include "qgpu_vm.h"

void qgpu_query_stats(struct qgpu_counters *c, struct drm_qgpu_stats *st)
{
	__u64 *out = (__u64 *)st;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c->c); i++)
		out[i] = atomic64_read(&c->c[i]);
}

/* The device's counters, and what the device itself reports now */
void qgpu_query_device_stats(struct qgpu_device *qdev,
			     struct drm_qgpu_stats *st)
{
	qgpu_query_stats(&qdev->stats, st);
	st->vram_committed = qgpu_hw_vram_committed(qdev);
	st->device_lost = qgpu_device_is_lost(qdev);
}

static void qgpu_query_device(struct qgpu_device *qdev,
			      struct drm_qgpu_device_info *info)
{
	u32 n;

	memset(info, 0, sizeof(*info));
	info->vendor_id = qdev->pdev->vendor;
	info->device_id = qdev->pdev->device;
	info->revision = qdev->pdev->revision;
	info->version = qdev->version;
	info->caps = qdev->caps;
	info->num_engines = QGPU_NUM_ENGINES;
	info->max_slots = qdev->max_slots;
	info->max_contexts = qdev->max_contexts;
	info->vram_size = qdev->vram_size;
	info->visible_vram_size = qdev->visible_size;
	info->gart_size = qdev->gart_size;
	info->host_aperture_size = qdev->hap_size;
	info->paging_buffer_segment = QGPU_PBUF_SEGMENT;
	info->paging_buffer_size = QGPU_PBUF_SIZE;
	qgpu_mm_segment_stats(qdev, NULL, &n);
	info->num_segments = n;
}

static u32 qgpu_query_segments(struct qgpu_device *qdev,
			       struct drm_qgpu_segment *out)
{
	u32 id, n = 0;

	for (id = QGPU_SEG_VISIBLE; id <= QGPU_SEG_MAX; id++) {
		struct qgpu_segment *seg = &qdev->seg[id];

		if (!seg->present)
			continue;
		if (out) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].id = id;
			out[n].flags = seg->flags;
			out[n].base = seg->base;
			out[n].size = seg->size;
			out[n].cpu_bar_offset = seg->cpu_bar_offset;
			out[n].reserved_size = seg->reserved;
		}
		n++;
	}
	return n;
}

/* The GPU MMU after DXGK_GPUMMUCAPS, and the virtual-addressing counters */
static void qgpu_query_mmu(struct qgpu_device *qdev,
			   struct drm_qgpu_mmu_info *m)
{
	struct qgpu_mmu_stats *st = &qdev->mmu_stats;

	m->va_bits = QGPU_MMU_VA_BITS;
	m->levels = QGPU_MMU_LEVELS;
	m->page_sizes = QGPU_MMU_PAGE_SIZES;
	m->pte_size = QGPU_MMU_PTE_SIZE;
	m->tlb_entries = QGPU_MMU_TLB_ENTRIES;
	m->va_start = QGPU_VM_USER_START;
	m->va_end = QGPU_VM_USER_END;
	qgpu_mm_lock(qdev, NULL);
	m->page_tables = qdev->page_tables;
	qgpu_mm_unlock(qdev);
	m->page_table_bytes = m->page_tables * QGPU_MMU_TABLE_SIZE;
	m->pte_writes = atomic64_read(&st->pte_writes);
	m->update_pt_cmds = atomic64_read(&st->update_pt_cmds);
	m->tlb_flushes = atomic64_read(&st->tlb_flushes);
	m->transfer_virtual_bytes = atomic64_read(&st->transfer_virtual_bytes);
	m->fill_virtual_bytes = atomic64_read(&st->fill_virtual_bytes);
	m->make_resident_calls = atomic64_read(&st->make_resident_calls);
}

int qgpu_query_ioctl(struct drm_device *drm, void *data,
		     struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct qgpu_file *qf = file->driver_priv;
	struct drm_qgpu_query *q = data;
	void *buf = NULL;
	u32 count = 1, size;
	int ret = 0;

	switch (q->type) {
	case QGPU_QUERY_DEVICE:
		size = sizeof(struct drm_qgpu_device_info);
		break;
	case QGPU_QUERY_SEGMENTS:
		count = qgpu_query_segments(qdev, NULL);
		size = count * sizeof(struct drm_qgpu_segment);
		break;
	case QGPU_QUERY_STATS:
		qgpu_mm_segment_stats(qdev, NULL, &count);
		size = sizeof(struct drm_qgpu_stats) +
		       count * sizeof(struct drm_qgpu_segment_stats);
		break;
	case QGPU_QUERY_FILE_STATS:
		size = sizeof(struct drm_qgpu_stats);
		break;
	case QGPU_QUERY_CONTEXT:
		size = sizeof(struct drm_qgpu_context_status);
		break;
	case QGPU_QUERY_MMU:
		size = sizeof(struct drm_qgpu_mmu_info);
		break;
	case QGPU_QUERY_VM_INFO:
		size = sizeof(struct drm_qgpu_vm_info);
		break;
	case QGPU_QUERY_VM_LAYOUT:
		qgpu_vm_layout(qf, NULL, 0, &count);
		size = count * sizeof(struct drm_qgpu_vm_layout_entry);
		break;
	case QGPU_QUERY_VIDMEM_INFO:
		count = QGPU_SEGMENT_GROUPS;
		size = count * sizeof(struct drm_qgpu_vidmem_info);
		break;
	default:
		return -EINVAL;
	}
	if (QGPU_IOCTL_DBG(qdev, q->type >= QGPU_QUERY_MMU &&
			   q->type <= QGPU_QUERY_VM_LAYOUT && !qdev->pp))
		return -ENODEV;
	if (QGPU_IOCTL_DBG(qdev, q->arg && q->type != QGPU_QUERY_CONTEXT))
		return -EINVAL;
	/* the size call too: ENOENT for an id that is not one of the file's */
	if (q->type == QGPU_QUERY_CONTEXT) {
		struct qgpu_ctx *ctx = qgpu_ctx_lookup(qf, q->arg);

		if (QGPU_IOCTL_DBG(qdev, !ctx))
			return -ENOENT;
		qgpu_ctx_put(ctx);
	}
	q->count = count;
	if (!q->ptr) {
		q->size = size;
		return 0;
	}
	if (q->size < size) {
		q->size = size;
		return -ENOSPC;
	}
	q->size = size;
	/* a full VM layout is several MiB: beyond kmalloc's largest */
	buf = kvzalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	switch (q->type) {
	case QGPU_QUERY_DEVICE:
		qgpu_query_device(qdev, buf);
		break;
	case QGPU_QUERY_SEGMENTS:
		qgpu_mm_lock(qdev, NULL);
		qgpu_query_segments(qdev, buf);
		qgpu_mm_unlock(qdev);
		break;
	case QGPU_QUERY_STATS:
		qgpu_query_device_stats(qdev, buf);
		qgpu_mm_lock(qdev, NULL);
		qgpu_mm_segment_stats(qdev, buf + sizeof(struct drm_qgpu_stats),
				      &count);
		qgpu_mm_unlock(qdev);
		break;
	case QGPU_QUERY_FILE_STATS:
		qgpu_query_stats(&qf->stats, buf);
		break;
	case QGPU_QUERY_CONTEXT:
		ret = qgpu_ctx_status(qf, q->arg, buf);
		break;
	case QGPU_QUERY_MMU:
		qgpu_query_mmu(qdev, buf);
		break;
	case QGPU_QUERY_VM_INFO:
		ret = qgpu_vm_info(file, buf);
		break;
	case QGPU_QUERY_VM_LAYOUT:
		/* a layout that grew since it was sized is cut to @count */
		ret = qgpu_vm_layout(qf, buf, count, &q->count);
		q->count = min(q->count, count);
		break;
	case QGPU_QUERY_VIDMEM_INFO:
		qgpu_vidmem_query(qf, buf);
		break;
	}
	if (!ret && copy_to_user(u64_to_user_ptr(q->ptr), buf, size))
		ret = -EFAULT;
	kvfree(buf);
	return ret;
}
