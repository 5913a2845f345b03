// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: debugfs: segment usage and memory-manager counters
 * (/sys/kernel/debug/dri/N/qgpu_stats), the victim policy
 * (/sys/kernel/debug/dri/N/qgpu_policy, read/write by name or number), and
 * the memory manager's books written into the tracepoints
 * (/sys/kernel/debug/dri/N/qgpu_trace_snapshot, write a tag number; used
 * by qgpu-trace, docs/trace-format.md), and a hang on demand
 * (/sys/kernel/debug/dri/N/qgpu_stall: write an engine's name to stall it,
 * "none" to resume every engine; reads the stalled ones).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "qgpu_device.h"
#include "qgpu_hw.h"
#include "qgpu_debugfs.h"
#include "qgpu_mm.h"
#include "qgpu_policy.h"
#include "qgpu_query.h"
#include "qgpu_trace.h"

static const char * const qgpu_stat_names[] = {
	"allocations", "allocated_bytes", "bytes_to_vram", "bytes_from_vram",
	"bytes_vram_to_vram", "bytes_filled", "evictions", "aperture_maps",
	"aperture_unmaps", "hap_maps", "hap_unmaps", "paging_buffers",
	"submissions", "split_portions", "faults", "resets",
	"cache_invalidations", "cache_invalidated_bytes", "offer_discards",
	"offer_discarded_bytes", "migrations_back", "migrated_back_bytes",
	"vram_discards", "vram_discarded_bytes", "vram_committed",
	"device_lost",
};

static_assert(ARRAY_SIZE(qgpu_stat_names) ==
	      sizeof(struct drm_qgpu_stats) / sizeof(__u64));

static int qgpu_stats_show(struct seq_file *m, void *unused)
{
	struct qgpu_device *qdev = m->private;
	struct drm_qgpu_segment_stats st[QGPU_SEG_MAX];
	struct drm_qgpu_stats s;
	__u64 *v = (__u64 *)&s;
	unsigned int i;
	u32 n;

	qgpu_mm_lock(qdev, NULL);
	qgpu_mm_segment_stats(qdev, st, &n);
	qgpu_mm_unlock(qdev);
	for (i = 0; i < n; i++)
		seq_printf(m, "segment %u: size %llu used %llu allocations %u\n",
			   st[i].id, st[i].size, st[i].used, st[i].allocations);
	qgpu_query_device_stats(qdev, &s);
	for (i = 0; i < ARRAY_SIZE(qgpu_stat_names); i++)
		seq_printf(m, "%s %llu\n", qgpu_stat_names[i], v[i]);
	seq_printf(m, "device_faults %u\n", qgpu_hw_fault_count(qdev));
	seq_printf(m, "hap_fault_count %u\n", qgpu_hw_hap_fault_count(qdev));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(qgpu_stats);

static int qgpu_policy_show(struct seq_file *m, void *unused)
{
	struct qgpu_device *qdev = m->private;
	unsigned int i;

	for (i = 0; i < QGPU_POLICY_COUNT; i++)
		seq_printf(m, i == qdev->policy ? "[%s] " : "%s ",
			   qgpu_policy_name(i));
	seq_puts(m, "\n");
	return 0;
}

static int qgpu_policy_open(struct inode *inode, struct file *file)
{
	return single_open(file, qgpu_policy_show, inode->i_private);
}

/* A word written to a debugfs file, into @buf (@size bytes), trimmed */
static char *qgpu_debugfs_word(const char __user *ubuf, size_t len,
			       char *buf, size_t size)
{
	if (len == 0 || len >= size)
		return ERR_PTR(-EINVAL);
	if (copy_from_user(buf, ubuf, len))
		return ERR_PTR(-EFAULT);
	buf[len] = 0;
	return strim(buf);
}

static ssize_t qgpu_policy_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *pos)
{
	struct qgpu_device *qdev = file_inode(file)->i_private;
	char buf[32], *word;
	unsigned int i;

	word = qgpu_debugfs_word(ubuf, len, buf, sizeof(buf));
	if (IS_ERR(word))
		return PTR_ERR(word);
	/* a policy by name, or by its number (enum qgpu_policy_id) */
	if (qgpu_policy_parse(word, &i))
		return -EINVAL;
	qgpu_mm_lock(qdev, NULL);
	trace_qgpu_mm_req(QGPU_REQ_POLICY, 0, i);
	qdev->policy = i;
	qgpu_mm_unlock(qdev);
	return len;
}

static const struct file_operations qgpu_policy_fops = {
	.owner = THIS_MODULE,
	.open = qgpu_policy_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = qgpu_policy_write,
};

static ssize_t qgpu_snapshot_write(struct file *file,
				   const char __user *ubuf, size_t len,
				   loff_t *pos)
{
	struct qgpu_device *qdev = file_inode(file)->i_private;
	u32 tag;
	int ret;

	ret = kstrtou32_from_user(ubuf, len, 0, &tag);
	if (ret)
		return ret;
	qgpu_mm_trace_snapshot(qdev, tag);
	return len;
}

static const struct file_operations qgpu_snapshot_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = qgpu_snapshot_write,
	.llseek = noop_llseek,
};

static int qgpu_stall_show(struct seq_file *m, void *unused)
{
	struct qgpu_device *qdev = m->private;
	unsigned int i;
	int idx;

	if (!drm_dev_enter(&qdev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < QGPU_NUM_ENGINES; i++)
		if (qgpu_engine_stalled(&qdev->engine[i]))
			seq_printf(m, "%s\n", qdev->engine[i].name);
	drm_dev_exit(idx);
	return 0;
}

static int qgpu_stall_open(struct inode *inode, struct file *file)
{
	return single_open(file, qgpu_stall_show, inode->i_private);
}

/*
 * An engine that stops answering (CTRL.STALL), for tests of the job
 * timeout and of what follows: a render engine's hang loses the guilty
 * context, a paging engine's loses the device (qgpu_lost.c).
 */
static ssize_t qgpu_stall_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *pos)
{
	struct qgpu_device *qdev = file_inode(file)->i_private;
	char buf[16], *name;
	bool none, found = false;
	unsigned int i;
	int idx;

	name = qgpu_debugfs_word(ubuf, len, buf, sizeof(buf));
	if (IS_ERR(name))
		return PTR_ERR(name);
	none = !strcmp(name, "none");
	if (!drm_dev_enter(&qdev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < QGPU_NUM_ENGINES; i++) {
		if (!none && strcmp(name, qdev->engine[i].name))
			continue;
		qgpu_engine_stall(&qdev->engine[i], !none);
		found = true;
	}
	drm_dev_exit(idx);
	return found ? len : -EINVAL;
}

static const struct file_operations qgpu_stall_fops = {
	.owner = THIS_MODULE,
	.open = qgpu_stall_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = qgpu_stall_write,
};

void qgpu_debugfs_init(struct qgpu_device *qdev)
{
	struct dentry *root = qdev->drm.primary->debugfs_root;

	if (!root)
		return;
	debugfs_create_file("qgpu_stats", 0444, root, qdev, &qgpu_stats_fops);
	debugfs_create_file("qgpu_policy", 0644, root, qdev, &qgpu_policy_fops);
	qgpu_budget_debugfs_init(qdev, root);
	debugfs_create_file("qgpu_trace_snapshot", 0200, root, qdev,
			    &qgpu_snapshot_fops);
	debugfs_create_file("qgpu_stall", 0600, root, qdev, &qgpu_stall_fops);
}
