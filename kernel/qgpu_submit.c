// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: DMA-buffer submission with allocation and patch-location lists.
 *
 * Seed 000 is the specification. The patch-location list is walked in
 * order; each allocation is made resident (paging buffers) and its address
 * patched into the BIND that uses it. When an allocation cannot be brought
 * in, the portion from the previous split point up to that entry's
 * SplitOffset is queued, only the allocations of the current resource
 * table stay pinned where they are (slots reprogrammed at that split point
 * carry no restriction), and the walk goes on.
 */
#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_syncobj.h>

#include "qgpu_drv.h"
#include "qgpu_ctx.h"
#include "qgpu_gem.h"
#include "qgpu_job.h"
#include "qgpu_mm.h"
#include "qgpu_split.h"
#include "qgpu_submit.h"

/* The patched DMA buffer, shared by the portions that execute it. */
struct qgpu_dmabuf {
	struct kref ref;
	struct device *dev;
	void *cpu;
	dma_addr_t dma;
	u32 size;
};

static void qgpu_dmabuf_release(struct kref *ref)
{
	struct qgpu_dmabuf *b = container_of(ref, struct qgpu_dmabuf, ref);

	dma_free_coherent(b->dev, b->size, b->cpu, b->dma);
	kfree(b);
}

static void qgpu_dmabuf_put(void *data)
{
	struct qgpu_dmabuf *b = data;

	kref_put(&b->ref, qgpu_dmabuf_release);
}

struct qgpu_submit {
	struct qgpu_device *qdev;
	struct qgpu_file *qf;
	struct drm_file *file;
	struct qgpu_ctx *ctx;
	struct drm_qgpu_submit *args;
	struct qgpu_dmabuf *buf;
	u32 *dw;			/* buf->cpu */
	struct drm_qgpu_alloc_entry *ae;
	struct qgpu_bo **bos;		/* per allocation entry, may be NULL */
	struct drm_qgpu_patch_entry *pe;
	struct dma_fence **in_fences;
	u32 num_in;
	struct qgpu_bo **table;		/* resource table, per slot */
	struct qgpu_bo **pinned;	/* pinned for the current portion */
	u32 npinned;
	struct dma_fence *last;		/* finished fence of the last portion */
	u32 portions;
};

/* Walk the DMA buffer: known commands only; every BIND must be patched. */
static int qgpu_submit_parse(struct qgpu_submit *s)
{
	u32 ndw = s->args->dma_size / 4, i = 0, p = 0, binds = 0;

	while (i < ndw) {
		u32 hdr = s->dw[i], op = QGPU_CMD_OPCODE(hdr);
		u32 len = QGPU_CMD_LEN(hdr), need;

		switch (op) {
		case QGPU_DMA_NOP:
			need = 1;
			break;
		case QGPU_DMA_BIND:
			need = QGPU_DMA_BIND_LEN;
			break;
		case QGPU_DMA_COPY:
			need = QGPU_DMA_COPY_LEN;
			break;
		case QGPU_DMA_FILL:
			need = QGPU_DMA_FILL_LEN;
			break;
		case QGPU_DMA_ADD:
		case QGPU_DMA_XOR:
			need = QGPU_DMA_ALU_LEN;
			break;
		case QGPU_DMA_CHECKSUM:
			need = QGPU_DMA_CHECKSUM_LEN;
			break;
		case QGPU_DMA_FENCE:
			need = QGPU_DMA_FENCE_LEN;
			break;
		case QGPU_DMA_WAIT:
			need = QGPU_DMA_WAIT_LEN;
			break;
		case QGPU_DMA_TIMESTAMP:
			need = QGPU_DMA_TIMESTAMP_LEN;
			break;
		default:
			return -EINVAL;
		}
		if (QGPU_CMD_FLAGS(hdr) || len < need || len > ndw - i ||
		    (op != QGPU_DMA_NOP && len != need))
			return -EINVAL;
		if (op == QGPU_DMA_BIND) {
			u32 at = (i + QGPU_DMA_BIND_ADDR_DW) * 4;

			/* the patch entries for BINDs come in buffer order */
			while (p < s->args->num_patches &&
			       s->pe[p].patch_offset < at)
				p++;
			if (p >= s->args->num_patches ||
			    s->pe[p].patch_offset != at)
				return -EINVAL;
			binds++;
		}
		i += len;
	}
	/* no patch entry may point anywhere but a BIND's address */
	return binds == s->args->num_patches ? 0 : -EINVAL;
}

