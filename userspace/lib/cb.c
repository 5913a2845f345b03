// SPDX-License-Identifier: MIT
/*
 * libqgpu: the DMA-buffer builder (command stream, allocation list,
 * patch-location list with split points) and submission.
 */
#include <stdlib.h>
#include <string.h>

#include "qgpu_priv.h"

#define QGPU_CB_NO_SPLIT	0xffffffffu

int qgpu_cb_init(struct qgpu_cb *cb, uint32_t max_slots)
{
	memset(cb, 0, sizeof(*cb));
	if (!max_slots)
		return -EINVAL;
	cb->slots = calloc(max_slots, sizeof(*cb->slots));
	if (!cb->slots)
		return -ENOMEM;
	cb->max_slots = max_slots;
	return 0;
}

void qgpu_cb_reset(struct qgpu_cb *cb)
{
	cb->ndw = 0;
	cb->nallocs = 0;
	cb->npatches = 0;
	cb->split = 0;
	cb->run = 0;
	cb->in_bind_run = false;
	cb->error = 0;
	if (cb->slots)
		memset(cb->slots, 0, cb->max_slots * sizeof(*cb->slots));
}

void qgpu_cb_fini(struct qgpu_cb *cb)
{
	free(cb->dw);
	free(cb->allocs);
	free(cb->patches);
	free(cb->slots);
	memset(cb, 0, sizeof(*cb));
}

static int qgpu_cb_fail(struct qgpu_cb *cb, int err)
{
	if (!cb->error)
		cb->error = err;
	errno = -err;
	return err;
}

/* Room for n more dwords; returns a pointer to them or NULL (sticky error). */
static uint32_t *qgpu_cb_reserve(struct qgpu_cb *cb, uint32_t n)
{
	uint32_t *p;
	int ret;

	if (cb->error)
		return NULL;
	if (cb->ndw + n < cb->ndw) {
		qgpu_cb_fail(cb, -E2BIG);
		return NULL;
	}
	ret = qgpu_grow_array((void **)&cb->dw, &cb->cap_dw, cb->ndw + n,
			sizeof(uint32_t));
	if (ret) {
		qgpu_cb_fail(cb, ret);
		return NULL;
	}
	p = cb->dw + cb->ndw;
	cb->ndw += n;
	return p;
}

/* A non-BIND command: the binding change (if any) is over. */
static uint32_t *qgpu_cb_cmd(struct qgpu_cb *cb, uint32_t op, uint32_t len)
{
	uint32_t *p = qgpu_cb_reserve(cb, len);

	if (!p)
		return NULL;
	p[0] = QGPU_CMD_HDR(op, 0, len);
	cb->in_bind_run = false;
	return p;
}

/* A DMA-buffer command of the length the one table gives it. */
static uint32_t *qgpu_cb_fixed(struct qgpu_cb *cb, uint32_t op)
{
	return qgpu_cb_cmd(cb, op, qgpu_dma_cmd_len(op));
}

int qgpu_cb_emit_raw(struct qgpu_cb *cb, const uint32_t *dw, uint32_t n)
{
	uint32_t *p = qgpu_cb_reserve(cb, n);

	if (!p)
		return cb->error;
	memcpy(p, dw, (size_t)n * 4);
	cb->in_bind_run = false;
	return 0;
}

/* Index of @handle in the allocation list, adding it if new. */
static int qgpu_cb_alloc_index(struct qgpu_cb *cb, uint32_t handle,
			       uint32_t flags)
{
	uint32_t i;
	int ret;

	for (i = 0; i < cb->nallocs; i++) {
		if (cb->allocs[i].handle == handle) {
			cb->allocs[i].flags |= flags;
			return (int)i;
		}
	}
	if (cb->nallocs >= QGPU_MAX_ALLOCS)
		return -E2BIG;
	ret = qgpu_grow_array((void **)&cb->allocs, &cb->cap_allocs,
			cb->nallocs + 1, sizeof(*cb->allocs));
	if (ret)
		return ret;
	cb->allocs[cb->nallocs].handle = handle;
	cb->allocs[cb->nallocs].flags = flags;
	return (int)cb->nallocs++;
}

