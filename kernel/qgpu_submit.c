// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: DMA-buffer submission with allocation and patch-location lists.
 *
 * "Splitting a DMA Buffer" (WDK) is the specification. The patch-location
 * list is walked in order; each allocation is made resident (paging
 * buffers) and its address
 * patched into the BIND that uses it. When an allocation cannot be brought
 * in, the portion from the previous split point up to that entry's
 * SplitOffset is queued, only the allocations of the current resource
 * table stay pinned where they are (slots reprogrammed at that split point
 * carry no restriction), and the walk goes on.
 */
#include <linux/dma-mapping.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_exec.h>
#include <drm/drm_print.h>

#include "qgpu_device.h"
#include "qgpu_ctx.h"
#include "qgpu_dma_parse.h"
#include "qgpu_gem.h"
#include "qgpu_job.h"
#include "qgpu_mm.h"
#include "qgpu_plan.h"
#include "qgpu_ring_cmd.h"
#include "qgpu_split.h"
#include "qgpu_submit.h"
#include "qgpu_submit_sync.h"
#include "qgpu_trace.h"

/* What a copy of @size bytes counts in &qgpu_usage.dma_bytes */
static u64 qgpu_dmabuf_charge(u32 size)
{
	return PAGE_ALIGN((u64)size);
}

/* Count @bytes more for the file if that stays within its limit */
static bool qgpu_dmabuf_take(struct qgpu_usage *u, u64 bytes)
{
	s64 old = atomic64_read(&u->dma_bytes);

	do {
		if (old + bytes > QGPU_MAX_QUEUED_DMA)
			return false;
	} while (!atomic64_try_cmpxchg(&u->dma_bytes, &old, old + bytes));
	return true;
}

static void qgpu_dmabuf_release(struct kref *ref)
{
	struct qgpu_dmabuf *b = container_of(ref, struct qgpu_dmabuf, ref);
	struct qgpu_usage *u = b->usage;
	u64 charge = qgpu_dmabuf_charge(b->size);

	if (b->cpu)
		dma_free_coherent(b->dev, b->size, b->cpu, b->dma);
	kfree(b);
	atomic64_sub(charge, &u->dma_bytes);
	wake_up_all(&u->dma_wq);
	qgpu_usage_put(u);
}

void qgpu_dmabuf_put(void *data)
{
	struct qgpu_dmabuf *b = data;

	kref_put(&b->ref, qgpu_dmabuf_release);
}

/**
 * qgpu_dmabuf_copy - the kernel's copy of a user DMA buffer
 * @qdev: device
 * @usage: the submitting file's (the copy counts in it until freed)
 * @user: user pointer
 * @size: bytes (checked by the caller)
 * @out: the copy, in memory the device reads (a reference)
 *
 * The device runs this copy, never the user's memory: what it executes is
 * what the kernel parsed. A file's copies alive (queued behind its other
 * work, whose jobs free them) are at most %QGPU_MAX_QUEUED_DMA bytes: past
 * that the caller waits, holding no lock, until earlier ones are done, so
 * that queueing behind a long job cannot take the kernel's memory.
 *
 * Return: 0, -EINTR, -ENODEV (the device was removed meanwhile), -ENOMEM or
 * -EFAULT.
 */
int qgpu_dmabuf_copy(struct qgpu_device *qdev, struct qgpu_usage *usage,
		     u64 user, u32 size, struct qgpu_dmabuf **out)
{
	struct qgpu_dmabuf *b;
	long t;

	/*
	 * In slices: a removal of the device waits for this ioctl (it runs
	 * inside drm_dev_enter()), and the copies it waits for may be freed
	 * only after jobs that wait for foreign fences.
	 */
	for (;;) {
		u64 charge = qgpu_dmabuf_charge(size);

		t = wait_event_interruptible_timeout(usage->dma_wq,
						     qgpu_dmabuf_take(usage,
								      charge),
						     msecs_to_jiffies(100));
		if (t > 0)
			break;
		if (t < 0)
			return -EINTR;
		if (drm_dev_is_unplugged(&qdev->drm))
			return -ENODEV;
	}
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b) {
		atomic64_sub(qgpu_dmabuf_charge(size), &usage->dma_bytes);
		wake_up_all(&usage->dma_wq);
		return -ENOMEM;
	}
	kref_init(&b->ref);
	kref_get(&usage->ref);
	b->usage = usage;
	b->dev = qdev->drm.dev;
	b->size = size;
	b->cpu = dma_alloc_coherent(b->dev, size, &b->dma, GFP_KERNEL);
	if (!b->cpu) {
		kref_put(&b->ref, qgpu_dmabuf_release);
		return -ENOMEM;
	}
	*out = b;
	if (copy_from_user(b->cpu, u64_to_user_ptr(user), size))
		return -EFAULT;
	return 0;
}

