// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: per-process video memory budgets (QueryVideoMemoryInfo). Every DRM
 * file counts the bytes of the allocations it created that are resident in
 * each segment group; its budget is a device-wide percentage of the
 * group's usable bytes. When a segment has no room, the allocations of a
 * process over its budget in that segment's group are the first victims,
 * as many as bring it back to its budget.
 */
#include <linux/debugfs.h>
#include <linux/kref.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <qgpu/qgpu_mmu.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_policy.h"
#include "qgpu_trace.h"

/* The budget every device starts with, in percent (module parameter) */
static unsigned int qgpu_default_budget = 100;

static int qgpu_budget_param_set(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int pct;

	if (kstrtouint(val, 0, &pct) || !pct || pct > 100)
		return -EINVAL;
	*(unsigned int *)kp->arg = pct;
	return 0;
}

static const struct kernel_param_ops qgpu_budget_param_ops = {
	.set = qgpu_budget_param_set,
	.get = param_get_uint,
};

module_param_cb(budget, &qgpu_budget_param_ops, &qgpu_default_budget, 0444);
MODULE_PARM_DESC(budget,
		 "every process's video memory budget, in percent of each segment group (1-100, default 100; per device at run time: debugfs qgpu_budget)");

u32 qgpu_mm_default_budget(void)
{
	return qgpu_default_budget;
}

struct qgpu_vidmem *qgpu_vidmem_new(void)
{
	static atomic64_t ids;
	struct qgpu_vidmem *vm = kzalloc(sizeof(*vm), GFP_KERNEL);

	if (vm) {
		kref_init(&vm->ref);
		vm->id = atomic64_inc_return(&ids);
	}
	return vm;
}

struct qgpu_vidmem *qgpu_vidmem_get(struct qgpu_vidmem *vm)
{
	kref_get(&vm->ref);
	return vm;
}

static void qgpu_vidmem_release(struct kref *ref)
{
	kfree(container_of(ref, struct qgpu_vidmem, ref));
}

void qgpu_vidmem_put(struct qgpu_vidmem *vm)
{
	if (vm)
		kref_put(&vm->ref, qgpu_vidmem_release);
}

/* The segment group of segment @seg (QGPU_SEGMENT_GROUP_*) */
u32 qgpu_seg_group(u32 seg)
{
	return seg == QGPU_SEG_APERTURE ? QGPU_SEGMENT_GROUP_NON_LOCAL :
	       QGPU_SEGMENT_GROUP_LOCAL;
}

/* Usable bytes of a segment group */
static u64 qgpu_group_size(struct qgpu_device *qdev, u32 group)
{
	u64 size = 0;
	u32 id;

	for (id = QGPU_SEG_VISIBLE; id <= QGPU_SEG_MAX; id++) {
		struct qgpu_segment *seg = qgpu_seg(qdev, id);

		if (seg && qgpu_seg_group(id) == group)
			size += seg->size - seg->reserved;
	}
	return size;
}

/* Every process's budget in @group: the device's percentage of it */
static u64 qgpu_budget(struct qgpu_device *qdev, u32 group)
{
	return mul_u64_u32_div(qgpu_group_size(qdev, group),
			       READ_ONCE(qdev->budget_pct), 100) & PAGE_MASK;
}

/* @bo comes into (@add) or leaves its segment: its creator's usage */
void qgpu_budget_account(struct qgpu_device *qdev, struct qgpu_bo *bo,
			 bool add)
{
	u32 g = qgpu_seg_group(bo->seg);

	lockdep_assert_held(&qdev->mm_lock);
	if (!bo->owner)
		return;
	if (add)
		bo->owner->usage[g] += bo->node.size;
	else
		bo->owner->usage[g] -= bo->node.size;
}

/*
 * A page table of @owner's address space is taken (@add) or given back in
 * @seg: it counts in @owner's usage as an allocation would, so that a
 * process with many tables is over its budget, and trimmed first, sooner.
 */
void qgpu_budget_pt(struct qgpu_device *qdev, struct qgpu_vidmem *owner,
		    u32 seg, bool add)
{
	u32 g = qgpu_seg_group(seg);

	lockdep_assert_held(&qdev->mm_lock);
	if (!owner)
		return;
	if (add)
		owner->usage[g] += QGPU_MMU_TABLE_SIZE;
	else
		owner->usage[g] -= QGPU_MMU_TABLE_SIZE;
}