static int qgpu_cb_bind_common(struct qgpu_cb *cb, uint32_t slot,
			       uint32_t handle, uint64_t offset,
			       uint64_t size, uint32_t flags)
{
	struct drm_qgpu_patch_entry *pe;
	uint32_t at, *p;
	int idx, ret;

	if (cb->error)
		return cb->error;
	if (slot >= cb->max_slots || offset % 4 || (!handle && offset) ||
	    flags & ~QGPU_ALLOC_WRITE)
		return qgpu_cb_fail(cb, -EINVAL);
	if (cb->npatches >= QGPU_MAX_PATCHES)
		return qgpu_cb_fail(cb, -E2BIG);
	idx = qgpu_cb_alloc_index(cb, handle, handle ? flags : 0);
	if (idx < 0)
		return qgpu_cb_fail(cb, idx);
	ret = qgpu_grow_array((void **)&cb->patches, &cb->cap_patches,
			cb->npatches + 1, sizeof(*cb->patches));
	if (ret)
		return qgpu_cb_fail(cb, ret);

	at = qgpu_cb_offset(cb);
	/* A run of consecutive BINDs is one binding change: one split point. */
	if (!cb->in_bind_run) {
		cb->split = at;
		cb->run++;
	}
	p = qgpu_cb_reserve(cb, qgpu_dma_cmd_len(QGPU_DMA_BIND));
	if (!p)
		return cb->error;
	p[0] = QGPU_CMD_HDR(QGPU_DMA_BIND, 0, qgpu_dma_cmd_len(QGPU_DMA_BIND));
	p[1] = slot;			/* the kernel writes it from the entry */
	p[2] = (uint32_t)offset;	/* address: patched by the kernel */
	p[3] = (uint32_t)(offset >> 32);
	p[4] = (uint32_t)size;		/* clamped by the kernel */
	p[5] = (uint32_t)(size >> 32);
	cb->in_bind_run = true;

	pe = &cb->patches[cb->npatches++];
	memset(pe, 0, sizeof(*pe));
	pe->alloc_index = (uint32_t)idx;
	pe->slot = slot;
	pe->alloc_offset = offset;
	pe->patch_offset = at + QGPU_DMA_BIND_ADDR_DW * 4;
	pe->split_offset = cb->split;

	cb->slots[slot].handle = handle;
	cb->slots[slot].flags = handle ? flags : 0;
	cb->slots[slot].offset = offset;
	cb->slots[slot].size = handle ? size : 0;
	cb->slots[slot].run = cb->run;
	return (int)at;
}

int qgpu_cb_bind_flags(struct qgpu_cb *cb, uint32_t slot, uint32_t handle,
		       uint64_t offset, uint64_t size, uint32_t flags)
{
	if (!handle)
		return qgpu_cb_fail(cb, -EINVAL);
	return qgpu_cb_bind_common(cb, slot, handle, offset, size, flags);
}

int qgpu_cb_bind(struct qgpu_cb *cb, uint32_t slot, uint32_t handle,
		 uint64_t offset, uint64_t size)
{
	if (!handle)
		return qgpu_cb_unbind(cb, slot);
	return qgpu_cb_bind_common(cb, slot, handle, offset, size,
				   QGPU_ALLOC_WRITE);
}

int qgpu_cb_unbind(struct qgpu_cb *cb, uint32_t slot)
{
	return qgpu_cb_bind_common(cb, slot, 0, 0, 0, 0);
}

void qgpu_cb_split_point(struct qgpu_cb *cb)
{
	cb->in_bind_run = false;
}