struct qgpu_submit {
	struct qgpu_device *qdev;
	struct qgpu_file *qf;
	struct drm_file *file;
	struct qgpu_ctx *ctx;
	struct drm_qgpu_submit *args;
	struct qgpu_dmabuf *buf;
	u32 *dw;			/* buf->cpu */
	void *arrays;			/* the arrays below, one allocation */
	struct drm_qgpu_alloc_entry *ae;
	struct qgpu_bo **bos;		/* per allocation entry, may be NULL */
	struct drm_qgpu_patch_entry *pe;
	struct qgpu_in_syncs in;
	struct qgpu_bo **table;		/* resource table, per slot */
	struct qgpu_bo **undo;		/* per patch entry: what it replaced */
	struct qgpu_bo **devslot;	/* per slot: bound at the portion start */
	u32 *slots;			/* slots the patch list uses, ascending */
	u32 nslots;
	u32 *mark;			/* per slot: reprogrammed at split gen */
	u32 gen;
	u32 *unbind;			/* slots to clear when a portion starts */
	u32 nunbind;
	u32 ran;			/* entries whose BIND ran before start */
	bool dry;			/* planning: queue nothing */
	struct qgpu_bo **pinned;	/* pinned for the current portion */
	u32 npinned;
	struct dma_fence *last;		/* finished fence of the last portion */
	u32 portions;
	struct qgpu_mfence_sigs *sigs;	/* the last portion writes them */
	u64 seq;			/* its number in the tracepoints */
	struct qgpu_future future;	/* the rest of the walk, for eviction */
	/* what a split at one split point would keep (split_frees) */
	u64 walk_id;			/* &qgpu_bo.walk_id of this walk */
	u32 fold;			/* entries in &qgpu_bo.walk_seen */
	bool fr_valid;
	u32 fr_x, fr_start, fr_sran;	/* the split point, start, ran */
	/* its first entry, first not run, kept slots: future.keep_* */
	u32 fr_checked, fr_unkept;	/* pinned looked at, those not kept */
};

/* &qgpu_submit.walk_id, &qgpu_future.keep_slot: never reused */
static atomic64_t qgpu_walk_ids = ATOMIC64_INIT(0);

/* Carve @n elements of @size bytes at *@off of a block, 8-byte aligned. */
static size_t qgpu_submit_carve(size_t *off, size_t n, size_t size)
{
	size_t at = *off;

	*off = size_add(at, ALIGN(size_mul(n, size), 8));
	return at;
}

/*
 * Parse the DMA buffer (qgpu_dma_parse.c): nothing the device executes was
 * not parsed and validated here. Each patch entry tells the parser what
 * its BIND will bind (slot, size, tiled or not), so that it can check
 * every TILE against the allocations it will reach.
 */