/* @bo is evicted for real: count it as trimmed if its creator is over */
void qgpu_budget_trim(struct qgpu_device *qdev, struct qgpu_bo *bo)
{
	u32 g = qgpu_seg_group(bo->seg);

	lockdep_assert_held(&qdev->mm_lock);
	if (bo->owner && bo->seg != QGPU_SEG_SYSTEM &&
	    bo->owner->usage[g] > qgpu_budget(qdev, g))
		bo->owner->trimmed[g] += bo->node.size;
}

/**
 * qgpu_budget_flag - mark the victims that trim processes over budget
 * @qdev: device
 * @seg: the segment the victims are in
 * @v: the candidates, in the victim policy's order
 * @n: their number
 *
 * For each process over its budget in @seg's group, its candidates are
 * marked %QGPU_VICTIM_OVER_BUDGET in the policy's order until their bytes
 * cover its excess; then, if any was marked, the candidates are ordered
 * again, so that those go first (within their priority class order).
 */
void qgpu_budget_flag(struct qgpu_device *qdev, u32 seg,
		      struct qgpu_victim *v, u32 n)
{
	u32 g = qgpu_seg_group(seg), i;
	u64 budget = qgpu_budget(qdev, g);
	bool any = false;

	lockdep_assert_held(&qdev->mm_lock);
	for (i = 0; i < n; i++) {
		struct qgpu_vidmem *o = ((struct qgpu_bo *)v[i].cookie)->owner;

		if (o)
			o->trim_left = o->usage[g] > budget ?
				       o->usage[g] - budget : 0;
	}
	for (i = 0; i < n; i++) {
		struct qgpu_vidmem *o = ((struct qgpu_bo *)v[i].cookie)->owner;

		if (!o || !o->trim_left)
			continue;
		v[i].flags |= QGPU_VICTIM_OVER_BUDGET;
		o->trim_left -= min(o->trim_left, v[i].size);
		any = true;
	}
	if (any)
		qgpu_policy_order(qdev->policy, v, n);
}

/**
 * qgpu_vidmem_query - QueryVideoMemoryInfo for @qf (%QGPU_QUERY_VIDMEM_INFO)
 * @qf: the calling file
 * @out: %QGPU_SEGMENT_GROUPS entries
 *
 * Return: the number of entries written.
 */
u32 qgpu_vidmem_query(struct qgpu_file *qf, struct drm_qgpu_vidmem_info *out)
{
	struct qgpu_device *qdev = qf->qdev;
	u32 g;

	qgpu_mm_lock(qdev, NULL);
	for (g = 0; g < QGPU_SEGMENT_GROUPS; g++) {
		memset(&out[g], 0, sizeof(out[g]));
		out[g].group = g;
		out[g].budget = qgpu_budget(qdev, g);
		out[g].current_usage = qf->vidmem->usage[g];
		out[g].size = qgpu_group_size(qdev, g);
		out[g].trimmed_bytes = qf->vidmem->trimmed[g];
	}
	qgpu_mm_unlock(qdev);
	return QGPU_SEGMENT_GROUPS;
}

/* debugfs qgpu_budget: the device's budget percentage, read and write */
static int qgpu_budget_show(struct seq_file *m, void *unused)
{
	struct qgpu_device *qdev = m->private;

	seq_printf(m, "%u\n", READ_ONCE(qdev->budget_pct));
	return 0;
}

static int qgpu_budget_open(struct inode *inode, struct file *file)
{
	return single_open(file, qgpu_budget_show, inode->i_private);
}

static ssize_t qgpu_budget_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *pos)
{
	struct qgpu_device *qdev = file_inode(file)->i_private;
	unsigned int pct;
	int ret;

	ret = kstrtouint_from_user(ubuf, len, 0, &pct);
	if (ret)
		return ret;
	if (!pct || pct > 100)
		return -EINVAL;
	qgpu_mm_lock(qdev, NULL);
	trace_qgpu_mm_req(QGPU_REQ_BUDGET, 0, pct);
	WRITE_ONCE(qdev->budget_pct, pct);
	qgpu_mm_unlock(qdev);
	return len;
}

static const struct file_operations qgpu_budget_fops = {
	.owner = THIS_MODULE,
	.open = qgpu_budget_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = qgpu_budget_write,
};

void qgpu_budget_debugfs_init(struct qgpu_device *qdev, struct dentry *root)
{
	debugfs_create_file("qgpu_budget", 0644, root, qdev,
			    &qgpu_budget_fops);
}