int qgpu_cb_rebind_all(struct qgpu_cb *cb)
{
	uint32_t s, run;
	int n = 0, ret;

	/* a new split point unless BINDs of this binding change precede */
	run = cb->in_bind_run ? cb->run : 0;
	for (s = 0; s < cb->max_slots; s++) {
		struct qgpu_cb_slot sl = cb->slots[s];

		if (!sl.handle || (run && sl.run == run))
			continue;
		ret = qgpu_cb_bind_common(cb, s, sl.handle, sl.offset, sl.size,
					  sl.flags);
		if (ret < 0)
			return ret;
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------------ */

int qgpu_cb_nop(struct qgpu_cb *cb, uint32_t ndw)
{
	uint32_t *p;

	if (!ndw || ndw > 0xffff)
		return qgpu_cb_fail(cb, -EINVAL);
	p = qgpu_cb_cmd(cb, QGPU_DMA_NOP, ndw);
	if (!p)
		return cb->error;
	memset(p + 1, 0, (size_t)(ndw - 1) * 4);
	return 0;
}

int qgpu_cb_copy(struct qgpu_cb *cb, uint32_t dslot, uint32_t doff,
		 uint32_t sslot, uint32_t soff, uint32_t size)
{
	uint32_t *p = qgpu_cb_fixed(cb, QGPU_DMA_COPY);

	if (!p)
		return cb->error;
	p[1] = dslot;
	p[2] = doff;
	p[3] = sslot;
	p[4] = soff;
	p[5] = size;
	return 0;
}

int qgpu_cb_fill(struct qgpu_cb *cb, uint32_t slot, uint32_t off,
		 uint32_t size, uint32_t pattern)
{
	uint32_t *p = qgpu_cb_fixed(cb, QGPU_DMA_FILL);

	if (!p)
		return cb->error;
	p[1] = slot;
	p[2] = off;
	p[3] = size;
	p[4] = pattern;
	return 0;
}

static int qgpu_cb_alu(struct qgpu_cb *cb, uint32_t op, uint32_t dslot,
		       uint32_t doff, uint32_t aslot, uint32_t aoff,
		       uint32_t bslot, uint32_t boff, uint32_t n)
{
	uint32_t *p = qgpu_cb_fixed(cb, op);

	if (!p)
		return cb->error;
	p[1] = dslot;
	p[2] = doff;
	p[3] = aslot;
	p[4] = aoff;
	p[5] = bslot;
	p[6] = boff;
	p[7] = n;
	return 0;
}

int qgpu_cb_add(struct qgpu_cb *cb, uint32_t dslot, uint32_t doff,
		uint32_t aslot, uint32_t aoff, uint32_t bslot, uint32_t boff,
		uint32_t n)
{
	return qgpu_cb_alu(cb, QGPU_DMA_ADD, dslot, doff, aslot, aoff, bslot,
			   boff, n);
}

int qgpu_cb_xor(struct qgpu_cb *cb, uint32_t dslot, uint32_t doff,
		uint32_t aslot, uint32_t aoff, uint32_t bslot, uint32_t boff,
		uint32_t n)
{
	return qgpu_cb_alu(cb, QGPU_DMA_XOR, dslot, doff, aslot, aoff, bslot,
			   boff, n);
}

int qgpu_cb_checksum(struct qgpu_cb *cb, uint32_t sslot, uint32_t soff,
		     uint32_t size, uint32_t dslot, uint32_t doff)
{
	uint32_t *p = qgpu_cb_fixed(cb, QGPU_DMA_CHECKSUM);

	if (!p)
		return cb->error;
	p[1] = sslot;
	p[2] = soff;
	p[3] = size;
	p[4] = dslot;
	p[5] = doff;
	return 0;
}

static int qgpu_cb_value(struct qgpu_cb *cb, uint32_t op, uint32_t slot,
			 uint32_t off, uint64_t value)
{
	uint32_t *p = qgpu_cb_fixed(cb, op);

	if (!p)
		return cb->error;
	p[1] = slot;
	p[2] = off;
	p[3] = (uint32_t)value;
	p[4] = (uint32_t)(value >> 32);
	return 0;
}

int qgpu_cb_fence(struct qgpu_cb *cb, uint32_t slot, uint32_t off,
		  uint64_t value)
{
	return qgpu_cb_value(cb, QGPU_DMA_FENCE, slot, off, value);
}

int qgpu_cb_wait(struct qgpu_cb *cb, uint32_t slot, uint32_t off,
		 uint64_t value)
{
	return qgpu_cb_value(cb, QGPU_DMA_WAIT, slot, off, value);
}

int qgpu_cb_timestamp(struct qgpu_cb *cb, uint32_t slot, uint32_t off)
{
	uint32_t *p = qgpu_cb_fixed(cb, QGPU_DMA_TIMESTAMP);

	if (!p)
		return cb->error;
	p[1] = slot;
	p[2] = off;
	return 0;
}

int qgpu_cb_tile(struct qgpu_cb *cb, bool untile, uint32_t dslot,
		 uint32_t doff, uint32_t sslot, uint32_t soff, uint32_t width,
		 uint32_t height, uint32_t pitch)
{
	uint32_t *p = qgpu_cb_fixed(cb, QGPU_DMA_TILE);

	if (!p)
		return cb->error;
	p[0] |= QGPU_CMD_HDR(0, untile ? QGPU_TILE_UNTILE : 0, 0);
	p[1] = dslot;
	p[2] = doff;
	p[3] = sslot;
	p[4] = soff;
	p[5] = width;
	p[6] = height;
	p[7] = pitch;
	return 0;
}

/* ------------------------------------------------------------------------ */

void qgpu_cb_to_submit(const struct qgpu_cb *cb, uint32_t ctx,
		       struct drm_qgpu_submit *args)
{
	memset(args, 0, sizeof(*args));
	args->dma = (uintptr_t)cb->dw;
	args->dma_size = cb->ndw * 4;
	args->ctx = ctx;
	args->allocs = (uintptr_t)cb->allocs;
	args->num_allocs = cb->nallocs;
	args->patches = (uintptr_t)cb->patches;
	args->num_patches = cb->npatches;
}

int qgpu_submit_raw(int fd, struct drm_qgpu_submit *args)
{
	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_SUBMIT, args);
}

/*
 * Submit @args with the given syncobjs; the common tail of the physical and
 * the virtual submit helpers (vcb.c).
 */
int qgpu_submit_syncs(int fd, struct drm_qgpu_submit *args,
		      const struct drm_qgpu_sync_entry *in, uint32_t nin,
		      const struct drm_qgpu_sync_entry *out, uint32_t nout,
		      uint32_t *portions)
{
	int ret;

	args->in_syncs = (uintptr_t)in;
	args->num_in_syncs = in ? nin : 0;
	args->out_syncs = (uintptr_t)out;
	args->num_out_syncs = out ? nout : 0;
	ret = qgpu_submit_raw(fd, args);
	if (!ret && portions)
		*portions = args->portions;
	return ret;
}

/* Submit @args signalling a temporary syncobj, and wait for it. */
int qgpu_submit_args_wait(int fd, struct drm_qgpu_submit *args,
			  int64_t timeout_ns, uint32_t *portions)
{
	struct drm_qgpu_sync_entry out = { 0 };
	int ret, r2;

	ret = qgpu_syncobj_create(fd, &out.handle);
	if (ret)
		return ret;
	ret = qgpu_submit_syncs(fd, args, NULL, 0, &out, 1, portions);
	if (!ret)
		ret = qgpu_syncobj_wait(fd, out.handle, 0, timeout_ns);
	/* errno tells the caller why only when something failed */
	r2 = errno;
	qgpu_syncobj_destroy(fd, out.handle);
	if (ret)
		errno = r2;
	return ret;
}

int qgpu_submit(int fd, uint32_t ctx, const struct qgpu_cb *cb,
		const struct drm_qgpu_sync_entry *in, uint32_t nin,
		const struct drm_qgpu_sync_entry *out, uint32_t nout,
		uint32_t *portions)
{
	struct drm_qgpu_submit args;

	if (cb->error) {
		errno = -cb->error;
		return cb->error;
	}
	qgpu_cb_to_submit(cb, ctx, &args);
	return qgpu_submit_syncs(fd, &args, in, nin, out, nout, portions);
}

int qgpu_submit_wait(int fd, uint32_t ctx, const struct qgpu_cb *cb,
		     int64_t timeout_ns, uint32_t *portions)
{
	struct drm_qgpu_submit args;

	if (cb->error) {
		errno = -cb->error;
		return cb->error;
	}
	qgpu_cb_to_submit(cb, ctx, &args);
	return qgpu_submit_args_wait(fd, &args, timeout_ns, portions);
}