static int qgpu_submit_parse(struct qgpu_submit *s)
{
	u32 ndw = s->args->dma_size / 4, npe = s->args->num_patches, i, at;
	u32 nslots = s->qdev->max_slots;
	struct qgpu_parse_slot *slots;
	struct qgpu_parse_patch *pp;
	size_t off = 0, o_pp, o_slots;
	enum qgpu_parse_rule rule;
	u32 *starts;
	u8 *p;

	/* one allocation (see qgpu_submit_alloc_arrays()) */
	qgpu_submit_carve(&off, QGPU_PARSE_STARTS_WORDS(ndw), sizeof(*starts));
	o_pp = qgpu_submit_carve(&off, npe + 1, sizeof(*pp));
	o_slots = qgpu_submit_carve(&off, nslots, sizeof(*slots));
	p = kvzalloc(off, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	starts = (void *)p;
	pp = (void *)(p + o_pp);
	slots = (void *)(p + o_slots);
	for (i = 0; i < npe; i++) {
		struct qgpu_bo *bo = s->bos[s->pe[i].alloc_index];

		pp[i].patch_offset = s->pe[i].patch_offset;
		pp[i].split_offset = s->pe[i].split_offset;
		pp[i].slot = s->pe[i].slot;
		pp[i].tiled = bo && bo->flags & QGPU_GEM_TILED;
		pp[i].avail = bo ? bo->base.size - s->pe[i].alloc_offset : 0;
	}
	rule = qgpu_dma_parse(s->dw, ndw, pp, npe, starts, &at, 0, slots,
			      nslots);
	if (rule != QGPU_PARSE_OK)
		drm_dbg(&s->qdev->drm, "submit: %s (offset %u)\n",
			qgpu_parse_rule_name(rule), at);
	kvfree(p);
	return rule == QGPU_PARSE_OK ? 0 : -EINVAL;
}

static int qgpu_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* The distinct slots the patch list uses, ascending: all the walk visits. */
static void qgpu_submit_collect_slots(struct qgpu_submit *s)
{
	u32 i;

	for (i = 0; i < s->args->num_patches; i++) {
		u32 slot = s->pe[i].slot;

		if (!s->mark[slot]) {
			s->mark[slot] = 1;
			s->slots[s->nslots++] = slot;
		}
	}
	sort(s->slots, s->nslots, sizeof(*s->slots), qgpu_cmp_u32, NULL);
	for (i = 0; i < s->nslots; i++)
		s->mark[s->slots[i]] = 0;
}

/*
 * The submission's arrays, zeroed, in one allocation: they were ten
 * allocations and ten frees before, a measurable part of a small
 * submission's latency (README, "Benchmarks"). The counts are bounded by
 * the caller's checks.
 */
static int qgpu_submit_alloc_arrays(struct qgpu_submit *s)
{
	size_t na = s->args->num_allocs + 1, np = s->args->num_patches + 1;
	size_t nslots = s->qdev->max_slots, off = 0;
	size_t o_ae, o_bos, o_pe, o_table, o_devslot, o_mark, o_undo;
	size_t o_slots, o_unbind, o_pinned;
	u8 *p;

	o_ae = qgpu_submit_carve(&off, na, sizeof(*s->ae));
	o_bos = qgpu_submit_carve(&off, na, sizeof(*s->bos));
	o_pe = qgpu_submit_carve(&off, np, sizeof(*s->pe));
	o_table = qgpu_submit_carve(&off, nslots, sizeof(*s->table));
	o_devslot = qgpu_submit_carve(&off, nslots, sizeof(*s->devslot));
	o_mark = qgpu_submit_carve(&off, nslots, sizeof(*s->mark));
	o_undo = qgpu_submit_carve(&off, np, sizeof(*s->undo));
	o_slots = qgpu_submit_carve(&off, np, sizeof(*s->slots));
	o_unbind = qgpu_submit_carve(&off, np, sizeof(*s->unbind));
	o_pinned = qgpu_submit_carve(&off, na, sizeof(*s->pinned));
	p = kvzalloc(off, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	s->arrays = p;
	s->ae = (void *)(p + o_ae);
	s->bos = (void *)(p + o_bos);
	s->pe = (void *)(p + o_pe);
	s->table = (void *)(p + o_table);
	s->devslot = (void *)(p + o_devslot);
	s->mark = (void *)(p + o_mark);
	s->undo = (void *)(p + o_undo);
	s->slots = (void *)(p + o_slots);
	s->unbind = (void *)(p + o_unbind);
	s->pinned = (void *)(p + o_pinned);
	return 0;
}

static int qgpu_submit_copy(struct qgpu_submit *s)
{
	struct drm_qgpu_submit *a = s->args;
	struct qgpu_device *qdev = s->qdev;
	u32 i, prev_split = 0, prev_patch = 0, splits = 0;
	int ret;

	if (a->dma_size < 4 || a->dma_size > QGPU_MAX_DMA_SIZE ||
	    a->dma_size % 4 || a->num_allocs > QGPU_MAX_ALLOCS ||
	    a->num_patches > QGPU_MAX_PATCHES ||
	    a->num_in_syncs > QGPU_MAX_SYNCS ||
	    a->num_out_syncs > QGPU_MAX_SYNCS || a->num_patches > a->dma_size / 4) {
		drm_dbg(&qdev->drm, "submit: bad size or count\n");
		return -EINVAL;
	}

	ret = qgpu_dmabuf_copy(qdev, s->qf->usage, a->dma, a->dma_size,
			       &s->buf);
	if (ret)
		return ret;
	s->dw = s->buf->cpu;

	ret = qgpu_submit_alloc_arrays(s);
	if (ret)
		return ret;
	if (copy_from_user(s->ae, u64_to_user_ptr(a->allocs),
			   a->num_allocs * sizeof(*s->ae)) ||
	    copy_from_user(s->pe, u64_to_user_ptr(a->patches),
			   a->num_patches * sizeof(*s->pe)))
		return -EFAULT;

	for (i = 0; i < a->num_allocs; i++) {
		if (s->ae[i].flags & ~QGPU_ALLOC_WRITE) {
			drm_dbg(&qdev->drm, "submit: allocation %u flags\n", i);
			return -EINVAL;
		}
		if (!s->ae[i].handle)
			continue;
		s->bos[i] = qgpu_bo_lookup(s->file, s->ae[i].handle);
		if (!s->bos[i]) {
			drm_dbg(&qdev->drm, "submit: allocation %u handle %u\n",
				i, s->ae[i].handle);
			return -ENOENT;
		}
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
		    (i && pe->patch_offset <= prev_patch)) {
			drm_dbg(&qdev->drm, "submit: patch entry %u\n", i);
			return -EINVAL;
		}
		if (i && pe->split_offset != prev_split &&
		    ++splits >= QGPU_MAX_SPLIT_POINTS) {
			drm_dbg(&qdev->drm, "more than %u split points\n",
				QGPU_MAX_SPLIT_POINTS);
			return -E2BIG;
		}
		prev_split = pe->split_offset;
		prev_patch = pe->patch_offset;
		bo = s->bos[pe->alloc_index];
		if ((bo && (pe->alloc_offset >= bo->base.size ||
			    pe->alloc_offset % 4)) || (!bo && pe->alloc_offset)) {
			drm_dbg(&qdev->drm, "submit: patch entry %u offset\n",
				i);
			return -EINVAL;
		}
	}
	qgpu_submit_collect_slots(s);
	return qgpu_submit_parse(s);
}

static void qgpu_submit_unpin_all(struct qgpu_submit *s)
{
	u32 i;

	for (i = 0; i < s->npinned; i++)
		s->pinned[i]->pin_count--;
	s->npinned = 0;
}

/* Only the walk pins, under mm_lock: a pinned allocation is in our list. */
static void qgpu_submit_pin(struct qgpu_submit *s, struct qgpu_bo *bo)
{
	lockdep_assert_held(&s->qdev->mm_lock);
	if (bo->pin_count)
		return;
	bo->pin_count++;
	s->pinned[s->npinned++] = bo;
}

static struct qgpu_bo *qgpu_submit_bo(struct qgpu_submit *s, u32 i)
{
	return s->bos[s->pe[i].alloc_index];
}

/* Device commands that start a portion: an empty slot table for the first,
 * the stale slots unbound for the others.
 */
static u32 qgpu_submit_prologue(struct qgpu_submit *s, u32 *cmds)
{
	u32 i, n = 0;

	/*
	 * A context's first DMA buffer starts from a clean slot table and
	 * fault state (CTX_CLEAR); later ones only unbind every slot, so that
	 * a context the device marked faulted stays dead until the driver has
	 * seen the fault, even when its next submit is on the ring already.
	 */
	if (!s->portions && !s->ctx->cleared)
		return qgpu_ctx_enc_first(s->ctx, cmds);
	if (!s->portions)
		return qgpu_enc_ctx_unbind(cmds, s->ctx->id, 0,
					   s->qdev->max_slots);
	for (i = 0; i < s->nunbind; i++) {
		u32 first = s->unbind[i], count = 1;

		while (i + 1 < s->nunbind && s->unbind[i + 1] == first + count) {
			count++;
			i++;
		}
		n += qgpu_enc_ctx_unbind(cmds ? cmds + n : NULL, s->ctx->id,
					 first, count);
	}
	return n;
}

/*
 * Implicit synchronisation through the allocations' reservation objects:
 * a portion that writes an allocation waits for all of its work, one that
 * only reads it waits for its writers (and moves); the portion's fence
 * goes in with write or read usage. Only while the fences are added are
 * the pinned allocations' reservation objects locked, all together
 * (drm_exec), under mm_lock; nothing is moved or waited for then.
 */
static int qgpu_submit_lock_resvs(struct qgpu_submit *s,
				  struct drm_exec *exec)
{
	u32 i;
	int ret = 0;

	drm_exec_until_all_locked(exec) {
		for (i = 0; i < s->npinned; i++) {
			ret = drm_exec_prepare_obj(exec, &s->pinned[i]->base, 1);
			drm_exec_retry_on_contention(exec);
			if (ret)
				break;
		}
	}
	return ret;
}

static int qgpu_submit_resv_deps(struct qgpu_submit *s, struct qgpu_job *job)
{
	u32 i;
	int ret = 0;

	for (i = 0; !ret && i < s->npinned; i++) {
		struct qgpu_bo *bo = s->pinned[i];

		ret = drm_sched_job_add_resv_dependencies(&job->base,
							  bo->base.resv,
							  dma_resv_usage_rw(bo->submit_write));
	}
	return ret;
}

/*
 * Queue the portion [start, end) of the DMA buffer on the context; the
 * @last one also writes the submission's monitored fence values.
 */
static int qgpu_submit_portion(struct qgpu_submit *s, u32 start, u32 end,
			       bool last)
{
	struct qgpu_device *qdev = s->qdev;
	struct qgpu_job *job;
	u64 addr = QGPU_SYS_BIT | s->buf->dma;
	struct dma_fence *done;
	struct drm_exec exec;
	u32 i, n;
	int ret;

	if (s->dry) {
		s->portions++;
		return 0;
	}
	n = qgpu_submit_prologue(s, NULL);
	if (last)
		n += qgpu_mfence_sigs_emit(s->sigs, NULL);
	job = qgpu_job_alloc(&qdev->engine[QGPU_ENGINE_RENDER],
			     n + qgpu_enc_exec(NULL, 0, 0, 0, 0));
	if (!job)
		return -ENOMEM;
	ret = drm_sched_job_init(&job->base, &s->ctx->entity,
				 qgpu_job_credits(job), s->qf,
				 s->file->client_id);
	if (ret) {
		qgpu_job_free(job);
		return ret;
	}
	kref_get(&s->ctx->ref);
	job->ctx = s->ctx;
	kref_get(&s->buf->ref);
	job->release = qgpu_dmabuf_put;
	job->release_data = s->buf;

	drm_exec_init(&exec, 0, s->npinned);
	ret = qgpu_submit_lock_resvs(s, &exec);
	if (!ret)
		ret = qgpu_submit_resv_deps(s, job);
	for (i = 0; !ret && !s->portions && i < s->in.n; i++)
		ret = qgpu_job_add_dep(job, s->in.fence[i]);
	if (ret) {
		drm_exec_fini(&exec);
		qgpu_job_free(job);
		return ret;
	}
	job->ctx_first = !s->ctx->cleared;
	n = qgpu_submit_prologue(s, job->cmds);
	n += qgpu_enc_exec(job->cmds + n, s->ctx->id, addr, start, end);
	if (last) {
		n += qgpu_mfence_sigs_emit(s->sigs, job->cmds + n);
		qgpu_mfence_sigs_queued(s->sigs);
		job->sigs = s->sigs;
		s->sigs = NULL;
	}
	job->ndw = n;

	done = qgpu_job_push(job, &s->ctx->entity);
	for (i = 0; i < s->npinned; i++) {
		struct qgpu_bo *bo = s->pinned[i];

		dma_resv_add_fence(bo->base.resv, done, bo->submit_write ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
		trace_qgpu_portion_use(s->seq, s->portions, bo->id,
				       bo->submit_write);
		qgpu_mm_touch(bo);
	}
	drm_exec_fini(&exec);
	qgpu_ctx_queued(s->ctx, done);
	trace_qgpu_split_portion(s->ctx->id, s->portions, start, end, s->seq,
				 s->npinned);
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
	struct qgpu_bo *bo = qgpu_submit_bo(s, i);
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
 * The portion before split offset @x is queued; entries from @i0 on (those
 * reprogramming slots at @x, and everything after) are still to be placed.
 * Decide what the next portion may rely on:
 *  - the resource table at @x: allocations of slots not reprogrammed at @x
 *    stay where they are ("Splitting a DMA Buffer");
 *  - allocations whose BINDs are patched already but lie at or after @x
 *    stay where their BINDs say;
 *  - every other slot the device has bound is unbound when the portion
 *    starts, so that a stale use faults instead of reaching memory that
 *    may be handed to somebody else.
 */
static void qgpu_submit_split_state(struct qgpu_submit *s, u32 i0, u32 x)
{
	u32 n = s->args->num_patches, j, k;

	/* the device ran every BIND before @x */
	for (; s->ran < n && s->pe[s->ran].patch_offset < x; s->ran++)
		s->devslot[s->pe[s->ran].slot] = qgpu_submit_bo(s, s->ran);

	qgpu_submit_unpin_all(s);
	s->gen++;
	for (j = i0; j < n && s->pe[j].split_offset == x; j++)
		s->mark[s->pe[j].slot] = s->gen;
	for (k = 0; k < s->nslots; k++) {
		u32 slot = s->slots[k];

		if (s->table[slot] && s->mark[slot] != s->gen)
			qgpu_submit_pin(s, s->table[slot]);
	}
	for (j = s->ran; j < i0; j++)
		if (qgpu_submit_bo(s, j))
			qgpu_submit_pin(s, qgpu_submit_bo(s, j));

	s->nunbind = 0;
	for (k = 0; k < s->nslots; k++) {
		u32 slot = s->slots[k];
		struct qgpu_bo *bo = s->devslot[slot];

		if (bo && !bo->pin_count) {
			s->unbind[s->nunbind++] = slot;
			s->devslot[slot] = NULL;
		}
	}
}

/* Allocation-list indices by allocation, then by index */
static int qgpu_cmp_same_bo(const void *a, const void *b, const void *priv)
{
	struct qgpu_bo * const *bos = priv;
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	if (bos[x] != bos[y])
		return (uintptr_t)bos[x] < (uintptr_t)bos[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * "The same allocation may be listed more than once": every index of the
 * list names, in @canon, the lowest index of the same allocation, so that
 * the split check counts each allocation once. @ord: scratch.
 */
static void qgpu_submit_canon(struct qgpu_submit *s, u32 *ord, u32 *canon)
{
	u32 n = s->args->num_allocs, i;

	for (i = 0; i < n; i++)
		ord[i] = i;
	sort_r(ord, n, sizeof(*ord), qgpu_cmp_same_bo, NULL, s->bos);
	for (i = 0; i < n; i++)
		canon[ord[i]] = i && s->bos[ord[i]] == s->bos[ord[i - 1]] ?
				canon[ord[i - 1]] : ord[i];
}

static int qgpu_submit_precheck(struct qgpu_submit *s)
{
	struct qgpu_device *qdev = s->qdev;
	struct drm_qgpu_submit *a = s->args;
	unsigned long long cap[QGPU_SEG_MAX + 1] = {};
	struct qgpu_split_entry *e;
	struct qgpu_split_alloc *al;
	size_t off = 0, o_al, o_table, o_refs, o_ord, o_canon;
	unsigned int *refs;
	int *table, bad;
	u32 *ord, *canon;
	u8 *p;
	u32 i;

	for (i = QGPU_SEG_VISIBLE; i <= QGPU_SEG_MAX; i++)
		if (qgpu_mm_seg_present(qdev, i))
			cap[i] = qdev->seg[i].size - qdev->seg[i].reserved;
	/* one allocation (see qgpu_submit_alloc_arrays()) */
	qgpu_submit_carve(&off, a->num_patches + 1, sizeof(*e));
	o_al = qgpu_submit_carve(&off, a->num_allocs + 1, sizeof(*al));
	o_table = qgpu_submit_carve(&off, qdev->max_slots, sizeof(*table));
	o_refs = qgpu_submit_carve(&off, a->num_allocs + 1, sizeof(*refs));
	o_ord = qgpu_submit_carve(&off, a->num_allocs + 1, sizeof(*ord));
	o_canon = qgpu_submit_carve(&off, a->num_allocs + 1, sizeof(*canon));
	p = kvmalloc(off, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	e = (void *)p;
	al = (void *)(p + o_al);
	table = (void *)(p + o_table);
	refs = (void *)(p + o_refs);
	ord = (void *)(p + o_ord);
	canon = (void *)(p + o_canon);
	qgpu_submit_canon(s, ord, canon);
	for (i = 0; i < a->num_allocs; i++) {
		al[i].size = s->bos[i] ? s->bos[i]->base.size : 0;
		al[i].mask = s->bos[i] ? s->bos[i]->segment_mask : 0;
	}
	for (i = 0; i < a->num_patches; i++) {
		e[i].alloc = s->bos[s->pe[i].alloc_index] ?
			     (int)canon[s->pe[i].alloc_index] : -1;
		e[i].slot = s->pe[i].slot;
		e[i].split_offset = s->pe[i].split_offset;
	}
	bad = qgpu_split_check(e, a->num_patches, al, a->num_allocs, cap,
			       QGPU_SEG_MAX + 1, table, qdev->max_slots, refs);
	kvfree(p);
	return bad == -1 ? 0 : -ENOSPC;
}

struct qgpu_group_bo {
	struct qgpu_bo *bo;
	u32 nsegs;
};

/* Most constrained first: fewest segments, then largest. */
static int qgpu_cmp_group(const void *a, const void *b)
{
	const struct qgpu_group_bo *x = a, *y = b;

	if (x->nsegs != y->nsegs)
		return x->nsegs < y->nsegs ? -1 : 1;
	if (x->bo->base.size != y->bo->base.size)
		return x->bo->base.size > y->bo->base.size ? -1 : 1;
	return 0;
}

/*
 * Place the allocations of one split point (entries @i .. while their
 * SplitOffset is the same) before patching any of them, most constrained
 * first, so that the order of the list does not decide whether they fit.
 * Stops at the first that does not fit (-ENOSPC); called again, it goes
 * on from there (those placed stay where they are).
 */
static int qgpu_submit_place_group(struct qgpu_submit *s, u32 i)
{
	u32 n = s->args->num_patches, split = s->pe[i].split_offset, j, k = 0;
	struct qgpu_group_bo *g;
	int ret = 0;

	for (j = i; j < n && s->pe[j].split_offset == split; j++)
		k++;
	if (k < 2)
		return 0;
	g = kvmalloc_array(k, sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	for (k = 0, j = i; j < n && s->pe[j].split_offset == split; j++) {
		struct qgpu_bo *bo = qgpu_submit_bo(s, j);

		if (!bo)
			continue;
		g[k].bo = bo;
		g[k].nsegs = hweight32(bo->segment_mask);
		k++;
	}
	sort(g, k, sizeof(*g), qgpu_cmp_group, NULL);
	for (j = 0; j < k && !ret; j++) {
		ret = qgpu_mm_use_resident(g[j].bo);
		if (!ret && g[j].bo->seg != QGPU_SEG_SYSTEM)
			qgpu_submit_pin(s, g[j].bo);
	}
	kvfree(g);
	return ret;
}

/*
 * The walk's books for qgpu_submit_split_frees(), O(entries + allocations)
 * once per walk: each allocation's last entry, nothing folded yet.
 */
static void qgpu_submit_walk_books(struct qgpu_submit *s)
{
	u32 i;

	s->walk_id = atomic64_inc_return(&qgpu_walk_ids);
	for (i = 0; i < s->args->num_allocs; i++) {
		struct qgpu_bo *bo = s->bos[i];

		if (bo) {
			bo->walk_id = s->walk_id;
			bo->walk_last = 0;
			bo->walk_seen = 0;
			bo->walk_slot = 0;
		}
	}
	for (i = 0; i < s->args->num_patches; i++)
		if (qgpu_submit_bo(s, i))
			qgpu_submit_bo(s, i)->walk_last = i + 1;
	s->fold = 0;
	s->fr_valid = false;
}

/* Books of the split point of entry @i (its first entry @i0) */
static void qgpu_submit_split_books(struct qgpu_submit *s, u32 i0, u32 x,
				    u32 start)
{
	u32 n = s->args->num_patches, ran, j, k;

	/* from where an earlier split point's search ended, if it holds */
	ran = s->fr_valid && s->fr_sran == s->ran && s->fr_x <= x ?
	      s->future.keep_ran : s->ran;
	while (ran < n && s->pe[ran].patch_offset < x)
		ran++;
	/* slots not reprogrammed at x keep what they hold */
	s->gen++;
	for (j = i0; j < n && s->pe[j].split_offset == x; j++)
		s->mark[s->pe[j].slot] = s->gen;
	s->future.keep_slot = atomic64_inc_return(&qgpu_walk_ids);
	for (k = 0; k < s->nslots; k++) {
		struct qgpu_bo *bo = s->table[s->slots[k]];

		if (bo && s->mark[s->slots[k]] != s->gen)
			bo->walk_slot = s->future.keep_slot;
	}
	/* the last entry before x of each allocation */
	if (i0 < s->fold) {
		for (j = 0; j < s->fold; j++)
			if (qgpu_submit_bo(s, j))
				qgpu_submit_bo(s, j)->walk_seen = 0;
		s->fold = 0;
	}
	for (; s->fold < i0; s->fold++)
		if (qgpu_submit_bo(s, s->fold))
			qgpu_submit_bo(s, s->fold)->walk_seen = s->fold + 1;
	s->fr_valid = true;
	s->fr_x = x;
	s->fr_start = start;
	s->fr_sran = s->ran;
	s->future.keep_i0 = i0;
	s->future.keep_ran = ran;
	s->fr_checked = 0;
	s->fr_unkept = 0;
}

/*
 * Split early: would a split at entry @i's split point (the current
 * portion starts at @start) release an allocation pinned for the current
 * portion that the entries from that split point on do not use?
 *
 * Every entry of the walk asks, so the answer costs O(1) per entry and
 * pinned allocation: the books are made once per split point (and again
 * after a split), the pinned allocations are looked at once each while
 * they stay (the list only grows until a split empties it).
 */
static bool qgpu_submit_split_frees(struct qgpu_submit *s, u32 i, u32 start)
{
	u32 x = s->pe[i].split_offset, i0 = i;

	if (x <= start)
		return false;
	if (!s->fr_valid || s->fr_x != x || s->fr_start != start ||
	    s->fr_sran != s->ran) {
		while (i0 && s->pe[i0 - 1].split_offset == x)
			i0--;
		qgpu_submit_split_books(s, i0, x, start);
	}
	if (s->npinned < s->fr_checked) {
		s->fr_checked = 0;
		s->fr_unkept = 0;
	}
	for (; s->fr_checked < s->npinned; s->fr_checked++)
		if (!qgpu_future_keeps(&s->future,
				       s->pinned[s->fr_checked]))
			s->fr_unkept++;
	return s->fr_unkept;
}

static int qgpu_submit_place_one(struct qgpu_submit *s, u32 i, bool group)
{
	return group ? qgpu_submit_place_group(s, i) :
		       qgpu_mm_use_resident(qgpu_submit_bo(s, i));
}

/*
 * Make entry @i's allocation resident, or with @group the allocations of
 * its split point (qgpu_submit_place_group()). Eviction takes only
 * allocations that the rest of the DMA buffer does not use
 * (&qgpu_future.spare) while it can; evicting one that it uses later would
 * page it back in before the buffer ends.
 *
 * Split by choice: when a split at this entry's split point would release
 * allocations of the current portion that the buffer no longer needs,
 * those are candidates too, described as used just now, and when the
 * victim policy picks one of them the walk splits here instead of evicting
 * (return 1): a split pages nothing, and after it they may go as any other
 * allocation (&qgpu_future.release). When nothing else makes room either,
 * the walk splits too. Otherwise (nothing to release) anything unpinned may
 * go at last, in the victim policy's order.
 * Return: 0, 1, or a negative errno (-ENOSPC: no room even so).
 */
static int qgpu_submit_place(struct qgpu_submit *s, u32 i, u32 start,
			     bool group)
{
	int ret;

	if (qgpu_submit_split_frees(s, i, start)) {
		/* the victim scan asks qgpu_future_keeps() of each pinned one */
		s->future.spare = true;
		s->future.release = true;
		ret = qgpu_submit_place_one(s, i, group);
		s->future.release = false;
		s->future.spare = false;
		return ret == -EAGAIN || ret == -ENOSPC ? 1 : ret;
	}
	s->future.spare = true;
	ret = qgpu_submit_place_one(s, i, group);
	s->future.spare = false;
	if (ret != -ENOSPC)
		return ret;
	return qgpu_submit_place_one(s, i, group);
}

/*
 * The walk of "Splitting a DMA Buffer". Called with mm_lock held; nobody
 * else pins allocations meanwhile, so everything this submission has not
 * pinned may be evicted.
 */
static int qgpu_submit_walk(struct qgpu_submit *s)
{
	struct drm_qgpu_submit *a = s->args;
	u32 i = 0, start = 0, n = a->num_patches;
	int ret;

	qgpu_submit_walk_books(s);
	while (i < n) {
		struct drm_qgpu_patch_entry *pe = &s->pe[i];
		struct qgpu_bo *bo = qgpu_submit_bo(s, i);

		cond_resched();
		s->future.pos = i;
		ret = 0;
		if (!i || pe->split_offset != s->pe[i - 1].split_offset) {
			ret = qgpu_submit_place(s, i, start, true);
			if (ret == -ENOSPC)
				ret = 0;	/* the entries find which one */
			if (ret < 0)
				return ret;
		}
		if (bo && !ret)
			ret = qgpu_submit_place(s, i, start, false);
		if (ret == 1 || (ret == -ENOSPC && pe->split_offset > start)) {
			u32 x = pe->split_offset;

			/* split: run what precedes this split point */
			ret = qgpu_submit_portion(s, start, x, false);
			if (ret)
				return ret;
			start = x;
			/* entries reprogramming slots at x: placed anew */
			while (i && s->pe[i - 1].split_offset == x) {
				i--;
				s->table[s->pe[i].slot] = s->undo[i];
			}
			qgpu_submit_split_state(s, i, x);
			continue;
		}
		if (ret)
			return ret;
		if (bo) {
			if (bo->seg == QGPU_SEG_SYSTEM)
				return -EBUSY;
			qgpu_submit_pin(s, bo);
			/* the GPU may write it, whatever the flags say */
			if (!s->dry)
				bo->pristine = false;
		}
		s->undo[i] = s->table[pe->slot];
		s->table[pe->slot] = bo;
		qgpu_submit_patch(s, i);
		i++;
	}
	return qgpu_submit_portion(s, start, a->dma_size, true);
}

/* Back to the state before the walk: nothing placed, nothing patched. */
static void qgpu_submit_walk_reset(struct qgpu_submit *s)
{
	u32 k;

	qgpu_submit_unpin_all(s);
	for (k = 0; k < s->nslots; k++) {
		s->table[s->slots[k]] = NULL;
		s->devslot[s->slots[k]] = NULL;
	}
	s->ran = 0;
	s->nunbind = 0;
	s->portions = 0;
}

/*
 * Plan the whole walk before anything is queued: a dry run that changes
 * only the books, a rollback, then the walk for real following the dry
 * run's decisions. A walk that cannot be completed fails in the dry run,
 * so an error such as ENOSPC means that nothing ran and nothing changed.
 */
/* Which allocations this submit writes (QGPU_ALLOC_WRITE on any entry). */
static void qgpu_submit_mark_writes(struct qgpu_submit *s)
{
	u32 i;

	for (i = 0; i < s->args->num_allocs; i++)
		if (s->bos[i])
			s->bos[i]->submit_write = false;
	for (i = 0; i < s->args->num_allocs; i++)
		if (s->bos[i] && s->ae[i].flags & QGPU_ALLOC_WRITE)
			s->bos[i]->submit_write = true;
}

/* What the walk is given, for qgpu-trace (docs/trace-format.md) */
static void qgpu_submit_trace(struct qgpu_submit *s)
{
	struct drm_qgpu_submit *a = s->args;
	u32 i;

	s->seq = atomic64_inc_return(&s->qdev->submit_seq);
	trace_qgpu_submit_begin(s->seq, s->ctx->id, a->num_allocs,
				a->num_patches, a->dma_size);
	if (!trace_qgpu_submit_entry_enabled())
		return;
	for (i = 0; i < a->num_patches; i++) {
		const struct drm_qgpu_patch_entry *pe = &s->pe[i];
		struct qgpu_bo *bo = s->bos[pe->alloc_index];

		trace_qgpu_submit_entry(s->seq, i, bo ? bo->id : 0, pe->slot,
					pe->split_offset, pe->patch_offset,
					s->ae[pe->alloc_index].flags &
					QGPU_ALLOC_WRITE, pe->alloc_index);
	}
}

/* OfferAllocations: a DMA buffer may not use an offered allocation */
static int qgpu_submit_offered(struct qgpu_submit *s)
{
	u32 i;

	for (i = 0; i < s->args->num_allocs; i++)
		if (s->bos[i] && s->bos[i]->offered) {
			drm_dbg(&s->qdev->drm, "submit: allocation %u offered\n",
				i);
			return -EINVAL;
		}
	return 0;
}

static int qgpu_submit_plan_and_walk(struct qgpu_submit *s)
{
	struct qgpu_device *qdev = s->qdev;
	struct qgpu_plan plan;
	int ret;

	lockdep_assert_held(&qdev->mm_lock);
	qgpu_submit_trace(s);
	ret = qgpu_submit_offered(s);
	if (ret)
		return ret;
	qgpu_submit_mark_writes(s);
	/* the patch-location list is a known future (future-use policy) */
	s->future.bos = s->bos;
	s->future.pe = s->pe;
	s->future.n = s->args->num_patches;
	s->future.pos = 0;
	qdev->future = &s->future;
	qgpu_plan_begin(qdev, &plan);
	s->dry = true;
	ret = qgpu_submit_walk(s);
	qgpu_submit_walk_reset(s);
	qgpu_plan_rollback(qdev);
	s->dry = false;
	if (!ret) {
		qgpu_plan_replay_start(qdev);
		ret = qgpu_submit_walk(s);
		qgpu_submit_unpin_all(s);
	}
	qgpu_plan_end(qdev);
	qdev->future = NULL;
	return ret;
}

static void qgpu_submit_cleanup(struct qgpu_submit *s)
{
	u32 i;

	if (s->bos)
		for (i = 0; i < s->args->num_allocs; i++)
			if (s->bos[i])
				drm_gem_object_put(&s->bos[i]->base);
	qgpu_in_syncs_put(&s->in);
	qgpu_mfence_sigs_free(s->sigs);
	if (s->buf)
		qgpu_dmabuf_put(s->buf);
	dma_fence_put(s->last);
	kvfree(s->arrays);
}

int qgpu_submit_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_submit *args = data;
	struct qgpu_out_syncs out = {};
	struct qgpu_submit s = {
		.qdev = qdev, .qf = file->driver_priv, .file = file,
		.args = args,
	};
	int ret;

	if (args->flags)
		return -EINVAL;
	args->portions = 0;
	args->fence_value = 0;
	s.ctx = qgpu_ctx_lookup(s.qf, args->ctx);
	if (!s.ctx) {
		drm_dbg(drm, "submit: no context %u\n", args->ctx);
		return -ENOENT;
	}
	if (qgpu_ctx_is_lost(s.ctx)) {
		ret = -ECANCELED;
		goto out_ctx;
	}
	if (s.ctx->vm) {
		ret = qgpu_submit_virtual(qdev, file, s.ctx, args);
		goto out_ctx;
	}
	ret = qgpu_submit_copy(&s);
	if (!ret)
		ret = qgpu_in_syncs_get(qdev, file, args->in_syncs,
					args->num_in_syncs, &s.in);
	if (!ret)
		ret = qgpu_out_syncs_get(qdev, file, args->out_syncs,
					 args->num_out_syncs, &out);
	if (!ret)
		ret = qgpu_submit_precheck(&s);
	if (ret)
		goto out;

	ret = qgpu_ctx_begin_submit(s.ctx);
	if (ret)
		goto out;
	/* under the context's submit_lock: its values are queued in order */
	ret = qgpu_out_sync_next(qdev, &out, s.ctx->mfence, &args->fence_value);
	if (ret) {
		qgpu_ctx_end_submit(s.ctx);
		goto out;
	}
	s.sigs = out.sigs;
	out.sigs = NULL;
	qgpu_mm_lock(qdev, s.qf);
	ret = qgpu_submit_plan_and_walk(&s);
	trace_qgpu_submit_end(s.seq, ret, s.portions);
	qgpu_mm_unlock(qdev);
	qgpu_ctx_end_submit(s.ctx);
	if (s.sigs)
		args->fence_value = 0;	/* the last portion was not queued */
	if (!s.portions)
		goto out;

	/*
	 * Portions were queued: the out-syncobjs get the last one's fence,
	 * unless the rest could not be (the error says so; they are left as
	 * they were, not made to say that the whole buffer is done).
	 */
	if (!ret)
		qgpu_out_syncs_signal(&out, s.last);
	args->portions = s.portions;
	qgpu_stat_add(qdev, s.qf, QGPU_STAT(submissions), 1);
	atomic64_inc(&s.ctx->submissions);
out:
	trace_qgpu_submit(args->ctx, args->dma_size, args->num_allocs,
			  args->num_patches, s.portions, ret);
	qgpu_out_syncs_put(&out);
	qgpu_submit_cleanup(&s);
out_ctx:
	qgpu_ctx_put(s.ctx);
	return ret;
}
