// SPDX-License-Identifier: MIT
/*
 * libqgpu: tiled surfaces, as the Windows Driver Kit's "Mapping Virtual
 * Addresses to a Memory Segment" lays them out. The GPU works on a tiled
 * ("swizzled") allocation; a CPU-accessible allocation cannot be swizzled
 * (it may end up in an aperture-space segment or system memory, where the
 * application reads its bytes as they are), so a surface the application
 * accesses directly is two allocations created together, each with
 * private data about its format (struct qgpu_surface_format), and a lock:
 *
 *  1. submits the unswizzle (DMA TILE with TILE_UNTILE) into the linear
 *     allocation (pfnRenderCb);
 *  2. waits for it (pfnLockCb without D3DDDILOCKCB_DONOTWAIT);
 *  3. locks and maps the linear allocation (Lock2) and returns its address
 *     and pitch.
 *
 * Unlocking after a write tiles the linear allocation back.
 */
#include <string.h>

#include "qgpu_priv.h"

#define QGPU_SURFACE_PITCH_ALIGN	64
#define QGPU_SURFACE_VA_ALIGN		(64ull * 1024)
#define QGPU_SURFACE_WAIT_NS		(60ll * 1000000000ll)

static uint64_t qgpu_surface_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int qgpu_surface_fail(int err)
{
	errno = -err;
	return err;
}

/*
 * The segments of @want (in preference order) that the device has: their
 * set in *@mask, and the QGPU_PREF() packing of their order
 */
static uint32_t qgpu_surface_segments(const struct qgpu_dev *dev,
				      const uint32_t *want, unsigned int n,
				      uint32_t *mask)
{
	uint32_t pref = 0;
	unsigned int i, k = 0;

	*mask = 0;
	for (i = 0; i < n; i++) {
		if (!qgpu_dev_segment(dev, want[i]))
			continue;
		*mask |= QGPU_SEGBIT(want[i]);
		pref |= want[i] << (8 * k++);
	}
	return pref;
}

int qgpu_surface_create(struct qgpu_dev *dev, uint32_t width, uint32_t height,
			uint32_t flags, struct qgpu_surface *s)
{
	/* the GPU's copy in VRAM first; the CPU's in the aperture first */
	static const uint32_t tiled_segs[] = {
		QGPU_SEG_LOCAL, QGPU_SEG_VISIBLE, QGPU_SEG_APERTURE,
	};
	static const uint32_t linear_segs[] = {
		QGPU_SEG_APERTURE, QGPU_SEG_VISIBLE,
	};
	uint32_t tmask, lmask, tpref, lpref, pitch;
	int ret;

	memset(s, 0, sizeof(*s));
	if (!width || !height || width > QGPU_TILE_MAX_DIM ||
	    height > QGPU_TILE_MAX_DIM || flags & ~QGPU_SURFACE_VIRTUAL)
		return qgpu_surface_fail(-EINVAL);
	if (!(dev->info.caps & QGPU_INFO_CAP_TILING) ||
	    (flags & QGPU_SURFACE_VIRTUAL && !qgpu_dev_has_mmu(dev)))
		return qgpu_surface_fail(-ENODEV);
	s->fd = dev->fd;
	s->width = width;
	s->height = height;
	s->flags = flags;
	s->max_slots = dev->info.max_slots;

	pitch = (uint32_t)qgpu_surface_align((uint64_t)width * QGPU_TILE_CPP,
					     QGPU_SURFACE_PITCH_ALIGN);
	s->tiled.fmt = (struct qgpu_surface_format){
		.layout = QGPU_SURFACE_LAYOUT_TILED,
		.width = width,
		.height = height,
		.cpp = QGPU_TILE_CPP,
		.pitch = 0,
		.bytes = qgpu_tiled_size(width, height),
	};
	s->linear.fmt = (struct qgpu_surface_format){
		.layout = QGPU_SURFACE_LAYOUT_LINEAR,
		.width = width,
		.height = height,
		.cpp = QGPU_TILE_CPP,
		.pitch = pitch,
		.bytes = (uint64_t)pitch * height,
	};
	s->tiled.size = qgpu_surface_align(s->tiled.fmt.bytes, QGPU_PAGE_SIZE);
	s->linear.size = qgpu_surface_align(s->linear.fmt.bytes,
					    QGPU_PAGE_SIZE);

	tpref = qgpu_surface_segments(dev, tiled_segs, 3, &tmask);
	lpref = qgpu_surface_segments(dev, linear_segs, 2, &lmask);
	ret = qgpu_bo_create(s->fd, s->tiled.size, tmask, QGPU_GEM_TILED,
			     tpref, &s->tiled.handle);
	if (!ret)
		ret = qgpu_bo_create(s->fd, s->linear.size, lmask,
				     QGPU_GEM_CPU_ACCESS, lpref,
				     &s->linear.handle);
	if (ret)
		goto fail;

	if (!(flags & QGPU_SURFACE_VIRTUAL)) {
		ret = qgpu_ctx_create(s->fd, &s->ctx);
		if (ret)
			goto fail;
		return 0;
	}
	/* both allocations in one reservation of the file's address space */
	s->va_size = qgpu_surface_align(s->tiled.size, QGPU_SURFACE_VA_ALIGN) +
		     qgpu_surface_align(s->linear.size, QGPU_SURFACE_VA_ALIGN);
	ret = qgpu_vm_reserve(s->fd, 0, s->va_size, 0, &s->va_base);
	if (ret) {
		s->va_size = 0;
		goto fail;
	}
	s->tiled.va = s->va_base;
	s->linear.va = s->va_base + qgpu_surface_align(s->tiled.size,
						       QGPU_SURFACE_VA_ALIGN);
	ret = qgpu_vm_map(s->fd, s->tiled.handle, s->tiled.va, 0,
			  s->tiled.size, 0);
	if (!ret)
		ret = qgpu_vm_map(s->fd, s->linear.handle, s->linear.va, 0,
				  s->linear.size, 0);
	/* the GPU's copy in VRAM; the paging fence is waited for by the
	 * context's first DMA buffer
	 */
	if (!ret)
		ret = qgpu_make_resident(s->fd, &s->tiled.handle, 1, NULL);
	if (!ret)
		ret = qgpu_ctx_create_virtual(s->fd, &s->ctx);
	if (ret)
		goto fail;
	return 0;

fail:
	qgpu_surface_destroy(s);
	return qgpu_surface_fail(ret);
}