static int qgpu_submit_copy(struct qgpu_submit *s)
{
	struct drm_qgpu_submit *a = s->args;
	struct qgpu_device *qdev = s->qdev;
	u32 i, prev_split = 0, prev_patch = 0;

	if (a->dma_size < 4 || a->dma_size > QGPU_MAX_DMA_SIZE ||
	    a->dma_size % 4 || a->num_allocs > QGPU_MAX_ALLOCS ||
	    a->num_patches > QGPU_MAX_PATCHES ||
	    a->num_in_syncs > QGPU_MAX_SYNCS ||
	    a->num_out_syncs > QGPU_MAX_SYNCS || a->num_patches > a->dma_size / 4)
		return -EINVAL;

	s->buf = kzalloc(sizeof(*s->buf), GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	kref_init(&s->buf->ref);
	s->buf->dev = qdev->drm.dev;
	s->buf->size = a->dma_size;
	s->buf->cpu = dma_alloc_coherent(s->buf->dev, a->dma_size,
					 &s->buf->dma, GFP_KERNEL);
	if (!s->buf->cpu) {
		kfree(s->buf);
		s->buf = NULL;
		return -ENOMEM;
	}
	s->dw = s->buf->cpu;
	if (copy_from_user(s->dw, u64_to_user_ptr(a->dma), a->dma_size))
		return -EFAULT;

	s->ae = kvmalloc_array(a->num_allocs + 1, sizeof(*s->ae), GFP_KERNEL);
	s->bos = kvcalloc(a->num_allocs + 1, sizeof(*s->bos), GFP_KERNEL);
	s->pe = kvmalloc_array(a->num_patches + 1, sizeof(*s->pe), GFP_KERNEL);
	s->table = kcalloc(qdev->max_slots, sizeof(*s->table), GFP_KERNEL);
	s->pinned = kvcalloc(a->num_allocs + 1, sizeof(*s->pinned), GFP_KERNEL);
	if (!s->ae || !s->bos || !s->pe || !s->table || !s->pinned)
		return -ENOMEM;
	if (copy_from_user(s->ae, u64_to_user_ptr(a->allocs),
			   a->num_allocs * sizeof(*s->ae)) ||
	    copy_from_user(s->pe, u64_to_user_ptr(a->patches),
			   a->num_patches * sizeof(*s->pe)))
		return -EFAULT;

	for (i = 0; i < a->num_allocs; i++) {
		if (s->ae[i].flags & ~QGPU_ALLOC_WRITE)
			return -EINVAL;
		if (!s->ae[i].handle)
			continue;
		s->bos[i] = qgpu_bo_lookup(s->file, s->ae[i].handle);
		if (!s->bos[i])
			return -ENOENT;
	}
	for (i = 0; i < a->num_patches; i++) {
		struct drm_qgpu_patch_entry *pe = &s->pe[i];
		struct qgpu_bo *bo;

		if (pe->pad[0] || pe->pad[1] || pe->alloc_index >= a->num_allocs ||
		    pe->slot >= qdev->max_slots || pe->patch_offset % 4 ||
		    pe->split_offset % 4 || pe->patch_offset > a->dma_size - 8 ||
		    pe->patch_offset < 8 ||
		    pe->split_offset > pe->patch_offset - 8 ||
		    pe->split_offset < prev_split ||
		    (i && pe->patch_offset <= prev_patch))
			return -EINVAL;
		prev_split = pe->split_offset;
		prev_patch = pe->patch_offset;
		bo = s->bos[pe->alloc_index];
		if (bo && (pe->alloc_offset >= bo->base.size ||
			   pe->alloc_offset % 4))
			return -EINVAL;
		if (!bo && pe->alloc_offset)
			return -EINVAL;
	}
	return qgpu_submit_parse(s);
}

static int qgpu_submit_syncs_in(struct qgpu_submit *s)
{
	struct drm_qgpu_submit *a = s->args;
	struct drm_qgpu_sync_entry e;
	u32 i;
	int ret;

	s->in_fences = kcalloc(a->num_in_syncs + 1, sizeof(*s->in_fences),
			       GFP_KERNEL);
	if (!s->in_fences)
		return -ENOMEM;
	for (i = 0; i < a->num_in_syncs; i++) {
		if (copy_from_user(&e, u64_to_user_ptr(a->in_syncs) +
				   i * sizeof(e), sizeof(e)))
			return -EFAULT;
		if (e.flags)
			return -EINVAL;
		ret = drm_syncobj_find_fence(s->file, e.handle, e.point, 0,
					     &s->in_fences[i]);
		if (ret)
			return ret;
		s->num_in++;
	}
	return 0;
}

/* Look up every out-syncobj before anything runs, so a bad one changes nothing. */
static int qgpu_submit_syncs_check_out(struct qgpu_submit *s,
				       struct drm_syncobj **objs,
				       struct dma_fence_chain **chains)
{
	struct drm_qgpu_submit *a = s->args;
	struct drm_qgpu_sync_entry e;
	u32 i;

	for (i = 0; i < a->num_out_syncs; i++) {
		if (copy_from_user(&e, u64_to_user_ptr(a->out_syncs) +
				   i * sizeof(e), sizeof(e)))
			return -EFAULT;
		if (e.flags)
			return -EINVAL;
		objs[i] = drm_syncobj_find(s->file, e.handle);
		if (!objs[i])
			return -ENOENT;
		if (e.point) {
			chains[i] = dma_fence_chain_alloc();
			if (!chains[i])
				return -ENOMEM;
		}
	}
	return 0;
}

static void qgpu_submit_unpin_all(struct qgpu_submit *s)
{
	u32 i;

	for (i = 0; i < s->npinned; i++)
		s->pinned[i]->pin_count--;
	s->npinned = 0;
}

static void qgpu_submit_pin(struct qgpu_submit *s, struct qgpu_bo *bo)
{
	u32 i;

	for (i = 0; i < s->npinned; i++)
		if (s->pinned[i] == bo)
			return;
	bo->pin_count++;
	s->pinned[s->npinned++] = bo;
}

/* Queue the portion [start, end) of the DMA buffer on the context. */
static int qgpu_submit_portion(struct qgpu_submit *s, u32 start, u32 end)
{
	struct qgpu_device *qdev = s->qdev;
	struct qgpu_job *job;
	u64 addr = QGPU_SYS_BIT | s->buf->dma;
	struct dma_fence *done;
	u32 i, n = 0;
	int ret;

	job = qgpu_job_alloc(&qdev->engine[QGPU_ENGINE_RENDER],
			     QGPU_CMD_CTX_CLEAR_LEN + QGPU_CMD_EXEC_LEN);
	if (!job)
		return -ENOMEM;
	ret = drm_sched_job_init(&job->base, &s->ctx->entity, s->qf);
	if (ret) {
		qgpu_job_free(job);
		return ret;
	}
	kref_get(&s->ctx->ref);
	job->ctx = s->ctx;
	kref_get(&s->buf->ref);
	job->release = qgpu_dmabuf_put;
	job->release_data = s->buf;

	for (i = 0; !ret && i < s->npinned; i++)
		ret = qgpu_job_add_dep(job, s->pinned[i]->fence);
	for (i = 0; !ret && !s->portions && i < s->num_in; i++)
		ret = qgpu_job_add_dep(job, s->in_fences[i]);
	if (ret) {
		qgpu_job_free(job);
		return ret;
	}
	if (!s->portions) {
		/* a submit starts with an empty resource table */
		job->cmds[n++] = QGPU_CMD_HDR(QGPU_CMD_CTX_CLEAR, 0,
					      QGPU_CMD_CTX_CLEAR_LEN);
		job->cmds[n++] = s->ctx->id;
	}
	job->cmds[n++] = QGPU_CMD_HDR(QGPU_CMD_EXEC, 0, QGPU_CMD_EXEC_LEN);
	job->cmds[n++] = s->ctx->id;
	job->cmds[n++] = lower_32_bits(addr);
	job->cmds[n++] = upper_32_bits(addr);
	job->cmds[n++] = start;
	job->cmds[n++] = end;
	job->ndw = n;

	done = qgpu_job_push(job, &s->ctx->entity);
	for (i = 0; i < s->npinned; i++) {
		dma_fence_put(s->pinned[i]->fence);
		s->pinned[i]->fence = dma_fence_get(done);
		qgpu_mm_touch(s->pinned[i]);
	}
	dma_fence_put(s->last);
	s->last = done;
	s->portions++;
	qgpu_stat_add(qdev, s->qf, QGPU_STAT(split_portions), 1);
	atomic64_inc(&s->ctx->portions);
	return 0;
}

/* Patch entry @i's BIND with the allocation's current address. */
static void qgpu_submit_patch(struct qgpu_submit *s, u32 i)
{
	struct drm_qgpu_patch_entry *pe = &s->pe[i];
	struct qgpu_bo *bo = s->bos[pe->alloc_index];
	u32 at = pe->patch_offset / 4;	/* address dwords of a BIND */
	u64 addr = 0, size = 0, want;

	if (bo) {
		addr = qgpu_bo_gpu_addr(bo) + pe->alloc_offset;
		want = (u64)s->dw[at + 2] | (u64)s->dw[at + 3] << 32;
		size = min_t(u64, want, bo->base.size - pe->alloc_offset);
	}
	s->dw[at - 1] = pe->slot;
	s->dw[at] = lower_32_bits(addr);
	s->dw[at + 1] = upper_32_bits(addr);
	s->dw[at + 2] = lower_32_bits(size);
	s->dw[at + 3] = upper_32_bits(size);
}

/*
 * After a split at @split: keep pinned only what the resource table needs
 * there, leaving out slots that entries from @next on reprogram at @split.
 */
static void qgpu_submit_repin(struct qgpu_submit *s, u32 next, u32 split)
{
	struct qgpu_device *qdev = s->qdev;
	u32 slot, j;

	qgpu_submit_unpin_all(s);
	for (slot = 0; slot < qdev->max_slots; slot++) {
		bool reprogrammed = false;

		if (!s->table[slot])
			continue;
		for (j = next; j < s->args->num_patches &&
		     s->pe[j].split_offset == split; j++)
			if (s->pe[j].slot == slot)
				reprogrammed = true;
		if (!reprogrammed)
			qgpu_submit_pin(s, s->table[slot]);
	}
}

static int qgpu_submit_precheck(struct qgpu_submit *s)
{
	struct qgpu_device *qdev = s->qdev;
	struct drm_qgpu_submit *a = s->args;
	unsigned long long cap[QGPU_SEG_MAX + 1] = {};
	struct qgpu_split_entry *e;
	struct qgpu_split_alloc *al;
	int *table, bad;
	u32 i;

	for (i = QGPU_SEG_VISIBLE; i <= QGPU_SEG_MAX; i++)
		if (qgpu_mm_seg_present(qdev, i))
			cap[i] = qdev->seg[i].size - qdev->seg[i].reserved;
	e = kvmalloc_array(a->num_patches + 1, sizeof(*e), GFP_KERNEL);
	al = kvmalloc_array(a->num_allocs + 1, sizeof(*al), GFP_KERNEL);
	table = kmalloc_array(qdev->max_slots, sizeof(*table), GFP_KERNEL);
	if (!e || !al || !table) {
		bad = -2;
		goto out;
	}
	for (i = 0; i < a->num_allocs; i++) {
		al[i].size = s->bos[i] ? s->bos[i]->base.size : 0;
		al[i].mask = s->bos[i] ? s->bos[i]->segment_mask : 0;
	}
	for (i = 0; i < a->num_patches; i++) {
		e[i].alloc = s->bos[s->pe[i].alloc_index] ?
			     (int)s->pe[i].alloc_index : -1;
		e[i].slot = s->pe[i].slot;
		e[i].split_offset = s->pe[i].split_offset;
	}
	bad = qgpu_split_check(e, a->num_patches, al, a->num_allocs, cap,
			       QGPU_SEG_MAX + 1, table, qdev->max_slots);
out:
	kvfree(e);
	kvfree(al);
	kfree(table);
	return bad == -1 ? 0 : bad == -2 ? -ENOMEM : -ENOSPC;
}

/* The seed-000 walk. Called with mm_lock held. */
static int qgpu_submit_walk(struct qgpu_submit *s)
{
	struct drm_qgpu_submit *a = s->args;
	u32 i, start = 0;
	int ret;

	for (i = 0; i < a->num_patches; i++) {
		struct drm_qgpu_patch_entry *pe = &s->pe[i];
		struct qgpu_bo *bo = s->bos[pe->alloc_index];

		if (bo) {
			ret = qgpu_mm_make_resident(bo, 0);
			if (ret == -ENOSPC && pe->split_offset > start) {
				/* split: run what precedes this entry first */
				ret = qgpu_submit_portion(s, start,
							  pe->split_offset);
				if (ret)
					return ret;
				start = pe->split_offset;
				qgpu_submit_repin(s, i, start);
				ret = qgpu_mm_make_resident(bo, 0);
			}
			if (ret)
				return ret;
			if (bo->seg == QGPU_SEG_SYSTEM)
				return -EBUSY;
			qgpu_submit_pin(s, bo);
			if (s->ae[pe->alloc_index].flags & QGPU_ALLOC_WRITE)
				bo->pristine = false;
		}
		s->table[pe->slot] = bo;
		qgpu_submit_patch(s, i);
	}
	return qgpu_submit_portion(s, start, a->dma_size);
}

static void qgpu_submit_cleanup(struct qgpu_submit *s)
{
	u32 i;

	if (s->bos)
		for (i = 0; i < s->args->num_allocs; i++)
			if (s->bos[i])
				drm_gem_object_put(&s->bos[i]->base);
	if (s->in_fences)
		for (i = 0; i < s->num_in; i++)
			dma_fence_put(s->in_fences[i]);
	if (s->buf)
		qgpu_dmabuf_put(s->buf);
	dma_fence_put(s->last);
	kfree(s->in_fences);
	kvfree(s->ae);
	kvfree(s->bos);
	kvfree(s->pe);
	kfree(s->table);
	kvfree(s->pinned);
}

int qgpu_submit_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_submit *args = data;
	struct drm_syncobj *objs[QGPU_MAX_SYNCS] = {};
	struct dma_fence_chain *chains[QGPU_MAX_SYNCS] = {};
	struct qgpu_submit s = {
		.qdev = qdev, .qf = file->driver_priv, .file = file,
		.args = args,
	};
	struct drm_qgpu_sync_entry e;
	u32 i;
	int ret;

	if (args->flags)
		return -EINVAL;
	args->portions = 0;
	s.ctx = qgpu_ctx_lookup(s.qf, args->ctx);
	if (!s.ctx)
		return -ENOENT;
	if (qgpu_ctx_is_lost(s.ctx)) {
		ret = -ECANCELED;
		goto out_ctx;
	}
	ret = qgpu_submit_copy(&s);
	if (!ret)
		ret = qgpu_submit_syncs_in(&s);
	if (!ret)
		ret = qgpu_submit_syncs_check_out(&s, objs, chains);
	if (!ret)
		ret = qgpu_submit_precheck(&s);
	if (ret)
		goto out;

	mutex_lock(&s.ctx->submit_lock);
	mutex_lock(&qdev->mm_lock);
	qdev->mm_owner = s.qf;
	ret = qgpu_submit_walk(&s);
	qgpu_submit_unpin_all(&s);
	qdev->mm_owner = NULL;
	mutex_unlock(&qdev->mm_lock);
	mutex_unlock(&s.ctx->submit_lock);
	if (!s.portions)
		goto out;

	/* Portions were queued: the out-syncobjs get the last one's fence. */
	for (i = 0; i < args->num_out_syncs; i++) {
		if (copy_from_user(&e, u64_to_user_ptr(args->out_syncs) +
				   i * sizeof(e), sizeof(e)))
			e.point = 0;
		if (chains[i]) {
			drm_syncobj_add_point(objs[i], chains[i], s.last, e.point);
			chains[i] = NULL;
		} else {
			drm_syncobj_replace_fence(objs[i], s.last);
		}
	}
	args->portions = s.portions;
	qgpu_stat_add(qdev, s.qf, QGPU_STAT(submissions), 1);
	atomic64_inc(&s.ctx->submissions);
out:
	for (i = 0; i < QGPU_MAX_SYNCS; i++) {
		if (objs[i])
			drm_syncobj_put(objs[i]);
		dma_fence_chain_free(chains[i]);
	}
	qgpu_submit_cleanup(&s);
out_ctx:
	qgpu_ctx_put(s.ctx);
	return ret;
}