/* The context is still healthy after its work completed */
static int qgpu_surface_check_ctx(const struct qgpu_surface *s)
{
	struct drm_qgpu_context_status cs;
	int ret = qgpu_query_context(s->fd, s->ctx, &cs);

	if (ret)
		return ret;
	return cs.state == QGPU_CTX_OK ? 0 : qgpu_surface_fail(-EIO);
}

/* Untile (tiled -> linear, waited for) or tile (linear -> tiled, queued) */
static int qgpu_surface_convert_virtual(struct qgpu_surface *s, bool untile)
{
	struct qgpu_vcb vcb;
	int ret;

	qgpu_vcb_init(&vcb);
	qgpu_vcb_tile(&vcb, untile, untile ? s->linear.va : s->tiled.va,
		      untile ? s->tiled.va : s->linear.va, s->width, s->height,
		      s->linear.fmt.pitch);
	if (untile)
		ret = qgpu_vcb_submit_wait(s->fd, s->ctx, &vcb,
					   QGPU_SURFACE_WAIT_NS);
	else
		ret = qgpu_vcb_submit(s->fd, s->ctx, &vcb, NULL, 0, NULL, 0);
	qgpu_vcb_fini(&vcb);
	return ret;
}

static int qgpu_surface_convert(struct qgpu_surface *s, bool untile)
{
	/* slot 0: the tiled allocation, slot 1: the linear one */
	struct qgpu_cb cb;
	int ret;

	if (s->flags & QGPU_SURFACE_VIRTUAL)
		ret = qgpu_surface_convert_virtual(s, untile);
	else {
		ret = qgpu_cb_init(&cb, s->max_slots);
		if (ret)
			return qgpu_surface_fail(ret);
		qgpu_cb_bind_flags(&cb, 0, s->tiled.handle, 0,
				   s->tiled.fmt.bytes,
				   untile ? 0 : QGPU_ALLOC_WRITE);
		qgpu_cb_bind_flags(&cb, 1, s->linear.handle, 0,
				   s->linear.fmt.bytes,
				   untile ? QGPU_ALLOC_WRITE : 0);
		qgpu_cb_tile(&cb, untile, untile ? 1 : 0, 0, untile ? 0 : 1,
			     0, s->width, s->height, s->linear.fmt.pitch);
		if (untile)
			ret = qgpu_submit_wait(s->fd, s->ctx, &cb,
					       QGPU_SURFACE_WAIT_NS, NULL);
		else
			ret = qgpu_submit(s->fd, s->ctx, &cb, NULL, 0, NULL, 0,
					  NULL);
		qgpu_cb_fini(&cb);
	}
	if (ret)
		return ret;
	/* an untile that faulted wrote nothing the CPU may rely on */
	return untile ? qgpu_surface_check_ctx(s) : 0;
}

int qgpu_surface_lock(struct qgpu_surface *s, void **ptr, uint32_t *pitch)
{
	void *map = NULL;
	int ret;

	if (s->map)
		return qgpu_surface_fail(-EBUSY);
	/* 1 and 2: submit the untile and wait until the GPU has done it */
	ret = qgpu_surface_convert(s, true);
	if (ret)
		return ret;
	/* 3: Lock2 the linear allocation and map it */
	ret = qgpu_bo_map(s->fd, s->linear.handle, s->linear.size, &map);
	if (ret)
		return ret;
	s->map = map;
	*ptr = map;
	if (pitch)
		*pitch = s->linear.fmt.pitch;
	return 0;
}

int qgpu_surface_unlock(struct qgpu_surface *s, bool written)
{
	int ret;

	if (!s->map)
		return qgpu_surface_fail(-EINVAL);
	ret = qgpu_bo_unmap(s->fd, s->linear.handle, s->map, s->linear.size);
	s->map = NULL;
	if (ret)
		return ret;
	return written ? qgpu_surface_convert(s, false) : 0;
}

void qgpu_surface_destroy(struct qgpu_surface *s)
{
	int err = errno;

	if (s->map)
		qgpu_bo_unmap(s->fd, s->linear.handle, s->map, s->linear.size);
	if (s->va_size)
		qgpu_vm_free(s->fd, s->va_base, s->va_size);
	if (s->ctx)
		qgpu_ctx_destroy(s->fd, s->ctx);
	if (s->linear.handle)
		qgpu_bo_destroy(s->fd, s->linear.handle);
	if (s->tiled.handle)
		qgpu_bo_destroy(s->fd, s->tiled.handle);
	memset(s, 0, sizeof(*s));
	errno = err;
}
